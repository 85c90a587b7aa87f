"""What is applied to a cluster: files discovery sets aside (tool
configurations, test-framework inputs, stray patches), counted in one note
per reason, listed in the JSON report and brought back by ``--roots all`` or
``not-applied:``."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck import applied
from tests.checkrun import DEPLOYMENT, check, write

KIND_CLUSTER = """\
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
- role: control-plane
"""

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: []
contexts: []
current-context: ""
users: []
"""

# a partial Deployment, as an assert of a test framework holds it
PARTIAL = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
status:
  readyReplicas: 1
"""


def aside(run_report: dict) -> dict[str, str]:
    return {s["path"]: s["reason"] for s in run_report["setAside"]}


# --- the table of tool configurations -----------------------------------------------

@pytest.mark.parametrize(("api_version", "kind", "tool"), [
    ("kind.x-k8s.io/v1alpha4", "Cluster", "kind (a cluster configuration)"),
    ("v1", "Config", "kubectl (a kubeconfig)"),
    ("kubelet.config.k8s.io/v1beta1", "KubeletConfiguration", "the kubelet"),
    ("clusterctl.cluster.x-k8s.io/v1alpha3", "Metadata", "clusterctl (a provider's metadata.yaml)"),
    ("mirror.openshift.io/v2alpha1", "ImageSetConfiguration", "oc-mirror"),
    ("skaffold/v4beta6", "Config", "skaffold"),
])
def test_tool_configuration_kinds(api_version: str, kind: str, tool: str) -> None:
    assert applied.tool_of(api_version, kind) == tool


@pytest.mark.parametrize(("api_version", "kind"), [
    ("v1", "ConfigMap"),  # the core group has one tool kind only
    ("cluster.x-k8s.io/v1beta1", "Cluster"),  # a Cluster API cluster is applied
    ("clusterctl.cluster.x-k8s.io/v1alpha3", "Provider"),  # clusterctl applies its inventory
    ("apps/v1", "Deployment"),
])
def test_cluster_kinds_are_not_tool_configurations(api_version: str, kind: str) -> None:
    assert applied.tool_of(api_version, kind) is None


def test_a_file_is_a_tool_configuration_only_when_every_object_is_one(tmp_path: Path) -> None:
    write(tmp_path, "kind.yaml", KIND_CLUSTER)
    write(tmp_path, "mixed.yaml", KIND_CLUSTER + "---\n" + DEPLOYMENT)
    run = check(tmp_path)
    assert aside(run.report) == {"kind.yaml": "tool-config"}
    assert [r["root"] for r in run.report["roots"]] == ["mixed.yaml"]


def test_a_kubeconfig_is_set_aside_and_said_once(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "hack/kubeconfig.yaml", KUBECONFIG)
    write(tmp_path, "hack/kind.yaml", KIND_CLUSTER)
    run = check(tmp_path)
    assert run.code == 0
    assert run.located() == []  # kubeconfig has no metadata.name: it is no object
    notes = [n for n in run.report["notes"] if "tool-config" in n["message"]]
    assert [(n["path"], n["message"].split(":")[0]) for n in notes] == [
        ("hack/kind.yaml", "2 files not checked as manifests")]
    assert "hack/kind.yaml:1:1: note: 2 files not checked as manifests" in run.out


# --- test frameworks ---------------------------------------------------------------

def test_a_chainsaw_test_directory_is_set_aside(tmp_path: Path) -> None:
    write(tmp_path, "tests/e2e/smoke/chainsaw-test.yaml",
          "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: smoke}\n"
          "spec:\n  steps:\n  - try:\n    - apply: {file: install.yaml}\n    - assert: {file: check.yaml}\n")
    write(tmp_path, "tests/e2e/smoke/install.yaml", PARTIAL)
    write(tmp_path, "tests/e2e/smoke/check.yaml", PARTIAL)
    write(tmp_path, "tests/e2e/smoke/resources/more.yaml", PARTIAL)
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    run = check(tmp_path)
    assert run.code == 0, run.out
    assert aside(run.report) == {
        "tests/e2e/smoke/chainsaw-test.yaml": "tool-config",
        "tests/e2e/smoke/install.yaml": "test-framework",
        "tests/e2e/smoke/check.yaml": "test-framework",
        "tests/e2e/smoke/resources/more.yaml": "test-framework"}
    assert [r["root"] for r in run.report["roots"]] == ["app/deployment.yaml"]


def test_a_chainsaw_test_under_any_name_marks_its_directory(tmp_path: Path) -> None:
    write(tmp_path, "e2e/x/test.yaml", "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\n"
          "metadata: {name: x}\nspec: {steps: []}\n")
    write(tmp_path, "e2e/x/step.yaml", PARTIAL)
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    assert aside(check(tmp_path).report)["e2e/x/step.yaml"] == "test-framework"


def test_a_chainsaw_configuration_marks_nothing(tmp_path: Path) -> None:
    # .chainsaw.yaml configures the tool; the manifests beside it are applied
    write(tmp_path, ".chainsaw.yaml", "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Configuration\n"
          "metadata: {name: c}\nspec: {}\n")
    write(tmp_path, "deploy/partial.yaml", PARTIAL)
    run = check(tmp_path)
    assert aside(run.report) == {".chainsaw.yaml": "tool-config"}
    assert ("deploy/partial.yaml", 4, "schema") in run.located()


def test_kuttl_test_dirs_numbered_asserts_and_test_steps(tmp_path: Path) -> None:
    write(tmp_path, "kuttl-test.yaml", "apiVersion: kuttl.dev/v1beta1\nkind: TestSuite\n"
          "testDirs:\n- ./test/kuttl\n")
    write(tmp_path, "test/kuttl/case-1/00-install.yaml", PARTIAL)
    write(tmp_path, "other/case/01-assert.yaml", PARTIAL)
    write(tmp_path, "other/case/01-install.yaml", PARTIAL)
    write(tmp_path, "stepdir/01-step.yaml", "apiVersion: kuttl.dev/v1beta1\nkind: TestStep\n")
    write(tmp_path, "stepdir/02-apply.yaml", PARTIAL)
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    found = aside(check(tmp_path).report)
    assert found == {"kuttl-test.yaml": "tool-config", "stepdir/01-step.yaml": "tool-config",
                     "test/kuttl/case-1/00-install.yaml": "test-framework",
                     "other/case/01-assert.yaml": "test-framework",
                     "other/case/01-install.yaml": "test-framework",
                     "stepdir/02-apply.yaml": "test-framework"}


def test_go_testdata_and_negative_cases_in_test_directories(tmp_path: Path) -> None:
    write(tmp_path, "internal/controllers/testdata/expected.yaml", PARTIAL)
    write(tmp_path, "test/e2e/lint/malformed-spec.yaml", PARTIAL)
    write(tmp_path, "test/e2e/basic-invalid.yaml", PARTIAL)
    write(tmp_path, "test/e2e/basic.yaml", PARTIAL)  # a test input with no such name is judged
    write(tmp_path, "deploy/invalid-example.yaml", PARTIAL)  # not in a test directory: judged
    run = check(tmp_path)
    assert aside(run.report) == {"internal/controllers/testdata/expected.yaml": "test-framework",
                                 "test/e2e/lint/malformed-spec.yaml": "test-framework",
                                 "test/e2e/basic-invalid.yaml": "test-framework"}
    assert sorted(p for p, _, v in run.located() if v == "schema") == [
        "deploy/invalid-example.yaml", "test/e2e/basic.yaml"]


# --- patch files -----------------------------------------------------------------

def test_stray_patches_are_set_aside_and_read_patches_are_not_roots(tmp_path: Path) -> None:
    write(tmp_path, "base/kustomization.yaml", "resources: [deployment.yaml]\npatches:\n- path: used.yaml\n")
    write(tmp_path, "base/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "base/used.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                                      "spec: {replicas: 2}\n")
    write(tmp_path, "base/manager_auth_proxy_patch.yaml", PARTIAL)
    write(tmp_path, "config/crd/patches/webhook_in_widgets.yaml", PARTIAL)
    write(tmp_path, "extra/delete.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
                                         "$patch: delete\n")
    run = check(tmp_path)
    assert aside(run.report) == {"base/manager_auth_proxy_patch.yaml": "patch-file",
                                 "config/crd/patches/webhook_in_widgets.yaml": "patch-file",
                                 "extra/delete.yaml": "patch-file"}
    assert {s["path"]: s["why"] for s in run.report["setAside"]}["extra/delete.yaml"] == \
        "holds a $patch directive"
    assert run.code == 0, run.out


# --- bringing files back -------------------------------------------------------------

def test_roots_all_checks_what_was_set_aside(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "tests/case/01-assert.yaml", PARTIAL)
    assert check(tmp_path).code == 0
    run = check(tmp_path, "--roots", "all")
    assert run.report["setAside"] == []
    assert ("tests/case/01-assert.yaml", 4, "schema") in run.located()


def test_not_applied_turns_one_rule_off(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "tests/case/01-assert.yaml", PARTIAL)
    write(tmp_path, "kind.yaml", KIND_CLUSTER)
    write(tmp_path, ".krmcheck.yaml", "not-applied:\n  test-framework: false\n")
    run = check(tmp_path)
    assert aside(run.report) == {"kind.yaml": "tool-config"}
    assert ("tests/case/01-assert.yaml", 4, "schema") in run.located()


def test_not_applied_is_checked_by_the_configuration_schema(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, ".krmcheck.yaml", "not-applied:\n  tool-configs: false\n")
    run = check(tmp_path)
    assert run.code == 2
    assert ".krmcheck.yaml:2:3" in run.err


def test_a_directory_holding_only_set_aside_files_says_why(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "hack/kind.yaml", KIND_CLUSTER)
    run = check(tmp_path, "hack")
    assert run.code == 2
    assert "are not applied to a cluster (tool-config); --roots all checks them" in run.err


def test_a_changed_file_in_a_test_directory_is_set_aside_as_in_a_full_run(tmp_path: Path) -> None:
    # pre-commit passes the file alone: the marker is learned from above it
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "kuttl-test.yaml", "apiVersion: kuttl.dev/v1beta1\nkind: TestSuite\ntestDirs:\n- tests/\n")
    write(tmp_path, "tests/case/00-install.yaml", PARTIAL)
    write(tmp_path, "e2e/smoke/chainsaw-test.yaml", "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\n")
    write(tmp_path, "e2e/smoke/sub/step.yaml", PARTIAL)
    run = check(tmp_path, "tests/case/00-install.yaml", "e2e/smoke/sub/step.yaml")
    assert run.code == 0, run.out
    assert aside(run.report) == {"tests/case/00-install.yaml": "test-framework",
                                 "e2e/smoke/sub/step.yaml": "test-framework"}


# --- objects the API server names ----------------------------------------------------

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  generateName: {prefix}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: pi
        image: perl:5.40
"""


