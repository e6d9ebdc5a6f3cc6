"""Every numeric limit of the protocol, as named constants.

`UI_LIMITS` holds the document, expression and state limits (seed 000 section 9, plus
the JSON-shape limits that section leaves unnumbered, chosen here and documented in the
README).  `UI_PROTOCOL_LIMITS` holds the 14 limits of seed 000 section 13, and
`UI_VIEW_STATE_LIMITS` the four of the answer-view-state@1 store (seed 004).  Extra schema
bounds (labels, titles, options, view-state searches and drafts) are the `*_LENGTH`
constants below.

`maxJsonDepth` (128) sits well above the deepest valid document (16 component levels
and 32 expression levels need about 100).  `maxJsonValues` (140,000) sits above what
any byte-budgeted message can hold (a 266,240-byte frame has at most 133,121 values),
so it only stops huge inputs early and never disagrees with a byte budget.

At run time all three are read-only dicts (`FrozenDict`, whose mutators raise); to a type
checker they are `TypedDict`s, so `UI_LIMITS["maxComponents"]` is an `int` and only
`maxNumberMagnitude` (1e15) a `float`.  A dict subclass rather than a `MappingProxyType`:
mypyc compiles a `TypedDict` as a `dict` and checks that every value of one is a dict.
"""

from __future__ import annotations

from typing import Final, TypedDict, cast

from core.json._frozen import FrozenDict


class UILimits(TypedDict):
    """The type of `UI_LIMITS`: each limit keeps its own type."""

    maxDocumentBytes: int
    maxStateBytes: int
    maxComponents: int
    maxDepth: int
    maxStateFields: int
    maxDerivedFields: int
    maxExpressionNodes: int
    maxExpressionDepth: int
    maxExpressionArgs: int
    maxStringLength: int
    maxMarkdownLength: int
    maxNumberMagnitude: float
    maxIdentifierLength: int
    maxTableColumns: int
    maxTableRows: int
    maxChartPoints: int
    maxSelectOptions: int
    maxRoundDigits: int
    maxJsonDepth: int
    maxJsonValues: int


UI_LIMITS: Final = cast('UILimits', FrozenDict(
    {
        "maxDocumentBytes": 262_144,
        "maxStateBytes": 262_144,
        "maxComponents": 200,
        "maxDepth": 16,
        "maxStateFields": 64,
        "maxDerivedFields": 64,
        "maxExpressionNodes": 2_048,
        "maxExpressionDepth": 32,
        "maxExpressionArgs": 16,
        "maxStringLength": 4_096,
        "maxMarkdownLength": 16_384,
        "maxNumberMagnitude": 1e15,
        "maxIdentifierLength": 64,
        "maxTableColumns": 32,
        "maxTableRows": 500,
        "maxChartPoints": 200,
        "maxSelectOptions": 100,
        "maxRoundDigits": 6,
        "maxJsonDepth": 128,
        "maxJsonValues": 140_000,
    }
))

class UIProtocolLimits(TypedDict):
    """The type of `UI_PROTOCOL_LIMITS`: each limit keeps its own type."""

    maxActions: int
    maxActionArguments: int
    maxActionArgumentBytes: int
    maxActionResultFields: int
    maxActionResultBytes: int
    maxAgentPromptLength: int
    maxActionRequestBytes: int
    maxActionReceiptBytes: int
    maxCapabilityBytes: int
    maxCapabilities: int
    maxStreamFrameBytes: int
    maxStreamMutationBytes: int
    maxStreamFrames: int
    maxStreamBytes: int


UI_PROTOCOL_LIMITS: Final = cast('UIProtocolLimits', FrozenDict(
    {
        "maxActions": 16,
        "maxActionArguments": 32,
        "maxActionArgumentBytes": 16_384,
        "maxActionResultFields": 32,
        "maxActionResultBytes": 32_768,
        "maxAgentPromptLength": 4_096,
        "maxActionRequestBytes": 32_768,
        "maxActionReceiptBytes": 36_864,
        "maxCapabilityBytes": 65_536,
        "maxCapabilities": 64,
        "maxStreamFrameBytes": 266_240,
        "maxStreamMutationBytes": 65_536,
        "maxStreamFrames": 256,
        "maxStreamBytes": 16_777_216,
    }
))

# Schema bounds outside the 20 UI limits (seed 000 section 5 and 13).
TITLE_LENGTH = 256
LABEL_LENGTH = 512
MESSAGE_LENGTH = 512
REQUEST_ID_LENGTH = 128
SOURCE_CALL_ID_LENGTH = 256
DOCUMENT_REF_BYTES = 1_024
QUERY_BYTES = 1_024
CAPABILITY_TITLE_LENGTH = 256
CAPABILITY_DESCRIPTION_LENGTH = 4_096
HOST_CAPABILITIES = 32
MIN_DOCUMENT_BYTES = 1_024
# Stream and document-reference numbers (seed 000 sections 12 and 13): a generation counts
# 1..1e9 (0 in a document reference names a plain full UI), a revision 0..256.
MAX_GENERATION = 1_000_000_000
MAX_REVISION = 256
# Levels one derived value's evaluation nests through every derived value it reads (each
# expression alone is within maxExpressionDepth).  Checked at parse time, so run-time
# evaluation (at most this plus one expression's 32 levels) stays far from Python's
# recursion limit.
DERIVED_EVALUATION_DEPTH = 128


class UIViewStateLimits(TypedDict):
    """The type of `UI_VIEW_STATE_LIMITS`."""

    maxBlockStateBytes: int
    maxSessionStateBytes: int
    maxReceipts: int
    maxReceiptBytes: int


# The answer-view-state@1 store of seed 004: one block's state (the UTF-8 bytes of its
# canonical `nodes` JSON), a session's states together, and the request receipts kept per
# block (the newest 32 within 128 KiB).
UI_VIEW_STATE_LIMITS: Final = cast('UIViewStateLimits', FrozenDict(
    {
        "maxBlockStateBytes": 32_768,
        "maxSessionStateBytes": 1_048_576,
        "maxReceipts": 32,
        "maxReceiptBytes": 131_072,
    }
))
# View fields the seed names without a bound (chosen here, see the README's Decisions).
VIEW_SEARCH_LENGTH = 200  # a table's or a chart data table's search text, UTF-16 units
VIEW_DRAFT_LENGTH = 4_096  # a text draft of a follow-up form field, UTF-16 units
