"""One side of `python -m bench compare`: time core's decisions in this interpreter.

Run as a script (`python -P bench/compare_side.py`), never as `bench.compare_side`: it imports
nothing but `core` and the standard library, so the interpreter's own `core` is the one timed
(the compiled one installed in a venv, or the source tree on PYTHONPATH).  It reads the cases
as JSON on stdin (`{"min_time": s, "cases": {name: {"document": ..., "event": ...}}}`) and
prints one JSON object: which core ran, µs per call of each case's patch, open, resume and (a
core that has it) restore, and a
digest of what the calls returned (both builds must return the same).
"""

from __future__ import annotations

import gc
import hashlib
import json
import sys
from collections.abc import Callable
from time import perf_counter
from typing import Any

import core


def _per_call(call: Callable[[], Any], min_time: float) -> float:
    """µs per call over a round of at least `min_time` seconds (gc off, as timeit does)."""
    elapsed, calls = 0.0, 0
    gc.disable()
    try:
        while elapsed < min_time:
            start = perf_counter()
            call()
            elapsed += perf_counter() - start
            calls += 1
    finally:
        gc.enable()
    return elapsed / calls * 1e6


def _case(document: Any, event: Any, min_time: float, digest: Any) -> dict[str, float]:
    base = core.start_ui_stream(document, "bench-call", 1)
    patched = core.advance_ui_stream(base, event)
    for state in (base, patched):
        digest.update(core.canonical_json_string(state.checkpoint).encode("utf-8", "surrogatepass"))
    frame, counts = json.loads(json.dumps(patched.checkpoint)), {"frame_count": 2, "byte_count": patched.byte_count}
    times = {
        "patch": _per_call(lambda: core.advance_ui_stream(base, event), min_time),
        "open": _per_call(lambda: core.start_ui_stream(document, "bench-call", 1), min_time),
        # a cold session's producer from its stored checkpoint: parsed in full, or restored under a seal
        "resume": _per_call(lambda: core.resume_ui_stream(frame, **counts), min_time),
    }
    restore = getattr(core, "restore_ui_stream", None)  # a core older than issue 24's sixth pass has none
    if restore is not None:
        facts = patched.restore_facts
        digest.update(core.canonical_json_string(restore(frame, **counts, facts=facts).checkpoint).encode("utf-8"))
        times["restore"] = _per_call(lambda: restore(frame, **counts, facts=facts), min_time)
    return times


def main() -> int:
    request = json.load(sys.stdin)
    digest = hashlib.sha256()
    times = {name: _case(case["document"], case["event"], request["min_time"], digest)
             for name, case in request["cases"].items()}
    compiled = getattr(core, "COMPILED", False)  # a core older than `COMPILED` is pure
    json.dump({"compiled": compiled, "core": core.__file__, "times": times, "digest": digest.hexdigest()}, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
