"""The shape of `core` and `workers`, read from their source: one-way dependencies, no cycles, no I/O in core."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core"
WORKERS = ROOT / "workers"

# Packages `core` must never import: the runtime, its settings, I/O, clocks and randomness.
FORBIDDEN = ("workers", "config", "redis", "rq", "prometheus_client", "pydantic", "pydantic_settings",
             "os", "time", "datetime", "random", "socket", "subprocess", "threading", "asyncio", "logging")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules(package: Path = CORE) -> dict[str, ast.Module]:
    return {_module_name(path): ast.parse(path.read_text(), str(path)) for path in sorted(package.rglob("*.py"))}


def _imported(module: str, tree: ast.Module) -> set[str]:
    """Every module `module` imports, at the top or inside a function (relative ones resolved)."""
    package = module if (ROOT / module.replace(".", "/") / "__init__.py").exists() else module.rpartition(".")[0]
    known = _modules(ROOT / module.split(".")[0])
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known)
    return names


def _graph(package: Path = CORE) -> dict[str, set[str]]:
    modules = _modules(package)
    return {name: {other for other in _imported(name, tree) if other in modules and other != name}
            for name, tree in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of `graph` (as a path that ends where it starts), or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for successor in sorted(graph[node]):
            if state.get(successor) == 1:
                return [*path[path.index(successor):], successor]
            if successor not in state and (found := visit(successor)):
                return found
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_import_graph_of_core_has_no_cycle() -> None:
    assert _cycle(_graph()) == []


def test_the_cycle_finder_reports_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def test_no_core_module_imports_the_core_facade() -> None:
    # `core/__init__.py` re-exports the public names; a module importing `core` itself would
    # load every other module first and hide a cycle behind the facade.
    for name, tree in _modules().items():
        if name != "core":
            assert "core" not in _imported(name, tree), name


def test_core_imports_nothing_from_the_runtime_settings_io_or_clocks() -> None:
    for name, tree in _modules().items():
        for imported in _imported(name, tree):
            assert imported.split(".")[0] not in FORBIDDEN, f"{name} imports {imported}"


def test_core_reads_no_environment_and_no_clock() -> None:
    for name, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                assert node.attr not in {"environ", "getenv", "monotonic", "perf_counter", "now", "utcnow"}, name


def test_each_subpackage_says_in_one_docstring_what_it_offers() -> None:
    for name, tree in _modules().items():
        if (ROOT / name.replace(".", "/") / "__init__.py").exists() and name != "core":
            assert ast.get_docstring(tree), name
            assert [type(node) for node in tree.body] == [ast.Expr], f"{name}/__init__.py holds only its docstring"


def test_helper_modules_are_private_by_name() -> None:
    # A module without a public name of `core` (and not a documented command) is a helper.
    import core

    homes = {getattr(core, name).__module__ for name in core.__all__ if hasattr(getattr(core, name), "__module__")}
    commands = {"core.document.schema", "core.answer.schema"}
    for name in _modules():
        leaf = name.rpartition(".")[2]
        if leaf.startswith("_") or name in homes or name in commands or name in {"core.errors", "core.limits"}:
            continue
        if (ROOT / name.replace(".", "/") / "__init__.py").exists():
            continue
        raise AssertionError(f"{name} holds no public name: make it `_`-private")


def _path_literals(tree: ast.Module) -> list[int]:
    """Lines of string literals or f-strings that start a JSON Pointer (docstrings aside)."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node)}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.FormattedValue):
            following = node.values[1] if len(node.values) > 1 else None
            if isinstance(following, ast.Constant) and str(following.value).startswith("/"):
                lines.append(node.lineno)  # f"{path}/..."
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and node.value.startswith("/") and len(node.value) > 1):
            lines.append(node.lineno)  # "/props", path + "/type"
    return lines


def test_document_rules_report_at_their_place_and_never_build_a_path() -> None:
    for name, tree in _modules().items():
        if name.startswith(("core.document", "core.expression", "core.answer.view_state", "core.answer._view")):
            assert not _path_literals(tree), f"{name} builds JSON Pointer text at lines {_path_literals(tree)}"


def test_a_place_prints_as_an_escaped_json_pointer() -> None:
    from core.errors import ROOT

    assert ROOT.pointer == ""
    assert (ROOT / "root" / "children" / 3 / "props").pointer == "/root/children/3/props"
    assert (ROOT / "state" / "a/b~c").pointer == "/state/a~1b~0c"


# -- workers: one folder per concept, dependencies pointing down ----------------------------

# What each folder of `workers` may import from the others (bottom to top).  Nothing imports
# the command line; the client library needs only the wire contract and the Redis layer.
WORKERS_LAYERS: dict[str, set[str]] = {
    "wire": set(),  # entries, replies, error codes, names: the wire contract's formats
    "redisio": {"wire"},  # connections, error translation, keys, scripts and lua/, replies, durability
    "observability": {"wire", "redisio"},  # Prometheus metrics
    "sessions": {"wire", "redisio"},  # a session's stored state, its cache and its owner
    "streams": {"wire", "redisio", "sessions"},  # the stream tools of seed 001
    "actions": {"wire", "redisio", "sessions", "observability"},  # seed 000 section 11 and its RQ jobs
    "answers": {"wire", "redisio", "sessions", "observability"},  # answer-ui@1 tools and view state
    "runtime": {"wire", "redisio", "sessions", "observability", "streams", "actions", "answers"},
    "client": {"wire", "redisio"},
    "cli": {"wire", "redisio", "sessions", "observability", "streams", "actions", "answers", "runtime", "client"},
}


def _folder(module: str) -> str:
    return module.split(".")[1] if module.count(".") else ""


def test_workers_is_one_folder_per_concept_and_nothing_else() -> None:
    assert {_folder(name) for name in _modules(WORKERS)} == {"", *WORKERS_LAYERS}
    assert [name for name in _modules(WORKERS) if _folder(name) == ""] == ["workers"]


def test_each_workers_folder_imports_only_the_folders_beneath_it() -> None:
    for name, imported in _graph(WORKERS).items():
        for other in imported:
            if _folder(other) != _folder(name):
                assert _folder(other) in WORKERS_LAYERS[_folder(name)], f"{name} imports {other}"


def test_the_import_graph_of_workers_has_no_cycle() -> None:
    assert _cycle(_graph(WORKERS)) == []


def test_the_workers_layers_have_no_cycle() -> None:
    assert _cycle(WORKERS_LAYERS) == []
