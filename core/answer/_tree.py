"""The element graph of a block spec must be one tree: references, cycles, orphans, depth.

`spec.elements` is a flat map and `children` hold ids, so the tree is checked as a graph:
every child id exists, no element is reached twice (that would be a duplicate or a cycle),
every element is reached from `root`, and no path from the root is longer than 12
elements (the root alone has depth 1).  Runs only on a spec whose shape already passed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core._rules import Issues, descend
from core.answer._catalog import MAX_DEPTH
from core.errors import Issue


def _child_issue(parent: str, index: int, message: str, code: str) -> Issues:
    return descend(descend(descend([Issue("", message, code)], index), "children"), parent)


def _walk(elements: Mapping[str, Any], node: str, depth: int, path: set[str], seen: set[str]) -> Issues:
    """Depth-first from `node`; `path` holds its ancestors, `seen` every element reached."""
    seen.add(node)
    if depth > MAX_DEPTH:
        too_deep = Issue("", f"the tree is deeper than {MAX_DEPTH} levels", "too_deep")
        yield from descend(descend([too_deep], node), "elements")
        return
    path.add(node)
    for index, child in enumerate(elements[node].get("children", ())):
        if child not in elements:
            yield from descend(_child_issue(node, index, "no element has this id", "missing_reference"), "elements")
        elif child in path:
            yield from descend(_child_issue(node, index, "this reference closes a cycle", "cycle"), "elements")
        elif child in seen:
            again = _child_issue(node, index, "this element is already referenced", "duplicate_reference")
            yield from descend(again, "elements")
        else:
            yield from _walk(elements, child, depth + 1, path, seen)
    path.discard(node)


def tree(spec: Any) -> Issues:
    """The elements of `spec` form one tree under `spec.root`."""
    elements, root = spec["elements"], spec["root"]
    if root not in elements:
        yield Issue("/root", "no element has this id", "missing_reference")
        return
    seen: set[str] = set()
    problems = list(_walk(elements, root, 1, set(), seen))
    yield from problems
    if not problems:
        for name in elements:
            if name not in seen:
                orphan = Issue("", "the element is not reachable from the root", "orphan")
                yield from descend(descend([orphan], name), "elements")
