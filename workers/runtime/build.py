"""`COMPILED`: whether the worker's hot path runs as mypyc extension modules or as Python source.

`IUI_COMPILE=1 pip install .` compiles `core/` and the modules of `setup.py`'s `WORKERS_HOT_PATH`
(this one among them), so a function defined here tells which build runs, as `core.COMPILED`
does for the core (docs/deployment.md, "The compiled core").
"""

from __future__ import annotations

from types import FunctionType
from typing import Final


def _probe() -> None:
    """A function whose type tells the build apart (a compiled one is not a Python function)."""


COMPILED: Final[bool] = not isinstance(_probe, FunctionType)
