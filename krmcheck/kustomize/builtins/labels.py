"""commonLabels, labels and commonAnnotations: add key/value pairs to the
metadata (and, per the field-spec tables, to selectors and templates)."""

from __future__ import annotations

from krmcheck.kustomize import fieldspec
from krmcheck.kustomize.fieldspec import FieldSpec
from krmcheck.kustomize.resource import Resource
from krmcheck.tree.node import Mapping, Scalar
from krmcheck.tree.origin import Origin

METADATA_LABELS = FieldSpec(("metadata", "labels"), create=True)


def pairs(node: Mapping) -> list[tuple[str, str, Origin]]:
    """The pairs of a kustomization map, values as kustomize's strings."""
    out = []
    for key, value in node.items.items():
        text = value.as_string() if isinstance(value, Scalar) else ""
        out.append((key, text, value.origin))
    return out


def apply(resources: list[Resource], kv: list[tuple[str, str, Origin]],
          specs: tuple[FieldSpec, ...] | list[FieldSpec], origin: Origin) -> None:
    """Set every pair in every field the specs reach."""
    if not kv:
        return

    def add(parent: Mapping, key: str) -> None:
        target = parent.items.get(key)
        if not isinstance(target, Mapping):
            if isinstance(target, Scalar) and target.value is not None:
                return
            target = Mapping({}, origin)
            parent.items[key] = target
        for k, v, where in kv:
            cur = target.items.get(k)
            if isinstance(cur, Scalar):
                if cur.value != v or cur.text is not None:
                    cur.set(v, where)
            else:
                target.items[k] = Scalar(v, where)

    for res in resources:
        for spec in _dedupe(specs):
            fieldspec.visit(res, spec, add, origin)


def _dedupe(specs: tuple[FieldSpec, ...] | list[FieldSpec]) -> list[FieldSpec]:
    seen: set[FieldSpec] = set()
    out = []
    for s in specs:
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def common_labels(resources: list[Resource], node: Mapping) -> None:
    apply(resources, pairs(node), fieldspec.defaults("commonLabels"), node.origin)


def common_annotations(resources: list[Resource], node: Mapping) -> None:
    apply(resources, pairs(node), fieldspec.defaults("commonAnnotations"), node.origin)


def labels_entry(resources: list[Resource], entry: Mapping) -> None:
    """One item of ``labels:`` (pairs, includeSelectors, includeTemplates, fields)."""
    pnode = entry.mapping("pairs")
    if pnode is None:
        return
    specs: list[FieldSpec] = []
    fields = entry.sequence("fields")
    if fields is not None:
        specs += [FieldSpec.from_dict(f.to_data()) for f in fields if isinstance(f, Mapping)]
    if entry.value("includeSelectors") is True:
        specs += list(fieldspec.defaults("commonLabels"))
    else:
        specs.append(METADATA_LABELS)
        if entry.value("includeTemplates") is True:
            specs += list(fieldspec.defaults("templateLabels"))
    apply(resources, pairs(pnode), specs, entry.origin)
