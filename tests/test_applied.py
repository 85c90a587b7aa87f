"""What is applied to a cluster: files discovery sets aside (tool
configurations, test-framework inputs, stray patches), counted in one note
per reason, listed in the JSON report and brought back by ``--roots all`` or
``not-applied:``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from krmcheck import applied
from tests.checkrun import DEPLOYMENT, SERVICE_LOWERCASE_PROTOCOL, WIDGET_CRD, check, crd, write

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
    ("backstage.io/v1alpha1", "User", "Backstage (a software catalog entity)"),
    ("scaffolder.backstage.io/v1beta3", "Template", "Backstage's scaffolder (a software template)"),
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


def test_files_in_test_directories_are_test_inputs_judged_with_warnings(tmp_path: Path) -> None:
    write(tmp_path, "internal/controllers/testdata/expected.yaml", PARTIAL)
    write(tmp_path, "test/e2e/lint/malformed-spec.yaml", PARTIAL)
    write(tmp_path, "test/e2e/template.yaml", DEPLOYMENT.replace("name: web\n", "name: Rollout-Name\n", 1))
    write(tmp_path, "hack/invalid-examples/route.yaml", PARTIAL)  # a directory of cases invalid on purpose
    write(tmp_path, "deploy/invalid-example.yaml", PARTIAL)  # a name alone decides nothing: judged
    write(tmp_path, "client/hack/cel-tests/vs-source-empty.yaml", PARTIAL)  # a directory of some kind of tests
    # a directory of tests' inputs, hidden (Package Operator's template-test fixtures)
    write(tmp_path, "cmd/validate/faultydata/.test-fixtures/scope/deployment.yaml", PARTIAL)
    run = check(tmp_path)
    assert aside(run.report) == {}
    assert run.located("error") == [("deploy/invalid-example.yaml", 4, "schema")]
    assert sorted({p for p, _, _ in run.located("warning")}) == [
        "client/hack/cel-tests/vs-source-empty.yaml", "cmd/validate/faultydata/.test-fixtures/scope/deployment.yaml",
        "hack/invalid-examples/route.yaml",
        "internal/controllers/testdata/expected.yaml", "test/e2e/lint/malformed-spec.yaml", "test/e2e/template.yaml"]
    # the JSON report names each, the root of its warnings
    assert {i["path"]: i["reason"] for i in run.report["inputs"]} == {
        p: "test-input" for p, _, _ in run.located("warning")}
    notes = [n["message"] for n in run.report["notes"] if "[test-input]" in n["message"]]
    assert len(notes) == 1 and notes[0].startswith("6 files in test directories (or invalid on purpose: beside the valid case, or shown refused by a page) judged as test inputs")
    run = check(tmp_path, "--roots", "all")  # full judgement restored
    assert ("test/e2e/lint/malformed-spec.yaml", 4, "schema") in run.located("error")
    # a directory the run is asked to check is judged in full: a test directory above it is no evidence
    run = check(tmp_path, "test/e2e/lint")
    assert run.located("error") == [("test/e2e/lint/malformed-spec.yaml", 4, "schema")]


def test_a_yaml_defect_of_a_test_input_stays_an_error(tmp_path: Path) -> None:
    write(tmp_path, "test/e2e/case.yaml", DEPLOYMENT.replace("spec:\n", "spec:\n  replicas: 2\n", 1))
    run = check(tmp_path)
    assert [(d["path"], d["validator"], d["severity"]) for d in run.report["defects"]] == [
        ("test/e2e/case.yaml", "build", "error")]
    assert "already defined" in run.report["defects"][0]["message"]


def test_an_environment_named_test_is_not_a_test_directory(tmp_path: Path) -> None:
    bad = DEPLOYMENT.replace("  name: web\n", "  name: web\n  labels: {tier: bad value}\n", 1)
    write(tmp_path, "clusters/main/apps/web.yaml", DEPLOYMENT)
    write(tmp_path, "clusters/test/apps/web.yaml", bad)
    write(tmp_path, "test/e2e/web.yaml", bad)  # a test directory: nothing beside it shares its shape
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["clusters/test/apps/web.yaml"]
    assert [p for p, _, _ in run.located("warning")] == ["test/e2e/web.yaml"]


def test_tests_holding_test_programs_are_tests_whatever_their_siblings(tmp_path: Path) -> None:
    # tests/ beside a Go staging/ tree (a sibling named like an environment)
    # holds go test programs: a test suite, whose invalid cases are its inputs
    bad = DEPLOYMENT.replace("  name: web\n", "  name: web\n  labels: {tier: bad value}\n", 1)
    write(tmp_path, "staging/src/example.com/api/types.go", "package api\n")
    write(tmp_path, "tests/manifests/invalid-label.yaml", bad)
    write(tmp_path, "tests/api_validation_test.go", "package tests\n")
    run = check(tmp_path)
    assert run.located("error") == [], run.out
    assert [p for p, _, _ in run.located("warning")] == ["tests/manifests/invalid-label.yaml"]
    # test/ beside a demo/ of scripts: a sibling named like an environment
    # that holds nothing test/ holds is no environment of it
    demo = tmp_path / "demo-repo"
    write(demo, "demo/basic/demo.sh", "kubectl apply -f ../../test/cases/invalid-label.yaml\n")
    write(demo, "test/cases/invalid-label.yaml", bad)
    assert [p for p, _, _ in check(demo).located("warning")] == ["test/cases/invalid-label.yaml"]
    # without the test programs, tests/ beside a staging/ that holds the
    # same directories is one environment among others
    other = tmp_path / "other"
    write(other, "staging/manifests/web.yaml", DEPLOYMENT)
    write(other, "tests/manifests/invalid-label.yaml", bad)
    assert [p for p, _, _ in check(other).located("error")] == ["tests/manifests/invalid-label.yaml"]


def test_tests_beside_another_kind_of_tests_are_tests(tmp_path: Path) -> None:
    # tests/{data,suite} beside perf-tests/{data,suite}: two kinds of tests, not two environments
    bad = DEPLOYMENT.replace("  name: web\n", "  name: web\n  labels: {tier: bad value}\n", 1)
    for top in ("tests", "perf-tests"):
        write(tmp_path, f"{top}/data/web.yaml", bad)
        write(tmp_path, f"{top}/suite/conftest.yaml", bad)
    run = check(tmp_path)
    assert run.located("error") == [], run.out
    assert len({p for p, _, _ in run.located("warning")}) == 4


# --- data, unused kustomize inputs, patches, vendored files ------------------------

CONFORMANCE_REPORT = """\
apiVersion: gateway.networking.k8s.io/v1
kind: ConformanceReport
date: "2024-01-01"
implementation: {project: example, version: v1}
"""

TALOS_PATCH = """\
machine:
  install: {disk: /dev/sda}
---
apiVersion: v1alpha1
kind: HostnameConfig
hostname: node-1
"""

def test_data_in_api_object_form_is_set_aside_by_evidence(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "conformance/reports/v1/report.yaml", CONFORMANCE_REPORT)
    write(tmp_path, "talos/node-1.yaml", TALOS_PATCH)
    # a built-in kind without a name is an object the API server refuses, not data
    write(tmp_path, "config/cm.yaml", "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n")
    # so is a kind a CRD of the repository serves
    write(tmp_path, "crds/widget.yaml", WIDGET_CRD)
    write(tmp_path, "samples/widget.yaml", "apiVersion: example.com/v1\nkind: Widget\nspec: {}\n")
    # a name at the top level, no metadata: a patch entry that refers to a
    # Namespace (Hive's SyncSet patches), not a Namespace
    write(tmp_path, "deploy/quotas/10-patch.namespace.yaml", "kind: Namespace\napiVersion: v1\nname: openshift-etcd\n"
                                                            "patch: '{\"metadata\": {}}'\npatchType: merge\n")
    run = check(tmp_path)
    assert aside(run.report) == {"conformance/reports/v1/report.yaml": "data", "talos/node-1.yaml": "data",
                                 "deploy/quotas/10-patch.namespace.yaml": "data"}
    assert sorted(p for p, _, _ in run.located("error")) == ["config/cm.yaml", "samples/widget.yaml"]
    why = {s["path"]: s["why"] for s in run.report["setAside"]}
    assert why["conformance/reports/v1/report.yaml"].startswith(
        "gateway.networking.k8s.io/v1 ConformanceReport: no metadata.name")
    assert why["deploy/quotas/10-patch.namespace.yaml"].startswith("v1 Namespace named at its top level")
    # an object that wrote its name outside metadata still has its body: judged
    write(tmp_path, "config/forgot.yaml", "apiVersion: v1\nkind: ConfigMap\nname: settings\ndata: {a: b}\n")
    assert "config/forgot.yaml" in {p for p, _, _ in check(tmp_path).located("error")}


STATE_MACHINE = """\
apiVersion: controlflow.io/v1alpha1
kind: StateMachine
metadata:
  name: ModelCache
  group: cache.example.dev
  version: v1alpha1
