"""`iui`: the command line (the console script is `workers.cli:main`; `python -m workers.cli` runs it too)."""

from .main import main

__all__ = ["main"]
