"""`DocumentModel`: what validation learned about a document (`ParsedDocument.model`).

Its own module so that `core.document._parsed` can name it without importing the parser.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.document._fields import Field
from core.json._frozen import FrozenDict


@dataclass(frozen=True, slots=True)
class DocumentModel:
    """What validation learned about a document, reused by every runtime helper."""

    version: str
    mode: str
    id: str
    fields: Mapping[str, Field]
    derived: Mapping[str, Any]
    derived_types: Mapping[str, int]
    actions: Mapping[str, Any]
    initial: FrozenDict
    defaults: Mapping[str, Any]
    byte_size: int
    components: int
    expression_nodes: int
    node_types: Mapping[str, str]
    select_domains: Mapping[str, frozenset[str]]
