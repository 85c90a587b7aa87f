"""``configurations:``, ``crds:`` and ``openapi:`` through whole builds.

Expected texts were printed by ``kubectl kustomize`` (Kustomize v5.5.0).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree import fieldpath
from krmcheck.tree.emit import emit_all
from krmcheck.tree.node import Node, Scalar


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def build(root: Path, directory: str) -> list[Resource]:
    return Builder(Files(root), BuildOptions()).build(root / directory)


def text(resources: list[Resource]) -> str:
    return emit_all([r.node for r in resources])


def at(resources: list[Resource], kind: str, path: str) -> Node:
    res = next(r for r in resources if r.kind == kind)
    steps = fieldpath.parse(path)
    node, depth = fieldpath.walk(res.node, steps)
    assert depth == len(steps), path
    return node


def where(node: Node) -> tuple[str, int, int]:
    return node.origin.path, node.origin.line, node.origin.col


BASE_WITH_CONFIG = {
    "base/kustomization.yaml": "resources:\n- thing.yaml\nconfigurations:\n- config.yaml\n",
    "base/config.yaml": """\
commonLabels:
- path: spec/selector/labels
  kind: Thing
  create: true
nameReference:
- kind: ConfigMap
  version: v1
  fieldSpecs:
  - path: spec/configName
    kind: Thing
""",
    "base/thing.yaml": """\
apiVersion: example.com/v1
kind: Thing
metadata:
  name: thing
spec:
  configName: settings
""",
    "overlay/kustomization.yaml": """\
resources:
- ../base
namePrefix: dev-
commonLabels:
  team: blue
configMapGenerator:
- name: settings
  literals:
  - a=b
""",
}


def test_base_configurations_steer_the_overlay_and_name_references(tmp_path: Path) -> None:
    write(tmp_path, BASE_WITH_CONFIG)
    out = build(tmp_path, "overlay")
    assert text(out) == """\
apiVersion: v1
data:
  a: b
kind: ConfigMap
metadata:
  labels:
    team: blue
  name: dev-settings-4h2mbtbbt6
---
apiVersion: example.com/v1
kind: Thing
metadata:
  labels:
    team: blue
  name: dev-thing
spec:
  configName: dev-settings-4h2mbtbbt6
  selector:
    labels:
      team: blue
"""
    # The label in the custom field is written by the overlay's commonLabels line.
    assert where(at(out, "Thing", "spec.selector.labels.team")) == ("overlay/kustomization.yaml", 5, 3)
    # The reference is rewritten by whoever wrote the referred name.
    ref = at(out, "Thing", "spec.configName")
    assert isinstance(ref, Scalar) and ref.trail[0].path == "base/thing.yaml"


def test_a_cached_base_still_passes_its_configurations_up(tmp_path: Path) -> None:
    write(tmp_path, BASE_WITH_CONFIG)
    write(tmp_path, {"other/kustomization.yaml": "resources:\n- ../base\ncommonLabels:\n  team: red\n"})
    builder = Builder(Files(tmp_path), BuildOptions())
    builder.build(tmp_path / "overlay")
    again = builder.build(tmp_path / "other")
    labels = at(again, "Thing", "spec.selector.labels")
    assert labels.to_data() == {"team": "red"}


def test_kind_specific_name_prefix_spec_replaces_the_default(tmp_path: Path) -> None:
    # kubectl: only Foo objects get the prefix once the table names Foo.
    write(tmp_path, {
        "app/kustomization.yaml": "resources:\n- r.yaml\nnamePrefix: p-\nconfigurations:\n- c.yaml\n",
        "app/c.yaml": "namePrefix:\n- path: metadata/name\n  kind: Foo\n",
        "app/r.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
---
apiVersion: x/v1
kind: Foo
metadata:
  name: foo
""",
    })
    out = build(tmp_path, "app")
    assert [r.name for r in out] == ["cm", "p-foo"]
    assert where(at(out, "Foo", "metadata.name")) == ("app/kustomization.yaml", 3, 1)


def test_a_name_prefix_spec_with_create_makes_the_field_prefixed(tmp_path: Path) -> None:
    # kubectl: the missing field is made "" and then gets the prefix and the suffix.
    write(tmp_path, {
        "app/kustomization.yaml": "resources:\n- r.yaml\nnamePrefix: p-\nnameSuffix: -s\n"
                                  "configurations:\n- c.yaml\n",
        "app/c.yaml": "namePrefix:\n- path: spec/made/here\n  create: true\n"
                      "nameSuffix:\n- path: spec/made/here\n  create: true\n",
        "app/r.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\nspec:\n  x: a\n",
    })
    out = build(tmp_path, "app")
    assert text(out) == ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p-cm-s\nspec:\n"
                         "  made:\n    here: p--s\n  x: a\n")
    assert where(at(out, "ConfigMap", "spec.made.here")) == ("app/kustomization.yaml", 3, 1)


