"""namespace: every namespaced resource moved into one namespace, written by
the kustomization's ``namespace:`` line."""

from __future__ import annotations

from krmcheck.kustomize.builtins import namespace
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Origin
from tests.kustomize.builtins.inline import KUSTOMIZATION, RESOURCES, at, node, rendered, resources

WHERE = Origin(KUSTOMIZATION, 2, 1, "namespace")

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"


def moved(text: str, to: str = "shop") -> list[Resource]:
    res = resources(text)
    namespace.apply(res, to, WHERE)
    return res


def test_a_namespaced_resource_gets_the_namespace_from_the_namespace_line() -> None:
    [cm] = moved(CONFIGMAP)
    assert node(cm, "metadata", "namespace").to_data() == "shop"
    assert at(node(cm, "metadata", "namespace")) == (KUSTOMIZATION, 2, 1, "namespace")
    assert [(i.name, i.namespace) for i in cm.all_ids()] == [("settings", ""), ("settings", "shop")]


def test_another_namespace_is_replaced_and_kept_in_the_trail() -> None:
    [cm] = moved(CONFIGMAP + "  namespace: old\n")
    ns = node(cm, "metadata", "namespace")
    assert ns.to_data() == "shop" and ns.origin == WHERE
    assert [(o.path, o.line) for o in ns.trail] == [(RESOURCES, 5)]


def test_the_same_namespace_keeps_its_writer() -> None:
    [cm] = moved(CONFIGMAP + "  namespace: shop\n")
    assert at(node(cm, "metadata", "namespace"))[:2] == (RESOURCES, 5)


def test_a_cluster_scoped_resource_gets_no_namespace() -> None:
    [role] = moved("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n")
    metadata = role.node.mapping("metadata")
    assert metadata is not None and "namespace" not in metadata


def test_a_namespace_object_is_renamed_only_when_its_api_version_is_v1() -> None:
    ns, other = moved("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: old\n---\n"
                      "apiVersion: example.com/v1\nkind: Namespace\nmetadata:\n  name: old\n")
    assert (ns.name, other.name) == ("shop", "old")
    assert node(ns, "metadata", "name").origin == WHERE
    assert ns.orig_id().name == "old"
    assert "namespace" not in node(ns, "metadata").to_data()  # type: ignore[operator]


def test_binding_subjects_named_default_get_the_namespace() -> None:
    binding = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: read
subjects:
- kind: ServiceAccount
  name: default
  namespace: old
- kind: ServiceAccount
  name: web
  namespace: old
- kind: ServiceAccount
  name: default
"""
    [crb] = moved(binding)
    subjects = node(crb, "subjects").to_data()
    assert subjects == [{"kind": "ServiceAccount", "name": "default", "namespace": "shop"},
                        {"kind": "ServiceAccount", "name": "web", "namespace": "old"},
                        {"kind": "ServiceAccount", "name": "default", "namespace": "shop"}]
    assert node(crb, "subjects", "2", "namespace").origin == WHERE


def test_fields_of_the_namespace_table_are_set() -> None:
    api_service = """\
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
spec:
  service:
    name: metrics-server
"""
    [svc] = moved(api_service)
    assert node(svc, "spec", "service").to_data() == {"name": "metrics-server", "namespace": "shop"}
    assert "namespace" not in node(svc, "metadata").to_data()  # type: ignore[operator]


def test_an_empty_namespace_changes_nothing() -> None:
    assert rendered(moved(CONFIGMAP, to="")) == CONFIGMAP


def test_an_empty_object_is_left_alone() -> None:
    empty = Resource(Mapping())
    namespace.apply([empty], "shop", WHERE)
    assert empty.node.items == {} and empty.prev_ids == []
