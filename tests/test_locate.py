from __future__ import annotations

import pytest

from krmcheck.locate import Locator, locate, locate_all
from krmcheck.resource.lookup import names
from krmcheck.resource.resource import Resource
from krmcheck.results import ResourceRef, Result
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping, Scalar
from krmcheck.tree.origin import Location, Origin

ROOT = "overlays/prod"
BASE = "base/app.yaml"
APP = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      containers:
      - name: sidecar
        image: envoy:1.0
      - name: web
        image: nginx:1.25
        env:
        - name: "config.kubernetes.io/mode"
          value: x
"""
DB = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 1
"""
DEPLOY = ResourceRef("apps/v1", "Deployment", "web", "shop")


def resources() -> list[Resource]:
    docs = load_documents(APP, BASE) + load_documents(DB, "base/db.yaml")
    assert all(isinstance(d, Mapping) for d in docs)
    # rendered order differs from file order, as after kustomize's sort
    return [Resource(docs[2]), Resource(docs[1]), Resource(docs[0])]  # type: ignore[arg-type]


def where(result: Result, res: list[Resource] | None = None) -> Location:
    return locate(result, res if res is not None else resources(), ROOT).location


def at(path: str, ref: ResourceRef | None = DEPLOY) -> Location:
    return where(Result("m", resource_ref=ref, field_path=path))


def test_scalar_field() -> None:
    assert at("spec.template.spec.containers[1].image") == (BASE, 21, 9)
    assert at("metadata.namespace") == (BASE, 13, 3)


def test_list_item_by_index_and_by_name() -> None:
    assert at("spec.template.spec.containers[1]") == (BASE, 20, 9)
    assert at("spec.template.spec.containers[name=web]") == (BASE, 20, 9)
    assert at("spec.template.spec.containers[name=sidecar].image") == (BASE, 19, 9)


@pytest.mark.parametrize("path", [
    "spec.template.spec.containers[1].image",
    "spec.template.spec.containers.1.image",
    "spec.template.spec.containers[name=web].image",
    "spec.template.spec.containers.[name=web].image",
    "/spec/template/spec/containers/1/image",
    "$.spec.template.spec.containers[1].image",
])
def test_every_spelling_gives_the_same_location(path: str) -> None:
    assert at(path) == (BASE, 21, 9)


@pytest.mark.parametrize("path", [
    'spec.template.spec.containers[name=web].env[name="config.kubernetes.io/mode"].value',
    "spec.template.spec.containers[name=web].env[name=config.kubernetes.io/mode].value",
])
def test_selector_values_with_dots(path: str) -> None:
    assert at(path) == (BASE, 24, 11)


def test_missing_field_points_at_nearest_parent() -> None:
    assert at("spec.template.spec.securityContext.runAsNonRoot") == (BASE, 16, 5)
    assert at("spec.template.spec.containers[name=web].resources.limits") == (BASE, 20, 9)
    assert at("spec.template.spec.containers[9].image") == (BASE, 17, 7)


def test_resource_ref_only_points_at_metadata_name() -> None:
    assert at("") == (BASE, 12, 3)
    assert at("", ResourceRef("v1", "Service", "web")) == (BASE, 4, 3)


def test_unparsable_path_points_at_metadata_name() -> None:
    assert at("spec..template") == (BASE, 12, 3)


def test_default_namespace_matches_none() -> None:
    assert at("", ResourceRef("v1", "Service", "web", "default")) == (BASE, 4, 3)
    assert at("", ResourceRef("apps/v1", "StatefulSet", "db", "default")) == ("base/db.yaml", 4, 3)


def test_wrong_namespace_is_not_found() -> None:
    ref = ResourceRef("apps/v1", "Deployment", "web", "other")
    assert at("spec", ref) == ("overlays/prod/kustomization.yaml", 1, 1)


