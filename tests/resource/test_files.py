"""files.inside: whether a path is a root or below it, through symlinks or as written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from krmcheck.resource.files import inside


def test_a_root_holds_itself_and_what_is_below_it(tmp_path: Path) -> None:
    for resolve in (True, False):
        assert inside(tmp_path, tmp_path, resolve=resolve)
        assert inside(tmp_path / "a" / "b.yaml", tmp_path, resolve=resolve)
        assert inside(str(tmp_path / "a" / ".." / "c"), str(tmp_path), resolve=resolve)
        assert not inside(tmp_path.parent, tmp_path, resolve=resolve)
        assert not inside(tmp_path / ".." / "x", tmp_path, resolve=resolve)


def test_a_sibling_sharing_a_prefix_is_outside(tmp_path: Path) -> None:
    for resolve in (True, False):
        assert not inside(tmp_path / "base-other" / "x", tmp_path / "base", resolve=resolve)
        assert inside(tmp_path / "base" / "x", tmp_path / "base", resolve=resolve)


def test_the_file_system_root_holds_everything() -> None:
    assert inside("/etc/hosts", "/", resolve=False)
    assert inside("/", "/", resolve=False)


def test_resolving_follows_links_out_and_in(tmp_path: Path) -> None:
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    repo.mkdir()
    elsewhere.mkdir()
    (repo / "out").symlink_to(elsewhere)
    (tmp_path / "into").symlink_to(repo)
    assert inside(repo / "out" / "x.yaml", repo, resolve=False)  # as written
    assert not inside(repo / "out" / "x.yaml", repo, resolve=True)  # where it really is
    assert not inside(tmp_path / "into" / "x.yaml", repo, resolve=False)
    assert inside(tmp_path / "into" / "x.yaml", repo, resolve=True)
    assert inside(repo / "x.yaml", tmp_path / "into", resolve=True)


@pytest.mark.parametrize("rel, expected", [
    ("a/b", True),
    ("", True),
    (".", True),
    ("a/../b", True),
    ("..", False),
    ("../a", False),
    ("a/../../b", False),
    ("a/../../here/b", False),  # climbs out and back in: outside as written
    ("/etc/passwd", False),
    ("..a", True),  # a name that starts with two dots
])
def test_a_relative_path_below_the_current_directory(rel: str, expected: bool) -> None:
    assert inside(rel, os.curdir, resolve=False) is expected


def test_a_nul_byte_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        inside(str(tmp_path / "a\0b"), tmp_path, resolve=True)
