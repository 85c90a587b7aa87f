"""namePrefix / nameSuffix: rename resources, remembering their old ids.

The name goes through ``metadata/name``; any other field the namePrefix /
nameSuffix tables list (e.g. an ``x-kubernetes-identity`` field of a custom
kind from ``crds:``) gets the same prefix or suffix.
"""

from __future__ import annotations

from typing import Callable

from krmcheck.kustomize import fieldspec
from krmcheck.kustomize.fieldspec import FieldSpec
from krmcheck.kustomize.transformerconfig import TransformerConfig, default_config
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Scalar
from krmcheck.tree.origin import Origin
from krmcheck.kustomize.builtins.table import FieldEnv
from krmcheck.kustomize.kustomization import Kustomization

# kustomize never renames these kinds with a prefix or suffix.
SKIPPED_KINDS = frozenset({"CustomResourceDefinition", "APIService", "Namespace"})
_METADATA_NAME = ("metadata", "name")
# An empty table (a caller passing EMPTY) means "rename only": kustomize never
# runs these transformers without field specs.
_NAME_ONLY = (FieldSpec(_METADATA_NAME),)
Change = Callable[[str], str]


def apply(resources: list[Resource], prefix: str, suffix: str, origin: Origin,
          config: TransformerConfig | None = None) -> None:
    if not prefix and not suffix:
        return
    tables = config or default_config()
    for res in resources:
        if res.kind in SKIPPED_KINDS or not res.name:
            continue
        # kustomize runs the prefix transformer, then the suffix one; each
        # applies every spec of its table that selects the original kind.
        gvk = res.orig_id().gvk
        if prefix:
            _rename(res, [s for s in tables.name_prefix or _NAME_ONLY if s.matches(gvk)],
                    lambda v: prefix + v, origin, lambda: res.prefixes.insert(0, prefix))
        if suffix:
            _rename(res, [s for s in tables.name_suffix or _NAME_ONLY if s.matches(gvk)],
                    lambda v: v + suffix, origin, lambda: res.suffixes.append(suffix))


def _rename(res: Resource, specs: list[FieldSpec], change: Change, origin: Origin,
            record: Callable[[], None]) -> None:
    def setter(parent: Mapping, key: str) -> None:
        node = parent.items.get(key)
        if node is None:  # only a create: true spec gets here; kustomize makes the field ""
            parent.items[key] = Scalar(change(""), origin)
        elif isinstance(node, Scalar) and isinstance(node.value, str):
            node.set(change(node.value), origin)

    for spec in specs:
        if spec.path == _METADATA_NAME:
            record()
            res.remember_id()
            res.set_name(change(res.name), origin)
        else:
            fieldspec.visit(res, spec, setter, origin)


# --- the kustomization's fields (builtins/table.py) --------------------------

def from_kustomization(k: Kustomization, resources: list[Resource], env: FieldEnv) -> None:
    """``namePrefix:`` and ``nameSuffix:``, at the line of the first set."""
    prefix, suffix = k.string("namePrefix"), k.string("nameSuffix")
    given = prefix or suffix
    if given is not None:
        apply(resources, prefix[0] if prefix else "", suffix[0] if suffix else "", given[1], env.tables)
