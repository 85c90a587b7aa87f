"""What a resource file must hold, as kustomize's resource factory asks it:
a kind, and a name unless the kind is a list."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files


def build(tmp_path: Path, resource: str) -> list[str]:
    (tmp_path / "kustomization.yaml").write_text("resources:\n- cm.yaml\n")
    (tmp_path / "cm.yaml").write_text(resource)
    return [r.name for r in Builder(Files(tmp_path), BuildOptions()).build(tmp_path)]


@pytest.mark.parametrize("resource, line", [
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    a: b\n", 3),  # at metadata
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: null\n", 4),  # at the name
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ''\n", 4),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n", 1),  # no metadata at all
    ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  data: {}\n", 4),  # a list's item
])
def test_a_resource_without_a_name_is_an_error_at_its_line(tmp_path: Path, resource: str, line: int) -> None:
    with pytest.raises(BuildError) as info:
        build(tmp_path, resource)
    assert "missing metadata.name" in str(info.value)
    assert info.value.location is not None
    assert (info.value.location.path, info.value.location.line) == ("cm.yaml", line)


def test_a_list_needs_no_name_and_a_number_is_a_name(tmp_path: Path) -> None:
    assert build(tmp_path, "apiVersion: v1\nkind: ConfigMapList\nmetadata: {}\nitems: []\n") == []
    assert build(tmp_path, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 0\n") == ["0"]


def test_a_plain_manifest_is_read_as_kubectl_apply_reads_it_and_a_kustomization_as_kustomize(
        tmp_path: Path) -> None:
    # kubectl's sigs.k8s.io/yaml decodes with go-yaml v2: plain yes/on/off are
    # booleans there; kustomize's go-yaml v3 keeps them strings
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  hostNetwork: on\n"
           "  containers:\n  - {name: c, image: nginx, env: [{name: A, value: yes}, {name: B, value: 'yes'}]}\n")
    (tmp_path / "pod.yaml").write_text(pod)
    [plain] = Builder(Files(tmp_path), BuildOptions()).load_manifest(tmp_path / "pod.yaml", as_kubectl=True)
    data = plain.node.to_data()
    assert data["spec"]["hostNetwork"] is True
    assert [e["value"] for e in data["spec"]["containers"][0]["env"]] == [True, "yes"]
    # what a controller's discovery reads of the same file is kustomize's reading
    [seen] = Builder(Files(tmp_path), BuildOptions()).load_manifest(tmp_path / "pod.yaml")
    assert seen.node.to_data()["spec"]["hostNetwork"] == "on"
    (tmp_path / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    [built] = Builder(Files(tmp_path), BuildOptions()).build(tmp_path)
    assert built.node.to_data()["spec"]["hostNetwork"] == "on"


def test_a_plain_timestamp_is_the_text_kubectl_apply_reads_and_kustomize_writes_it_out(tmp_path: Path) -> None:
    # go-yaml v2 keeps a timestamp decoded into interface{} as its text;
    # kubectl kustomize v5.5.0 writes effectiveDate: 2023-10-15 as
    # "2023-10-15T00:00:00Z" (a LokiStack's date pattern refuses the latter)
    doc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  d: 2023-10-15\n  q: '2023-10-15'\n"
    (tmp_path / "cm.yaml").write_text(doc)
    [plain] = Builder(Files(tmp_path), BuildOptions()).load_manifest(tmp_path / "cm.yaml", as_kubectl=True)
    assert plain.node.to_data()["data"] == {"d": "2023-10-15", "q": "2023-10-15"}
    (tmp_path / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    [built] = Builder(Files(tmp_path), BuildOptions()).build(tmp_path)
    assert built.node.to_data()["data"] == {"d": "2023-10-15T00:00:00Z", "q": "2023-10-15"}


@pytest.mark.parametrize("value, kept", [
    ("true", False), ('"true"', False), ("True", False), ("yes", False), ('"foo"', False), ("null", False),
    ("false", True), ('"false"', True), ("False", False),  # only the text false keeps it, as kubectl does
])
def test_local_config_leaves_the_resource_out_unless_it_says_false(tmp_path: Path, value: str, kept: bool) -> None:
    resource = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: values\n  annotations:\n"
                f"    config.kubernetes.io/local-config: {value}\n")
    assert build(tmp_path, resource) == (["values"] if kept else [])


def test_local_config_a_json_patch_adds_as_a_boolean_leaves_the_resource_out(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(
        "resources:\n- cm.yaml\npatches:\n- target: {kind: ConfigMap, name: key}\n  patch: |-\n"
        "    - op: add\n      path: /metadata/annotations\n      value:\n        config.kubernetes.io/local-config: true\n")
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: key\n---\n"
                                      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n")
    assert [r.name for r in Builder(Files(tmp_path), BuildOptions()).build(tmp_path)] == ["kept"]


def test_build_annotations_in_a_resource_file_are_its_build_state(tmp_path: Path) -> None:
    # a base object copied from a build's output keeps kustomize's
    # internal.config.kubernetes.io/previous* annotations: kustomize matches a
    # patch naming the previous id (default namespace, old name) and leaves
    # the annotations out of the output (kubectl kustomize v5.5.0)
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns1\n  annotations:\n"
        "    internal.config.kubernetes.io/previousKinds: ConfigMap\n"
        "    internal.config.kubernetes.io/previousNames: old\n"
        "    internal.config.kubernetes.io/previousNamespaces: default\n    keep: me\ndata:\n  x: y\n")
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [cm.yaml]\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n"
        "    metadata:\n      name: old\n    data:\n      z: w\n")
    [built] = Builder(Files(tmp_path), BuildOptions()).build(tmp_path)
    data = built.node.to_data()
    assert data["data"] == {"x": "y", "z": "w"}
    assert data["metadata"]["annotations"] == {"keep": "me"}
