"""namePrefix / nameSuffix: rename resources, remembering their old ids."""

from __future__ import annotations

from krmcheck.kustomize.resource import Resource
from krmcheck.tree.origin import Origin

# kustomize never renames these kinds with a prefix or suffix.
SKIPPED_KINDS = frozenset({"CustomResourceDefinition", "APIService", "Namespace"})


def apply(resources: list[Resource], prefix: str, suffix: str, origin: Origin) -> None:
    if not prefix and not suffix:
        return
    for res in resources:
        if res.kind in SKIPPED_KINDS or not res.name:
            continue
        res.remember_id()
        res.set_name(f"{prefix}{res.name}{suffix}", origin)
        if prefix:
            res.prefixes.insert(0, prefix)
        if suffix:
            res.suffixes.append(suffix)
