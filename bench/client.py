"""`python -m bench client`: the Client's costs in Debian's Chromium, timed in the page.

Four figures, each the min and median of several runs, measured with `performance.now()`
inside the page (printed, never asserted):

- first render of the 200-component document at every limit (bench/documents.py:
  64 fields, 64 derived values, a 500-row table; goal < 100 ms);
- one patch frame (`update` of one node's props) applied to a 200-component stream UI,
  until the DOM shows it (goal < 5 ms);
- one keystroke into a NumberInput on which 64 derived values and 64 Results depend, until
  every Result shows the new value (goal < 8 ms per keystroke);
- one receipt event in a session of 8 stream UIs, each a 500 x 32 Table, until the store has it
  and the page rendered it (goal < 5 ms: the UIs it does not change are not rendered again).

The page is the browser tests' harness (tests/browser/harness.html) served with the gateway's
CSP by a stdlib server on a loopback port.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from core import advance_ui_stream, parse_document, start_ui_stream

from .documents import maximal_document, report_document

ROOT = Path(__file__).resolve().parent.parent
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


class _Files(SimpleHTTPRequestHandler):
    """`/app/static/` -> gateway/web, `/harness/` -> tests/browser, with the CSP header."""

    def translate_path(self, path: str) -> str:
        for prefix, folder in (("/app/static/", ROOT / "gateway" / "web"), ("/harness/", ROOT / "tests" / "browser")):
            if path.startswith(prefix):
                return str(folder / path[len(prefix):].split("?")[0])
        return str(ROOT / "missing")

    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", CSP)
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


def typing_document(derived: int = 64) -> dict[str, Any]:
    """One NumberInput and `derived` derived values (each a few operators over it), each shown by a Result."""
    values = {f"d{i}": {"op": "round", "args": [{"op": "add", "args": [{"op": "mul", "args": [{"state": "x"}, i + 1]},
                                                                        {"op": "div", "args": [{"state": "x"}, 7]}]}, 2]}
              for i in range(derived)}
    results = [{"id": f"r{i}", "type": "Result", "props": {"label": f"Value {i}", "value": {"expr": {"derived": f"d{i}"}},
                                                           "format": {"style": "decimal", "digits": 2}}} for i in range(derived)]
    return {"version": "1.0", "id": "typing", "mode": "interactive_ui", "title": "Typing", "state": {
        "x": {"type": "number", "initial": 1, "min": 0, "max": 1_000_000}}, "derived": values,
        "root": {"id": "root", "type": "Column", "props": {}, "children": [
            {"id": "x-input", "type": "NumberInput", "props": {"label": "X", "bind": "x"}},
            {"id": "grid", "type": "Grid", "props": {"columns": 4}, "children": results}]}}


def plain(value: Any) -> Any:
    """A core object as decoded JSON."""
    import orjson

    return orjson.loads(orjson.dumps(value))


FIRST_RENDER = """doc => {
  const t0 = performance.now();
  window.harness.documents([doc]);
  const t1 = performance.now();
  if (!document.querySelector('[data-node="table"]')) throw new Error('not rendered');
  return t1 - t0;
}"""

PATCH = """async ([frame, expected]) => {
  const t0 = performance.now();
  window.harness.frame(frame);
  await Promise.resolve(); await Promise.resolve();
  const t1 = performance.now();
  const text = document.querySelector('[data-node="note-0"]').textContent;
  if (text !== expected) throw new Error('patch not shown: ' + text);
  return t1 - t0;
}"""

KEYSTROKE = """async (value) => {
  const input = document.getElementById(document.querySelector('[data-node="x-input"] label').htmlFor);
  const t0 = performance.now();
  input.value = String(value);
  input.dispatchEvent(new Event('input', {bubbles: true}));
  await Promise.resolve(); await Promise.resolve();
  const t1 = performance.now();
  const last = document.querySelector('[data-node="r63"] output').textContent;
  const expected = new Intl.NumberFormat(undefined, {minimumFractionDigits: 2, maximumFractionDigits: 2}).format(Number((value * 64 + value / 7).toFixed(2)));
  if (last !== expected) throw new Error('keystroke not shown: ' + last + ' vs ' + expected);
  return t1 - t0;
}"""


RECEIPT = """async (n) => {
  const t0 = performance.now();
  window.harness.receipt({operationId: `op-${n}`, requestId: `r-${n}`, actionId: 'save', status: 'queued',
    parameterHash: 'a'.repeat(64), createdAt: 1, updatedAt: 1,
    documentRef: {sourceCallId: 'call-none', uiId: 'none', generation: 1, revision: 0}});
  await Promise.resolve(); await Promise.resolve();
  const t1 = performance.now();
  if (!window.harness.operations().some((op) => op.operationId === `op-${n}`)) throw new Error('receipt not applied');
  return t1 - t0;
}"""


def table_document(ui: str, rows: int = 500, columns: int = 32) -> dict[str, Any]:
    """One Table of `rows` x `columns` text cells under a Column."""
    keys = [{"key": f"c{i}", "label": f"C{i}"} for i in range(columns)]
    return {"version": "1.1", "id": ui, "mode": "interactive_ui", "title": f"Table {ui}", "state": {}, "derived": {},
            "actions": {}, "root": {"id": "root", "type": "Column", "props": {}, "children": [
                {"id": "table", "type": "Table", "props": {"columns": keys, "rows": [
                    {f"c{i}": f"{r}.{i}" for i in range(columns)} for r in range(rows)]}}]}}


def _figures(name: str, samples: list[float], goal: float) -> None:
    print(f"{name:<48} min {min(samples):7.2f} ms  median {statistics.median(samples):7.2f} ms"
          f"  (goal < {goal:g} ms, {len(samples)} runs)")


def run(page: Any, runs: int) -> None:
    """Time the four scenarios on one page."""
    large = maximal_document()
    parse_document(large)
    _figures("first render, 200 components (maximal document)",
             [page.evaluate(FIRST_RENDER, large) for _ in range(runs)], 100)

    state = start_ui_stream(report_document(200), "call-bench", 1)
    frames = [plain(state.checkpoint)]
    for i in range(runs + 1):
        state = advance_ui_stream(state, {"type": "update", "nodeId": "note-0", "props": {"text": f"Patched {i}"}})
        frames.append(plain(state.checkpoint))
    page.evaluate("() => window.harness.session()")
    page.evaluate("frame => window.harness.frame(frame)", frames[0])
    page.evaluate("frame => window.harness.frame(frame)", frames[1])  # warm-up
    _figures("one patch frame on a 200-component stream UI",
             [page.evaluate(PATCH, [frames[i], f"Patched {i - 1}"]) for i in range(2, len(frames))], 5)

    document = typing_document()
    parse_document(document)
    page.evaluate("doc => window.harness.documents([doc])", document)
    page.evaluate(KEYSTROKE, 2)  # warm-up
    _figures("keystroke with 64 derived values depending on it",
             [page.evaluate(KEYSTROKE, 10 + i) for i in range(runs * 3)], 8)

    page.evaluate("() => window.harness.session()")
    for ui in range(8):
        frame = plain(start_ui_stream(table_document(f"t{ui}"), f"call-{ui}", 1).checkpoint)
        page.evaluate("frame => window.harness.frame(frame)", frame)
    page.evaluate(RECEIPT, 0)  # warm-up
    _figures("receipt event, 8 UIs of a 500 x 32 Table",
             [page.evaluate(RECEIPT, 1 + i) for i in range(runs * 3)], 5)


def main(argv: list[str]) -> int:
    """Serve the harness, open Chromium, print the figures."""
    parser = argparse.ArgumentParser(prog="python -m bench client", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    options = parser.parse_args(argv)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("needs Playwright for Python: pip install -e '.[test]'", file=sys.stderr)
        return 2
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).is_file():
        print("needs Debian's Chromium: apt-get install -y chromium", file=sys.stderr)
        return 2
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Files))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=ARGS)
            page = browser.new_page(viewport={"width": 1000, "height": 900})
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/harness/harness.html")
            page.wait_for_function("window.harness && window.harness.ready")
            run(page, options.runs)
            browser.close()
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
