"""`ParsedDocument`: a validated document, as the type checker sees it and as it runs.

At run time it is `core.json._frozen.ModelDict` itself (the JSON walks accept that class by
exact type); for the type checker it is a subclass whose `model` is a `DocumentModel`.  mypyc
compiles no class declared under `if TYPE_CHECKING`, so this module is the one module of
`core` that stays Python source in the compiled build (docs/decisions.md): nothing in it runs
but the assignment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.json._frozen import ModelDict

if TYPE_CHECKING:
    from core.document._model import DocumentModel

    class ParsedDocument(ModelDict):
        """A validated, deep-immutable document; `.model` holds its parsed declarations."""

        model: DocumentModel

else:
    ParsedDocument = ModelDict
