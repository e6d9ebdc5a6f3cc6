"""The documentation: generated reference pages are fresh, the README is a front page, links resolve."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

from config.settings import Settings
from docs import generate
from docs.issue_codes import ERROR_CODES, ISSUE_CODES, emitted_error_codes, emitted_issue_codes
from docs.source import attribute_docstrings
from workers.wire.errors import ErrorCode

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", sorted(generate.pages()))
def test_the_generated_reference_page_is_fresh(page: str) -> None:
    written = (DOCS / page).read_text("utf-8") if (DOCS / page).exists() else ""
    assert written == generate.pages()[page], f"docs/{page} is stale: run `python -m docs.generate`"


def test_every_setting_has_a_description_in_its_field() -> None:
    missing = [name for name, field in Settings.model_fields.items() if not (field.description or "").strip()]
    assert not missing


def test_every_error_code_has_a_meaning_in_its_enum() -> None:
    meanings = attribute_docstrings(ErrorCode)
    assert [name for name in ErrorCode.__members__ if not meanings.get(name)] == []


def test_every_issue_code_core_emits_has_a_meaning_and_no_meaning_is_stale() -> None:
    emitted = set(emitted_issue_codes())
    assert emitted - set(ISSUE_CODES) == set(), "issue codes without a meaning in docs/issue_codes.py"
    assert set(ISSUE_CODES) - emitted == set(), "meanings of issue codes core no longer emits"


def test_every_error_code_of_the_runtime_helpers_has_a_meaning_and_no_meaning_is_stale() -> None:
    # an audit: `bad_digits`, `not_local`, ... were raised and documented nowhere
    emitted = emitted_error_codes()
    assert {name: sorted(codes) for name, codes in emitted.items()} == {
        name: sorted(meanings) for name, meanings in ERROR_CODES.items()}
    assert "`not_local`" in (ROOT / "docs" / "reference" / "issue-codes.md").read_text()


def test_the_settings_page_names_every_variable_with_its_default_and_bounds() -> None:
    page = generate.pages()["reference/settings.md"]
    assert "| `partitions` | `IUI_PARTITIONS` | `64` | 1–16,384 |" in page
    assert "| `capabilities` | `IUI_CAPABILITIES` | `config/capabilities.toml` |" in page
    assert "| `durability` | `IUI_DURABILITY` | `fast` | `fast`, `local`, `replica` |" in page


def test_the_metrics_page_lists_every_runtime_metric_with_its_type_and_labels() -> None:
    page = generate.pages()["reference/metrics.md"]
    assert "| `iui_rejections_total` | counter | `reason` (every [error code](error-codes.md)) |" in page
    assert "| `iui_processing_seconds` | histogram | `tool` (`intelligent_ui`, `intelligent_ui_open`," in page
    assert "| `iui_build_info` | gauge | `version`, `python` |" in page
    assert "| `iui_leases_held` | gauge | — |" in page


def _headings_slugs(text: str) -> set[str]:
    """The anchors MkDocs gives a page's headings (its default `toc` slugify)."""
    slugs = set()
    for title in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE):
        plain = re.sub(r"[`*]", "", re.sub(r"\[([^]]*)\]\([^)]*\)", r"\1", title))
        slugs.add(re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", plain).strip().lower()))
    return slugs


def _resolves(page: Path, target: str) -> bool:
    path, _, anchor = target.partition("#")
    linked = (page.parent / path).resolve() if path else page
    if not linked.exists():
        return False
    return not anchor or linked.suffix != ".md" or anchor in _headings_slugs(linked.read_text("utf-8"))


def _broken_links(page: Path) -> list[str]:
    """The relative links of a page whose file or heading anchor does not exist (URLs are not followed)."""
    return [target for target in LINK.findall(page.read_text("utf-8"))
            if not re.match(r"[a-z]+:", target) and not _resolves(page, target)]


def test_the_readme_is_a_front_page_of_at_most_250_lines() -> None:
    text = README.read_text("utf-8")
    assert len(text.splitlines()) <= 250
    assert "pip install -e . && iui demo" in text
    assert "pip install -e '.[test]' && python -m pytest" in text
    assert "`.ci/run` runs exactly this test command" in text


def test_every_link_of_the_readme_and_of_the_docs_resolves() -> None:
    pages = [README, ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]
    assert {str(page.relative_to(ROOT)): _broken_links(page) for page in pages if _broken_links(page)} == {}


def _nav_pages(nav: list) -> list[str]:
    pages = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages.extend(_nav_pages(value) if isinstance(value, list) else [value])
    return pages


def test_the_site_navigation_holds_every_page_and_the_gateway_and_client_pages() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    nav = _nav_pages(config["nav"])
    written = sorted(str(page.relative_to(DOCS)) for page in DOCS.rglob("*.md"))
    assert sorted(nav) == written
    assert {"gateway.md", "client.md", *generate.pages()} <= set(nav)


def test_ci_installs_the_docs_extra_and_builds_the_site_strictly() -> None:
    from packaging.requirements import Requirement

    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert "-e '.[test,docs]'" in ci and "mkdocs build --strict" in ci
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    docs = {Requirement(text).name: Requirement(text).specifier for text in project["optional-dependencies"]["docs"]}
    assert {"mkdocs", "mkdocs-material"} <= set(docs)
    assert all(any(spec.operator == "<" for spec in specifier) for specifier in docs.values()), docs
