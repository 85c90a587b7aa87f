"""Strategic merge; every expected tree was checked with `kubectl kustomize`."""

from __future__ import annotations

import pytest

from krmcheck.kustomize.strategic import strategic_merge
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import Gvk
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping, Node, lookup
from krmcheck.tree.origin import Origin

DEPLOY = Gvk("apps", "v1", "Deployment")

BASE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: a
        image: a:1
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
        ports:
        - containerPort: 80
        - containerPort: 90
          protocol: UDP
      - name: b
        image: b:1
        args: [x, y]
      - name: d
        image: d:1
      volumes:
      - name: v1
        emptyDir: {}
      - name: v2
        configMap: {name: cm}
"""


def merge(base: str, patch: str, gvk: Gvk = DEPLOY) -> Mapping | None:
    target = load_documents(base, "base/deploy.yaml")[0]
    doc = load_documents(patch, "overlay/patch.yaml", by="patch")[0]
    assert isinstance(target, Mapping) and isinstance(doc, Mapping)
    return strategic_merge(target, doc, gvk)


def at(node: Node | None, *path: str | int) -> Node:
    for step in path:
        assert node is not None
        node = node.items[step]  # type: ignore[attr-defined]
    assert node is not None
    return node


def pod(result: Mapping | None) -> dict:
    assert result is not None
    return result.to_data()["spec"]["template"]["spec"]


PATCH = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: c
        image: c:1
      - name: b
        image: b:2
        args: [z]
      - name: a
        env:
        - {name: C, value: "3"}
        - {name: A, value: "9"}
        ports:
        - containerPort: 70
        - containerPort: 90
          name: p
      - name: d
        $patch: delete
      volumes:
      - name: v1
        emptyDir: null
        persistentVolumeClaim: {claimName: pvc}
      - name: v3
        secret: {secretName: s}
"""


def test_lists_merge_by_key_with_patch_items_first() -> None:
    spec = pod(merge(BASE, PATCH))
    assert [c["name"] for c in spec["containers"]] == ["c", "b", "a"]
    assert spec["containers"][1] == {"name": "b", "image": "b:2", "args": ["z"]}
    assert spec["containers"][2]["image"] == "a:1"


def test_env_merges_by_name() -> None:
    env = pod(merge(BASE, PATCH))["containers"][2]["env"]
    assert env == [{"name": "C", "value": "3"}, {"name": "A", "value": "9"},
                   {"name": "B", "value": "2"}]


def test_ports_match_on_port_and_protocol_like_kyaml() -> None:
    # kyaml completes the patch's key (90, "") to (90, UDP) and then only
    # walks the target's element: the patch's port 90 entry is lost.
    ports = pod(merge(BASE, PATCH))["containers"][2]["ports"]
    assert ports == [{"containerPort": 70}, {"containerPort": 80},
                     {"containerPort": 90, "protocol": "UDP"}]


def test_volumes_merge_by_name_and_null_deletes() -> None:
    vols = pod(merge(BASE, PATCH))["volumes"]
    assert vols == [{"name": "v1", "persistentVolumeClaim": {"claimName": "pvc"}},
                    {"name": "v3", "secret": {"secretName": "s"}},
                    {"name": "v2", "configMap": {"name": "cm"}}]


def test_patch_values_keep_patch_origin_and_base_in_trail() -> None:
    result = merge(BASE, PATCH)
    replicas = at(result, "spec", "replicas")
    assert replicas.origin == Origin("overlay/patch.yaml", 6, 3, "patch")
    assert replicas.trail == (Origin("base/deploy.yaml", 6, 3, "resource"),)
    image = lookup(at(result, "spec", "template", "spec", "containers", 1), ["image"])
    assert image is not None
    assert image.origin == Origin("overlay/patch.yaml", 13, 9, "patch")
    assert Origin("base/deploy.yaml", 20, 9, "resource") in image.trail


def test_merged_nodes_keep_target_origin_and_new_ones_patch_origin() -> None:
    result = merge(BASE, PATCH)
    spec = at(result, "spec")
    assert spec.origin == Origin("base/deploy.yaml", 5, 1, "resource")
    a = at(result, "spec", "template", "spec", "containers", 2)
    assert a.origin == Origin("base/deploy.yaml", 10, 9, "resource")
    assert at(a, "image").origin == Origin("base/deploy.yaml", 11, 9, "resource")
    c = at(result, "spec", "template", "spec", "containers", 0)
    assert c.origin == Origin("overlay/patch.yaml", 10, 9, "patch")
    assert c.trail == ()


def test_replaced_list_carries_base_origin_in_trail() -> None:
    result = merge(BASE, PATCH)
    args = at(result, "spec", "template", "spec", "containers", 1, "args")
    assert args.origin == Origin("overlay/patch.yaml", 14, 9, "patch")
    assert args.trail == (Origin("base/deploy.yaml", 21, 9, "resource"),)


