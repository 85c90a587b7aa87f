from __future__ import annotations

import pytest

from krmcheck.results import ResourceRef, Result
from krmcheck.tree.load import load_documents
from krmcheck.validators import VALIDATORS, ValidatorOptions
from krmcheck.validators import image_tag


def run(text: str) -> list[Result]:
    return image_tag.validate(load_documents(text, "app/workload.yaml"), ValidatorOptions())


def pod_template(kind: str, api_version: str, image: str) -> str:
    return f"""\
apiVersion: {api_version}
kind: {kind}
metadata: {{name: web, namespace: prod}}
spec:
  template:
    spec:
      containers:
      - name: web
        image: {image}
"""


def test_registered_under_its_id() -> None:
    assert VALIDATORS["image-tag"] is image_tag
    assert image_tag.id == "image-tag"


@pytest.mark.parametrize("image", [
    "nginx:1.27",
    "registry.example.com:5000/team/nginx:1.27",
    "nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
])
def test_pinned_images_pass(image: str) -> None:
    assert run(pod_template("Deployment", "apps/v1", image)) == []


@pytest.mark.parametrize("image", [
    "ko://github.com/example/app/cmd/server",  # no tag: ko pins the image it builds by digest
    "ko://github.com/example/app",
    "ko://example.com/app:latest",
])
def test_ko_references_are_resolved_at_build_time(image: str) -> None:
    assert run(pod_template("Deployment", "apps/v1", image)) == []


def test_only_the_ko_scheme_is_exempt() -> None:
    [result] = run(pod_template("Deployment", "apps/v1", "ghcr.io/example/ko"))
    assert dict(result.tags)["rule"] == "no-tag"


@pytest.mark.parametrize(("image", "rule", "why"), [
    ("nginx", "no-tag", "has no tag or digest"),
    ("registry.example.com:5000/nginx", "no-tag", "has no tag or digest"),
    ("nginx:latest", "latest-tag", "uses the 'latest' tag"),
    ("ghcr.io/org/app:latest", "latest-tag", "uses the 'latest' tag"),
])
def test_unpinned_images_are_warnings_at_the_image_field(image: str, rule: str, why: str) -> None:
    [result] = run(pod_template("Deployment", "apps/v1", image))
    assert result.severity == "warning"  # a policy: the API server accepts it
    assert result.field_path == "spec.template.spec.containers[0].image"
    assert result.message == f"container 'web': image '{image}' {why}; pin a version"
    assert result.resource_ref == ResourceRef("apps/v1", "Deployment", "web", "prod")
    assert result.tags == (("validator", "image-tag"), ("rule", rule))


@pytest.mark.parametrize(("kind", "api_version"), [
    ("StatefulSet", "apps/v1"),
    ("DaemonSet", "apps/v1"),
    ("ReplicaSet", "apps/v1"),
    ("Job", "batch/v1"),
    ("ReplicationController", "v1"),
    ("Rollout", "argoproj.io/v1alpha1"),
])
def test_pod_template_kinds(kind: str, api_version: str) -> None:
    [result] = run(pod_template(kind, api_version, "nginx"))
    assert result.field_path == "spec.template.spec.containers[0].image"
    assert result.resource_ref == ResourceRef(api_version, kind, "web", "prod")


def test_all_container_lists_of_a_pod() -> None:
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: debug}
spec:
  initContainers:
  - name: init
    image: busybox
  containers:
  - name: ok
    image: nginx:1.27
  - name: app
    image: app:latest
  ephemeralContainers:
  - name: shell
    image: alpine
"""
    results = run(text)
    assert [(r.field_path, r.message.split(":")[0]) for r in results] == [
        ("spec.containers[1].image", "container 'app'"),
        ("spec.initContainers[0].image", "container 'init'"),
        ("spec.ephemeralContainers[0].image", "container 'shell'"),
    ]


def test_cron_job_template() -> None:
    text = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: job
            image: backup:latest
"""
    [result] = run(text)
    assert result.field_path == "spec.jobTemplate.spec.template.spec.containers[0].image"


def test_pod_template_kind() -> None:
    text = """\
apiVersion: v1
kind: PodTemplate
metadata: {name: tpl}
template:
  spec:
    containers:
    - {name: c, image: nginx}
"""
    [result] = run(text)
    assert result.field_path == "template.spec.containers[0].image"


def test_container_without_name_is_still_reported() -> None:
    [result] = run(pod_template("Deployment", "apps/v1", "nginx").replace("- name: web\n        image", "- image"))
    assert result.message == "image 'nginx' has no tag or digest; pin a version"


def test_resources_without_pods_and_odd_shapes_are_ignored() -> None:
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {image: nginx}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: broken}
spec:
  template:
    spec:
      containers: not-a-list
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: odd}
spec:
  template:
    spec:
      containers:
      - just-a-string
      - {name: no-image}
      - {name: number, image: 5}
"""
    assert run(text) == []
