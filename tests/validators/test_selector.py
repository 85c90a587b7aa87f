from __future__ import annotations

import pytest

from krmcheck.locate import locate
from krmcheck.resource.resource import Resource
from krmcheck.results import ResourceRef, Result
from krmcheck.tree.load import load_documents
from krmcheck.validators import ValidatorOptions, selector


def run(text: str) -> list[Result]:
    return selector.validate(load_documents(text, "app/resources.yaml"), ValidatorOptions())  # type: ignore[arg-type]


def rules(text: str) -> list[tuple[str, str, str]]:
    return [(dict(r.tags)["rule"], r.severity, r.field_path) for r in run(text)]


def workload(kind: str = "Deployment", api_version: str = "apps/v1", selector_text: str = "{matchLabels: {app: web}}",
             labels: str = "{app: web, tier: front}", name: str = "web") -> str:
    return f"""\
apiVersion: {api_version}
kind: {kind}
metadata: {{name: {name}, namespace: shop}}
spec:
  selector: {selector_text}
  template:
    metadata:
      labels: {labels}
    spec:
      containers:
      - {{name: web, image: nginx:1.27}}
"""


def service(selector_text: str = "{app: web}", namespace: str = "shop", extra: str = "") -> str:
    return f"""\
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: {namespace}}}
spec:
  selector: {selector_text}
  ports:
  - {{port: 80}}
{extra}"""


def test_id() -> None:
    assert selector.id == "selector"


# --- template ------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"])
def test_a_selector_that_selects_its_template_passes(kind: str) -> None:
    assert run(workload(kind)) == []


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"])
def test_a_match_labels_key_that_fails_is_an_error_at_the_key(kind: str) -> None:
    [result] = run(workload(kind, selector_text="{matchLabels: {app: webapp}}"))
    assert (result.severity, result.field_path) == ("error", "spec.selector.matchLabels.app")
    assert result.message == (
        "spec.selector requires app=webapp, but the pod template is labelled app=web, tier=front: the API "
        f"server refuses a {kind} whose selector does not match spec.template.metadata.labels")
    assert result.resource_ref == ResourceRef("apps/v1", kind, "web", "shop")
    assert result.tags == (("validator", "selector"), ("rule", "template"))


def test_a_prefixed_key_is_written_in_brackets() -> None:
    [result] = run(workload(selector_text='{matchLabels: {"app.kubernetes.io/name": web}}'))
    assert result.field_path == 'spec.selector.matchLabels["app.kubernetes.io/name"]'


@pytest.mark.parametrize(("expression", "passes"), [
    ("{key: tier, operator: In, values: [front, back]}", True),
    ("{key: tier, operator: In, values: [back]}", False),
    ("{key: tier, operator: NotIn, values: [back]}", True),
    ("{key: tier, operator: NotIn, values: [front]}", False),
    ("{key: canary, operator: NotIn, values: ['true']}", True),  # absent passes NotIn
    ("{key: tier, operator: Exists}", True),
    ("{key: canary, operator: Exists}", False),
    ("{key: canary, operator: DoesNotExist}", True),
    ("{key: tier, operator: DoesNotExist}", False),
])
def test_match_expressions(expression: str, passes: bool) -> None:
    text = workload(selector_text=f"{{matchLabels: {{app: web}}, matchExpressions: [{expression}]}}")
    assert rules(text) == ([] if passes else [("template", "error", "spec.selector.matchExpressions[0]")])


def test_several_failing_terms_point_at_the_selector() -> None:
    text = workload(selector_text="{matchLabels: {app: api}, matchExpressions: [{key: tier, operator: In, "
                                  "values: [a, b]}]}")
    [result] = run(text)
    assert result.field_path == "spec.selector"
    assert result.message.startswith("spec.selector requires app=api, tier in (a, b), but")


def test_a_template_without_labels_is_not_selected() -> None:
    [result] = run(workload(labels="{}"))
    assert "the pod template is labelled none" in result.message


def test_an_empty_selector_is_refused_for_apps_kinds() -> None:
    [result] = run(workload(selector_text="{}"))
    assert (result.field_path, result.severity) == ("spec.selector", "error")
    assert result.message == "spec.selector is empty: the API server refuses a Deployment whose selector selects every pod"


def test_a_missing_selector_is_left_to_the_schema_check() -> None:
    assert run(workload().replace("  selector: {matchLabels: {app: web}}\n", "")) == []


def test_a_job_without_selector_passes() -> None:
    assert run(workload("Job", "batch/v1").replace("  selector: {matchLabels: {app: web}}\n", "")) == []


def test_a_job_selector_is_checked_when_set() -> None:
    text = workload("Job", "batch/v1", selector_text="{matchLabels: {app: api}}").replace(
        "spec:\n  selector", "spec:\n  manualSelector: true\n  selector")
    assert rules(text) == [("template", "error", "spec.selector.matchLabels.app")]


