"""The Client's marker scan, answer parts and event cursors agree with core (run in Node.js)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from core import answer_parts
from core.answer._markers import Marker, scan
from tests.unit.javascript import NODE, node_json

pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js to run the Client's JavaScript modules")

WEB = Path(__file__).resolve().parents[2] / "gateway" / "web" / "src"
SCRIPT = f"""
const {{ scanMarkers, answerParts }} = await import({json.dumps((WEB / 'answers.js').as_uri())});
const {{ isAfter }} = await import({json.dumps((WEB / 'events.js').as_uri())});
let input = '';
process.stdin.on('data', (chunk) => {{ input += chunk; }});
process.stdin.on('end', () => {{
  const cases = JSON.parse(input);
  const out = {{
    scans: cases.answers.map((a) => scanMarkers(a).map((p) => (typeof p === 'string' ? p : {{ marker: p.marker }}))),
    parts: cases.finals.map(([final, blocks]) => answerParts(final, new Map(Object.entries(blocks)))),
    after: cases.cursors.map(([id, last]) => isAfter(id, last)),
  }};
  process.stdout.write(JSON.stringify(out));
}});
"""

LINES = ["[[ui:a]]", "[[ui:b]]  ", "   [[ui:a]]", "    [[ui:a]]", "\t[[ui:b]]", "> [[ui:a]]", "```", "~~~", "````",
         "```js", "``` `x`", "text", "", "[[ui:__proto__]]", "[[ui:1bad]]", "x [[ui:a]]", "[[ui:a]] x", "[[ui:c]]\r",
         # list items, their fences and indentation, lazy quote lines, closing fences with other blanks
         "- ```", "1. ~~~", "10) ```js", "- 1. ```", "-\t```", "-     ```", "* - ~~~", "  [[ui:a]]", "   ```",
         "  ```\r",
         "    ```", "\t```", "```\u3000", "``` \t", "```\u2028", "```\r\r", "> quoted", "> ```", "> # h", ">", "> - x",
         "# heading", "***", "- - -", "2. item", "-", " \t ", "\u00a0[[ui:a]]", "   - x", "  - ```", "=", "---",
         "> text", "> 2. x", "> -", ">     code", "1. x", "  text", "     [[ui:a]]", ">> - ```", "\t- [[ui:a]]"]


def _answers(count: int) -> list[str]:
    rng = random.Random(23)
    return ["\n".join(rng.choice(LINES) for _ in range(rng.randint(1, 12))) for _ in range(count)]


def _python_scan(answer: str) -> list[Any]:
    return [{"marker": p.block_id} if isinstance(p, Marker) else p for p in scan(answer)]


def _block(block_id: str, phase: str | None) -> dict[str, Any]:
    block: dict[str, Any] = {"version": "answer-ui@1", "block_id": block_id, "fallback_text": "f",
                             "spec": {"root": "x", "elements": {"x": {"type": "Text", "props": {"text": "t"}}}}}
    if phase:
        block["phase"] = phase
    return block


def test_marker_scan_and_answer_parts_match_core() -> None:
    answers = _answers(2000)
    blocks = {"a": _block("a", "final"), "b": _block("b", "process"), "c": _block("c", None)}
    finals = [[{"answer": answer, "ui_block_ids": ids}, blocks] for answer in answers[:200]
              for ids in (["a", "b", "c"], ["a"])]
    cases = {"answers": answers, "finals": finals, "cursors": []}
    result = node_json(f"(async () => {{ {SCRIPT} }})()", json.dumps(cases))
    assert result["scans"] == [_python_scan(answer) for answer in answers]
    expected = [json.loads(json.dumps(answer_parts(final, blocks_of))) for final, blocks_of in finals]
    assert result["parts"] == expected


CURSORS = [  # (event id, last applied cursor, is the event new?)
    ("v1.e1.1-0.0-0.0-0", None, True),
    ("v1.e1.1-0.0-0.0-0", "v1.e1.1-0.0-0.0-0", False),  # the same event again
    ("v1.e1.1-0.0-0.0-0", "v1.e1.2-0.0-0.0-0", False),  # before the cursor
    ("v1.e1.2-0.5-0.0-0", "v1.e1.2-0.0-0.0-0", True),   # the receipt log advanced
    ("v1.e1.2-0.0-0.0-1", "v1.e1.2-0.0-0.0-0", True),   # the answer log advanced (sequence part)
    ("v1.e1.10-0.0-0.0-0", "v1.e1.9-0.0-0.0-0", True),  # numbers, not text, are compared
    ("v1.e2.1-0.0-0.0-0", "v1.e1.9-0.0-0.0-0", True),   # another incarnation of the session
]


def test_an_event_at_or_before_the_last_cursor_is_recognised() -> None:
    cursors = [[event, last] for event, last, _ in CURSORS]
    result = node_json(f"(async () => {{ {SCRIPT} }})()", json.dumps({"answers": [], "finals": [], "cursors": cursors}))
    assert result["after"] == [new for _, _, new in CURSORS]


# Nesting openers before the lines above: deep and mixed containers, the scan's costly cases.
PREFIXES = ["", "- ", "* ", "+ ", "1. ", "2) ", "> ", ">", "  ", "    ", "\t", "-", "- - ", "* * ", ">> ", "   - ",
            "-     ", "10) "]
TAILS = [*LINES, "* * *", "- - -", "___", "_ _ _", "* * x", "- - x", "x", "=", "===", "## h"]


def _nested_answers(count: int) -> list[str]:
    rng = random.Random(29)
    return ["\n".join("".join(rng.choice(PREFIXES) for _ in range(rng.randint(0, 6))) + rng.choice(TAILS)
                      for _ in range(rng.randint(1, 14))) for _ in range(count)]


def test_marker_scan_of_nested_containers_matches_core() -> None:
    answers = _nested_answers(3000)
    result = node_json(f"(async () => {{ {SCRIPT} }})()", json.dumps({"answers": answers, "finals": [], "cursors": []}))
    assert result["scans"] == [_python_scan(answer) for answer in answers]


# Answers at the 100,000-unit limit whose scan was quadratic in their nesting (up to 190 s in core,
# 5-7 s in the Client, either holding its thread): blank, lazy and long lines under tens of
# thousands of open containers.  Both scans now read them in linear time; the bound is a generous
# multiple of that and far below the quadratic times.
N = 100_000
HOSTILE = {
    "blank lines under nested items": "+ " * (N // 4) + "x" + "\n" * (N // 2 - 1),
    "a line of nested * items": "* " * (N // 2 - 1) + "x",
    "a line of nested - items": "- " * (N // 2 - 1) + "x",
    "lazy lines under nested items": "+ " * (N // 4) + "x" + "\ny" * (N // 4 - 1),
    "a line of quotes": ">" * N,
    "a line of spaces under nested items": "+ " * (N // 4) + "x\n" + " " * (N // 2 - 3) + "x",
    "items before a long tail of stars": "* + " * (N // 8) + "x" + " *" * (N // 4 - 10),
    "blank lines under quoted items": "> - " * (N // 8) + "x" + "\n" * (N // 2 - 1),
    # The Client stripped a line's trailing `\r`s and a text part's ends with `[...]+$` regexes
    # (tried from every character of the run: 3.9 s and 4.3 s in Node).
    "a run of carriage returns": "a" + "\r" * (N - 2) + "b",
    "a run of line ends": "a" + "\n" * (N - 2) + "b",
    "a run of CRLFs": "a" + "\r\n" * (N // 2 - 1) + "b",
}
ANSWERS_MODULE = json.dumps((WEB / "answers.js").as_uri())
TIMED = """
const { scanMarkers, answerParts } = await import(ANSWERS_MODULE);
let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const out = JSON.parse(input).map((answer) => {
    const started = performance.now();
    const pieces = scanMarkers(answer);
    const parts = answerParts({ answer, ui_block_ids: [] }, new Map());
    return { seconds: (performance.now() - started) / 1000, pieces: pieces.length, parts: parts.length };
  });
  process.stdout.write(JSON.stringify(out));
});
""".replace("ANSWERS_MODULE", ANSWERS_MODULE)


def test_hostile_nesting_is_scanned_in_linear_time_by_core_and_the_client() -> None:
    import time

    answers = list(HOSTILE.values())
    assert max(len(answer) for answer in answers) <= N
    for name, answer in HOSTILE.items():
        started = time.perf_counter()
        pieces = scan(answer)
        parts = answer_parts({"answer": answer, "ui_block_ids": []}, {})
        assert time.perf_counter() - started < 1.0, name
        assert pieces == [answer] and len(parts) == 1  # no marker in any of them: one text run
    timed = node_json(f"(async () => {{ {TIMED} }})()", json.dumps(answers))
    assert [(entry["pieces"], entry["parts"]) for entry in timed] == [(1, 1)] * len(HOSTILE)
    slow = [(name, entry["seconds"]) for name, entry in zip(HOSTILE, timed, strict=True) if entry["seconds"] >= 1.0]
    assert slow == []
