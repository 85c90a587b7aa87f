"""The function runtime: wire formats, build annotations, provenance across a function."""

from __future__ import annotations

import pytest

from krmcheck.fn import runtime
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import Gvk, ResId
from krmcheck.resource.resource import GeneratorInfo, Resource
from krmcheck.resource.wire import strip_wire_annotations
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping, Scalar, lookup
from krmcheck.tree.origin import Origin

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: p-web
  namespace: apps
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: main
        image: nginx
"""
FN = Origin("fn.yaml", 1, 1, "function")


def _res(text: str, path: str = "base/deployment.yaml") -> Resource:
    doc = load_documents(text, path)[0]
    assert isinstance(doc, Mapping)
    return Resource(doc)


def _deployment() -> Resource:
    res = _res(DEPLOYMENT)
    res.prefixes = ["p-"]
    res.prev_ids = [ResId(Gvk("apps", "v1", "Deployment"), "web", ""),
                    ResId(Gvk("apps", "v1", "Deployment"), "web", "apps")]
    return res


def test_stamped_carries_build_state_and_id() -> None:
    ann = runtime.stamped(_deployment()).mapping("metadata").mapping("annotations")  # type: ignore[union-attr]
    assert ann is not None
    assert {k: v.value for k, v in ann.items.items() if isinstance(v, Scalar)} == {
        "internal.config.kubernetes.io/prefixes": "p-",
        "internal.config.kubernetes.io/previousKinds": "Deployment,Deployment",
        "internal.config.kubernetes.io/previousNames": "web,web",
        "internal.config.kubernetes.io/previousNamespaces": "default,apps",
        "kustomize.config.k8s.io/id":
            "group: apps\nkind: Deployment\nname: p-web\nnamespace: apps\nversion: v1\n"}


def test_generated_resource_annotations() -> None:
    res = _res("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    res.needs_hash = True
    res.generator = GeneratorInfo("create", True)
    assert runtime.build_annotations(res) == {
        "internal.config.kubernetes.io/generatorBehavior": "unspecified",
        "internal.config.kubernetes.io/needsHashSuffix": "enabled"}


def test_resource_list_text() -> None:
    config = _res("apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\nspec:\n  x: 1\n", "fn.yaml")
    item = _res("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: \"1\"\n")
    text = runtime.resource_list([runtime.stamped(item)], config.node)
    assert text == """\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  data:
    k: "1"
  kind: ConfigMap
  metadata:
    annotations:
      kustomize.config.k8s.io/id: |
        kind: ConfigMap
        name: c
        version: v1
      config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/annotations-migration-resource-id: '0'
      internal.config.kubernetes.io/id: '1'
      config.k8s.io/id: '1'
    name: c
functionConfig:
  apiVersion: example.com/v1
  kind: Fn
  metadata:
    name: fn
    annotations:
      config.kubernetes.io/local-config: 'true'
  spec:
    x: 1
