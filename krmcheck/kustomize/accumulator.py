"""The list of resources a kustomization accumulates, with kustomize's id rules."""

from __future__ import annotations

import contextlib
from typing import Iterator

from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import id_key
from krmcheck.resource.resource import Resource
from krmcheck.tree.origin import Origin


class ResourceList:
    def __init__(self, items: list[Resource] | None = None) -> None:
        self.items: list[Resource] = items if items is not None else []
        self._seen: set[tuple[str, str, str, str, str]] | None = None  # ids, while accumulating()

    @contextlib.contextmanager
    def accumulating(self) -> Iterator[None]:
        """While only ``extend`` changes the list (a kustomization's resources
        being read), keep the ids seen so far instead of reading every id
        again for each file: linear in the files, not quadratic."""
        self._seen = {id_key(r.id()) for r in self.items}
        try:
            yield
        finally:
            self._seen = None

    def __iter__(self) -> Iterator[Resource]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def append(self, res: Resource, origin: Origin | None = None) -> None:
        self.extend([res], origin)

    def extend(self, resources: list[Resource], origin: Origin | None = None) -> None:
        """Add resources; an id already present is an error. Ids are read
        afresh (transformers rename in place), once per call: linear."""
        seen = self._seen if self._seen is not None else {id_key(r.id()) for r in self.items}
        for res in resources:
            key = id_key(res.id())
            if key in seen:
                raise BuildError(
                    f"may not add resource with an already registered id: {res.id().describe()}",
                    origin or res.node.origin)
            seen.add(key)
            self.items.append(res)

    def find_generated_target(self, res: Resource) -> list[Resource]:
        """Resources a merge/replace generator entry may apply to: same kind and
        name, now or under an earlier id (before prefixes, a namespace), and
        the same namespace, an entry with none meaning ``default`` as for
        any id (kustomize's ResId.Equals: a base's ConfigMap that its
        kustomization's ``namespace:`` moved still matches by its earlier
        id; one written with a namespace matches only an entry naming it)."""
        rid = res.id()
        out = []
        for other in self.items:
            for oid in other.all_ids():
                if (oid.gvk.kind == rid.gvk.kind and oid.name == rid.name
                        and (oid.namespace or "default") == (rid.namespace or "default")):
                    out.append(other)
                    break
        return out

    def remove(self, res: Resource) -> None:
        self.items = [r for r in self.items if r is not res]
