"""commonLabels, labels and commonAnnotations: add key/value pairs to the
metadata (and, per the field-spec tables, to selectors and templates)."""

from __future__ import annotations

from krmcheck.kustomize import fieldspec
from krmcheck.kustomize.fieldspec import FieldSpec
from krmcheck.kustomize.transformerconfig import TransformerConfig, default_config
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Scalar
from krmcheck.tree.origin import Origin
from krmcheck.kustomize.builtins.table import FieldEnv
from krmcheck.kustomize.kustomization import Kustomization

LABELS_ENTRY_FIELDS = frozenset({"pairs", "includeSelectors", "includeTemplates", "fields"})
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


def common_labels(resources: list[Resource], node: Mapping,
                  config: TransformerConfig | None = None) -> None:
    apply(resources, pairs(node), (config or default_config()).common_labels, node.origin)


def common_annotations(resources: list[Resource], node: Mapping,
                       config: TransformerConfig | None = None) -> None:
    apply(resources, pairs(node), (config or default_config()).common_annotations, node.origin)


def labels_entry(resources: list[Resource], entry: Mapping,
                 config: TransformerConfig | None = None) -> None:
    """One item of ``labels:`` (pairs, includeSelectors, includeTemplates,
    fields), plus the ``labels`` table of the transformer config."""
    for key, node in entry.items.items():
        if key not in LABELS_ENTRY_FIELDS:
            raise BuildError(f"invalid Kustomization: unknown field \"{key}\" in a labels entry",
                             node.origin)
    pnode = entry.mapping("pairs")
    if pnode is None:
        return
    tables = config or default_config()
    specs: list[FieldSpec] = []
    fields = entry.sequence("fields")
    if fields is not None:
        specs += [FieldSpec.from_dict(f.to_data()) for f in fields if isinstance(f, Mapping)]
    specs += tables.labels
    if entry.value("includeSelectors") is True:
        specs += tables.common_labels
    else:
        if entry.value("includeTemplates") is True:
            specs += tables.template_labels
        specs.append(METADATA_LABELS)
    apply(resources, pairs(pnode), specs, entry.origin)


# --- the kustomization's fields (builtins/table.py) --------------------------

def labels_fields(k: Kustomization, resources: list[Resource], env: FieldEnv) -> None:
    """``labels:`` entries, then ``commonLabels:``."""
    for entry in k.seq("labels"):
        if isinstance(entry, Mapping):
            labels_entry(resources, entry, env.tables)
    common = k.mapping("commonLabels")
    if common is not None:
        common_labels(resources, common, env.tables)


def annotations_field(k: Kustomization, resources: list[Resource], env: FieldEnv) -> None:
    """``commonAnnotations:``."""
    annotations = k.mapping("commonAnnotations")
    if annotations is not None:
        common_annotations(resources, annotations, env.tables)
