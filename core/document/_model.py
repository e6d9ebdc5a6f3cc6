"""`DocumentModel`: what validation learned about a document (`ParsedDocument.model`).

Its own module so that `core.document._parsed` can name it without importing the parser.

A plain class with `Final` attributes, not a frozen dataclass: every patch builds one, and
in the compiled core a dataclass's `__init__` (and `dataclasses.replace`) stays interpreted
Python setting each field through `object.__setattr__` (~1.3 µs against ~0.1 µs for a native
`__init__`).  mypy refuses an assignment to a `Final` attribute; the compiled build refuses it
at run time too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from core.document._fields import Field
from core.json._frozen import FrozenDict

_FIELDS = ("version", "mode", "id", "fields", "derived", "derived_types", "actions", "initial", "defaults",
           "byte_size", "components", "expression_nodes", "node_types", "select_domains")


class DocumentModel:
    """What validation learned about a document, reused by every runtime helper."""

    __slots__ = _FIELDS

    def __init__(self, *, version: str, mode: str, id: str, fields: Mapping[str, Field],
                 derived: Mapping[str, Any], derived_types: Mapping[str, int], actions: Mapping[str, Any],
                 initial: FrozenDict, defaults: Mapping[str, Any], byte_size: int, components: int,
                 expression_nodes: int, node_types: Mapping[str, str],
                 select_domains: Mapping[str, frozenset[str]]) -> None:
        self.version: Final = version
        self.mode: Final = mode
        self.id: Final = id
        self.fields: Final = fields
        self.derived: Final = derived
        self.derived_types: Final = derived_types
        self.actions: Final = actions
        self.initial: Final = initial
        self.defaults: Final = defaults
        self.byte_size: Final = byte_size
        self.components: Final = components
        self.expression_nodes: Final = expression_nodes
        self.node_types: Final = node_types
        self.select_domains: Final = select_domains

    def revised(self, *, byte_size: int, components: int, expression_nodes: int, node_types: Mapping[str, str],
                select_domains: Mapping[str, frozenset[str]]) -> DocumentModel:
        """This model for a patched tree: the same header, the tree's new facts."""
        return DocumentModel(version=self.version, mode=self.mode, id=self.id, fields=self.fields,
                             derived=self.derived, derived_types=self.derived_types, actions=self.actions,
                             initial=self.initial, defaults=self.defaults, byte_size=byte_size,
                             components=components, expression_nodes=expression_nodes, node_types=node_types,
                             select_domains=select_domains)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DocumentModel):
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        return "DocumentModel(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS) + ")"
