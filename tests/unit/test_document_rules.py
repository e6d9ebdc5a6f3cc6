"""One rejecting case per document rule: the error class and the exact issue path."""

from __future__ import annotations

import pytest

from core.document.model import parse_document
from core.errors import UNKNOWN_PROPERTY, UISchemaError

from .documents import base_document, edit

C = "/root/children"
FORM = f"{C}/7/children/0"
ROW = f"{C}/7/children/1"
DEL = object()
INS = object()

# (case id, [(pointer, value) | (pointer, DEL) | (pointer, (INS, value))], expected issue path)
CASES = [
    # document level
    ("unknown version", [("/version", "2.0")], "/version"),
    ("version must be a string", [("/version", 1.1)], "/version"),
    ("missing title", [("/title", DEL)], "/title"),
    ("empty title", [("/title", "")], "/title"),
    ("title over 256 units", [("/title", "x" * 257)], "/title"),
    ("unknown top-level key", [("/html", "<b>")], ""),
    ("document id not an identifier", [("/id", "1abc")], "/id"),
    ("document id reserved", [("/id", "__proto__")], "/id"),
    ("document id too long", [("/id", "a" * 65)], "/id"),
    ("mode text is not a document mode", [("/mode", "text")], "/mode"),
    ("v1.0 rejects actions", [("/version", "1.0")], ""),
    ("v1.1 requires actions", [("/actions", DEL)], "/actions"),
    # state
    ("state key not an identifier", [("/state/9x", {"type": "boolean", "initial": True})], "/state"),
    ("state key reserved", [("/state/constructor", {"type": "boolean", "initial": True})], "/state"),
    ("state null type", [("/state/count", {"type": "null", "initial": None})], "/state/count/type"),
    ("number initial is a bool", [("/state/count/initial", True)], "/state/count/initial"),
    ("number initial out of range", [("/state/amount/initial", 101)], "/state/amount/initial"),
    ("number initial off the step grid", [("/state/amount/initial", 10.25)], "/state/amount/initial"),
    ("min above max", [("/state/amount/min", 200)], "/state/amount/max"),
    ("step not positive", [("/state/amount/step", 0)], "/state/amount/step"),
    ("number field with maxLength", [("/state/count/maxLength", 3)], "/state/count"),
    ("string maxLength zero", [("/state/name/maxLength", 0)], "/state/name/maxLength"),
    ("string maxLength above 4096", [("/state/name/maxLength", 4097)], "/state/name/maxLength"),
    ("string initial over maxLength", [("/state/name/initial", "x" * 33)], "/state/name/initial"),
    ("boolean initial is a number", [("/state/agree/initial", 0)], "/state/agree/initial"),
    ("more than 64 state fields", [(f"/state/f{i}", {"type": "boolean", "initial": True}) for i in range(60)], "/state"),
    # derived and expressions
    ("derived cycle in declaration order", [("/derived/a", {"derived": "b"}), ("/derived/b", {"derived": "a"})], "/derived/a"),
    ("derived self cycle", [("/derived/self", {"op": "add", "args": [{"derived": "self"}, 1]})], "/derived/self"),
    ("undeclared state reference", [("/derived/double/args/0", {"state": "nope"})], "/derived/double/args/0/state"),
    ("undeclared derived reference", [("/derived/x", {"derived": "nope"})], "/derived/x/derived"),
    ("unknown operator", [("/derived/double/op", "times")], "/derived/double/op"),
    ("arity of sub", [("/derived/x", {"op": "sub", "args": [1, 2, 3]})], "/derived/x/args"),
    ("arity of add above 16", [("/derived/x", {"op": "add", "args": [1] * 17})], "/derived/x/args"),
    ("not takes one", [("/derived/x", {"op": "not", "args": [True, False]})], "/derived/x/args"),
    ("add of a string", [("/derived/x", {"op": "add", "args": [1, "2"]})], "/derived/x/args/1"),
    ("and of a number", [("/derived/x", {"op": "and", "args": [True, 1]})], "/derived/x/args/1"),
    ("if condition not boolean", [("/derived/x", {"op": "if", "args": [1, 2, 3]})], "/derived/x/args/0"),
    ("if else branch type-checked", [("/derived/x", {"op": "if", "args": [True, 1, {"op": "add", "args": [1, "a"]}]})], "/derived/x/args/2/args/1"),
    ("if mixed result used as number", [("/derived/x", {"op": "add", "args": [1, {"op": "if", "args": [True, 1, "a"]}]})], "/derived/x/args/1"),
    ("round digits above 6", [("/derived/x", {"op": "round", "args": [1.5, 7]})], "/derived/x/args/1"),
    ("round digits fractional", [("/derived/x", {"op": "round", "args": [1.5, 1.5]})], "/derived/x/args/1"),
    ("default division by zero", [("/derived/x", {"op": "div", "args": [1, {"op": "sub", "args": [{"state": "count"}, 3]}]})], "/derived/x"),
    ("default pow overflow", [("/derived/x", {"op": "pow", "args": [10, 16]})], "/derived/x"),
    ("default pow of negative base to fraction", [("/derived/x", {"op": "pow", "args": [-8, {"op": "div", "args": [1, 3]}]})], "/derived/x"),
    ("default concat too long", [("/derived/x", {"op": "concat", "args": ["x" * 4000, "y" * 100]})], "/derived/x"),
    ("literal number above 1e15", [("/derived/x", {"op": "add", "args": [1, 2e15]})], "/derived/x/args/1"),
    ("expression object with extra key", [("/derived/x", {"op": "add", "args": [1, 2], "then": 1})], "/derived/x"),
    ("string is never evaluated as code", [("/derived/x", {"op": "add", "args": [1, "amount * 2"]})], "/derived/x/args/1"),
    ("expression path-like reference", [("/derived/x", {"state": "amount.value"})], "/derived/x/state"),
    ("expression too deep", [("/derived/x", None)], "/derived/x" + "/args/0" * 32),
    ("more than 64 derived", [(f"/derived/d{i}", 1) for i in range(62)], "/derived"),
    # actions v1.1
    ("more than 16 actions", [(f"/actions/a{i}", {"kind": "agent", "prompt": "go"}) for i in range(15)], "/actions"),
    ("action kind unknown", [("/actions/save/kind", "script")], "/actions/save/kind"),
    ("tool definition with toolName", [("/actions/save/toolName", "rm")], "/actions/save"),
    ("capability id not an identifier", [("/actions/save/capabilityId", "read file")], "/actions/save/capabilityId"),
    ("argument is an object", [("/actions/save/arguments/opts", {"a": 1})], "/actions/save/arguments/opts"),
    ("argument is an array", [("/actions/save/arguments/opts", [1])], "/actions/save/arguments/opts"),
    ("argument is null", [("/actions/save/arguments/opts", None)], "/actions/save/arguments/opts"),
    ("more than 32 arguments", [(f"/actions/save/arguments/a{i}", 1) for i in range(31)], "/actions/save/arguments"),
    ("resultMap key undeclared", [("/actions/save/resultMap/ghost", "lines")], "/actions/save/resultMap"),
    ("resultMap value is a path", [("/actions/save/resultMap/count", "result.user.secret")], "/actions/save/resultMap/count"),
    ("resultMap value __proto__", [("/actions/save/resultMap/count", "__proto__")], "/actions/save/resultMap/count"),
    ("agent with resultMap", [("/actions/ask/resultMap", {"count": "lines"})], "/actions/ask"),
    ("agent prompt empty at default", [("/actions/ask/prompt", "")], "/actions/ask/prompt"),
    ("agent prompt is a number", [("/actions/ask/prompt", 5)], "/actions/ask/prompt"),
    ("invoke of an undeclared action", [(f"{ROW}/children/3/props/action/actionId", "ghost")], f"{ROW}/children/3/props/action/actionId"),
    ("invoke in a 1.0 document", [("/version", "1.0"), ("/actions", DEL)], f"{FORM}/props/action/type"),
    # tree structure
    ("unknown component", [(f"{C}/0/type", "Iframe")], f"{C}/0/type"),
    ("component type in wrong case", [(f"{C}/0/type", "heading")], f"{C}/0/type"),
    ("duplicate node id", [(f"{C}/1/id", "heading")], f"{C}/1/id"),
    ("node id not an identifier", [(f"{C}/1/id", "has space")], f"{C}/1/id"),
    ("leaf with children", [(f"{C}/0/children", [])], f"{C}/0"),
    ("layout without children", [(f"{C}/4/children", DEL)], f"{C}/4/children"),
    ("children not an array", [(f"{C}/4/children", {})], f"{C}/4/children"),
    ("node without props", [(f"{C}/2/props", DEL)], f"{C}/2/props"),
    ("unknown node key", [(f"{C}/2/style", "x")], f"{C}/2"),
    ("Form inside a Form", [(f"{FORM}/children/-", {"id": "inner", "type": "Form", "props": {"submitLabel": "x", "action": {"type": "reset"}}, "children": []})], f"{FORM}/children/5"),
    ("Form nested through a layout", [(f"{FORM}/children/-", {"id": "box", "type": "Card", "props": {}, "children": [
        {"id": "inner", "type": "Form", "props": {"submitLabel": "x", "action": {"type": "reset"}}, "children": []}]})], f"{FORM}/children/5/children/0"),
    ("structured_ui forbids inputs", [("/mode", "structured_ui")], f"{FORM}/type"),
    # props
    ("unknown prop", [(f"{C}/0/props/onClick", "x")], f"{C}/0/props"),
    ("heading level 4", [(f"{C}/0/props/level", 4)], f"{C}/0/props/level"),
    ("heading level true", [(f"{C}/0/props/level", True)], f"{C}/0/props/level"),
    ("bare state reference as Value", [(f"{C}/1/props/text", {"state": "name"})], f"{C}/1/props/text"),
    ("Value string over 4096", [(f"{C}/1/props/text", "x" * 4097)], f"{C}/1/props/text"),
    ("Markdown with an expression", [(f"{C}/2/props/text", {"expr": "x"})], f"{C}/2/props/text"),
    ("Markdown over 16384", [(f"{C}/2/props/text", "x" * 16385)], f"{C}/2/props/text"),
    ("badge tone unknown", [(f"{C}/3/props/tone", "info")], f"{C}/3/props/tone"),
    ("gap unknown", [("/root/props/gap", "xl")], "/root/props/gap"),
    ("grid columns 5", [(f"{C}/4/props/columns", 5)], f"{C}/4/props/columns"),
    ("progress value is a string", [(f"{C}/4/children/0/props/value", "half")], f"{C}/4/children/0/props/value"),
    ("progress default above max", [(f"{C}/4/children/0/props/max", 5)], f"{C}/4/children/0/props/value"),
    ("progress max zero", [(f"{C}/4/children/0/props/max", 0)], f"{C}/4/children/0/props/max"),
    ("formatted result not numeric", [(f"{C}/4/children/1/props/value", "abc")], f"{C}/4/children/1/props/value"),
    ("currency style without currency", [(f"{C}/4/children/1/props/format/currency", DEL)], f"{C}/4/children/1/props/format/currency"),
    ("currency on decimal style", [(f"{C}/4/children/1/props/format/style", "decimal")], f"{C}/4/children/1/props/format/currency"),
    ("currency unknown", [(f"{C}/4/children/1/props/format/currency", "GBP")], f"{C}/4/children/1/props/format/currency"),
    ("format digits 7", [(f"{C}/4/children/1/props/format/digits", 7)], f"{C}/4/children/1/props/format/digits"),
    ("table without columns", [(f"{C}/5/props/columns", [])], f"{C}/5/props/columns"),
    ("table 33 columns", [(f"{C}/5/props/columns", [{"key": f"k{i}", "label": "x"} for i in range(33)])], f"{C}/5/props/columns"),
    ("table duplicate column key", [(f"{C}/5/props/columns/1/key", "a")], f"{C}/5/props/columns/1/key"),
    ("table row missing a key", [(f"{C}/5/props/rows/0", {"a": 1})], f"{C}/5/props/rows/0"),
    ("table row extra key", [(f"{C}/5/props/rows/0/c", 1)], f"{C}/5/props/rows/0"),
    ("table cell expression", [(f"{C}/5/props/rows/0/a", {"expr": 1})], f"{C}/5/props/rows/0/a"),
    ("table 501 rows", [(f"{C}/5/props/rows", [{"a": 1, "b": 2}] * 501)], f"{C}/5/props/rows"),
    ("chart kind pie", [(f"{C}/6/props/kind", "pie")], f"{C}/6/props/kind"),
    ("chart without points", [(f"{C}/6/props/data", [])], f"{C}/6/props/data"),
    ("chart duplicate point id", [(f"{C}/6/props/data/1/id", "p1")], f"{C}/6/props/data/1/id"),
    ("chart value string", [(f"{C}/6/props/data/0/value", "1")], f"{C}/6/props/data/0/value"),
    ("chart 201 points", [(f"{C}/6/props/data", [{"id": f"p{i}", "label": "x", "value": i} for i in range(201)])], f"{C}/6/props/data"),
    ("card title over 512", [(f"{C}/7/props/title", "x" * 513)], f"{C}/7/props/title"),
    ("empty required label", [(f"{FORM}/children/0/props/label", "")], f"{FORM}/children/0/props/label"),
    ("input bound to a number", [(f"{FORM}/children/0/props/bind", "count")], f"{FORM}/children/0/props/bind"),
    ("input bound to nothing", [(f"{FORM}/children/0/props/bind", "ghost")], f"{FORM}/children/0/props/bind"),
    ("number input bound to a string", [(f"{FORM}/children/1/props/bind", "name")], f"{FORM}/children/1/props/bind"),
    ("control narrows the max", [(f"{FORM}/children/1/props/max", 20)], f"{FORM}/children/1/props/max"),
    ("control repeats a different min", [(f"{FORM}/children/1/props/min", 1)], f"{FORM}/children/1/props/min"),
    ("control adds a step the state lacks", [(f"{FORM}/children/1/props/bind", "count"), (f"{FORM}/children/1/props/min", DEL), (f"{FORM}/children/1/props/step", 1)], f"{FORM}/children/1/props/step"),
    ("slider without state bounds", [(f"{FORM}/children/4/props/bind", "count")], f"{FORM}/children/4/props/bind"),
    ("slider with min equal max", [("/state/amount/min", 10), ("/state/amount/max", 10), (f"{FORM}/children/1/props/min", DEL)], f"{FORM}/children/4/props/bind"),
    ("select bound to a boolean", [(f"{FORM}/children/2/props/bind", "agree")], f"{FORM}/children/2/props/bind"),
    ("select without options", [(f"{FORM}/children/2/props/options", [])], f"{FORM}/children/2/props/options"),
    ("select 101 options", [(f"{FORM}/children/2/props/options", [{"label": "x", "value": f"v{i}"} for i in range(101)])], f"{FORM}/children/2/props/options"),
    ("select duplicate option value", [(f"{FORM}/children/2/props/options/1/value", "basic")], f"{FORM}/children/2/props/options/1/value"),
    ("select initial not an option", [("/state/plan/initial", "gold")], f"{FORM}/children/2/props/options"),
    ("select option longer than maxLength", [("/state/plan/maxLength", 5), (f"{FORM}/children/2/props/options/1/value", "premium")], f"{FORM}/children/2/props/options/1/value"),
    ("two selects with different domains", [(f"{FORM}/children/-", {"id": "plan2", "type": "Select", "props": {"label": "Plan", "bind": "plan", "options": [{"label": "B", "value": "basic"}]}})], f"{FORM}/children/5/props/options"),
    ("set outside the select domain", [(f"{ROW}/children/1/props/action/value", "gold")], f"{ROW}/children/1/props/action/value"),
    ("checkbox bound to a string", [(f"{FORM}/children/3/props/bind", "name")], f"{FORM}/children/3/props/bind"),
    ("button variant unknown", [(f"{ROW}/children/0/props/variant", "danger")], f"{ROW}/children/0/props/variant"),
    ("button action unknown type", [(f"{ROW}/children/0/props/action", {"type": "navigate"})], f"{ROW}/children/0/props/action/type"),
    ("reset with extra key", [(f"{ROW}/children/0/props/action/url", "x")], f"{ROW}/children/0/props/action"),
    ("set of an undeclared key", [(f"{ROW}/children/1/props/action/key", "ghost")], f"{ROW}/children/1/props/action/key"),
    ("set of a wrong type", [(f"{ROW}/children/1/props/action/value", 5)], f"{ROW}/children/1/props/action/value"),
    ("set value above max at default", [(f"{ROW}/children/2/props/action/value/expr/args/1", 500)], f"{ROW}/children/2/props/action/value"),
    ("set value off the step grid at default", [(f"{ROW}/children/2/props/action/value/expr/args/1", 0.25)], f"{ROW}/children/2/props/action/value"),
    ("display value fails at default", [(f"{C}/1/props/text", {"expr": {"op": "div", "args": [1, 0]}})], f"{C}/1/props/text"),
    ("loading with a bad label", [(f"{C}/8/props/label", 5)], f"{C}/8/props/label"),
]


