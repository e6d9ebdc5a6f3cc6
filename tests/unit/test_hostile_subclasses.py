"""Issue 20 (item 8): a subclass of a JSON type is refused before any of its methods runs.

For every public function of `core` (and `canonical_json_measured`, which the workers call)
and every argument that takes JSON, each hostile subclass (`bench.hostile`) is
passed in place of the whole argument and nested inside it (the first and the last dict,
list, str, int, float and key of a valid argument, replaced by an equal hostile twin).  Only
a documented `UIError` may come out, a hostile argument itself is always refused (by
`restore_state`, which never raises on junk, with the defaults), nothing hostile is
returned, and no trapped method is ever called: neither raising traps nor traps that
answer nonsense.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import core
from bench.hostile import HOSTILE_KINDS, HostileObject, armed, hostile_twin, stand_ins
from core import (
    UIActionError,
    UIExpressionError,
    UISchemaError,
    UIStateError,
    UIStreamError,
    UIStreamState,
    UIViewStateError,
)
from core.json._frozen import thaw
from core.json.canonical import canonical_json_measured

from .documents import base_document

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DOCUMENTED = (UISchemaError, UIStateError, UIExpressionError, UIActionError, UIStreamError, UIViewStateError)
HOSTILE_TYPES = frozenset([*HOSTILE_KINDS.values(), HostileObject])

Arguments = tuple[Callable[..., Any], list[Any], dict[str, Any]]


def _load(name: str) -> Any:
    return json.loads((EXAMPLES / name).read_text("utf-8"))


def _remote_seeds() -> dict[str, Any]:
    ref = {"sourceCallId": "call_1", "uiId": "reader", "generation": 2, "revision": 3}
    capability = {"id": "read_file", "title": "Read a file", "description": "Reads a file.", "risk": "read",
                  "requiresConfirmation": False,
                  "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}},
                  "resultFields": ["totalLines"]}
    receipt = {"operationId": "op-1", "requestId": "req-1", "documentRef": ref, "actionId": "read_info",
               "status": "succeeded", "parameterHash": "0123456789abcdef" * 4, "createdAt": 1_700_000_000_000,
               "updatedAt": 1_700_000_000_500, "message": "done", "result": {"totalLines": 42, "ratio": 0.5}}
    return {
        "parse_ui_document_ref": ref,
        "parse_ui_action_reserve_request": {"documentRef": ref, "requestId": "req-1", "actionId": "read_info",
                                            "values": {"path": "README.md", "lines": 0.5, "ok": True}},
        "parse_ui_action_query": {"operationId": "op-1"},
        "parse_ui_action_receipt": receipt,
        "parse_ui_action_receipt_list": [receipt, {**receipt, "operationId": "op-2", "requestId": "req-2"}],
        "parse_ui_capability_descriptor": capability,
        "parse_ui_capability_catalog": [capability],
        "parse_ui_action_result": {"totalLines": 42, "note": "x", "ratio": 1.5},
    }


@cache
def _baselines() -> dict[str, Arguments]:
    """label -> (function, valid positional arguments, valid keyword arguments)."""
    raw = base_document()
    parsed = core.parse_document(raw)
    state = thaw(core.initial_state(parsed))
    expr = {"op": "add", "args": [{"state": "amount"}, {"op": "round", "args": [{"derived": "double"}, 1]}]}
    derived = {"double": 20.5, "label": "Total: 20", "big": False}
    stream_document = _load("stream-initial.json")
    started = core.start_ui_stream(stream_document, "call-1", 1)
    event = _load("stream-mutations.json")[0]
    following = thaw(core.advance_ui_stream(started, event).checkpoint)
    frame = thaw(started.checkpoint)
    canonical = {"b": [1, 2.5, "x", None, True, {"é": 0.1}], "a": "y"}
    final_case, report = _load("answer-ui/final-answer.json"), _load("answer-ui/report.json")
    view = _load("answer-ui/view-state.json")
    block, nodes = view["published_blocks"][1], view["view_state"]["nodes"]
    basis = thaw(core.view_state_basis(block))
    table: dict[str, Arguments] = {
        "parse_document": (core.parse_document, [raw], {}),
        "initial_state": (core.initial_state, [raw], {}),
        "update_state": (core.update_state, [raw, state, "name", "Grace"], {}),
        "restore_state": (core.restore_state, [raw, state], {}),
        "assert_valid_state": (core.assert_valid_state, [raw, state], {}),
        "evaluate_derived": (core.evaluate_derived, [raw, state], {}),
        "resolve_value": (core.resolve_value, [{"expr": expr}, state, derived], {}),
        "resolve_document_value": (core.resolve_document_value, [raw, state, {"expr": expr}], {}),
        "evaluate_expression": (core.evaluate_expression, [expr, state, derived], {}),
        "dispatch_local_action": (core.dispatch_local_action,
                                  [raw, state, {"type": "set", "key": "plan", "value": "pro"}], {}),
        "resolve_ui_action": (core.resolve_ui_action, [raw, state, "save"], {}),
        "apply_action_result": (core.apply_action_result, [raw, state, "save", {"lines": 3}], {}),
        "start_ui_stream": (core.start_ui_stream, [stream_document, "call-1", 1], {}),
        "advance_ui_stream": (core.advance_ui_stream, [started, event], {}),
        "accept_checkpoint": (core.accept_checkpoint, [started, following], {}),
        "accept_checkpoint (first frame)": (core.accept_checkpoint, [None, frame], {}),
        "resume_ui_stream": (core.resume_ui_stream, [frame],
                             {"frame_count": started.frame_count, "byte_count": started.byte_count}),
        "restore_ui_stream": (core.restore_ui_stream, [frame],
                              {"frame_count": started.frame_count, "byte_count": started.byte_count,
                               "facts": started.restore_facts}),
        "restore_snapshot": (core.restore_snapshot, [frame["snapshot"]], {"facts": started.restore_facts}),
        "restore_envelope": (core.restore_envelope,
                             [{key: value for key, value in frame.items() if key != "snapshot"},
                              core.restore_snapshot(frame["snapshot"], facts=started.restore_facts)],
                             {"frame_count": started.frame_count, "byte_count": started.byte_count}),
        "parse_answer_block": (core.parse_answer_block, [_load("answer-ui/response-block.json")], {}),
        "parse_final_answer": (core.parse_final_answer,
                               [final_case["final_answer"], final_case["published_blocks"]], {}),
        "answer_parts": (core.answer_parts, [final_case["final_answer"], final_case["published_blocks"]], {}),
        "parse_report_ui_blocks": (core.parse_report_ui_blocks, [report["ui_blocks"], report["evidence_ids"]], {}),
        "parse_view_state": (core.parse_view_state, [nodes, block], {}),
        "migrate_view_state": (core.migrate_view_state, [nodes, basis, block], {}),
        "view_state_basis": (core.view_state_basis, [block], {}),
        "view_state_schema_digest": (core.view_state_schema_digest, [block], {}),
    }
    # A value orjson prints canonically (the fast walk) and one it does not (1.0: the reference).
    for name, function in [("assert_safe_json", core.assert_safe_json), ("hash_canonical_json",
                           core.hash_canonical_json), ("canonical_json_string", core.canonical_json_string),
                           ("canonical_json_measured", canonical_json_measured)]:
        table[name] = (function, [canonical], {})
        table[f"{name} (reference path)"] = (function, [{**canonical, "c": 1.0}], {})
    for name, seed in _remote_seeds().items():
        table[name] = (getattr(core, name), [seed], {})
    return {label: (function, args, kwargs) for label, (function, args, kwargs) in table.items()}


# Which arguments each case varies: positions, and keyword names.  Documents are varied as
# decoded JSON; where another argument varies, the document is passed already parsed.
POSITIONS: dict[str, tuple[int | str, ...]] = {
    "parse_document": (0,), "initial_state": (0,), "update_state": (0, 1, 2, 3), "restore_state": (0, 1),
    "assert_valid_state": (0, 1), "evaluate_derived": (0, 1), "resolve_value": (0, 1, 2),
    "resolve_document_value": (0, 1, 2), "evaluate_expression": (0, 1, 2), "dispatch_local_action": (0, 1, 2),
    "resolve_ui_action": (0, 1, 2), "apply_action_result": (0, 1, 2, 3), "start_ui_stream": (0, 1, 2),
    "advance_ui_stream": (0, 1), "accept_checkpoint": (0, 1), "accept_checkpoint (first frame)": (1,),
    "resume_ui_stream": (0, "frame_count", "byte_count"),
    "restore_ui_stream": (0, "frame_count", "byte_count", "facts"),
    "restore_snapshot": (0, "facts"),
    "restore_envelope": (0, "frame_count", "byte_count"),  # 1 is a RestoredSnapshot, not JSON
    "parse_answer_block": (0,),
    "parse_final_answer": (0, 1), "answer_parts": (0, 1), "parse_report_ui_blocks": (0, 1),
    "parse_view_state": (0, 1), "migrate_view_state": (0, 1, 2), "view_state_basis": (0,),
    "view_state_schema_digest": (0,),
    **{f"{name}{path}": (0,) for name in ("assert_safe_json", "hash_canonical_json", "canonical_json_string",
                                         "canonical_json_measured") for path in ("", " (reference path)")},
    **dict.fromkeys(_remote_seeds(), (0,)),
}
CASES = [(label, position) for label, positions in POSITIONS.items() for position in positions]
# Functions that answer junk instead of raising: what they answer is their refusal.
FORGIVING: dict[tuple[str, int | str], Callable[[list[Any]], Any]] = {
    ("restore_state", 1): lambda args: core.initial_state(args[0]),  # the defaults
    ("migrate_view_state", 0): lambda args: {},  # no view state
    ("migrate_view_state", 1): lambda args: core.migrate_view_state(args[0], None, args[2]),  # an unknown basis
}


def test_every_public_function_taking_arguments_is_covered() -> None:
    public = {name for name in core.__all__ if name[0].islower() and callable(getattr(core, name))}
    without_arguments = {"answer_json_schema", "document_json_schema"}
    covered = {function.__name__ for function, _, _ in _baselines().values()}
    assert covered == public - without_arguments | {"canonical_json_measured"}
    assert set(POSITIONS) == set(_baselines())


@pytest.mark.parametrize("label", sorted(POSITIONS))
def test_the_valid_baseline_of_each_case_is_accepted(label: str) -> None:
    function, args, kwargs = _baselines()[label]
    function(*args, **kwargs)


# ------------------------------------------------------------------ variants


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, kind) of every dict, list, str, int, float and key below the top, in document order."""
    if type(value) is dict:
        for key, item in value.items():
            yield (*path, key), "key"
            yield from _child(item, (*path, key))
    elif type(value) is list:
        for index, item in enumerate(value):
            yield from _child(item, (*path, index))