def test_a_plain_manifest_with_generate_name_is_judged_by_its_prefix(tmp_path: Path) -> None:
    write(tmp_path, "jobs/run.yaml", JOB.format(prefix="pi-") + "---\n" + JOB.format(prefix="Pi_"))
    run = check(tmp_path)
    assert run.located() == [("jobs/run.yaml", 16, "metadata")]
    [defect] = run.report["defects"]
    assert defect["message"].startswith("metadata.generateName: 'Pi_' is not a valid prefix of a Job name")


def test_an_object_with_neither_name_nor_generate_name_is_still_an_error(tmp_path: Path) -> None:
    write(tmp_path, "jobs/run.yaml", JOB.replace("  generateName: {prefix}\n", "  labels: {a: b}\n"))
    run = check(tmp_path)
    assert run.code == 2
    assert run.located() == [("jobs/run.yaml", 3, "build")]


def test_kustomize_still_refuses_generate_name_in_a_kustomization(tmp_path: Path) -> None:
    # kubectl kustomize: "missing metadata.name in object"; what kustomize
    # refuses is a build error, whoever would create the object later
    write(tmp_path, "app/kustomization.yaml", "resources: [job.yaml]\n")
    write(tmp_path, "app/job.yaml", JOB.format(prefix="pi-"))
    run = check(tmp_path)
    assert run.code == 2
    assert run.located() == [("app/job.yaml", 3, "build")]


