"""`core.COMPILED`: whether this core runs as mypyc extension modules or as Python source.

mypyc turns a module's functions into native callables that are not Python functions, so a
function defined here tells which build runs without looking at file names (an installed
compiled build keeps the `.py` sources next to the extension modules).
"""

from __future__ import annotations

from types import FunctionType
from typing import Final


def _probe() -> None:
    """A function whose type tells the build apart."""


COMPILED: Final[bool] = not isinstance(_probe, FunctionType)
