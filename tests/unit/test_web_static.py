"""The Client's shipped files: vendored packages as recorded, no HTML sinks, CSP-clean HTML.

The page runs model-written documents under a strict CSP (`script-src 'self'`, `style-src
'self'`), so these checks are static and cheap: every vendored file is byte-for-byte the npm
file plus the rewrites its manifest lists; no shipped JavaScript of ours names an HTML
parser sink or an evaluator; the HTML has no inline script, handler attribute or style
attribute.  The one audited exception is Preact's own `dangerouslySetInnerHTML` path, which
`src/ui.js` refuses at run time (a vnode carrying it throws) and a browser test exercises.
"""

from __future__ import annotations

import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "gateway" / "web"
VENDOR = WEB / "vendor"
MANIFEST = json.loads((VENDOR / "manifest.json").read_text())

FORBIDDEN = ("innerHTML", "outerHTML", "insertAdjacentHTML", "dangerouslySetInnerHTML", "document.write",
             "eval(", "new Function", "Function(", "setTimeout('", 'setTimeout("', "srcdoc", "javascript:",
             "createContextualFragment", "DOMParser", "setAttribute('style", 'setAttribute("style', "cssText")
# Audited: Preact's optional raw-HTML prop (two mentions of the prop, two of the property it
# sets) and its string-style path (`cssText`; the Client passes style objects, if any), and the
# guard in src/ui.js that refuses the prop (its name, twice: the comment and the check).
AUDITED = {"preact.mjs": {"innerHTML": 2, "dangerouslySetInnerHTML": 2, "cssText": 2},
           "src/ui.js": {"dangerouslySetInnerHTML": 2}}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _vendored() -> list[tuple[str, dict[str, object]]]:
    return [(name, spec) for package in MANIFEST["packages"].values() for name, spec in package["files"].items()]


@pytest.mark.parametrize(("name", "spec"), _vendored(), ids=[name for name, _ in _vendored()])
def test_vendored_file_is_the_npm_file_with_only_the_listed_rewrites(name: str, spec: dict[str, object]) -> None:
    text = (VENDOR / name).read_text()
    assert _sha256(text.encode()) == spec["sha256"]
    for old, new in reversed(spec["rewrites"]):  # type: ignore[call-overload]
        if new:
            assert text.count(new) == 1
            text = text.replace(new, old)
        else:  # a dropped trailing comment comes back at the end
            text += old
    assert _sha256(text.encode()) == spec["upstream_sha256"]


def test_every_vendored_package_is_pinned_with_its_licence_beside_it() -> None:
    for name, package in MANIFEST["packages"].items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", package["version"]), name
        assert package["integrity"].startswith("sha512-"), name
        licence = (VENDOR / package["license_file"]).read_bytes()
        assert _sha256(licence) == package["license_sha256"]
        assert b"MIT License" in licence or b"Apache License" in licence
    listed = {name for name, _ in _vendored()} | {p["license_file"] for p in MANIFEST["packages"].values()}
    assert {p.name for p in VENDOR.iterdir()} == listed | {"manifest.json"}


def _shipped_js() -> list[Path]:
    return sorted(p for p in WEB.rglob("*") if p.suffix in (".js", ".mjs"))


def test_no_shipped_javascript_names_an_html_sink_or_an_evaluator() -> None:
    found = {}
    for path in _shipped_js():
        text = path.read_text()
        counts = {word: text.count(word) for word in FORBIDDEN if word in text}
        if counts:
            found[path.name if path.parent == VENDOR else str(path.relative_to(WEB))] = counts
    assert found == AUDITED


def test_the_page_imports_only_shipped_files() -> None:
    imports = re.compile(r"""(?:import|export)[^'"`;]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]""")
    for path in _shipped_js():
        for match in imports.finditer(path.read_text()):
            target = match.group(1) or match.group(2)
            assert target.startswith("."), f"{path.name} imports {target!r}: only relative module URLs"
            assert (path.parent / target).resolve().is_file(), f"{path.name} imports a missing {target!r}"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.data: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        if self.tags and data.strip():
            self.data.append((self.tags[-1][0], data))


@pytest.mark.parametrize("page", sorted(WEB.glob("*.html")) + sorted((ROOT / "tests" / "browser").glob("*.html")),
                         ids=lambda p: p.name)
def test_html_needs_no_unsafe_inline(page: Path) -> None:
    parser = _Tags()
    parser.feed(page.read_text())
    for tag, attrs in parser.tags:
        assert "style" not in attrs, f"<{tag} style=...> needs 'unsafe-inline'"
        assert not [a for a in attrs if a.startswith("on")], f"<{tag}> has an inline handler"
        if tag == "script":
            assert attrs.get("src"), "an inline <script> needs 'unsafe-inline'"
            assert attrs.get("type") == "module"
    assert not [tag for tag, _ in parser.data if tag in ("script", "style")]
    assert "<style" not in page.read_text()
