"""Exec runtimes: downloads checked against their sha256, unpacked safely
and cached, and uris kept where they belong."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from krmcheck.fn.catalog.resolve import resolve_from_catalogs
from krmcheck.fn.catalog.sources import load_catalog
from krmcheck.resource.errors import BuildError
from krmcheck.tree.origin import Location
from tests.fn.catalog.catalogs import (HEAD, SET_ANNOTATION, Server, config, ctx, exec_function,
    local, sha, tgz, write)


def test_archive_is_verified_unpacked_and_cached(tmp_path: Path, server: Server) -> None:
    archive = tgz({"bin/fn": b"#!/bin/sh\ncat\n", "README": b"hi\n"})
    server.files["/fns/fn.tar.gz"] = archive
    server.files["/c.yaml"] = (HEAD + exec_function(sha=sha(archive), uri="fns/fn.tar.gz")).encode()
    c = ctx(tmp_path, network=True)
    catalog = load_catalog(local(tmp_path, f"{server.url}/c.yaml"), c)
    spec = resolve_from_catalogs(config(SET_ANNOTATION), [catalog], c)
    exe = Path(spec.exec_path or "")
    assert exe == (tmp_path / "cache" / "functions" / sha(archive) / "bin" / "fn").resolve()
    assert exe.read_bytes() == b"#!/bin/sh\ncat\n" and exe.stat().st_mode & stat.S_IXUSR
    again = resolve_from_catalogs(config(SET_ANNOTATION), [catalog], c)
    assert again.exec_path == spec.exec_path
    assert server.hits == {"/c.yaml": 1, "/fns/fn.tar.gz": 1}


def test_a_digest_mismatch_is_an_error_and_nothing_is_cached(tmp_path: Path) -> None:
    write(tmp_path, "fn.tar.gz", tgz({"bin/fn": b"x"}))
    write(tmp_path, "c.yaml", HEAD + exec_function(sha="e" * 64))
    catalog = load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path))
    with pytest.raises(BuildError) as e:
        resolve_from_catalogs(config(SET_ANNOTATION), [catalog], ctx(tmp_path))
    assert "but the catalog says " + "e" * 64 in e.value.message
    assert e.value.location == Location("c.yaml", 16, 13)
    assert not (tmp_path / "cache" / "functions" / ("e" * 64)).exists()


def test_a_plain_download_is_the_executable(tmp_path: Path) -> None:
    binary = b"\x7fELF not really"
    write(tmp_path, "fn.tar.gz", binary)
    write(tmp_path, "c.yaml", HEAD + exec_function(sha=sha(binary)))
    catalog = load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path))
    spec = resolve_from_catalogs(config(SET_ANNOTATION), [catalog], ctx(tmp_path))
    assert Path(spec.exec_path or "").read_bytes() == binary


@pytest.mark.parametrize("members, fragment", [
    ({"other": b"x"}, "has no file 'bin/fn' (it holds other)"),
    ({"../escape": b"x"}, "cannot unpack fn.tar.gz as tar.gz"),
])
def test_bad_archives(tmp_path: Path, members: dict[str, bytes], fragment: str) -> None:
    archive = tgz(members)
    write(tmp_path, "fn.tar.gz", archive)
    write(tmp_path, "c.yaml", HEAD + exec_function(sha=sha(archive)))
    catalog = load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path))
    with pytest.raises(BuildError) as e:
        resolve_from_catalogs(config(SET_ANNOTATION), [catalog], ctx(tmp_path))
    assert fragment in e.value.message
    assert not (tmp_path / "escape").exists() and not (tmp_path / "cache" / "escape").exists()


@pytest.mark.parametrize("uri, fragment", [
    ("../../outside.tar.gz", "leaves the catalog's repository"),
    ("/abs/fn.tar.gz", "must be an https://, http:// or oci:// URL or a path relative"),
    ("ftp://example.com/fn.tar.gz", "must be an https://, http:// or oci:// URL"),
])
def test_runtime_uris_stay_where_they_belong(tmp_path: Path, uri: str, fragment: str) -> None:
    repo = tmp_path / "repo"
    write(tmp_path, "outside.tar.gz", b"x")
    write(repo, "catalogs/c.yaml", HEAD + exec_function(uri=uri))
    catalog = load_catalog(local(repo, "catalogs/c.yaml"), ctx(tmp_path))
    with pytest.raises(BuildError, match=fragment):
        resolve_from_catalogs(config(SET_ANNOTATION), [catalog], ctx(tmp_path))