def test_the_readme_table_is_the_packaged_table() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    for group, (kinds, tool) in applied.tool_kinds().items():
        shown = f"`{group}`" if group else "(core, `v1`)"
        listed = ", ".join("*" if k == "*" else f"`{k}`" for k in sorted(kinds))
        assert f"| {shown} | {listed} | {tool} |" in readme


# --- templates -------------------------------------------------------------------

def test_a_template_that_is_not_yaml_yet_is_set_aside(tmp_path: Path) -> None:
    write(tmp_path, "templates/etcd-template.yaml", "apiVersion: v1\nkind: ReplicationController\n"
          "metadata:\n  name: etcd-{{cell}}\nspec:\n  replicas: {{replicas}}\n")
    # a ConfigMap carrying Go templates in its data is YAML, and applied as it is
    write(tmp_path, "alerts/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: t\n"
          "data:\n  msg: '{{ .Labels.alertname }}'\n")
    run = check(tmp_path)
    assert aside(run.report) == {"templates/etcd-template.yaml": "template"}
    assert [r["root"] for r in run.report["roots"]] == ["alerts/configmap.yaml"]
    assert run.code == 0


def test_values_holding_template_expressions_or_fill_in_markers_are_not_judged(tmp_path: Path) -> None:
    write(tmp_path, "vitess/pod-template.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n"
          "  name: vttablet-{{uid}}\n  labels:\n    shard: '{{shard_label}}'\nspec:\n"
          "  containers:\n  - name: c\n    image: nginx:1.27\n  volumes:\n  - name: v\n"
          "    fc:\n      lun: <ADD LUN ID Here>\n      targetWWNs: [a]\n")
    run = check(tmp_path)
    assert run.located("error") == []
    assert sorted(line for _, line, _, _ in run.suppressed()) == [4, 6, 14]


def test_a_kyverno_cli_test_and_go_underscore_testdata_are_test_inputs(tmp_path: Path) -> None:
    # `kyverno test` runs policies over these resources offline; `_testdata` Go leaves alone too
    write(tmp_path, "test/cli/node-status/kyverno-test.yaml",
          "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\npolicies: [p.yaml]\n")
    write(tmp_path, "test/cli/node-status/resource.yaml", PARTIAL)
    write(tmp_path, "cmd/cli/_testdata/policies/x.yaml", PARTIAL)
    # the older spelling of a test: marked by its file name
    write(tmp_path, "test/cli/with-params/kyverno-test.yaml", "apiVersion: kyverno.io/v1\nkind: Test\n"
          "metadata: {name: t}\n")
    write(tmp_path, "test/cli/with-params/param.yaml", PARTIAL)
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    found = aside(check(tmp_path).report)
    assert found["test/cli/with-params/param.yaml"] == "test-framework"
    assert found["test/cli/node-status/resource.yaml"] == "test-framework"
    assert found["cmd/cli/_testdata/policies/x.yaml"] == "test-framework"