def test_rewritten_origin_and_trail() -> None:
    res = resources()
    deploy = res[1]
    image = deploy.field("spec", "template", "spec", "containers")
    assert image is not None
    node = image.items[1].items["image"]  # type: ignore[attr-defined]
    assert isinstance(node, Scalar)
    new_tag = Origin("overlays/prod/kustomization.yaml", 7, 3, "images")
    node.set("nginx:1.26", new_tag)
    finding = locate(Result("m", resource_ref=DEPLOY, field_path="spec.template.spec.containers[1].image"), res, ROOT)
    assert finding.location == ("overlays/prod/kustomization.yaml", 7, 3)
    assert finding.trail == (Origin(BASE, 21, 9, "resource"),)
    assert finding.root == ROOT


def test_renamed_resource_found_by_current_and_previous_name() -> None:
    res = resources()
    deploy = res[1]
    deploy.remember_id()
    deploy.set_name("prod-web", Origin("overlays/prod/kustomization.yaml", 3, 1, "namePrefix"))
    current = ResourceRef("apps/v1", "Deployment", "prod-web", "shop")
    assert where(Result("m", resource_ref=current), res) == ("overlays/prod/kustomization.yaml", 3, 1)
    old = Result("m", resource_ref=DEPLOY, field_path="spec.template")
    assert where(old, res) == (BASE, 15, 3)


def test_node_without_origin_defers_to_parent() -> None:
    res = resources()
    spec = res[0].node.mapping("spec")
    assert spec is not None
    spec.items["serviceName"] = Scalar("db")  # made by code, UNKNOWN origin
    ref = ResourceRef("apps/v1", "StatefulSet", "db")
    assert where(Result("m", resource_ref=ref, field_path="spec.serviceName"), res) == ("base/db.yaml", 5, 1)


def test_lookup_by_file_path_and_index() -> None:
    assert where(Result("m", file_path=BASE, file_index=0, field_path="spec.ports[0].port")) == (BASE, 7, 5)
    assert where(Result("m", file_path=BASE, file_index=1, field_path="metadata.namespace")) == (BASE, 13, 3)
    assert where(Result("m", file_path="./base/db.yaml", field_path="spec.replicas")) == ("base/db.yaml", 6, 3)


def test_file_path_relative_to_root() -> None:
    docs = load_documents("kind: ConfigMap\nmetadata:\n  name: cm\n", f"{ROOT}/cm.yaml")
    res = [Resource(docs[0])]  # type: ignore[arg-type]
    assert where(Result("m", file_path="cm.yaml", field_path="metadata"), res) == (f"{ROOT}/cm.yaml", 2, 1)


def test_file_path_counts_documents_renamed_or_not() -> None:
    res = resources()
    res[2].set_name("prod-web", Origin("overlays/prod/kustomization.yaml", 3, 1, "namePrefix"))
    # the Service's name now comes from the overlay; its document is still in BASE
    assert where(Result("m", file_path=BASE, file_index=0, field_path="spec.ports"), res) == (BASE, 6, 3)
    assert where(Result("m", file_path=BASE, file_index=1, field_path="spec"), res) == (BASE, 14, 1)
    # an index past the file's documents settles for its first document
    assert where(Result("m", file_path=BASE, file_index=9, field_path="spec"), res) == (BASE, 5, 1)


def test_file_path_finds_a_restamped_resource_by_its_trail() -> None:
    res = resources()
    res[0].node.rewrite(Origin("fn/config.yaml", 1, 1, "function"))
    assert where(Result("m", file_path="base/db.yaml", field_path="spec.replicas"), res) == ("base/db.yaml", 6, 3)


def test_unknown_resource_falls_back_to_file_or_kustomization() -> None:
    missing = ResourceRef("v1", "ConfigMap", "nope")
    assert at("data.x", missing) == ("overlays/prod/kustomization.yaml", 1, 1)
    assert where(Result("m", resource_ref=missing, file_path="other/x.yaml")) == ("other/x.yaml", 1, 1)
    assert where(Result("m")) == ("overlays/prod/kustomization.yaml", 1, 1)
    finding = locate(Result("m"), [], "", kustomization_file="Kustomization")
    assert finding.location == ("Kustomization", 1, 1)
    assert finding.trail == ()
    assert locate(Result("m"), [], ".").location == ("kustomization.yaml", 1, 1)


