"""Catalog references classified, and catalogs read from a file, over
http(s) (only with the network), from git and from OCI; once per run.

Remote catalogs are served from a loopback HTTP server only."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from krmcheck.fn.catalog.resolve import for_layer, resolve_from_catalogs
from krmcheck.fn.catalog.sources import GIT, HTTP, LOCAL, OCI, load_catalog
from krmcheck.kustomize import kustomization as kfile
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from tests.fn.catalog.catalogs import (HEAD, SET_ANNOTATION, Server, config, container_function,
    ctx, exec_function, local, sha, tgz, write)


@pytest.mark.parametrize("text, kind", [
    ("catalog.yaml", LOCAL),
    ("https://example.com/kustomize/catalog.yaml", HTTP),
    ("https://github.com/org/repo//catalogs/c.yaml?ref=v1", GIT),
    ("https://example.com/org/repo/c.yaml?ref=main", GIT),
    ("git@github.com:org/repo.git//c.yaml", GIT),
    ("file:///srv/repo//c.yaml", GIT),
    ("oci://registry.example/catalogs/team:v1", OCI),
])
def test_references_are_classified(tmp_path: Path, text: str, kind: str) -> None:
    write(tmp_path, "catalog.yaml", "")
    assert local(tmp_path, text).kind == kind


def test_http_catalogs_need_the_network_and_https_off_loopback(tmp_path: Path, server: Server) -> None:
    server.files["/c.yaml"] = (HEAD + exec_function()).encode()
    url = f"{server.url}/c.yaml"
    with pytest.raises(BuildError, match="needs the network"):
        load_catalog(local(tmp_path, url), ctx(tmp_path))
    assert server.hits == {}
    catalog = load_catalog(local(tmp_path, url), ctx(tmp_path, network=True))
    assert catalog.source.display == url and catalog.functions[0].kind == "SetAnnotation"
    with pytest.raises(BuildError, match="over https only"):
        load_catalog(local(tmp_path, "http://catalogs.example/c.yaml"), ctx(tmp_path, network=True))
    with pytest.raises(BuildError, match="HTTP status 404"):
        load_catalog(local(tmp_path, f"{server.url}/missing.yaml"), ctx(tmp_path, network=True))


def test_git_catalogs_are_cloned_and_name_their_files_by_url(tmp_path: Path) -> None:
    from dulwich import porcelain

    repo = tmp_path / "repo"
    archive = tgz({"bin/fn": b"#!/bin/sh\n"})
    write(repo, "catalogs/c.yaml", HEAD + exec_function(sha=sha(archive), uri="../fns/fn.tar.gz"))
    write(repo, "fns/fn.tar.gz", archive)
    porcelain.init(str(repo))
    porcelain.add(str(repo), [str(repo / "catalogs/c.yaml"), str(repo / "fns/fn.tar.gz")])
    porcelain.commit(str(repo), message=b"catalog", author=b"t <t@example>", committer=b"t <t@example>")
    text = f"file://{repo.as_posix()}//catalogs/c.yaml"
    ref = local(tmp_path, text)
    assert ref.kind == GIT
    catalog = load_catalog(ref, ctx(tmp_path))  # a file:// repository needs no network
    assert catalog.source.display == f"file://{repo.as_posix()}//catalogs/c.yaml"
    assert catalog.functions[0].origin.path == catalog.source.display
    spec = resolve_from_catalogs(config(SET_ANNOTATION), [catalog], ctx(tmp_path))
    assert Path(spec.exec_path or "").read_bytes() == b"#!/bin/sh\n"


def test_oci_catalogs_need_oras(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("KRMCHECK_ORAS", raising=False)
    with pytest.raises(BuildError, match="pulls with the oras CLI"):
        load_catalog(local(tmp_path, "oci://registry.example/c:v1"), ctx(tmp_path, network=True))


def test_oci_catalogs_are_pulled_with_oras(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served = write(tmp_path, "served/catalog.yaml", HEAD + exec_function())
    log = tmp_path / "oras.log"
    fake = write(tmp_path, "bin/oras", f"""#!{sys.executable}
import shutil, sys
open({str(log)!r}, "a").write(" ".join(sys.argv[1:]) + "\\n")
shutil.copy({str(served)!r}, sys.argv[sys.argv.index("--output") + 1])
""")
    fake.chmod(0o755)
    monkeypatch.setenv("KRMCHECK_ORAS", str(fake))
    catalog = load_catalog(local(tmp_path, "oci://registry.example/c:v1"), ctx(tmp_path, network=True))
    assert catalog.functions[0].kind == "SetAnnotation"
    assert catalog.source.display == "oci://registry.example/c:v1"
    assert log.read_text().startswith("pull registry.example/c:v1 --output ")


def test_catalogs_are_read_once_per_run(tmp_path: Path, server: Server) -> None:
    server.files["/c.yaml"] = (HEAD + container_function("SetAnnotation", "fn:latest")).encode()
    url = f"{server.url}/c.yaml"
    write(tmp_path, "a/kustomization.yaml", f"resources: []\ncatalogs:\n- {url}\n")
    write(tmp_path, "b/kustomization.yaml", f"resources: []\ncatalogs:\n- {url}\n")
    c = ctx(tmp_path, url, network=True)
    for name in ("a", "b"):
        found = for_layer(kfile.load(tmp_path / name, Files(tmp_path)), Files(tmp_path), c)
        assert found.resolve(config(SET_ANNOTATION)).image == "fn:latest"
    assert server.hits == {"/c.yaml": 1}
