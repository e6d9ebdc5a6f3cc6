"""The one source of the answer-ui@1 component catalog: ten components, their closed props.

The props are plain data (small frozen spec objects) so that two compilers read the same
definition: `core.answer._rules` turns it into validator rules and `core.answer.schema`
into the exported JSON Schema.  A bound changed here changes both.  Bounds the seed does
not number are the `*_LENGTH` / `MAX_*` constants below (listed in the README Decisions).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from core._identifier import IDENTIFIER_PATTERN as BARE_IDENTIFIER_PATTERN
from core.limits import UI_LIMITS

VERSION = "answer-ui@1"
PHASES = ("process", "final")

# Numbered by the seed ("校验边界" and "正式报告").
MAX_ELEMENTS = 48
MAX_DEPTH = 12
MAX_BLOCK_UTF16 = 100_000
MAX_REPORT_BLOCKS = 8
MAX_REPORT_BYTES = 400_000

# Chosen here: the seed names these props but no bound for them.
TITLE_LENGTH = 200
LABEL_LENGTH = 200
PROSE_LENGTH = int(UI_LIMITS["maxStringLength"])
SOURCE_LENGTH = 512
UNIT_LENGTH = 32
CELL_LENGTH = 1_024
METRIC_VALUE_LENGTH = 64
FALLBACK_LENGTH = int(UI_LIMITS["maxStringLength"])
MAX_STACK_COLUMNS = 4
MAX_TABLE_COLUMNS = int(UI_LIMITS["maxTableColumns"])
MAX_TABLE_ROWS = int(UI_LIMITS["maxTableRows"])
MAX_CHART_CATEGORIES = int(UI_LIMITS["maxChartPoints"])
MAX_CHART_SERIES = 12
MAX_EVIDENCE_ITEMS = 20
MAX_FORM_FIELDS = 16
MAX_FIELD_OPTIONS = 32
MAX_CHILDREN = MAX_ELEMENTS - 1

# Element ids, block ids and form field names share the protocol's identifier syntax.
IDENTIFIER_PATTERN = BARE_IDENTIFIER_PATTERN
# A map layer names a configured layer; a feature id is an opaque printable-ASCII key.
LAYER_PATTERN = "[A-Za-z][A-Za-z0-9_.:-]{0,63}"
FEATURE_ID_PATTERN = "[!-~]{1,128}"
# RFC 3339 date or date-time with an explicit offset: a recorded time never floats.
RECORDED_AT_PATTERN = (
    "[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2}))?"
)


# ---------------------------------------------------------------- the spec vocabulary


@dataclass(frozen=True)
class Str:
    """A string of `min_length..max_length` UTF-16 units, optionally matching `pattern`."""

    max_length: int
    min_length: int = 1
    pattern: str | None = None


@dataclass(frozen=True)
class Ident:
    """A protocol identifier (`^[A-Za-z][A-Za-z0-9_-]{0,63}$`, not a prototype name)."""


@dataclass(frozen=True)
class Choice:
    """One of a closed set of strings."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class Int:
    """An integral number within `low..high`."""

    low: int
    high: int


@dataclass(frozen=True)
class Bool:
    """A JSON boolean."""


@dataclass(frozen=True)
class Num:
    """A finite number within the protocol magnitude (and `null` when `nullable`)."""

    nullable: bool = False


@dataclass(frozen=True)
class Either:
    """Any one of the options (a Metric value is text or a number)."""

    options: tuple[Spec, ...]


@dataclass(frozen=True)
class Array:
    """An array of `min_items..max_items` items, each of `item`."""

    item: Spec
    max_items: int
    min_items: int = 0


@dataclass(frozen=True)
class Prop:
    """One named property of a record."""

    name: str
    spec: Spec
    required: bool = False


@dataclass(frozen=True)
class Record:
    """A closed object: exactly the listed properties, no others."""

    props: tuple[Prop, ...]


Spec = Str | Ident | Choice | Int | Bool | Num | Either | Array | Record


@dataclass(frozen=True)
class Component:
    """One catalog entry: a name, what it is for, its closed props, whether it holds children."""

    name: str
    description: str
    props: Record
    container: bool = False


def _record(*props: Prop) -> Record:
    return Record(tuple(props))


def _req(name: str, spec: Spec) -> Prop:
    return Prop(name, spec, required=True)


def _opt(name: str, spec: Spec) -> Prop:
    return Prop(name, spec)


