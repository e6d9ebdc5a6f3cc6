"""Strict parsers of the Remote-protocol values (seed 000 sections 11 and 13).

Each parser takes decoded JSON and either returns a deep-immutable copy or raises
`UISchemaError`.  Order, as the seed fixes it: safe JSON and the byte budget first, then
the closed structure, then freezing.  Integer fields accept `3.0` as `3` (JSON numbers
are doubles) and come back as `int`.  Collections (receipt lists, capability catalogs)
are checked as a bounded array shell first and then element by element, each element
against its own budget: an aggregate is never treated as one document.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice
from typing import Any

from core._rules import (
    Issues,
    Rule,
    all_of,
    ascii_token,
    boolean,
    budgeted,
    closed_object,
    flat_map,
    identifier,
    integer,
    is_integral,
    json_object,
    lower_hex,
    one_of,
    safe_json_issues,
    scalar,
    text,
    unique_identifiers,
)
from core.errors import MAX_ISSUES, Issue, UISchemaError
from core.json._frozen import ARRAY_KINDS, OBJECT_KINDS, FrozenDict, FrozenList, freeze_object
from core.limits import (
    CAPABILITY_DESCRIPTION_LENGTH,
    CAPABILITY_TITLE_LENGTH,
    DOCUMENT_REF_BYTES,
    MAX_GENERATION,
    MAX_REVISION,
    MESSAGE_LENGTH,
    QUERY_BYTES,
    REQUEST_ID_LENGTH,
    SOURCE_CALL_ID_LENGTH,
    UI_LIMITS,
    UI_PROTOCOL_LIMITS,
)

# "协议预检仅为固定外壳预留 4 层 JSON 深度与 64 个 JSON 值的有限余量" (seed 000 section 13):
# the shell gets this margin on top of the general JSON limits; inner data such as a
# capability's `parameters` is then checked against the general limits on its own.
SHELL_DEPTH = 4
SHELL_VALUES = 64
SHELL_LIMITS = {
    "max_depth": UI_LIMITS["maxJsonDepth"] + SHELL_DEPTH,
    "max_values": UI_LIMITS["maxJsonValues"] + SHELL_VALUES,
}

MAX_TIMESTAMP = 10**15  # Unix milliseconds; the shared number budget
MAX_RECEIPTS = 256  # per list reply; the seed names no number (documented in the README)
MAX_STATE_VALUES = UI_LIMITS["maxStateFields"]  # `values` is the state snapshot of the click
REQUEST_BYTES = UI_PROTOCOL_LIMITS["maxActionRequestBytes"]
RECEIPT_BYTES = UI_PROTOCOL_LIMITS["maxActionReceiptBytes"]
RESULT_BYTES = UI_PROTOCOL_LIMITS["maxActionResultBytes"]
RESULT_FIELDS = UI_PROTOCOL_LIMITS["maxActionResultFields"]
CAPABILITY_BYTES = UI_PROTOCOL_LIMITS["maxCapabilityBytes"]
MAX_CAPABILITIES = UI_PROTOCOL_LIMITS["maxCapabilities"]

RECEIPT_STATUSES = (
    "queued", "awaiting_confirmation", "running", "succeeded",
    "failed", "cancelled", "unknown", "accepted",
)  # fmt: skip
CAPABILITY_RISKS = ("read", "write", "external")


def _plain_ui_has_revision_zero(ref: Any) -> Issues:
    """A plain full UI (generation 0) has revision 0."""
    if type(ref) in OBJECT_KINDS:
        generation, revision = ref.get("generation"), ref.get("revision")
        if is_integral(generation) and generation == 0 and is_integral(revision) and revision != 0:
            yield Issue("/revision", "a plain UI (generation 0) must have revision 0", "range")


_DOCUMENT_REF = all_of(
    closed_object(
        {
            "sourceCallId": ascii_token(SOURCE_CALL_ID_LENGTH),
            "uiId": identifier,
            "generation": integer(0, MAX_GENERATION),
            "revision": integer(0, MAX_REVISION),
        }
    ),
    _plain_ui_has_revision_zero,
)
_NESTED_DOCUMENT_REF = budgeted(_DOCUMENT_REF, max_bytes=DOCUMENT_REF_BYTES, **SHELL_LIMITS)

_ACTION_RESULT = flat_map(scalar(allow_null=True), RESULT_FIELDS)

_RESERVE_REQUEST = closed_object(
    {
        "documentRef": _NESTED_DOCUMENT_REF,
        "requestId": ascii_token(REQUEST_ID_LENGTH),
        "actionId": identifier,
        "values": flat_map(scalar(allow_null=False), MAX_STATE_VALUES),
    }
)

_ACTION_QUERY = closed_object({"operationId": ascii_token(REQUEST_ID_LENGTH)})


def _updated_not_before_created(receipt: Any) -> Issues:
    """`updatedAt >= createdAt`."""
    if type(receipt) in OBJECT_KINDS:
        created, updated = receipt.get("createdAt"), receipt.get("updatedAt")
        if is_integral(created) and is_integral(updated) and updated < created:
            yield Issue("/updatedAt", "updatedAt must not be earlier than createdAt", "range")


def _result_only_when_succeeded(receipt: Any) -> Issues:
    """Only a `succeeded` receipt may carry a `result`."""
    if type(receipt) in OBJECT_KINDS and "result" in receipt:
        status = receipt.get("status")
        if status in RECEIPT_STATUSES and status != "succeeded":
            yield Issue("/result", "only a succeeded receipt may carry a result", "not_allowed")


_RECEIPT = all_of(
    closed_object(
        {
            "operationId": ascii_token(REQUEST_ID_LENGTH),
            "requestId": ascii_token(REQUEST_ID_LENGTH),
            "documentRef": _NESTED_DOCUMENT_REF,
            "actionId": identifier,
            "status": one_of(*RECEIPT_STATUSES),
            "parameterHash": lower_hex(64),
            "createdAt": integer(0, MAX_TIMESTAMP),
            "updatedAt": integer(0, MAX_TIMESTAMP),
        },
        {
            "message": text(0, MESSAGE_LENGTH),
            "result": budgeted(_ACTION_RESULT, max_bytes=RESULT_BYTES, **SHELL_LIMITS),
        },
    ),
    _updated_not_before_created,
    _result_only_when_succeeded,
)

_CAPABILITY = closed_object(
    {
        "id": identifier,
        "title": text(1, CAPABILITY_TITLE_LENGTH),
        "risk": one_of(*CAPABILITY_RISKS),
        "requiresConfirmation": boolean,
        # Data only, never executed: the Host runs the tool's own registered schema.
        "parameters": budgeted(json_object),
        "resultFields": unique_identifiers(RESULT_FIELDS, "result field"),
    },
    {"description": text(0, CAPABILITY_DESCRIPTION_LENGTH)},
)


def _parse(value: Any, max_bytes: int, rule: Rule) -> FrozenDict:
    """Safe JSON and the byte budget, then the structure (always an object), then a frozen copy."""
    problems = safe_json_issues(value, max_bytes=max_bytes, **SHELL_LIMITS)
    if not problems:
        problems = list(islice(rule(value), MAX_ISSUES))
    if problems:
        raise UISchemaError(problems)
    return freeze_object(value)


def _with_integers(value: FrozenDict, *keys: str) -> FrozenDict:
    """The same object with the named (already integral) fields as `int`, order kept."""
    return FrozenDict({key: int(item) if key in keys else item for key, item in value.items()})


def _normalized_ref(ref: FrozenDict) -> FrozenDict:
    return _with_integers(ref, "generation", "revision")


def _with_ref(value: FrozenDict, *integer_keys: str) -> FrozenDict:
    normalized = _with_integers(value, *integer_keys)
    return FrozenDict(
        {key: _normalized_ref(item) if key == "documentRef" else item for key, item in normalized.items()}
    )


def parse_ui_document_ref(value: Any) -> FrozenDict:
    """A `UIDocumentRef` `{sourceCallId, uiId, generation, revision}` (at most 1,024 bytes)."""
    return _normalized_ref(_parse(value, DOCUMENT_REF_BYTES, _DOCUMENT_REF))


def parse_ui_action_reserve_request(value: Any) -> FrozenDict:
    """A `UIActionReserveRequest` `{documentRef, requestId, actionId, values}` (at most 32 KiB)."""
    return _with_ref(_parse(value, REQUEST_BYTES, _RESERVE_REQUEST))


def parse_ui_action_query(value: Any) -> FrozenDict:
    """A `UIActionQuery` `{operationId}` (at most 1,024 bytes)."""
    return _parse(value, QUERY_BYTES, _ACTION_QUERY)


def parse_ui_action_result(value: Any) -> FrozenDict:
    """A public action result: a flat object of at most 32 scalar fields (at most 32 KiB)."""
    return _parse(value, RESULT_BYTES, _ACTION_RESULT)


def parse_ui_action_receipt(value: Any) -> FrozenDict:
    """A trusted `UIActionReceipt` (at most 36 KiB; a result only when `succeeded`)."""
    return _with_ref(_parse(value, RECEIPT_BYTES, _RECEIPT), "createdAt", "updatedAt")


def parse_ui_capability_descriptor(value: Any) -> FrozenDict:
    """A public capability descriptor with its parameter schema (at most 64 KiB)."""
    return _parse(value, CAPABILITY_BYTES, _CAPABILITY)


def _parse_collection(
    value: Any, max_items: int, parse_item: Callable[[Any], FrozenDict], unique_key: str, what: str
) -> FrozenList:
    """A bounded array shell first, then each element against its own budget."""
    if type(value) not in ARRAY_KINDS:  # exact: `len` of a subclass could run its own code
        raise UISchemaError([Issue("", "expected an array", "type")])
    if len(value) > max_items:
        raise UISchemaError([Issue("", f"at most {max_items} items are allowed", "too_many")])
    items: list[FrozenDict] = []
    problems: list[Issue] = []
    seen: set[str] = set()
    for index, element in enumerate(value):
        try:
            item = parse_item(element)
        except UISchemaError as error:
            problems.extend(issue.prefixed(f"/{index}") for issue in error.issues)
            if len(problems) >= MAX_ISSUES:
                break
            continue
        if item[unique_key] in seen:
            problems.append(Issue(f"/{index}/{unique_key}", f"duplicate {what} {unique_key}", "duplicate"))
        seen.add(item[unique_key])
        items.append(item)
    if problems:
        raise UISchemaError(problems)
    return FrozenList(items)


def parse_ui_action_receipt_list(value: Any) -> FrozenList:
    """An array of at most 256 receipts with distinct `operationId`s."""
    return _parse_collection(value, MAX_RECEIPTS, parse_ui_action_receipt, "operationId", "receipt")


def parse_ui_capability_catalog(value: Any) -> FrozenList:
    """An array of at most 64 capability descriptors with distinct `id`s."""
    return _parse_collection(value, MAX_CAPABILITIES, parse_ui_capability_descriptor, "id", "capability")
