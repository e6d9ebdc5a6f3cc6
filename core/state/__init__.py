"""A document's state at run time and the actions that change it.

`values` builds, updates, restores and checks state; `evaluation` resolves derived values
and value references; `local_action` dispatches the document's own actions;
`host_action` resolves host-run actions and applies their results.
"""
