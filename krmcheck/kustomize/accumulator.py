"""The list of resources a kustomization accumulates, with kustomize's id rules."""

from __future__ import annotations

from typing import Iterator

from krmcheck.kustomize.errors import BuildError
from krmcheck.kustomize.resource import Resource, ResId
from krmcheck.tree.origin import Origin


def same_id(a: ResId, b: ResId) -> bool:
    """kustomize compares ids on group, kind, name and namespace; the version
    does not make two resources distinct, and "" equals "default"."""
    return (a.gvk.group == b.gvk.group and a.gvk.kind == b.gvk.kind and a.name == b.name
            and (a.namespace or "default") == (b.namespace or "default"))


class ResourceList:
    def __init__(self, items: list[Resource] | None = None) -> None:
        self.items: list[Resource] = items if items is not None else []

    def __iter__(self) -> Iterator[Resource]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def append(self, res: Resource, origin: Origin | None = None) -> None:
        rid = res.id()
        for other in self.items:
            if same_id(other.id(), rid):
                raise BuildError(
                    f"may not add resource with an already registered id: {rid.describe()}",
                    origin or res.node.origin)
        self.items.append(res)

    def extend(self, resources: list[Resource], origin: Origin | None = None) -> None:
        for r in resources:
            self.append(r, origin)

    def find_generated_target(self, res: Resource) -> list[Resource]:
        """Resources a merge/replace generator entry may apply to: same kind and
        name as originally written (before prefixes), same namespace."""
        rid = res.id()
        out = []
        for other in self.items:
            for oid in (other.orig_id(), other.id()):
                if (oid.gvk.kind == rid.gvk.kind and oid.name == rid.name
                        and (not rid.namespace or (oid.namespace or "default") == rid.namespace)):
                    out.append(other)
                    break
        return out

    def remove(self, res: Resource) -> None:
        self.items = [r for r in self.items if r is not res]