def test_a_job_selector_may_use_the_labels_the_api_server_adds() -> None:
    assert run(workload("Job", "batch/v1", selector_text="{matchLabels: {job-name: web}}")) == []
    # with manualSelector the API server adds nothing
    text = workload("Job", "batch/v1", selector_text="{matchLabels: {job-name: web}}").replace(
        "spec:\n  selector", "spec:\n  manualSelector: true\n  selector")
    assert rules(text) == [("template", "error", "spec.selector.matchLabels.job-name")]


def test_a_replication_controller_map_selector() -> None:
    text = workload("ReplicationController", "v1", selector_text="{app: api}")
    assert rules(text) == [("template", "error", "spec.selector.app")]
    assert run(workload("ReplicationController", "v1", selector_text="{app: web}")) == []
    # an empty map is defaulted from the template
    assert run(workload("ReplicationController", "v1", selector_text="{}")) == []


def test_other_groups_are_not_judged() -> None:
    # a custom Deployment kind is not the apps one
    assert run(workload(api_version="example.com/v1", selector_text="{matchLabels: {app: api}}")) == []


# --- no-pods ---------------------------------------------------------------------

def test_a_service_selecting_a_template_passes() -> None:
    assert run(workload() + service()) == []


def test_a_service_selecting_no_template_is_a_warning() -> None:
    [result] = run(workload() + service("{app: webapp}"))
    assert (result.severity, result.field_path) == ("warning", "spec.selector")
    assert result.resource_ref == ResourceRef("v1", "Service", "web", "shop")
    assert result.tags == (("validator", "selector"), ("rule", "no-pods"))
    assert result.message == (
        "Service 'web' selects no pod of this root: no pod template in namespace 'shop' has app=webapp "
        "(they have app=web); if the pods come from elsewhere (a Helm chart, an operator), ignore this")


def test_every_term_of_a_service_selector_must_match() -> None:
    assert rules(workload() + service("{app: web, tier: back}")) == [("no-pods", "warning", "spec.selector")]


def test_a_service_without_selector_or_external_name_is_skipped() -> None:
    assert run(workload() + service("{}")) == []
    assert run(workload() + service("{app: webapp}", extra="  type: ExternalName\n  externalName: a.example\n")) == []


def test_a_root_without_pod_templates_says_nothing() -> None:
    # a "networking" root: its Services select pods that other roots define
    assert run(service("{app: webapp}")) == []


def test_a_namespace_without_pod_templates_says_nothing() -> None:
    assert run(workload() + service("{app: webapp}", namespace="kube-system")) == []


def test_templates_of_another_namespace_are_not_selected() -> None:
    text = workload() + service("{app: web}", namespace="other") + "---\n" + workload(name="other").replace(
        "namespace: shop", "namespace: other").replace("{app: web, tier: front}", "{app: api}").replace(
        "{matchLabels: {app: web}}", "{matchLabels: {app: api}}")
    assert rules(text) == [("no-pods", "warning", "spec.selector")]


def test_an_empty_namespace_matches_an_empty_namespace() -> None:
    text = (workload() + service("{app: web}")).replace("namespace: shop", "namespace: ''")
    assert run(text) == []
    assert rules(text.replace("selector: {app: web}", "selector: {app: api}")) == [
        ("no-pods", "warning", "spec.selector")]


def test_a_selector_on_label_keys_no_template_uses_says_nothing() -> None:
    # control-plane=... selects pods of another root: no pod template here labels that key
    assert run(workload() + service("{control-plane: controller-manager}")) == []


def test_a_custom_resource_carrying_the_labels_may_make_the_pods() -> None:
    prometheus = """\
---
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata:
  name: k8s
  namespace: shop
  labels: {app: prometheus}
"""
    assert run(workload() + service("{app: prometheus}") + prometheus) == []
    pod_metadata = prometheus.replace("  labels: {app: prometheus}\n", "") + "spec:\n  podMetadata:\n    labels: {app: prometheus}\n"
    assert run(workload() + service("{app: prometheus}") + pod_metadata) == []
    assert rules(workload() + service("{app: grafana}") + prometheus) == [("no-pods", "warning", "spec.selector")]


def test_labels_that_controllers_add_are_selected() -> None:
    stateful = workload("StatefulSet", selector_text="{matchLabels: {app: db}}", labels="{app: db}", name="db")
    assert run(stateful + service('{app: db, "statefulset.kubernetes.io/pod-name": db-0}')) == []
    job = workload("Job", "batch/v1", labels="{app: migrate}", name="migrate").replace(
        "  selector: {matchLabels: {app: web}}\n", "")
    assert run(job + service("{app: migrate, job-name: migrate}")) == []
    assert rules(job + service("{app: migrate, job-name: other}")) == [("no-pods", "warning", "spec.selector")]


