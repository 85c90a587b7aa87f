"""A function's output adopted back into the build: provenance across the
function, build state read back, the new resource list, and the item a
Result names."""

from __future__ import annotations

import pytest

from krmcheck.fn import adoption
from krmcheck.resource import build_state
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import Gvk, ResId
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping, lookup
from krmcheck.tree.origin import Origin
from tests.fn.runtime_items import DEPLOYMENT, deployment, resource

FN = Origin("fn.yaml", 1, 1, "function")


def test_provenance_unchanged_changed_and_added() -> None:
    base = deployment()
    out = load_documents(DEPLOYMENT.replace("replicas: 1", "replicas: 3")
                         + "      - name: sidecar\n        image: envoy\n", "<output>")[0]
    assert isinstance(out, Mapping)
    [res] = adoption.adopt([out], [base], FN)
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
    stamped = build_state.stamped(deployment())
    [res] = adoption.adopt([stamped], [deployment()], FN)
    assert res.prefixes == ["p-"] and [p.name for p in res.prev_ids] == ["web", "web"]
    assert res.metadata is not None and "annotations" not in res.metadata.items


def test_replace_by_id_keeps_order_removes_missing_appends_new() -> None:
    a, b, c = (resource(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\n") for n in "abc")
    new_b, d = (resource(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\n") for n in "bd")
    assert adoption.replace_by_id([a, b, c], [d, new_b], "p") == [new_b, d]
    with pytest.raises(BuildError, match="duplicate resource: ConfigMap d"):
        adoption.replace_by_id([a], [d, d], "p")


def test_a_result_naming_only_a_file_is_tied_to_the_item_with_that_path_and_index() -> None:
    from krmcheck.resource.resource import Resource as Res
    from krmcheck.results import Result as Res_
    from krmcheck.tree.load import load_documents as load

    items = [Res(n) for n in load(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n"
        "    config.kubernetes.io/path: cms.yaml\n    config.kubernetes.io/index: '0'\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations:\n"
        "    config.kubernetes.io/path: cms.yaml\n    config.kubernetes.io/index: '1'\n", "x.yaml")]
    result = Res_(message="m", file_path="cms.yaml", file_index=1)
    found = adoption.resource_for(result, items)
    assert found is items[1]
    tied = adoption.with_resource(result, found)
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
    assert adoption.resource_for(Result("m", resource_ref=ref), [v1, v2]) is v2  # was the first of the group
    ref = ResourceRef("autoscaling/v2beta2", "HorizontalPodAutoscaler", "web")
    assert adoption.resource_for(Result("m", resource_ref=ref), [v1, v2]) is v1


def test_an_item_is_found_by_an_earlier_name() -> None:
    from krmcheck.results import ResourceRef, Result

    *_, cm = _items()
    cm.prev_ids = [ResId(Gvk("", "v1", "ConfigMap"), "settings", "")]
    ref = ResourceRef("v1", "ConfigMap", "settings")
    assert adoption.resource_for(Result("m", resource_ref=ref), [cm]) is cm  # was not found


def test_a_ref_naming_no_item_falls_back_to_the_file() -> None:
    from krmcheck.results import ResourceRef, Result

    items = _items()
    gone = ResourceRef("v1", "ConfigMap", "gone")
    found = adoption.resource_for(Result("m", resource_ref=gone, file_path="base/app.yaml", file_index=2), items)
    assert found is items[2]  # was not found
    tied = adoption.with_resource(Result("m", resource_ref=gone), found)
    assert tied.resource_ref == gone  # a Result's own ref is kept


def test_an_item_without_annotations_is_found_by_its_source_document() -> None:
    from krmcheck.results import Result

    items = _items()
    found = adoption.resource_for(Result("m", file_path="base/app.yaml", file_index=1), items)
    assert found is items[1]  # was not found
    tied = adoption.with_resource(Result("m", file_path="base/app.yaml", file_index=1), found)
    assert tied.resource_ref is not None and tied.resource_ref.apiVersion == "autoscaling/v2"
