"""The example under fixtures/catalogs: its archive agrees with its source
and its catalog, and it resolves, installs, runs and builds."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import yaml

from krmcheck.fn.catalog.resolve import resolve_from_catalogs
from krmcheck.fn.catalog.sources import load_catalog, reference, trust_keys
from krmcheck.fn.catalog_context import CatalogContext
from krmcheck.fn.loader import PluginLoader
from krmcheck.kustomize.target import Builder, BuildOptions
from krmcheck.resource.files import Files
from krmcheck.tree.emit import emit_all
from krmcheck.tree.origin import Origin
from tests.fn.catalog.catalogs import FIXTURE, PROJECT, config, ctx, sha


def test_fixture_archive_matches_its_source_and_the_catalog_digest() -> None:
    archive = (FIXTURE / "functions" / "set-annotation.tar.gz").read_bytes()
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        member = tar.extractfile("set-annotation")
        assert member is not None
        assert member.read() == (FIXTURE / "functions" / "set-annotation" / "set-annotation").read_bytes()
    catalog = load_catalog(reference("catalog.yaml", FIXTURE, Files(PROJECT), None),
                               CatalogContext())
    digests = {p.sha256 for p in catalog.functions[0].versions[0].platforms}
    assert digests == {sha(archive)}


def test_fixture_function_resolves_installs_and_runs(tmp_path: Path) -> None:
    catalog = load_catalog(reference("catalog.yaml", FIXTURE, Files(PROJECT), None),
                               CatalogContext())
    fn_config = config((FIXTURE / "app" / "set-annotation.yaml").read_text())
    spec = resolve_from_catalogs(fn_config, [catalog], ctx(tmp_path))
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
    trusted = trust_keys(["fixtures/catalogs/catalog.yaml"], files, PROJECT)
    options = BuildOptions(enable_alpha_plugins=True, functions=FunctionOptions(enable_exec=True),
                           plugins=PluginLoader(CatalogContext(trusted, cache_dir=tmp_path)))
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