def _child(item: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if type(item) in HOSTILE_KINDS:
        yield path, type(item)
    yield from _nodes(item, path)


def _replaced(value: Any, path: tuple[Any, ...], kind: Any) -> Any:
    """A copy of `value` whose node (or, for kind "key", key) at `path` is its hostile twin."""
    copy = thaw(value)
    parent = copy
    for segment in path[:-1]:
        parent = parent[segment]
    last = path[-1]
    if kind == "key":
        items = list(parent.items())
        parent.clear()
        parent.update((hostile_twin(key) if key == last else key, item) for key, item in items)
    else:
        parent[last] = hostile_twin(parent[last])
    return copy


def variants(value: Any) -> Iterator[tuple[str, Any, bool]]:
    """(label, hostile variant, whether the argument itself is hostile) for one valid argument."""
    for stand_in in stand_ins():
        yield f"a {type(stand_in).__name__}", stand_in, True
    if type(value) in HOSTILE_KINDS or type(value).__name__ in ("FrozenDict", "ParsedDocument"):
        yield "its hostile twin", hostile_twin(thaw(value)), True
    plain = thaw(value)
    found: dict[Any, list[tuple[Any, ...]]] = {}
    for path, kind in _nodes(plain):
        found.setdefault(kind, []).append(path)
    for kind, paths in found.items():
        for path in dict.fromkeys((paths[0], paths[-1])):
            name = kind if kind == "key" else kind.__name__
            yield f"{name} at {'/'.join(map(str, path))}", _replaced(plain, path, kind), False


def _arguments(label: str, position: int | str) -> Arguments:
    function, args, kwargs = _baselines()[label]
    raw = args[0] if isinstance(args[0], dict) and "root" in args[0] else None
    if raw is not None and position != 0:
        args = [core.parse_document(raw), *args[1:]]
    return function, list(args), dict(kwargs)


def _with(args: list[Any], kwargs: dict[str, Any], position: int | str, value: Any) -> tuple[list[Any], dict]:
    if isinstance(position, int):
        return [*args[:position], value, *args[position + 1:]], kwargs
    return args, {**kwargs, position: value}


def _holds_hostile(value: Any) -> bool:
    if isinstance(value, UIStreamState):
        value = value.checkpoint
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) in HOSTILE_TYPES:
            return True
        if isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def _outcome(function: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], mode: str,
             forgiving: Callable[[list[Any]], Any] | None) -> tuple[str, list]:
    result = None
    with armed(mode) as calls:
        try:
            result = function(*args, **kwargs)
        except DOCUMENTED:
            outcome = "refused"
        except BaseException as error:  # any other exception is the finding
            outcome = f"leaked {type(error).__name__}"
        else:
            outcome = "accepted"
    if outcome == "accepted" and _holds_hostile(result):
        outcome = "returned a hostile value"
    elif outcome == "accepted" and forgiving is not None and result == forgiving(args):
        outcome = "refused"
    return outcome, list(calls)


@pytest.mark.parametrize("mode", ["raise", "nonsense"])
@pytest.mark.parametrize(("label", "position"), CASES, ids=[f"{label}-{position}" for label, position in CASES])
def test_a_hostile_subclass_is_refused_before_any_of_its_methods_runs(label: str, position: int | str,
                                                                      mode: str) -> None:
    function, args, kwargs = _arguments(label, position)
    current = args[position] if isinstance(position, int) else kwargs[position]
    failures = []
    for name, value, whole in variants(current):
        outcome, calls = _outcome(function, *_with(args, kwargs, position, value), mode,
                                  FORGIVING.get((label, position)))
        if calls or outcome not in ("refused", "accepted") or (whole and outcome != "refused"):
            failures.append(f"{name}: {outcome}; called {calls[:4]}")
    assert failures == []
