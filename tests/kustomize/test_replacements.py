"""replacements: sources, targets, field paths, types, order, provenance, errors.

Expected texts were printed by ``kubectl kustomize`` (Kustomize v5.5.0).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.emit import emit_all
from krmcheck.tree.node import Mapping, Node, Sequence
from krmcheck.tree.origin import Origin

RES = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
data:
  port: "8080"
  intval: "5"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: dep
spec:
  replicas: 1
  template:
    metadata:
      labels:
        ver: v
    spec:
      containers:
      - name: app
        image: nginx
        ports:
        - containerPort: 80
      - name: myapp
        image: nginx
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Pod
metadata:
  name: pod
spec:
  w: "q"
  z: 1.5
  containers: []
"""

KUSTOMIZATION = """\
namePrefix: p-
resources:
- res.yaml
images:
- name: nginx
  newTag: "1.2"
replacements:
- source:
    kind: ConfigMap
    name: cm
    fieldPath: data.port
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.replicas
    - spec.template.spec.containers.[name=app].ports.0.containerPort
    - spec.template.metadata.labels.ver
- source:
    kind: Deployment
    name: dep
    fieldPath: spec.template.spec.containers.0.image
  targets:
  - select:
      kind: ConfigMap
    fieldPaths: [data.intval]
  - select:
      kind: ConfigMap
    fieldPaths: [data.newkey]
    options: {create: true}
- source:
    kind: ConfigMap
    fieldPath: metadata.name
  targets:
  - select: {kind: ConfigMap}
    fieldPaths: [data.myname]
    options: {create: true}
- source:
    kind: Deployment
    fieldPath: spec.template.spec.containers
  targets:
  - select: {kind: Pod}
    fieldPaths: [spec.containers, spec.newc]
    options: {create: true}
- source:
    kind: ConfigMap
    fieldPath: data.port
  targets:
  - select: {kind: Pod}
    fieldPaths: [spec.z, spec.w]
"""

# replacements run after namePrefix and images; "[name=app]" is an unanchored
# regular expression (it also matches "myapp"); scalar targets keep their type.
EXPECTED = """\
apiVersion: v1
data:
  intval: nginx:1.2
  myname: p-cm
  newkey: nginx:1.2
  port: "8080"
kind: ConfigMap
metadata:
  name: p-cm
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: p-dep
spec:
  replicas: 8080
  template:
    metadata:
      labels:
        ver: "8080"
    spec:
      containers:
      - image: nginx:1.2
        name: app
        ports:
        - containerPort: 8080
      - image: nginx:1.2
        name: myapp
        ports:
        - containerPort: 8080
---
apiVersion: v1
kind: Pod
metadata:
  name: p-pod
spec:
  containers:
  - image: nginx:1.2
    name: app
    ports:
    - containerPort: 8080
  - image: nginx:1.2
    name: myapp
    ports:
    - containerPort: 8080
  newc:
  - image: nginx:1.2
    name: app
    ports:
    - containerPort: 8080
  - image: nginx:1.2
    name: myapp
    ports:
    - containerPort: 8080
  w: "8080"
  z: 8080
"""


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def build(root: Path, rel: str = "k") -> list[Resource]:
    return Builder(Files(root), BuildOptions()).build(root / rel)


def get(res: list[Resource], kind: str, *path: str | int) -> Node:
    node: Node = next(r for r in res if r.kind == kind).node
    for step in path:
        node = node.items[step]  # type: ignore[attr-defined,index]
    return node


def _setup(root: Path, replacements: str = "") -> None:
    write(root, "k/res.yaml", RES)
    text = KUSTOMIZATION if not replacements else "resources:\n- res.yaml\nreplacements:\n" + replacements
    write(root, "k/kustomization.yaml", text)


def test_replacements_after_other_transformers(tmp_path: Path) -> None:
    _setup(tmp_path)
    assert emit_all([r.node for r in build(tmp_path)]) == EXPECTED


