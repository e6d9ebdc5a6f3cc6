"""`python -m core.answer.schema > schema/answer-ui.schema.json`: write the checked-in JSON Schema.

The schema itself is built in `core.answer._schema`; this module is the command (kept apart
so that running it does not re-execute a module `core` has already imported).
"""

from __future__ import annotations

import sys

from core.answer._schema import answer_json_schema, answer_json_schema_text

__all__ = ["answer_json_schema", "answer_json_schema_text"]

if __name__ == "__main__":
    sys.stdout.write(answer_json_schema_text())
