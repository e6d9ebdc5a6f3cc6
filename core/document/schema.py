"""`python -m core.document.schema > schema/ui.schema.json`: write the checked-in JSON Schema.

The schema itself is built in `core.document._schema`; this module is the command (kept apart
so that running it does not re-execute a module `core` has already imported).
"""

from __future__ import annotations

import sys

from core.document._schema import document_json_schema, document_json_schema_text

__all__ = ["document_json_schema", "document_json_schema_text"]

if __name__ == "__main__":
    sys.stdout.write(document_json_schema_text())