def test_unknown_table_in_a_configurations_file_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, {
        "app/kustomization.yaml": "resources: []\nconfigurations:\n- c.yaml\n",
        "app/c.yaml": "commonLabel:\n- path: spec/x\n",
    })
    with pytest.raises(BuildError) as e:
        build(tmp_path, "app")
    assert "commonLabel" in str(e.value)
    assert e.value.location is not None and e.value.location.path == "app/c.yaml"


@pytest.mark.parametrize("config, labelled", [
    ("---\n\n\n", False),                              # a separator and blank lines: nothing
    ("---\n~\n---\n" + "commonLabels:\n- path: data/x\n  create: true\n", False),
    ("commonLabels:\n- path: data/x\n  create: true\n---\n[]\n", True),
])
def test_a_configurations_file_is_its_first_document(tmp_path: Path, config: str,
                                                     labelled: bool) -> None:
    # kubectl: kustomize decodes only the first document of the file; a null
    # one configures nothing, and what follows it is never read.
    write(tmp_path, {
        "app/kustomization.yaml": "resources:\n- cm.yaml\ncommonLabels:\n  a: b\n"
                                  "configurations:\n- c.yaml\n",
        "app/c.yaml": config,
        "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
    })
    data = "data:\n  x:\n    a: b\n" if labelled else ""
    assert text(build(tmp_path, "app")) == (
        f"apiVersion: v1\n{data}kind: ConfigMap\nmetadata:\n  labels:\n    a: b\n  name: cm\n")


def test_a_configurations_file_whose_first_document_is_a_list_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, {
        "app/kustomization.yaml": "resources: []\nconfigurations:\n- c.yaml\n",
        "app/c.yaml": "---\n[]\n---\ncommonLabels:\n- path: data/x\n",
    })
    with pytest.raises(BuildError) as e:
        build(tmp_path, "app")
    assert "map of field-spec tables" in str(e.value)
    assert e.value.location is not None and e.value.location.line == 2


def test_missing_configurations_file_is_named(tmp_path: Path) -> None:
    write(tmp_path, {"app/kustomization.yaml": "configurations:\n- nope.yaml\n"})
    with pytest.raises(BuildError) as e:
        build(tmp_path, "app")
    assert "nope.yaml" in str(e.value)
    assert e.value.location is not None and e.value.location.line == 2


CRD_DEFS = """\
example.com/v1.Widget:
  Schema:
    properties:
      apiVersion: {type: string}
      kind: {type: string}
      metadata: {type: object}
      spec:
        $ref: example.com/v1.WidgetSpec
example.com/v1.WidgetSpec:
  Schema:
    properties:
      secretRef:
        x-kubernetes-object-ref-api-version: v1
        x-kubernetes-object-ref-kind: Secret
        $ref: io.k8s.LocalObjectReference
      podLabels:
        x-kubernetes-label-selector: ""
"""


def test_crds_add_name_references_and_label_fields(tmp_path: Path) -> None:
    write(tmp_path, {
        "app/kustomization.yaml": """\
crds:
- widget.yaml
resources:
- r.yaml
namePrefix: x-
commonLabels:
  app: w
""",
        "app/widget.yaml": CRD_DEFS,
        "app/r.yaml": """\
apiVersion: v1
kind: Secret
metadata:
  name: creds
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec:
  podLabels: {}
  secretRef:
    name: creds
""",
    })
    out = build(tmp_path, "app")
    assert at(out, "Widget", "spec.secretRef.name").to_data() == "x-creds"
    assert at(out, "Widget", "spec.podLabels").to_data() == {"app": "w"}
    assert where(at(out, "Widget", "spec.podLabels.app")) == ("app/kustomization.yaml", 7, 3)


