"""`read_file` and `write_file`: text files confined to the host's files root (`IUI_FILES_ROOT`).

Arguments come from a document the model wrote, so every path is hostile: absolute paths,
`..` segments, symlinks that resolve outside the root, devices, FIFOs, directories and files
above the size bound are refused with a `CapabilityError` carrying a stable code.  The
final component is opened with `O_NOFOLLOW` after the resolved path was checked, so a link
swapped in between is refused rather than followed.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

from pydantic import Field

from config.capabilities import CapabilityContext

FilePath = Annotated[str, Field(min_length=1, max_length=1024)]


class CapabilityError(Exception):
    """A capability refused its arguments or failed; `code` is stable, the message one line."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _relative(file_path: str) -> PurePosixPath:
    if "\x00" in file_path or "\\" in file_path:
        raise CapabilityError("invalid_path", "the path holds a NUL or a backslash")
    path = PurePosixPath(file_path)
    if path.is_absolute() or file_path.startswith("~"):
        raise CapabilityError("absolute_path", "absolute paths are refused; give a path relative to the files root")
    if ".." in path.parts:
        raise CapabilityError("parent_reference", "'..' segments are refused")
    if not path.parts or path == PurePosixPath("."):
        raise CapabilityError("invalid_path", "the path names no file")
    return path


def _root(context: CapabilityContext) -> Path:
    try:
        return context.files_root.resolve(strict=True)
    except OSError:
        raise CapabilityError("root_missing", "the host's files root does not exist") from None


def _inside(root: Path, path: Path) -> Path:
    if path != root and root not in path.parents:
        raise CapabilityError("outside_root", "the path resolves outside the files root")
    return path


def _open_regular(path: Path, flags: int, max_bytes: int) -> int:
    """A descriptor of a regular file no larger than `max_bytes` (never a link, device or FIFO)."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise CapabilityError("not_found", "the file does not exist") from None
    except OSError:
        raise CapabilityError("not_regular_file", "the path is not a readable regular file") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise CapabilityError("not_regular_file", "the path is not a regular file")
    if info.st_size > max_bytes:
        os.close(fd)
        raise CapabilityError("too_large", f"the file is larger than {max_bytes} bytes")
    return fd


def read_file(file_path: FilePath, limit: Annotated[int, Field(ge=1, le=100_000)] = 2_000, *,
              context: CapabilityContext) -> dict[str, Any]:
    """Count the lines of a text file under the root; `content` (first `limit` lines) stays private."""
    root = _root(context)
    try:
        real = (root / _relative(file_path)).resolve(strict=True)
    except FileNotFoundError:
        raise CapabilityError("not_found", "the file does not exist") from None
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        raise CapabilityError("invalid_path", "the path cannot be resolved") from None
    fd = _open_regular(_inside(root, real), os.O_RDONLY, context.max_file_bytes)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(context.max_file_bytes + 1)
    if len(data) > context.max_file_bytes:
        raise CapabilityError("too_large", f"the file is larger than {context.max_file_bytes} bytes")
    lines = data.decode("utf-8", "replace").splitlines()
    return {"totalLines": len(lines), "content": "\n".join(lines[:limit])}


def _parent(root: Path, relative: PurePosixPath) -> Path:
    """The resolved parent directory inside the root, creating missing directories."""
    existing = root
    missing: list[str] = []
    for index, part in enumerate(relative.parts[:-1]):
        candidate = existing / part
        if candidate.is_symlink() or candidate.exists():
            existing = _inside(root, candidate.resolve(strict=True))
            if not existing.is_dir():
                raise CapabilityError("not_a_directory", "a parent of the path is not a directory")
        else:
            missing = list(relative.parts[index:-1])
            break
    for part in missing:
        existing = existing / part
        existing.mkdir(mode=0o755)
    return existing


def write_file(file_path: FilePath, content: Annotated[str, Field(max_length=1_048_576)], *,
               context: CapabilityContext) -> dict[str, Any]:
    """Write a UTF-8 text file under the root atomically; `operation` is `create` or `update`."""
    data = content.encode("utf-8")
    if len(data) > context.max_file_bytes:
        raise CapabilityError("too_large", f"the content is larger than {context.max_file_bytes} bytes")
    root = _root(context)
    relative = _relative(file_path)
    parent = _parent(root, relative)
    target = parent / relative.name
    existed = target.is_symlink() or target.exists()
    if existed:
        target = _inside(root, target.resolve(strict=True))
        os.close(_open_regular(target, os.O_RDONLY, context.max_file_bytes))
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=".iui-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return {"operation": "update" if existed else "create", "bytesWritten": len(data)}
