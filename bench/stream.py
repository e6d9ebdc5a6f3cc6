"""Stream costs on both sides: one `update` of a single node's props, small document vs large.

Producer: `advance_ui_stream` re-validates only the path from the root to the change (the
document cache keeps every untouched subtree's facts), so a patch on a 200-component
document should cost about what it costs on a 10-component one, and far less than a
full `parse_document` of the 200-component candidate.  Each row times one update
applied to the same base state (states are immutable), next to a from-scratch parse of
the same candidate; the patch result is first checked equal to that parse.

Receiver: `accept_checkpoint` of that patch's frame by a subscriber holding the previous
revision.  The frame is decoded afresh for every call (outside the timed region), as a
subscriber gets it from the wire; the full check of the same frame is timed beside it.

Opens: `start_ui_stream` of a freshly decoded document next to `parse_document` of it and
next to the former open (the parse, then a second validating walk to build the document
cache and the node index).
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import sys
from collections.abc import Callable
from time import perf_counter
from typing import Any

import orjson

from core.document._revalidation import DocumentCache
from core.document.model import parse_document
from core.json._frozen import thaw
from core.json.canonical import canonical_json_string
from core.json.safe import assert_safe_json
from core.stream._mutation import build_index
from core.stream.lifecycle import UIStreamState, _accept_fully, accept_checkpoint, advance_ui_stream, start_ui_stream

from .documents import count_components, maximal_document, report_document

FIELDS = 8
PER_GRID = 9


def _leaf(i: int) -> dict[str, Any]:
    key = f"s{i % FIELDS}"
    kind = i % 4
    if kind == 0:
        args = [f"Line {i}: ", {"state": key}, " and ", {"derived": f"d{i % FIELDS}"}]
        return {"id": f"text{i}", "type": "Text", "props": {"text": {"expr": {"op": "concat", "args": args}}}}
    if kind == 1:
        return {"id": f"result{i}", "type": "Result",
                "props": {"label": f"Total {i}", "value": {"expr": {"derived": f"d{i % FIELDS}"}},
                          "format": {"style": "decimal", "digits": 2}}}  # fmt: skip
    if kind == 2:
        return {"id": f"input{i}", "type": "NumberInput", "props": {"label": f"Quantity {i}", "bind": key}}
    return {"id": f"badge{i}", "type": "Badge", "props": {"text": f"Item {i}", "tone": "success"}}


def stream_document(components: int) -> dict[str, Any]:
    """A valid document of exactly `components` nodes: a Column of Grids of leaves."""
    grids = math.ceil((components - 1) / PER_GRID)
    leaves = components - 1 - grids
    size = math.ceil(leaves / grids)
    children = [
        {"id": f"grid{g}", "type": "Grid", "props": {"columns": 3, "gap": "sm"},
         "children": [_leaf(i) for i in range(g * size, min(leaves, (g + 1) * size))]}
        for g in range(grids)
    ]  # fmt: skip
    return {
        "version": "1.0", "id": f"stream{components}", "mode": "interactive_ui", "title": "Stream bench",
        "state": {f"s{i}": {"type": "number", "initial": i + 1, "min": 0, "max": 1000, "step": 1}
                  for i in range(FIELDS)},
        "derived": {f"d{i}": {"op": "mul", "args": [{"state": f"s{i}"}, 1.5]} for i in range(FIELDS)},
        "root": {"id": "root", "type": "Column", "props": {"gap": "md"}, "children": children},
    }  # fmt: skip


def _middle_text(document: dict[str, Any]) -> dict[str, Any]:
    texts = [leaf for grid in document["root"]["children"] for leaf in grid["children"] if leaf["type"] == "Text"]
    return texts[len(texts) // 2]


def _update_event(document: dict[str, Any]) -> dict[str, Any]:
    target = _middle_text(document)
    args = ["Updated: ", {"state": "s1"}, " / ", {"derived": "d2"}]
    return {"type": "update", "nodeId": target["id"], "props": {"text": {"expr": {"op": "concat", "args": args}}}}


def _maximal_event(document: dict[str, Any]) -> dict[str, Any]:
    texts = document["root"]["children"][-1]["children"]
    target = texts[len(texts) // 2]
    return {"type": "update", "nodeId": target["id"], "props": {"text": "A plain replacement text"}}


def _candidate(document: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """The whole candidate as plain JSON, for the from-scratch parse."""
    candidate = thaw(document)
    stack = [candidate["root"]]
    while stack:
        node = stack.pop()
        if node["id"] == event["nodeId"]:
            node["props"] = thaw(event["props"])
        stack.extend(node.get("children", ()))
    return candidate


def _round(call: Callable[[Any], Any], wire: bytes | None, min_time: float) -> float:
    """Seconds per call over one round of at least `min_time`.

    With `wire`, each call gets a frame decoded from it just before (decoding is not timed),
    as a subscriber gets a frame from the network.
    """
    elapsed, calls = 0.0, 0
    gc.disable()  # as timeit does
    try:
        while elapsed < min_time:
            frame = orjson.loads(wire) if wire is not None else None
            start = perf_counter()
            call(frame)
            elapsed += perf_counter() - start
            calls += 1
    finally:
        gc.enable()
    return elapsed / calls


def _calls(document: dict[str, Any], event: dict[str, Any]) -> dict[str, tuple[Callable[[Any], Any], bytes | None]]:
    """The timed calls of one document, each checked against its reference first."""
    base: UIStreamState = start_ui_stream(document, "bench-call", 1)
    candidate = _candidate(document, event)
    patched = advance_ui_stream(base, event)
    if canonical_json_string(patched.document) != canonical_json_string(parse_document(candidate)):
        raise AssertionError("the patch and the from-scratch parse disagree")
    held = accept_checkpoint(None, orjson.loads(orjson.dumps(base.checkpoint)))  # a subscriber at revision 0
    wire = orjson.dumps(patched.checkpoint)
    if accept_checkpoint(held, orjson.loads(wire)) != _accept_fully(held, orjson.loads(wire)):
        raise AssertionError("the incremental and the full receiver disagree")
    return {
        "patch": (lambda _: advance_ui_stream(base, event), None),
        "accept": (lambda frame: accept_checkpoint(held, frame), wire),
        "full accept": (lambda frame: _accept_fully(held, frame), wire),
        "parse": (lambda _: parse_document(candidate), None),
    }


def _measure(cases: dict[str, tuple[dict[str, Any], dict[str, Any]]], repeat: int,
             min_time: float) -> list[dict[str, dict[str, float]]]:
    """µs per call of every call of every case, round by round (cases interleaved, so drift hits all)."""
    calls = {name: _calls(document, event) for name, (document, event) in cases.items()}
    return [
        {name: {column: _round(call, wire, min_time) * 1e6 for column, (call, wire) in columns.items()}
         for name, columns in calls.items()}
        for _ in range(repeat)
    ]


def _former_open(document: dict[str, Any]) -> None:
    """What `start_ui_stream` did before the parse kept its facts: parse, walk again, index."""
    cache = DocumentCache(parse_document(document))
    build_index(cache.document["root"])


def _open_rows(repeat: int, min_time: float) -> list[list[str]]:
    """One row per document: ms per open, per parse and per former open, and opens per second."""
    documents = {
        "report, 10 components": report_document(10),
        "report, 200 components": report_document(200),
        "grids, 200 components": stream_document(200),
        "maximal (200, 256 KiB)": maximal_document(),
    }
    calls: dict[str, Callable[[Any], Any]] = {
        "open": lambda document: start_ui_stream(document, "bench-call", 1),
        "parse": parse_document,
        "former open": _former_open,
    }
    wires = {name: orjson.dumps(document) for name, document in documents.items()}
    rounds = [{(name, column): _round(call, wire, min_time) * 1e3 for name, wire in wires.items()
               for column, call in calls.items()} for _ in range(repeat)]
    rows = []
    for name, wire in wires.items():
        t = {column: statistics.median(r[(name, column)] for r in rounds) for column in calls}
        former = statistics.median(r[(name, "former open")] / r[(name, "open")] for r in rounds)
        rows.append([name, str(len(wire)), f"{t['open']:.3f}", f"{t['parse']:.3f}", f"{t['former open']:.3f}",
                     f"{t['open'] / t['parse']:.2f}", f"{former:.2f}", f"{1e3 / t['open']:.0f}",
                     f"{1e3 / t['former open']:.0f}"])
    return rows


def _print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for line in [header, ["-" * w for w in widths], *rows]:
        cells = enumerate(zip(line, widths, strict=False))
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in cells))


def main(argv: list[str] | None = None) -> int:
    """Time the update patches and the full parse; print them side by side with ratios."""
    parser = argparse.ArgumentParser(prog="python -m bench stream", description=__doc__)
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds per measurement (median taken)")
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per round, at least")
    args = parser.parse_args(argv or [])
    small, large, maximal = stream_document(10), stream_document(200), maximal_document()
    cases = {
        "10 components": (small, _update_event(small)),
        "200 components": (large, _update_event(large)),
        "maximal (200, 256 KiB)": (maximal, _maximal_event(maximal)),
    }
    rounds = _measure(cases, args.repeat, args.min_time)
    times = {name: {column: statistics.median(r[name][column] for r in rounds) for column in rounds[0][name]}
             for name in cases}

    def ratio(top: tuple[str, str], bottom: tuple[str, str]) -> float:
        """The median over rounds of a ratio measured within one round."""
        return statistics.median(r[top[0]][top[1]] / r[bottom[0]][bottom[1]] for r in rounds)

    small = "10 components"
    rows = [
        [name, str(count_components(doc)), str(assert_safe_json(doc)), f"{t['patch']:.1f}", f"{t['accept']:.1f}",
         f"{t['full accept']:.1f}", f"{t['parse']:.1f}", f"{ratio((name, 'patch'), (small, 'patch')):.2f}",
         f"{ratio((name, 'accept'), (small, 'accept')):.2f}", f"{ratio((name, 'accept'), (name, 'patch')):.2f}"]
        for (name, (doc, _)), t in zip(cases.items(), times.values(), strict=False)
    ]  # fmt: skip
    _print_table(["document", "components", "bytes", "update patch µs", "accept µs", "full accept µs",
                  "full parse µs", "patch / 10-comp", "accept / 10-comp", "accept / patch"], rows)
    large = "200 components"
    print(f"200/10 patch ratio {ratio((large, 'patch'), (small, 'patch')):.2f} (target <= 3); 200/10 accept ratio "
          f"{ratio((large, 'accept'), (small, 'accept')):.2f} (target <= 3); 200-component accept / patch "
          f"{ratio((large, 'accept'), (large, 'patch')):.2f} (target <= 2)")
    print(f"median µs per call and median of per-round ratios, {args.repeat} interleaved rounds of >= "
          f"{args.min_time}s per call; accept and full accept on a freshly decoded frame")
    print()
    _print_table(["open", "bytes", "open ms", "parse ms", "former open ms", "open / parse", "former / open",
                  "opens/s", "former opens/s"], _open_rows(args.repeat, args.min_time))
    print("start_ui_stream of a freshly decoded document; former open = parse + a second walk for the document "
          "cache + the node index")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
