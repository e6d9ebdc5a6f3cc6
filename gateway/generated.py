"""The Client's generated modules (its document schema, its entity table): each is written by its
command (`python -m gateway.client_schema`, `python -m gateway.client_entities`), or with `--check`
only compared with what the command would write (exit 1 when stale)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def write_or_check(argv: list[str] | None, *, prog: str, description: str, module: Path,
                   text: Callable[[], str]) -> int:
    """Write `module` with `text()`, or with `--check` in `argv` compare it; the exit status."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when the file is stale")
    args = parser.parse_args(argv)
    wanted = text()
    if args.check:
        stale = not module.is_file() or module.read_text(encoding="utf-8") != wanted
        print(f"{module.name} is {'stale' if stale else 'current'}")
        return 1 if stale else 0
    module.write_text(wanted, encoding="utf-8")
    print(f"wrote {module}")
    return 0
