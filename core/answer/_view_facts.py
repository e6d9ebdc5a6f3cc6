"""What the view-state rules read of an answer block: its stateful elements, as typed facts.

Only Chart, Table, FollowUpForm and Evidence hold view state; the rules need their series,
category labels, columns, form fields and evidence items, nothing else.  The reader follows
only those keys, compares types by identity and checks an object's keys are exact strings
before it looks one up, so any value gives facts or a `UISchemaError` (located in the
block), never a foreign exception.  It does not re-validate the block: the store keeps
blocks that passed `parse_answer_block`, and re-checking a 48-element block on every
request would cost more than the request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from core._rules import descend, plain_keys
from core.errors import Issue, UISchemaError
from core.json._frozen import ARRAY_KINDS, EMPTY_LIST, OBJECT_KINDS

STATEFUL = ("Chart", "Table", "FollowUpForm", "Evidence")
_NOT_A_BLOCK = "is not what parse_answer_block accepts for this part of a block"


@dataclass(frozen=True, slots=True)
class ChartFacts:
    """A chart's series names in order and its category labels."""

    series: tuple[str, ...]
    categories: tuple[str, ...]

    @property
    def kind(self) -> str:
        """The block type (a property: mypyc mis-orders a dataclass's `ClassVar` among its fields)."""
        return "Chart"

    @property
    def names(self) -> frozenset[str]:
        """The series names."""
        return frozenset(self.series)

    @property
    def labels(self) -> frozenset[str]:
        """The category labels shown exactly once (only those can locate a point)."""
        return unique(self.categories)


@dataclass(frozen=True, slots=True)
class TableFacts:
    """A table's column labels shown exactly once (a sort can name only those)."""

    columns: frozenset[str]

    @property
    def kind(self) -> str:
        """The block type (a property: mypyc mis-orders a dataclass's `ClassVar` among its fields)."""
        return "Table"


@dataclass(frozen=True, slots=True)
class FieldFacts:
    """One follow-up form field: its type and, for a select, its options."""

    type: str
    options: frozenset[str]


@dataclass(frozen=True, slots=True)
class FormFacts:
    """A follow-up form's fields by name."""

    fields: Mapping[str, FieldFacts]

    @property
    def kind(self) -> str:
        """The block type (a property: mypyc mis-orders a dataclass's `ClassVar` among its fields)."""
        return "FollowUpForm"


@dataclass(frozen=True, slots=True)
class EvidenceFacts:
    """An evidence list's item ids and the categories its items carry."""

    items: frozenset[str]
    categories: frozenset[str]

    @property
    def kind(self) -> str:
        """The block type (a property: mypyc mis-orders a dataclass's `ClassVar` among its fields)."""
        return "Evidence"


ElementFacts = ChartFacts | TableFacts | FormFacts | EvidenceFacts
# element id -> its facts, or None for an element that holds no view state
BlockFacts = Mapping[str, ElementFacts | None]


def unique(labels: tuple[str, ...]) -> frozenset[str]:
    """The labels that occur exactly once."""
    seen: dict[str, int] = {}
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
    return frozenset(label for label, count in seen.items() if count == 1)


def _object(value: Any) -> Mapping[str, Any] | None:
    return value if type(value) in OBJECT_KINDS and plain_keys(value) else None


def _strings(value: Any) -> tuple[str, ...] | None:
    if type(value) not in ARRAY_KINDS or any(type(item) is not str for item in value):
        return None
    return tuple(value)


def _records(value: Any, *keys: str) -> list[Mapping[str, Any]] | None:
    """An array of objects, each with every one of `keys` as an exact string."""
    if type(value) not in ARRAY_KINDS:
        return None
    records = [_object(item) for item in value]
    if any(record is None or any(type(record.get(key)) is not str for key in keys) for record in records):
        return None
    return [record for record in records if record is not None]


def _chart(props: Mapping[str, Any]) -> ChartFacts | None:
    series, categories = _records(props.get("series"), "name"), _strings(props.get("categories"))
    if series is None or categories is None:
        return None
    return ChartFacts(tuple(each["name"] for each in series), categories)


def _table(props: Mapping[str, Any]) -> TableFacts | None:
    columns = _strings(props.get("columns"))
    return None if columns is None else TableFacts(unique(columns))


def _field(record: Mapping[str, Any]) -> FieldFacts | None:
    options = _strings(record.get("options", EMPTY_LIST))
    return None if options is None else FieldFacts(record["type"], frozenset(options))


def _form(props: Mapping[str, Any]) -> FormFacts | None:
    records = _records(props.get("fields"), "name", "type")
    if records is None:
        return None
    fields = {record["name"]: _field(record) for record in records}
    if any(field is None for field in fields.values()):
        return None
    return FormFacts(MappingProxyType({name: field for name, field in fields.items() if field is not None}))


def _evidence(props: Mapping[str, Any]) -> EvidenceFacts | None:
    items = _records(props.get("items"), "id")
    if items is None or any("category" in item and type(item["category"]) is not str for item in items):
        return None
    return EvidenceFacts(frozenset(item["id"] for item in items),
                         frozenset(item["category"] for item in items if "category" in item))


_READERS: Mapping[str, Callable[[Mapping[str, Any]], ElementFacts | None]] = MappingProxyType({
    "Chart": _chart, "Table": _table, "FollowUpForm": _form, "Evidence": _evidence,
})


def _not_a_block(*segments: str) -> UISchemaError:
    issues = [Issue("", _NOT_A_BLOCK, "type")]
    for segment in reversed(segments):
        issues = list(descend(issues, segment))
    return UISchemaError(issues)


def _element(node_id: str, value: Any) -> ElementFacts | None:
    element = _object(value)
    if element is None:
        return None
    kind = element.get("type")
    if type(kind) is not str or kind not in _READERS:
        return None
    props = _object(element.get("props"))
    facts = None if props is None else _READERS[kind](props)
    if facts is None:
        raise _not_a_block("spec", "elements", node_id, "props")
    return facts


def block_facts(block: Any) -> BlockFacts:
    """The facts of every element of `block`, or `UISchemaError` where the block lacks them."""
    holder = _object(block)
    spec = None if holder is None else _object(holder.get("spec"))
    elements = None if spec is None else _object(spec.get("elements"))
    if elements is None:
        raise _not_a_block("spec", "elements")
    return {node_id: _element(node_id, element) for node_id, element in elements.items()}
