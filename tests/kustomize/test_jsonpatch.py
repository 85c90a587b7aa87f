"""JSON 6902 patches; results and messages checked with `kubectl kustomize`."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.kustomize.jsonpatch import apply_json_patch
from krmcheck.kustomize.target import Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.tree.emit import emit_all
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping, Node
from krmcheck.tree.origin import Origin
from tests.checkrun import write

BASE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: a
        image: a
"""
WHERE = Origin("overlay/kustomization.yaml", 4, 3, "patch")


def apply(ops: str) -> Mapping:
    target = load_documents(BASE, "base/deploy.yaml")[0]
    patch = load_documents(ops, "overlay/ops.yaml", by="patch")[0]
    assert isinstance(target, Mapping)
    return apply_json_patch(target, patch, WHERE)


def at(node: Node, *path: str | int) -> Node:
    for step in path:
        node = node.items[step]  # type: ignore[attr-defined]
    return node


def error(ops: str) -> BuildError:
    with pytest.raises(BuildError) as err:
        apply(ops)
    return err.value


def test_replace_add_copy_test_yaml_ops() -> None:
    result = apply("""\
- op: replace
  path: /spec/template/spec/containers/0/image
  value: b
- op: add
  path: /spec/template/spec/containers/-
  value: {name: c, image: c}
- op: copy
  from: /metadata/name
  path: /metadata/labels~1x
- op: test
  path: /spec/template/spec/containers/1/name
  value: c
""")
    data = result.to_data()
    assert data["metadata"] == {"name": "web", "labels/x": "web"}
    assert data["spec"]["template"]["spec"]["containers"] == [
        {"name": "a", "image": "b"}, {"name": "c", "image": "c"}]


def test_json_ops_are_accepted() -> None:
    result = apply('[{"op": "remove", "path": "/spec/template"}]')
    assert result.to_data()["spec"] == {}


def test_replaced_value_keeps_op_origin_and_base_in_trail() -> None:
    result = apply("- op: replace\n  path: /spec/template/spec/containers/0/image\n  value: b\n")
    image = at(result, "spec", "template", "spec", "containers", 0, "image")
    assert image.origin == Origin("overlay/ops.yaml", 3, 3, "patch")
    assert image.trail == (Origin("base/deploy.yaml", 10, 9, "resource"),)


def test_added_value_children_keep_their_lines() -> None:
    result = apply("- op: add\n  path: /spec/template/spec/containers/0\n  value:\n    name: z\n")
    z = at(result, "spec", "template", "spec", "containers", 0)
    assert z.origin == Origin("overlay/ops.yaml", 3, 3, "patch")
    assert at(z, "name").origin == Origin("overlay/ops.yaml", 4, 5, "patch")
    assert at(result, "spec", "template", "spec", "containers", 1, "name").to_data() == "a"


def test_move_records_the_op_and_keeps_the_source_in_trail() -> None:
    result = apply("- op: move\n  from: /metadata/name\n  path: /metadata/alias\n")
    alias = at(result, "metadata", "alias")
    assert "name" not in result.to_data()["metadata"]
    assert alias.origin == Origin("overlay/ops.yaml", 1, 3, "patch")
    assert alias.trail == (Origin("base/deploy.yaml", 4, 3, "resource"),)


def test_negative_index_and_replace_creating_a_key() -> None:
    result = apply("""\
- {op: add, path: /spec/template/spec/containers/-1, value: {name: z}}
- {op: replace, path: /spec/nope, value: 1}
- {op: copy, from: /spec/missing, path: /x}
""")
    data = result.to_data()
    assert [c["name"] for c in data["spec"]["template"]["spec"]["containers"]] == ["a", "z"]
    assert data["spec"]["nope"] == 1
    assert data["x"] is None


def test_test_op_failure_names_path_and_op_line() -> None:
    err = error("- op: add\n  path: /a\n  value: 1\n- op: test\n  path: /metadata/name\n  value: x\n")
    assert err.message == "testing value /metadata/name failed: test failed"
    assert err.location == ("overlay/ops.yaml", 4, 3)