def test_patch_is_not_consumed() -> None:
    doc = load_documents(PATCH, "overlay/patch.yaml", by="patch")[0]
    assert isinstance(doc, Mapping)
    before = doc.to_data()
    for _ in range(2):
        target = load_documents(BASE, "base/deploy.yaml")[0]
        assert isinstance(target, Mapping)
        strategic_merge(target, doc, DEPLOY)
    assert doc.to_data() == before


def test_patch_delete_at_top_removes_resource() -> None:
    patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n$patch: delete\n"
    assert merge(BASE, patch) is None


def test_patch_replace_of_a_map() -> None:
    base = BASE.replace("spec:\n  replicas: 1\n", "spec:\n  replicas: 1\n  selector: {matchLabels: {a: b}}\n")
    patch = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      $patch: replace
      c: d
"""
    result = merge(base, patch)
    assert result is not None
    labels = at(result, "spec", "selector", "matchLabels")
    assert labels.to_data() == {"c": "d"}
    assert labels.origin == Origin("overlay/patch.yaml", 7, 5, "patch")
    assert labels.trail == (Origin("base/deploy.yaml", 7, 14, "resource"),)


def test_patch_replace_of_a_list_and_element() -> None:
    patch = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: a
        env:
        - $patch: replace
        - {name: Y, value: "2"}
      - name: b
        $patch: replace
        image: bb
"""
    containers = pod(merge(BASE, patch))["containers"]
    # kyaml re-applies the target's element after a replaced element: b stays.
    assert containers[0]["env"] == [{"name": "Y", "value": "2"}]
    assert containers[1] == {"name": "b", "image": "b:1", "args": ["x", "y"]}


def test_null_deletes_keys_and_new_maps_drop_nulls() -> None:
    patch = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {new: x, gone: null}
spec:
  replicas: null
  template:
    spec:
      securityContext: {runAsUser: 1, x: null}
"""
    result = merge(BASE, patch)
    assert result is not None
    data = result.to_data()
    assert "replicas" not in data["spec"]
    assert data["metadata"]["labels"] == {"new": "x"}
    assert data["spec"]["template"]["spec"]["securityContext"] == {"runAsUser": 1}


def test_bare_nulls_of_target_drop_explicit_ones_stay() -> None:
    base = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a:\n  b: null\n"
    patch = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {x: y}\n"
    result = merge(base, patch, Gvk("", "v1", "ConfigMap"))
    assert result is not None
    assert result.to_data()["data"] == {"b": None}


def test_primitive_merge_list_is_a_union_patch_first() -> None:
    base = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  finalizers: [x, y]\n"
    patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  finalizers: [z, x]\n"
    result = merge(base, patch)
    assert result is not None
    assert result.to_data()["metadata"]["finalizers"] == ["z", "x", "y"]


def test_custom_resource_lists_are_replaced() -> None:
    base = """\
apiVersion: example.com/v1
kind: Thing
metadata:
  name: t
spec:
  items:
  - {name: a, v: 1}
  - {name: b, v: 2}
"""
    patch = """\
apiVersion: example.com/v1
kind: Thing
metadata:
  name: t
spec:
  items:
  - name: b
    v: 3
"""
    result = merge(base, patch, Gvk("example.com", "v1", "Thing"))
    assert result is not None
    assert result.to_data()["spec"]["items"] == [{"name": "b", "v": 3}]
    items = at(result, "spec", "items")
    assert items.origin == Origin("overlay/patch.yaml", 6, 3, "patch")
    assert items.trail == (Origin("base/deploy.yaml", 6, 3, "resource"),)


def test_element_without_merge_key_follows_kyaml() -> None:
    # kubectl kustomize keeps only the unnamed container here.
    base = BASE.replace("      - name: d\n        image: d:1\n", "      - image: noname\n")
    patch = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: a
        image: x
"""
    assert pod(merge(base, patch))["containers"] == [{"image": "noname"}]


def test_unknown_directives_stay_as_fields() -> None:
    patch = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      $setElementOrder/containers: [{name: b}, {name: a}]
"""
    spec = pod(merge(BASE, patch))
    assert spec["$setElementOrder/containers"] == [{"name": "b"}, {"name": "a"}]


def test_unknown_patch_strategy_is_an_error_at_its_line() -> None:
    patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  $patch: frob\n"
    with pytest.raises(BuildError) as err:
        merge(BASE, patch)
    assert "unknown patch strategy 'frob'" in str(err.value)
    assert err.value.location == ("overlay/patch.yaml", 6, 3)


def test_kind_mismatch_is_an_error() -> None:
    patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template: [1]\n"
    with pytest.raises(BuildError) as err:
        merge(BASE, patch)
    assert "expected MappingNode but got SequenceNode" in str(err.value)
    assert err.value.location == ("overlay/patch.yaml", 6, 3)
