"""answer-ui@1 (seed 004): answer blocks, final-answer markers and report blocks, checked from one catalog.

`parse_answer_block`, `parse_final_answer`, `answer_parts`, `parse_report_ui_blocks` and
`answer_json_schema` are re-exported by `core`; the ten components and their closed props
live in `core.answer._catalog`, the one source of both the validator and the JSON Schema.
`view_state` holds the answer-view-state@1 rules (`parse_view_state`, `migrate_view_state`,
`view_state_basis`, `view_state_schema_digest`), also re-exported by `core`.
"""