def test_test_op_is_strict_about_types() -> None:
    err = error("- {op: test, path: /spec/template/spec/containers/0/name, value: 1}\n")
    assert "test failed" in err.message
    apply("- {op: test, path: /spec/nope, value: null}\n")


@pytest.mark.parametrize(("ops", "message"), [
    ("- {op: remove, path: /spec/nope}",
     "error in remove for path: '/spec/nope': Unable to remove nonexistent key: nope: missing value"),
    ("- {op: frob, path: /x}", "Unexpected kind: frob"),
    ("- {op: add, path: /a/b, value: 1}",
     'add operation does not apply: doc is missing path: "/a/b": missing value'),
    ("- {op: add, path: /spec/template/spec/containers/5, value: 1}",
     "error in add for path: '/spec/template/spec/containers/5': "
     "Unable to access invalid index: 5: invalid index referenced"),
    ("- {op: replace, path: /spec/x/y, value: 1}",
     "replace operation does not apply: doc is missing path: /spec/x/y: missing value"),
    ("- {op: replace, path: /spec/template/spec/containers/3, value: 1}",
     "replace operation does not apply: doc is missing key: "
     "/spec/template/spec/containers/3: missing value"),
])
def test_errors_match_kubectl_and_point_at_the_op(ops: str, message: str) -> None:
    err = error(ops)
    assert err.message == message
    assert err.location == ("overlay/ops.yaml", 1, 3)


def test_add_and_replace_without_a_value_write_null() -> None:
    """kubectl kustomize v5.5.0 takes a missing ``value`` for null: an
    ``add`` of ``targetRevision`` written without one builds."""
    out = apply("- {op: add, path: /spec/paused}\n- {op: replace, path: /metadata/name}\n")
    spec, meta = out.mapping("spec"), out.mapping("metadata")
    assert spec is not None and "paused" in spec.items and spec.value("paused") is None
    assert meta is not None and "name" in meta.items and meta.value("name") is None


def test_ops_must_be_a_list() -> None:
    err = error("op: add\npath: /x\n")
    assert err.location == WHERE.location


# kustomize patches a resource's JSON form and reads it back: a bare `key:`
# comes back `key: null`, which a later strategic merge keeps (it drops a
# bare one). Shared elasticsearch bases remove such an annotations key with a
# `test`/`remove` pair after a component's JSON patch and a strategic merge.
NULL_ANNOTATIONS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: es
spec:
  template:
    metadata:
      annotations:
    spec:
      affinity:
        podAffinity:
      containers:
      - name: c
        image: i
"""


def build_with(root: Path, kustomization: str) -> str:
    write(root, "k/sts.yaml", NULL_ANNOTATIONS)
    write(root, "k/comp/kustomization.yaml",
          "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n"
          "- patch: '[{op: add, path: /metadata/labels, value: {a: b}}]'\n  target: {kind: StatefulSet}\n")
    write(root, "k/smp.yaml", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: es\n"
                              "spec:\n  template:\n    spec:\n      volumes: []\n")
    write(root, "k/kustomization.yaml", kustomization)
    return emit_all([r.node for r in Builder(Files(root)).build(root / "k")])


def test_nulls_read_back_from_a_json_patch_survive_a_strategic_merge(tmp_path: Path) -> None:
    out = build_with(tmp_path, "resources: [sts.yaml]\ncomponents: [comp]\npatches:\n- path: smp.yaml\n")
    assert "      annotations: null\n" in out
    assert "      affinity:\n        podAffinity: null\n" in out
    # the same merge without a JSON patch before it drops them, as kubectl does
    plain = build_with(tmp_path, "resources: [sts.yaml]\npatches:\n- path: smp.yaml\n")
    assert "annotations" not in plain and "      affinity: {}\n" in plain


def test_a_test_and_remove_pair_finds_the_null_a_json_patch_left(tmp_path: Path) -> None:
    out = build_with(tmp_path, "resources: [sts.yaml]\ncomponents: [comp]\npatches:\n- path: smp.yaml\n"
                               "- patch: |-\n    - {op: test, path: /spec/template/metadata/annotations, value: null}\n"
                               "    - {op: remove, path: /spec/template/metadata/annotations}\n"
                               "  target: {kind: StatefulSet}\n")
    assert "annotations" not in out
