from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from krmcheck.locate import locate
from krmcheck.resource.resource import Resource
from krmcheck.results import ResourceRef, Result
from krmcheck.tree.load import load_documents
from krmcheck.validators import (
    VALIDATORS,
    ValidatorOptions,
    enabled_by_default,
    workload,
)

# A container that every rule accepts; each test spoils one thing.
CLEAN: dict[str, Any] = {
    "name": "web",
    "image": "nginx:1.27",
    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "128Mi"}},
    "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
    "securityContext": {"runAsNonRoot": True, "allowPrivilegeEscalation": False},
}
C0 = "spec.template.spec.containers[0]"


def container(**changes: Any) -> dict[str, Any]:
    """CLEAN with top-level keys replaced (None: removed)."""
    out = copy.deepcopy(CLEAN)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def workload_yaml(kind: str = "Deployment", api: str = "apps/v1", containers: list[dict[str, Any]] | None = None,
                  pod: dict[str, Any] | None = None) -> str:
    spec = {"containers": containers if containers is not None else [container()], **(pod or {})}
    doc: dict[str, Any] = {"apiVersion": api, "kind": kind, "metadata": {"name": "web", "namespace": "prod"}}
    if kind == "Pod":
        doc["spec"] = spec
    elif kind == "CronJob":
        doc["spec"] = {"schedule": "@daily", "jobTemplate": {"spec": {"template": {"spec": spec}}}}
    else:
        doc["spec"] = {"template": {"spec": spec}}
    return yaml.safe_dump(doc, sort_keys=False)


def run(text: str) -> list[Result]:
    return workload.validate(load_documents(text, "app/workload.yaml"), ValidatorOptions())


def found(text: str) -> list[tuple[str, str]]:
    return [(dict(r.tags)["rule"], r.field_path) for r in run(text)]


def test_registered_under_its_id_and_opt_in() -> None:
    assert workload.id == "workload"
    assert workload.enabled_by_default is False
    assert VALIDATORS["workload"] is workload
    assert enabled_by_default("workload") is False


def test_a_clean_workload_passes() -> None:
    assert run(workload_yaml()) == []


def test_findings_are_tagged_warnings() -> None:
    [result] = run(workload_yaml(containers=[container(readinessProbe=None)]))
    assert result.severity == "warning"
    assert result.tags == (("validator", "workload"), ("rule", "readiness-probe"))
    assert result.resource_ref == ResourceRef("apps/v1", "Deployment", "web", "prod")
    assert result.message == "container 'web' has no readinessProbe"
    assert result.field_path == f"{C0}.readinessProbe"


# --- resources ------------------------------------------------------------

@pytest.mark.parametrize(("resources", "path", "message"), [
    (None, "resources", "has no cpu request, memory request or memory limit"),
    ({}, "resources", "has no cpu request, memory request or memory limit"),
    ({"requests": {"cpu": "1", "memory": "1Gi"}}, "resources.limits.memory", "has no memory limit"),
    ({"requests": {"cpu": "1"}}, "resources", "has no memory request or memory limit"),
    ({"limits": {"memory": "1Gi"}}, "resources.requests", "has no cpu request"),
    ({"requests": {"memory": None}, "limits": {"cpu": "1"}}, "resources", "has no memory request or memory limit"),
])
def test_resources(resources: dict[str, Any] | None, path: str, message: str) -> None:
    [result] = run(workload_yaml(containers=[container(resources=resources)]))
    assert (dict(result.tags)["rule"], result.field_path) == ("resources", f"{C0}.{path}")
    assert result.message == f"container 'web' {message}"


@pytest.mark.parametrize("resources", [
    {"limits": {"cpu": "1", "memory": "1Gi"}},  # limits stand in for missing requests
    {"requests": {"cpu": "1", "memory": "512Mi"}, "limits": {"memory": "1Gi"}},
])
def test_enough_resources_pass(resources: dict[str, Any]) -> None:
    assert run(workload_yaml(containers=[container(resources=resources)])) == []


LIMIT_RANGE = """\
apiVersion: v1
kind: LimitRange
metadata: {name: defaults, namespace: NS}
spec:
  limits:
  - type: Container
    default: {memory: 256Mi}
    defaultRequest: {cpu: 100m}
---
"""


def test_limit_range_defaults_of_the_namespace_count() -> None:
    bare = workload_yaml(containers=[container(resources=None)])
    assert run(LIMIT_RANGE.replace("NS", "prod") + bare) == []
    assert found(LIMIT_RANGE.replace("NS", "staging") + bare) == [("resources", f"{C0}.resources")]


def test_init_containers_need_resources_too() -> None:
    text = workload_yaml(pod={"initContainers": [container(name="init", resources=None, readinessProbe=None)]})
    [result] = run(text)
    assert result.field_path == "spec.template.spec.initContainers[0].resources"
    assert result.message == "init container 'init' has no cpu request, memory request or memory limit"


# --- readinessProbe -------------------------------------------------------

@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"])
def test_long_running_workloads_need_a_readiness_probe(kind: str) -> None:
    assert found(workload_yaml(kind, containers=[container(readinessProbe=None)])) == [
        ("readiness-probe", f"{C0}.readinessProbe")]


@pytest.mark.parametrize(("kind", "api"), [("Job", "batch/v1"), ("CronJob", "batch/v1"), ("Pod", "v1")])
def test_run_to_completion_and_bare_pods_need_no_readiness_probe(kind: str, api: str) -> None:
    assert run(workload_yaml(kind, api, containers=[container(readinessProbe=None)])) == []


def test_init_containers_need_no_readiness_probe() -> None:
    assert run(workload_yaml(pod={"initContainers": [container(name="init", readinessProbe=None)]})) == []


# --- run-as-root ----------------------------------------------------------

