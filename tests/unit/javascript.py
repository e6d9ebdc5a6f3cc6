"""Running Node.js as the JavaScript oracle of the tests (skipped where `node` is missing)."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

NODE = shutil.which("node")


def node_json(script: str, stdin: str, *, timeout: float = 120) -> Any:
    """The JSON that `script`, run by `node -e` on `stdin`, writes to its standard output."""
    run = subprocess.run(["node", "-e", script], input=stdin, capture_output=True, text=True, timeout=timeout,
                         check=False)
    assert run.returncode == 0, f"node exited with {run.returncode}: {run.stderr[-2000:]}"
    return json.loads(run.stdout)
