"""The output order: the top kustomization's ``sortOptions``.

``legacy`` (kubectl's default) puts kinds in dependency order, tunable with
``legacySortOptions: {orderFirst, orderLast}``; ``fifo`` keeps the order in
which the build accumulated the resources. Only the kustomization being
built counts: kustomize sorts once, after the whole build, and never reads
the ``sortOptions`` of the kustomizations it includes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import Gvk
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence

FIRST = ("Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition",
         "ServiceAccount", "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding",
         "ClusterRoleBinding", "ConfigMap", "Secret", "Endpoints", "Service", "LimitRange",
         "PriorityClass", "PersistentVolume", "PersistentVolumeClaim", "Deployment",
         "StatefulSet", "CronJob", "PodDisruptionBudget")
LAST = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
LEGACY, FIFO = "legacy", "fifo"


@dataclass(frozen=True)
class SortOptions:
    order: str = LEGACY
    first: tuple[str, ...] = FIRST
    last: tuple[str, ...] = LAST


def options_of(node: Node | None) -> SortOptions:
    """Read a ``sortOptions`` field; absent or null means kubectl's default."""
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return SortOptions()
    if not isinstance(node, Mapping):
        raise BuildError("sortOptions must be a map", node.origin)
    order = node.value("order")
    if order not in (FIFO, LEGACY):
        raise BuildError(f"the field 'sortOptions.order' must be one of [{FIFO}, {LEGACY}]",
                         node.items.get("order", node).origin)
    legacy_node = node.items.get("legacySortOptions")
    if legacy_node is None or (isinstance(legacy_node, Scalar) and legacy_node.value is None):
        return SortOptions(str(order))
    if order == FIFO:
        raise BuildError("the field 'sortOptions.legacySortOptions' is set but the selected "
                         "sort order is 'fifo', not 'legacy'", legacy_node.origin)
    if not isinstance(legacy_node, Mapping):
        raise BuildError("sortOptions.legacySortOptions must be a map", legacy_node.origin)
    # Given legacySortOptions replace the default lists, even when empty.
    return SortOptions(LEGACY, _kinds(legacy_node, "orderFirst"), _kinds(legacy_node, "orderLast"))


def _kinds(node: Mapping, key: str) -> tuple[str, ...]:
    value = node.items.get(key)
    if value is None or (isinstance(value, Scalar) and value.value is None):
        return ()
    if not isinstance(value, Sequence) or not all(isinstance(i, Scalar) for i in value.items):
        raise BuildError(f"sortOptions.legacySortOptions.{key} must be a list of kinds", value.origin)
    return tuple(i.as_string() for i in value.items if isinstance(i, Scalar))


def apply(resources: list[Resource], options: SortOptions) -> list[Resource]:
    if options.order == FIFO:
        return list(resources)
    return sort_legacy(resources, options.first, options.last)


def legacy(resources: list[Resource]) -> list[Resource]:
    return sort_legacy(resources, FIRST, LAST)


def sort_legacy(resources: list[Resource], first: tuple[str, ...],
                last: tuple[str, ...]) -> list[Resource]:
    # kustomize ranks orderFirst kinds below zero, orderLast kinds above it
    # and every other kind at zero.
    rank = {k: i - len(first) for i, k in enumerate(first)}
    rank.update({k: i + 1 for i, k in enumerate(last)})
    keyed = [(res.gvk, _id_text(res), res) for res in resources]

    def compare(a: tuple[Gvk, str, Resource], b: tuple[Gvk, str, Resource]) -> int:
        return _compare(a[:2], b[:2], rank)

    keyed.sort(key=functools.cmp_to_key(compare))
    return [res for _, _, res in keyed]


def _compare(a: tuple[Gvk, str], b: tuple[Gvk, str], rank: dict[str, int]) -> int:
    (gvk_a, id_a), (gvk_b, id_b) = a, b
    if gvk_a != gvk_b:
        return -1 if _gvk_less(gvk_a, gvk_b, rank) else 1
    return (id_a > id_b) - (id_a < id_b)


def _gvk_less(a: Gvk, b: Gvk, rank: dict[str, int]) -> bool:
    ra, rb = rank.get(a.kind, 0), rank.get(b.kind, 0)
    if ra != rb:
        return ra < rb
    if a.kind == b.kind == "Namespace" and (not a.group or not b.group):
        # kustomize puts a core Namespace after other groups' Namespace kinds.
        return str(a) > str(b)
    return str(a) < str(b)


def _id_text(res: Resource) -> str:
    """kustomize compares ids as one "gvk|namespace|name" string, so "a|x"
    sorts after "a-b|y"; empty parts become "~X" and "~N"."""
    return f"{res.gvk}|{res.namespace or '~X'}|{res.name or '~N'}"