def test_target_written_by_the_entry_with_the_source_in_the_trail(tmp_path: Path) -> None:
    _setup(tmp_path)
    res = build(tmp_path)
    replicas = get(res, "Deployment", "spec", "replicas")
    assert replicas.origin == Origin("k/kustomization.yaml", 8, 3, "replacements")
    assert replicas.trail == (Origin("k/res.yaml", 14, 3), Origin("k/res.yaml", 6, 3))
    # the source (an image) was last written by the images: entry's newTag
    intval = get(res, "ConfigMap", "data", "intval")
    assert intval.origin == Origin("k/kustomization.yaml", 19, 3, "replacements")
    assert intval.trail[-1] == Origin("k/kustomization.yaml", 6, 3, "kustomization")
    created = get(res, "ConfigMap", "data", "newkey")
    assert created.origin == Origin("k/kustomization.yaml", 19, 3, "replacements")
    assert created.trail == (Origin("k/kustomization.yaml", 6, 3, "kustomization"),)


def test_copied_subtree_keeps_its_source_origins_in_the_trail(tmp_path: Path) -> None:
    _setup(tmp_path)
    containers = get(build(tmp_path), "Pod", "spec", "containers")
    assert isinstance(containers, Sequence)
    name = containers.items[1].items["name"]  # type: ignore[attr-defined]
    assert name.origin == Origin("k/kustomization.yaml", 38, 3, "replacements")
    assert name.trail[-1] == Origin("k/res.yaml", 25, 9)


def test_path_files_and_selectors(tmp_path: Path) -> None:
    write(tmp_path, "k/res.yaml", RES.replace("  name: pod\n", "  name: pod\n  labels: {app: web}\n"))
    write(tmp_path, "k/one.yaml", """\
source:
  kind: ConfigMap
  fieldPath: data.port
targets:
- select:
    labelSelector: app=web
  fieldPaths: [spec.w]
""")
    write(tmp_path, "k/many.yaml", """\
- source:
    kind: ConfigMap
    fieldPath: data.intval
  targets:
  - select:
      kind: Deployment
    reject:
    - name: dep
    fieldPaths: [spec.replicas]
  - select:
      version: v1
    reject:
    - labelSelector: app=web
    - kind: Pod
    fieldPaths: [metadata.annotations.x]
    options: {create: true}
""")
    write(tmp_path, "k/kustomization.yaml",
          "namespace: ns\nresources:\n- res.yaml\nreplacements:\n- path: one.yaml\n  targets: []\n"
          "- path: many.yaml\n")
    res = build(tmp_path)
    w = get(res, "Pod", "spec", "w")
    assert (w.value, w.origin) == ("8080", Origin("k/one.yaml", 1, 1, "replacements"))
    assert get(res, "Deployment", "spec", "replicas").value == 1  # rejected by name
    # kustomize keeps a resource's own annotations as strings
    x = get(res, "ConfigMap", "metadata", "annotations", "x")
    assert (x.value, x.origin) == ("5", Origin("k/many.yaml", 1, 3, "replacements"))
    assert "annotations" not in get(res, "Pod", "metadata").items  # type: ignore[attr-defined]


def test_delimiter_and_wildcard(tmp_path: Path) -> None:
    _setup(tmp_path, """\
- source: {kind: ConfigMap, fieldPath: metadata.name}
  targets:
  - select: {kind: Deployment}
    fieldPaths: [spec.template.spec.containers.*.image]
    options: {delimiter: ":", index: -1}
""")
    containers = get(build(tmp_path), "Deployment", "spec", "template", "spec", "containers")
    assert [c.items["image"].value for c in containers.items] == ["cm:nginx", "cm:nginx"]  # type: ignore


