"""`python -m docs.generate`: write the reference pages built from the code; `--check` only compares.

The pages are checked in (MkDocs builds from files) and `tests/unit/test_docs.py` fails when one is stale,
as the JSON Schema's test does for `schema/`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .cli_page import cli_page
from .issue_codes import issue_codes_page
from .pages import error_codes_page, metrics_page, settings_page
from .source import ROOT

DOCS = ROOT / "docs"
PAGES: dict[str, Callable[[], str]] = {
    "reference/settings.md": settings_page,
    "reference/error-codes.md": error_codes_page,
    "reference/issue-codes.md": issue_codes_page,
    "reference/metrics.md": metrics_page,
    "reference/cli.md": cli_page,
}


def pages() -> dict[str, str]:
    """Every generated page's text by its path under `docs/`."""
    return {path: build() for path, build in PAGES.items()}


def main(argv: list[str] | None = None) -> int:
    """Write the pages (or, with `--check`, list the stale ones and exit 1)."""
    parser = argparse.ArgumentParser(prog="python -m docs.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page is stale")
    args = parser.parse_args(argv)
    stale = [path for path, text in pages().items()
             if not (DOCS / path).exists() or (DOCS / path).read_text("utf-8") != text]
    if args.check:
        for path in stale:
            print(f"docs/{path} is stale: run python -m docs.generate", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        (DOCS / path).parent.mkdir(parents=True, exist_ok=True)
        (DOCS / path).write_text(pages()[path], "utf-8")
        print(f"wrote docs/{path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