CUSTOM_SCHEMA = """\
{"definitions": {
  "v1alpha1.MyCRD": {
    "properties": {"spec": {"properties": {"items": {
      "type": "array", "items": {"type": "object"},
      "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}}}},
    "x-kubernetes-group-version-kind": [{"group": "example.com", "kind": "MyCRD", "version": "v1alpha1"}]
  }
}}
"""
MY_CRD = """\
apiVersion: example.com/v1alpha1
kind: MyCRD
metadata:
  name: c
spec:
  items:
  - name: a
    size: 1
  - name: b
    size: 2
"""
PATCH = """\
apiVersion: example.com/v1alpha1
kind: MyCRD
metadata:
  name: c
spec:
  items:
  - name: b
    size: 3
"""


def test_openapi_schema_gives_custom_kinds_merge_keys(tmp_path: Path) -> None:
    write(tmp_path, {
        "base/kustomization.yaml": "resources:\n- crd.yaml\nopenapi:\n  path: schema.json\n",
        "base/schema.json": CUSTOM_SCHEMA,
        "base/crd.yaml": MY_CRD,
        "overlay/kustomization.yaml": "resources:\n- ../base\npatches:\n- path: patch.yaml\n",
        "overlay/patch.yaml": PATCH,
    })
    out = build(tmp_path, "overlay")
    # kubectl: merged on name, the patched element first.
    assert at(out, "MyCRD", "spec.items").to_data() == [
        {"name": "b", "size": 3}, {"name": "a", "size": 1}]
    assert where(at(out, "MyCRD", "spec.items[name=b].size")) == ("overlay/patch.yaml", 8, 5)
    assert where(at(out, "MyCRD", "spec.items[name=a].size")) == ("base/crd.yaml", 8, 5)


def test_without_openapi_custom_lists_are_replaced(tmp_path: Path) -> None:
    write(tmp_path, {
        "app/kustomization.yaml": "resources:\n- crd.yaml\npatches:\n- path: patch.yaml\n",
        "app/crd.yaml": MY_CRD,
        "app/patch.yaml": PATCH,
    })
    out = build(tmp_path, "app")
    assert at(out, "MyCRD", "spec.items").to_data() == [{"name": "b", "size": 3}]


def test_top_level_schema_file_replaces_builtin_merge_keys(tmp_path: Path) -> None:
    # kubectl: with a schema file at the top, a Deployment's containers list
    # is replaced, not merged.
    write(tmp_path, {
        "app/kustomization.yaml": """\
resources:
- dep.yaml
openapi:
  path: schema.json
patches:
- patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: d
    spec:
      template:
        spec:
          containers:
          - name: a
            image: new
""",
        "app/schema.json": CUSTOM_SCHEMA,
        "app/dep.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    spec:
      containers:
      - name: a
        image: a
      - name: b
        image: b
""",
    })
    out = build(tmp_path, "app")
    assert at(out, "Deployment", "spec.template.spec.containers").to_data() == [
        {"name": "a", "image": "new"}]


@pytest.mark.parametrize("openapi, message", [
    ("  version: v1.14.1\n", "not built in"),
    ("  version: v1.21.2\n  path: schema.json\n", "cannot use both"),
    ("  path: missing.json\n", "missing.json"),
])
def test_openapi_errors(tmp_path: Path, openapi: str, message: str) -> None:
    write(tmp_path, {
        "app/kustomization.yaml": "resources:\n- crd.yaml\nopenapi:\n" + openapi,
        "app/schema.json": CUSTOM_SCHEMA,
        "app/crd.yaml": MY_CRD,
    })
    with pytest.raises(BuildError) as e:
        build(tmp_path, "app")
    assert message in str(e.value)
    assert e.value.location is not None and e.value.location.path == "app/kustomization.yaml"


def test_namespace_sets_default_subjects_and_keeps_custom_namespace_kinds(tmp_path: Path) -> None:
    write(tmp_path, {
        "app/kustomization.yaml": "namespace: apps\nresources:\n- r.yaml\n",
        "app/r.yaml": """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: view
subjects:
- kind: ServiceAccount
  name: default
  namespace: other
- kind: ServiceAccount
  name: robot
  namespace: other
- kind: User
  name: default
---
apiVersion: example.com/v1
kind: Namespace
metadata:
  name: custom
""",
    })
    out = build(tmp_path, "app")
    subjects = at(out, "ClusterRoleBinding", "subjects").to_data()
    assert [s.get("namespace") for s in subjects] == ["apps", "other", "apps"]
    assert where(at(out, "ClusterRoleBinding", "subjects[0].namespace")) == (
        "app/kustomization.yaml", 1, 1)
    custom = at(out, "Namespace", "metadata").to_data()
    assert custom == {"name": "custom", "namespace": "apps"}