@pytest.mark.parametrize(("kind", "api_version", "template"), [
    ("Pod", "v1", "metadata: {name: web, namespace: shop, labels: {app: web}}\nspec:\n  containers: [{name: a, image: b}]\n"),
    ("PodTemplate", "v1", "metadata: {name: web, namespace: shop}\ntemplate:\n  metadata: {labels: {app: web}}\n"
     "  spec:\n    containers: [{name: a, image: b}]\n"),
    ("CronJob", "batch/v1", "metadata: {name: web, namespace: shop}\nspec:\n  schedule: '@daily'\n  jobTemplate:\n"
     "    spec:\n      template:\n        metadata: {labels: {app: web}}\n        spec:\n"
     "          containers: [{name: a, image: b}]\n"),
    ("Rollout", "argoproj.io/v1alpha1", "metadata: {name: web, namespace: shop}\nspec:\n  template:\n"
     "    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: a, image: b}]\n"),
])
def test_pod_template_kinds(kind: str, api_version: str, template: str) -> None:
    text = f"apiVersion: {api_version}\nkind: {kind}\n{template}"
    assert run(text + service("{app: web}")) == []
    assert rules(text + service("{app: api}")) == [("no-pods", "warning", "spec.selector")]


def pdb(selector_text: str) -> str:
    return f"""\
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: web, namespace: shop}}
spec:
  minAvailable: 1
  selector: {selector_text}
"""


def network_policy(selector_text: str) -> str:
    return f"""\
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {{name: web, namespace: shop}}
spec:
  podSelector: {selector_text}
  policyTypes: [Ingress]
"""


def test_pod_disruption_budget() -> None:
    assert run(workload() + pdb("{matchLabels: {app: web}}")) == []
    [result] = run(workload() + pdb("{matchLabels: {app: webapp}}"))
    assert (result.field_path, result.severity) == ("spec.selector", "warning")
    assert result.message.startswith("PodDisruptionBudget 'web' selects no pod of this root")
    expressions = "{matchExpressions: [{key: app, operator: In, values: [api, worker]}]}"
    assert rules(workload() + pdb(expressions)) == [("no-pods", "warning", "spec.selector")]


def test_network_policy() -> None:
    assert run(workload() + network_policy("{matchLabels: {app: web}}")) == []
    assert rules(workload() + network_policy("{matchLabels: {app: redis}}")) == [
        ("no-pods", "warning", "spec.podSelector")]


def test_an_empty_pod_selector_selects_every_pod() -> None:
    assert run(workload() + network_policy("{}")) == []


def test_long_lists_of_near_misses_are_cut() -> None:
    text = "---\n".join(workload(name=f"w{n}", selector_text=f"{{matchLabels: {{app: w{n}}}}}", labels=f"{{app: w{n}}}")
                         for n in range(8)) + service("{app: redis}")
    [result] = run(text)
    assert "(they have app=w0, app=w1, app=w2, app=w3, app=w4, 3 more)" in result.message


def test_the_finding_is_located_at_the_selector_key() -> None:
    docs = load_documents(service("{app: webapp}").lstrip("-\n"), "base/service.yaml")
    docs += load_documents(workload(), "base/deployment.yaml")
    [result] = selector.validate(docs, ValidatorOptions())  # type: ignore[arg-type]
    finding = locate(result, [Resource(d) for d in docs], "overlays/prod")  # type: ignore[arg-type]
    assert finding.location == ("base/service.yaml", 5, 3)


def test_a_template_label_an_overlay_changed_points_at_the_overlay(tmp_path) -> None:
    # labels: with includeTemplates but not includeSelectors relabels the pod
    # template only: the defect is the overlay's entry, not the base's selector
    from tests.checkrun import check, write

    write(tmp_path, "base/deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n"
                                        "  selector:\n    matchLabels:\n      app: web\n  template:\n"
                                        "    metadata:\n      labels:\n        app: web\n    spec:\n"
                                        "      containers:\n      - name: web\n        image: nginx:1.27\n")
    write(tmp_path, "base/kustomization.yaml", "resources: [deploy.yaml]\n")
    write(tmp_path, "overlay/kustomization.yaml", "resources:\n- ../base\nlabels:\n- pairs:\n    app: api\n"
                                                  "  includeTemplates: true\n")
    write(tmp_path, "selected/kustomization.yaml", "resources:\n- ../base\nlabels:\n- pairs:\n    app: api\n"
                                                   "  includeSelectors: true\n")
    # the base's selector itself is wrong: it stays the finding's place
    write(tmp_path, "wrong/deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n"
                                         "  selector:\n    matchLabels:\n      app: wbe\n  template:\n"
                                         "    metadata:\n      labels:\n        app: web\n    spec:\n"
                                         "      containers:\n      - name: web\n        image: nginx:1.27\n")
    write(tmp_path, "wrong/kustomization.yaml", "resources: [deploy.yaml]\n")
    run = check(tmp_path)
    assert sorted((p, line) for p, line, v in run.located("error") if v == "selector") == [
        ("overlay/kustomization.yaml", 5), ("wrong/deploy.yaml", 8)]
