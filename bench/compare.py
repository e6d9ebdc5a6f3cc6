"""`python -m bench compare`: the pure and the compiled core's decisions side by side, in one run.

Times `advance_ui_stream` (one `update` patch), `start_ui_stream` (an open of a decoded
document), `resume_ui_stream` and `restore_ui_stream` (a cold session's producer rebuilt from its
stored checkpoint: parsed in full, or restored under a seal) on the 10- and the 200-component
documents of `python -m bench stream`, once with
the pure-Python core of this source tree and once with a compiled core installed in another
interpreter (`IUI_COMPILE=1 pip install .` into a venv, docs/deployment.md).  Each side runs
in its own process (`bench/compare_side.py`), the two alternated for `--repeat` rounds, and
the table gives each side's min and median µs per call and the speed-up (pure / compiled, of
the medians and of the minima).  Both sides must say which core they ran, and their calls must
return the same checkpoints (a digest of them), or the run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from .stream import _update_event, stream_document

ROOT = Path(__file__).resolve().parents[1]
SIDE = Path(__file__).with_name("compare_side.py")
DEFAULT_COMPILED = os.environ.get("IUI_COMPILED_PYTHON", "/tmp/venv-c/bin/python")


def _cases() -> dict[str, dict[str, Any]]:
    documents = {"10 components": stream_document(10), "200 components": stream_document(200)}
    return {name: {"document": document, "event": _update_event(document)} for name, document in documents.items()}


def _command(side: str, compiled_python: str) -> tuple[list[str], dict[str, str]]:
    """The pure side: this interpreter, `core` from this tree (PYTHONPATH, `-P` keeps the
    script's folder off the path); the compiled side: the other interpreter, isolated (`-I`),
    so only its installed `core` can load."""
    if side == "pure":
        return [sys.executable, "-P", str(SIDE)], {**os.environ, "PYTHONPATH": str(ROOT)}
    return [compiled_python, "-I", str(SIDE)], dict(os.environ)


def _run_side(side: str, compiled_python: str, request: str) -> dict[str, Any]:
    command, env = _command(side, compiled_python)
    done = subprocess.run(command, input=request, capture_output=True, text=True, env=env, cwd=ROOT.parent,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench compare: the {side} side failed:\n{done.stderr.strip()}")
    result: dict[str, Any] = json.loads(done.stdout)
    if result["compiled"] != (side == "compiled"):
        raise SystemExit(f"bench compare: the {side} side ran the {'compiled' if result['compiled'] else 'pure'} "
                         f"core ({result['core']})")
    return result


def _rows(runs: dict[str, list[dict[str, Any]]]) -> list[list[str]]:
    rows = []
    for name in runs["pure"][0]["times"]:
        for measure in ("patch", "open", "resume", "restore"):
            if any(measure not in run["times"][name] for side in runs.values() for run in side):
                continue  # a core without it (restore: an older compiled build)
            pure = [run["times"][name][measure] for run in runs["pure"]]
            compiled = [run["times"][name][measure] for run in runs["compiled"]]
            rows.append([name, measure, f"{min(pure):.1f}", f"{statistics.median(pure):.1f}", f"{min(compiled):.1f}",
                         f"{statistics.median(compiled):.1f}",
                         f"{statistics.median(pure) / statistics.median(compiled):.2f}",
                         f"{min(pure) / min(compiled):.2f}"])
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run both sides alternately and print the table; exit 1 if they returned different results."""
    parser = argparse.ArgumentParser(prog="python -m bench compare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compiled-python", default=DEFAULT_COMPILED,
                        help="interpreter with the compiled core installed (IUI_COMPILED_PYTHON, default "
                             "/tmp/venv-c/bin/python)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per side, alternated (at least 3)")
    parser.add_argument("--min-time", type=float, default=0.3, help="seconds per timed call, at least")
    parser.add_argument("--runtime", action=argparse.BooleanOptionalAction, default=True,
                        help="also compare a pure and a compiled iui worker, the floors and cold sessions "
                             "(bench/compare_runtime.py; needs redis-server)")
    parser.add_argument("--cold-sessions", type=int, default=1000,
                        help="sessions of the 200-component document per cold round (issue 24's goal: 1,000 "
                             "queued; fewer let a fresh worker's start-up costs weigh more)")
    parser.add_argument("--paced-rate", type=float, default=1200.0, metavar="CALLS_PER_S",
                        help="pace each side's 10-component worker at this rate after its drained run: the busiest "
                             "thread's CPU per paced call and the p99, beside the latency floor's (0: not paced)")
    parser.add_argument("--baseline", metavar="REF",
                        help="also run a pure worker of this git commit in the runtime table (a git worktree), "
                             "to compare with an earlier build in the same run")
    args = parser.parse_args(argv or [])
    if args.repeat < 3:
        parser.error("--repeat must be at least 3")
    if not Path(args.compiled_python).exists():
        print(f"bench compare: no interpreter at {args.compiled_python}: build one with\n"
              f"  python -m venv /tmp/venv-c && IUI_COMPILE=1 /tmp/venv-c/bin/pip install {ROOT}", file=sys.stderr)
        return 2
    request = json.dumps({"min_time": args.min_time, "cases": _cases()})
    runs: dict[str, list[dict[str, Any]]] = {"pure": [], "compiled": []}
    for round_ in range(args.repeat):
        order = ("pure", "compiled") if round_ % 2 == 0 else ("compiled", "pure")
        for side in order:
            runs[side].append(_run_side(side, args.compiled_python, request))
    from .stream import _print_table

    _print_table(["document", "decision", "pure min µs", "pure median µs", "compiled min µs",
                  "compiled median µs", "speed-up (median)", "speed-up (min)"], _rows(runs))
    digests = {run["digest"] for side in runs.values() for run in side}
    print(f"{args.repeat} alternated rounds per side, each call timed for >= {args.min_time}s; compiled core: "
          f"{runs['compiled'][0]['core']}")
    print("same checkpoints from both builds" if len(digests) == 1 else "DIFFERENT checkpoints from the two builds")
    if args.runtime:
        _compare_runtime(args)
    return 0 if len(digests) == 1 else 1


def _compare_runtime(args: argparse.Namespace) -> None:
    """The runtime table: a pure and a compiled worker side by side, the floors, cold vs warm."""
    from .compare_runtime import header, rows, run_rounds
    from .stream import _print_table

    rounds = run_rounds(args.compiled_python, args.repeat, args.cold_sessions, args.baseline, args.paced_rate)
    print()
    _print_table(header(args.baseline), rows(rounds))
    print(f"{args.repeat} alternated rounds on one private redis-server; cold: {args.cold_sessions} sessions of the "
          f"200-component document, a fresh worker's first patch of each, then a second (warm); the same with "
          f"each session's own variant of the document (its title), so no cold session shares another's restore")
