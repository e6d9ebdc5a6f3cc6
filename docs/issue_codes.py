"""core's issue codes: what each means, and which ones core's sources emit (read from their syntax tree).

core builds its codes as string literals where each rule reports (`Issue(path, message, code)`, a checker's
`add(place, message, code)`, the answer tree's `_child_issue(..., code)`), so the generator reads them there;
a test fails when core emits a code this table does not explain, or when the table keeps a code core dropped.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import fields
from pathlib import Path

import core
from core.errors import Issue

from .markdown import code, page, table
from .source import ROOT

CORE = ROOT / "core"

# The meaning of every code core may put on an `Issue`, grouped as the reader meets them.
ISSUE_CODES: dict[str, str] = {
    # any JSON value (documents, remote shapes, answer blocks)
    "type": "wrong JSON type (an object, string, number, array, ... was expected)",
    "enum": "not one of the allowed values (version, mode, action type, ...)",
    "range": "a number outside its bounds (min/max, step, digits, Progress value)",
    "length": "a string or array length outside its bounds (UTF-16 code units)",
    "format": "a string that does not match its pattern (identifiers, hex digests, printable ASCII)",
    "required": "a required property is missing",
    "unknown_property": "a property is not allowed (never echoed)",
    "too_many": "a count budget is exceeded",
    "too_deep": "a nesting budget is exceeded",
    "too_large": "a byte budget is exceeded",
    "too_few": "fewer items than required",
    "duplicate": "a repeated option value, id or entry",
    "not_allowed": "a property this variant does not take",
    "unsafe_json": "not plain JSON (non-string keys, lone surrogates, non-finite or oversized numbers, nesting, "
                   "a subclass of a JSON type)",
    "invalid": "an error raised with a plain message and no finer code",
    # documents and expressions
    "duplicate_id": "a node id used twice",
    "unknown_reference": "a state field, derived value or action that is not declared",
    "unknown_component": "a component type that does not exist",
    "unknown_operator": "an expression operator that does not exist",
    "arity": "wrong number of operands",
    "expression_type": "an expression whose type does not fit",
    "field_type": "a bind to a field of another kind",
    "field_mismatch": "props that disagree with the bound field",
    "initial_value": "an initial value its own field rejects",
    "structured_ui_input": "inputs in a structured_ui document",
    "nested_form": "a Form in a Form",
    "select_domain": "Selects of one field with different options",
    "currency": "currency style rules (a currency exactly with the currency style)",
    "row_keys": "Table rows with other keys",
    "empty_prompt": "an empty agent prompt",
    "version": "`invoke` in a 1.0 document",
    "derived_cycle": "derived values in a cycle",
    "derived_depth": "derived values too deep through each other",
    "default_evaluation": "a value failing at the initial state",
    "step_too_small": "an uncountable step grid",
    "undeclared_result_key": "a resultMap key that is no field",
    "expression_budget": "too many expression nodes",
    "fallback": "internal: a patch the incremental check hands to the full check (never in a reported issue)",
    # the stream protocol
    "frozen": "a frozen header or node type changed",
    "frozen_domain": "a field's Select options changed",
    "sequence": "envelope order (seq, revision, baseRevision)",
    "binding": "wrong call or UI for this stream",
    "conflict": "a seq already accepted with another digest",
    "ended": "the generation has ended",
    "budget": "frame or byte budget of the generation",
    "not_found": "unknown node",
    "not_layout": "parent not a layout",
    "root": "root removal",
    "restore": ("a stored checkpoint, its restore facts or its retired types, that `restore_ui_stream` (or "
                "`restore_snapshot`, `restore_envelope`, `resume_ui_stream`'s `retired_types`) cannot take back; "
                "an envelope given with its snapshot to `restore_envelope`"),
    # answer-ui@1 blocks, final answers and reports
    "unsupported_version": "a block of another answer-ui version",
    "children_not_allowed": "children on a leaf component",
    "active_content": "a string holding a URL (`x://`), a `javascript:`, `vbscript:` or `data:` URI, or `<script`",
    "non_finite": "a number that is not finite",
    "misaligned": "a chart series without exactly one value per category",
    "row_length": "a table row without exactly one cell per column",
    "missing_reference": "an element id that names no element",
    "cycle": "a child reference that closes a cycle",
    "duplicate_reference": "an element reached twice",
    "orphan": "an element the root does not reach",
    "marker_mismatch": "`ui_block_ids` are not the answer's markers in order, each once",
    "missing_markers": "blocks listed but no live `[[ui:block_id]]` marker in the answer",
    "unpublished_block": "a listed block id names no block published in the same turn",
    "not_final": "a listed block was not published with `phase: \"final\"`",
    "process_block": "a report block that is not final",
    "unknown_evidence": "a report block cites an evidence id the report does not hold",
    # answer-view-state@1 nodes (the issues of `invalid_view_state`)
    "unknown_node": "a node id that is not a viewable element of the block",
    "unknown_column": "a sort column that is not shown exactly once",
    "selection": "a table selection other than `[]` (rows are never selectable)",
    "unknown_series": "hidden series that are not distinct series names of the chart",
    "detail": "`detail_open` without a selected point",
    "unknown_category": "a range or category that is not a label shown exactly once / a category of the items",
    "unknown_field": "drafts naming a field the form does not have",
    "draft": "a draft that does not fit its field's type or options",
    "unknown_item": "expanded ids that are not distinct item ids of the evidence",
}

# The meaning of every `.code` core's runtime helpers put on an error they raise without issues, by
# class (`UISchemaError`, `UIStreamError` and `UIViewStateError` carry issues, whose codes are above).
ERROR_CODES: dict[str, dict[str, str]] = {
    "UIStateError": {
        "state": "the class's code: an error raised without a finer one",
        "unknown_field": "a field the document does not declare",
        "invalid_value": "a value its field refuses (type, range, step, options, length)",
        "fields": "a state without exactly the declared fields",
        "too_large": "a state over 262,144 JSON bytes",
        "unsafe_json": "a state that is not plain JSON",
    },
    "UIExpressionError": {
        "expression": "the class's code: a failure at run time (division by zero, overflow, a wrong type, ...)",
        "unknown_derived": "a derived value handed in is not declared (never named)",
        "invalid_derived": "a derived value handed in is not a scalar",
        "unsafe_json": "a state or value handed in that is not plain JSON",
        "bad_digits": "`round`/`toFixed` digits that are not an integer in range",
        "not_a_number": "`toFixed` of something that is not a number",
        "not_finite": "`pow` of, or giving, a number that is not finite",
        "out_of_range": "`pow` giving a number beyond 1e15 in magnitude",
    },
    "UIActionError": {
        "action": "the class's code: an action definition, resolution or result mapping error",
        "unknown_action": "a host action the document does not declare",
        "undeclared": "a local action the document does not declare",
        "not_local": "an action other than `reset` or `set` given to the local dispatcher",
        "unsafe_json": "an action that is not plain JSON",
        "invalid_state": "the state the action is resolved against is not valid",
        "arguments": "resolved arguments that are not scalars, too many or too large",
        "prompt": "an agent prompt that resolves to an empty or too long text",
        "agent_result": "a result mapped for an agent action (which has no resultMap)",
        "result": "an action result that is not a valid `UIActionResult`",
        "missing_result_field": "a result without a field its resultMap names",
        "result_value": "a mapped result value its state field refuses (the state is unchanged)",
    },
}

_CODE_POSITION = {"Issue": 2, "add": 2, "_child_issue": 3}  # the positional argument holding the code
_DEFAULT_CODE = next(field.default for field in fields(Issue) if field.name == "code")


def emitted_issue_codes() -> dict[str, set[str]]:
    """Every literal issue code in core's sources, with the core packages that emit it."""
    trees = {path: ast.parse(path.read_text("utf-8")) for path in sorted(CORE.rglob("*.py"))}
    positions = {**_code_parameters(trees.values()), **_CODE_POSITION}
    found: dict[str, set[str]] = {}
    for path, tree in trees.items():
        for literal in _codes_in(tree, positions):
            found.setdefault(literal, set()).add(_package(path))
    return found


