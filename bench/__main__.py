"""`python -m bench` runs every benchmark; `python -m bench <name> [options]` runs one."""

from __future__ import annotations

import sys
from importlib import import_module

# name -> module under bench/ exposing `main(argv: list[str]) -> int`
BENCHMARKS = {
    "parse": "parse",
    "stream": "stream",
    "workers": "workers",
    "answer": "answer",
    "answer-store": "answer_store",
    "actions": "actions",
    "fuzz": "fuzz",
    "faults": "faults",
    "redis-kills": "redis_kills",
    "durability": "durability",
    "gateway": "gateway",
    "scaleout": "scaleout",
    "idle": "idle",
    "scale": "scale",
    "opens": "opens",
    "fuzz-wire": "fuzz_wire",
    "fuzz-http": "fuzz_http",
    "stalls": "stalls",
    "client": "client",
    "lua": "lua",
    "frame-log": "frame_log",
    "cold": "cold",
    "compare": "compare",
    "builds": "builds",
}


def main(argv: list[str]) -> int:
    """Dispatch to one benchmark by name, or run them all."""
    if argv and argv[0] in ("-h", "--help"):
        print(f"usage: python -m bench [{'|'.join(BENCHMARKS)}] [options]")
        return 0
    if not argv:
        status = 0
        for name in BENCHMARKS:
            print(f"== {name}")
            status |= _module(name).main([])
        return status
    name, rest = argv[0], argv[1:]
    if name not in BENCHMARKS:
        print(f"unknown benchmark {name!r}; choose from: {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    return _module(name).main(rest)


def _module(name: str):
    return import_module(f"bench.{BENCHMARKS[name]}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
