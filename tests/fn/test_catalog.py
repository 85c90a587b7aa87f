"""Function catalogs (KEP-2906): loading, validation at catalog lines, trust,
resolution order, exec downloads (sha256, cache, unpacking) and containers.

Remote catalogs and archives are served from a loopback HTTP server only."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.server
import io
import os
import stat
import subprocess
import sys
import tarfile
import threading
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from krmcheck.fn import catalog as cat
from krmcheck.fn.loader import PluginLoader
from krmcheck.fn.spec import Mount
from krmcheck.kustomize import kustomization as kfile
from krmcheck.kustomize.plugins import Config
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.tree.emit import emit_all
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Location, Origin

PROJECT = Path(__file__).resolve().parents[2]
FIXTURE = PROJECT / "fixtures" / "catalogs"
LINUX = ("linux", "amd64")

HEAD = """\
apiVersion: config.kubernetes.io/v1alpha1
kind: Catalog
metadata:
  name: team
spec:
  krmFunctions:
"""


def exec_function(kind: str = "SetAnnotation", sha: str = "0" * 64, uri: str = "fn.tar.gz",
                  version: str = "v1", group: str = "example.com", os_name: str = "linux") -> str:
    return f"""\
  - group: {group}
    names:
      kind: {kind}
    publisher: Example Co
    versions:
    - name: {version}
      runtime:
        exec:
          platforms:
          - os: {os_name}
            arch: amd64
            bin: bin/fn
            uri: {uri}
            sha256: {sha}
"""


def container_function(kind: str, image: str, extra: str = "") -> str:
    return f"""\
  - group: example.com
    names:
      kind: {kind}
    publisher: Example Co
    versions:
    - name: v1
      runtime:
        container:
          image: {image}
{extra}"""


def tgz(members: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def ctx(tmp_path: Path, *trusted: str, network: bool = False) -> cat.CatalogContext:
    return cat.CatalogContext(frozenset(trusted), network, tmp_path / "cache", LINUX)


def local(tmp_path: Path, rel: str) -> cat.CatalogRef:
    return cat.reference(rel, tmp_path, Files(tmp_path), None)


def config(text: str) -> Config:
    doc = load_documents(text, "fn.yaml", "resource")[0]
    assert isinstance(doc, Mapping)
    return Config(doc, Origin("kustomization.yaml", 5, 3))


SET_ANNOTATION = """\
apiVersion: example.com/v1
kind: SetAnnotation
metadata:
  name: owner
spec:
  key: owner
  value: team
"""


class Server:
    """Files served on 127.0.0.1 from a dict; counts requests per path."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.hits: dict[str, int] = {}
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                outer.hits[self.path] = outer.hits.get(self.path, 0) + 1
                body = outer.files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


# --- the example under fixtures/ ---------------------------------------------------------

def test_fixture_archive_matches_its_source_and_the_catalog_digest() -> None:
    archive = (FIXTURE / "functions" / "set-annotation.tar.gz").read_bytes()
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        member = tar.extractfile("set-annotation")
        assert member is not None
        assert member.read() == (FIXTURE / "functions" / "set-annotation" / "set-annotation").read_bytes()
    catalog = cat.load_catalog(cat.reference("catalog.yaml", FIXTURE, Files(PROJECT), None),
                               cat.CatalogContext())
    digests = {p.sha256 for p in catalog.functions[0].versions[0].platforms}
    assert digests == {sha(archive)}


def test_fixture_function_resolves_installs_and_runs(tmp_path: Path) -> None:
    catalog = cat.load_catalog(cat.reference("catalog.yaml", FIXTURE, Files(PROJECT), None),
                               cat.CatalogContext())
    fn_config = config((FIXTURE / "app" / "set-annotation.yaml").read_text())
    spec = cat.resolve_from_catalogs(fn_config, [catalog], ctx(tmp_path))
    assert spec.exec_path == str((tmp_path / "cache" / "functions" / sha(
        (FIXTURE / "functions" / "set-annotation.tar.gz").read_bytes()) / "set-annotation").resolve())
    assert spec.origin == Origin("fixtures/catalogs/catalog.yaml", 20, 13, "catalog")
    resource_list = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                     "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}],
                     "functionConfig": fn_config.node.to_data()}
    done = subprocess.run([sys.executable, str(spec.exec_path)], input=yaml.safe_dump(resource_list),
                          capture_output=True, text=True, check=True)
    out = yaml.safe_load(done.stdout)
    assert out["items"][0]["metadata"]["annotations"] == {"example.com/owner": "platform-team"}