"""


def test_generator_resource_list_has_empty_items_marker() -> None:
    config = _res("apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n", "fn.yaml")
    assert "items: []\n" in runtime.resource_list([], config.node)


def test_parse_answer_resource_list_and_stream() -> None:
    answer = runtime.parse_answer(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
        "results:\n- message: too few\n  severity: warning\n"
        "  resourceRef: {apiVersion: v1, kind: ConfigMap, name: a}\n"
        "  field: {path: data.x}\n  tags: {rule: r1}\n", "fn")
    assert [i.value("kind") for i in answer.items] == ["ConfigMap"]
    result = runtime.result_of(answer.results[0])
    assert (result.message, result.severity, str(result.resource_ref), result.field_path,
            result.tags) == ("too few", "warning", "ConfigMap/a", "data.x", (("rule", "r1"),))
    plain = runtime.parse_answer("kind: A\n---\nkind: B\n", "fn")
    assert [i.value("kind") for i in plain.items] == ["A", "B"]
    assert runtime.parse_answer("", "fn").items == []


def test_malformed_output_is_a_build_error() -> None:
    with pytest.raises(BuildError, match="MalformedYAMLError"):
        runtime.parse_stream("a: [1, 2\n", "plugin x")


def test_provenance_unchanged_changed_and_added() -> None:
    base = _deployment()
    out = load_documents(DEPLOYMENT.replace("replicas: 1", "replicas: 3")
                         + "      - name: sidecar\n        image: envoy\n", "<output>")[0]
    assert isinstance(out, Mapping)
    [res] = runtime.adopt([out], [base], FN)
    image = lookup(res.node, ["spec", "template", "spec", "containers"]).items[0].items["image"]  # type: ignore[union-attr]
    assert image.origin == Origin("base/deployment.yaml", 12, 9, "resource") and image.trail == ()
    replicas = lookup(res.node, ["spec", "replicas"])
    assert replicas is not None
    assert replicas.origin == FN
    assert replicas.trail == (Origin("base/deployment.yaml", 7, 3, "resource"),)
    sidecar = lookup(res.node, ["spec", "template", "spec", "containers"]).items[1]  # type: ignore[union-attr]
    assert sidecar.origin == FN and sidecar.items["image"].origin == FN  # type: ignore[attr-defined]
    assert res.node.origin == Origin("base/deployment.yaml", 1, 1, "resource")


def test_adopt_reads_build_state_back_and_strips_it() -> None:
    stamped = runtime.stamped(_deployment())
    [res] = runtime.adopt([stamped], [_deployment()], FN)
    assert res.prefixes == ["p-"] and [p.name for p in res.prev_ids] == ["web", "web"]
    assert res.metadata is not None and "annotations" not in res.metadata.items


def test_replace_by_id_keeps_order_removes_missing_appends_new() -> None:
    a, b, c = (_res(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\n") for n in "abc")
    new_b, d = (_res(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\n") for n in "bd")
    assert runtime.replace_by_id([a, b, c], [d, new_b], "p") == [new_b, d]
    with pytest.raises(BuildError, match="duplicate resource: ConfigMap d"):
        runtime.replace_by_id([a], [d, d], "p")


def test_generator_options() -> None:
    res = _res("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n"
               "    kustomize.config.k8s.io/needs-hash: 'True'\n"
               "    kustomize.config.k8s.io/behavior: merge\n")
    runtime.generator_options([res])
    assert res.needs_hash and res.generator is not None and res.generator.behavior == "merge"
    assert res.metadata is not None and "annotations" not in res.metadata.items
    bad = _res("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n"
               "    kustomize.config.k8s.io/needs-hash: 'yes'\n")
    with pytest.raises(BuildError, match=r'invalid value \("yes"\)'):
        runtime.generator_options([bad])


def test_default_paths_and_strip() -> None:
    res = _res("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: ns\n")
    runtime.default_paths([res])
    ann = res.annotations()
    assert ann is not None and ann.value("config.kubernetes.io/path") == "ns/service_web.yaml"
    strip_wire_annotations([res])
    assert res.annotations() is None


def test_a_result_naming_only_a_file_is_tied_to_the_item_with_that_path_and_index() -> None:
    from krmcheck.fn import runtime as rt
    from krmcheck.resource.resource import Resource as Res
    from krmcheck.results import Result as Res_
    from krmcheck.tree.load import load_documents as load

    items = [Res(n) for n in load(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n"
        "    config.kubernetes.io/path: cms.yaml\n    config.kubernetes.io/index: '0'\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations:\n"
        "    config.kubernetes.io/path: cms.yaml\n    config.kubernetes.io/index: '1'\n", "x.yaml")]
    result = Res_(message="m", file_path="cms.yaml", file_index=1)
    found = rt.resource_for(result, items)
    assert found is items[1]
    tied = rt.with_resource(result, found)
    assert tied.resource_ref is not None and tied.resource_ref.name == "b" and not tied.file_path


# --- the item a Result names: krmcheck.locate's rule, where it used to differ ----------

def _items() -> list[Resource]:
    return [Resource(n) for n in load_documents(  # type: ignore[arg-type]
        "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n---\n"
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p-settings\n", "base/app.yaml")]


def test_an_item_is_found_by_its_exact_api_version_first() -> None:
    from krmcheck.results import ResourceRef, Result

    v1, v2, _ = _items()
    ref = ResourceRef("autoscaling/v2", "HorizontalPodAutoscaler", "web")
    assert runtime.resource_for(Result("m", resource_ref=ref), [v1, v2]) is v2  # was the first of the group
    ref = ResourceRef("autoscaling/v2beta2", "HorizontalPodAutoscaler", "web")
    assert runtime.resource_for(Result("m", resource_ref=ref), [v1, v2]) is v1


def test_an_item_is_found_by_an_earlier_name() -> None:
    from krmcheck.results import ResourceRef, Result

    *_, cm = _items()
    cm.prev_ids = [ResId(Gvk("", "v1", "ConfigMap"), "settings", "")]
    ref = ResourceRef("v1", "ConfigMap", "settings")
    assert runtime.resource_for(Result("m", resource_ref=ref), [cm]) is cm  # was not found


def test_a_ref_naming_no_item_falls_back_to_the_file() -> None:
    from krmcheck.results import ResourceRef, Result

    items = _items()
    gone = ResourceRef("v1", "ConfigMap", "gone")
    found = runtime.resource_for(Result("m", resource_ref=gone, file_path="base/app.yaml", file_index=2), items)
    assert found is items[2]  # was not found
    tied = runtime.with_resource(Result("m", resource_ref=gone), found)
    assert tied.resource_ref == gone  # a Result's own ref is kept


def test_an_item_without_annotations_is_found_by_its_source_document() -> None:
    from krmcheck.results import Result

    items = _items()
    found = runtime.resource_for(Result("m", file_path="base/app.yaml", file_index=1), items)
    assert found is items[1]  # was not found
    tied = runtime.with_resource(Result("m", file_path="base/app.yaml", file_index=1), found)
    assert tied.resource_ref is not None and tied.resource_ref.apiVersion == "autoscaling/v2"
