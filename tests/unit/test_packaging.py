"""The distribution: package data the demo needs, and `iui demo` from a wheel in a fresh venv."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from workers.cli.demo import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "setup.py", "ops/packaging", "README.md", "core", "workers", "config")


def test_the_demo_examples_shipped_with_the_package_are_the_examples():
    shipped = sorted(EXAMPLES.glob("*.json"))
    assert {"stream-initial.json", "stream-mutations.json"} <= {path.name for path in shipped}
    for path in shipped:
        assert path.read_bytes() == (ROOT / "examples" / path.name).read_bytes(), path.name


def _copy_sources(target: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=ignore)
        else:
            shutil.copy2(source, target / name)


def _dependency_dirs() -> list[str]:
    """The directories (in sys.path order) holding the distributions this interpreter sees, but this project's."""
    from importlib.metadata import distributions

    return list(dict.fromkeys(str(dist.locate_file("")) for dist in distributions()
                              if dist.metadata["Name"] != "intelligent-ui-host"))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_iui_demo_runs_from_a_wheel_installed_in_a_fresh_venv(tmp_path):
    source, wheels, run = tmp_path / "src", tmp_path / "wheels", tmp_path / "run"
    source.mkdir()
    run.mkdir()
    _copy_sources(source)  # a copy: the build writes build/ and *.egg-info next to the sources
    # The build backend (setuptools>=68, pyproject.toml) comes from pip's isolated build environment.
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-q", "-w", str(wheels)],
                           cwd=source, capture_output=True, text=True, timeout=240, check=False,
                           env={k: v for k, v in os.environ.items() if k != "IUI_COMPILE"})
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    wheel = next(wheels.glob("intelligent_ui_host-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "workers/cli/demo_examples/stream-initial.json" in names and "workers/redisio/lua/commit.lua" in names
    assert not [name for name in names if name.endswith(".so")], "a plain build is pure Python (IUI_COMPILE=1 compiles)"
    # An isolated venv that holds the wheel alone; a .pth appends the directories where this interpreter
    # finds its distributions (a venv's or the system's site-packages: the dependencies), so nothing is
    # downloaded and the wheel, first on sys.path, is what runs.  A .pth line that names a directory does
    # not run that directory's own .pth files, so an editable install of the sources found there stays off.
    # (--system-site-packages would give the base interpreter's packages, not a running venv's, and pip
    # would take an installed copy of this project for the wheel: "already satisfied".)
    # Without PYTHONPATH: a source tree on it (with its *.egg-info) would also make pip skip the wheel.
    env = {k: v for k, v in os.environ.items() if not k.startswith("IUI_") and k != "PYTHONPATH"}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)], env=env,
                             capture_output=True, text=True, timeout=120, check=False)
    assert install.returncode == 0 and "Successfully installed" in install.stdout, install.stdout + install.stderr
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             env=env, capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    (Path(purelib) / "_iui_test_dependencies.pth").write_text("".join(f"{path}\n" for path in _dependency_dirs()))
    where = subprocess.run([str(python), "-c", "import workers; print(workers.__file__)"], cwd=run, env=env,
                           capture_output=True, text=True, check=True, timeout=60).stdout
    assert where.startswith(str(venv)), where
    demo = subprocess.run([str(venv / "bin" / "iui"), "demo"], cwd=run, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert "converged=True" in demo.stdout
    version = subprocess.run([str(venv / "bin" / "iui"), "--version"], cwd=run, env=env, capture_output=True,
                             text=True, timeout=60, check=True).stdout
    assert version.startswith("iui ") and version.endswith(" (pure core, pure worker)\n"), version


def test_a_compiled_editable_install_is_refused(monkeypatch, tmp_path):
    """`IUI_COMPILE=1 pip install -e .` would leave compiled modules beside the sources: refused."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("iui_build", ROOT / "ops" / "packaging" / "iui_build.py")
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    monkeypatch.setenv("IUI_COMPILE", "1")
    with pytest.raises(RuntimeError, match="regular install"):
        backend.build_editable(str(tmp_path))
    requires = backend._compile_requires()
    assert "mypy>=2.4,<2.5" in requires  # mypyc, and what the compiled worker modules are type-checked against:
    assert {"redis[hiredis]>=8.1,<9", "pydantic>=2.13,<3", "rq>=3.0,<4", "orjson>=3.13,<4"} <= set(requires)
    monkeypatch.delenv("IUI_COMPILE")
    assert backend._compile_requires() == []