def test_the_catalog_fixture_builds(tmp_path: Path) -> None:
    from krmcheck.kustomize.plugins import FunctionOptions

    files = Files(PROJECT)
    trusted = cat.trust_keys(["fixtures/catalogs/catalog.yaml"], files, PROJECT)
    options = BuildOptions(enable_alpha_plugins=True, functions=FunctionOptions(enable_exec=True),
                           plugins=PluginLoader(cat.CatalogContext(trusted, cache_dir=tmp_path)))
    resources = Builder(files, options).build(FIXTURE / "app")
    assert emit_all([r.node for r in resources]) == """\
apiVersion: v1
data:
  mode: demo
kind: ConfigMap
metadata:
  annotations:
    example.com/owner: platform-team
  name: settings
"""


# --- reading and validating --------------------------------------------------------------

def test_reads_functions_versions_and_runtimes_with_their_lines(tmp_path: Path) -> None:
    write(tmp_path, "catalog.yaml", HEAD + exec_function(sha="a" * 64)
          + container_function("Logger", "registry.example/logger:v1.2.3",
                               f"          sha256: sha256:{'B' * 64}\n          requireNetwork: true\n"))
    catalog = cat.load_catalog(local(tmp_path, "catalog.yaml"), ctx(tmp_path))
    assert (catalog.name, catalog.kind) == ("team", "Catalog")
    first, second = catalog.functions
    assert (first.group, first.kind, first.publisher) == ("example.com", "SetAnnotation", "Example Co")
    platform = first.versions[0].platforms[0]
    assert (platform.os, platform.arch, platform.bin, platform.uri, platform.sha256) == \
        ("linux", "amd64", "bin/fn", "fn.tar.gz", "a" * 64)
    assert platform.origin == Origin("catalog.yaml", 16, 13, "catalog")
    container = second.versions[0].container
    assert container is not None
    assert (container.image, container.sha256, container.network, container.storage_mount) == \
        ("registry.example/logger:v1.2.3", "b" * 64, True, False)
    assert catalog.source.sha256 == sha((tmp_path / "catalog.yaml").read_bytes())


def test_krm_function_catalog_kind_is_accepted(tmp_path: Path) -> None:
    write(tmp_path, "c.yaml", HEAD.replace("kind: Catalog", "kind: KRMFunctionCatalog") + exec_function())
    assert cat.load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path)).kind == "KRMFunctionCatalog"


def test_a_digest_of_digits_stays_text(tmp_path: Path) -> None:
    write(tmp_path, "c.yaml", HEAD + exec_function(sha="1" * 64))
    catalog = cat.load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path))
    assert catalog.functions[0].versions[0].platforms[0].sha256 == "1" * 64


@pytest.mark.parametrize("text, where, fragment", [
    # a function without publisher: at the function item
    (HEAD + exec_function().replace("    publisher: Example Co\n", ""), (7, 5),
     "'publisher' is a required property"),
    # a digest that is not one: at the sha256 line
    (HEAD + exec_function(sha="abc"), (20, 13), "'abc' is not a sha256 digest"),
    # a platform without a digest: at the platform item
    (HEAD + exec_function().replace("            sha256: " + "0" * 64 + "\n", ""), (16, 13),
     "'sha256' is a required property"),
    # the KEP's requireFilesystem is not a field: at that key
    (HEAD + container_function("L", "l:v1", "          requireFilesystem: true\n"), (16, 11),
     "unknown field 'requireFilesystem'"),
    # an empty runtime
    (HEAD + exec_function().replace("""        exec:
          platforms:
          - os: linux
            arch: amd64
            bin: bin/fn
            uri: fn.tar.gz
            sha256: """ + "0" * 64 + "\n", "        {}\n"), (13, 7), "a runtime needs container, exec or both"),
    # a kind that is not a catalog
    (HEAD.replace("kind: Catalog", "kind: Catalogue") + exec_function(), (2, 1), "'Catalogue' is not one of"),
    # an unsupported os
    (HEAD + exec_function(os_name="plan9"), (16, 13), "'plan9' is not one of"),
])
def test_schema_errors_point_at_the_catalog_line(tmp_path: Path, text: str, where: tuple[int, int],
                                                 fragment: str) -> None:
    write(tmp_path, "catalog.yaml", text)
    with pytest.raises(BuildError) as e:
        cat.load_catalog(local(tmp_path, "catalog.yaml"), ctx(tmp_path))
    assert e.value.location == Location("catalog.yaml", *where)
    assert "invalid catalog catalog.yaml" in e.value.message
    assert fragment in e.value.message


