"""Issue 7 (core): nothing the client sent is echoed, and only documented errors on any JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core import (
    UIError,
    UIExpressionError,
    UISchemaError,
    UIStreamError,
    advance_ui_stream,
    assert_safe_json,
    canonical_json_string,
    dispatch_local_action,
    evaluate_derived,
    evaluate_expression,
    initial_state,
    parse_document,
    resolve_document_value,
    resolve_ui_action,
    start_ui_stream,
)
from core.errors import MAX_PATH_LENGTH, Issue

from .documents import base_document, edit

SECRET = "QXJZ secret"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def paths_of(call: Any, *args: Any) -> list[str]:
    with pytest.raises(UIError) as caught:
        call(*args)
    return [issue.path for issue in getattr(caught.value, "issues", [])]


def nest(inner: Any, levels: int) -> Any:
    for _ in range(levels):
        inner = {"op": "min", "args": [inner]}
    return inner


# ------------------------------------------------------------------ §3 no echo

@pytest.mark.parametrize(("value", "path"), [
    ({SECRET: float("nan")}, ""),
    ({"state": {SECRET + "!": {"initial": float("inf")}}}, "/state"),
    ({"root": {"props": {"rows": [{"QXJZsecret": float("inf")}]}}}, "/root/props/rows/0"),
])
def test_the_safe_json_check_reports_the_object_holding_a_foreign_key(value: Any, path: str) -> None:
    assert paths_of(assert_safe_json, value) == [path]
    assert paths_of(canonical_json_string, value) == [path]


def test_a_declared_identifier_still_locates_an_unsafe_value() -> None:
    document = edit(base_document(), "/state/amount/initial", 10**20)
    assert paths_of(parse_document, document) == ["/state/amount/initial"]


def test_a_table_row_with_an_extra_key_holding_an_object_is_reported_at_the_row() -> None:
    document = edit(base_document(), "/root/children/5/props/rows/0/QXJZsecret", {"a": 1})
    assert paths_of(parse_document, document) == ["/root/children/5/props/rows/0"]


def test_a_bad_cell_of_a_declared_column_keeps_its_path() -> None:
    document = edit(base_document(), "/root/children/5/props/rows/0/a", [1])
    assert paths_of(parse_document, document) == ["/root/children/5/props/rows/0/a"]


def test_an_undeclared_result_map_key_is_reported_at_the_result_map() -> None:
    document = edit(base_document(), "/actions/save/resultMap/QXJZsecret", "lines")
    with pytest.raises(UISchemaError) as caught:
        parse_document(document)
    assert [(i.path, i.code) for i in caught.value.issues] == [("/actions/save/resultMap", "undeclared_result_key")]


def test_an_unknown_derived_key_is_not_named_by_evaluate_expression() -> None:
    with pytest.raises(UIExpressionError) as caught:
        evaluate_expression({"derived": "QXJZsecret"}, {}, {})
    assert "QXJZ" not in caught.value.message and caught.value.code == "unknown_derived"


# ------------------------------------------------------------------ §4 documented errors

def test_a_tiny_step_is_a_schema_error_with_its_path_everywhere() -> None:
    document = edit(base_document(), "/state/amount/step", 5e-324)
    for call in (parse_document, initial_state):
        with pytest.raises(UISchemaError) as caught:
            call(document)
        assert (caught.value.issues[0].path, caught.value.issues[0].code) == ("/state/amount/step", "step_too_small")
    with pytest.raises(UIStreamError) as stream:
        start_ui_stream(document, "call-1", 1)
    assert stream.value.issues[0].path == "/state/amount/step"


def _chain(levels: int, links: int) -> dict:
    document = base_document()
    derived: dict[str, Any] = {}
    previous: Any = 1
    for i in range(links):
        derived[f"d{i}"] = nest(previous, levels)
        previous = {"derived": f"d{i}"}
    # the last link first, so evaluating it walks the whole chain lazily
    document["derived"] = {"double": 1, "label": "x", "big": False, **dict(reversed(derived.items()))}
    return document


def test_derived_chains_nesting_deeper_than_the_total_bound_are_rejected_at_parse_time() -> None:
    with pytest.raises(UISchemaError) as caught:
        parse_document(_chain(31, 8))
    assert caught.value.issues[0].code == "derived_depth"
    assert caught.value.issues[0].path == "/derived/d4"


def test_the_deepest_accepted_chain_evaluates_through_every_runtime_helper() -> None:
    document = parse_document(edit(_chain(31, 4), "/root/children/9/props/message",
                                   {"expr": nest({"derived": "d3"}, 30)}))
    state = initial_state(document)
    assert evaluate_derived(document, state)["d3"] == 1
    assert resolve_document_value(document, state, {"expr": nest({"derived": "d3"}, 31)}) == 1


@pytest.mark.parametrize("value", [{}, [1], 10**400, float("nan"), "x" * 5_000])
def test_derived_values_handed_in_are_checked_like_state_values(value: Any) -> None:
    for expr in ({"derived": "a"}, {"op": "add", "args": [{"derived": "a"}, 1]},
                 {"op": "if", "args": [True, {"derived": "a"}, 1]}):
        with pytest.raises(UIExpressionError) as caught:
            evaluate_expression(expr, {}, {"a": value})
        assert caught.value.code == "invalid_derived"


def test_an_added_node_whose_id_is_a_list_is_a_stream_error() -> None:
    state = start_ui_stream(json.loads((EXAMPLES / "stream-initial.json").read_text()), "call-1", 1)
    event = {"type": "add", "parentId": "summary-card", "index": 2,
             "node": {"id": ["x"], "type": "Text", "props": {"text": "t"}}}
    with pytest.raises(UIStreamError):
        advance_ui_stream(state, event)


@pytest.mark.parametrize("path", ["/" + "~0" * 300, "/a/" + "~1" * 300, "/" + "x" * 510 + "~0~0"])
def test_a_clipped_path_is_a_valid_pointer_to_an_ancestor(path: str) -> None:
    clipped = Issue(path, "m").path
    assert len(clipped) <= MAX_PATH_LENGTH and path.startswith(clipped)
    assert clipped == "" or path[len(clipped)] == "/"


def test_a_lone_surrogate_is_never_copied_into_a_path() -> None:
    assert Issue("/state/\ud800x/initial", "m").path == "/state"
    assert paths_of(assert_safe_json, {"state": {"\ud800": {"initial": float("nan")}}}) == ["/state"]
    Issue("/x", "bad \udc00 text").message.encode()


class _Dict(dict):
    pass


class _List(list):
    pass


class _Str(str):
    pass


class _Int(int):
    pass


class _Float(float):
    pass


@pytest.mark.parametrize("value", [_Dict(a=1), {"a": _List([1])}, {"a": _Str("x")}, {"a": _Int(1)},
                                   {"a": _Float(1.5)}, [_Dict()], {_Str("a"): 1}])
def test_subclasses_of_json_types_are_refused_by_the_safe_json_check(value: Any) -> None:
    with pytest.raises(UISchemaError) as caught:
        assert_safe_json(value)
    assert caught.value.issues[0].code == "unsafe_json"


def test_a_document_built_from_subclasses_is_refused_before_any_rule_runs() -> None:
    document = base_document()
    document["title"] = _Str("Every component")
    with pytest.raises(UISchemaError) as caught:
        parse_document(document)
    assert caught.value.issues[0].path == "/title"


def test_dispatch_local_action_parses_a_plain_document_first() -> None:
    document = base_document()
    state = initial_state(document)
    with pytest.raises(UIError) as caught:
        dispatch_local_action(document, state, {"type": "set", "key": "name", "value": "QXJZ"})
    assert caught.value.code == "undeclared"
    assert dispatch_local_action(document, state, {"type": "set", "key": "plan", "value": "pro"})["plan"] == "pro"


# ------------------------------------------------------------------ §5 seed 000 §8

def _failing_at_runtime() -> dict:
    document = base_document()
    edit(document, "/derived/ratio", {"op": "div", "args": [1, {"op": "sub", "args": [{"state": "count"}, 4]}]})
    edit(document, "/actions/save/arguments/limit", {"expr": {"derived": "ratio"}})
    edit(document, "/root/children/7/children/1/children/2/props/action/value",
         {"expr": {"op": "add", "args": [{"state": "amount"}, {"op": "round", "args": [{"derived": "ratio"}]}]}})
    return document


def test_a_runtime_expression_failure_in_an_action_is_an_expression_error() -> None:
    document = parse_document(_failing_at_runtime())
    state = dict(initial_state(document), count=4)
    action = document["root"]["children"][7]["children"][1]["children"][2]["props"]["action"]
    with pytest.raises(UIExpressionError):
        dispatch_local_action(document, state, action)
    with pytest.raises(UIExpressionError):
        resolve_ui_action(document, state, "save")


@pytest.mark.parametrize(("where", "pointer"), [
    (lambda d: d.update(derived={"x": {"op": "concat", "args": ["ok", "\ud83d"]}}), "/derived/x/args/1"),
    (lambda d: d["root"].setdefault("props", {}).update(title="a\udc00b"), "/root/props/title"),
    # under a key the protocol does not define, the path stops at the object holding it
    (lambda d: d["root"].setdefault("props", {}).update(QXJZsecret={"\udc00": 1}), "/root/props"),
])
def test_a_lone_surrogate_is_located_without_naming_a_foreign_key(where: Any, pointer: str) -> None:
    from tests.unit.documents import base_document

    document = base_document()
    where(document)
    with pytest.raises(UIError) as error:
        parse_document(document)
    assert [(issue.path, issue.code) for issue in error.value.issues] == [(pointer, "unsafe_json")]


@pytest.mark.parametrize(("limits", "path"), [
    ({"max_depth": None}, "/max_depth"), ({"max_depth": "128"}, "/max_depth"),
    ({"max_depth": float("nan")}, "/max_depth"),
    ({"max_depth": True}, "/max_depth"), ({"max_depth": 255}, "/max_depth"), ({"max_values": -1}, "/max_values"),
    ({"max_bytes": 1.5}, "/max_bytes"), ({"max_bytes": "10"}, "/max_bytes"),
])
def test_assert_safe_json_refuses_limits_that_are_not_integers_in_range(limits: dict[str, Any], path: str) -> None:
    # NaN once switched a bound off, None raised TypeError, a depth past 254 was misreported
    with pytest.raises(UIError) as error:
        assert_safe_json({"a": 1}, **limits)
    assert [(issue.path, issue.code) for issue in error.value.issues] == [(path, "type")]


def test_assert_safe_json_writes_up_to_254_levels() -> None:
    value: Any = 1
    for _ in range(254):
        value = [value]
    assert assert_safe_json(value, max_depth=254) == 254 * 2 + 1


@pytest.mark.parametrize("arguments", [(5, "m"), ("/x", None), ("/x", "m", 3), (b"/x", "m")])
def test_an_issue_of_other_types_is_a_type_error_naming_the_field(arguments: tuple[Any, ...]) -> None:
    # an int path once failed inside the clipping with AttributeError ('int' has no isascii)
    # (a compiled build refuses it in its own words, before the check of the pure one)
    with pytest.raises(TypeError, match=r"(must be a string|str object expected)"):
        Issue(*arguments)


class _Trapped(str):
    """A text whose `__class__` lookup would run code (isinstance asks for it)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # type: ignore[override]
        raise AssertionError("the error classes asked a foreign value for its class")


