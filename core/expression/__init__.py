"""The expression language of derived values and action arguments (seed 000 section 4).

`language` type-checks expressions against declared fields, counts their nodes against
the budget and evaluates them with JS number semantics (`evaluate_expression`).
"""
