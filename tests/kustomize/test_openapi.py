from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from krmcheck.kustomize import remote
from krmcheck.kustomize.openapi import PatchMeta, has_schema, patch_meta
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError, NeedsNetwork
from krmcheck.resource.files import Files
from krmcheck.resource.resid import Gvk
from krmcheck.schemas import builtin
from krmcheck.tree.emit import emit_all
from krmcheck.tree.origin import Location
from tests import checkrun
from tests.kustomize.test_configurations import CUSTOM_SCHEMA, MY_CRD, PATCH

DEPLOY = Gvk("apps", "v1", "Deployment")
POD_SPEC = ("spec", "template", "spec")


def test_containers_merge_by_name() -> None:
    meta = patch_meta(DEPLOY, POD_SPEC + ("containers",))
    assert meta == PatchMeta("merge", "name", ("name",))
    assert meta.merges


def test_container_ports_are_keyed_by_port_and_protocol() -> None:
    meta = patch_meta(DEPLOY, POD_SPEC + ("containers", "ports"))
    assert meta.merge_key == "containerPort"
    assert meta.list_keys == ("containerPort", "protocol")


def test_env_inside_containers_resolves_refs() -> None:
    assert patch_meta(DEPLOY, POD_SPEC + ("containers", "env")).merge_key == "name"
    assert patch_meta(DEPLOY, POD_SPEC + ("volumes",)).strategy == "merge,retainKeys"


def test_service_ports() -> None:
    meta = patch_meta(Gvk("", "v1", "Service"), ("spec", "ports"))
    assert meta == PatchMeta("merge", "port", ("port", "protocol"))


def test_primitive_merge_list_has_no_key() -> None:
    meta = patch_meta(DEPLOY, ("metadata", "finalizers"))
    assert meta.merges and meta.merge_key == "" and meta.list_keys == ()


def test_retain_keys_on_a_map() -> None:
    meta = patch_meta(DEPLOY, ("spec", "strategy"))
    assert meta.strategy == "retainKeys" and not meta.merges


def test_lists_without_strategy_are_replaced() -> None:
    assert not patch_meta(DEPLOY, POD_SPEC + ("containers", "args")).merges


def test_unknown_kind_and_field_have_no_meta() -> None:
    crd = Gvk("example.com", "v1", "Thing")
    assert patch_meta(crd, ("spec", "containers")) == PatchMeta("", "", ())
    assert not has_schema(crd)
    assert not has_schema(DEPLOY, ("spec", "noSuchField"))


def test_map_values_follow_additional_properties() -> None:
    assert has_schema(DEPLOY, ("metadata", "labels", "any-key"))


def test_bundled_versions_are_listed_oldest_first() -> None:
    versions = builtin.versions()
    numbers = [tuple(int(p) for p in v.split(".")) for v in versions]
    assert numbers and numbers == sorted(numbers) and numbers[0] >= (1, 25)


def test_retired_api_versions_fall_back_to_the_served_kind() -> None:
    for gvk in (Gvk("apps", "v1beta1", "Deployment"), Gvk("extensions", "v1beta1", "Deployment")):
        assert patch_meta(gvk, POD_SPEC + ("containers",)).merge_key == "name"
    assert not has_schema(Gvk("example.com", "v1", "Deployment"))


# --- a schema URL (``openapi: path: https://...``) -------------------------------------
#
# kustomize's file loader fetches it; krmcheck follows the rules of all remote
# content: downloaded with --network (once per run), else the root needs the
# network. Oracle: kubectl kustomize reading the same schema from a loopback
# server merges the custom kind's list on the schema's key, as from a local file.


class _Site(SimpleHTTPRequestHandler):
    gets: list[str] = []

    def do_GET(self) -> None:
        self.gets.append(self.path)
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("openapi-site")
    (root / "schema.json").write_text(CUSTOM_SCHEMA)
    (root / "latin1.json").write_bytes(b'{"definitions": {"caf\xe9": {}}}')
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Site, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _network_off_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(remote.NETWORK_ENV, raising=False)


def _repo(root: Path, schema: str) -> Path:
    """A base naming ``schema`` as its openapi path, an overlay patching its custom kind."""
    checkrun.write(root, "base/kustomization.yaml", f"resources:\n- crd.yaml\nopenapi:\n  path: {schema}\n")
    checkrun.write(root, "base/schema.json", CUSTOM_SCHEMA)
    checkrun.write(root, "base/crd.yaml", MY_CRD)
    checkrun.write(root, "overlay/kustomization.yaml", "resources:\n- ../base\npatches:\n- path: patch.yaml\n")
    checkrun.write(root, "overlay/patch.yaml", PATCH)
    return root


def _build(root: Path, network: bool = True, directory: str = "overlay") -> str:
    return emit_all([r.node for r in Builder(Files(root), BuildOptions(network=network)).build(root / directory)])


