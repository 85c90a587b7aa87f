"""namespace: move every namespaced resource into one namespace."""

from __future__ import annotations

from krmcheck.kustomize import fieldspec
from krmcheck.kustomize.nameref import is_cluster_scoped
from krmcheck.kustomize.resource import Resource
from krmcheck.tree.node import Mapping, Scalar
from krmcheck.tree.origin import Origin


def apply(resources: list[Resource], namespace: str, origin: Origin) -> None:
    if not namespace:
        return
    for res in resources:
        gvk = res.gvk
        if gvk.kind == "Namespace" and gvk.group == "":
            # kustomize renames Namespace objects to the target namespace
            if res.name != namespace:
                res.remember_id()
                res.set_name(namespace, origin)
            continue
        if is_cluster_scoped(gvk):
            continue
        if res.namespace != namespace:
            res.remember_id()
            res.set_namespace(namespace, origin)
        _other_fields(res, namespace, origin)


def _other_fields(res: Resource, namespace: str, origin: Origin) -> None:
    """Fields other than metadata.namespace listed in the namespace table."""

    def setter(parent: Mapping, key: str) -> None:
        node = parent.items.get(key)
        if isinstance(node, Scalar):
            if node.value != namespace:
                node.set(namespace, origin)
        elif node is None:
            parent.items[key] = Scalar(namespace, origin)

    for spec in fieldspec.defaults("namespace"):
        if spec.path == ("metadata", "namespace"):
            continue
        fieldspec.visit(res, spec, setter, origin)