def _deep_expression(depth: int) -> object:
    expr: object = 1
    for _ in range(depth):
        expr = {"op": "add", "args": [expr, 1]}
    return expr


def _apply(edits: list) -> dict:
    document = base_document()
    for pointer, value in edits:
        if value is DEL:
            edit(document, pointer, op="delete")
        elif pointer == "/derived/x" and value is None:
            edit(document, pointer, _deep_expression(40))
        else:
            edit(document, pointer, value)
    return document


def test_the_base_document_is_valid():
    assert parse_document(base_document())["id"] == "base-doc"


@pytest.mark.parametrize("edits,path", [pytest.param(e, p, id=name) for name, e, p in CASES])
def test_rejects_with_the_issue_at_the_exact_path(edits, path):
    with pytest.raises(UISchemaError) as caught:
        parse_document(_apply(edits))
    paths = [issue.path for issue in caught.value.issues]
    assert path in paths, paths


def test_unknown_properties_never_echo_the_key_or_value():
    document = base_document()
    document["root"]["props"]["secretKeyName"] = "secretValue"
    with pytest.raises(UISchemaError) as caught:
        parse_document(document)
    issue = caught.value.issues[0]
    assert issue.path == "/root/props" and issue.message == UNKNOWN_PROPERTY
    assert "secret" not in str(caught.value)


def test_invalid_state_keys_are_reported_without_echo():
    document = base_document()
    document["state"]["ev il/key"] = {"type": "boolean", "initial": True}
    with pytest.raises(UISchemaError) as caught:
        parse_document(document)
    assert all("ev il" not in issue.path + issue.message for issue in caught.value.issues)