def test_create_list_items(tmp_path: Path) -> None:
    _setup(tmp_path, """\
- source: {kind: ConfigMap, fieldPath: metadata.name}
  targets:
  - select: {kind: Deployment}
    fieldPaths: ["spec.template.spec.containers.[name=new].image", spec.template.spec.containers.3.name]
    options: {create: true}
""")
    containers = get(build(tmp_path), "Deployment", "spec", "template", "spec", "containers")
    assert [c.to_data() for c in containers.items[2:]] == [{"name": "new", "image": "cm"},  # type: ignore
                                                            {"name": "cm"}]


@pytest.mark.parametrize("entry, message", [
    ("- source: {kind: ConfigMap, name: nope}\n  targets: [{select: {kind: Pod}, fieldPaths: [spec.w]}]",
     "nothing selected by ConfigMap.[noVer].[noGrp]/nope.[noNs]"),
    ("- source: {version: v1}\n  targets: [{select: {kind: Pod}, fieldPaths: [spec.w]}]",
     "multiple matches for selector [noKind].v1.[noGrp]/[noName].[noNs]"),
    ("- source: {kind: ConfigMap, fieldPath: data.nope}\n  targets: [{select: {kind: Pod}, fieldPaths: [spec.w]}]",
     "fieldPath `data.nope` is missing for replacement source ConfigMap.[noVer].[noGrp]/[noName].[noNs]"),
    ("- source: {kind: ConfigMap, fieldPath: data.port, options: {delimiter: '0', index: 5}}\n"
     "  targets: [{select: {kind: Pod}, fieldPaths: [spec.w]}]",
     "options.index 5 is out of bounds for value 8080"),
    ("- source: {kind: ConfigMap, fieldPath: data.port}\n  targets: [{select: {kind: Pod}, fieldPaths: [spec.n.x]}]",
     'unable to find field "spec.n.x" in replacement target'),
    ("- source: {kind: ConfigMap, fieldPath: metadata.name}\n"
     "  targets: [{select: {kind: Deployment}, fieldPaths: [spec.template.spec.containers.5.name]}]",
     "index 5 specified but only 2 elements found"),
    ("- source: {kind: ConfigMap, fieldPath: metadata.name}\n"
     "  targets: [{select: {kind: Deployment}, fieldPaths: [spec.replicas]}]",
     "cannot decode !!str `cm` as a !!int"),
    ("- source: {kind: Pod, fieldPath: spec.z}\n  targets: [{select: {kind: Deployment}, fieldPaths: [spec.replicas]}]",
     "cannot decode !!float `1.5` as a !!int"),
    ("- source: {kind: ConfigMap, fieldPath: data.port}\n  targets: [{fieldPaths: [spec.w]}]",
     "target must specify resources to select"),
    ("- source: {kind: ConfigMap, fieldPath: data.port}",
     "replacements must specify a source and at least one target"),
    ("- path: r.yaml\n  source: {kind: ConfigMap}", "cannot specify both path and inline replacement"),
])
def test_errors(tmp_path: Path, entry: str, message: str) -> None:
    _setup(tmp_path, entry + "\n")
    with pytest.raises(BuildError) as e:
        build(tmp_path)
    assert message in str(e.value)
    assert e.value.location is not None and e.value.location.path == "k/kustomization.yaml"
    assert e.value.location.line in (4, 5)  # the entry, or its bad target


def test_path_file_outside_the_root(tmp_path: Path) -> None:
    _setup(tmp_path, "- path: ../outside.yaml\n")
    write(tmp_path, "outside.yaml", "[]\n")
    with pytest.raises(BuildError, match="is not in or below"):
        build(tmp_path)


def test_mapping_origin_of_entry(tmp_path: Path) -> None:
    # guard: the writer of a replaced value is the entry, a map in a list
    _setup(tmp_path)
    res = build(tmp_path)
    assert isinstance(get(res, "Pod", "spec", "newc"), Sequence)
    assert isinstance(get(res, "Pod", "spec"), Mapping)
