"""Deep-immutable JSON containers.

`FrozenDict` and `FrozenList` subclass `dict` and `list` so that `orjson`, `json` and
equality with plain decoded JSON keep working, while every mutating method raises
`TypeError`.  Validated documents, states and frames are built from them.

mypyc compiles no subclass of a builtin container as a native class, so these three are
ordinary Python classes in the compiled build too (`native_class=False`); their methods are
the mutators that raise and the copy hooks, none on a hot path.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mypy_extensions import mypyc_attr


def _immutable(self: object, *args: object, **kwargs: object) -> None:
    raise TypeError(f"{type(self).__name__} is immutable")


@mypyc_attr(native_class=False)
class FrozenDict(dict[str, Any]):
    """A dict that refuses mutation; hashable by identity is not needed, so it is unhashable."""

    __slots__ = ()
    # Every mutator raises; typeshed gives each its own signature, hence the ignores.  One
    # name a line: mypyc takes no chained assignment in a class body.
    __setitem__ = _immutable
    __delitem__ = _immutable
    clear = _immutable
    pop = _immutable
    popitem = _immutable  # type: ignore[assignment]
    setdefault = _immutable
    update = _immutable
    __ior__ = _immutable  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[str, Any]) -> FrozenDict:
        return self


@mypyc_attr(native_class=False)
class FrozenList(list[Any]):
    """A list that refuses mutation."""

    __slots__ = ()
    # Every mutator raises; typeshed gives each its own signature, hence the ignores.
    __setitem__ = _immutable
    __delitem__ = _immutable
    __iadd__ = _immutable  # type: ignore[assignment]
    __imul__ = _immutable  # type: ignore[assignment]
    append = _immutable
    extend = _immutable
    insert = _immutable
    pop = _immutable
    remove = _immutable
    reverse = _immutable
    sort = _immutable
    clear = _immutable

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[str, Any]) -> FrozenList:
        return self


@mypyc_attr(native_class=False)
class ModelDict(FrozenDict):
    """A `FrozenDict` that also carries what validation learned about it (`model`, set once by
    the parser that made it): `core.document.model.ParsedDocument` is this class.  It lives
    here so that the JSON walks can accept it by exact type, as they accept the others."""

    __slots__ = ("model",)
    model: Any


EMPTY_DICT = FrozenDict()
EMPTY_LIST = FrozenList()

# The exact types that count as JSON.  A subclass never does: its methods (`__eq__`,
# `__hash__`, `__len__`, `__iter__`, `keys`, ...) could answer anything, so every check of
# untrusted input compares `type(value)` with these before it touches the value.
OBJECT_KINDS: frozenset[type] = frozenset((dict, FrozenDict, ModelDict))
ARRAY_KINDS: frozenset[type] = frozenset((list, FrozenList))
CONTAINER_KINDS = OBJECT_KINDS | ARRAY_KINDS
SCALAR_KINDS: frozenset[type] = frozenset((str, int, float, bool, type(None)))


EXACT_INTEGERS = 2.0**53  # every integer within +-2**53 is a double (and prints as its own digits)
_MAGNITUDE = 1e15  # UI_LIMITS["maxNumberMagnitude"] (core.limits imports nothing of this module's)
_KEPT = frozenset((str, int, bool, type(None)))  # scalars `freeze` returns as they are


def freeze(value: Any) -> Any:
    """A deep-immutable copy of decoded JSON (already-frozen parts are reused).

    Integral floats become ints (`1.0` -> `1`, `-0.0` -> `0`): JavaScript cannot tell
    them apart, and this way Python serializes them as JavaScript does.
    """
    kind = type(value)
    if kind is dict:  # decoded JSON first, scalars kept without a call (an open freezes ~10^4 values)
        obj: dict[Any, Any] = value  # typed: compiled, the loop is mypyc's dict iteration, not generic calls
        return FrozenDict({key: item if type(item) in _KEPT else _frozen_item(item) for key, item in obj.items()})
    if kind is list:
        array: list[Any] = value
        return FrozenList([item if type(item) in _KEPT else _frozen_item(item) for item in array])
    if kind is FrozenDict or kind is FrozenList or isinstance(value, FrozenDict):
        return value
    if isinstance(value, dict):
        return FrozenDict({key: _frozen_item(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return FrozenList([_frozen_item(item) for item in value])
    return _frozen_item(value)


def freeze_object(value: Mapping[str, Any]) -> FrozenDict:
    """`freeze` of a decoded JSON object, typed as the `FrozenDict` it returns."""
    if isinstance(value, FrozenDict):
        return value
    return FrozenDict({key: _frozen_item(item) for key, item in value.items()})


def _frozen_item(item: Any) -> Any:
    kind = type(item)
    if kind is str or kind is int or kind is bool or item is None:
        return item
    if kind is float:
        return int(item) if item.is_integer() and -EXACT_INTEGERS <= item <= EXACT_INTEGERS else item
    return freeze(item)


def freeze_json(value: Any, max_depth: int) -> Any:
    """`freeze` of a value that must be decoded JSON (exact types, text keys, finite numbers
    within 1e15, valid Unicode) nested at most `max_depth` levels; anything else raises
    `ValueError`.  For a stored value taken back without a validating walk: this one walk both
    checks what every later step relies on (no foreign type, nothing orjson cannot write back)
    and freezes.

    A cold session's restore spends most of its time here (a 200-component snapshot holds ~1,000
    values in ~400 containers), so the loops take text and containers themselves and call out
    only for the other scalars: one call per container, none per string."""
    kind = type(value)
    if kind is dict:
        if max_depth < 1:
            raise ValueError("nested too deep")
        obj: dict[Any, Any] = value  # typed: compiled, the loop is mypyc's dict iteration
        depth = max_depth - 1
        frozen: dict[str, Any] = {}
        for key, item in obj.items():
            if type(key) is not str:
                raise ValueError("an object key is not text")
            item_kind = type(item)
            if item_kind is str:
                frozen[key] = _json_text(item)
            elif item_kind is dict or item_kind is list:
                frozen[key] = freeze_json(item, depth)
            else:
                frozen[key] = _json_scalar(item)
        return FrozenDict(frozen)
    if kind is list:
        if max_depth < 1:
            raise ValueError("nested too deep")
        array: list[Any] = value
        depth = max_depth - 1
        items: list[Any] = []
        for item in array:
            item_kind = type(item)
            if item_kind is str:
                items.append(_json_text(item))
            elif item_kind is dict or item_kind is list:
                items.append(freeze_json(item, depth))
            else:
                items.append(_json_scalar(item))
        return FrozenList(items)
    if kind is str:
        return _json_text(value)
    return _json_scalar(value)


def _json_text(text: str) -> str:
    """`text`, when it is valid Unicode (a lone surrogate raises UnicodeEncodeError, a ValueError)."""
    if not text.isascii():
        text.encode("utf-8")
    return text


def _json_scalar(item: Any) -> Any:
    """A JSON number, boolean or null as `freeze` keeps it; anything else raises ValueError."""
    kind = type(item)
    if kind is int:
        if not -_MAGNITUDE <= item <= _MAGNITUDE:
            raise ValueError("a number exceeds 1e15 in magnitude")
        return item
    if kind is bool or item is None:
        return item
    if kind is float:
        number: float = item
        if not (math.isfinite(number) and -_MAGNITUDE <= number <= _MAGNITUDE):
            raise ValueError("a number is not finite or exceeds 1e15 in magnitude")
        return int(number) if number.is_integer() else number
    raise ValueError("a value is not a JSON type")


def thaw(value: Any) -> Any:
    """A plain mutable deep copy of (frozen) JSON."""
    if isinstance(value, dict):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list):
        return [thaw(item) for item in value]
    return value
