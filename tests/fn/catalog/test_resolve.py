"""Trust at each layer, resolution order (first catalog, then first
function), and the runtime chosen: exec for this platform, else a
container pinned by digest."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from krmcheck.fn.catalog.model import Catalog, Container
from krmcheck.fn.catalog.resolve import (STORAGE_MOUNT_TARGET, for_layer, has_explicit_runtime,
    pinned_image, resolve_from_catalogs)
from krmcheck.fn.catalog.sources import load_catalog, trust_keys
from krmcheck.fn.loader import PluginLoader
from krmcheck.resource.function import Mount
from krmcheck.kustomize import kustomization as kfile
from krmcheck.kustomize.target import Builder, BuildOptions
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.tree.emit import emit_all
from krmcheck.tree.origin import Location, Origin
from tests.fn.catalog.catalogs import (HEAD, SET_ANNOTATION, Server, config, container_function,
    ctx, exec_function, local, sha, tgz, write)


def layer(tmp_path: Path, catalogs: str) -> kfile.Kustomization:
    write(tmp_path, "app/kustomization.yaml", f"resources: []\ncatalogs:\n{catalogs}")
    return kfile.load(tmp_path / "app", Files(tmp_path))


def test_an_untrusted_catalog_is_an_error_at_its_entry(tmp_path: Path) -> None:
    k = layer(tmp_path, "- ../shared/catalog.yaml\n- https://example.com/c.yaml\n")
    trusted = trust_keys(["shared/catalog.yaml"], Files(tmp_path), tmp_path)
    with pytest.raises(BuildError) as e:
        for_layer(k, Files(tmp_path), ctx(tmp_path, *trusted))
    assert e.value.location == Location("app/kustomization.yaml", 4, 3)
    assert "catalog 'https://example.com/c.yaml' is not trusted" in e.value.message
    assert "--trusted-catalog https://example.com/c.yaml" in e.value.message


def test_trusted_local_paths_are_taken_from_the_current_directory(tmp_path: Path) -> None:
    k = layer(tmp_path, "- ../shared/catalog.yaml\n")
    files = Files(tmp_path)
    trusted = trust_keys(["../shared/catalog.yaml"], files, tmp_path / "app")
    found = for_layer(k, files, ctx(tmp_path, *trusted))
    assert [r.identity for r in found.refs] == ["shared/catalog.yaml"]
    assert found.context.layer == tmp_path / "app"
    with pytest.raises(BuildError, match="not trusted"):
        for_layer(k, files, ctx(tmp_path, *trust_keys(["catalog.yaml"], files, tmp_path)))


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


def two_catalogs(tmp_path: Path) -> tuple[Catalog, Catalog]:
    write(tmp_path, "one.yaml", HEAD + container_function("Other", "one/other:latest")
          + container_function("SetAnnotation", "one/first:latest")
          + container_function("SetAnnotation", "one/second:latest"))
    write(tmp_path, "two.yaml", HEAD + container_function("SetAnnotation", "two/set:latest")
          + container_function("Logger", "two/logger:latest"))
    c = ctx(tmp_path)
    return load_catalog(local(tmp_path, "one.yaml"), c), load_catalog(local(tmp_path, "two.yaml"), c)


def test_first_catalog_then_first_function_wins(tmp_path: Path) -> None:
    one, two = two_catalogs(tmp_path)
    c = ctx(tmp_path)
    assert resolve_from_catalogs(config(SET_ANNOTATION), [one, two], c).image == "one/first:latest"
    assert resolve_from_catalogs(config(SET_ANNOTATION), [two, one], c).image == "two/set:latest"
    logger = SET_ANNOTATION.replace("SetAnnotation", "Logger")
    assert resolve_from_catalogs(config(logger), [one, two], c).image == "two/logger:latest"


def test_no_match_names_the_kind_and_the_catalogs_searched(tmp_path: Path) -> None:
    one, two = two_catalogs(tmp_path)
    v2 = SET_ANNOTATION.replace("example.com/v1", "example.com/v2")
    with pytest.raises(BuildError) as e:
        resolve_from_catalogs(config(v2), [one, two], ctx(tmp_path))
    assert e.value.location == Location("fn.yaml", 1, 1)
    message = e.value.message
    assert "no catalog has a function for kind 'SetAnnotation' in example.com/v2" in message
    assert "searched one.yaml, two.yaml" in message
    assert "one.yaml has it in version v1" in message
    with pytest.raises(BuildError, match="its kustomization lists no catalogs"):
        resolve_from_catalogs(config(SET_ANNOTATION), [], ctx(tmp_path))


def test_an_explicit_runtime_is_recognised() -> None:
    assert not has_explicit_runtime(config(SET_ANNOTATION))
    explicit = SET_ANNOTATION.replace("  name: owner\n", """\
  name: owner
  annotations:
    config.kubernetes.io/function: |
      container:
        image: example/set:v1
