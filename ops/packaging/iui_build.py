"""The PEP 517 build backend: setuptools, plus what mypyc needs when `IUI_COMPILE=1`.

A plain `pip install .` or `pip install -e .` builds pure Python and fetches only setuptools
and wheel.  With `IUI_COMPILE=1`, setup.py compiles `core/` with mypyc, which type-checks the
modules first: the build environment then also gets mypy (mypyc ships in it, pinned like the
test extra), orjson (`core` imports it; its types come with it) and mypy-extensions.  An
editable install with `IUI_COMPILE=1` is refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403  (every hook this module does not override)

COMPILE_REQUIRES = ["mypy>=2.4,<2.5", "orjson>=3.13,<4", "mypy-extensions>=1.0,<2"]


def _compile_requires() -> list[str]:
    return COMPILE_REQUIRES if os.environ.get("IUI_COMPILE") == "1" else []


def _listing(hook: Callable[[dict[str, Any] | None], list[str]], config_settings: dict[str, Any] | None) -> list[str]:
    """Run setuptools' own hook (which runs setup.py) with `IUI_LISTING_REQUIRES=1`: mypy is
    not installed yet while the requirements are listed, so setup.py must not compile then.
    Each hook runs in a process of its own, so the variable ends with it."""
    os.environ["IUI_LISTING_REQUIRES"] = "1"
    return [*hook(config_settings), *_compile_requires()]


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return _listing(build_meta.get_requires_for_build_wheel, config_settings)


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    """An editable install is always pure: compiled modules beside the sources would shadow them."""
    if os.environ.get("IUI_COMPILE") == "1":
        raise RuntimeError("IUI_COMPILE=1 needs a regular install (pip install .): an editable one would put "
                           "compiled modules beside the sources, shadowing every later edit")
    return str(build_meta.build_editable(wheel_directory, config_settings, metadata_directory))