def test_yaml_errors_and_extra_documents_have_lines(tmp_path: Path) -> None:
    write(tmp_path, "bad.yaml", HEAD + "  - group: [\n")
    with pytest.raises(BuildError) as e:
        cat.load_catalog(local(tmp_path, "bad.yaml"), ctx(tmp_path))
    assert e.value.location is not None and e.value.location.path == "bad.yaml"
    write(tmp_path, "two.yaml", HEAD + exec_function() + "---\nkind: Catalog\n")
    with pytest.raises(BuildError, match="exactly one Catalog") as e:
        cat.load_catalog(local(tmp_path, "two.yaml"), ctx(tmp_path))
    assert e.value.location == Location("two.yaml", 22, 1)


# --- references and trust -------------------------------------------------------------------

@pytest.mark.parametrize("text, kind", [
    ("catalog.yaml", cat.LOCAL),
    ("https://example.com/kustomize/catalog.yaml", cat.HTTP),
    ("https://github.com/org/repo//catalogs/c.yaml?ref=v1", cat.GIT),
    ("https://example.com/org/repo/c.yaml?ref=main", cat.GIT),
    ("git@github.com:org/repo.git//c.yaml", cat.GIT),
    ("file:///srv/repo//c.yaml", cat.GIT),
    ("oci://registry.example/catalogs/team:v1", cat.OCI),
])
def test_references_are_classified(tmp_path: Path, text: str, kind: str) -> None:
    write(tmp_path, "catalog.yaml", "")
    assert local(tmp_path, text).kind == kind


def layer(tmp_path: Path, catalogs: str) -> kfile.Kustomization:
    write(tmp_path, "app/kustomization.yaml", f"resources: []\ncatalogs:\n{catalogs}")
    return kfile.load(tmp_path / "app", Files(tmp_path))


def test_an_untrusted_catalog_is_an_error_at_its_entry(tmp_path: Path) -> None:
    k = layer(tmp_path, "- ../shared/catalog.yaml\n- https://example.com/c.yaml\n")
    trusted = cat.trust_keys(["shared/catalog.yaml"], Files(tmp_path), tmp_path)
    with pytest.raises(BuildError) as e:
        cat.for_layer(k, Files(tmp_path), ctx(tmp_path, *trusted))
    assert e.value.location == Location("app/kustomization.yaml", 4, 3)
    assert "catalog 'https://example.com/c.yaml' is not trusted" in e.value.message
    assert "--trusted-catalog https://example.com/c.yaml" in e.value.message


def test_trusted_local_paths_are_taken_from_the_current_directory(tmp_path: Path) -> None:
    k = layer(tmp_path, "- ../shared/catalog.yaml\n")
    files = Files(tmp_path)
    trusted = cat.trust_keys(["../shared/catalog.yaml"], files, tmp_path / "app")
    found = cat.for_layer(k, files, ctx(tmp_path, *trusted))
    assert [r.identity for r in found.refs] == ["shared/catalog.yaml"]
    assert found.context.layer == tmp_path / "app"
    with pytest.raises(BuildError, match="not trusted"):
        cat.for_layer(k, files, ctx(tmp_path, *cat.trust_keys(["catalog.yaml"], files, tmp_path)))


