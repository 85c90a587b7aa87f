"""namePrefix / nameSuffix: rename resources, remembering their old ids.

The name goes through ``metadata/name``; any other field the namePrefix /
nameSuffix tables list (e.g. an ``x-kubernetes-identity`` field of a custom
kind from ``crds:``) gets the same prefix or suffix.
"""

from __future__ import annotations

from typing import Callable

from krmcheck.kustomize import fieldspec
from krmcheck.kustomize.fieldspec import FieldSpec
from krmcheck.kustomize.resource import Resource
from krmcheck.kustomize.transformerconfig import TransformerConfig, default_config
from krmcheck.tree.node import Mapping, Scalar
from krmcheck.tree.origin import Origin

# kustomize never renames these kinds with a prefix or suffix.
SKIPPED_KINDS = frozenset({"CustomResourceDefinition", "APIService", "Namespace"})
_METADATA_NAME = ("metadata", "name")
Change = Callable[[str], str]


def apply(resources: list[Resource], prefix: str, suffix: str, origin: Origin,
          config: TransformerConfig | None = None) -> None:
    if not prefix and not suffix:
        return
    tables = config or default_config()
    for res in resources:
        if res.kind in SKIPPED_KINDS or not res.name:
            continue
        res.remember_id()
        res.set_name(f"{prefix}{res.name}{suffix}", origin)
        if prefix:
            res.prefixes.insert(0, prefix)
            _other_fields(res, tables.name_prefix, lambda v: prefix + v, origin)
        if suffix:
            res.suffixes.append(suffix)
            _other_fields(res, tables.name_suffix, lambda v: v + suffix, origin)


def _other_fields(res: Resource, specs: tuple[FieldSpec, ...], change: Change,
                  origin: Origin) -> None:
    def setter(parent: Mapping, key: str) -> None:
        node = parent.items.get(key)
        if isinstance(node, Scalar) and isinstance(node.value, str):
            node.set(change(node.value), origin)

    gvk = res.orig_id().gvk
    for spec in specs:
        if spec.path != _METADATA_NAME and spec.matches(gvk):
            fieldspec.visit(res, spec, setter, origin)

