"""The public surface of `core`: every documented name, and only documented errors escape."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core
from core import (
    UIError,
    apply_action_result,
    assert_valid_state,
    dispatch_local_action,
    evaluate_derived,
    evaluate_expression,
    initial_state,
    parse_document,
    resolve_document_value,
    resolve_ui_action,
    resolve_value,
    restore_state,
    update_state,
)

from .documents import base_document

DOCUMENTED = ["parse_document", "document_json_schema", "assert_safe_json", "initial_state", "update_state", "restore_state", "assert_valid_state", "evaluate_derived", "resolve_value", "resolve_document_value", "evaluate_expression", "dispatch_local_action", "resolve_ui_action", "apply_action_result", "canonical_json_string", "hash_canonical_json", "start_ui_stream", "advance_ui_stream", "accept_checkpoint", "parse_ui_document_ref", "parse_ui_action_reserve_request", "parse_ui_action_query", "parse_ui_action_receipt", "parse_ui_action_receipt_list", "parse_ui_capability_descriptor", "parse_ui_capability_catalog", "parse_ui_action_result", "UISchemaError", "UIStateError", "UIExpressionError", "UIActionError", "UIStreamError", "UI_LIMITS", "UI_PROTOCOL_LIMITS", "parse_answer_block", "parse_final_answer", "answer_parts", "parse_report_ui_blocks", "answer_json_schema", "parse_view_state", "migrate_view_state", "view_state_basis", "view_state_schema_digest", "UIViewStateError", "UI_VIEW_STATE_LIMITS", "COMPILED"]


def test_every_documented_name_is_importable_from_core():
    for name in DOCUMENTED:
        assert getattr(core, name) is not None, name
    assert len(core.UI_LIMITS) == 20 and len(core.UI_PROTOCOL_LIMITS) == 14


def test_the_limits_are_read_only():
    for limits in (core.UI_LIMITS, core.UI_PROTOCOL_LIMITS, core.UI_VIEW_STATE_LIMITS):
        with pytest.raises(TypeError):
            limits["maxComponents"] = 1
        with pytest.raises(TypeError):
            limits.update({"maxComponents": 1})
    assert core.UI_LIMITS["maxComponents"] == 200


def test_compiled_says_whether_core_runs_as_mypyc_extension_modules():
    """`core.COMPILED` agrees with the files the modules were loaded from: every `core` module
    is an extension module in the compiled build (but `_parsed`, docs/decisions.md), none in the pure one."""
    import importlib
    from importlib.machinery import EXTENSION_SUFFIXES

    names = ["core", "core._compiled", "core.json.canonical", "core.stream.lifecycle", "core.document.model"]
    kinds = {name: importlib.import_module(name).__file__.endswith(tuple(EXTENSION_SUFFIXES)) for name in names}
    assert kinds == dict.fromkeys(names, core.COMPILED)
    assert not importlib.import_module("core.document._parsed").__file__.endswith(tuple(EXTENSION_SUFFIXES))
    assert isinstance(core.COMPILED, bool)


def test_core_imports_nothing_from_workers_or_config():
    import pathlib
    for path in pathlib.Path(core.__file__).parent.rglob("*.py"):
        source = path.read_text()
        assert "import workers" not in source and "from workers" not in source, path
        assert "from config" not in source and "import redis" not in source, path


junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["amount", "name", "plan", "type", "key", "value", "expr", "save", "x"]), inner, max_size=4),
    max_leaves=12,
)
DOCUMENT = parse_document(base_document())


@settings(max_examples=300, deadline=None)
@given(junk, junk, junk)
def test_runtime_helpers_raise_only_documented_errors_on_junk(a, b, c):
    calls = [
        lambda: update_state(DOCUMENT, a, b, c),
        lambda: update_state(DOCUMENT, initial_state(DOCUMENT), b, c),
        lambda: restore_state(DOCUMENT, a),
        lambda: assert_valid_state(DOCUMENT, a),
        lambda: evaluate_derived(DOCUMENT, a),
        lambda: resolve_value(a, b, c),
        lambda: resolve_document_value(DOCUMENT, initial_state(DOCUMENT), a),
        lambda: evaluate_expression(a, b, c),
        lambda: dispatch_local_action(DOCUMENT, initial_state(DOCUMENT), a),
        lambda: resolve_ui_action(DOCUMENT, a, b),
        lambda: apply_action_result(DOCUMENT, initial_state(DOCUMENT), "save", a),
        lambda: initial_state(a),
    ]
    for call in calls:
        with contextlib.suppress(UIError):
            call()


def test_restore_state_never_raises_even_for_junk():
    assert restore_state(DOCUMENT, {"amount": float("nan"), "plan": ["x"]}) == initial_state(DOCUMENT)