""")
    assert has_explicit_runtime(config(explicit))


@pytest.mark.parametrize("image, digest, expected", [
    ("registry.example/fn:v1.2.3", "a" * 64, f"registry.example/fn:v1.2.3@sha256:{'a' * 64}"),
    ("registry.example/fn:latest", None, "registry.example/fn:latest"),
    ("registry.example:5000/fn", None, "registry.example:5000/fn"),
    (f"registry.example/fn@sha256:{'c' * 64}", "c" * 64, f"registry.example/fn@sha256:{'c' * 64}"),
])
def test_container_images_are_pinned(image: str, digest: str | None, expected: str) -> None:
    assert pinned_image(Container(image, digest, False, False, Origin("c.yaml", 1, 1))) == expected


@pytest.mark.parametrize("image, digest, fragment", [
    ("registry.example/fn:v1.2.3", None, "has a version tag but no sha256"),
    (f"registry.example/fn@sha256:{'c' * 64}", "d" * 64, "but the catalog's sha256 says"),
])
def test_container_pin_errors(image: str, digest: str | None, fragment: str) -> None:
    with pytest.raises(BuildError, match=fragment) as e:
        pinned_image(Container(image, digest, False, False, Origin("c.yaml", 9, 11)))
    assert e.value.location == Location("c.yaml", 9, 11)


def test_network_and_storage_mount_requests_reach_the_spec(tmp_path: Path) -> None:
    write(tmp_path, "c.yaml", HEAD + container_function(
        "SetAnnotation", "fn:latest", "          requireNetwork: true\n          requireStorageMount: true\n"))
    catalog = load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path))
    c = dataclasses.replace(ctx(tmp_path), layer=tmp_path / "app")
    spec = resolve_from_catalogs(config(SET_ANNOTATION), [catalog], c)
    assert (spec.image, spec.network, spec.exec_path) == ("fn:latest", True, None)
    assert spec.mounts == (Mount("bind", str(tmp_path / "app"), STORAGE_MOUNT_TARGET),)
    assert spec.origin == Origin("c.yaml", 14, 9, "catalog")


def test_exec_for_this_platform_is_preferred_else_container(tmp_path: Path) -> None:
    archive = tgz({"bin/fn": b"#!/bin/sh\ncat\n"})
    write(tmp_path, "fn.tar.gz", archive)
    both = exec_function(sha=sha(archive)) + "        container:\n          image: fn:latest\n"
    write(tmp_path, "c.yaml", HEAD + both)
    catalog = load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path))
    assert resolve_from_catalogs(config(SET_ANNOTATION), [catalog], ctx(tmp_path)).exec_path
    mac = dataclasses.replace(ctx(tmp_path), platform=("darwin", "arm64"))
    assert resolve_from_catalogs(config(SET_ANNOTATION), [catalog], mac).image == "fn:latest"
    write(tmp_path, "exec-only.yaml", HEAD + exec_function(sha=sha(archive)))
    only = load_catalog(local(tmp_path, "exec-only.yaml"), ctx(tmp_path))
    with pytest.raises(BuildError, match="has no executable for darwin/arm64 \\(only linux/amd64\\)"):
        resolve_from_catalogs(config(SET_ANNOTATION), [only], mac)
