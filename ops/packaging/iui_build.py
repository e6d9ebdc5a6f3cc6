"""The PEP 517 build backend: setuptools, plus what mypyc needs when `IUI_COMPILE=1`.

A plain `pip install .` or `pip install -e .` builds pure Python and fetches only setuptools
and wheel.  With `IUI_COMPILE=1`, setup.py compiles `core/` and the worker's hot path with
mypyc, which type-checks the modules first: the build environment then also gets mypy (mypyc
ships in it, pinned like the test extra) and the project's own dependencies (pyproject.toml's
`dependencies`: the compiled worker modules import redis, pydantic, prometheus-client and rq,
whose types come with them; `core` imports orjson and mypy-extensions).  Only
`build_wheel` compiles (it sets `IUI_BUILDING_WHEEL=1` for setup.py): listing requirements,
metadata and an sdist run setup.py too, before mypy is installed or with nothing to compile.
An editable install with `IUI_COMPILE=1` is refused.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403  (every hook this module does not override)

COMPILE_REQUIRES = ["mypy>=2.4,<2.5"]
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _compile_requires() -> list[str]:
    if os.environ.get("IUI_COMPILE") != "1":
        return []
    dependencies: list[str] = tomllib.loads(PYPROJECT.read_text("utf-8"))["project"]["dependencies"]
    return [*COMPILE_REQUIRES, *dependencies]


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [*build_meta.get_requires_for_build_wheel(config_settings), *_compile_requires()]


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    """The wheel; compiled with `IUI_COMPILE=1`.  Each hook runs in a process of its own, so
    the variable ends with this one."""
    os.environ["IUI_BUILDING_WHEEL"] = "1"
    return str(build_meta.build_wheel(wheel_directory, config_settings, metadata_directory))


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    """An editable install is always pure: compiled modules beside the sources would shadow them."""
    if os.environ.get("IUI_COMPILE") == "1":
        raise RuntimeError("IUI_COMPILE=1 needs a regular install (pip install .): an editable one would put "
                           "compiled modules beside the sources, shadowing every later edit")
    return str(build_meta.build_editable(wheel_directory, config_settings, metadata_directory))
