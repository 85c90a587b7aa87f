"""What resolving through catalogs may do in a run: the cache directory
and this machine's platform, in Go's names."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from krmcheck.fn.catalog_context import CatalogContext, host_platform


def test_default_cache_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert CatalogContext().cache == tmp_path / "krmcheck"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert CatalogContext().cache == Path.home() / ".cache" / "krmcheck"


def test_host_platform_uses_go_names() -> None:
    os_name, arch = host_platform()
    assert os_name in ("linux", "darwin", "windows", sys.platform)
    assert arch != "x86_64" and arch != "aarch64"
    assert os.sep  # keep os imported for the platform check above
