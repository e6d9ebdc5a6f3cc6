"""Every example document, a 21-component fixture and the local state rules, in a real browser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core import evaluate_derived, initial_state, parse_document, resolve_document_value
from core.json._number import js_number_string
from tests.browser.conftest import shot
from tests.browser.documents import ALL_COMPONENTS, BROKEN_DERIVED

pytestmark = pytest.mark.browser

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PLAIN = ["compound-interest", "product-comparison", "form-controls", "actions-file-reader", "actions-file-writer",
         "agent-callback", "stream-initial"]


def example(name: str) -> dict[str, Any]:
    """An example document, checked by core first as the host does."""
    document = json.loads((EXAMPLES / f"{name}.json").read_text())
    parse_document(document)
    return document


def show(page: Any, *documents: dict[str, Any], **options: Any) -> None:
    page.evaluate("([docs, options]) => window.harness.documents(docs, options)", [list(documents), options])


def nodes(document: dict[str, Any]) -> list[dict[str, Any]]:
    out, stack = [], [document["root"]]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.get("children", []))
    return out


@pytest.mark.parametrize("name", PLAIN)
def test_every_example_renders_every_node_with_its_text(page: Any, name: str) -> None:
    document = example(name)
    show(page, document)
    assert page.locator("article.document header h2").inner_text() == document["title"]
    for node in nodes(document):
        element = page.locator(f'[data-node="{node["id"]}"]').first
        assert element.get_attribute("data-type") == node["type"]
        props = node["props"]
        for key in ("label", "title", "submitLabel"):
            if isinstance(props.get(key), str) and node["type"] not in ("Card",):
                assert props[key] in element.inner_text(), (node["id"], key)
    assert page.locator(".node-error").count() == 0
    shot(page, f"example-{name}")


def test_all_21_components_render_with_their_props(page: Any) -> None:
    parse_document(ALL_COMPONENTS)
    show(page, ALL_COMPONENTS)
    types = page.eval_on_selector_all("[data-type]", "els => [...new Set(els.map(e => e.dataset.type))].sort()")
    assert len(types) == 21
    text = page.locator("article.document").inner_text()
    for expected in ("Plain text 42", "A heading", "bold", "Neutral badge", "Warning badge", "Name", "Amount",
                     "Colour", "Volume", "Agree", "Save draft", "Send", "Working on it", "Something failed",
                     "Total", "€1,234.50", "12.50%", "1,234.568"):
        assert expected in text, expected
    assert page.locator("h1.heading, h2.heading, h3.heading").first.evaluate("e => e.tagName") == "H3"
    assert page.locator("table thead th").all_inner_texts()[:2] == ["Item", "Price"]
    assert page.locator(".chart svg rect.bar").count() == 3
    assert page.locator(".chart svg rect.bar.negative").count() == 1
    assert page.locator(".chart svg polyline.line").count() == 1
    assert page.locator("progress").first.evaluate("e => [e.value, e.max]") == [40, 100]
    page.get_by_role("button", name="Overshoot").click()
    assert page.locator("progress").first.evaluate("e => [e.value, e.max]") == [100, 100]  # 150 clamped
    assert "150 / 100" in page.locator(".progress").first.inner_text()  # the value itself is untouched
    assert page.locator("input[type=range]").get_attribute("step") == "5"
    assert page.locator("input[type=number]").get_attribute("step") == "any"
    for control in page.locator("input, select").all():
        control_id = control.get_attribute("id")
        assert page.locator(f'label[for="{control_id}"]').count() == 1, control_id
    shot(page, "all-components")


def test_typing_into_a_number_input_updates_the_derived_result_at_once(page: Any) -> None:
    show(page, example("compound-interest"))
    total = page.locator('[data-node="total-result"] output')
    assert total.inner_text() == "$48,382.06"
    page.get_by_label("Starting amount (USD)").fill("30000")
    assert total.inner_text() == "$58,058.47"
    page.get_by_label("Starting amount (USD)").press_sequentially("0", delay=0)  # 300000: one keystroke more
    assert total.inner_text() == "$580,584.73"
    shot(page, "typing-derived")


def test_reset_restores_every_initial_value(page: Any) -> None:
    show(page, example("compound-interest"))
    page.get_by_label("Starting amount (USD)").fill("30000")
    page.get_by_label("Years invested").fill("20")
    page.get_by_role("button", name="Add $1,000").click()
    assert page.get_by_label("Starting amount (USD)").input_value() == "31000"
    page.get_by_role("button", name="Reset inputs").click()
    assert page.get_by_label("Starting amount (USD)").input_value() == "25000"
    assert page.get_by_label("Years invested").input_value() == "15"
    assert page.locator('[data-node="total-result"] output').inner_text() == "$48,382.06"


def test_a_rejected_value_keeps_the_state_and_what_was_typed(page: Any) -> None:
    show(page, example("compound-interest"))
    field = page.get_by_label("Starting amount (USD)")
    field.fill("30050")  # off the step grid of 100
    assert field.input_value() == "30050"
    assert "step grid" in page.locator('[data-node="principal-input"] .field-error').inner_text()
    assert page.locator('[data-node="total-result"] output').inner_text() == "$48,382.06"


def test_a_refused_text_is_gone_for_good_once_the_state_changes(page: Any) -> None:
    show(page, example("compound-interest"))
    field = page.get_by_label("Starting amount (USD)")
    error = page.locator('[data-node="principal-input"] .field-error')
    field.fill("30050")  # refused: off the grid
    page.get_by_role("button", name="Reset inputs").click()  # the state's values do not change, but it was reset
    assert field.input_value() == "25000" and error.count() == 0
    field.fill("30050")
    page.get_by_label("Years invested").fill("20")  # another control changes the state
    assert field.input_value() == "25000" and error.count() == 0
    page.get_by_label("Years invested").fill("15")  # and back: the refused text does not come back
    assert field.input_value() == "25000" and error.count() == 0


def test_a_failing_value_shows_an_error_box_for_its_node_only_and_recovers(page: Any) -> None:
    show(page, BROKEN_DERIVED)
    assert page.locator(".node-error").count() == 0
    page.get_by_label("Divisor").fill("0")
    assert page.locator(".node-error").count() == 1
    assert page.locator('.node-error[data-node="ratio"]').inner_text().endswith("division by zero")
    assert page.locator('[data-node="other"]').inner_text() == "Still here: 10"
    shot(page, "node-error")
    page.get_by_label("Divisor").fill("4")
    assert page.locator(".node-error").count() == 0
    assert page.locator('[data-node="ratio"] output').inner_text() == "2.5"


POWERS: dict[str, Any] = {
    "version": "1.0", "id": "powers", "mode": "interactive_ui", "title": "Powers to the last bit",
    "state": {"rate": {"type": "number", "initial": 5, "min": 0, "max": 15, "step": 0.25}},
    "derived": {
        "factor": {"op": "pow", "args": [{"op": "add", "args": [1, {"op": "div", "args": [{"state": "rate"}, 100]}]}, 10]},
        "root": {"op": "pow", "args": [2.5, {"op": "div", "args": [1, 3]}]},
    },
    "root": {"id": "root", "type": "Column", "props": {}, "children": [
        {"id": "factor", "type": "Text", "props": {"text": {"expr": {"derived": "factor"}}}},
        {"id": "cube-root", "type": "Text", "props": {"text": {"expr": {"derived": "root"}}}},
        {"id": "ten", "type": "Text", "props": {"text": {"expr": {"op": "pow", "args": [10, 2.5]}}}},
    ]},
}


def test_pow_shows_cores_value_to_the_last_digit_whatever_the_browsers_libm(page: Any) -> None:
    # Debian's Chromium calls the C library's pow for `**` (1.628894626777442 here); the Client
    # carries V8's fdlibm pow (src/pow.js), as core does (core/json/_pow.py)
    document = parse_document(POWERS)
    state = initial_state(document)
    derived = evaluate_derived(document, state)
    ten = resolve_document_value(document, state, POWERS["root"]["children"][2]["props"]["text"])
    expected = {"factor": js_number_string(derived["factor"]), "cube-root": js_number_string(derived["root"]),
                "ten": js_number_string(ten)}
    assert expected["factor"] == "1.6288946267774422"  # core's own value, not only the page's
    show(page, POWERS)
    shown = {key: page.locator(f'[data-node="{key}"]').inner_text() for key in expected}
    browser = page.evaluate("[(1 + 5 / 100) ** 10, 2.5 ** (1 / 3), 10 ** 2.5].map(String)")
    assert shown == expected, f"the page shows {shown}, core {expected} (this browser's ** gives {browser})"
    assert page.locator(".node-error").count() == 0