states:
- name: Pending
"""


def test_metadata_no_object_has_on_a_kind_nothing_serves_is_data(tmp_path: Path) -> None:
    # a code generator's input (sextant generate): its metadata holds group and
    # version, which no API object's metadata has, and nothing serves the kind
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "operator/statemachines/cache.yaml", STATE_MACHINE)
    # a slip of a metadata field (lables) is no such evidence: judged
    write(tmp_path, "operator/samples/slip.yaml", STATE_MACHINE.replace("  group: cache.example.dev\n  version: v1alpha1\n",
                                                                        "  lables: {app: cache}\n"))
    # nor is foreign metadata on a kind the API serves: the API server judges it
    write(tmp_path, "config/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Settings\n"
                                      "  group: x\ndata: {a: b}\n")
    run = check(tmp_path)
    assert aside(run.report) == {"operator/statemachines/cache.yaml": "data"}
    why = {s["path"]: s["why"] for s in run.report["setAside"]}
    assert why["operator/statemachines/cache.yaml"].startswith(
        "controlflow.io/v1alpha1 StateMachine: metadata holds group, version, which no object's metadata has")
    assert sorted(p for p, _, _ in run.located("error")) == ["config/cm.yaml", "operator/samples/slip.yaml"]


def test_unused_kustomize_inputs_are_set_aside_but_not_the_whole_repository(tmp_path: Path) -> None:
    write(tmp_path, "base/kustomization.yaml", "resources: [deployment.yaml]\npatches:\n- path: used.yaml\n")
    write(tmp_path, "base/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "base/used.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                                      "spec: {replicas: 2}\n")
    write(tmp_path, "base/manager_auth_proxy_patch.yaml", PARTIAL)
    write(tmp_path, "config/crd/kustomization.yaml", "resources: []\n")
    write(tmp_path, "config/crd/patches/webhook_in_widgets.yaml", PARTIAL)
    write(tmp_path, "extra/delete.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
                                         "$patch: delete\n")
    # a kustomization at the top makes nothing below it an input
    write(tmp_path, "kustomization.yaml", "resources: [base]\n")
    write(tmp_path, "deploy/partial.yaml", PARTIAL)
    # a name alone decides nothing: an object named as a patch, nowhere near a kustomization, is judged
    write(tmp_path, "examples/k8s-patch-workflow.yaml", PARTIAL)
    run = check(tmp_path)
    assert aside(run.report) == {"base/manager_auth_proxy_patch.yaml": "unused-input",
                                 "config/crd/patches/webhook_in_widgets.yaml": "unused-input",
                                 "extra/delete.yaml": "patch-file"}
    why = {s["path"]: s["why"] for s in run.report["setAside"]}
    assert why["extra/delete.yaml"] == "holds a $patch directive"
    assert why["base/manager_auth_proxy_patch.yaml"] == "beside base/kustomization"
    assert sorted({p for p, _, _ in run.located("error")}) == ["deploy/partial.yaml",
                                                               "examples/k8s-patch-workflow.yaml"]


def test_vendored_dependencies_are_not_the_repositorys_manifests(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "vendor/modules.txt", "# example.com/dep v1.0.0\n")
    write(tmp_path, "vendor/example.com/dep/config/broken.yaml", PARTIAL + "metadata: {}\n")
    run = check(tmp_path)
    assert aside(run.report) == {"vendor/example.com/dep/config/broken.yaml": "vendored"}
    assert run.code == 0, run.out


@pytest.mark.parametrize("record", ["vendor/modules.txt", "Gopkg.lock", "glide.lock", "Godeps/Godeps.json",
                                    "vendor/vendor.json"])
def test_what_older_go_dependency_tools_vendored_is_not_the_repositorys(tmp_path: Path, record: str) -> None:
    # Go modules, dep, glide, godep and govendor record what they copied into vendor/;
    # a kustomization there is a dependency's too, and is not built
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "vendor/sigs.k8s.io/dep/config/broken.yaml", PARTIAL + "metadata: {}\n")
    write(tmp_path, "vendor/sigs.k8s.io/dep/config/default/kustomization.yaml", "patches:\n- manager_patch.yaml\n")
    assert check(tmp_path).located("error") == [
        ("vendor/sigs.k8s.io/dep/config/broken.yaml", 7, "build"),
        ("vendor/sigs.k8s.io/dep/config/default/kustomization.yaml", 2, "build")]
    write(tmp_path, record, "{}\n")
    run = check(tmp_path)
    assert aside(run.report) == {"vendor/sigs.k8s.io/dep/config/broken.yaml": "vendored",
                                 "vendor/sigs.k8s.io/dep/config/default/kustomization.yaml": "vendored"}
    assert run.code == 0, run.out
    # a directory the run names is below the record all the same: nothing
    # to check, and the message says why and how to check it anyway
    named = check(tmp_path, "vendor/sigs.k8s.io/dep")
    assert named.code == 2 and "not applied to a cluster (vendored); --roots all checks them" in named.err


def test_yaml_defects_are_reported_in_files_set_aside(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "e2e/smoke/chainsaw-test.yaml", "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\n")
    # two asserts run together: the second's keys repeat the first's, one assert is lost
    write(tmp_path, "e2e/smoke/assert.yaml", PARTIAL + PARTIAL)
    write(tmp_path, "e2e/smoke/fine.yaml", PARTIAL)
    run = check(tmp_path)
    assert aside(run.report)["e2e/smoke/assert.yaml"] == "test-framework"
    assert run.located("error") == [("e2e/smoke/assert.yaml", 7, "build")]
    assert 'mapping key "apiVersion" already defined at line 1' in run.report["defects"][0]["message"]


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
    # a marker of joined words in a name (<app-name>-secret); a single word in brackets is no marker
    # and a single word in brackets that is a whole part of the value (<env>-backstage)
    write(tmp_path, "vitess/secret-template.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n"
          "  name: <app-name>-secret\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: x<b>y\n"
          "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: <env>-backstage\n"
          "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: EXAMPLE.DEV.REPLACEME\n"
          "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: $(profile-name)\n")
    run = check(tmp_path)
    assert [(p, line) for p, line, _ in run.located("error")] == [("vitess/secret-template.yaml", 9)]
    held = [(p, line) for p, line, _, _ in run.suppressed()]
    assert ("vitess/secret-template.yaml", 4) in held and ("vitess/secret-template.yaml", 14) in held
    assert ("vitess/secret-template.yaml", 19) in held  # REPLACEME as a part of the value
    assert ("vitess/secret-template.yaml", 24) in held  # a $(variable) a tool fills


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
    assert "cmd/cli/_testdata/policies/x.yaml" not in found  # judged as a test input: warnings


def test_a_fragment_a_documentation_page_embeds_is_judged_with_warnings(tmp_path: Path) -> None:
    fragment = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 2\n"
    write(tmp_path, "example/guide/fragment.yaml", fragment)
    write(tmp_path, "example/guide/named.yaml", PARTIAL)  # embedded too, but complete enough to apply
    write(tmp_path, "example/other/fragment.yaml", fragment)  # no page embeds it
    write(tmp_path, "docs/guide.md", '```yaml mdox-exec="cat example/guide/fragment.yaml"\n```\n'
                                     '```yaml mdox-exec="cat example/guide/named.yaml"\n```\n'
                                     'kubectl apply -f example/other/fragment.yaml\n')
    run = check(tmp_path)
    assert sorted({p for p, _, _ in run.located("error")}) == ["example/guide/named.yaml",
                                                               "example/other/fragment.yaml"]
    assert [p for p, _, _ in run.located("warning")] == ["example/guide/fragment.yaml"]
    assert any("[doc-fragment]" in n["message"] for n in run.report["notes"])


def test_a_page_of_every_option_a_markdown_include_embeds_is_a_fragment(tmp_path: Path) -> None:
    # markdown-include's {!PATH!}: a reference of every option, with empty values, shown whole
    options = DEPLOYMENT.replace("  replicas: 1\n", "  replicas: many\n")
    write(tmp_path, "docs/reference/deployment.yaml", options)
    write(tmp_path, "docs/reference/other.yaml", options)  # named by no page
    write(tmp_path, "docs/reference/deployment.md", "```yaml\n{!docs/reference/deployment.yaml!}\n```\n")
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("warning")} == {"docs/reference/deployment.yaml"}
    assert {p for p, _, _ in run.located("error")} == {"docs/reference/other.yaml"}


def test_a_file_only_a_commented_out_entry_names_is_switched_off(tmp_path: Path) -> None:
    # `# - ../../base/app/ks.yaml  # off for now`: the maintainers switched it off
    write(tmp_path, "overlays/prod/kustomization.yaml",
          "resources:\n  - ../../base/on/ks.yaml\n  # - ../../base/off/ks.yaml  # broken PVC, re-enable later\n")
    write(tmp_path, "base/on/ks.yaml", DEPLOYMENT)
    write(tmp_path, "base/off/ks.yaml", PARTIAL)
    write(tmp_path, "base/forgotten/ks.yaml", PARTIAL)  # named by nothing: judged
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("error")} == {"base/forgotten/ks.yaml"}
    assert ("base/off/ks.yaml", "disabled") in [(s["path"], s["reason"]) for s in run.report["setAside"]]


def test_a_file_only_a_kustomization_templates_commented_out_entry_names_is_switched_off(tmp_path: Path) -> None:
    # a kubebuilder project whose Makefile renders config/default/kustomization.yaml
    # from kustomization.template.yaml with sed: the template lists the auth
    # proxy patch only commented out; a file of a directory with no such
    # template, or one the template lists, is judged
    write(tmp_path, "config/default/kustomization.template.yaml",
          "resources:\n- ../manager\n# patches:\n#- manager_auth_proxy_patch.yaml\n- on.yaml\n")
    write(tmp_path, "config/default/manager_auth_proxy_patch.yaml", PARTIAL)
    write(tmp_path, "config/default/on.yaml", PARTIAL)
    write(tmp_path, "config/other/manager_auth_proxy_patch.yaml", PARTIAL)
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("error")} == {"config/default/on.yaml",
                                                        "config/other/manager_auth_proxy_patch.yaml"}
    assert ("config/default/manager_auth_proxy_patch.yaml", "disabled") in [
        (s["path"], s["reason"]) for s in run.report["setAside"]]


def test_a_kustomization_only_a_commented_out_entry_names_is_switched_off(tmp_path: Path) -> None:
    # kubebuilder's `#- ../webhook`: the scaffold waits for controller-gen's
    # manifests.yaml; a kustomization named by nothing is judged; a YAML-level
    # defect stays an error wherever it is
    write(tmp_path, "config/default/kustomization.yaml", "resources:\n- ../manager\n#- ../webhook\n#- ../broken\n")
    write(tmp_path, "config/manager/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "config/manager/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "config/webhook/kustomization.yaml", "resources: [manifests.yaml, service.yaml]\n")
    write(tmp_path, "config/webhook/service.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: hook}\n"
                                                   "spec: {ports: [{port: many}]}\n")
    write(tmp_path, "config/forgotten/kustomization.yaml", "resources: [manifests.yaml]\n")
    write(tmp_path, "config/broken/kustomization.yaml", "resources: [cm.yaml]\n")
    write(tmp_path, "config/broken/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, name: b}\n")
    run = check(tmp_path)
    assert sorted({p for p, _, _ in run.located("error")}) == ["config/broken/cm.yaml",
                                                               "config/forgotten/kustomization.yaml"]
    assert {p for p, _, _ in run.located("warning")} >= {"config/webhook/kustomization.yaml"}
    [note] = [n["message"] for n in run.report["notes"] if "[disabled]" in n["message"]]
    assert note.startswith("1 kustomization listed only in an entry commented out, or built by a Flux "
                           "Kustomization so listed (in config/default/kustomization.yaml) has errors")
    # --roots all judges every kustomization as written
    assert "config/webhook/kustomization.yaml" in {p for p, _, _ in check(tmp_path, "--roots", "all")
                                                   .located("error")}


def test_what_a_switched_off_flux_kustomization_builds_is_switched_off(tmp_path: Path) -> None:
    # `# - ../../bootstrap/dual-stack/ks.yaml`: the Flux Kustomization is off,
    # and so is the directory it builds (partial Services it would apply
    # with server-side apply onto existing ones)
    write(tmp_path, "clusters/main/kustomization.yaml", "resources:\n- flux-system\n"
                                                        "# - ../../bootstrap/dual-stack/ks.yaml\n")
    write(tmp_path, "clusters/main/flux-system/kustomization.yaml", "resources: [sync.yaml]\n")
    def flux_kustomization(name: str, path: str) -> str:
        return (f"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, "
                f"namespace: flux-system}}\nspec:\n  path: {path}\n  sourceRef: {{kind: GitRepository, "
                f"name: flux-system}}\n  interval: 10m\n  prune: false\n")

    write(tmp_path, "clusters/main/flux-system/sync.yaml", flux_kustomization("flux-system", "./clusters/main"))
    write(tmp_path, "bootstrap/dual-stack/ks.yaml", flux_kustomization("dual-stack", "./bootstrap/dual-stack"))
    write(tmp_path, "bootstrap/dual-stack/kustomization.yaml", "resources: [service.yaml]\n")
    write(tmp_path, "bootstrap/dual-stack/service.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: "
                                                         "kubernetes, namespace: default}\nspec:\n"
                                                         "  ipFamilyPolicy: PreferDualStack\n")
    run = check(tmp_path)
    assert run.located("error") == [], run.out
    assert "bootstrap/dual-stack/service.yaml" in {p for p, _, _ in run.located("warning")}
    # switched on, it is what the sync applies: judged
    write(tmp_path, "clusters/main/kustomization.yaml", "resources:\n- flux-system\n"
                                                        "- ../../bootstrap/dual-stack/ks.yaml\n")
    assert "bootstrap/dual-stack/service.yaml" in {p for p, _, _ in check(tmp_path).located("error")}


def test_a_kustomization_in_a_test_directory_is_a_test_input(tmp_path: Path) -> None:
    # a test framework writes the file the kustomization reads before it builds it
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "test/framework/data/kustomization.yaml", "resources: [written-by-the-test.yaml]\n")
    write(tmp_path, "src/test/resources/bad.yaml", PARTIAL)  # Maven's test sources, beside src/main
    write(tmp_path, "src/main/resources/app.yaml", DEPLOYMENT)
    # a kind of tests written as one word (Rancher Fleet's integrationtests/cli/assets)
    write(tmp_path, "integrationtests/cli/assets/bundle/kustomization.yaml", "resources: [overlays/dev]\n")
    run = check(tmp_path)
    assert run.code == 0, run.out
    assert sorted({p for p, _, _ in run.located("warning")}) == [
        "integrationtests/cli/assets/bundle/kustomization.yaml", "src/test/resources/bad.yaml",
        "test/framework/data/kustomization.yaml"]
    # an application named for a test (a speed test) is no test directory
    write(tmp_path, "apps/speedtest/kustomization.yaml", "resources: [overlays/dev]\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["apps/speedtest/kustomization.yaml"]


def test_a_template_with_script_placeholders_is_set_aside(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "make/config/service.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: bind\n"
                                                "spec:\n  clusterIP: {SERVICE_IP_PREFIX}.16\n")
    # sed's and autoconf's @NAME@, which no YAML value may start with
    write(tmp_path, "dev/scale/statefulset.yaml", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n"
                                                  "  name: @STS_NAME@\nspec:\n  replicas: 0\n")
    write(tmp_path, "dev/scale/mail.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: @bad\n")
    run = check(tmp_path)
    assert aside(run.report) == {"make/config/service.yaml": "template", "dev/scale/statefulset.yaml": "template"}
    assert [d["path"] for d in run.report["defects"]] == ["dev/scale/mail.yaml"]  # broken, no placeholder


def test_a_ytt_template_is_set_aside_but_its_yaml_defects_are_not(tmp_path: Path) -> None:
    # ytt computes the image (#@ annotations are comments to YAML: null as
    # written); a file without ytt's annotations is judged, and a template
    # that is not YAML stays an error
    ytt = ('#@ load("@ytt:data", "data")\n' + DEPLOYMENT.replace(
        "image: nginx:1.27", 'image: #@ data.values.registry + "/web:v1"'))
    assert ytt != '#@ load("@ytt:data", "data")\n' + DEPLOYMENT
    write(tmp_path, "demo/deploy/deployment.yml", ytt)
    write(tmp_path, "demo/deploy/values.yml", "#@data/values\n---\nregistry: registry.example\n")
    write(tmp_path, "plain/deployment.yml", ytt.split("\n", 1)[1])  # no ytt evidence: judged
    write(tmp_path, "demo/broken/deployment.yml", ytt.replace("  replicas", "\t  replicas", 1))
    run = check(tmp_path)
    assert aside(run.report) == {"demo/deploy/deployment.yml": "template", "demo/broken/deployment.yml": "template"}
    assert sorted((p, v) for p, _, v in run.located("error")) == [("demo/broken/deployment.yml", "build"),
                                                                  ("plain/deployment.yml", "schema")]


def test_a_go_template_with_bracket_delimiters_is_set_aside(tmp_path: Path) -> None:
    # a chart's policy sources, which a script copies into templates/ and
    # turns [[ into {{: an action on its own line is not YAML, one in a
    # value reads as a list of lists; a list of lists that is no action
    # (a command's arguments) is judged
    policy = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: policy\n  labels:\n"
              "    [[ include \"labels.common\" . | nindent 4 ]]\ndata: {a: b}\n")
    write(tmp_path, "policies/labels.yaml", policy)
    write(tmp_path, "policies/gated.yaml", "[[- if not .Values.cel.enabled ]]\n" + DEPLOYMENT + "[[- end ]]\n")
    write(tmp_path, "plain/cm.yaml", policy.replace('[[ include \"labels.common\" . | nindent 4 ]]', "[[a, b]]"))
    run = check(tmp_path)
    assert aside(run.report) == {"policies/labels.yaml": "template", "policies/gated.yaml": "template"}
    assert [p for p, _, _ in run.located("error")] == ["plain/cm.yaml"]


def test_a_key_a_ytt_template_writes_in_two_branches_is_ytt_s_choice(tmp_path: Path) -> None:
    # ytt judges repeated keys in what it writes: one per branch of an
    # #@ if / #@ elif is no defect (kapp-controller's dev build config); the
    # same key written twice outside any branch stays an error, as does a
    # tab further down a file whose repeated key is a branch's
    branches = ('#@ load("@ytt:data", "data")\n---\napiVersion: kbld.k14s.io/v1alpha1\nkind: Config\n'
                "sources:\n- image: app\n  docker:\n    buildx:\n"
                "      #@ if data.values.rapid:\n      pull: false\n      file: Dockerfile.dev\n"
                "      #@ elif data.values.push:\n      #! always rebuild\n      pull: true\n      #@ end\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "config-dev/build.yml", branches)
    write(tmp_path, "config-twice/build.yml", branches.replace("      #@ elif data.values.push:\n", ""))
    write(tmp_path, "config-tab/build.yml", branches + "  \tpath: .\n")
    run = check(tmp_path)
    assert sorted((p, line) for p, line, _ in run.located("error")) == [("config-tab/build.yml", 16),
                                                                        ("config-twice/build.yml", 13)]

def test_a_negative_case_in_a_test_directory_may_be_broken_yaml_on_purpose(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "test/e2e/smoke/basic-invalid.yaml", PARTIAL + "  args: [echo]-not-yaml\n")
    write(tmp_path, "test/e2e/smoke/basic.yaml", PARTIAL + "  args: [echo]-not-yaml\n")
    write(tmp_path, ".krew.yaml", "apiVersion: krew.googlecontainertools.github.com/v1alpha2\nkind: Plugin\n"
                                  "metadata: {name: x}\nspec:\n  platforms:\n  - uri: x\n"
                                  "    {{addURIAndSha \"https://x/{{ .TagName }}.tgz\" .TagName | indent 6 }}\n")
    run = check(tmp_path)
    assert [(p, s) for p, _, s in ((d["path"], d["line"], d["severity"]) for d in run.report["defects"])
            if p.startswith(("test/", ".krew"))] == [
        ("test/e2e/smoke/basic-invalid.yaml", "warning"), ("test/e2e/smoke/basic.yaml", "error")]


def test_the_cases_of_a_gator_suite_are_test_inputs_but_its_template_and_constraint_are_applied(
        tmp_path: Path) -> None:
    write(tmp_path, "library/policy/suite.yaml", "kind: Suite\napiVersion: test.gatekeeper.sh/v1alpha1\n"
          "metadata: {name: s}\ntests:\n- name: t\n  template: template.yaml\n"
          "  constraint: samples/c/constraint.yaml\n  cases:\n  - name: bad\n"
          "    object: samples/c/example_disallowed.yaml\n")
    write(tmp_path, "library/policy/samples/c/example_disallowed.yaml",
          "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: old}\n")
    write(tmp_path, "library/policy/samples/c/constraint.yaml", PARTIAL)  # applied: judged
    run = check(tmp_path)
    assert aside(run.report)["library/policy/samples/c/example_disallowed.yaml"] == "test-framework"
    assert {p for p, _, _ in run.located("error")} == {"library/policy/samples/c/constraint.yaml"}


def test_documentation_snippets_a_site_includes_are_fragments(tmp_path: Path) -> None:
    # mkdocs includes by a name in its include directory; a snippet shows fields with values to fill in
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "docs/snippets/store.yaml", PARTIAL.replace("name: web", "name: SECRET_NAME"))
    write(tmp_path, "docs/snippets/elided.yaml", PARTIAL + "  ...\n  more: x\n")
    write(tmp_path, "docs/snippets/gitops/kustomization.yaml", "resources: [sync.yaml]\n")
    write(tmp_path, "docs/snippets/gitops/sync.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\n"
          "kind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  interval: 1h\n"
          "  path: ./infrastructure/apps\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n")
    write(tmp_path, "docs/snippets/jinja.yaml", "{% raw %}\n" + PARTIAL + "{% endraw %}\n")
    write(tmp_path, "docs/guide.md", "{% include 'store.yaml' %}\n{% include 'elided.yaml' %}\n"
                                     "{% include 'gitops/kustomization.yaml' %}\n")
    write(tmp_path, "docs/unshown.yaml", PARTIAL)  # in the docs, but no page includes it: judged
    run = check(tmp_path)
    assert aside(run.report) == {"docs/snippets/jinja.yaml": "template"}
    assert {p for p, _, _ in run.located("error")} == {"docs/unshown.yaml"}
    assert {p for p, _, _ in run.located("warning")} >= {"docs/snippets/store.yaml", "docs/snippets/elided.yaml"}
    # the snippet's Flux Kustomization is shown, not applied: no controller root renders it
    assert not any(r["root"].startswith("flux:") for r in run.report["roots"])


def test_a_site_a_generator_builds_is_the_documentation_whatever_its_name(tmp_path: Path) -> None:
    # docs-gen/ holds Hugo's hugo.toml: its includes, which a page embeds by
    # the site's own path (readfile "/includes/..."), are fragments
    write(tmp_path, "docs-gen/includes/v1/service.yaml", SERVICE_LOWERCASE_PROTOCOL)
    write(tmp_path, "docs-gen/content/v1/page.md", '{{% readfile file="/includes/v1/service.yaml" %}}\n')
    write(tmp_path, "site-gen/includes/v1/service.yaml", SERVICE_LOWERCASE_PROTOCOL)  # no site config
    write(tmp_path, "site-gen/content/v1/page.md", '{{% readfile file="/includes/v1/service.yaml" %}}\n')
    write(tmp_path, "docs-gen/hugo.toml", 'title = "Guide"\n')
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("warning")} == {"docs-gen/includes/v1/service.yaml"}
    assert {p for p, _, _ in run.located("error")} == {"site-gen/includes/v1/service.yaml"}
    # Hugo's older config.toml says so only beside the content it builds
    (tmp_path / "docs-gen/hugo.toml").rename(tmp_path / "docs-gen/config.toml")
    assert {p for p, _, _ in check(tmp_path).located("warning")} == {"docs-gen/includes/v1/service.yaml"}
    (tmp_path / "docs-gen/content/v1/page.md").rename(tmp_path / "docs-gen/page.md")
    shutil.rmtree(tmp_path / "docs-gen/content")
    assert "docs-gen/includes/v1/service.yaml" in {p for p, _, _ in check(tmp_path).located("error")}
    # a site at the repository's top says nothing of the rest of it
    write(tmp_path, "mkdocs.yml", "site_name: x\n")
    assert "site-gen/includes/v1/service.yaml" in {p for p, _, _ in check(tmp_path).located("error")}


CSV_BASE = """\
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: widget-operator.v0.0.0
spec:
  displayName: Widget operator
  install:
    spec:
      deployments: null
    strategy: deployment
