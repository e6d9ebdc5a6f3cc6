"""Vendor the Client's front-end packages into gateway/web/vendor/ (run by hand on an upgrade).

`python3 .ci/vendor_web.py` runs `npm pack` for the exact versions below, copies each ESM
build and the licence, applies the listed rewrites and writes `manifest.json` with the npm
integrity of each tarball and the sha256 of every file before and after the rewrites.
tests/unit/test_web_vendor.py checks the files against the manifest (no network): a changed
byte or an undocumented edit fails it.  The rewrites exist because the page runs under
`script-src 'self'`: an import map would be an inline script, so the one bare specifier
(`preact` in the hooks build) is rewritten to a relative URL; the source-map comments are
dropped because the maps are not shipped.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VENDOR = Path(__file__).resolve().parent.parent / "gateway" / "web" / "vendor"

PACKAGES = {
    "preact": {
        "version": "11.2.0",
        "files": {
            "preact.mjs": ("package/dist/preact.mjs", [["//# sourceMappingURL=preact.mjs.map\n", ""]]),
            "hooks.mjs": ("package/hooks/dist/hooks.mjs", [
                ['from"preact"', 'from"./preact.mjs"'],
                ["//# sourceMappingURL=hooks.mjs.map\n", ""],
            ]),
        },
        "license": ("package/LICENSE", "LICENSE.preact"),
    },
    "htm": {
        "version": "3.1.1",
        "files": {"htm.mjs": ("package/dist/htm.mjs", [])},
        "license": ("package/LICENSE", "LICENSE.htm"),
    },
}


def sha256(data: bytes) -> str:
    """Lowercase hex SHA-256."""
    return hashlib.sha256(data).hexdigest()


def _pack(name: str, version: str, work: Path) -> tuple[tarfile.TarFile, str]:
    out = subprocess.run(["npm", "pack", "--json", f"{name}@{version}"], cwd=work, check=True,
                         capture_output=True, text=True).stdout
    info = json.loads(out)[0]
    return tarfile.open(work / info["filename"]), info["integrity"]


def _read(archive: tarfile.TarFile, member: str) -> bytes:
    handle = archive.extractfile(member)
    assert handle is not None, member
    return handle.read()


def main() -> int:
    """Fetch, rewrite and record every package; print what was written."""
    manifest: dict[str, object] = {"packages": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec in PACKAGES.items():
            archive, integrity = _pack(name, str(spec["version"]), Path(tmp))
            files = {}
            for target, (member, rewrites) in spec["files"].items():  # type: ignore[attr-defined]
                upstream = _read(archive, member)
                text = upstream.decode()
                for old, new in rewrites:
                    assert text.count(old) == 1, (target, old)
                    text = text.replace(old, new)
                (VENDOR / target).write_text(text)
                files[target] = {"from": member, "upstream_sha256": sha256(upstream), "rewrites": rewrites,
                                 "sha256": sha256(text.encode())}
            member, target = spec["license"]  # type: ignore[misc]
            licence = _read(archive, member)
            (VENDOR / target).write_bytes(licence)
            manifest["packages"][name] = {  # type: ignore[index]
                "version": spec["version"], "integrity": integrity, "license": "MIT",
                "license_file": target, "license_sha256": sha256(licence), "files": files,
            }
    (VENDOR / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {VENDOR}/manifest.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