TITLE = Str(TITLE_LENGTH)
LABEL = Str(LABEL_LENGTH)
PROSE = Str(PROSE_LENGTH)
SOURCE = Str(SOURCE_LENGTH)

FIELD_TYPES = ("text", "textarea", "number", "date", "select")

_FORM_FIELD = _record(
    _req("name", Ident()),
    _req("label", LABEL),
    _req("type", Choice(FIELD_TYPES)),
    _opt("required", Bool()),
    _opt("placeholder", LABEL),
    _opt("options", Array(LABEL, MAX_FIELD_OPTIONS, 1)),
)

_EVIDENCE_ITEM = _record(
    _req("id", Str(128, pattern=FEATURE_ID_PATTERN)),
    _req("summary", PROSE),
    _req("source", SOURCE),
    _opt("recorded_at", Str(40, pattern=RECORDED_AT_PATTERN)),
    _opt("category", LABEL),
)

_SERIES = _record(
    _req("name", LABEL),
    _req("values", Array(Num(nullable=True), MAX_CHART_CATEGORIES, 1)),
)

_CELL = Either((Str(CELL_LENGTH, min_length=0), Num(nullable=True)))

COMPONENTS: tuple[Component, ...] = (
    Component(
        "Stack",
        "Lays out its children: a short response, a side-by-side comparison or a report.",
        _record(
            _opt("columns", Int(1, MAX_STACK_COLUMNS)),
            _opt("gap", Choice(("none", "small", "medium", "large"))),
            _opt("intent", Choice(("response", "comparison", "report"))),
            _opt("density", Choice(("compact", "comfortable"))),
        ),
        container=True,
    ),
    Component(
        "Section",
        "An independent part placed in the result, analysis, evidence or follow-up area.",
        _record(_opt("title", TITLE), _opt("role", Choice(("result", "analysis", "evidence", "follow_up")))),
        container=True,
    ),
    Component(
        "Text",
        "Plain explanatory text with an optional specific title.",
        _record(
            _req("text", PROSE),
            _opt("title", TITLE),
            _opt("tone", Choice(("neutral", "info", "success", "warning", "error"))),
        ),
    ),
    Component(
        "Result",
        "An existing execution result; its status is never an execution receipt.",
        _record(
            _req("title", TITLE),
            _req("summary", PROSE),
            _req("status", Choice(("success", "partial", "unconfirmed", "error"))),
            _opt("source", SOURCE),
        ),
    ),
    Component(
        "Metric",
        "One reading shown as given: label, raw value, unit and source.",
        _record(
            _req("label", LABEL),
            _req("value", Either((Str(METRIC_VALUE_LENGTH), Num()))),
            _opt("unit", Str(UNIT_LENGTH)),
            _opt("source", SOURCE),
        ),
    ),
    Component(
        "Table",
        "Rows of cells under column headers; searchable and sortable, never selectable.",
        _record(
            _req("columns", Array(LABEL, MAX_TABLE_COLUMNS, 1)),
            _req("rows", Array(Array(_CELL, MAX_TABLE_COLUMNS, 1), MAX_TABLE_ROWS)),
            _opt("title", TITLE),
            _opt("source", SOURCE),
        ),
    ),
    Component(
        "Chart",
        "Series over categories; the user switches between line, bar and data table.",
        _record(
            _req("title", TITLE),
            _req("categories", Array(LABEL, MAX_CHART_CATEGORIES, 1)),
            _req("series", Array(_SERIES, MAX_CHART_SERIES, 1)),
            _opt("view", Choice(("line", "bar", "table"))),
            _opt("source", SOURCE),
        ),
    ),
    Component(
        "Evidence",
        "Saved evidence items with summary, source, recorded time and category.",
        _record(_req("items", Array(_EVIDENCE_ITEM, MAX_EVIDENCE_ITEMS, 1)), _opt("title", TITLE)),
    ),
    Component(
        "MapLocation",
        "Locates one feature named by an explicit layer and feature id (never by name).",
        _record(
            _req("layer", Str(64, pattern=LAYER_PATTERN)),
            _req("feature_id", Str(128, pattern=FEATURE_ID_PATTERN)),
            _opt("title", TITLE),
            _opt("label", LABEL),
        ),
    ),
    Component(
        "FollowUpForm",
        "Optional information the user may supply; submitted by the user as a message.",
        _record(
            _req("title", TITLE),
            _req("fields", Array(_FORM_FIELD, MAX_FORM_FIELDS, 1)),
            _opt("description", PROSE),
        ),
    ),
)

CATALOG = MappingProxyType({component.name: component for component in COMPONENTS})
