"""What a root holds and what its objects make, as the reference validator looks it up."""

from __future__ import annotations

from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping
from krmcheck.validators.inventory import Inventory, Reference


def inventory(text: str) -> Inventory:
    return Inventory([d for d in load_documents(text, "root.yaml") if isinstance(d, Mapping)])


def ref(kind: str, name: str, namespace: str = "", group: str | None = None) -> Reference:
    return Reference(kind, name, namespace, ("spec",), group=group)


def test_an_object_is_found_by_kind_namespace_and_name() -> None:
    held = inventory("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n")
    assert held.find(ref("ConfigMap", "a", "x")) is not None
    assert held.find(ref("ConfigMap", "a", "y")) is None
    assert held.kinds == {"ConfigMap"}


def test_a_kind_of_another_group_is_not_the_referenced_kind() -> None:
    # a Knative Service is no core Service
    held = inventory("apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: web}\n")
    assert held.find(ref("Service", "web")) is None


def test_cluster_scoped_kinds_ignore_the_referrers_namespace() -> None:
    held = inventory("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n")
    assert held.find(ref("PriorityClass", "high", "apps")) is not None


def test_an_external_secret_makes_its_target() -> None:
    held = inventory("apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\n"
                     "metadata: {name: db, namespace: x}\nspec:\n  target: {name: db-credentials}\n")
    assert held.is_made(ref("Secret", "db-credentials", "x"))
    assert not held.is_made(ref("Secret", "other", "x"))
