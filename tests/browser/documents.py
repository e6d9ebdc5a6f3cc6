"""Documents the browser tests render: every component once, a failing derived value, hostile text."""

from __future__ import annotations

from typing import Any

ALL_COMPONENTS: dict[str, Any] = {
    "version": "1.1", "id": "all-components", "mode": "interactive_ui", "title": "Every component",
    "state": {
        "name": {"type": "string", "initial": "Ada", "maxLength": 40},
        "amount": {"type": "number", "initial": 1234.5, "min": 0, "max": 100000},
        "colour": {"type": "string", "initial": "red", "maxLength": 10},
        "volume": {"type": "number", "initial": 50, "min": 0, "max": 100, "step": 5},
        "agree": {"type": "boolean", "initial": False},
        "done": {"type": "number", "initial": 40, "min": 0, "max": 1000},
    },
    "derived": {"label": {"op": "concat", "args": ["Plain text ", 42]}},
    "actions": {"save": {"kind": "tool", "capabilityId": "read_file", "arguments": {"file_path": {"expr": {"state": "name"}}}}},
    "root": {"id": "root", "type": "Column", "props": {"gap": "md"}, "children": [
        {"id": "text", "type": "Text", "props": {"text": {"expr": {"derived": "label"}}}},
        {"id": "heading", "type": "Heading", "props": {"text": "A heading", "level": 3}},
        {"id": "markdown", "type": "Markdown", "props": {"text": "Some **bold** and *em* and ~~gone~~ and `code`.\n\n> quoted\n\n1. one\n2. two\n\n---\n\n```\nblock\n```"}},
        {"id": "row", "type": "Row", "props": {"gap": "sm"}, "children": [
            {"id": "badge-1", "type": "Badge", "props": {"text": "Neutral badge"}},
            {"id": "badge-2", "type": "Badge", "props": {"text": "Warning badge", "tone": "warning"}},
        ]},
        {"id": "grid", "type": "Grid", "props": {"columns": 3, "gap": "lg"}, "children": [
            {"id": "result-currency", "type": "Result", "props": {"label": "Total", "value": {"expr": {"state": "amount"}}, "format": {"style": "currency", "currency": "EUR", "digits": 2}}},
            {"id": "result-percent", "type": "Result", "props": {"label": "Share", "value": 0.125, "format": {"style": "percent"}}},
            {"id": "result-decimal", "type": "Result", "props": {"value": 1234.5678, "format": {"style": "decimal", "digits": 3}}},
        ]},
        {"id": "card", "type": "Card", "props": {"title": "A card", "gap": "sm"}, "children": [
            {"id": "table", "type": "Table", "props": {"columns": [{"key": "item", "label": "Item"}, {"key": "price", "label": "Price"}],
                                                      "rows": [{"item": "Tea", "price": 3.5}, {"item": "Cake", "price": None}]}},
            {"id": "progress", "type": "Progress", "props": {"value": {"expr": {"state": "done"}}, "max": 100, "label": "Done so far"}},
        ]},
        {"id": "bars", "type": "Chart", "props": {"kind": "bar", "label": "Bars", "data": [
            {"id": "a", "label": "A", "value": 3}, {"id": "b", "label": "B", "value": -2}, {"id": "c", "label": "C", "value": {"expr": {"state": "volume"}}}]}},
        {"id": "line", "type": "Chart", "props": {"kind": "line", "data": [
            {"id": "a", "label": "A", "value": 1}, {"id": "b", "label": "B", "value": 4}, {"id": "c", "label": "C", "value": 2}]}},
        {"id": "form", "type": "Form", "props": {"submitLabel": "Send", "gap": "sm", "action": {"type": "set", "key": "agree", "value": True}}, "children": [
            {"id": "name-input", "type": "Input", "props": {"label": "Name", "bind": "name", "placeholder": "Your name"}},
            {"id": "amount-input", "type": "NumberInput", "props": {"label": "Amount", "bind": "amount", "min": 0, "max": 100000}},
            {"id": "colour-select", "type": "Select", "props": {"label": "Colour", "bind": "colour", "options": [
                {"label": "Red", "value": "red"}, {"label": "Blue", "value": "blue"}]}},
            {"id": "volume-slider", "type": "Slider", "props": {"label": "Volume", "bind": "volume", "step": 5}},
            {"id": "agree-box", "type": "Checkbox", "props": {"label": "Agree", "bind": "agree"}},
        ]},
        {"id": "save", "type": "Button", "props": {"label": "Save draft", "variant": "primary", "action": {"type": "invoke", "actionId": "save"}}},
        {"id": "overshoot", "type": "Button", "props": {"label": "Overshoot", "action": {"type": "set", "key": "done", "value": 150}}},
        {"id": "loading", "type": "Loading", "props": {"label": "Working on it"}},
        {"id": "error", "type": "Error", "props": {"message": "Something failed"}},
    ]},
}