def test_a_schema_url_is_used_as_the_same_local_file_is(tmp_path: Path, site: str) -> None:
    remote_out = _build(_repo(tmp_path / "remote", f"{site}/schema.json"))
    local_out = _build(_repo(tmp_path / "local", "schema.json"))
    assert remote_out == local_out
    # kubectl, schema from the loopback server: merged on name, the patched element first
    assert "  items:\n  - name: b\n    size: 3\n  - name: a\n    size: 1\n" in remote_out
    # and without the schema the list would have been replaced
    checkrun.write(tmp_path / "none", "base/kustomization.yaml", "resources:\n- crd.yaml\n")
    checkrun.write(tmp_path / "none", "base/crd.yaml", MY_CRD)
    checkrun.write(tmp_path / "none", "overlay/kustomization.yaml",
                   "resources:\n- ../base\npatches:\n- path: patch.yaml\n")
    checkrun.write(tmp_path / "none", "overlay/patch.yaml", PATCH)
    assert "  - name: a" not in _build(tmp_path / "none")


def test_a_schema_url_at_the_top_replaces_the_builtin_merge_keys(tmp_path: Path, site: str) -> None:
    # as a local schema file there does (kubectl): a Deployment's containers are replaced
    checkrun.write(tmp_path, "app/kustomization.yaml", f"""\
resources:
- dep.yaml
openapi:
  path: {site}/schema.json
patches:
- patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: d}}
    spec: {{template: {{spec: {{containers: [{{name: a, image: new}}]}}}}}}
""")
    checkrun.write(tmp_path, "app/dep.yaml", """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {template: {spec: {containers: [{name: a, image: a}, {name: b, image: b}]}}}
""")
    assert "image: b" not in _build(tmp_path, directory="app")


def test_a_schema_url_is_downloaded_once_per_run(tmp_path: Path, site: str) -> None:
    url = f"{site}/schema.json?once"
    _repo(tmp_path, url)
    checkrun.write(tmp_path, "other/kustomization.yaml", f"resources:\n- ../overlay\nopenapi:\n  path: {url}\n")
    _Site.gets.clear()
    builder = Builder(Files(tmp_path), BuildOptions(network=True))
    builder.build(tmp_path / "other")
    assert _Site.gets == ["/schema.json?once"]
    assert list(builder.remotes._bodies) == [url]


def test_a_schema_url_needs_the_network(tmp_path: Path, site: str) -> None:
    url = f"{site}/schema.json"
    _repo(tmp_path, url)
    _Site.gets.clear()
    with pytest.raises(NeedsNetwork) as e:
        _build(tmp_path, network=False)
    assert (e.value.what, e.value.url) == ("openapi schema", url)
    assert e.value.location == Location("base/kustomization.yaml", 4, 3)
    assert "pass --network or set KRMCHECK_NETWORK=1" in str(e.value)
    assert _Site.gets == []


def test_krmcheck_network_env_allows_it(tmp_path: Path, site: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(remote.NETWORK_ENV, "1")
    assert "  - name: a" in _build(_repo(tmp_path, f"{site}/schema.json"), network=False)


@pytest.mark.parametrize("path,message", [
    ("missing.json", "openapi schema: fetching '{url}': HTTP Error: status code 404 (Not Found)"),
    ("latin1.json", "openapi schema '{url}': invalid UTF-8 (byte 0xe9)"),
])
def test_a_schema_url_that_cannot_be_read_is_an_error_at_its_line(tmp_path: Path, site: str,
                                                                  path: str, message: str) -> None:
    url = f"{site}/{path}"
    _repo(tmp_path, url)
    with pytest.raises(BuildError) as e:
        _build(tmp_path)
    assert not isinstance(e.value, NeedsNetwork)
    assert message.format(url=url) in str(e.value)
    assert e.value.location == Location("base/kustomization.yaml", 4, 3)


def test_a_check_offline_reports_the_root_not_checked_and_passes(tmp_path: Path, site: str) -> None:
    url = f"{site}/schema.json"
    _repo(tmp_path, url)
    checkrun.write(tmp_path, "second/kustomization.yaml", "resources:\n- ../base\nnamePrefix: s-\n")
    run = checkrun.check(tmp_path)
    assert run.code == 0, run.out
    remote_defects = [(d["path"], d["line"], d["severity"], d["message"], d["roots"])
                      for d in run.report["defects"] if d["validator"] == "remote"]
    assert remote_defects == [
        ("base/kustomization.yaml", 4, "warning", f"not checked: openapi schema '{url}' needs the network, "
         "which is off by default; pass --network to fetch it (--require-network makes this a build error)",
         ["overlay", "second"])]
    assert {r["root"]: r["needsNetwork"] for r in run.report["roots"]} == {"overlay": True, "second": True}

    required = checkrun.check(tmp_path, "--require-network")
    assert required.code == 2
    assert {r["root"] for r in required.report["roots"] if r["buildFailed"]} == {"overlay", "second"}

    online = checkrun.check(tmp_path, "--network")
    assert online.code == 0, online.out
    assert not [d for d in online.report["defects"] if d["validator"] in ("remote", "build")]
    assert not any(r["needsNetwork"] or r["buildFailed"] for r in online.report["roots"])
