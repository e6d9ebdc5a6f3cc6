"""RFC 6902 JSON Patch between two JSON values: what a STATE_DELTA carries.

Objects are compared key by key (removed keys, added keys, changed values recursed into);
arrays of the same length element by element, an array that only grew gets `add`s at its end,
any other array change replaces the array; other values are replaced when they differ (a
number and a boolean never compare equal).  Paths are RFC 6901 pointers.
"""

from __future__ import annotations

from typing import Any

Patch = list[dict[str, Any]]


def pointer(path: tuple[str | int, ...]) -> str:
    """The RFC 6901 pointer of a path."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def diff(old: Any, new: Any, path: tuple[str | int, ...] = ()) -> Patch:
    """The operations that turn `old` into `new`; none for the same object, not walked (the states
    of an AG-UI stream share every part a frame leaves as it was)."""
    if old is new:
        return []
    if type(old) is dict and type(new) is dict:
        return _objects(old, new, path)
    if type(old) is list and type(new) is list:
        return _arrays(old, new, path)
    if type(old) is type(new) and old == new:
        return []
    return [{"op": "replace", "path": pointer(path), "value": new}]


def _objects(old: dict[str, Any], new: dict[str, Any], path: tuple[str | int, ...]) -> Patch:
    patch: Patch = [{"op": "remove", "path": pointer((*path, key))} for key in old if key not in new]
    for key, value in new.items():
        if key not in old:
            patch.append({"op": "add", "path": pointer((*path, key)), "value": value})
        else:
            patch.extend(diff(old[key], value, (*path, key)))
    return patch


def _arrays(old: list[Any], new: list[Any], path: tuple[str | int, ...]) -> Patch:
    if len(old) == len(new):
        patch: Patch = []
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            patch.extend(diff(a, b, (*path, index)))
        return patch
    if len(new) > len(old) and not diff(old, new[: len(old)]):
        return [{"op": "add", "path": pointer((*path, index)), "value": value}
                for index, value in enumerate(new[len(old):], start=len(old))]
    return [{"op": "replace", "path": pointer(path), "value": new}]


def apply(value: Any, patch: Patch) -> Any:
    """`value` with `patch` applied (for tests and the bench: the ops `diff` makes)."""
    import copy

    result = copy.deepcopy(value)
    for op in patch:
        parts = [part.replace("~1", "/").replace("~0", "~") for part in op["path"].split("/")[1:]]
        if not parts:
            result = copy.deepcopy(op["value"])
            continue
        parent = result
        for part in parts[:-1]:
            parent = parent[int(part)] if type(parent) is list else parent[part]
        last: Any = int(parts[-1]) if type(parent) is list else parts[-1]
        if op["op"] == "remove":
            del parent[last]
        elif op["op"] == "add" and type(parent) is list:
            parent.insert(last, copy.deepcopy(op["value"]))
        else:
            parent[last] = copy.deepcopy(op["value"])
    return result
