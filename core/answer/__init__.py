"""answer-ui@1 (seed 004): answer blocks, final-answer markers and report blocks, checked from one catalog.

`parse_answer_block`, `parse_final_answer`, `answer_parts`, `parse_report_ui_blocks` and
`answer_json_schema` are re-exported by `core`; the ten components and their closed props
live in `core.answer._catalog`, the one source of both the validator and the JSON Schema.
"""