def test_build_refuses_an_untrusted_catalog_before_anything_else(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- missing.yaml\ncatalogs:\n- c.yaml\n")
    with pytest.raises(BuildError) as e:
        Builder(Files(tmp_path), BuildOptions(plugins=PluginLoader())).build(tmp_path / "app")
    assert e.value.location == Location("app/kustomization.yaml", 4, 3)
    assert "checking catalogs of app/kustomization.yaml" in str(e.value)


def test_a_trusted_catalog_nobody_uses_is_never_fetched(tmp_path: Path, server: Server) -> None:
    url = f"{server.url}/catalog.yaml"
    write(tmp_path, "app/kustomization.yaml", f"resources:\n- cm.yaml\ncatalogs:\n- {url}\n")
    write(tmp_path, "app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    options = BuildOptions(plugins=PluginLoader(ctx(tmp_path, url, network=True)))
    resources = Builder(Files(tmp_path), options).build(tmp_path / "app")
    assert emit_all([r.node for r in resources]) == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
    assert server.hits == {}


# --- resolution ---------------------------------------------------------------------------

def two_catalogs(tmp_path: Path) -> tuple[cat.Catalog, cat.Catalog]:
    write(tmp_path, "one.yaml", HEAD + container_function("Other", "one/other:latest")
          + container_function("SetAnnotation", "one/first:latest")
          + container_function("SetAnnotation", "one/second:latest"))
    write(tmp_path, "two.yaml", HEAD + container_function("SetAnnotation", "two/set:latest")
          + container_function("Logger", "two/logger:latest"))
    c = ctx(tmp_path)
    return cat.load_catalog(local(tmp_path, "one.yaml"), c), cat.load_catalog(local(tmp_path, "two.yaml"), c)


def test_first_catalog_then_first_function_wins(tmp_path: Path) -> None:
    one, two = two_catalogs(tmp_path)
    c = ctx(tmp_path)
    assert cat.resolve_from_catalogs(config(SET_ANNOTATION), [one, two], c).image == "one/first:latest"
    assert cat.resolve_from_catalogs(config(SET_ANNOTATION), [two, one], c).image == "two/set:latest"
    logger = SET_ANNOTATION.replace("SetAnnotation", "Logger")
    assert cat.resolve_from_catalogs(config(logger), [one, two], c).image == "two/logger:latest"


def test_no_match_names_the_kind_and_the_catalogs_searched(tmp_path: Path) -> None:
    one, two = two_catalogs(tmp_path)
    v2 = SET_ANNOTATION.replace("example.com/v1", "example.com/v2")
    with pytest.raises(BuildError) as e:
        cat.resolve_from_catalogs(config(v2), [one, two], ctx(tmp_path))
    assert e.value.location == Location("fn.yaml", 1, 1)
    message = e.value.message
    assert "no catalog has a function for kind 'SetAnnotation' in example.com/v2" in message
    assert "searched one.yaml, two.yaml" in message
    assert "one.yaml has it in version v1" in message
    with pytest.raises(BuildError, match="its kustomization lists no catalogs"):
        cat.resolve_from_catalogs(config(SET_ANNOTATION), [], ctx(tmp_path))


def test_an_explicit_runtime_is_recognised() -> None:
    assert not cat.has_explicit_runtime(config(SET_ANNOTATION))
    explicit = SET_ANNOTATION.replace("  name: owner\n", """\
  name: owner
  annotations:
    config.kubernetes.io/function: |
      container:
        image: example/set:v1
""")
    assert cat.has_explicit_runtime(config(explicit))


# --- containers ------------------------------------------------------------------------------

@pytest.mark.parametrize("image, digest, expected", [
    ("registry.example/fn:v1.2.3", "a" * 64, f"registry.example/fn:v1.2.3@sha256:{'a' * 64}"),
    ("registry.example/fn:latest", None, "registry.example/fn:latest"),
    ("registry.example:5000/fn", None, "registry.example:5000/fn"),
    (f"registry.example/fn@sha256:{'c' * 64}", "c" * 64, f"registry.example/fn@sha256:{'c' * 64}"),
])
def test_container_images_are_pinned(image: str, digest: str | None, expected: str) -> None:
    assert cat.pinned_image(cat.Container(image, digest, False, False, Origin("c.yaml", 1, 1))) == expected


@pytest.mark.parametrize("image, digest, fragment", [
    ("registry.example/fn:v1.2.3", None, "has a version tag but no sha256"),
    (f"registry.example/fn@sha256:{'c' * 64}", "d" * 64, "but the catalog's sha256 says"),
])
def test_container_pin_errors(image: str, digest: str | None, fragment: str) -> None:
    with pytest.raises(BuildError, match=fragment) as e:
        cat.pinned_image(cat.Container(image, digest, False, False, Origin("c.yaml", 9, 11)))
    assert e.value.location == Location("c.yaml", 9, 11)


def test_network_and_storage_mount_requests_reach_the_spec(tmp_path: Path) -> None:
    write(tmp_path, "c.yaml", HEAD + container_function(
        "SetAnnotation", "fn:latest", "          requireNetwork: true\n          requireStorageMount: true\n"))
    catalog = cat.load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path))
    c = dataclasses.replace(ctx(tmp_path), layer=tmp_path / "app")
    spec = cat.resolve_from_catalogs(config(SET_ANNOTATION), [catalog], c)
    assert (spec.image, spec.network, spec.exec_path) == ("fn:latest", True, None)
    assert spec.mounts == (Mount("bind", str(tmp_path / "app"), cat.STORAGE_MOUNT_TARGET),)
    assert spec.origin == Origin("c.yaml", 14, 9, "catalog")