def test_the_error_classes_take_exact_text_and_never_ask_a_foreign_value_anything() -> None:
    # An audit: `isinstance` ran a hostile value's `__class__`, and a str enum member became a path.
    import enum

    class Place(enum.StrEnum):
        A = "/a"

    for value in (_Trapped("/a"), Place.A):
        with pytest.raises(TypeError, match=r"(must be a string|str object expected)"):
            Issue(value, "m")
        with pytest.raises(TypeError, match=r"(must be a string|str object expected)"):
            UIError(value)
        with pytest.raises(TypeError, match=r"(must be a string or None|str or None object expected)"):
            UIError("m", code=value)


@pytest.mark.parametrize("error", [UIError, UIExpressionError])
def test_an_error_message_or_code_of_another_type_is_a_type_error(error: type[UIError]) -> None:
    with pytest.raises(TypeError, match=r"(must be a string|str object expected)"):
        error(404)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"(must be a string or None|str or None object expected)"):
        error("m", code=7)  # type: ignore[arg-type]
    assert error("m", code="x").code == "x"


@pytest.mark.parametrize("issues", [[{"path": "", "message": "m"}], ["m"], 5, [None]])
def test_located_errors_take_issues_or_one_text(issues: Any) -> None:
    with pytest.raises(TypeError, match=r"^UISchemaError issues must be Issue values or one string$"):
        UISchemaError(issues)
    assert UISchemaError("m").issues == [Issue("", "m")]
    assert UIStreamError([Issue("/a", "m", "x")]).issues[0].code == "x"
