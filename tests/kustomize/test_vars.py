"""vars: binding, resolution at the top level, $(VAR) expansion, provenance, errors.

Expected texts were printed by ``kubectl kustomize`` (Kustomize v5.5.0).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.kustomize.builtins.vars import Bound, Var, expand
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resid import Gvk
from krmcheck.resource.resource import Resource
from krmcheck.tree.emit import emit_all
from krmcheck.tree.node import Mapping, Node, Scalar
from krmcheck.tree.origin import Origin

SVC = """\
apiVersion: v1
kind: Service
metadata:
  name: svc
  annotations:
    flag: "true"
spec:
  ports:
  - port: 8080
"""

DEP = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: dep
  annotations:
    a: $(SVC)
    b: $(PORT)
    c: x-$(PORT)-$$(SVC)-$(NOPE)-$$-$x-$(
spec:
  template:
    metadata:
      annotations:
        p: $(PORT)
    spec:
      containers:
      - name: c
        image: i
        args: ["$(PORT)", "$(FLAG)", "--s=$(SVC)"]
"""

BASE_K = """\
resources:
- svc.yaml
- dep.yaml
vars:
- name: SVC
  objref:
    kind: Service
    name: svc
    apiVersion: v1
- name: PORT
  objref:
    kind: Service
    name: svc
    apiVersion: v1
  fieldref:
    fieldpath: spec.ports[0].port
- name: FLAG
  objRef: {kind: Service, name: svc, apiVersion: v1}
  fieldRef: {fieldPath: metadata.annotations.flag}
"""

EXPECTED = """\
apiVersion: v1
kind: Service
metadata:
  annotations:
    flag: "true"
  name: p-svc
spec:
  ports:
  - port: 8080
---
apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    a: p-svc
    b: "8080"
    c: x-8080-$(SVC)-$(NOPE)-$-$x-$(
  name: p-dep
spec:
  template:
    metadata:
      annotations:
        p: 8080
    spec:
      containers:
      - args:
        - 8080
        - "true"
        - --s=p-svc
        image: i
        name: c
"""


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def build(root: Path, rel: str) -> list[Resource]:
    return Builder(Files(root), BuildOptions()).build(root / rel)


def _base(root: Path) -> None:
    write(root, "base/svc.yaml", SVC)
    write(root, "base/dep.yaml", DEP)
    write(root, "base/kustomization.yaml", BASE_K)
    write(root, "overlay/kustomization.yaml", "namePrefix: p-\nresources:\n- ../base\n")


def _container(res: list[Resource]) -> Mapping:
    dep = next(r for r in res if r.kind == "Deployment")
    node = dep.field("spec", "template", "spec", "containers")
    return node.items[0]  # type: ignore[union-attr,return-value]


def test_vars_resolve_after_prefix_and_keep_types(tmp_path: Path) -> None:
    _base(tmp_path)
    assert emit_all([r.node for r in build(tmp_path, "overlay")]) == EXPECTED


def test_substituted_field_is_written_by_the_var_entry(tmp_path: Path) -> None:
    _base(tmp_path)
    args = _container(build(tmp_path, "overlay")).items["args"].items  # type: ignore[attr-defined]
    port, flag, svc = args
    assert port.origin == Origin("base/kustomization.yaml", 10, 3, "vars")
    # the old value's origin, then the source field's origin
    assert port.trail == (Origin("base/dep.yaml", 18, 16), Origin("base/svc.yaml", 9, 5))
    assert flag.origin == Origin("base/kustomization.yaml", 17, 3, "vars")
    assert flag.trail[-1] == Origin("base/svc.yaml", 6, 5)
    # the Service's name was last written by the overlay's namePrefix
    assert svc.origin == Origin("base/kustomization.yaml", 5, 3, "vars")
    assert svc.trail[-1].path == "overlay/kustomization.yaml"


def test_var_declared_in_overlay_sees_hashed_name(tmp_path: Path) -> None:
    write(tmp_path, "k/kustomization.yaml", """\
resources:
- pod.yaml
configMapGenerator:
- name: cm
  literals: [a=b]
vars:
- name: CM
  objref: {kind: ConfigMap, name: cm, apiVersion: v1}
""")
    write(tmp_path, "k/pod.yaml", """\
apiVersion: v1
kind: Pod
metadata:
  name: pod
spec:
  containers:
  - name: c
    image: i
    command: [run, $(CM)]
""")
    pod = next(r for r in build(tmp_path, "k") if r.kind == "Pod")
    cmd = pod.field("spec", "containers").items[0].items["command"].items[1]  # type: ignore[union-attr]
    assert cmd.value == "cm-4h2mbtbbt6"
    assert cmd.origin == Origin("k/kustomization.yaml", 7, 3, "vars")


