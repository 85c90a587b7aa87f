"""The schema validator's ``unknown-kind`` rule: a kind its group/version
does not serve (a built-in one, or a group the repository's CRDs own) is
refused by the cluster, at the ``kind:`` line, naming the nearest kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.checkrun import DEPLOYMENT, WIDGET_CRD, check, write

def errors(run_report: dict[str, Any]) -> list[tuple[str, int, str, str]]:
    return [(d["path"], d["line"], d["validator"], d["message"]) for d in run_report["defects"]
            if d["severity"] == "error"]


def test_a_lower_case_kind_of_the_core_group_names_the_kind_in_a_kustomization(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: [config.yaml]\n")
    write(tmp_path, "app/config.yaml", "apiVersion: v1\nkind: configmap\nmetadata:\n  name: settings\n"
                                       "data: {a: b}\n")
    run = check(tmp_path)
    assert run.code == 1
    [(path, line, validator, message)] = errors(run.report)
    assert (path, line, validator) == ("app/config.yaml", 2, "schema")
    assert message.startswith('no kind "configmap" in v1: Kubernetes ')
    assert 'no matches for kind "configmap" in version "v1"' in message
    assert message.endswith("did you mean ConfigMap?")
    [defect] = run.report["defects"]
    assert defect["field"] == "kind"


def test_a_misspelt_kind_in_a_plain_manifest_points_at_its_kind_line(tmp_path: Path) -> None:
    # the kind written after the metadata: the finding is at the kind's own line
    text = DEPLOYMENT.replace("kind: Deployment\nmetadata:\n  name: web\n",
                              "metadata:\n  name: web\nkind: Deploymnet\n")
    write(tmp_path, "deploy.yaml", text)
    run = check(tmp_path)
    [(path, line, validator, message)] = errors(run.report)
    assert (path, line, validator) == ("deploy.yaml", 4, "schema")
    assert message.endswith("did you mean Deployment?")


def test_a_kind_far_from_every_kind_lists_the_group_versions_kinds(tmp_path: Path) -> None:
    write(tmp_path, "thing.yaml", "apiVersion: apps/v1\nkind: Gadget\nmetadata: {name: g}\n")
    [(_, line, _, message)] = errors(check(tmp_path).report)
    assert line == 2
    assert message.endswith("apps/v1 serves ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet")


def test_a_kind_of_another_group_version_names_it(tmp_path: Path) -> None:
    write(tmp_path, "pod.yaml", "kind: Pod\napiVersion: apps/v1\nmetadata: {name: p}\n"
                                "spec:\n  containers: [{name: a, image: nginx:1.27}]\n")
    [(_, line, _, message)] = errors(check(tmp_path).report)
    assert line == 1
    assert message.endswith("; Pod is served in v1")


def test_a_near_miss_of_a_kind_the_repositorys_crds_define_in_their_group(tmp_path: Path) -> None:
    write(tmp_path, "crds/widget.yaml", WIDGET_CRD)
    write(tmp_path, "app/kustomization.yaml", "resources: [widget.yaml]\n")
    write(tmp_path, "app/widget.yaml", "apiVersion: example.com/v1\nkind: Widgit\nmetadata: {name: w}\n"
                                       "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: v}\n"
                                       # a kind of the group far from the CRDs' may be defined elsewhere
                                       "---\napiVersion: example.com/v1\nkind: Workflow\nmetadata: {name: f}\n")
    run = check(tmp_path)
    [(path, line, validator, message)] = errors(run.report)
    assert (path, line, validator) == ("app/widget.yaml", 2, "schema")
    assert message == ('no kind "Widgit" in example.com/v1: the repository holds CRDs of example.com '
                       "and none defines it; did you mean Widget?")
    assert [(d["line"], d["validator"]) for d in run.report["defects"] if d["severity"] == "info"] == [
        (10, "schema-missing")]


def test_valid_kinds_and_lists_pass_beside_an_unknown_one(tmp_path: Path) -> None:
    write(tmp_path, "crds/widget.yaml", WIDGET_CRD)
    write(tmp_path, "app/kustomization.yaml", "resources: [all.yaml, deploy.yaml, list.yaml]\n")
    write(tmp_path, "app/deploy.yaml", DEPLOYMENT)
    write(tmp_path, "app/all.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
                                    "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n---\n"
                                    "apiVersion: v1\nkind: Secrets\nmetadata: {name: s}\n")
    # a List kustomize does not expand (it has no items) is kept as it is: kubectl expands lists
    write(tmp_path, "app/list.yaml", "apiVersion: v1\nkind: List\nmetadata: {}\n")
    run = check(tmp_path)
    assert [(p, line) for p, line, _, _ in errors(run.report)] == [("app/all.yaml", 10)]
    assert errors(run.report)[0][3].endswith("did you mean Secret?")


def test_a_group_nobody_here_owns_stays_an_info(tmp_path: Path) -> None:
    write(tmp_path, "crds/widget.yaml", WIDGET_CRD)
    write(tmp_path, "cert.yaml", "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c}\n---\n"
                                 "apiVersion: batch/v1\nkind: Cronjob\nmetadata: {name: j}\n")
    run = check(tmp_path)
    assert [(d["line"], d["severity"], d["validator"]) for d in run.report["defects"]] == [
        (2, "info", "schema-missing"), (6, "error", "schema")]
    assert errors(run.report)[0][3].endswith("did you mean CronJob?")


def test_a_crd_without_a_schema_still_defines_its_kind(tmp_path: Path) -> None:
    write(tmp_path, "crds/widget.yaml", WIDGET_CRD)
    write(tmp_path, "crds/gadget.yaml", "apiVersion: apiextensions.k8s.io/v1beta1\n"
                                        "kind: CustomResourceDefinition\nmetadata: {name: gadgets.example.com}\n"
                                        "spec:\n  group: example.com\n  version: v1\n"
                                        "  names: {kind: Gadget, plural: gadgets}\n")
    write(tmp_path, "gadget.yaml", "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n---\n"
                                   "apiVersion: example.com/v1\nkind: Gadgets\nmetadata: {name: h}\n")
    run = check(tmp_path)
    found = [(d["line"], d["severity"], d["message"]) for d in run.report["defects"] if d["path"] == "gadget.yaml"]
    assert [(line, severity) for line, severity, _ in found] == [(2, "info"), (6, "error")]
    assert found[1][2].endswith("did you mean Gadget?")


def test_a_removed_api_version_is_the_api_version_validators_finding_alone(tmp_path: Path) -> None:
    # storage.k8s.io/v1beta1 is still served in 1.25 (CSIStorageCapacity), StorageClass in it is not
    write(tmp_path, "storage.yaml", "apiVersion: storage.k8s.io/v1beta1\nkind: StorageClass\n"
                                    "metadata: {name: fast}\nprovisioner: x\n---\n"
                                    "apiVersion: storage.k8s.io/v1beta1\nkind: StorageClas\n"
                                    "metadata: {name: slow}\nprovisioner: x\n")
    run = check(tmp_path, "--kubernetes-version", "1.25")
    assert [(line, validator) for _, line, validator, _ in errors(run.report)] == [
        (1, "api-version"), (7, "schema")]
    assert errors(run.report)[1][3].endswith("storage.k8s.io/v1beta1 serves CSIStorageCapacity")


def test_a_file_set_aside_as_data_is_not_refused(tmp_path: Path) -> None:
    # no metadata.name and a kind nothing serves: data, not a cluster object
    write(tmp_path, "report/result.yaml", "apiVersion: v1\nkind: configmap\ndata: {passed: 3}\n")
    write(tmp_path, "config.yaml", "apiVersion: v1\nkind: configmap\nmetadata: {name: a}\n")
    run = check(tmp_path)
    assert [(p, line, v) for p, line, v, _ in errors(run.report)] == [("config.yaml", 2, "schema")]
    assert [s["path"] for s in run.report["setAside"]] == ["report/result.yaml"]


def test_a_catalog_file_of_the_kind_spelt_otherwise_does_not_serve_it(tmp_path: Path) -> None:
    # a catalog names files by the kind in lower case: example.com/widget_v1.json
    # is the repository's Widget; WIDget is still served by nothing
    write(tmp_path, "crds/widget.yaml", WIDGET_CRD)
    write(tmp_path, "app/widget.yaml", "apiVersion: example.com/v1\nkind: WIDget\nmetadata: {name: w}\n")
    write(tmp_path, "app/gadget.yaml", "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n"
                                       "spec: {size: big}\n")
    catalog = tmp_path.parent / "catalog"
    write(catalog, "example.com/widget_v1.json", '{"type": "object"}')
    write(catalog, "example.com/gadget_v1.json",
          '{"type": "object", "properties": {"spec": {"type": "object", "properties": '
          '{"size": {"type": "integer"}}}}}')
    run = check(tmp_path, "--schema-location", str(catalog))
    assert [(p, line) for p, line, _, _ in errors(run.report)] == [("app/gadget.yaml", 4), ("app/widget.yaml", 2)]
    assert 'no kind "WIDget" in example.com/v1' in errors(run.report)[1][3]
