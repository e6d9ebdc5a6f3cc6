"""What the generator reads from the code: attribute docstrings and paths shown relative to the repository."""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def attribute_docstrings(cls: type) -> dict[str, str]:
    """The string literal under each name a class body assigns, as one line (e.g. an enum member's meaning)."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    assert isinstance(body, ast.ClassDef)
    found: dict[str, str] = {}
    for statement, following in zip(body.body, body.body[1:], strict=False):
        names = _assigned_names(statement)
        if names and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant) \
                and isinstance(following.value.value, str):
            for name in names:
                found[name] = one_line(following.value.value)
    return found


def _assigned_names(statement: ast.stmt) -> list[str]:
    if isinstance(statement, ast.Assign):
        return [target.id for target in statement.targets if isinstance(target, ast.Name)]
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    return []


def one_line(text: str) -> str:
    """A docstring's words on one line (a Markdown table cell holds no line break)."""
    return " ".join(text.split())


def shown_path(path: Path) -> str:
    """A path as the docs show it: relative to the repository when inside it, so pages do not depend on a checkout."""
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()