def test_exec_for_this_platform_is_preferred_else_container(tmp_path: Path) -> None:
    archive = tgz({"bin/fn": b"#!/bin/sh\ncat\n"})
    write(tmp_path, "fn.tar.gz", archive)
    both = exec_function(sha=sha(archive)) + "        container:\n          image: fn:latest\n"
    write(tmp_path, "c.yaml", HEAD + both)
    catalog = cat.load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path))
    assert cat.resolve_from_catalogs(config(SET_ANNOTATION), [catalog], ctx(tmp_path)).exec_path
    mac = dataclasses.replace(ctx(tmp_path), platform=("darwin", "arm64"))
    assert cat.resolve_from_catalogs(config(SET_ANNOTATION), [catalog], mac).image == "fn:latest"
    write(tmp_path, "exec-only.yaml", HEAD + exec_function(sha=sha(archive)))
    only = cat.load_catalog(local(tmp_path, "exec-only.yaml"), ctx(tmp_path))
    with pytest.raises(BuildError, match="has no executable for darwin/arm64 \\(only linux/amd64\\)"):
        cat.resolve_from_catalogs(config(SET_ANNOTATION), [only], mac)


# --- exec runtimes ----------------------------------------------------------------------------

def test_archive_is_verified_unpacked_and_cached(tmp_path: Path, server: Server) -> None:
    archive = tgz({"bin/fn": b"#!/bin/sh\ncat\n", "README": b"hi\n"})
    server.files["/fns/fn.tar.gz"] = archive
    server.files["/c.yaml"] = (HEAD + exec_function(sha=sha(archive), uri="fns/fn.tar.gz")).encode()
    c = ctx(tmp_path, network=True)
    catalog = cat.load_catalog(local(tmp_path, f"{server.url}/c.yaml"), c)
    spec = cat.resolve_from_catalogs(config(SET_ANNOTATION), [catalog], c)
    exe = Path(spec.exec_path or "")
    assert exe == (tmp_path / "cache" / "functions" / sha(archive) / "bin" / "fn").resolve()
    assert exe.read_bytes() == b"#!/bin/sh\ncat\n" and exe.stat().st_mode & stat.S_IXUSR
    again = cat.resolve_from_catalogs(config(SET_ANNOTATION), [catalog], c)
    assert again.exec_path == spec.exec_path
    assert server.hits == {"/c.yaml": 1, "/fns/fn.tar.gz": 1}


def test_a_digest_mismatch_is_an_error_and_nothing_is_cached(tmp_path: Path) -> None:
    write(tmp_path, "fn.tar.gz", tgz({"bin/fn": b"x"}))
    write(tmp_path, "c.yaml", HEAD + exec_function(sha="e" * 64))
    catalog = cat.load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path))
    with pytest.raises(BuildError) as e:
        cat.resolve_from_catalogs(config(SET_ANNOTATION), [catalog], ctx(tmp_path))
    assert "but the catalog says " + "e" * 64 in e.value.message
    assert e.value.location == Location("c.yaml", 16, 13)
    assert not (tmp_path / "cache" / "functions" / ("e" * 64)).exists()


