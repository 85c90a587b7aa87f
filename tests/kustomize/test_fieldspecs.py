"""The default field-spec tables: each loads and holds kustomize's entries."""

from __future__ import annotations

from importlib import resources

import pytest
import yaml

from krmcheck.kustomize import fieldspec
from krmcheck.kustomize.fieldspec import FieldSpec
from krmcheck.kustomize.nameref import default_name_references
from krmcheck.resource.resid import Gvk
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Origin

# Entry counts of Kustomize v5.5.0's builtinpluginconsts tables.
SIZES = {
    "commonLabels": 32,
    "commonAnnotations": 9,
    "templateLabels": 10,
    "namespace": 3,
    "images": 4,
    "replicas": 4,
    "namePrefix": 1,
    "varReference": 72,
}


def spec(path: str, group: str = "", version: str = "", kind: str = "", create: bool = False) -> FieldSpec:
    return FieldSpec(fieldspec.split_path(path), group, version, kind, create)


def raw(table: str) -> list[dict]:
    text = resources.files("krmcheck.kustomize").joinpath("fieldspecs", f"{table}.yaml").read_text()
    data = yaml.safe_load(text)
    assert isinstance(data, list)
    return data


@pytest.mark.parametrize("table, size", sorted(SIZES.items()))
def test_table_loads_with_kustomize_size(table: str, size: int) -> None:
    specs = fieldspec.defaults(table)
    assert len(specs) == size
    assert len(set(specs)) == size  # no duplicates
    assert all(s.path for s in specs)


@pytest.mark.parametrize("table", sorted(SIZES))
def test_entries_use_only_known_keys_and_omit_empty_ones(table: str) -> None:
    for entry in raw(table):
        assert set(entry) <= {"path", "group", "version", "kind", "create"}, entry
        assert all(v not in ("", None, False) for v in entry.values()), entry


@pytest.mark.parametrize("expected", [
    spec("metadata/labels", create=True),
    spec("spec/selector", version="v1", kind="Service", create=True),
    spec("spec/selector/matchLabels", kind="Deployment", create=True),
    spec("spec/selector/matchLabels", group="apps", kind="StatefulSet", create=True),
    spec("spec/template/metadata/labels", kind="Deployment", create=True),
    spec("spec/volumeClaimTemplates[]/metadata/labels", group="apps", kind="StatefulSet", create=True),
    spec("spec/selector/matchLabels", group="batch", kind="Job"),
    spec("spec/jobTemplate/spec/template/metadata/labels", group="batch", kind="CronJob", create=True),
    spec("spec/ingress/from/podSelector/matchLabels", group="networking.k8s.io", kind="NetworkPolicy"),
    spec("spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels",
         group="apps", kind="Deployment"),
])
def test_common_labels_spot_checks(expected: FieldSpec) -> None:
    assert expected in fieldspec.defaults("commonLabels")


def test_template_labels_have_no_selectors() -> None:
    specs = fieldspec.defaults("templateLabels")
    assert spec("spec/template/metadata/labels", kind="DaemonSet", create=True) in specs
    assert not [s for s in specs if "selector" in s.path or "matchLabels" in s.path]
    # the label part of commonLabels is exactly the templateLabels table
    assert set(specs) <= set(fieldspec.defaults("commonLabels"))


def test_common_annotations_spot_checks() -> None:
    specs = fieldspec.defaults("commonAnnotations")
    assert spec("metadata/annotations", create=True) in specs
    assert spec("spec/jobTemplate/spec/template/metadata/annotations",
                group="batch", kind="CronJob", create=True) in specs
    assert spec("spec/template/metadata/annotations", version="v1",
                kind="ReplicationController", create=True) in specs


def test_namespace_images_replicas_prefix() -> None:
    assert fieldspec.defaults("namespace") == (
        spec("metadata/name", kind="Namespace", create=True),
        spec("spec/service/namespace", group="apiregistration.k8s.io", kind="APIService", create=True),
        spec("spec/conversion/webhook/clientConfig/service/namespace",
             group="apiextensions.k8s.io", kind="CustomResourceDefinition"),
    )
    assert spec("spec/template/spec/initContainers[]/image", create=True) in fieldspec.defaults("images")
    assert {s.kind for s in fieldspec.defaults("replicas")} == {
        "Deployment", "ReplicationController", "ReplicaSet", "StatefulSet"}
    assert all(s.create and s.path == ("spec", "replicas") for s in fieldspec.defaults("replicas"))
    assert fieldspec.defaults("namePrefix") == (spec("metadata/name"),)


def test_var_reference_spot_checks() -> None:
    specs = fieldspec.defaults("varReference")
    assert spec("spec/tls/hosts", kind="Ingress") in specs
    assert spec("spec/template/spec/containers/env/value", kind="Deployment") in specs
    assert spec("spec/ports/targetPort", kind="Service") in specs
    assert spec("metadata/annotations") in specs


def test_escaped_slash_stays_in_one_key() -> None:
    secret = next(b for b in default_name_references() if b.gvk.kind == "Secret")
    keys = [s.path for s in secret.referrers if s.kind == "Ingress" and s.path[0] == "metadata"]
    assert ("metadata", "annotations", "ingress.kubernetes.io/auth-secret") in keys


def test_name_reference_table_size() -> None:
    table = default_name_references()
    assert len(table) == 16
    assert sum(len(b.referrers) for b in table) == 167
    pvc = next(b for b in table if b.gvk.kind == "PersistentVolumeClaim")
    assert pvc.gvk == Gvk("", "v1", "PersistentVolumeClaim")
    assert FieldSpec(("spec", "template", "spec", "volumes", "persistentVolumeClaim", "claimName"),
                     kind="StatefulSet") in pvc.referrers


def test_common_labels_table_drives_visit() -> None:
    node, = load_documents("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n", "d.yaml")
    assert isinstance(node, Mapping)
    res = Resource(node)
    origin = Origin("kustomization.yaml", 2, 1, "commonLabels")
    seen: list[str] = []
    for s in fieldspec.defaults("commonLabels"):
        fieldspec.visit(res, s, lambda parent, key: seen.append(key), origin)
    # create: true specs reach Deployment's selector and template labels;
    # create: false affinity selectors do not appear out of nothing
    assert seen.count("matchLabels") == 1 and seen.count("labels") == 2
    assert res.field("spec", "selector") is not None
    assert res.field("spec", "template", "spec") is None
