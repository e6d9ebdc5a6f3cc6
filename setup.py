"""Build hook of setuptools: `IUI_COMPILE=1 pip install .` compiles `core/` and the worker's
hot path with mypyc.

Without `IUI_COMPILE=1` (and so with `pip install -e .`) nothing is compiled: the package is
the pure-Python source.  The metadata is in pyproject.toml; this file only adds the extension
modules.  `core.COMPILED` and `workers.runtime.build.COMPILED` tell which build runs
(docs/deployment.md).
"""

from __future__ import annotations

import os
from pathlib import Path

from setuptools import setup

# Modules mypyc does not compile, with the reason in docs/decisions.md ("compiled core").
EXCLUDED: frozenset[str] = frozenset({"core/document/_parsed.py"})
# The modules of `workers/` that every tool call runs through (the dispatcher's round and the
# collector policy it asks before each entry, the entry's fields, the partition's decision and its
# writes, the tallies of its metrics, the stored state, its cache and the shelf of restored
# snapshots a cold session's first call goes through, the round trip, the keys), compiled with
# core: docs/decisions.md ("The compiled worker hot path") says why these and not the others.
WORKERS_HOT_PATH: tuple[str, ...] = (
    "workers/observability/tally.py",
    "workers/redisio/connection.py",
    "workers/redisio/keys.py",
    "workers/redisio/scripts.py",
    "workers/redisio/seal.py",
    "workers/runtime/batch.py",
    "workers/runtime/build.py",
    "workers/runtime/dispatcher.py",
    "workers/runtime/heap.py",
    "workers/runtime/partition.py",
    "workers/sessions/cache.py",
    "workers/sessions/snapshots.py",
    "workers/sessions/store.py",
    "workers/streams/tools.py",
    "workers/wire/entry.py",
)


def compiled_sources() -> list[str]:
    """Every module of `core/` except the excluded ones, then the worker's hot path, as paths
    relative to this file."""
    root = Path(__file__).parent
    paths = sorted(path.relative_to(root).as_posix() for path in (root / "core").rglob("*.py"))
    return [path for path in paths if path not in EXCLUDED] + list(WORKERS_HOT_PATH)


def extension_modules() -> list[object]:
    """mypyc's extension modules when the build backend builds a wheel with `IUI_COMPILE=1`
    (ops/packaging/iui_build.py sets `IUI_BUILDING_WHEEL=1`), none otherwise: the other hooks
    (requirements, metadata, sdist) run this file too, before mypy is installed."""
    if os.environ.get("IUI_COMPILE") != "1" or os.environ.get("IUI_BUILDING_WHEEL") != "1":
        return []
    from mypyc.build import mypycify  # only the compiled build needs mypy (pyproject's build backend)

    return list(mypycify(compiled_sources(), opt_level="3"))


setup(ext_modules=extension_modules())