"""


def test_an_operator_sdk_csv_base_is_the_bundle_generators_input_but_the_samples_beside_it_are_judged(
        tmp_path: Path) -> None:
    # operator-sdk's scaffold: the manifests kustomization reads the CSV base
    # (no install strategy yet) and the samples; nothing names the generator
    write(tmp_path, "config/manifests/kustomization.yaml",
          "resources: [bases/widget.clusterserviceversion.yaml, ../samples]\n")
    write(tmp_path, "config/manifests/bases/widget.clusterserviceversion.yaml",
          CSV_BASE.replace("name: widget-operator", "name: Widget-operator").replace("strategy: deployment",
                                                                                     'strategy: ""'))
    write(tmp_path, "config/samples/kustomization.yaml", "resources: [widget.yaml]\n")
    write(tmp_path, "config/samples/widget.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Sample\n")
    # a CSV with its install strategy is what OLM installs: judged
    write(tmp_path, "bundle/manifests/kustomization.yaml", "resources: [widget.clusterserviceversion.yaml]\n")
    write(tmp_path, "bundle/manifests/widget.clusterserviceversion.yaml",
          CSV_BASE.replace("name: widget-operator", "name: Widget-operator"))
    run = check(tmp_path)
    assert {(p, v) for p, _, v in run.located("error")} == {
        ("config/samples/widget.yaml", "metadata"), ("bundle/manifests/widget.clusterserviceversion.yaml", "metadata")}
    assert ("config/manifests/bases/widget.clusterserviceversion.yaml", 4, "metadata") in run.located("warning")
    assert any(n["message"].startswith("1 error at operator-sdk ClusterServiceVersion bases")
               for n in run.report["notes"])
    # --roots all judges every root in full
    assert ("config/manifests/bases/widget.clusterserviceversion.yaml", 4, "metadata") in \
        check(tmp_path, "--roots", "all").located("error")


def test_a_csv_in_bases_beside_a_kustomization_is_the_base_the_repositorys_bundle_generator_reads(
        tmp_path: Path) -> None:
    # an older scaffold: the base names a placeholder version and has a
    # strategy but no deployment; no kustomization lists it, and the
    # Makefile runs `operator-sdk generate bundle` from deploy/ (reading
    # config/manifests/bases, --kustomize-dir's default)
    base = CSV_BASE.replace("name: widget-operator.v0.0.0", "name: widget-operator.vX.Y.Z").replace(
        "    spec:\n      deployments: null\n", "    spec: null\n")
    write(tmp_path, "deploy/config/manifests/kustomization.yaml", "resources: [../operator]\n")
    write(tmp_path, "deploy/config/manifests/bases/widget.clusterserviceversion.yaml", base)
    write(tmp_path, "deploy/config/operator/kustomization.yaml", "resources: [cm.yaml]\n")
    write(tmp_path, "deploy/config/operator/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    # the same file elsewhere, or with a deployment to install, is judged
    write(tmp_path, "olm/widget.clusterserviceversion.yaml", base)
    installs = base.replace("    spec: null\n", "    spec:\n      deployments: [{name: w, spec: {}}]\n")
    write(tmp_path, "other/bases/widget.clusterserviceversion.yaml", installs)
    write(tmp_path, "other/kustomization.yaml", "resources: []\n")
    errors = {p for p, _, v in check(tmp_path).located("error") if v == "metadata"}
    assert errors == {"deploy/config/manifests/bases/widget.clusterserviceversion.yaml",
                      "olm/widget.clusterserviceversion.yaml", "other/bases/widget.clusterserviceversion.yaml"}
    write(tmp_path, "Makefile", "bundle:\n\tcd deploy && $(OPERATOR_SDK) generate bundle --manifests "
                                "--deploy-dir config/ --version $(VERSION)\n")
    run = check(tmp_path)
    assert {p for p, _, v in run.located("error") if v == "metadata"} == {
        "olm/widget.clusterserviceversion.yaml", "other/bases/widget.clusterserviceversion.yaml"}
    assert any("[bundle-input]" in n["message"] and n["path"].startswith("deploy/config/manifests/bases")
               for n in run.report["notes"])


def test_a_workflow_argo_submit_names_is_complete_as_submitted(tmp_path: Path) -> None:
    # the app's CI runs `argo submit .argo/deploy.yaml --generate-name=...`:
    # the Argo CLI writes the name the file leaves out
    workflow = ("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  namespace: argo\n"
                "spec:\n  entrypoint: main\n  templates:\n  - name: main\n    container: {image: alpine:3.20}\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "metaphor/.argo/deploy.yaml", workflow)
    write(tmp_path, "metaphor/.github/workflows/main.yaml",
          "jobs:\n  deploy:\n    steps:\n    - run: |\n        ./argo-linux-amd64 submit .argo/deploy.yaml \\\n"
          "          --generate-name=\"app-${GITHUB_SHA}-\" \\\n          -p appName=app --wait\n")
    # submitted with no name option, or only named by a parameter: judged
    write(tmp_path, "metaphor/.argo/release.yaml", workflow)
    write(tmp_path, "metaphor/.gitlab-ci.yml", "release:\n  script:\n  - argo submit .argo/release.yaml -p x=y\n"
                                               "  - argo submit -f .argo/params.yaml --name rel .argo/none.yaml\n")
    write(tmp_path, "metaphor/.argo/params.yaml", workflow)
    run = check(tmp_path)
    assert sorted(p for p, _, _ in run.located("error")) == ["metaphor/.argo/params.yaml",
                                                             "metaphor/.argo/release.yaml"]
    assert [p for p, _, _ in run.located("warning")] == ["metaphor/.argo/deploy.yaml"]
    assert any("[bundle-input]" in n["message"] and "argo submit names" in n["message"]
               for n in run.report["notes"])


def test_an_application_argocd_app_create_names_is_complete_as_created(tmp_path: Path) -> None:
    # `argocd app create --file ../templates/api.yaml --name "$2"`: the CLI
    # names the Application the file leaves unnamed; without --name, judged
    app = ("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  namespace: argocd\n"
           "spec:\n  project: default\n  source: {repoURL: 'https://charts.example', chart: api, targetRevision: 1.0.0}\n"
           "  destination: {server: 'https://kubernetes.default.svc', namespace: api}\n")
    write(tmp_path, "argocd/templates/api.yaml", app)
    write(tmp_path, "argocd/templates/web.yaml", app)
    write(tmp_path, "argocd/scripts/add.sh", 'argocd app create \\\n--file "../templates/api.yaml" \\\n'
                                             '--revision "${1}" \\\n--name "${2}" \\\n--upsert\n'
                                             'argocd app create --file ../templates/web.yaml --upsert\n')
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["argocd/templates/web.yaml"]
    shown = {i["path"]: i["reason"] for i in run.report["inputs"]} | {s["path"]: s["reason"] for s in run.report["setAside"]}
    assert shown.get("argocd/templates/api.yaml") == "bundle-input"


def test_a_kustomization_piped_into_operator_sdk_generate_bundle_is_its_input(tmp_path: Path) -> None:
    # the generator completes the ClusterServiceVersion base: what is built is not what is applied
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "config/manifests/kustomization.yaml", "resources: [bases/widget.clusterserviceversion.yaml]\n")
    write(tmp_path, "config/manifests/bases/widget.clusterserviceversion.yaml",
          CSV_BASE.replace("name: widget-operator", "name: Widget-operator"))
    write(tmp_path, "config/other/kustomization.yaml", "resources: [bad.yaml]\n")
    write(tmp_path, "config/other/bad.yaml", PARTIAL.replace("name: web", "name: Web"))
    write(tmp_path, "Makefile", "MANIFESTS ?= config/manifests\nbundle:\n"
                                "\t$(KUSTOMIZE) build $(MANIFESTS) | \\\n"
                                "\t$(OPERATOR_SDK) generate bundle -q --overwrite\n")
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("error")} == {"config/other/bad.yaml"}
    assert any("[bundle-input]" in n["message"] for n in run.report["notes"])
    # the bases operator-sdk reads beside the kustomization (--kustomize-dir), listed or not
    write(tmp_path, "config/manifests/bases/unlisted.clusterserviceversion.yaml",
          CSV_BASE.replace("name: widget-operator", "name: Unlisted"))
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("error")} == {"config/other/bad.yaml"}
    (tmp_path / "Makefile").unlink()
    assert "config/manifests/bases/widget.clusterserviceversion.yaml" in {
        p for p, _, _ in check(tmp_path).located("error")}


def test_a_makefile_of_a_project_below_the_top_names_its_bundle_input_from_its_directory(tmp_path: Path) -> None:
    # nephio's operators/focom-operator: its own Makefile writes the
    # ClusterServiceVersion base (operator-sdk generate kustomize manifests)
    # and pipes the build of config/manifests into operator-sdk generate bundle
    makefile = ("bundle:\n\t$(OPERATOR_SDK) generate kustomize manifests -q\n"
                "\t$(KUSTOMIZE) build config/manifests | $(OPERATOR_SDK) generate bundle $(BUNDLE_GEN_FLAGS)\n")
    for project in ("operators/focom", "operators/other"):
        write(tmp_path, f"{project}/config/manifests/kustomization.yaml",
              "resources:\n- bases/focom.clusterserviceversion.yaml\n")
    write(tmp_path, "operators/focom/Makefile", makefile)
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["operators/other/config/manifests/kustomization.yaml"]
    assert [p for p, _, _ in run.located("warning")] == ["operators/focom/config/manifests/kustomization.yaml"]
    # a Makefile kept in the project's config/ (run from the project with
    # make -f config/Makefile): config/manifests is named from the project
    (tmp_path / "operators/focom/Makefile").unlink()
    write(tmp_path, "operators/focom/config/Makefile", makefile)
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["operators/other/config/manifests/kustomization.yaml"]
    assert [p for p, _, _ in run.located("warning")] == ["operators/focom/config/manifests/kustomization.yaml"]


def test_a_build_piped_into_a_program_kept_in_its_directory_is_that_programs_input(tmp_path: Path) -> None:
    # gatekeeper's helmify: `kustomize build cmd/build/helmify | go run
    # cmd/build/helmify/*.go` turns words like HELMSUBST_REPLICAS into Helm
    # templates: the build is a chart's source, not what is applied
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "cmd/build/helmify/kustomization.yaml", "resources: [deployment.yaml]\npatches:\n- path: helm.yaml\n")
    write(tmp_path, "cmd/build/helmify/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "cmd/build/helmify/helm.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                                                   "spec: {replicas: HELMSUBST_REPLICAS}\n")
    write(tmp_path, "cmd/build/helmify/main.go", "package main\n")
    write(tmp_path, "Makefile", "manifests:\n\tdocker run -v $(shell pwd):/src kustomize build \\\n"
                                "\t\t--load-restrictor LoadRestrictionsNone /src/cmd/build/helmify | go run "
                                "cmd/build/helmify/*.go\n\tkustomize build app | kubectl apply -f -\n")
    run = check(tmp_path)
    assert run.located("error") == [], run.out
    assert [p for p, _, _ in run.located("warning")] == ["cmd/build/helmify/helm.yaml"]
    # piped into kubectl, the same build is what is applied
    write(tmp_path, "Makefile", "manifests:\n\tkustomize build --load-restrictor LoadRestrictionsNone "
                                "cmd/build/helmify | kubectl apply -f -\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["cmd/build/helmify/helm.yaml"]


def test_a_patch_file_a_program_writes_is_not_a_defect(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "overlays/dev/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "overlays/dev/kustomization.yaml", "resources: [deployment.yaml]\n"
                                                       "patches:\n- path: manager_image_patch.yaml\n")
    write(tmp_path, "Makefile", "patch-image:\n\t@bash -c 'echo -e ${PATCH} > ./overlays/dev/manager_image_patch.yaml'\n")
    run = check(tmp_path)
    assert run.located("error") == [], run.out
    [written] = [d for d in run.report["defects"] if d["validator"] == "written"]
    assert "'manager_image_patch.yaml' does not exist" in written["message"]
    assert "Makefile writes it" in written["message"]


def test_a_file_a_page_beside_it_has_the_reader_write_is_not_a_defect(tmp_path: Path) -> None:
    # stolostron's Vector operator: the README beside the kustomization has
    # the reader fetch the certificates its secretGenerator reads
    # (oc get secret ... | base64 -d > ca.crt); a page elsewhere, or one that
    # only names the file, says nothing
    write(tmp_path, "operators/vector/kustomization.yaml",
          "secretGenerator:\n- name: managed-cluster-cert\n  files:\n  - ca.crt\n")
    write(tmp_path, "docs/README.md", "```\noc get secret certs -o jsonpath='{.data.ca}' | base64 -d > ca.crt\n```\n")
    write(tmp_path, "operators/vector/README.md", "The generator reads ca.crt.\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["operators/vector/kustomization.yaml"]
    write(tmp_path, "operators/vector/README.md",
          "```\noc get secret certs -o jsonpath='{.data.ca}' | base64 -d > ca.crt\noc apply -k .\n```\n")
    run = check(tmp_path)
    assert run.located("error") == [], run.out
    [written] = [d for d in run.report["defects"] if d["validator"] == "written"]
    assert "operators/vector/README.md beside it has the reader write it first" in written["message"]


def test_a_part_of_a_makefile_is_a_program_too(tmp_path: Path) -> None:
    # Config Sync: Makefile.reconcilermanager (which the Makefile includes)
    # moves controller-gen's CRDs into manifests/patch before it builds it;
    # a file of another name says nothing
    write(tmp_path, "manifests/patch/kustomization.yaml", "resources: [reposync-crd.yaml]\n")
    write(tmp_path, "Makefile", "include Makefile.reconcilermanager\n")
    recipe = ("configsync-crds:\n\tcontroller-gen crd output:artifacts:config=./manifests \\\n"
              "\t&& mv ./manifests/configsync.gke.io_reposyncs.yaml ./manifests/patch/reposync-crd.yaml \\\n"
              "\t&& kustomize build ./manifests/patch -o ./manifests\n")
    write(tmp_path, "notes.txt", recipe)
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["manifests/patch/kustomization.yaml"]
    write(tmp_path, "Makefile.reconcilermanager", recipe)
    run = check(tmp_path)
    assert run.located("error") == [], run.out
    [written] = [d for d in run.report["defects"] if d["validator"] == "written"]
    assert "Makefile.reconcilermanager writes it" in written["message"]

def test_a_token_a_program_replaces_makes_a_template_of_a_file_that_is_not_yaml(tmp_path: Path) -> None:
    # camel-k's e2e: the Go test replaces %%% with its namespace before applying
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "e2e/cross-ns/binding.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
                                                 "  namespace: %%%\n")
    write(tmp_path, "e2e/cross-ns/config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
                                                "  namespace: %\n")
    write(tmp_path, "e2e/cross_ns_test.go", 'package e2e\nfunc f(c []byte, ns string) string {\n'
                                            '\treturn strings.ReplaceAll(string(c), "%%%", ns)\n}\n')
    run = check(tmp_path)
    assert aside(run.report).get("e2e/cross-ns/binding.yaml") == "template"
    assert [p for p, _, _ in run.located("error")] == ["e2e/cross-ns/config.yaml"]
    # a word of the text replaced (secret:) is no placeholder
    write(tmp_path, "e2e/cross_ns_test.go", 'package e2e\nfunc f(c string) string {\n'
                                            '\treturn strings.ReplaceAll(c, "namespace:", "ns:")\n}\n')
    assert sorted(p for p, _, _ in check(tmp_path).located("error")) == ["e2e/cross-ns/binding.yaml",
                                                                          "e2e/cross-ns/config.yaml"]


def test_a_token_a_scripts_sed_replaces_makes_a_template_of_a_file_that_is_not_yaml(tmp_path: Path) -> None:
    # KubeVirt's SSP upgrade test: run.sh replaces %%_SSP_NAME_%% with sed and
    # pipes the result to oc apply; a file holding a token no program
    # replaces is judged (not YAML as written)
    cr = "apiVersion: ssp.kubevirt.io/v1beta2\nkind: SSP\nmetadata:\n  name: %%_SSP_NAME_%%\n"
    write(tmp_path, "automation/upgrade/ssp-cr-template.yaml", cr)
    write(tmp_path, "automation/other/ssp-cr.yaml", cr.replace("SSP_NAME", "OTHER_NAME"))
    write(tmp_path, "automation/upgrade/run.sh", '#!/bin/bash\nsed -e "s/%%_SSP_NAME_%%/${SSP_NAME}/g" \\\n'
                                                '    ${SOURCE_DIR}/ssp-cr-template.yaml | oc apply -f -\n')
    run = check(tmp_path)
    assert aside(run.report).get("automation/upgrade/ssp-cr-template.yaml") == "template"
    assert [p for p, _, _ in run.located("error")] == ["automation/other/ssp-cr.yaml"]

def test_a_token_a_program_replaces_where_yaml_reads_a_comment_makes_a_template(tmp_path: Path) -> None:
    # litmus's chaos server: image: #{ARGO_WORKFLOW_CONTROLLER} is YAML (an
    # empty image and a comment), and not what the server applies
    manifest = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: workflow-controller\nspec:\n"
                "  selector:\n    matchLabels: {app: wc}\n  template:\n    metadata:\n      labels: {app: wc}\n"
                "    spec:\n      containers:\n      - name: wc\n        image: #{ARGO_WORKFLOW_CONTROLLER}\n")
    write(tmp_path, "server/manifests/cluster/argo.yaml", manifest)
    write(tmp_path, "server/manifests/other/argo.yaml", manifest.replace("#{ARGO_WORKFLOW_CONTROLLER}", "#{OTHER}"))
    write(tmp_path, "server/pkg/infra.go", 'package infra\nfunc f(c string, image string) string {\n'
                                           '\treturn strings.Replace(c, "#{ARGO_WORKFLOW_CONTROLLER}", image, -1)\n}\n')
    run = check(tmp_path)
    assert aside(run.report).get("server/manifests/cluster/argo.yaml") == "template"
    # a token no program replaces leaves the file judged: its image is empty
    assert [p for p, _, _ in run.located("error")] == ["server/manifests/other/argo.yaml"]


def test_freemarker_templates_and_test_placeholders_that_are_not_yaml_yet(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "argocd/projects/default.ftl.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\n"
          "metadata:\n  name: default\n  annotations:\n<#if config.mail>\n    a: ${config.mail}\n</#if>\n")
    write(tmp_path, "policies/auth.yaml", "apiVersion: policy.linkerd.io/v1alpha1\nkind: NetworkAuthentication\n"
          "metadata: {name: n}\nspec:\n  networks:\n  - cidr: {IPv6}/128\n")
    run = check(tmp_path)
    assert aside(run.report) == {"argocd/projects/default.ftl.yaml": "template", "policies/auth.yaml": "template"}


def test_a_file_a_program_of_the_repository_writes_is_not_a_defect(tmp_path: Path) -> None:
    from dulwich.repo import Repo

    Repo.init(str(tmp_path)).close()  # a work tree with ignore rules
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "hack/image-patch/kustomization.yaml", "resources: [source-manifest.yaml]\n")
    write(tmp_path, "deploy/kustomization.yaml", "resources: [forgotten.yaml]\n")
    write(tmp_path, "Makefile", "image-patch:\n\tkustomize build config/default > hack/image-patch/source-manifest.yaml\n")
    run = check(tmp_path)
    assert [(p, v) for p, _, v in run.located("error")] == [("deploy/kustomization.yaml", "build")]
    [written] = [d for d in run.report["defects"] if d["validator"] == "written"]
    assert (written["path"], written["severity"]) == ("hack/image-patch/kustomization.yaml", "warning")
    assert "Makefile writes it" in written["message"]
    # a generator's input a Makefile writes (a certificate made before the build)
    write(tmp_path, "playground/kustomization.yaml", "secretGenerator:\n- name: tls\n  files:\n"
                                                     "  - tls.crt=.generated/dex.crt\n")
    write(tmp_path, "playground/Makefile", "certs:\n\topenssl x509 -req -out '$(DIR)/dex.crt'\n")
    run = check(tmp_path)
    assert [(p, v) for p, _, v in run.located("error")] == [("deploy/kustomization.yaml", "build")]
    assert ("playground/kustomization.yaml", "warning") in [
        (d["path"], d["severity"]) for d in run.report["defects"] if d["validator"] == "written"]
    # a script that copies the overlay beside the files it fetches names its directory
    write(tmp_path, "hack/bump.sh", "cp hack/overlays/fetched/*.yaml \"$tmp\"/\n")
    write(tmp_path, "hack/overlays/fetched/kustomization.yaml", "resources: [./daemonset-install.yaml]\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["deploy/kustomization.yaml"]
    # a file the ignore rules name is one the build generates (controller-gen's CRD bases)
    write(tmp_path, "config/crd/kustomization.yaml", "resources: [bases/example.com_widgets.yaml]\n")
    write(tmp_path, ".gitignore", "config/crd/bases/*\n")
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["deploy/kustomization.yaml"]
    assert any(".gitignore" in d["message"] for d in run.report["defects"] if d["path"] == "config/crd/kustomization.yaml")
    # a program that only builds a directory is no evidence: its build fails too
    write(tmp_path, "Makefile.deploy.mk", "deploy:\n\tkustomize build deploy | kubectl apply -f -\n")
    write(tmp_path, "deploy/kustomization.yaml", "resources: [forgotten-manifest.yaml]\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["deploy/kustomization.yaml"]


def test_a_directory_whose_kustomization_the_ignore_rules_name_is_generated(tmp_path: Path) -> None:
    from dulwich.repo import Repo

    Repo.init(str(tmp_path)).close()  # a work tree with ignore rules
    # config/default lists ../crd, which the build generates whole (controller-gen's
    # bases and the kustomization a script writes), and the ignore rules name
    write(tmp_path, "hack/generated/config/default/kustomization.yaml", "resources:\n- ../crd\n- ../rbac\n")
    write(tmp_path, "hack/generated/config/rbac/kustomization.yaml", "resources: []\n")
    write(tmp_path, "hack/generated/.gitignore", "config/crd/kustomization.yaml\nconfig/crd/bases/\n")
    write(tmp_path, "other/overlay/kustomization.yaml", "resources:\n- ../crd\n")  # nothing names other/crd
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["other/overlay/kustomization.yaml"]
    [written] = [d for d in run.report["defects"] if d["validator"] == "written"]
    assert written["path"] == "hack/generated/config/default/kustomization.yaml" and written["severity"] == "warning"
    assert "name its kustomization: a directory its build generates" in written["message"]


def test_a_base_in_a_git_submodule_not_fetched_is_another_repositorys(tmp_path: Path) -> None:
    # the overlays read ../base/NAME from the submodule base, which a clone
    # without --recurse-submodules leaves empty: not checked, one warning
    # each; in a submodule that is fetched, a missing path is judged
    write(tmp_path, ".gitmodules", '[submodule "base"]\n\tpath = base\n\turl = https://example.com/base\n'
                                   '[submodule "shared"]\n\tpath = shared\n\turl = https://example.com/shared\n')
    (tmp_path / "base").mkdir()
    write(tmp_path, "shared/README.md", "fetched\n")
    write(tmp_path, "web/kustomization.yaml", "resources:\n- ../base/web\n")
    write(tmp_path, "db/kustomization.yaml", "resources:\n- ../shared/db\n")
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["db/kustomization.yaml"]
    [written] = [d for d in run.report["defects"] if d["validator"] == "written"]
    assert (written["path"], written["severity"]) == ("web/kustomization.yaml", "warning")
    assert "git submodule base (.gitmodules), which this checkout has not fetched" in written["message"]


def test_a_directory_a_program_beside_it_makes_completes_a_copy(tmp_path: Path) -> None:
    # a dev environment's script copies its own directory elsewhere and
    # clones the upstream manifests beside the copies before building them
    write(tmp_path, "hack/dev-env/agent/kustomization.yaml", "resources:\n- ../argo-cd/manifests/crds\n")
    write(tmp_path, "hack/dev-env/setup.sh", 'cp -r ${SCRIPTPATH}/* $TMP_DIR\nmkdir -p ${TMP_DIR}/argo-cd\n'
                                             'cd ${TMP_DIR}/argo-cd && git fetch --depth=1 origin main\n')
    # the same name made by a program elsewhere is no evidence
    write(tmp_path, "deploy/agent/kustomization.yaml", "resources:\n- ../argo-cd/manifests/crds\n")
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["deploy/agent/kustomization.yaml"]
    [written] = [d for d in run.report["defects"] if d["validator"] == "written"]
    assert (written["path"], written["severity"]) == ("hack/dev-env/agent/kustomization.yaml", "warning")
    assert "hack/dev-env/setup.sh writes it" in written["message"]


def test_a_directory_a_program_makes_by_its_path_is_made_before_the_build(tmp_path: Path) -> None:
    # the Makefile copies the CRD base and generates into the copy before it
    # builds the overlays that read it (cp -R config/crd/ config/crd-small)
    write(tmp_path, "config/crd/kustomization.yaml", "resources: []\n")
    write(tmp_path, "config/default/kustomization.yaml", "resources:\n- ../crd-small\n")
    write(tmp_path, "config/other/kustomization.yaml", "resources:\n- ../crd-tiny\n")
    write(tmp_path, "Makefile", "clean:\n\trm -rf config/crd-tiny\nmanifests:\n\tcp -R config/crd/ config/crd-small\n"
                                "\tcp -R config/crd-tiny/x.yaml build/\n")
    run = check(tmp_path)
    # removing a directory, or copying from it, does not make it
    assert [p for p, _, _ in run.located("error")] == ["config/other/kustomization.yaml"]
    [written] = [d for d in run.report["defects"] if d["validator"] == "written"]
    assert written["path"] == "config/default/kustomization.yaml" and "Makefile writes it" in written["message"]
    write(tmp_path, "Makefile", "manifests:\n\t@mkdir -p ./config/crd-tiny\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["config/default/kustomization.yaml"]



def test_a_package_kpt_fetches_into_a_directory_is_there_before_the_build(tmp_path: Path) -> None:
    # a distribution's pull-upstream.sh fetches each upstream package with
    # kpt pkg get: into the kustomization's directory, which exists, kpt
    # writes a directory named after the package's last segment (upstream);
    # into a path that does not exist, that path itself
    write(tmp_path, "kf/apps/profiles/kustomization.yaml", "resources:\n- ./upstream/overlays/kubeflow\n")
    write(tmp_path, "kf/common/istio/kustomization.yaml", "resources:\n- ./upstream/base\n")
    write(tmp_path, "kf/common/roles/kustomization.yaml", "resources:\n- upstream/base\n")
    write(tmp_path, "kf/contrib/meta/kustomization.yaml", "resources:\n- upstream/base\n")
    write(tmp_path, "kf/pull-upstream.sh",
          '#!/usr/bin/env bash\nexport REPO=https://github.com/kubeflow/manifests.git\n'
          'mkdir -p apps/profiles\n'
          'kpt pkg get "${REPO}/apps/profiles/upstream@${VERSION}" apps/profiles\n'
          'kpt pkg get --strategy force-delete-replace "${REPO}/common/istio-1-16/@${VERSION}" common/istio/upstream/\n'
          # the package lands in common/roles/base, not upstream
          'kpt pkg get "${REPO}/common/base@${VERSION}" common/roles\n')
    run = check(tmp_path)
    assert sorted(p for p, _, _ in run.located("error")) == ["kf/common/roles/kustomization.yaml",
                                                            "kf/contrib/meta/kustomization.yaml"]
    written = sorted(d["path"] for d in run.report["defects"] if d["validator"] == "written")
    assert written == ["kf/apps/profiles/kustomization.yaml", "kf/common/istio/kustomization.yaml"]


def test_a_file_in_a_directory_a_program_makes_by_a_longer_path_is_made_before_the_build(tmp_path: Path) -> None:
    # secrets a Makefile beside the kustomization fetches into etc/.secrets/
    # (mkdir -p etc/.secrets/): `etc` alone is too short a name to be
    # evidence, `etc/.secrets` is not; a program making only `etc` is none
    generator = "secretGenerator:\n- name: auth\n  files:\n  - auth=etc/.secrets/somefile\n"
    write(tmp_path, "db/kustomization.yaml", generator)
    write(tmp_path, "db/Makefile", "secrets:\n\tmkdir -p etc/.secrets/\n\tvault kv get -field=x path > etc/.secrets/x\n")
    write(tmp_path, "web/kustomization.yaml", generator)
    write(tmp_path, "web/Makefile", "secrets:\n\tmkdir -p etc\n")
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["web/kustomization.yaml"]
    [written] = [d for d in run.report["defects"] if d["validator"] == "written"]
    assert written["path"] == "db/kustomization.yaml" and "db/Makefile writes it" in written["message"]



def test_a_directory_a_script_makes_through_a_variable_is_made_before_the_build(tmp_path: Path) -> None:
    # the install script beside the overlays makes ./base through a variable
    # and fetches the base into it before it builds (an openldap example)
    write(tmp_path, "ldap/overlays/dev/kustomization.yaml", "resources:\n- ../../base\n")
    write(tmp_path, "ldap/install.sh", '#!/bin/bash\nBASE_DIR="./base"\nmkdir -p ${BASE_DIR}\n'
                                       'curl -s -o "${BASE_DIR}/#1" "$URL/{kustomization.yaml}"\n'
                                       "kustomize build ./overlays/dev | kubectl apply -f -\n")
    write(tmp_path, "mq/overlays/dev/kustomization.yaml", "resources:\n- ../../base\n")
    # a variable given two values says nothing about which is made
    write(tmp_path, "mq/install.sh", '#!/bin/bash\nDIR=./base\nDIR=./other\nmkdir -p $DIR\n')
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["mq/overlays/dev/kustomization.yaml"]
    [written] = [d for d in run.report["defects"] if d["validator"] == "written"]
    assert written["path"] == "ldap/overlays/dev/kustomization.yaml" and "ldap/install.sh writes it" in written["message"]

def test_a_directory_a_script_makes_for_its_argument_from_its_parent_is_made_before_the_build(tmp_path: Path) -> None:
    # hack/package.sh GROUP makes packages/GROUP/install/generated through a
    # chain of variables rooted at the script's parent, then builds the package
    for group in ("email", "waf"):
        write(tmp_path, f"packages/{group}/install/kustomization.yaml", "resources:\n- generated/crd\n")
    write(tmp_path, "packages/waf/other/kustomization.yaml", "resources:\n- generated/crd\n")
    write(tmp_path, "cache/kustomization.yaml", "resources:\n- ../store/anything\n")
    write(tmp_path, "store/README.md", "one directory per group\n")
    write(tmp_path, "hack/package.sh",
          '#!/usr/bin/env bash\nROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)\n'
          'command_name=$1\ngroup=$2\npackage_dir="${ROOT_DIR}/packages/${group}"\n'
          'install_dir="${package_dir}/install"\ngenerated_dir="${install_dir}/generated"\n'
          'generated_crd_dir="${generated_dir}/crd"\nmkdir -p "${generated_crd_dir}/bases"\n'
          'mkdir -p "${ROOT_DIR}/store/${group}"\n')
    run = check(tmp_path)
    # another directory of the package, and a directory that is only the argument's name, are judged
    assert sorted(p for p, _, _ in run.located("error")) == ["cache/kustomization.yaml",
                                                             "packages/waf/other/kustomization.yaml"]
    written = {d["path"]: d for d in run.report["defects"] if d["validator"] == "written"}
    assert sorted(written) == ["packages/email/install/kustomization.yaml", "packages/waf/install/kustomization.yaml"]
    assert all("hack/package.sh writes it" in d["message"] for d in written.values())


def test_a_template_a_program_copies_elsewhere_is_built_at_the_copy(tmp_path: Path) -> None:
    # a copy-me cluster: scripts/validate.sh copies it to cluster depth and
    # builds the copy, so its paths (and its apps/ directory's) are written
    # for there, not for docs/examples/
    write(tmp_path, "infrastructure/profiles/dev/kustomization.yaml", "resources: []\n")
    write(tmp_path, "docs/examples/cluster-template/kustomization.yaml", "resources:\n- ../../../../profiles/dev\n")
    write(tmp_path, "docs/examples/cluster-template/apps/kustomization.yaml",
          "resources:\n- ../../../../../profiles/dev\n")
    write(tmp_path, "scripts/validate.sh",
          'cd "$REPO_ROOT"\nmkdir -p "$TPL/ns"\ncp -r docs/examples/cluster-template "$TPL/ns/cluster" && \\\n'
          '  kustomize build "$TPL/ns/cluster"\ncp -r build/output docs/examples/other-template\n')
    # the destination of a copy, and a directory the script only names, are judged
    write(tmp_path, "docs/examples/other-template/kustomization.yaml", "resources:\n- ../../../../profiles/dev\n")
    write(tmp_path, "docs/examples/third/kustomization.yaml", "resources:\n- ../../../../profiles/dev\n")
    run = check(tmp_path)
    assert sorted(p for p, _, _ in run.located("error")) == ["docs/examples/other-template/kustomization.yaml",
                                                             "docs/examples/third/kustomization.yaml"]
    written = {d["path"]: d for d in run.report["defects"] if d["validator"] == "written"}
    assert sorted(written) == ["docs/examples/cluster-template/apps/kustomization.yaml",
                               "docs/examples/cluster-template/kustomization.yaml"]
    assert all(d["severity"] == "warning" and "scripts/validate.sh writes it" in d["message"]
               for d in written.values())


def test_a_directory_whose_contents_a_program_copies_is_built_at_the_copy(tmp_path: Path) -> None:
    # cp -r DIR/* DEST (and DIR/.) copies what DIR holds: DIR's kustomizations
    # and those below it are completed at the copy, as with cp -r DIR DEST
    write(tmp_path, "stream/src/kustomization.yaml", "resources:\n- base\n")
    write(tmp_path, "stream/src/base/kustomization.yaml", "resources:\n- cluster/crds/apps-crd.yaml\n")
    write(tmp_path, "stream/src/Makefile.mk", "copy-source:\n\t@cp -r stream/src/* build\n")
    write(tmp_path, "Makefile", "include stream/src/Makefile.mk\n")
    write(tmp_path, "other/src/base/kustomization.yaml", "resources:\n- cluster/crds/apps-crd.yaml\n")
    write(tmp_path, "hack/copy.sh", "cp -r other/srcs/* build\n")  # another directory: judged
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["other/src/base/kustomization.yaml"]
    written = {d["path"]: d for d in run.report["defects"] if d["validator"] == "written"}
    assert list(written) == ["stream/src/base/kustomization.yaml"]
    assert "stream/src/Makefile.mk writes it" in written["stream/src/base/kustomization.yaml"]["message"]
    write(tmp_path, "stream/src/Makefile.mk", "copy-source:\n\tcp -r stream/src/. build\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["other/src/base/kustomization.yaml"]


def test_an_outline_of_a_kinds_fields_with_every_value_empty_is_not_an_object(tmp_path: Path) -> None:
    # a schema's documentation: each field written with no value, commented
    outline = ("apiVersion: testworkflows.testkube.io/v1\nkind: TestWorkflow\n# Object. Metadata.\nmetadata: {}\n"
               "spec:\n  after: []\n  config: {}\n  container:\n    args: []\n    env:\n    - name: \"\"\n"
               "      value: \"\"\n      valueFrom:\n  paused: false\n  parallelism: 0\n")
    write(tmp_path, "schemas/workflow_schema.yaml", outline)
    # one value written makes it an object, judged (no name)
    write(tmp_path, "workflows/smoke.yaml", outline.replace('    args: []', '    args: ["--smoke"]'))
    run = check(tmp_path)
    assert aside(run.report) == {"schemas/workflow_schema.yaml": "template"}
    assert [p for p, _, _ in run.located("error")] == ["workflows/smoke.yaml"]


def test_a_shell_command_with_its_here_document_saved_as_yaml_is_a_template(tmp_path: Path) -> None:
    # a Pod a shell pipes to kubectl (cat <<EOF | kubectl apply -f -), kept as .yml
    pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: inspector\nspec:\n  containers:\n  - name: c\n    image: busybox:1.36\n"
    write(tmp_path, "scripts/inspector-pod.yml", "cat <<EOF | kubectl apply -f -\n" + pod + "EOF\n")
    # a here-document inside a block scalar that ends the scalar is a defect, as before
    write(tmp_path, "app/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: run\ndata:\n"
                                          "  run.sh: |\n    cat <<EOF > /tmp/x\nhello\nEOF\n")
    run = check(tmp_path)
    assert aside(run.report) == {"scripts/inspector-pod.yml": "template"}
    assert [p for p, _, _ in run.located("error")] == ["app/configmap.yaml"]


def test_objects_a_page_gives_to_another_apis_client_are_not_kubernetes_objects(tmp_path: Path) -> None:
    # a VM orchestrator's manifests in apiVersion/kind form, created with its own CLI
    volume = "apiVersion: v1\nkind: Volume\nmetadata:\n  name: volume0\nspec:\n  size: 2\n"
    write(tmp_path, "41-volume/README.md", "Create the volume:\n\n    $ mactl create -f volume-0.yaml\n")
    write(tmp_path, "41-volume/volume-0.yaml", volume)
    write(tmp_path, "41-volume/volume-1.yaml", volume.replace("volume0", "volume1"))  # beside it
    # a typo of a served kind that a page applies with kubectl stays judged, and so
    # does a served kind given to the other client
    write(tmp_path, "app/README.md", "    k3s kubectl apply -f deploy.yaml\n    mactl create -f cm.yaml\n")
    write(tmp_path, "app/deploy.yaml", "apiVersion: v1\nkind: Deploymnet\nmetadata:\n  name: web\n")
    write(tmp_path, "app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Web\n")
    run = check(tmp_path)
    assert aside(run.report) == {"41-volume/volume-0.yaml": "data", "41-volume/volume-1.yaml": "data"}
    assert sorted(p for p, _, _ in run.located("error")) == ["app/cm.yaml", "app/deploy.yaml"]


def test_an_object_whose_name_is_written_blank_is_a_form_to_fill_in(tmp_path: Path) -> None:
    # an Application to copy: `name:` and `path:` left for the reader
    form = ("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name:\n  namespace: argocd\n"
            "spec:\n  project: apps\n  source:\n    path:\n    repoURL: https://example.com/repo.git\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "argocd/manifest-template.yaml", form)
    # an object that leaves the key out has no name: judged
    write(tmp_path, "argocd/broken.yaml", form.replace("  name:\n", ""))
    run = check(tmp_path)
    assert aside(run.report) == {"argocd/manifest-template.yaml": "template"}
    assert [p for p, _, _ in run.located("error")] == ["argocd/broken.yaml"]


def test_a_kustomization_a_program_fills_in_from_its_template_is_made_before_the_build(tmp_path: Path) -> None:
    # `cd $(call dir,$*)/manager && cp -f kustomization.yaml.in kustomization.yaml && kustomize edit set image`
    write(tmp_path, "config/aws/manager/kustomization.yaml.in", "resources: [manager.yaml]\n")
    write(tmp_path, "config/aws/manager/manager.yaml", DEPLOYMENT)
    write(tmp_path, "config/aws/default/kustomization.yaml", "resources: [../manager]\n")
    write(tmp_path, "Makefile", "deploy-%:\n\tcd $(call dir,$*)/manager && cp -f kustomization.yaml.in "
                                "kustomization.yaml\n\tkustomize build $(call dir,$*)/default | kubectl apply -f -\n")
    # a directory without a kustomization or a template: a program naming
    # kustomization.yaml (as every kustomize Makefile does) is no evidence
    write(tmp_path, "config/gcp/manager/manager.yaml", DEPLOYMENT)
    write(tmp_path, "config/gcp/default/kustomization.yaml", "resources: [../manager]\n")
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["config/gcp/default/kustomization.yaml"]
    [written] = [d for d in run.report["defects"] if d["validator"] == "written"]
    assert written["path"] == "config/aws/default/kustomization.yaml"
    assert "'kustomization.yaml' does not exist" in written["message"] and "Makefile writes it" in written["message"]


def test_a_directory_operator_sdk_generate_bundle_reads_with_input_dir_is_its_input(tmp_path: Path) -> None:
    # `cd DIR && operator-sdk generate bundle --version V --input-dir config`:
    # the released version replaces the base's vX.Y.Z
    write(tmp_path, "deploy/manager/config/manifests/kustomization.yaml",
          "resources: [bases/manager.clusterserviceversion.yaml]\n")
    write(tmp_path, "deploy/manager/config/manifests/bases/manager.clusterserviceversion.yaml",
          CSV_BASE.replace("name: widget-operator", "name: manager.vX.Y.Z"))
    write(tmp_path, "deploy/other/config/manifests/bases/other.clusterserviceversion.yaml",
          CSV_BASE.replace("name: widget-operator", "name: other.vX.Y.Z"))
    write(tmp_path, "hack/update-csv.sh", "cd $DEPLOY_DIR/manager && $BINDIR/operator-sdk generate bundle "
                                          "--version $V --input-dir config --output-dir olm-catalog/latest\n")
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("error")} == {
        "deploy/other/config/manifests/bases/other.clusterserviceversion.yaml"}
    assert ("deploy/manager/config/manifests/bases/manager.clusterserviceversion.yaml", "warning") in [
        (d["path"], d["severity"]) for d in run.report["defects"]]


def test_an_overlay_fleet_applies_to_a_charts_output_is_fleets_input(tmp_path: Path) -> None:
    # fleet.yaml: helm renders the chart, then kustomize.dir's overlay patches its objects
    write(tmp_path, "guestbook/fleet.yaml", "helm:\n  chart: https://example.com/guestbook-0.0.1.tgz\n"
                                            "targetCustomizations:\n- name: dev\n  kustomize:\n"
                                            "    dir: overlays/dev\n")
    overlay = "patches:\n- path: frontend.yaml\n"
    frontend = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: frontend\nspec:\n  replicas: 3\n"
    write(tmp_path, "guestbook/overlays/dev/kustomization.yaml", overlay)
    write(tmp_path, "guestbook/overlays/dev/frontend.yaml", frontend)
    write(tmp_path, "other/overlays/dev/kustomization.yaml", overlay)  # no fleet.yaml names it
    write(tmp_path, "other/overlays/dev/frontend.yaml", frontend)
    run = check(tmp_path)
    assert [(p, v) for p, _, v in run.located("error")] == [("other/overlays/dev/frontend.yaml", "build")]
    assert ("guestbook/overlays/dev/frontend.yaml", "warning") in [
        (d["path"], d["severity"]) for d in run.report["defects"] if d["validator"] == "build"]


def test_the_files_of_an_olm_package_or_bundle_are_olms_input(tmp_path: Path) -> None:
    # old bundle versions use removed APIs; OLM's registry reads them from a catalog image
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "deploy/olm-catalog/widget/widget.package.yaml",
          "channels:\n- currentCSV: widget.v0.2.0\n  name: alpha\npackageName: widget\n")
    old_crd = "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: w}\n"
    write(tmp_path, "deploy/olm-catalog/widget/0.0.1/widgets.crd.yaml", old_crd)
    write(tmp_path, "bundle/metadata/annotations.yaml",
          "annotations:\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n")
    write(tmp_path, "bundle/manifests/widgets.crd.yaml", old_crd)
    write(tmp_path, "deploy/crds/widgets.crd.yaml", old_crd)  # no OLM marker: judged
    # a Crossplane package: its package manager installs the CRDs and completes their webhooks
    write(tmp_path, "package/crossplane.yaml", "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\n"
                                               "metadata: {name: provider-widget}\n")
    write(tmp_path, "package/crds/widgets.yaml", old_crd)
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("error")} == {"deploy/crds/widgets.crd.yaml"}
    assert "package/crds/widgets.yaml" in {p for p, _, _ in run.located("warning")}
    assert {"bundle/manifests/widgets.crd.yaml", "deploy/olm-catalog/widget/0.0.1/widgets.crd.yaml"} <= {
        p for p, _, _ in run.located("warning")}


def test_every_document_of_a_plain_manifest_is_judged_on_its_own(tmp_path: Path) -> None:
    # one document without a name does not hide an unknown field two documents away
    unnamed = "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n"
    service = ("apiVersion: v1\nkind: Service\nmetadata: {name: web}\n"
               "spec:\n  ports:\n  - port: 80\n    protcol: TCP\n")
    write(tmp_path, "deploy/all.yaml", unnamed + "---\n" + DEPLOYMENT + "---\n" + service)
    run = check(tmp_path)
    assert run.code == 2
    located = run.located()
    assert ("deploy/all.yaml", 1, "build") in located  # the unnamed document, at its own line
    assert any(p == "deploy/all.yaml" and line == 27 and v == "schema" for p, line, v in located), located
    assert [r["root"] for r in run.report["roots"] if r["buildFailed"]] == ["deploy/all.yaml"]


def test_ansible_roles_go_fmt_and_envsubst_templates(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    # an Ansible role's task file: Jinja fills in the namespace, the k8s module removes what it names
    write(tmp_path, "roles/console-remove/tasks/resources.yml",
          "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  namespace: \"{{ vars.ns }}\"\n  name: console\n")
    write(tmp_path, "roles/console-remove/defaults/main.yml", "ns: default\n")
    write(tmp_path, "roles/console-remove/tasks/main.yml", "- name: remove\n  debug: {}\n")
    # a Go test's input filled in with fmt
    write(tmp_path, "test/suites/ami/testdata/input.yaml", "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n"
          "spec:\n  cluster:\n    name: %s\n    cidr: 10.100.0.0/16\n")
    write(tmp_path, "hack/node.yaml", "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n"
          "spec:\n  cluster:\n    name: %s\n")
    # an envsubst template outside any controller: a value wholly $VARIABLE is not judged
    write(tmp_path, "deploy/dev.yaml", DEPLOYMENT.replace("replicas: 1", "replicas: $REPLICAS")
          .replace("  name: web\n", "  name: web-$SUFFIX\n", 1))
    run = check(tmp_path)
    assert aside(run.report) == {"roles/console-remove/tasks/resources.yml": "template",
                                 "hack/node.yaml": "template", "test/suites/ami/testdata/input.yaml": "template"}
    assert run.located("error") == []
    assert ("deploy/dev.yaml", 6, "schema", "placeholder") in run.suppressed()
    assert ("deploy/dev.yaml", 4, "metadata", "placeholder") in run.suppressed()


def test_a_file_a_program_renders_with_envsubst_is_yaml_only_once_rendered(tmp_path: Path) -> None:
    # a bats test pipes its template through envsubst (a certificate at
    # column 0, indented by sed after) before kubectl applies it
    template = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ca\ndata:\n  ca.crt: |\n"
                "$CA_CERT\n  other: x\n")  # line 7 ends the block scalar
    write(tmp_path, "test/bats/tests/vault/ca.yaml", template)
    write(tmp_path, "test/bats/vault.bats", "@test \"ca\" {\n  envsubst < $BATS_TESTS_DIR/ca.yaml "
                                            "| sed 's/^-----/    -----/' | kubectl apply -f -\n}\n")
    write(tmp_path, "deploy/ca.yaml", template)  # outside the program's directory: a file that loses content
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    run = check(tmp_path)
    assert aside(run.report) == {"test/bats/tests/vault/ca.yaml": "template"}
    assert run.located("error") == [("deploy/ca.yaml", 7, "build")]
    # no evidence without the program
    (tmp_path / "test/bats/vault.bats").unlink()
    assert ("test/bats/tests/vault/ca.yaml", 7, "build") in check(tmp_path).located("error")


def test_a_root_that_fails_only_at_a_templating_tools_placeholders_is_not_built(tmp_path: Path) -> None:
    # a gruntwork boilerplate scaffold: the kustomization is Go template text, not YAML
    write(tmp_path, "boilerplate/app/base/kustomization.yaml",
          "resources:\n  - helm.yaml\nconfigMapGenerator:\n  - name: {{ .app_name }}-values\n"
          "    files: [values.yaml]\n")
    write(tmp_path, "boilerplate/app/base/helm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    # a Backstage skeleton: YAML, but an entry names its file by a placeholder, and an overlay builds it
    write(tmp_path, "skeleton/base/kustomization.yaml", "resources:\n  - ${{ values.name }}.yaml\n")
    write(tmp_path, "skeleton/dev/kustomization.yaml", "resources:\n  - ../base\n")
    # a ${NAME} entry is no templating tool's: Flux substitutes nothing in a kustomization
    write(tmp_path, "apps/web/kustomization.yaml", "resources:\n  - ${CLUSTER}.yaml\n")
    # nor is a file of Flux variables that is no YAML (an alias nothing defines): the build refuses it
    write(tmp_path, "apps/db/kustomization.yaml", "resources:\n  - ks.yaml\n")
    write(tmp_path, "apps/db/ks.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${APP}-db\n"
                                       "data:\n  claim: *pvc\n")
    # a scaffold that fails where no placeholder is: judged
    write(tmp_path, "scaffold/kustomization.yaml", "resources:\n  - missing.yaml\n  - ${{ values.name }}.yaml\n")
    run = check(tmp_path)
    errors = run.located("error")
    assert ("apps/web/kustomization.yaml", 2, "build") in errors
    assert [e for e in errors if e[0] == "apps/db/ks.yaml"]
    assert ("scaffold/kustomization.yaml", 2, "build") in errors
    assert not [e for e in errors if e[0].startswith(("boilerplate/", "skeleton/"))]
    notes = [n["message"] for n in run.report["notes"] if n["message"].endswith("[template]")]
    assert any(n.startswith("2 roots fail to build only at templates' placeholders") for n in notes), notes
    # a directory named to the run, or --roots all, is judged in full
    assert ("skeleton/base/kustomization.yaml", 2, "build") in check(tmp_path, "--roots", "all").located("error")


def test_a_root_that_fails_only_where_a_template_tree_renders_files_is_not_built(tmp_path: Path) -> None:
    # a Copier template: a directory named by a placeholder (flux bootstrap
    # writes gotk-components.yaml into the rendered one), a file the tree
    # holds as platform.yaml.jinja, a directory whose kustomization is
    # kustomization.yaml.jinja
    write(tmp_path, "template/clusters/{{ cluster_name }}/flux-system/kustomization.yaml",
          "resources:\n  - gotk-components.yaml\n")
    write(tmp_path, "template/configs/vpa/kustomization.yaml", "resources:\n  - platform.yaml\n")
    write(tmp_path, "template/configs/vpa/platform.yaml.jinja", "apiVersion: v1\nkind: Namespace\nmetadata:\n"
                                                                "  name: {{ platform }}\n")
    write(tmp_path, "template/observability/kustomization.yaml", "resources:\n  - 'exporters'  # per site\n")
    write(tmp_path, "template/observability/exporters/kustomization.yaml.jinja", "resources: []\n")
    # a file missing with no template to render it from: judged
    write(tmp_path, "template/configs/dns/kustomization.yaml", "resources:\n  - gone.yaml\n")
    run = check(tmp_path)
    assert [e for e in run.located("error") if e[2] == "build"] == [("template/configs/dns/kustomization.yaml", 2, "build")]
    notes = [n["message"] for n in run.report["notes"] if n["message"].endswith("[template]")]
    assert any(n.startswith("3 roots fail to build only at templates' placeholders") for n in notes), notes


def test_a_root_that_fails_only_at_what_terraform_fills_in_is_not_built(tmp_path: Path) -> None:
    # an Application a Terraform program renders with templatefile(): its
    # ${env} is Terraform's, filled before the Application is applied
    app = ("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: root\n  namespace: argocd\n"
           "spec:\n  project: default\n  source:\n    repoURL: https://github.com/me/conductr.git\n"
           "    targetRevision: main\n    path: envs/${env}\n"
           "  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n")
    write(tmp_path, ".krmcheck.yaml", "gitops:\n  repo-urls: [https://github.com/me/conductr.git]\n")
    write(tmp_path, "envs/app-root.tmpl.yaml", app)
    write(tmp_path, "envs/local/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n")
    write(tmp_path, "envs/app-other.yaml", app.replace("name: root", "name: other"))  # no program renders it
    write(tmp_path, "tf/main.tf", 'locals {\n  root = templatefile("${path.module}/../envs/app-root.tmpl.yaml", '
                                  '{ env = var.env })\n}\n')
    run = check(tmp_path)
    assert {(p, line) for p, line, c in run.located("error") if c == "build"} == {("envs/app-other.yaml", 11)}
    notes = [n["message"] for n in run.report["notes"] if n["message"].endswith("[template]")]
    assert any(n.startswith("1 root fails to build only at templates' placeholders") for n in notes), notes


def test_an_object_named_with_a_fill_in_word_in_braces_is_a_template(tmp_path: Path) -> None:
    # blank sample objects: `name: {VALUE}` is a fill-in word YAML reads as
    # a map of one key, so the build finds no name; a name that is a map
    # written out is a defect
    write(tmp_path, "samples/blank/configmap.yaml",
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {VALUE}\n  labels:\n    app: {VALUE}\n")
    write(tmp_path, "samples/broken/configmap.yaml",
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {app: web}\n")
    # an image written `{accountid}.dkr.ecr.{region}.amazonaws.com/app`: YAML
    # cannot read a map followed by text; a value starting with a map of its
    # own and going on (`{app: web}x`) is a slip, and stays an error
    image = "resources: [configmap.yaml]\nimages:\n- name: app\n  newName: {NAME}\n"
    write(tmp_path, "overlays/dev/kustomization.yaml", image.replace("{NAME}", "{accountid}.dkr.ecr.{region}.amazonaws.com/app"))
    write(tmp_path, "overlays/slip/kustomization.yaml", image.replace("{NAME}", "{app: web}.example.com/app"))
    for overlay in ("dev", "slip"):
        write(tmp_path, f"overlays/{overlay}/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    run = check(tmp_path)
    assert sorted(p for p, _, _ in run.located("error")) == ["overlays/slip/kustomization.yaml",
                                                             "samples/broken/configmap.yaml"]
    notes = [n["message"] for n in run.report["notes"] if n["message"].endswith("[template]")]
    assert any(n.startswith("2 roots fail to build only at templates' placeholders") for n in notes), notes


def test_a_file_a_go_program_gives_kubectl_patch_is_a_patch(tmp_path: Path) -> None:
    # a demo installer runs kubectl with an argument list: --patch-file and
    # a variable holding the path, --patch and the text of an embedded file
    partial = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: argocd-server\nspec:\n  template:\n" \
              "    spec:\n      containers:\n      - name: server\n        image: argocd:v3\n        args: [--insecure]\n"
    write(tmp_path, "cmd/demo/config/extension.yaml", partial)
    write(tmp_path, "cmd/demo/config/settings.yaml", partial.replace("argocd-server", "settings"))
    write(tmp_path, "cmd/demo/config/other.yaml", partial.replace("argocd-server", "other"))
    write(tmp_path, "cmd/demo/install.go", 'package demo\n\n//go:embed config/settings.yaml\nvar settingsYAML []byte\n\n'
                                           'func patch() {\n\tpatchFile := "cmd/demo/config/extension.yaml"\n'
                                           '\targs := []string{"patch", "deployment", "argocd-server", "--patch-file", '
                                           'patchFile}\n\trun("kubectl", args...)\n'
                                           '\trun("kubectl", "patch", "cm", "s", "--patch", string(settingsYAML))\n}\n')
    run = check(tmp_path)
    assert aside(run.report) == {"cmd/demo/config/extension.yaml": "patch-file",
                                 "cmd/demo/config/settings.yaml": "patch-file"}
    assert {p for p, _, _ in run.located("error")} == {"cmd/demo/config/other.yaml"}


def test_a_file_a_program_lists_among_the_patches_of_a_kustomization_it_writes_is_a_patch(tmp_path: Path) -> None:
    # a Terraform module writes the kustomization it applies on the node,
    # kured's release as the resource and this partial DaemonSet as its patch
    partial = ("apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: kured\n  namespace: kube-system\n"
               "spec:\n  selector:\n    matchLabels: {name: kured}\n  template:\n    metadata:\n"
               "      labels: {name: kured}\n    spec:\n      containers:\n      - name: kured\n"
               "        command: [/usr/bin/kured]\n")
    write(tmp_path, "modules/k3s/kustomize/kured.yaml", partial)
    write(tmp_path, "modules/k3s/kustomize/other.yaml", partial)  # listed nowhere: judged
    write(tmp_path, "modules/k3s/init.tf", 'resource "null_resource" "kustomization" {\n'
          '  provisioner "file" {\n    content = yamlencode({\n      kind = "Kustomization"\n'
          '      resources = ["https://example.com/kured.yaml"]\n      patchesStrategicMerge = concat(\n'
          '        [\n          file("${path.module}/kustomize/kured.yaml"),\n        ],\n        []\n      )\n'
          '    })\n  }\n}\n')
    run = check(tmp_path)
    assert aside(run.report).get("modules/k3s/kustomize/kured.yaml") == "patch-file"
    assert {p for p, _, _ in run.located("error")} == {"modules/k3s/kustomize/other.yaml"}


def test_a_file_a_page_or_script_applies_with_kubectl_patch_is_a_patch(tmp_path: Path) -> None:
    partial = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: repo-server\nspec:\n  template:\n" \
              "    spec:\n      containers:\n      - name: cmp\n        image: alpine:3.20\n" \
              "        volumeMounts:\n        - {name: plugins, mountPath: /plugins}\n"
    write(tmp_path, "cmp/manifests/repo-server-patch.yaml", partial)
    write(tmp_path, "cmp/README.md", "```\nkubectl -n argocd patch deployments/repo-server "
                                     "--patch-file manifests/repo-server-patch.yaml\n```\n")
    write(tmp_path, "hack/sidecar.yaml", partial)
    write(tmp_path, "hack/add-sidecar.sh", 'kubectl patch deploy/repo-server -p "$(cat hack/sidecar.yaml)"\n')
    write(tmp_path, "apps/repo-server.yaml", partial)  # only named by a page that applies it: judged
    write(tmp_path, "apps/README.md", "kubectl apply -f repo-server.yaml\n")
    run = check(tmp_path)
    assert aside(run.report) == {"cmp/manifests/repo-server-patch.yaml": "patch-file",
                                 "hack/sidecar.yaml": "patch-file"}
    assert {p for p, _, _ in run.located("error")} == {"apps/repo-server.yaml"}


def test_a_crd_in_a_test_directory_judges_no_object_outside_tests(tmp_path: Path) -> None:
    # an upgrade test's old CRD (the only one in the repository: the real one
    # is generated at build time) does not say what the cluster serves
    crd = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
           "metadata: {name: jobs.example.com}\n"
           "spec:\n  group: example.com\n  scope: Namespaced\n"
           "  names: {kind: Job, plural: jobs, singular: job, listKind: JobList}\n"
           "  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n"
           "      openAPIV3Schema:\n        type: object\n        properties:\n"
           "          spec:\n            type: object\n            properties:\n"
           "              version: {type: string, enum: [v1_19, v1_20]}\n")
    job = "apiVersion: example.com/v1\nkind: Job\nmetadata: {name: basic}\nspec:\n  version: v2_2\n"
    write(tmp_path, "api/src/test/resources/old-crd.yaml", crd)
    write(tmp_path, "examples/basic.yaml", job)
    write(tmp_path, "api/src/test/resources/job.yaml", job)
    run = check(tmp_path)
    assert run.located("error") == [], run.out
    assert "no schema for Job (example.com/v1)" in run.out
    # asked to check the tests' directory, its CRD judges what is there
    tests = check(tmp_path, "api/src/test")
    assert [p for p, _, _ in tests.located("error")] == ["api/src/test/resources/job.yaml"]
    # a CRD outside tests judges the examples
    write(tmp_path, "config/crd/jobs.yaml", crd)
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["examples/basic.yaml"]
    # `not-applied: {test-input: false}` judges by every CRD of the repository
    (tmp_path / "config/crd/jobs.yaml").unlink()
    write(tmp_path, ".krmcheck.yaml", "not-applied:\n  test-input: false\n")
    assert "examples/basic.yaml" in [p for p, _, _ in check(tmp_path).located("error")]


def test_a_case_invalid_on_purpose_beside_its_valid_twin_is_a_test_input(tmp_path: Path) -> None:
    # a validation example: invalid.yaml beside valid.yaml; invalid-snapshot-v1.yaml beside snapshot-v1.yaml
    bad = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata:\n- foo: bar\n"
    write(tmp_path, "examples/validation/valid.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n")
    write(tmp_path, "examples/validation/invalid.yaml", bad)
    write(tmp_path, "examples/snapshots/snapshot-v1.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n")
    write(tmp_path, "examples/snapshots/invalid-snapshot-v1.yaml", bad)
    write(tmp_path, "examples/alone/invalid-config.yaml", bad)  # no valid case beside it: judged
    # cases of a validation test beside the directory's one valid.yaml
    write(tmp_path, "authz/cr-validation/valid.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v}\n")
    write(tmp_path, "authz/cr-validation/invalid_multiple_providers.yaml", bad)
    write(tmp_path, "authz/other/invalid_multiple_providers.yaml", bad)  # no valid.yaml beside it: judged
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["authz/other/invalid_multiple_providers.yaml",
                                                       "examples/alone/invalid-config.yaml"]
    assert sorted({p for p, _, _ in run.located("warning")}) == ["authz/cr-validation/invalid_multiple_providers.yaml",
                                                                 "examples/snapshots/invalid-snapshot-v1.yaml",
                                                                 "examples/validation/invalid.yaml"]


def test_a_case_a_page_shows_refused_is_a_test_input(tmp_path: Path) -> None:
    # an exercise: the page names the file and, in the same section, quotes
    # the API server refusing the object it holds; the same refusal quoted
    # for another object, or in another section, is no evidence about a file
    service = ("apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\nspec:\n  selector: {{app: web}}\n"
               "  ports:\n  - port: 80\n  - port: 9090\n")
    write(tmp_path, "labs/services/src/broken/multiport.yaml", service.format(name="multiport-broken"))
    write(tmp_path, "labs/services/src/broken/other.yaml", service.format(name="other"))
    write(tmp_path, "labs/services/src/later.yaml", service.format(name="later"))
    write(tmp_path, "labs/services/README.md",
          "# Services\n\n## Error-1\n\n**`src/broken/multiport.yaml`:**\n\n```yaml\n# a comment, not a heading\n"
          "```\n\nand `src/broken/other.yaml` beside it.\n\n<details>\n\n```\nerror: Service \"multiport-broken\" "
          "is invalid: spec.ports[1].name: Required value\n```\n</details>\n\n## Next\n\nApply `src/later.yaml`.\n")
    run = check(tmp_path)
    assert sorted({p for p, _, _ in run.located("error")}) == ["labs/services/src/broken/other.yaml",
                                                                "labs/services/src/later.yaml"]
    assert {p for p, _, _ in run.located("warning")} == {"labs/services/src/broken/multiport.yaml"}
    [shown] = [i for i in run.report["inputs"] if i["path"] == "labs/services/src/broken/multiport.yaml"]
    assert shown["reason"] == "test-input"
    assert shown["why"] == ('labs/services/README.md shows the API server refusing it (Service "multiport-broken" '
                            'is invalid): a case invalid on purpose')


def test_a_workload_with_neither_selector_nor_image_is_a_patch(tmp_path: Path) -> None:
    # the shape of a strategic-merge patch of a Deployment made elsewhere
    # (Flux's helm-controller, tuned): no such object can be created
    patch = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: helm-controller, namespace: flux-system}\n"
             "spec:\n  template:\n    spec:\n      containers:\n      - name: manager\n"
             "        args: [--concurrent=20]\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "docs/tuning.yaml", patch)
    # one container with an image: an object missing its selector, judged
    write(tmp_path, "docs/whole.yaml", patch.replace("      - name: manager\n",
                                                     "      - name: manager\n        image: nginx:1.27\n"))
    # no containers at all, only an init container to add to the live one
    write(tmp_path, "docs/init.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: observer}\n"
                                      "spec:\n  template:\n    spec:\n      initContainers:\n"
                                      "      - {name: events, image: 'node:18-alpine'}\n")
    run = check(tmp_path)
    assert aside(run.report) == {"docs/tuning.yaml": "patch-file", "docs/init.yaml": "patch-file"}
    assert [p for p, _, _ in run.located("error")] == ["docs/whole.yaml"]


def test_a_workload_naming_only_its_images_is_an_image_override(tmp_path: Path) -> None:
    # image bumps kept beside a Flux tree, read by no root: each Deployment
    # says only which image a named container runs (no selector, no pod
    # labels for one to match): the patch of a workload made elsewhere
    bump = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: source-controller}\n"
            "spec:\n  template:\n    spec:\n      containers:\n      - name: manager\n"
            "        image: registry.example.com/mirror/source-controller:v1.4.1\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "infrastructure/overlays/poc/mirror-one.yaml", bump)
    write(tmp_path, "infrastructure/overlays/poc/mirror-two.yaml",
          bump.replace("source-controller}", "webhook}").replace("      containers:\n",
                                                                 "      initContainers:\n"
                                                                 "      - {name: init, image: 'busybox:1.36'}\n"
                                                                 "      containers:\n"))
    # pod labels without a selector: a whole object that forgot its selector
    write(tmp_path, "infrastructure/overlays/poc/whole.yaml",
          bump.replace("    spec:\n      containers", "    metadata: {labels: {app: web}}\n    spec:\n      containers"))
    # a replica count says more than an image: judged
    write(tmp_path, "infrastructure/overlays/poc/scaled.yaml", bump.replace("spec:\n  template", "spec:\n  replicas: 2\n  template"))
    run = check(tmp_path)
    assert aside(run.report) == {"infrastructure/overlays/poc/mirror-one.yaml": "patch-file",
                                 "infrastructure/overlays/poc/mirror-two.yaml": "patch-file"}
    assert sorted({p for p, _, _ in run.located("error")}) == ["infrastructure/overlays/poc/scaled.yaml",
                                                                 "infrastructure/overlays/poc/whole.yaml"]
    [why] = {s["why"] for s in run.report["setAside"] if s["path"].endswith("mirror-one.yaml")}
    assert "an image override's shape" in why
    # the same object in a root is built and applied as it is: judged
    write(tmp_path, "infrastructure/overlays/poc/kustomization.yaml", "resources: [mirror-one.yaml]\n")
    assert ("infrastructure/overlays/poc/mirror-one.yaml", 4, "schema") in check(tmp_path).located("error")


def test_a_workload_shaped_as_a_patch_among_complete_objects_has_warnings(tmp_path: Path) -> None:
    # a production file a page applies with kubectl apply: ConfigMaps, and a
    # patch of the Deployment made elsewhere (no selector, no image)
    patch = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: keycloak}\n"
             "spec:\n  template:\n    spec:\n      containers:\n      - name: keycloak\n"
             "        args: [start, --optimized]\n")
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keycloak-env}\ndata: {KC_DB: postgres}\n"
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "security/production.yaml", config + "---\n" + patch + "---\n" +
          config.replace("keycloak-env", "Bad_Name"))
    run = check(tmp_path)
    assert "security/production.yaml" not in aside(run.report)  # the file is judged, its ConfigMaps too
    assert run.located("error") == [("security/production.yaml", 18, "metadata")]
    assert {(p, line) for p, line, _ in run.located("warning")} >= {("security/production.yaml", 9),
                                                                   ("security/production.yaml", 13)}
    [note] = [n for n in run.report["notes"] if "shaped as patches" in n["message"]]
    assert note["message"].startswith("2 errors at objects shaped as patches")
    # the same Deployment with an image is an object missing its selector: an error
    write(tmp_path, "security/production.yaml", config + "---\n" +
          patch.replace("        args:", "        image: quay.io/keycloak/keycloak:26.0\n        args:"))
    assert [(p, line) for p, line, _ in check(tmp_path).located("error")] == [("security/production.yaml", 9)]


def test_a_workload_shaped_as_a_patch_in_a_kustomization_is_applied_onto_the_live_one(tmp_path: Path) -> None:
    # a kustomization an Argo CD Application syncs adds a pod annotation to
    # the cluster's own coredns Deployment: only the template's metadata, no
    # selector, no containers; what syncs it merges it onto the live object
    write(tmp_path, "config/coredns/deployment.yaml",
          "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: coredns\n  namespace: kube-system\n"
          "spec:\n  replicas: 3\n  template:\n    metadata:\n      annotations:\n        reload: 'true'\n")
    write(tmp_path, "config/coredns/pdb.yaml",
          "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: coredns\n  namespace: kube-system\n"
          "spec:\n  minAvailable: 1\n  selector: {matchLabels: {k8s-app: kube-dns}}\n")
    write(tmp_path, "config/kustomization.yaml", "resources:\n- coredns/deployment.yaml\n- coredns/pdb.yaml\n")
    # the same object with a container and an image is one missing its selector: judged
    write(tmp_path, "apps/web/deployment.yaml",
          "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n"
          "      containers:\n      - {name: web, image: 'nginx:1.27'}\n")
    write(tmp_path, "apps/web/kustomization.yaml", "resources:\n- deployment.yaml\n")
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["apps/web/deployment.yaml"]
    assert ("config/coredns/deployment.yaml", 6) in {(p, line) for p, line, _ in run.located("warning")}
    [note] = [n for n in run.report["notes"] if "shaped as patches" in n["message"]]
    assert note["message"].startswith("1 error at objects shaped as patches")


def test_an_object_of_nothing_but_its_annotations_is_applied_onto_the_live_one(tmp_path: Path) -> None:
    # an Argo CD-synced kustomization marks the platform's StorageClass the
    # default: only metadata, and a kind that requires provisioner; the same
    # StorageClass with no annotation, or one that writes a field, is judged
    marked = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: gp3-csi\n  annotations:\n"
              "    storageclass.kubernetes.io/is-default-class: 'true'\n")
    write(tmp_path, "config/default-class.yaml", marked)
    write(tmp_path, "config/kustomization.yaml", "resources:\n- default-class.yaml\n")
    run = check(tmp_path)
    assert run.located("error") == []
    assert ("config/default-class.yaml", 4) in {(p, line) for p, line, _ in run.located("warning")}
    [note] = [n for n in run.report["notes"] if "shaped as patches" in n["message"]]
    assert "nothing but its labels or annotations" in note["message"]
    write(tmp_path, "config/default-class.yaml", marked.replace("  annotations:\n", "  labels:\n").replace(
        "    storageclass.kubernetes.io/is-default-class: 'true'\n", "") + "reclaimPolicy: Retain\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["config/default-class.yaml"]


def test_an_ansible_play_that_renders_the_missing_file_completes_the_kustomization(tmp_path: Path) -> None:
    # the play copies the kustomization elsewhere and renders the file it
    # lists beside the copy (ansible.builtin.template)
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "bootstrap/cilium/kustomization.yaml", "resources: [application.yaml]\n")
    play = ("- name: Copy the kustomization\n  ansible.builtin.copy:\n"
            "    src: '{{ root }}/bootstrap/cilium/kustomization.yaml'\n    dest: '{{ out }}/kustomization.yaml'\n"
            "- name: Render the Application\n  ansible.builtin.template:\n"
            "    src: application.yaml.j2\n    dest: '{{ out }}/application.yaml'\n")
    write(tmp_path, "ansible/site/tasks/network/cilium.yml", play)
    run = check(tmp_path)
    assert run.located("error") == [], run.out
    [written] = [d for d in run.report["defects"] if d["validator"] == "written"]
    assert "ansible/site/tasks/network/cilium.yml writes it" in written["message"]
    # the same list of steps without Ansible's modules is no program
    write(tmp_path, "ansible/site/tasks/network/cilium.yml", play.replace("ansible.builtin.", "x."))
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["bootstrap/cilium/kustomization.yaml"]


def test_a_file_a_page_gives_to_the_repositorys_own_program_is_its_input(tmp_path: Path) -> None:
    # envoyproxy/ai-gateway's examples: `go run ./cmd/aigw run FILE` reads the
    # file (its substitution.aigw.run/env/KEY annotation is the CLI's), no API server
    bad = ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\n  annotations:\n"
           "    substitution.example.run/env/apiKey: TOKEN\n")
    write(tmp_path, "examples/mcp/config.yaml", bad)
    write(tmp_path, "examples/other/config.yaml", bad)
    write(tmp_path, "cmd/aigw/main.go", "package main\n")
    write(tmp_path, "examples/mcp/README.md", "```\n$ go run ./cmd/aigw run ./examples/mcp/config.yaml --debug\n```\n")
    write(tmp_path, "examples/other/README.md", "```\nkubectl apply -f examples/other/config.yaml\n```\n")
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["examples/other/config.yaml"]
    assert "examples/mcp/config.yaml" in {p for p, _, _ in run.located("warning")}


def test_a_template_a_go_program_embeds_and_fills_in_is_its_input(tmp_path: Path) -> None:
    # the operator compiles yaml-templates/ in, decodes each file and sets
    # the name written XXX and the image left empty before creating it
    template = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gateway\nspec:\n  selector:\n"
                "    matchLabels: {app: gateway, ns: XXX}\n  template:\n    metadata:\n      labels: {app: gateway}\n"
                "    spec:\n      containers:\n      - name: gateway\n        image:\n")
    write(tmp_path, "src/utils/yaml-templates/deployment.yaml", template)
    write(tmp_path, "src/utils/yaml-templates/crd-like.yaml", template.replace("ns: XXX", "ns: fixed"))
    write(tmp_path, "src/utils/utils.go", "package utils\n\nimport \"embed\"\n\n//go:embed yaml-templates\n"
                                          "var Templates embed.FS\n")
    write(tmp_path, "deploy/deployment.yaml", template)  # the same text, embedded by nothing
    run = check(tmp_path)
    errors = {p for p, _, _ in run.located("error")}
    assert errors == {"src/utils/yaml-templates/crd-like.yaml", "deploy/deployment.yaml"}, errors
    assert "src/utils/yaml-templates/deployment.yaml" in {p for p, _, _ in run.located("warning")}
    assert any("a template a Go program embeds and fills in" in n["message"] for n in run.report["notes"])
    # a glob of the program's own directory names the file too
    write(tmp_path, "src/utils/utils.go", "package utils\n\nimport \"embed\"\n\n"
                                          "//go:embed yaml-templates/*.yaml\nvar Templates embed.FS\n")
    assert "src/utils/yaml-templates/deployment.yaml" not in {p for p, _, _ in check(tmp_path).located("error")}


def test_values_in_an_objects_shape_that_go_embeds_are_its_input(tmp_path: Path) -> None:
    # the Sail operator embeds resources/v1.29.0/profiles/*.yaml (//go:embed
    # all:v*) and merges each profile's spec.values into a user's Istio:
    # kind Istio with no metadata at all, which no API server creates; so is
    # an object with no name of a kind nothing serves (istioctl's default
    # profile writes a namespace); the same file outside what Go embeds, an
    # embedded object that writes a name, and an unnamed one of a kind a CRD
    # of the repository serves, stay judged
    write(tmp_path, "crds/istio.yaml", crd("Istio", "type: object\nx-kubernetes-preserve-unknown-fields: true\n",
                                           group="sailoperator.io"))
    profile = "apiVersion: sailoperator.io/v1\nkind: Istio\nspec:\n  values:\n    pilot: {enabled: true}\n"
    write(tmp_path, "resources/v1.29.0/profiles/default.yaml", profile)
    write(tmp_path, "resources/v1.29.0/profiles/named.yaml", profile.replace("kind: Istio\n",
                                                                            "kind: Istio\nmetadata:\n  name: Bad_Name\n"))
    write(tmp_path, "resources/v1.29.0/profiles/namespaced.yaml", profile.replace(
        "kind: Istio\n", "kind: Istio\nmetadata:\n  namespace: istio-system\n"))
    write(tmp_path, "resources/v1.29.0/profiles/operator.yaml", profile.replace(
        "sailoperator.io/v1\nkind: Istio\n", "install.example.io/v1alpha1\nkind: IstioOperator\nmetadata:\n"
                                             "  namespace: istio-system\n"))
    write(tmp_path, "resources/resources.go", "package resources\n\nimport \"embed\"\n\n//go:embed all:v*\n"
                                              "var FS embed.FS\n")
    write(tmp_path, "docs/profiles/default.yaml", profile)
    run = check(tmp_path)
    assert sorted({p for p, _, _ in run.located("error")}) == ["docs/profiles/default.yaml",
                                                                 "resources/v1.29.0/profiles/named.yaml",
                                                                 "resources/v1.29.0/profiles/namespaced.yaml"]
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["resources/v1.29.0/profiles/default.yaml"] == (
        "resources/resources.go embeds it (//go:embed), and no object of it has metadata: values the program reads, "
        "not objects it creates")
    assert whys["resources/v1.29.0/profiles/operator.yaml"].endswith(
        "no object of it has a name or a kind an API serves: values the program reads, not objects it creates")


def test_a_manifest_go_embeds_and_then_sets_fields_of_in_code_is_its_input(tmp_path: Path) -> None:
    # an operator embeds a Deployment without an image (a //go:embed line
    # indented in a var block), decodes it and sets the image in code; a
    # second package embeds assets/* and another file of the program reads
    # assets/job.yaml by name and sets its namespace; a file embedded by Go
    # that sets nothing stays judged, as does the same text outside
    base = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: installer\nspec:\n  selector:\n"
            "    matchLabels: {app: installer}\n  template:\n    metadata:\n      labels: {app: installer}\n"
            "    spec:\n      containers:\n      - name: installer\n        command: [/installer]\n")
    write(tmp_path, "pkg/installer/assets/deployment.yaml", base)
    write(tmp_path, "pkg/installer/deployment.go",
          "package installer\n\nvar (\n\t//go:embed assets/deployment.yaml\n\tdeploymentYAML []byte\n)\n\n"
          "func build(image string) *appsv1.Deployment {\n\td := decode(deploymentYAML)\n"
          "\td.Spec.Template.Spec.Containers[0].Image = image\n\treturn d\n}\n")
    write(tmp_path, "pkg/jobs/bindata/assets/job.yaml", base.replace("installer", "job"))
    write(tmp_path, "pkg/jobs/bindata/assets.go", "package bindata\n\n//go:embed assets/*\nvar Assets embed.FS\n")
    write(tmp_path, "pkg/jobs/resources.go", "package jobs\n\nfunc build(ns, image string) {\n"
                                              "\tb, _ := bindata.Assets.ReadFile(\"assets/job.yaml\")\n"
                                              "\td := decode(b)\n\td.Namespace = ns\n"
                                              "\td.Spec.Template.Spec.Containers[0].Image = image\n}\n")
    write(tmp_path, "pkg/static/assets/static.yaml", base.replace("installer", "static"))
    write(tmp_path, "pkg/static/static.go", "package static\n\n//go:embed assets/static.yaml\nvar Static []byte\n")
    write(tmp_path, "deploy/deployment.yaml", base)
    run = check(tmp_path)
    assert sorted({p for p, _, _ in run.located("error")}) == ["deploy/deployment.yaml",
                                                                 "pkg/static/assets/static.yaml"]
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["pkg/installer/assets/deployment.yaml"] == (
        "pkg/installer/deployment.go embeds it (//go:embed), and pkg/installer/deployment.go sets fields of the "
        "decoded object in code before it creates it")
    assert "pkg/jobs/resources.go sets fields" in whys["pkg/jobs/bindata/assets/job.yaml"]


def test_a_template_in_kos_kodata_that_go_names_and_sets_fields_of_is_its_input(tmp_path: Path) -> None:
    # Tekton's operator: ko ships cmd/openshift/operator/kodata in the image,
    # and pipelinetemplates.go reads "pipeline_using_workspace.yaml" from it
    # and names each copy (SetName); the same file where no main package's
    # kodata holds it, or where no Go code names it, is judged
    pipeline = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: openshift\ndata: {a: b}\n"
    for folder in ("cmd/operator/kodata/templates", "cmd/tool/kodata/templates", "config/templates"):
        write(tmp_path, f"{folder}/pipeline_using_workspace.yaml", pipeline)
    write(tmp_path, "cmd/operator/kodata/templates/other.yaml", pipeline)
    write(tmp_path, "cmd/operator/main.go", "package main\n\nfunc main() {}\n")
    write(tmp_path, "cmd/tool/main.go", "package tool\n")
    write(tmp_path, "pkg/templates/templates.go",
          'package templates\n\nfunc generate(dir string) {\n\tm := read(path.Join(dir, "pipeline_using_workspace.yaml"))\n'
          '\tm.SetName(name + suffix)\n}\n')
    run = check(tmp_path)
    assert sorted({p for p, _, _ in run.located("error")}) == [
        "cmd/operator/kodata/templates/other.yaml", "cmd/tool/kodata/templates/pipeline_using_workspace.yaml",
        "config/templates/pipeline_using_workspace.yaml"]
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["cmd/operator/kodata/templates/pipeline_using_workspace.yaml"] == (
        "ko ships it with cmd/operator/main.go (its kodata/), and pkg/templates/templates.go sets fields of "
        "the decoded object in code before it creates it")




def test_the_yaml_beside_a_kustomize_exec_plugin_is_its_configuration_and_test_input(tmp_path: Path) -> None:
    # Agilicus' plugins, laid out as kustomize loads legacy exec plugins
    # (<apiVersion>/<lowercased kind>/<Kind>): a configuration example named
    # by a regular expression (secret-.*) and a sample Service without ports
    # the plugin's test feeds it; the same files elsewhere, or beside a plugin
    # file that is not executable, are judged
    config = "apiVersion: agilicus/v1\nkind: SecretMerge\nmetadata:\n  name: secret-.*\ntype: Secret\n"
    sample = "apiVersion: v1\nkind: Service\nmetadata:\n  name: without-ports\nspec:\n  ports: []\n"
    for home in ("agilicus/v1/secretmerge", "other/v1/secretmerge"):
        write(tmp_path, f"{home}/example.yaml", config)
        write(tmp_path, f"{home}/sample.yaml", sample)
        write(tmp_path, f"{home}/SecretMerge", "#!/usr/bin/env python3\nprint()\n")
    (tmp_path / "agilicus/v1/secretmerge/SecretMerge").chmod(0o755)
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("error")} == {"other/v1/secretmerge/example.yaml",
                                                        "other/v1/secretmerge/sample.yaml"}
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["agilicus/v1/secretmerge/sample.yaml"].startswith(
        "beside the kustomize exec plugin v1/secretmerge/SecretMerge"), whys


def test_a_template_a_script_gives_oc_process_is_its_input(tmp_path: Path) -> None:
    # deploy.sh renders an OpenShift Template on the client (`oc process -f
    # ${BASEDIR}/deploy.yaml ... | oc apply -f -`): its name is no cluster
    # finding; the same Template nothing processes, and a file oc applies,
    # are judged
    template = ("kind: Template\napiVersion: template.openshift.io/v1\nmetadata:\n  name: Dev_Ops\nobjects:\n"
                "- {apiVersion: v1, kind: ConfigMap, metadata: {name: '${NAME}'}}\nparameters:\n- name: NAME\n")
    write(tmp_path, "deploy.yaml", template)
    write(tmp_path, "other/deploy.yaml", template)
    write(tmp_path, "applied/deploy.yaml", template)
    write(tmp_path, "deploy.sh", "#!/bin/sh\nBASEDIR=$(dirname $0)\noc process -f ${BASEDIR}/deploy.yaml \\\n"
                                 "    -p NAME=x | oc apply -f -\noc apply -f applied/deploy.yaml\n")
    run = check(tmp_path)
    assert sorted({p for p, _, _ in run.located("error")}) == ["applied/deploy.yaml", "other/deploy.yaml"]
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["deploy.yaml"].startswith("deploy.sh gives it to oc process"), whys
    assert [p for p, _, _ in run.located("warning")] == ["deploy.yaml"]


def test_a_template_of_openshifts_ungrouped_v1_form_is_refused_by_oc_too(tmp_path: Path) -> None:
    # OpenShift 3's `apiVersion: v1` Template: no API server serves it, and
    # oc stopped converting it in 4.17, so it stays an error where a script
    # gives it to oc process; the message names the group that serves it
    write(tmp_path, "deploy.yaml", "kind: Template\napiVersion: v1\nmetadata:\n  name: devops\nobjects: []\n")
    write(tmp_path, "deploy.sh", "#!/bin/sh\noc process -f deploy.yaml | oc apply -f -\n")
    write(tmp_path, "route.yaml", "apiVersion: v1\nkind: Route\nmetadata:\n  name: web\nspec:\n  to: {name: web}\n")
    run = check(tmp_path)
    errors = {d["path"]: d["message"] for d in run.report["defects"] if d["severity"] == "error"}
    assert sorted(errors) == ["deploy.yaml", "route.yaml"]
    assert "OpenShift serves Template only in template.openshift.io/v1" in errors["deploy.yaml"]
    assert "oc stopped converting the old form in 4.17" in errors["deploy.yaml"]
    assert errors["route.yaml"].endswith("write apiVersion: route.openshift.io/v1")
    assert [i["path"] for i in run.report["inputs"]] == ["deploy.yaml"]

def test_a_kustomization_go_builds_with_kustomizes_api_and_transforms_is_its_input(tmp_path: Path) -> None:
    # llama-stack's operator: the Dockerfile copies controllers/manifests
    # into the image, the controller builds "manifests/base" with krusty and
    # its field mutators write the storage request and the port from the
    # custom resource; a root it does not name, and the same base where no
    # Go transforms the build, are judged
    pvc = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: pvc\nspec:\n"
           "  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: {}\n")
    for root in ("controllers/manifests/base", "deploy/base"):
        write(tmp_path, f"{root}/kustomization.yaml", "resources: [pvc.yaml]\n")
        write(tmp_path, f"{root}/pvc.yaml", pvc)
    write(tmp_path, "controllers/controller.go", 'package controllers\n\nconst manifestsBasePath = "manifests/base"\n'
                                                 'import "k8s.io/api/core/v1"\n')
    kustomizer = ('package deploy\n\nimport (\n\t"sigs.k8s.io/kustomize/api/krusty"\n)\n\n'
                  "func Render(fs filesys.FileSystem, path string) {\n"
                  "\tk := krusty.MakeKustomizer(krusty.MakeDefaultOptions())\n\tm, _ := k.Run(fs, path)\n"
                  "\t_ = storagePlugin.Transform(m)\n}\n")
    write(tmp_path, "pkg/deploy/kustomizer.go", kustomizer)
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("error")} == {"deploy/base/pvc.yaml"}
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["controllers/manifests/base"].startswith(
        "controllers/controller.go names it, and pkg/deploy/kustomizer.go builds it with kustomize's Go API"), whys
    # building with krusty and creating the result as it is completes nothing
    write(tmp_path, "pkg/deploy/kustomizer.go", kustomizer.replace("\t_ = storagePlugin.Transform(m)\n", ""))
    assert {p for p, _, _ in check(tmp_path).located("error")} == {"deploy/base/pvc.yaml",
                                                                    "controllers/manifests/base/pvc.yaml"}


def test_a_template_a_java_class_loads_from_its_package_and_fills_in_is_its_input(tmp_path: Path) -> None:
    # the Java operator SDK's Tomcat sample: TomcatController loads
    # "deployment.yaml" of its own package from the classpath and names the
    # Deployment in code; a class that only reads a resource, and a
    # resource no class loads, are judged
    blank = DEPLOYMENT.replace("name: web", 'name: ""', 1)
    write(tmp_path, "src/main/resources/com/example/demo/deployment.yaml", blank)
    write(tmp_path, "src/main/resources/com/example/demo/other.yaml", blank)
    write(tmp_path, "src/main/resources/com/example/read/deployment.yaml", blank)
    write(tmp_path, "src/main/java/com/example/demo/TomcatController.java",
          'package com.example.demo;\nclass TomcatController {\n  void create() {\n'
          '    Deployment d = loadYaml(Deployment.class, "deployment.yaml");\n'
          '    d.getMetadata().setName(name);\n  }\n'
          '  <T> T loadYaml(Class<T> c, String yaml) { return unmarshal(getClass().getResourceAsStream(yaml), c); }\n}\n')
    write(tmp_path, "src/main/java/com/example/read/Reader.java",
          'package com.example.read;\nclass Reader {\n  Object read() { return getClass().getResourceAsStream("deployment.yaml"); }\n}\n')
    run = check(tmp_path)
    assert sorted({p for p, _, _ in run.located("error")}) == ["src/main/resources/com/example/demo/other.yaml",
                                                                "src/main/resources/com/example/read/deployment.yaml"]
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["src/main/resources/com/example/demo/deployment.yaml"] == (
        "src/main/java/com/example/demo/TomcatController.java loads it from the classpath and sets its fields before "
        "it creates the object")

def test_a_template_a_program_reads_by_its_own_path_and_fills_in_is_its_input(tmp_path: Path) -> None:
    # a Node handler reads manifests/cronjob.yaml beside it, parses it and
    # sets its name, volumes and mounts before creating it through the API; a
    # Python program does the same with Path(__file__).parent; a program that
    # reads a file without setting any field, and a file no program reads, are judged
    cronjob = ("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: job\nspec:\n  schedule: '* * * * *'\n"
               "  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n"
               "          containers:\n          - name: job\n            image: busybox:1.36\n"
               "            volumeMounts:\n            - {name: dummy-volume, mountPath: /dummy}\n")
    for rel in ("platform/handlers/manifests/cronjob.yaml", "platform/handlers/manifests/pipeline-github.yaml",
                "tools/templates/job.yaml", "tools/other/job.yaml", "deploy/cronjob.yaml"):
        write(tmp_path, rel, cronjob)
    write(tmp_path, "platform/handlers/cronjob.js",
          "import yaml from 'js-yaml';\nconst manifest = fs.readFileSync(`${__dirname}/manifests/cronjob.yaml`, 'utf8');\n"
          "const resource = yaml.load(manifest);\nconst { metadata, spec } = resource;\nmetadata.name = definition.iid;\n"
          "const pipeline = fs.readFileSync(`${__dirname}/manifests/${repoType}-github.yaml`, 'utf8');\n")
    write(tmp_path, "tools/make_job.py",
          "import yaml\nfrom pathlib import Path\n\nwith open(Path(__file__).parent / 'templates' / 'job.yaml') as f:\n"
          "    job = yaml.safe_load(f)\njob['metadata']['name'] = name\n")
    write(tmp_path, "tools/show.py",
          "import os, yaml\nprint(yaml.safe_load(open(os.path.join(os.path.dirname(__file__), 'other', 'job.yaml'))))\n")
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("error")} == {"tools/other/job.yaml", "deploy/cronjob.yaml"}
    assert {p for p, _, _ in run.located("warning")} >= {"platform/handlers/manifests/cronjob.yaml",
                                                         "platform/handlers/manifests/pipeline-github.yaml",
                                                         "tools/templates/job.yaml"}
    assert any("a template a program reads by its own path and fills in" in n["message"]
               for n in run.report["notes"])


def test_a_template_a_page_or_program_turns_with_sed_into_what_it_applies_is_its_input(tmp_path: Path) -> None:
    # the page's commands replace service_name and target_port, writing the
    # result elsewhere (or piping it to kubectl): the template's words are no values
    template = ("apiVersion: v1\nkind: Service\nmetadata:\n  name: service_name\nspec:\n  ports:\n"
                "  - port: 80\n    targetPort: target_port\n")
    write(tmp_path, "ingress/external/template.yaml", template)
    write(tmp_path, "ingress/external/readme.md", '```bash\nsed \\\n  -e "s/service_name/$name/" \\\n'
          '  -e "s/target_port/$port/" \\\n  ./ingress/external/template.yaml \\\n'
          '  > ./ingress/external/env/$name.yaml\n```\n')
    write(tmp_path, "net/cp.gen.yaml", template)
    write(tmp_path, "net/apply.sh", 'sed "s/service_name/web/" cp.gen.yaml | kubectl apply -f -\n')
    write(tmp_path, "other/template.yaml", template)  # edited in place: no other output
    write(tmp_path, "other/fix.sh", 'sed -i "s/service_name/web/" other/template.yaml\n')
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("error")} == {"other/template.yaml"}
    assert {p for p, _, _ in run.located("warning")} >= {"ingress/external/template.yaml", "net/cp.gen.yaml"}


def test_a_file_the_page_of_a_programs_own_directory_gives_to_it_is_its_input(tmp_path: Path) -> None:
    # datadog-operator's yaml-mapper: cmd/yaml-mapper/README.md runs
    # `yaml-mapper --headerPath=examples/example_header.yaml ...`, a header
    # without metadata the program completes
    header = "apiVersion: v1\nkind: ConfigMap\ndata: {mode: header}\n"
    write(tmp_path, "cmd/yaml-mapper/main.go", "package main\n")
    write(tmp_path, "cmd/yaml-mapper/examples/example_header.yaml", header)
    write(tmp_path, "cmd/yaml-mapper/README.md",
          "```shell\nyaml-mapper --sourcePath=examples/source.yaml --headerPath=examples/example_header.yaml\n```\n")
    # the page of a program that applies what it is given is no such evidence
    write(tmp_path, "cmd/kubectl/examples/header.yaml", header)
    write(tmp_path, "cmd/kubectl/README.md", "```\nkubectl apply -f examples/header.yaml\n```\n")
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["cmd/kubectl/examples/header.yaml"]
    assert [p for p, _, _ in run.located("warning")] == ["cmd/yaml-mapper/examples/example_header.yaml"]


def test_a_file_a_makefile_gives_to_a_program_it_builds_is_its_input(tmp_path: Path) -> None:
    # openshift/cluster-logging-operator: `go build -o $@
    # ./internal/cmd/forwarder-generator` in the rule for
    # bin/forwarder-generator, then `bin/forwarder-generator --file hack/x.yaml`
    bad = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Input\n"
    write(tmp_path, "hack/generator/input.yaml", bad)
    write(tmp_path, "hack/other/input.yaml", bad)
    write(tmp_path, "internal/cmd/forwarder-generator/main.go", "package main\n")
    write(tmp_path, "Makefile", ".PHONY: bin/forwarder-generator\nbin/forwarder-generator:\n"
                                "\tgo build $(BUILD_OPTS) -o $@ ./internal/cmd/forwarder-generator\n\n"
                                "check: bin/forwarder-generator\n"
                                "\tbin/forwarder-generator --file hack/generator/input.yaml > /dev/null\n"
                                "\tkubectl apply -f hack/other/input.yaml\n")
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["hack/other/input.yaml"]
    assert [p for p, _, _ in run.located("warning")] == ["hack/generator/input.yaml"]


def test_a_file_a_test_program_reads_is_a_test_input(tmp_path: Path) -> None:
    # harbor-operator: harbor_test.go reads ./manifests/jobservice/NAME.yaml,
    # partial Harbors the test completes
    partial = "apiVersion: v1\nkind: Service\nmetadata:\n  name: jobservice\nspec: {}\n"
    write(tmp_path, "controllers/harbor/manifests/jobservice/default.yaml", partial)
    write(tmp_path, "controllers/harbor/harbor_test.go",
          'package harbor\nvar input = fileString("./manifests/jobservice/" + name + ".yaml")\n')
    write(tmp_path, "controllers/other/manifests/service.yaml", partial)
    write(tmp_path, "controllers/other/other.go", 'package other\nvar input = fileString("./manifests/")\n')
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["controllers/other/manifests/service.yaml"]
    assert [p for p, _, _ in run.located("warning")] == ["controllers/harbor/manifests/jobservice/default.yaml"]


def test_a_skeleton_of_every_field_in_docs_is_a_field_reference(tmp_path: Path) -> None:
    # a generated API reference: every field listed with an empty value
    fields = "".join(f"  field{i}: \"\"\n" for i in range(24))
    write(tmp_path, "docs/spec/widgets.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
                                             "  name: example\nspec:\n  replicas: 0\n" + fields)
    write(tmp_path, "docs/examples/deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
                                                    "  name: example\nspec:\n  replicas: 1\n")
    run = check(tmp_path)
    assert aside(run.report).get("docs/spec/widgets.yaml") is None
    assert "docs/spec/widgets.yaml" in {p for p, _, _ in run.located("warning")}
    assert {p for p, _, _ in run.located("error")} == {"docs/examples/deployment.yaml"}


def test_a_program_elsewhere_naming_the_bare_file_name_is_no_evidence(tmp_path: Path) -> None:
    # kustomize's own example names kustomizeconfig/mykind.yaml, which is not
    # there; a test far from it writes base/mykind.yaml into its in-memory
    # file system: the example still does not build
    write(tmp_path, "examples/images/kustomization.yaml", "resources: [cm.yaml]\npatches:\n- path: mykind.yaml\n")
    write(tmp_path, "examples/images/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    write(tmp_path, "api/krusty/crd_test.go", 'package krusty\nfunc f() { th.WriteF("base/mykind.yaml", "") }\n')
    run = check(tmp_path)
    assert [p for p, _, v in run.located("error")] == ["examples/images/kustomization.yaml"]
    # a program in the same part of the repository naming it writes it
    write(tmp_path, "examples/gen.sh", "cat > images/mykind.yaml <<EOF\nEOF\n")
    assert check(tmp_path).located("error") == []



def test_a_program_elsewhere_that_names_the_directory_in_a_variable_writes_the_file(tmp_path: Path) -> None:
    # installers/olm/generate.sh splits the RBAC into config/rbac/cluster before
    # it builds (target_dir="../../config/rbac/cluster"; mv x "$target_dir/role.yaml")
    write(tmp_path, "config/rbac/cluster/kustomization.yaml", "resources: [service_account.yaml]\n")
    write(tmp_path, "installers/olm/generate.sh", "echo split\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["config/rbac/cluster/kustomization.yaml"]
    write(tmp_path, "installers/olm/generate.sh", 'target_dir="../../config/rbac/cluster"\n'
                                                  'mv output-01 "$target_dir/service_account.yaml"\n')
    assert check(tmp_path).located("error") == []


def test_a_file_a_program_transforms_with_yq_into_another_is_its_input(tmp_path: Path) -> None:
    # a ClusterServiceVersion template whose name the generator fills in
    write(tmp_path, "installers/olm/bundle.csv.yaml", "apiVersion: operators.coreos.com/v1alpha1\n"
                                                      "kind: ClusterServiceVersion\nmetadata:\n  name: ''\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["installers/olm/bundle.csv.yaml"]
    write(tmp_path, "installers/olm/generate.sh", "yq eval '\n  .metadata.name = env(name) |\n"
                                                  "  .spec.version = env(version)' bundle.csv.yaml "
                                                  '>"${out}/manifests/operator.clusterserviceversion.yaml"\n')
    run = check(tmp_path)
    assert run.located("error") == []
    assert [p for p, _, _ in run.located("warning")] == ["installers/olm/bundle.csv.yaml"]
    # an in-place edit (yq -i) writes the file that is applied: no evidence
    write(tmp_path, "installers/olm/generate.sh", "yq -i '.metadata.name = env(name)' bundle.csv.yaml\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["installers/olm/bundle.csv.yaml"]
    # the file given on yq's standard input, the command continued over
    # lines, its arguments made by other yq commands (<<< here-strings)
    write(tmp_path, "installers/olm/generate.sh",
          'yq --yaml-roundtrip \\\n  --argjson deployment "$(yq \'first\' <<<"${deployments}")" \\\n'
          "  --arg version \"${VERSION}\" '\n  .metadata.name = \"x.v\\($version)\"\n  | .spec.version = $version\n"
          "' \\\n  <bundle.csv.yaml \\\n  >\"${out}/manifests/operator.clusterserviceversion.yaml\" || abort\n")
    run = check(tmp_path)
    assert run.located("error") == []
    assert [p for p, _, _ in run.located("warning")] == ["installers/olm/bundle.csv.yaml"]
    # another file given to yq says nothing of this one
    write(tmp_path, "installers/olm/generate.sh", "yq '.a' <bundle.annotations.yaml >out.yaml\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["installers/olm/bundle.csv.yaml"]


def test_a_file_a_program_pipes_into_yq_is_its_input(tmp_path: Path) -> None:
    # a CI Ingress whose service name the deployment script fills:
    # cat "$DIR/cluster/aks/manifest/ingress.yaml" | yq '...name = "$svc"' - | kubectl apply -f -,
    # DIR the scripts' top, two directories above the script; a file piped
    # into kubectl, not yq, is judged
    ingress = ("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: rhdh\nspec:\n  rules:\n"
               "  - http:\n      paths:\n      - path: /\n        pathType: Prefix\n        backend:\n"
               "          service:\n            name:\n            port: {name: http}\n")
    write(tmp_path, ".ci/pipelines/cluster/aks/manifest/ingress.yaml", ingress)
    write(tmp_path, ".ci/pipelines/cluster/aks/manifest/other.yaml", ingress.replace("name: rhdh", "name: other"))
    write(tmp_path, ".ci/pipelines/cluster/aks/deploy.sh",
          'apply_ingress() {\n  cat "$DIR/cluster/aks/manifest/ingress.yaml" \\\n'
          '    | yq ".spec.rules[0].http.paths[0].backend.service.name = \\"$2\\"" - \\\n'
          '    | kubectl apply --namespace="$1" -f -\n}\n'
          'cat "$DIR/cluster/aks/manifest/other.yaml" | kubectl apply -f -\n')
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == [".ci/pipelines/cluster/aks/manifest/other.yaml"]
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys[".ci/pipelines/cluster/aks/manifest/ingress.yaml"] == (
        ".ci/pipelines/cluster/aks/deploy.sh transforms it with yq into what it applies")


def test_a_file_a_program_copies_to_object_storage_is_data_for_what_reads_it_there(tmp_path: Path) -> None:
    # Spark pod templates: a script uploads them, Spark reads them from the
    # bucket (podTemplateFile) and fills in the image; the script names them
    # from the directory above its own
    template = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: driver\nspec:\n  containers:\n"
                "  - name: spark-kubernetes-driver\n")
    write(tmp_path, "pipeline/spark/pod-templates/driver.yaml", template)
    write(tmp_path, "pipeline/spark/pod-templates/executor.yaml", template.replace("driver", "executor"))
    assert [p for p, _, _ in check(tmp_path).located("error")] == [
        "pipeline/spark/pod-templates/driver.yaml", "pipeline/spark/pod-templates/executor.yaml"]
    write(tmp_path, "pipeline/spark/upload.sh",
          "aws s3 cp spark/pod-templates/driver.yaml s3://${BUCKET}/scripts/ --region ${REGION}\n"
          "gsutil -m cp \\\n  spark/pod-templates/executor.yaml gs://bucket/scripts/\n")
    run = check(tmp_path)
    assert run.located("error") == []
    assert [p for p, _, _ in run.located("warning")] == [
        "pipeline/spark/pod-templates/driver.yaml", "pipeline/spark/pod-templates/executor.yaml"]
    assert "a file a program copies to object storage" in run.out
    # a name too long for the file system names no file, and stops nothing
    write(tmp_path, "pipeline/long.sh", "aws s3 cp " + "a" * 5000 + ".yaml s3://bucket/\n")
    assert applied.uploaded_inputs(tmp_path) == {"pipeline/spark/pod-templates/driver.yaml": "pipeline/spark/upload.sh",
                                                 "pipeline/spark/pod-templates/executor.yaml": "pipeline/spark/upload.sh"}
    (tmp_path / "pipeline/long.sh").unlink()
    # a copy from the bucket into the checkout names no upload
    write(tmp_path, "pipeline/spark/upload.sh", "aws s3 cp s3://bucket/scripts/driver.yaml spark/pod-templates/driver.yaml\n")
    assert len(check(tmp_path).located("error")) == 2


def test_a_file_a_page_gives_to_a_generator_writing_another_file_is_its_input(tmp_path: Path) -> None:
    # istioctl's input, which needs no name: the page writes what it generates
    # into the file that is applied
    write(tmp_path, "istio/istio-operator.yml", "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n"
                                                "metadata:\n  namespace: istio-system\nspec:\n  profile: default\n")
    write(tmp_path, "istio/README.md", "Apply it with kubectl and it fails.\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["istio/istio-operator.yml"]
    write(tmp_path, "istio/README.md", "```bash\nistioctl manifest generate -f ./istio-operator.yml \\\n"
                                       "  --set values.global.jwtPolicy=first-party-jwt > ./istio-kubernetes.yml\n```\n")
    run = check(tmp_path)
    assert run.located("error") == []
    assert [p for p, _, _ in run.located("warning")] == ["istio/istio-operator.yml"]
    # each file of a command line giving several: the profile and the overlay on it
    write(tmp_path, "istio/profile-overlay.yml", "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n"
                                                 "metadata:\n  namespace: istio-system\nspec:\n  meshConfig: {}\n")
    write(tmp_path, "istio/README.md", "$ istioctl manifest generate --cluster-specific -f istio-operator.yml "
                                       "-f profile-overlay.yml > dump.yaml\n")
    run = check(tmp_path)
    assert run.located("error") == []
    shown = {i["path"]: i["reason"] for i in run.report["inputs"]} | {s["path"]: s["reason"] for s in run.report["setAside"]}
    assert shown.get("istio/profile-overlay.yml") == shown.get("istio/istio-operator.yml") == "bundle-input"
    (tmp_path / "istio/profile-overlay.yml").unlink()
    # a program that applies what it is given is no such evidence, whatever it prints
    write(tmp_path, "istio/README.md", "kubectl apply -f ./istio-operator.yml > applied.yaml\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["istio/istio-operator.yml"]


BINDING = ("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: manager\n"
           "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: manager\n"
           "subjects:\n- kind: ServiceAccount\n  name: controller\n")


def test_a_namespace_a_script_sets_with_kustomize_edit_is_the_one_missing(tmp_path: Path) -> None:
    # ModelMesh's install.sh: cd into the config directory it was given or
    # config/, then pushd into each kustomization and set its namespace; a
    # kustomization it only sets the image of, or one no script names, is judged
    for folder in ("config/rbac/cluster-scope", "config/manager", "config/other"):
        write(tmp_path, f"{folder}/kustomization.yaml", "resources:\n- binding.yaml\n")
        write(tmp_path, f"{folder}/binding.yaml", BINDING)
    write(tmp_path, "scripts/install.sh",
          '#!/bin/bash\nif [[ -n $dir ]]; then\n  cd "$dir"\nelse\n  cd config\nfi\n'
          'pushd rbac/cluster-scope\nkustomize edit set namespace "$namespace"\npopd\n'
          'cd manager; kustomize edit set image controller=${image}; cd ../\n')
    run = check(tmp_path)
    assert sorted({p for p, _, _ in run.located("error")}) == ["config/manager/binding.yaml",
                                                                 "config/other/binding.yaml"]
    assert ("config/rbac/cluster-scope/binding.yaml", 10) in [(p, line) for p, line, _ in run.located("warning")]
    assert any("scripts/install.sh gives a namespace with kustomize edit set namespace" in n["message"]
               for n in run.report["notes"])
    assert applied.namespaced_by(tmp_path) == {"config/rbac/cluster-scope": "scripts/install.sh"}


def test_a_file_given_to_istioctl_install_is_its_input(tmp_path: Path) -> None:
    # an IstioOperator without a name that a Makefile gives to an istioctl of
    # a version's name through a variable (ISTIO_CONFIG_FILE ?= ...), and one
    # a script gives to istioctl1.10; one nothing installs, or that kubectl
    # applies, is judged
    operator = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata:\n  namespace: istio-system\n" \
               "spec:\n  profile: minimal\n"
    for path in ("make/config/istio/default.yaml", "demo/resources/istio-operator.yaml", "other/istio.yaml",
                 "applied/istio.yaml"):
        write(tmp_path, path, operator)
    write(tmp_path, "make/test-e2e.mk", "ISTIO_CONFIG_FILE ?= ./make/config/istio/default.yaml\n\ne2e:\n"
                                        "\t$(bin_dir)/istioctl-$(ISTIO_VERSION) install -y -f $(ISTIO_CONFIG_FILE)\n")
    write(tmp_path, "demo/setup.sh", "#!/bin/bash\nistioctl1.10 install -y -f resources/istio-operator.yaml\n")
    write(tmp_path, "applied/setup.sh", "#!/bin/bash\nkubectl apply -f istio.yaml\n")
    run = check(tmp_path)
    assert sorted(p for p, _, _ in run.located("error")) == ["applied/istio.yaml", "other/istio.yaml"]
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["demo/resources/istio-operator.yaml"] == (
        "demo/setup.sh gives it to istioctl install, which reads the IstioOperator on the client and installs what it "
        "renders from it")
    assert whys["make/config/istio/default.yaml"].startswith("make/test-e2e.mk gives it to istioctl install")


def test_a_script_without_a_suffix_beside_the_kustomization_writes_its_input(tmp_path: Path) -> None:
    # a Helm post-renderer: `cat <&0 > $BASEDIR/template.yaml; kustomize build $BASEDIR`
    write(tmp_path, "examples/kustomize/sidecar/kustomization.yaml", "resources: [template.yaml]\n")
    write(tmp_path, "examples/kustomize/sidecar/render", "echo no script\n")
    assert [p for p, _, _ in check(tmp_path).located("error")] == ["examples/kustomize/sidecar/kustomization.yaml"]
    write(tmp_path, "examples/kustomize/sidecar/render", '#!/bin/bash\nBASEDIR=$(dirname "$0")\n'
                                                         "cat <&0 > $BASEDIR/template.yaml\n"
                                                         "kustomize build $BASEDIR && rm $BASEDIR/template.yaml\n")
    assert check(tmp_path).located("error") == []


def test_a_file_a_kustomization_lists_as_a_resource_and_as_a_patch_is_applied_onto_existing_objects(
        tmp_path: Path) -> None:
    # `kustomize build config/observability/tracing | kubectl apply -f -`: the
    # partial Deployment, listed twice, is merged into the running one
    partial = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: manager, namespace: system}\n"
               "spec:\n  template:\n    spec:\n      containers:\n      - name: manager\n"
               "        env: [{name: TRACING, value: 'on'}]\n")
    write(tmp_path, "config/tracing/manager-patch.yaml", partial)
    write(tmp_path, "config/tracing/kustomization.yaml", "resources: [manager-patch.yaml]\n")
    # listed once, as a resource: a workload shaped as a patch, applied onto the live one (warnings)
    run = check(tmp_path)
    assert run.located("error") == []
    assert any("shaped as patches" in n["message"] for n in run.report["notes"])
    write(tmp_path, "config/tracing/kustomization.yaml", "resources: [manager-patch.yaml]\npatches:\n"
                                                         "- path: manager-patch.yaml\n"
                                                         "  target: {kind: Deployment, name: manager}\n")
    run = check(tmp_path)
    assert run.located("error") == []
    assert {p for p, _, _ in run.located("warning")} == {"config/tracing/manager-patch.yaml"}
    [note] = [d for d in run.report["defects"] if d["validator"] == "self-patch"]
    assert note["path"] == "config/tracing/kustomization.yaml" and note["severity"] == "info"


def test_a_kind_that_is_no_string_gives_no_patch_shape() -> None:
    # what the fuzz test wrote: `kind: [Deployment]` is no workload, and no crash
    text = "kind: [Deployment]\nspec:\n  template:\n    spec:\n      containers: [{name: a}]\n"
    assert applied._patch_shape(text) is None
    assert applied._patch_shape(text.replace("[Deployment]", "Deployment")) is not None


def test_a_package_of_kpt_test_runner_is_its_function_input(tmp_path: Path) -> None:
    # kpt-functions-catalog's examples: each package holds .expected/ (the
    # runner's config.yaml and diff.patch), and its Service without ports is
    # what upsert-resource is run over; a package without .expected/, or
    # one the run is asked to check itself, is judged
    service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: my-service\nspec: {}\n"
    for package in ("examples/upsert-resource-simple", "examples/plain"):
        write(tmp_path, f"{package}/resources.yaml", service)
    write(tmp_path, "examples/upsert-resource-simple/.expected/config.yaml",
          "testType: eval\nimage: upsert-resource:unstable\nfnConfig: ../fn-config.yaml\n")
    write(tmp_path, "examples/upsert-resource-simple/.expected/diff.patch", "")
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["examples/plain/resources.yaml"]
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["examples/upsert-resource-simple/resources.yaml"].startswith(
        "a test case of kpt's test runner (examples/upsert-resource-simple/.expected/ beside it)"), whys
    # an empty .expected/ is no test case of the runner
    (tmp_path / "examples/upsert-resource-simple/.expected/config.yaml").unlink()
    (tmp_path / "examples/upsert-resource-simple/.expected/diff.patch").unlink()
    assert len(check(tmp_path).located("error")) == 2
    write(tmp_path, "examples/upsert-resource-simple/.expected/results.yaml", "")
    assert [p for p, _, _ in check(tmp_path, "examples/upsert-resource-simple").located("error")] == [
        "examples/upsert-resource-simple/resources.yaml"]


def test_a_file_a_node_test_reads_by_its_directory_is_a_test_input(tmp_path: Path) -> None:
    # generate-folders: src/generate_folders_test.ts reads every file of
    # path.resolve(__dirname, '../examples') and runs the function over it;
    # a program that is not a test naming a directory proves nothing
    service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: my-service\nspec: {}\n"
    for function in ("generate-folders", "other"):
        write(tmp_path, f"functions/{function}/examples/simple.yaml", service)
    write(tmp_path, "functions/generate-folders/src/generate_folders_test.ts",
          "const sourceDir = path.resolve(__dirname, '../examples');\n")
    write(tmp_path, "functions/other/src/main.ts", "const sourceDir = path.resolve(__dirname, '../examples');\n")
    # a test rendering a chart from ../helm/ reads that directory, not the manifests kept below it
    write(tmp_path, "helm/prod/ingress.yaml", service)
    write(tmp_path, "src/config.spec.js", "const chart = path.resolve(__dirname, '../helm/');\n")
    # KCL's example_test.go walks ./examples and reads each suite's good.yaml
    write(tmp_path, "examples/validation/host-ports/suite/good.yaml", service)
    write(tmp_path, "example_test.go", 'package main\nfunc TestRunExamples(t *testing.T) {\n'
                                       '\terr := filepath.Walk("./examples", func(path string) error {\n'
                                       '\t\tgood := filepath.Join(dir, "suite", "good.yaml")\n\t})\n}\n')
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["functions/other/examples/simple.yaml", "helm/prod/ingress.yaml"]
    assert {i["path"]: i["why"] for i in run.report["inputs"]}["examples/validation/host-ports/suite/good.yaml"] == \
        "example_test.go walks examples/ and reads it"
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["functions/generate-folders/examples/simple.yaml"] == \
        "functions/generate-folders/src/generate_folders_test.ts reads it", whys


def test_a_directory_beside_the_report_a_checker_should_give_is_invalid_on_purpose(tmp_path: Path) -> None:
    # Config Sync's examples/errors: expected-errs.txt holds what nomos vet
    # reports on the directory (`source: namespaces/prod/rb.yaml`); every
    # file below it is part of that negative case, named or not. A report
    # naming no file of the directory, or a golden YAML output, is no evidence
    service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: my-service\nspec: {}\n"
    for case in ("examples/errors", "examples/golden", "examples/unrelated"):
        write(tmp_path, f"{case}/namespaces/prod/rb.yaml", service)
        write(tmp_path, f"{case}/namespaces/prod/other.yaml", service.replace("my-service", "other"))
    write(tmp_path, "examples/errors/expected-errs.txt",
          "Found issues: 1 error(s)\n\n[1] KNV1031: Configs must declare `metadata.name`:\n\n"
          "source: namespaces/prod/rb.yaml\n")
    write(tmp_path, "examples/golden/expected.yaml", "source: namespaces/prod/rb.yaml\n")
    write(tmp_path, "examples/unrelated/expected-errs.txt", "source: namespaces/dev/gone.yaml\n")
    run = check(tmp_path)
    assert sorted({p for p, _, _ in run.located("error")}) == [
        f"examples/{case}/namespaces/prod/{name}.yaml" for case in ("golden", "unrelated") for name in ("other", "rb")]
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["examples/errors/namespaces/prod/other.yaml"] == (
        "in a case invalid on purpose: examples/errors/expected-errs.txt holds the errors a checker is expected "
        "to report on its directory")
    # the directory the run is asked to check is judged in full
    assert len(check(tmp_path, "examples/errors").located("error")) == 2


def test_a_file_given_to_a_krm_function_as_its_fn_config_is_its_configuration(tmp_path: Path) -> None:
    # krm-functions' catalog: docs/helm-upgrader.md runs `kpt fn eval ...
    # --fn-config example-function-configs/config.yaml`, a ConfigMap whose
    # data holds booleans the function reads; the same ConfigMap no command
    # names is judged
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: upgrade\ndata:\n  annotate: true\n"
    write(tmp_path, "example-function-configs/config.yaml", config)
    write(tmp_path, "example-function-configs/other.yaml", config)
    write(tmp_path, "docs/helm-upgrader.md", "```shell\nkpt fn source examples/helm | kpt fn eval - \\\n"
                                             "    --fn-config example-function-configs/config.yaml \\\n"
                                             "    -i ghcr.io/krm-functions/helm-upgrader\n```\n")
    run = check(tmp_path)
    assert [p for p, _, _ in run.located("error")] == ["example-function-configs/other.yaml"]
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["example-function-configs/config.yaml"] == (
        "docs/helm-upgrader.md gives it to a KRM function with --fn-config: the function's configuration, "
        "which no cluster receives")


def test_templates_beside_a_page_giving_oc_process_a_fill_in_file_are_its_input(tmp_path: Path) -> None:
    # Red Hat CoP's openshift-management: jobs/README.md tells the reader to
    # run `oc process --param-file=params -f <template_file> | oc create -f-`
    # for the Templates of its directory; a Deployment beside them, and the
    # Templates of a directory whose page names no such command, are judged
    template = ("kind: Template\napiVersion: template.openshift.io/v1\nmetadata:\n  name: Prune\nobjects:\n"
                "- {apiVersion: batch/v1, kind: CronJob, metadata: {name: '${NAME}'}}\nparameters:\n- name: NAME\n")
    for folder in ("jobs", "other"):
        write(tmp_path, f"{folder}/cronjob-prune.yml", template)
    write(tmp_path, "jobs/deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec: {}\n")
    write(tmp_path, "jobs/README.md", "Create the job:\n\n    oc process --param-file=params -f <template_file> "
                                      "| oc create -f-\n")
    write(tmp_path, "other/README.md", "Apply it with oc apply.\n")
    run = check(tmp_path)
    assert sorted({p for p, _, _ in run.located("error")}) == ["jobs/deployment.yaml", "other/cronjob-prune.yml"]
    whys = {i["path"]: i["why"] for i in run.report["inputs"]}
    assert whys["jobs/cronjob-prune.yml"].startswith("jobs/README.md gives it to oc process"), whys
