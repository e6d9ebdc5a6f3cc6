"""The PEP 517 build backend: setuptools, plus what mypyc needs when `IUI_COMPILE=1`.

A plain `pip install .` or `pip install -e .` builds pure Python and fetches only setuptools
and wheel.  With `IUI_COMPILE=1`, setup.py compiles `core/` with mypyc, which type-checks the
modules first: the build environment then also gets mypy (mypyc ships in it, pinned like the
test extra), orjson (`core` imports it; its types come with it) and mypy-extensions.  Only
`build_wheel` compiles (it sets `IUI_BUILDING_WHEEL=1` for setup.py): listing requirements,
metadata and an sdist run setup.py too, before mypy is installed or with nothing to compile.
An editable install with `IUI_COMPILE=1` is refused.
"""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403  (every hook this module does not override)

COMPILE_REQUIRES = ["mypy>=2.4,<2.5", "orjson>=3.13,<4", "mypy-extensions>=1.0,<2"]


def _compile_requires() -> list[str]:
    return COMPILE_REQUIRES if os.environ.get("IUI_COMPILE") == "1" else []


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