BROKEN_DERIVED: dict[str, Any] = {
    "version": "1.0", "id": "broken", "mode": "interactive_ui", "title": "A value that can fail",
    "state": {"divisor": {"type": "number", "initial": 2, "min": 0, "max": 10}},
    "derived": {"ratio": {"op": "div", "args": [10, {"state": "divisor"}]}},
    "root": {"id": "root", "type": "Column", "props": {}, "children": [
        {"id": "divisor", "type": "NumberInput", "props": {"label": "Divisor", "bind": "divisor"}},
        {"id": "ratio", "type": "Result", "props": {"label": "Ten divided", "value": {"expr": {"derived": "ratio"}}}},
        {"id": "other", "type": "Text", "props": {"text": {"expr": {"op": "concat", "args": ["Still here: ", 10]}}}},
    ]},
}

HOSTILE_TEXT = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'

HOSTILE: dict[str, Any] = {
    "version": "1.0", "id": "hostile", "mode": "interactive_ui", "title": "<b>Title</b><script>window.__pwned = 3</script>",
    "state": {"text": {"type": "string", "initial": HOSTILE_TEXT, "maxLength": 4096},
              "big": {"type": "number", "initial": 1e15, "min": -1e15, "max": 1e15}},
    "derived": {},
    "root": {"id": "root", "type": "Card", "props": {"title": "javascript:alert(1)"}, "children": [
        {"id": "t1", "type": "Text", "props": {"text": HOSTILE_TEXT}},
        {"id": "t2", "type": "Text", "props": {"text": "javascript:alert(document.cookie)"}},
        {"id": "t3", "type": "Text", "props": {"text": {"expr": {"state": "text"}}}},
        {"id": "h1", "type": "Heading", "props": {"text": "<h1 onclick=alert(1)>big</h1>"}},
        {"id": "b1", "type": "Badge", "props": {"text": "<style>*{display:none}</style>", "tone": "danger"}},
        {"id": "r1", "type": "Result", "props": {"label": "<i>huge</i>", "value": {"expr": {"state": "big"}}, "format": {"style": "currency", "currency": "USD", "digits": 6}}},
        {"id": "r2", "type": "Result", "props": {"value": -1e15}},
        {"id": "md", "type": "Markdown", "props": {"text": (
            "[click me](javascript:alert(1)) and ![img](http://127.0.0.1:1/x.png) and <a href=\"javascript:x\">raw link</a>\n\n"
            "<script>window.__pwned = 4</script>\n\n<iframe src=\"http://127.0.0.1:1/\"></iframe>\n\n"
            "<img src=x onerror=\"window.__pwned = 5\">\n\nplain <b>bold tag</b> text <https://example.invalid/autolink>\n\n"
            "[ref link][r]\n\n[r]: http://127.0.0.1:1/ref")}},
        {"id": "in", "type": "Input", "props": {"label": "<label>Text</label>", "bind": "text", "placeholder": "\"><script>x</script>"}},
        {"id": "tbl", "type": "Table", "props": {"columns": [{"key": "c", "label": "<th>col</th>"}], "rows": [{"c": HOSTILE_TEXT}, {"c": 1e15}]}},
        {"id": "ch", "type": "Chart", "props": {"kind": "bar", "label": "</svg><script>x</script>", "data": [
            {"id": "p", "label": "<script>", "value": 1e15}, {"id": "q", "label": "q", "value": -1e15}]}},
    ]},
}