@pytest.mark.parametrize(("security", "pod_security", "path", "message"), [
    ({}, None, f"{C0}.securityContext.runAsNonRoot", "may run as root"),
    ({"runAsNonRoot": False}, {"runAsNonRoot": True}, f"{C0}.securityContext.runAsNonRoot", "may run as root"),
    ({}, {"runAsNonRoot": False}, "spec.template.spec.securityContext.runAsNonRoot", "may run as root"),
    ({"runAsUser": 0}, None, f"{C0}.securityContext.runAsUser", "runs as root (runAsUser: 0)"),
    ({"runAsNonRoot": True}, {"runAsUser": 0}, "spec.template.spec.securityContext.runAsUser",
     "runs as root (runAsUser: 0)"),
])
def test_run_as_root(security: dict[str, Any], pod_security: dict[str, Any] | None, path: str, message: str) -> None:
    security = {"allowPrivilegeEscalation": False, **security}
    pod = {"securityContext": pod_security} if pod_security is not None else None
    [result] = run(workload_yaml(containers=[container(securityContext=security)], pod=pod))
    assert (dict(result.tags)["rule"], result.field_path) == ("run-as-root", path)
    assert result.message.startswith(f"container 'web' {message}")


@pytest.mark.parametrize(("security", "pod_security"), [
    ({"runAsNonRoot": True}, None),
    ({}, {"runAsNonRoot": True}),
    ({"runAsUser": 1000}, None),
    ({}, {"runAsUser": 1000}),
    ({"runAsUser": 1000}, {"runAsUser": 0}),  # the container's setting wins
])
def test_non_root(security: dict[str, Any], pod_security: dict[str, Any] | None) -> None:
    security = {"allowPrivilegeEscalation": False, **security}
    pod = {"securityContext": pod_security} if pod_security is not None else None
    assert run(workload_yaml(containers=[container(securityContext=security)], pod=pod)) == []


def test_windows_pods_are_not_asked_about_root_or_escalation() -> None:
    text = workload_yaml(containers=[container(securityContext=None)], pod={"os": {"name": "windows"}})
    assert run(text) == []


# --- privileged and privilege escalation ----------------------------------

def test_privileged() -> None:
    security = {"runAsNonRoot": True, "privileged": True}
    [result] = run(workload_yaml(containers=[container(securityContext=security)]))
    assert (dict(result.tags)["rule"], result.field_path) == ("privileged", f"{C0}.securityContext.privileged")
    assert result.message.startswith("container 'web' is privileged")


def test_unprivileged() -> None:
    security = {**CLEAN["securityContext"], "privileged": False}
    assert run(workload_yaml(containers=[container(securityContext=security)])) == []


@pytest.mark.parametrize(("security", "how"), [
    ({"runAsNonRoot": True}, "does not forbid"),
    ({"runAsNonRoot": True, "allowPrivilegeEscalation": True}, "allows"),
])
def test_privilege_escalation(security: dict[str, Any], how: str) -> None:
    [result] = run(workload_yaml(containers=[container(securityContext=security)]))
    assert (dict(result.tags)["rule"], result.field_path) == (
        "privilege-escalation", f"{C0}.securityContext.allowPrivilegeEscalation")
    assert result.message.startswith(f"container 'web' {how} privilege escalation")


# --- hostPath -------------------------------------------------------------

def test_host_path_volumes() -> None:
    volumes = [{"name": "cache", "emptyDir": {}}, {"name": "logs", "hostPath": {"path": "/var/log"}}]
    [result] = run(workload_yaml(pod={"volumes": volumes}))
    assert (dict(result.tags)["rule"], result.field_path) == ("host-path", "spec.template.spec.volumes[1].hostPath")
    assert result.message == "volume 'logs' mounts the node's path '/var/log' (hostPath)"


def test_other_volumes_pass() -> None:
    volumes = [{"name": "cache", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "cfg"}}]
    assert run(workload_yaml(pod={"volumes": volumes})) == []


# --- where pods are -------------------------------------------------------

@pytest.mark.parametrize(("kind", "api", "prefix"), [
    ("Pod", "v1", "spec"),
    ("CronJob", "batch/v1", "spec.jobTemplate.spec.template.spec"),
    ("Job", "batch/v1", "spec.template.spec"),
    ("Rollout", "argoproj.io/v1alpha1", "spec.template.spec"),
])
def test_pod_specs_of_every_kind(kind: str, api: str, prefix: str) -> None:
    text = workload_yaml(kind, api, containers=[container(resources=None)])
    assert found(text) == [("resources", f"{prefix}.containers[0].resources")]


def test_pod_template_kind() -> None:
    text = """\
apiVersion: v1
kind: PodTemplate
metadata: {name: tpl}
template:
  spec:
    volumes:
    - {name: root, hostPath: {path: /}}
"""
    assert found(text) == [("host-path", "template.spec.volumes[0].hostPath")]


def test_resources_without_pods_and_odd_shapes_are_ignored() -> None:
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {containers: none}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: broken}
spec:
  template:
    spec:
      containers: not-a-list
      volumes: [just-a-string]
---
apiVersion: v1
kind: Pod
metadata: {name: odd}
spec:
  containers: [just-a-string, 5]
"""
    assert run(text) == []


def test_a_missing_field_is_located_at_its_container() -> None:
    text = workload_yaml(containers=[container(readinessProbe=None)])
    [doc] = load_documents(text, "base/deployment.yaml")
    [result] = workload.validate([doc], ValidatorOptions())  # type: ignore[list-item]
    finding = locate(result, [Resource(doc)], "overlays/prod")  # type: ignore[arg-type]
    line = text.splitlines().index("      - name: web") + 1
    assert finding.location == ("base/deployment.yaml", line, 9)