def test_locator_and_locate_all_agree() -> None:
    res = resources()
    results = [Result("a", resource_ref=DEPLOY, field_path="spec.template"),
               Result("b", file_path="base/db.yaml", field_path="spec.replicas")]
    findings = locate_all(results, res, ROOT)
    assert [f.location for f in findings] == [(BASE, 15, 3), ("base/db.yaml", 6, 3)]
    assert Locator(res, ROOT).locate(results[0]) == findings[0]


# --- which resource a Result names: one rule for the runtime and for findings -----------
# (kpt's conventions: kind, name and namespace, the apiVersion's group when
# given, the path and index annotations a function's items carry)

def _docs(text: str, path: str) -> list[Resource]:
    return [Resource(d) for d in load_documents(text, path) if isinstance(d, Mapping)]


HPAS = """\
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: web
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
"""


def test_names_follows_kpt() -> None:
    rid = resources()[1].id()  # apps/v1 Deployment shop/web
    assert names(DEPLOY, rid)
    assert names(ResourceRef("apps/v1beta2", "Deployment", "web", "shop"), rid)  # another version
    assert names(ResourceRef("", "Deployment", "web", "shop"), rid)  # no apiVersion: any group
    assert not names(ResourceRef("extensions/v1beta1", "Deployment", "web", "shop"), rid)
    assert not names(ResourceRef("apps/v1", "Deployment", "web", "default"), rid)
    assert not names(ResourceRef("apps/v1", "StatefulSet", "web", "shop"), rid)
    service = resources()[2].id()
    assert names(ResourceRef("v1", "Service", "web", "default"), service)
    assert not names(ResourceRef("apps/v1", "Service", "web"), service)


def test_a_ref_with_another_version_of_the_group_or_none_finds_the_resource() -> None:
    # these used to fall back to the kustomization file
    assert at("spec.template", ResourceRef("apps/v1beta2", "Deployment", "web", "shop")) == (BASE, 15, 3)
    assert at("spec.template", ResourceRef("", "Deployment", "web", "shop")) == (BASE, 15, 3)
    assert at("spec", ResourceRef("extensions/v1beta1", "Deployment", "web", "shop")) == \
        ("overlays/prod/kustomization.yaml", 1, 1)


def test_the_same_api_version_wins_over_another_version_of_the_group() -> None:
    hpas = _docs(HPAS, "base/hpa.yaml")
    for order in (hpas, hpas[::-1]):
        for version, line in (("v1", 4), ("v2", 9)):
            ref = ResourceRef(f"autoscaling/{version}", "HorizontalPodAutoscaler", "web")
            assert where(Result("m", resource_ref=ref), order) == ("base/hpa.yaml", line, 3)


def test_path_and_index_annotations_name_a_resource() -> None:
    text = ("kind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n"
            "    config.kubernetes.io/path: cms.yaml\n    config.kubernetes.io/index: '1'\n"
            "---\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations:\n"
            "    internal.config.kubernetes.io/path: ./cms.yaml\n")
    a, b = _docs(text, "fn/out.yaml")
    locator = Locator([a, b], "")
    assert locator.find(Result("m", file_path="cms.yaml", file_index=1)) is a
    assert locator.find(Result("m", file_path="cms.yaml", file_index=0)) is b  # no index: 0
    assert locator.find(Result("m", file_path="./cms.yaml", file_index=7)) is a  # the file's first
    # where no annotation says so, the source file's documents
    assert locator.find(Result("m", file_path="fn/out.yaml", file_index=1)) is b


def test_annotations_come_before_the_source_documents() -> None:
    text = ("kind: ConfigMap\nmetadata:\n  name: a\n---\nkind: ConfigMap\nmetadata:\n  name: b\n"
            "  annotations:\n    config.kubernetes.io/path: src.yaml\n    config.kubernetes.io/index: '0'\n")
    a, b = _docs(text, "src.yaml")
    locator = Locator([a, b], "")
    assert locator.find(Result("m", file_path="src.yaml", file_index=0)) is b  # the annotation
    assert locator.find(Result("m", file_path="src.yaml", file_index=1)) is b  # the second document
    assert locator.find(Result("m", file_path="src.yaml", file_index=5)) is a  # the first document
