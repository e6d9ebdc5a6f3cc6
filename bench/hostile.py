"""Subclasses of the JSON types whose methods are traps: armed, each call is recorded and raises
(or returns nonsense).  Unarmed they behave as their base, so a test can build inputs with them.

Every dunder a base defines is trapped, and `__getattribute__`, which every ordinary method
lookup (`.items()`, `.encode()`, `.get()`) and `isinstance`'s `__class__` fallback go through.
Core must refuse these by exact type before any trap fires (issue 20): `bench/fuzz.py`
feeds them to every public function and counts trapped calls, and
`tests/unit/test_hostile_subclasses.py` checks every argument of every function with them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

SECRET = "QXJZ"


class HostileCall(Exception):
    """What an armed trap raises in `raise` mode: it must never reach a caller of core."""


@dataclass
class Traps:
    """Whether traps are armed, how they answer (`raise` or `nonsense`) and what they caught."""

    armed: bool = False
    mode: str = "raise"
    calls: list[str] = field(default_factory=list)


TRAPS = Traps()

_NONSENSE: dict[str, Callable[[], Any]] = {
    "__len__": lambda: 0, "__iter__": lambda: iter([SECRET]), "__reversed__": lambda: iter([SECRET]),
    "__contains__": lambda: True, "__bool__": lambda: True, "__hash__": lambda: 0,
    "__eq__": lambda: True, "__ne__": lambda: False, "__lt__": lambda: True, "__le__": lambda: True,
    "__gt__": lambda: True, "__ge__": lambda: True, "__float__": lambda: math.nan, "__int__": lambda: 10**30,
    "__index__": lambda: 10**30, "__str__": lambda: SECRET, "__repr__": lambda: SECRET,
    "__format__": lambda: SECRET, "__sizeof__": lambda: 1, "__getattribute__": lambda: SECRET,
}
_SKIPPED = frozenset({"__new__", "__init__", "__init_subclass__", "__subclasshook__", "__class_getitem__",
                      "__getnewargs__", "__class__", "__doc__", "__setattr__", "__delattr__", "__dir__",
                      "__reduce__", "__reduce_ex__", "__getstate__", "__del__"})


def _trap(base: type, name: str) -> Callable[..., Any]:
    plain = getattr(base, name, None)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not TRAPS.armed:
            if plain is None:  # dict and list are unhashable
                raise TypeError(f"unhashable type: {base.__name__}")
            return plain(self, *args, **kwargs)
        TRAPS.calls.append(name)
        if TRAPS.mode == "raise" or name not in _NONSENSE:
            raise HostileCall(name)
        return _NONSENSE[name]()

    method.__name__ = name
    return method


def _hostile(base: type) -> type:
    names = {name for name in dir(base) if name.startswith("__") and name not in _SKIPPED
             and callable(getattr(base, name, None))} | {"__hash__", "__getattribute__"}
    return type(f"Hostile{base.__name__.title()}", (base,), {name: _trap(base, name) for name in sorted(names)})


HostileDict = _hostile(dict)
HostileList = _hostile(list)
HostileStr = _hostile(str)
HostileInt = _hostile(int)
HostileFloat = _hostile(float)
HostileObject = _hostile(object)  # no JSON type at all: refused the same way
HOSTILE_KINDS: dict[type, type] = {dict: HostileDict, list: HostileList, str: HostileStr, int: HostileInt,
                                   float: HostileFloat}


def hostile_twin(value: Any) -> Any:
    """`value` (a dict, list, str, int or float) as an equal hostile subclass, one level deep."""
    return HOSTILE_KINDS[type(value)](value)


def stand_ins() -> list[Any]:
    """One hostile value of each kind, and a hostile object of no JSON type."""
    return [HostileDict({"a": 1}), HostileList([1]), HostileStr("a"), HostileInt(1), HostileFloat(1.5),
            HostileObject()]


@contextmanager
def armed(mode: str = "raise") -> Iterator[list[str]]:
    """Arm every trap for the block; yields the list of the trap names called."""
    TRAPS.calls.clear()
    TRAPS.mode, TRAPS.armed = mode, True
    try:
        yield TRAPS.calls
    finally:
        TRAPS.armed = False