def _code_parameters(trees: Iterable[ast.AST]) -> dict[str, int]:
    """Helpers that take an issue code as a parameter named `code`: name -> its position
    (a rule kit's `_member(pool, message, code)` passes the code on to the issue it makes)."""
    positions: dict[str, int] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                names = [arg.arg for arg in node.args.args]
                if "code" in names and node.name not in ("__init__",):
                    positions[node.name] = names.index("code")
    return positions


def _codes_in(tree: ast.AST, positions: dict[str, int]) -> Iterator[str]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        position = positions.get(name)
        if position is None or any(isinstance(arg, ast.Starred) for arg in node.args):
            continue
        argument = next((k.value for k in node.keywords if k.arg == "code"), None)
        if argument is None and len(node.args) > position:
            argument = node.args[position]
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            yield argument.value
        elif argument is None and name == "Issue" and len(node.args) == 2:
            yield _DEFAULT_CODE


def emitted_error_codes() -> dict[str, set[str]]:
    """Every literal `code=` of a `UIStateError`, `UIExpressionError` or `UIActionError` core raises,
    by class, each class's own code included."""
    found: dict[str, set[str]] = {name: {_class_code(name)} for name in ERROR_CODES}
    for path in sorted(CORE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in found):
                continue
            argument = next((k.value for k in node.keywords if k.arg == "code"), None)
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                found[node.func.id].add(argument.value)
    return found


def _class_code(name: str) -> str:
    code_of_class: str = getattr(core, name).code
    return code_of_class


def _package(path: Path) -> str:
    parts = path.relative_to(CORE).parts
    return parts[0] if len(parts) > 1 else path.stem


def issue_codes_page() -> str:
    """The table of core's issue codes: code, meaning, and the core packages that emit it."""
    emitted = emitted_issue_codes()
    rows = [(code(name), meaning, ", ".join(code(p) for p in sorted(emitted.get(name, ()))) or "—")
            for name, meaning in ISSUE_CODES.items()]
    intro = ("Every `Issue` of a `UISchemaError` or `UIStreamError` carries a stable `code` beside its JSON "
             "Pointer `path` and its `message` (see [the core library](../core/index.md)). The same codes are "
             "the `issues` of the runtime's `invalid_*` error replies ([error codes](error-codes.md)).")
    errors = [(code(name), code(each), meaning) for name, meanings in ERROR_CODES.items()
              for each, meaning in meanings.items()]
    helpers = ("## The codes of errors without issues\n\nThe runtime helpers (`update_state`, `evaluate_expression`, "
               "`dispatch_local_action`, `resolve_ui_action`, `apply_action_result`, ...) raise these classes with a "
               "stable `.code` and a message in our own words, and no `issues`:\n\n"
               + table(("class", "code", "meaning"), errors))
    return page("Issue codes", "docs/issue_codes.py and core's sources", intro,
                table(("code", "meaning", "emitted in `core/`"), rows), helpers)
