"""A base document that uses every component, and a small JSON Pointer editor for tests."""

from __future__ import annotations

import copy
from typing import Any


def base_document() -> dict[str, Any]:
    """A valid v1.1 interactive document touching every component and rule."""
    return copy.deepcopy(_BASE)


def edit(document: dict, pointer: str, value: Any = None, *, op: str = "set") -> dict:
    """Set, delete or insert (`op`) at an RFC 6901 pointer; returns the document."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    target = document
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target[part]
    last = parts[-1]
    if isinstance(target, list):
        index = len(target) if last == "-" else int(last)
        if op == "insert" or last == "-":
            target.insert(index, value)
        elif op == "delete":
            del target[index]
        else:
            target[index] = value
    elif op == "delete":
        del target[last]
    else:
        target[last] = value
    return document


_BASE: dict[str, Any] = {
    "version": "1.1",
    "id": "base-doc",
    "mode": "interactive_ui",
    "title": "Every component",
    "state": {
        "amount": {"type": "number", "initial": 10, "min": 0, "max": 100, "step": 0.5},
        "count": {"type": "number", "initial": 3},
        "name": {"type": "string", "initial": "Ada", "maxLength": 32},
        "plan": {"type": "string", "initial": "basic"},
        "agree": {"type": "boolean", "initial": False},
    },
    "derived": {
        "double": {"op": "mul", "args": [{"state": "amount"}, 2]},
        "label": {"op": "concat", "args": ["Total: ", {"derived": "double"}]},
        "big": {"op": "gt", "args": [{"derived": "double"}, 50]},
    },
    "actions": {
        "save": {"kind": "tool", "capabilityId": "save_note",
                 "arguments": {"text": {"expr": {"state": "name"}}, "limit": 5},
                 "resultMap": {"count": "lines"}},
        "ask": {"kind": "agent", "prompt": {"expr": {"op": "concat", "args": ["Explain ", {"state": "plan"}]}}},
    },
    "root": {
        "id": "root", "type": "Column", "props": {"gap": "md"},
        "children": [
            {"id": "heading", "type": "Heading", "props": {"text": "Hello", "level": 1}},
            {"id": "text", "type": "Text", "props": {"text": {"expr": {"derived": "label"}}}},
            {"id": "md", "type": "Markdown", "props": {"text": "**bold**"}},
            {"id": "badge", "type": "Badge", "props": {"text": "new", "tone": "success"}},
            {"id": "grid", "type": "Grid", "props": {"columns": 2}, "children": [
                {"id": "progress", "type": "Progress", "props": {"value": {"expr": {"state": "amount"}}, "max": 100}},
                {"id": "result", "type": "Result", "props": {
                    "label": "Double", "value": {"expr": {"derived": "double"}},
                    "format": {"style": "currency", "currency": "EUR", "digits": 2}}},
            ]},
            {"id": "table", "type": "Table", "props": {
                "columns": [{"key": "a", "label": "A"}, {"key": "b", "label": "B"}],
                "rows": [{"a": 1, "b": "x"}, {"a": None, "b": True}]}},
            {"id": "chart", "type": "Chart", "props": {"kind": "bar", "data": [
                {"id": "p1", "label": "One", "value": 1},
                {"id": "p2", "label": "Two", "value": {"expr": {"derived": "double"}}}]}},
            {"id": "card", "type": "Card", "props": {"title": "Inputs"}, "children": [
                {"id": "form", "type": "Form", "props": {"submitLabel": "Save", "action": {"type": "invoke", "actionId": "save"}},
                 "children": [
                    {"id": "name-input", "type": "Input", "props": {"label": "Name", "bind": "name", "placeholder": "Your name"}},
                    {"id": "amount-input", "type": "NumberInput", "props": {"label": "Amount", "bind": "amount", "min": 0}},
                    {"id": "plan-select", "type": "Select", "props": {"label": "Plan", "bind": "plan", "options": [
                        {"label": "Basic", "value": "basic"}, {"label": "Pro", "value": "pro"}]}},
                    {"id": "agree-box", "type": "Checkbox", "props": {"label": "I agree", "bind": "agree"}},
                    {"id": "amount-slider", "type": "Slider", "props": {"label": "Amount", "bind": "amount"}},
                 ]},
                {"id": "row", "type": "Row", "props": {}, "children": [
                    {"id": "reset", "type": "Button", "props": {"label": "Reset", "action": {"type": "reset"}}},
                    {"id": "pro", "type": "Button", "props": {"label": "Pro", "variant": "primary",
                                                              "action": {"type": "set", "key": "plan", "value": "pro"}}},
                    {"id": "more", "type": "Button", "props": {"label": "More", "action": {
                        "type": "set", "key": "amount", "value": {"expr": {"op": "add", "args": [{"state": "amount"}, 0.5]}}}}},
                    {"id": "ask-button", "type": "Button", "props": {"label": "Ask", "action": {"type": "invoke", "actionId": "ask"}}},
                ]},
            ]},
            {"id": "loading", "type": "Loading", "props": {}},
            {"id": "error", "type": "Error", "props": {"message": {"expr": {"op": "if", "args": [{"derived": "big"}, "too big", ""]}}}},
        ],
    },
}
