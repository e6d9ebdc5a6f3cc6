"""The UI document (seed 000 sections 2-6, 9, 11): `model.parse_document` and its JSON Schema.

`model` validates a decoded document into a deep-immutable `ParsedDocument` carrying its
`DocumentModel`; `schema` generates the Draft 2020-12 schema (`python -m
core.document.schema`).  Private parts: the rule checker, state fields, components,
action definitions, declarations, the component-tree walk, and the incremental
re-validation the stream uses for patches.
"""
