"""replicas: set the replica count of workloads by name."""

from __future__ import annotations

from krmcheck.kustomize import fieldspec
from krmcheck.kustomize.transformerconfig import TransformerConfig, default_config
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Scalar
from krmcheck.kustomize.builtins.table import FieldEnv
from krmcheck.kustomize.kustomization import Kustomization


def apply(resources: list[Resource], entry: Mapping,
          config: TransformerConfig | None = None) -> None:
    name = entry.value("name")
    count_node = entry.items.get("count")
    if not isinstance(count_node, Scalar) or not isinstance(count_node.value, int) \
            or isinstance(count_node.value, bool):
        raise BuildError("replicas entry needs an integer count",
                         count_node.origin if count_node else entry.origin)
    count = count_node.value
    origin = count_node.origin

    def setter(parent: Mapping, key: str) -> None:
        node = parent.items.get(key)
        if isinstance(node, Scalar):
            node.set(count, origin)
        else:
            parent.items[key] = Scalar(count, origin)

    specs = (config or default_config()).replicas
    for res in resources:
        if name not in (res.name, res.orig_id().name):
            continue
        for spec in specs:
            fieldspec.visit(res, spec, setter, origin)


# --- the kustomization's field (builtins/table.py) ---------------------------

def from_kustomization(k: Kustomization, resources: list[Resource], env: FieldEnv) -> None:
    """``replicas:`` entries."""
    for entry in k.seq("replicas"):
        if isinstance(entry, Mapping):
            apply(resources, entry, env.tables)