def test_vars_cannot_be_declared_twice(tmp_path: Path) -> None:
    _base(tmp_path)
    write(tmp_path, "overlay/kustomization.yaml", """\
resources:
- ../base
vars:
- name: SVC
  objref:
    kind: Deployment
    name: dep
    apiVersion: apps/v1
""")
    with pytest.raises(BuildError) as e:
        build(tmp_path, "overlay")
    assert "merging vars [{SVC Deployment.[noVer].[noGrp] {}}]: var 'SVC' already encountered" in str(e.value)
    assert e.value.location == ("overlay/kustomization.yaml", 4, 3)


def test_var_without_its_resource_is_an_error_naming_it(tmp_path: Path) -> None:
    _base(tmp_path)
    text = BASE_K.replace("    name: svc\n    apiVersion: v1\n  fieldref", "    name: nope\n"
                          "    apiVersion: v1\n  fieldref")
    write(tmp_path, "base/kustomization.yaml", text)
    with pytest.raises(BuildError) as e:
        build(tmp_path, "overlay")
    assert ("var '{PORT Service.v1.[noGrp] {spec.ports[0].port}}' cannot be mapped to a field "
            "in the set of known resources") in str(e.value)
    assert e.value.location == ("base/kustomization.yaml", 10, 3)


def test_objref_without_api_version_matches_nothing(tmp_path: Path) -> None:
    # kustomize compares group, version and kind exactly: v1 != ""
    _base(tmp_path)
    write(tmp_path, "base/kustomization.yaml",
          "resources: [svc.yaml, dep.yaml]\nvars:\n- name: SVC\n  objref: {kind: Service, name: svc}\n")
    with pytest.raises(BuildError, match=r"'\{SVC Service.\[noVer\].\[noGrp\] \{metadata.name\}\}' cannot"):
        build(tmp_path, "overlay")


def test_ambiguous_objref(tmp_path: Path) -> None:
    write(tmp_path, "k/kustomization.yaml", """\
resources: [a.yaml]
vars:
- name: S
  objref: {kind: Service, name: s, apiVersion: v1}
""")
    write(tmp_path, "k/a.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: a}\n---\n"
                                "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: b}\n")
    with pytest.raises(BuildError, match=r"found 2 resId matches for var \{S Service.v1.\[noGrp\] "
                                         r"\{metadata.name\}\} \(unable to disambiguate\)"):
        build(tmp_path, "k")


def test_non_string_list_item_is_an_error(tmp_path: Path) -> None:
    _base(tmp_path)
    write(tmp_path, "base/dep.yaml", DEP.replace('"--s=$(SVC)"', "1"))
    with pytest.raises(BuildError, match=r"considering field 'spec/template/spec/containers/args' of object "
                                         r"Deployment.v1.apps/p-dep.\[noNs\]: .*invalid value type expect a string"):
        build(tmp_path, "overlay")


def _bound(value: object) -> Bound:
    var = Var("X", Gvk("", "v1", "K"), Gvk("", "v1", "K"), "n", "", "", Origin("k", 1, 1))
    return Bound(var, value, Origin("r", 1, 1))  # type: ignore[arg-type]


@pytest.mark.parametrize("text, expected", [
    ("$(X)", 5),
    ("a$(X)", "a5"),
    ("$$(X)", "$(X)"),
    ("$$$(X)", "$5"),
    ("$(Y)", "$(Y)"),
    ("$(X", "$(X"),
    ("$", "$"),
    ("a$b", "a$b"),
])
def test_expand(text: str, expected: object) -> None:
    assert expand(text, {"X": _bound(5)})[0] == expected


def test_expand_leaves_maps_alone() -> None:
    node: Node = Mapping({"a": Scalar(1)})
    assert expand("$(X)", {"X": _bound(node)}) == ("$(X)", [])
    assert expand("x$(X)", {"X": _bound(node)}) == ("x$(X)", [])