def test_a_plain_download_is_the_executable(tmp_path: Path) -> None:
    binary = b"\x7fELF not really"
    write(tmp_path, "fn.tar.gz", binary)
    write(tmp_path, "c.yaml", HEAD + exec_function(sha=sha(binary)))
    catalog = cat.load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path))
    spec = cat.resolve_from_catalogs(config(SET_ANNOTATION), [catalog], ctx(tmp_path))
    assert Path(spec.exec_path or "").read_bytes() == binary


@pytest.mark.parametrize("members, fragment", [
    ({"other": b"x"}, "has no file 'bin/fn' (it holds other)"),
    ({"../escape": b"x"}, "cannot unpack fn.tar.gz as tar.gz"),
])
def test_bad_archives(tmp_path: Path, members: dict[str, bytes], fragment: str) -> None:
    archive = tgz(members)
    write(tmp_path, "fn.tar.gz", archive)
    write(tmp_path, "c.yaml", HEAD + exec_function(sha=sha(archive)))
    catalog = cat.load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path))
    with pytest.raises(BuildError) as e:
        cat.resolve_from_catalogs(config(SET_ANNOTATION), [catalog], ctx(tmp_path))
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
    catalog = cat.load_catalog(local(repo, "catalogs/c.yaml"), ctx(tmp_path))
    with pytest.raises(BuildError, match=fragment):
        cat.resolve_from_catalogs(config(SET_ANNOTATION), [catalog], ctx(tmp_path))


# --- remote catalogs ---------------------------------------------------------------------------

def test_http_catalogs_need_the_network_and_https_off_loopback(tmp_path: Path, server: Server) -> None:
    server.files["/c.yaml"] = (HEAD + exec_function()).encode()
    url = f"{server.url}/c.yaml"
    with pytest.raises(BuildError, match="needs the network"):
        cat.load_catalog(local(tmp_path, url), ctx(tmp_path))
    assert server.hits == {}
    catalog = cat.load_catalog(local(tmp_path, url), ctx(tmp_path, network=True))
    assert catalog.source.display == url and catalog.functions[0].kind == "SetAnnotation"
    with pytest.raises(BuildError, match="over https only"):
        cat.load_catalog(local(tmp_path, "http://catalogs.example/c.yaml"), ctx(tmp_path, network=True))
    with pytest.raises(BuildError, match="HTTP status 404"):
        cat.load_catalog(local(tmp_path, f"{server.url}/missing.yaml"), ctx(tmp_path, network=True))


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
    assert ref.kind == cat.GIT
    catalog = cat.load_catalog(ref, ctx(tmp_path))  # a file:// repository needs no network
    assert catalog.source.display == f"file://{repo.as_posix()}//catalogs/c.yaml"
    assert catalog.functions[0].origin.path == catalog.source.display
    spec = cat.resolve_from_catalogs(config(SET_ANNOTATION), [catalog], ctx(tmp_path))
    assert Path(spec.exec_path or "").read_bytes() == b"#!/bin/sh\n"


def test_oci_catalogs_need_oras(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("KRMCHECK_ORAS", raising=False)
    with pytest.raises(BuildError, match="pulls with the oras CLI"):
        cat.load_catalog(local(tmp_path, "oci://registry.example/c:v1"), ctx(tmp_path, network=True))


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
    catalog = cat.load_catalog(local(tmp_path, "oci://registry.example/c:v1"), ctx(tmp_path, network=True))
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
        found = cat.for_layer(kfile.load(tmp_path / name, Files(tmp_path)), Files(tmp_path), c)
        assert found.resolve(config(SET_ANNOTATION)).image == "fn:latest"
    assert server.hits == {"/c.yaml": 1}


def test_default_cache_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cat.CatalogContext().cache == tmp_path / "krmcheck"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cat.CatalogContext().cache == Path.home() / ".cache" / "krmcheck"


def test_host_platform_uses_go_names() -> None:
    os_name, arch = cat.host_platform()
    assert os_name in ("linux", "darwin", "windows", sys.platform)
    assert arch != "x86_64" and arch != "aarch64"
    assert os.sep  # keep os imported for the platform check above
