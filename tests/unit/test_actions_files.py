"""The built-in file capabilities stay inside their root: every escape is refused with a code."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from config.capabilities import CapabilityContext
from workers.actions.capabilities.files import CapabilityError, read_file, write_file


@pytest.fixture()
def context(tmp_path: Path) -> CapabilityContext:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("1\n2\n3\n", "utf-8")
    (tmp_path / "outside.txt").write_text("secret\n", "utf-8")
    return CapabilityContext(files_root=root, max_file_bytes=1_024)


def refused(code: str, call, *args) -> None:
    with pytest.raises(CapabilityError) as caught:
        call(*args)
    assert caught.value.code == code


def test_read_file_counts_lines_and_keeps_the_content_private_to_the_job(context: CapabilityContext) -> None:
    result = read_file("a.txt", 2, context=context)
    assert result == {"totalLines": 3, "content": "1\n2"}


@pytest.mark.parametrize(("path", "code"), [
    ("/etc/passwd", "absolute_path"), ("~/x", "absolute_path"), ("../outside.txt", "parent_reference"),
    ("sub/../../outside.txt", "parent_reference"), ("a\x00b", "invalid_path"), (".", "invalid_path"),
    ("missing.txt", "not_found"), ("a\\..\\b", "invalid_path"),
])
def test_read_file_refuses_paths_that_are_not_plain_relative_paths(context: CapabilityContext, path: str,
                                                                   code: str) -> None:
    refused(code, lambda: read_file(path, 10, context=context))


def test_a_symlink_out_of_the_root_is_refused_and_one_inside_is_followed(context: CapabilityContext) -> None:
    root = context.files_root
    (root / "escape").symlink_to(root.parent / "outside.txt")
    (root / "dir-escape").symlink_to(root.parent)
    (root / "inside").symlink_to(root / "a.txt")
    refused("outside_root", lambda: read_file("escape", 10, context=context))
    refused("outside_root", lambda: read_file("dir-escape/outside.txt", 10, context=context))
    assert read_file("inside", 10, context=context)["totalLines"] == 3
    refused("outside_root", lambda: write_file("escape", "x", context=context))
    refused("outside_root", lambda: write_file("dir-escape/new.txt", "x", context=context))
    assert (root.parent / "outside.txt").read_text() == "secret\n"
    assert not (root.parent / "new.txt").exists()


def test_devices_fifos_directories_and_oversize_files_are_refused(context: CapabilityContext) -> None:
    root = context.files_root
    os.mkfifo(root / "fifo")
    (root / "dev").symlink_to("/dev/null")
    (root / "big.txt").write_bytes(b"x" * 2_000)
    (root / "dir").mkdir()
    refused("not_regular_file", lambda: read_file("fifo", 10, context=context))
    refused("outside_root", lambda: read_file("dev", 10, context=context))
    refused("not_regular_file", lambda: read_file("dir", 10, context=context))
    refused("too_large", lambda: read_file("big.txt", 10, context=context))
    refused("too_large", lambda: write_file("new.txt", "x" * 2_000, context=context))
    refused("not_regular_file", lambda: write_file("fifo", "x", context=context))


def test_write_file_creates_parents_then_updates_atomically(context: CapabilityContext) -> None:
    assert write_file("notes/a/b.md", "hello", context=context)["operation"] == "create"
    assert write_file("notes/a/b.md", "again", context=context)["operation"] == "update"
    assert (context.files_root / "notes" / "a" / "b.md").read_text() == "again"
    assert not [p for p in (context.files_root / "notes" / "a").iterdir() if p.name.startswith(".iui-")]
    refused("parent_reference", lambda: write_file("../x.md", "x", context=context))
    refused("absolute_path", lambda: write_file(str(context.files_root / "x.md"), "x", context=context))


def test_a_missing_root_is_refused(tmp_path: Path) -> None:
    context = CapabilityContext(files_root=tmp_path / "nowhere", max_file_bytes=1_024)
    refused("root_missing", lambda: read_file("a.txt", 1, context=context))
