"""Exact source positions of rendered values, through the whole build.

Each test writes a small repository, builds the overlay and asserts the
(path, line, col) that the rendered node points at, and what its trail holds.
"""

from __future__ import annotations

from pathlib import Path

from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Node, lookup
from krmcheck.tree.origin import Location

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.25
        env:
        - name: MODE
          value: base
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def build(root: Path, directory: str) -> list[Resource]:
    return Builder(Files(root), BuildOptions()).build(root / directory)


def find(resources: list[Resource], kind: str) -> Resource:
    return next(r for r in resources if r.kind == kind)


def at(node: Node | None) -> Location:
    assert node is not None
    return node.origin.location


def trail(node: Node | None) -> list[Location]:
    assert node is not None
    return [o.location for o in node.trail]


def container(res: Resource) -> Node:
    node = lookup(res.node, ["spec", "template", "spec", "containers"])
    return node.items[0]  # type: ignore[union-attr]


def test_value_from_base_through_two_overlays(tmp_path: Path) -> None:
    write(tmp_path, {
        "base/kustomization.yaml": "resources:\n- deployment.yaml\n",
        "base/deployment.yaml": DEPLOYMENT,
        "mid/kustomization.yaml": "resources:\n- ../base\nnamePrefix: mid-\n",
        "top/kustomization.yaml": "resources:\n- ../mid\nnameSuffix: -top\n",
    })
    dep = find(build(tmp_path, "top"), "Deployment")
    assert at(dep.field("spec", "replicas")) == Location("base/deployment.yaml", 6, 3)
    assert at(container(dep).items["image"]) == Location("base/deployment.yaml", 17, 9)  # type: ignore[attr-defined]


def test_strategic_merge_patch_value_and_base_in_trail(tmp_path: Path) -> None:
    write(tmp_path, {
        "base/kustomization.yaml": "resources:\n- deployment.yaml\n",
        "base/deployment.yaml": DEPLOYMENT,
        "prod/kustomization.yaml": "resources:\n- ../base\npatches:\n- path: replicas.yaml\n",
        "prod/replicas.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 5\n",
    })
    node = find(build(tmp_path, "prod"), "Deployment").field("spec", "replicas")
    assert node.value == 5  # type: ignore[union-attr]
    assert at(node) == Location("prod/replicas.yaml", 6, 3)
    assert Location("base/deployment.yaml", 6, 3) in trail(node)


def test_json6902_op_value_line(tmp_path: Path) -> None:
    write(tmp_path, {
        "base/kustomization.yaml": "resources:\n- deployment.yaml\n",
        "base/deployment.yaml": DEPLOYMENT,
        "prod/kustomization.yaml": (
            "resources:\n- ../base\npatches:\n- path: ops.yaml\n  target:\n    kind: Deployment\n"),
        "prod/ops.yaml": "- op: replace\n  path: /spec/replicas\n  value: 7\n",
    })
    node = find(build(tmp_path, "prod"), "Deployment").field("spec", "replicas")
    assert node.value == 7  # type: ignore[union-attr]
    assert at(node) == Location("prod/ops.yaml", 3, 3)
    assert Location("base/deployment.yaml", 6, 3) in trail(node)


def test_image_tag_from_images_entry(tmp_path: Path) -> None:
    write(tmp_path, {
        "base/kustomization.yaml": "resources:\n- deployment.yaml\n",
        "base/deployment.yaml": DEPLOYMENT,
        "prod/kustomization.yaml": "resources:\n- ../base\nimages:\n- name: nginx\n  newTag: 1.27.1\n",
    })
    image = container(find(build(tmp_path, "prod"), "Deployment")).items["image"]  # type: ignore[attr-defined]
    assert image.value == "nginx:1.27.1"
    assert at(image) == Location("prod/kustomization.yaml", 5, 3)
    assert trail(image) == [Location("base/deployment.yaml", 17, 9)]


def test_name_prefix_and_namespace(tmp_path: Path) -> None:
    write(tmp_path, {
        "base/kustomization.yaml": "resources:\n- deployment.yaml\n",
        "base/deployment.yaml": DEPLOYMENT,
        "prod/kustomization.yaml": "resources:\n- ../base\nnamespace: shop\nnamePrefix: prod-\n",
    })
    dep = find(build(tmp_path, "prod"), "Deployment")
    name = dep.field("metadata", "name")
    assert name.value == "prod-web"  # type: ignore[union-attr]
    assert at(name) == Location("prod/kustomization.yaml", 4, 1)
    assert trail(name) == [Location("base/deployment.yaml", 4, 3)]
    assert at(dep.field("metadata", "namespace")) == Location("prod/kustomization.yaml", 3, 1)


def test_generated_configmap_keys_point_at_literal_and_env_lines(tmp_path: Path) -> None:
    write(tmp_path, {
        "app/kustomization.yaml": (
            "configMapGenerator:\n"
            "- name: settings\n"
            "  literals:\n"
            "  - LOG_LEVEL=debug\n"
            "  envs:\n"
            "  - app.env\n"),
        "app/app.env": "# comment\nREGION=eu\nZONE=b\n",
    })
    cm = find(build(tmp_path, "app"), "ConfigMap")
    assert at(cm.field("data", "LOG_LEVEL")) == Location("app/kustomization.yaml", 4, 5)
    assert at(cm.field("data", "ZONE")) == Location("app/app.env", 3, 1)
    assert at(cm.field("metadata", "name")) == Location("app/kustomization.yaml", 2, 3)


def test_component_patch_writes_point_into_the_component(tmp_path: Path) -> None:
    write(tmp_path, {
        "base/kustomization.yaml": "resources:\n- deployment.yaml\n",
        "base/deployment.yaml": DEPLOYMENT,
        "components/debug/kustomization.yaml": (
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
            "patches:\n- path: env.yaml\n"),
        "components/debug/env.yaml": (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
            "    spec:\n      containers:\n      - name: web\n        env:\n        - name: MODE\n"
            "          value: debug\n"),
        "dev/kustomization.yaml": "resources:\n- ../base\ncomponents:\n- ../components/debug\n",
    })
    env = container(find(build(tmp_path, "dev"), "Deployment")).items["env"]  # type: ignore[attr-defined]
    value = env.items[0].items["value"]
    assert value.value == "debug"
    assert at(value) == Location("components/debug/env.yaml", 12, 11)
    assert Location("base/deployment.yaml", 20, 11) in trail(value)


def test_json6902_add_to_missing_annotations(tmp_path: Path) -> None:
    # kustomize's own build annotations make the map exist for the op
    write(tmp_path, {
        "app/kustomization.yaml": (
            "resources:\n- deployment.yaml\npatches:\n- path: ops.yaml\n  target:\n    kind: Deployment\n"),
        "app/deployment.yaml": DEPLOYMENT,
        "app/ops.yaml": "- op: add\n  path: /metadata/annotations/team~1owner\n  value: web\n",
    })
    node = find(build(tmp_path, "app"), "Deployment").field("metadata", "annotations", "team/owner")
    assert node.value == "web"  # type: ignore[union-attr]
    assert at(node) == Location("app/ops.yaml", 3, 3)
