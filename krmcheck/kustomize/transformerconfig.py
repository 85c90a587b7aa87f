"""The field-spec tables builtin transformers read, as one value.

kustomize keeps these in a TransformerConfig held by each accumulator
(api/internal/plugins/builtinconfig and accumulator/resaccumulator.go in
Kustomize v5.5.0): the defaults, plus the files a kustomization lists under
``configurations:``, plus what ``crds:`` files say through their OpenAPI
``x-kubernetes-*`` annotations. A child's config merges into its parent's
accumulator, so a base's custom specs also steer the overlay's transformers
and the final name-reference fix.

Merging adds specs not yet present; a spec already present (same path, the
new one's kind selecting the old) is kept once, and one that differs only in
``create`` is an error; each table is then sorted by kind. Because every
accumulator starts empty and merges the (sorted) defaults into itself, a
general spec sorted after a more specific one of the same path is dropped:
``namePrefix: [{path: metadata/name, kind: Foo}]`` in a configurations file
leaves only Foo objects renamed (checked with kubectl). Every value here is
sorted; ``normalized()`` gives the form an empty accumulator makes of it.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field, fields
from typing import Any, Iterable, NamedTuple

import yaml

from krmcheck.kustomize import fieldspec, order
from krmcheck.kustomize.fieldspec import FieldSpec
from krmcheck.kustomize.kustomization import Kustomization
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files, join
from krmcheck.kustomize.nameref import (
    NameBackRef, default_name_references, merge_name_references, parse_name_references)
from krmcheck.kustomize.openapi import SchemaChoice, Schemas, read_request
from krmcheck.resource.resid import Gvk
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Origin

Specs = tuple[FieldSpec, ...]

# Field-spec tables: attribute -> key in a configurations file.
_TABLES = {
    "name_prefix": "namePrefix",
    "name_suffix": "nameSuffix",
    "namespace": "namespace",
    "common_labels": "commonLabels",
    "labels": "labels",
    "template_labels": "templateLabels",
    "common_annotations": "commonAnnotations",
    "var_reference": "varReference",
    "images": "images",
    "replicas": "replicas",
}
_NAME_REFERENCE = "nameReference"
_SPEC_KEYS = frozenset({"path", "group", "version", "kind", "create"})
_BACKREF_KEYS = frozenset({"group", "version", "kind", "fieldSpecs"})


@dataclass(frozen=True)
class TransformerConfig:
    """Every field-spec table of one accumulator."""

    name_prefix: Specs = ()
    name_suffix: Specs = ()
    namespace: Specs = ()
    common_labels: Specs = ()
    labels: Specs = ()
    template_labels: Specs = ()
    common_annotations: Specs = ()
    var_reference: Specs = ()
    images: Specs = ()
    replicas: Specs = ()
    name_reference: tuple[NameBackRef, ...] = ()
    # Already in the form merging into an empty config gives (a shortcut).
    normal: bool = field(default=False, compare=False)

    def merge(self, other: "TransformerConfig") -> "TransformerConfig":
        """This config with ``other``'s specs added (kustomize's Merge)."""
        if other is self or other == EMPTY or other == self:
            return self
        if self == EMPTY:
            return other.normalized()
        changes: dict[str, Any] = {"normal": False}
        for name in _TABLES:
            mine, theirs = getattr(self, name), getattr(other, name)
            if theirs and theirs is not mine:
                changes[name] = _sorted(merge_specs(mine, theirs, _TABLES[name]))
        if other.name_reference and other.name_reference is not self.name_reference:
            changes["name_reference"] = _merge_backrefs(self.name_reference, other.name_reference)
        return TransformerConfig(**{f.name: changes.get(f.name, getattr(self, f.name))
                                    for f in fields(self)})

    def normalized(self) -> "TransformerConfig":
        if self.normal:
            return self
        tables: dict[str, Any] = {name: _normal(getattr(self, name), key)
                                  for name, key in _TABLES.items()}
        return TransformerConfig(name_reference=self.name_reference, normal=True, **tables)


EMPTY = TransformerConfig()


def merge_specs(have: Specs, new: Iterable[FieldSpec], table: str = "") -> Specs:
    """kustomize's FsSlice.MergeAll: add what is new, keep duplicates once."""
    out = list(have)
    for spec in new:
        same = next((s for s in out if s.path == spec.path
                     and spec.matches(Gvk(s.group, s.version, s.kind))), None)
        if same is None:
            out.append(spec)
        elif same.create != spec.create:
            where = f" in {table}" if table else ""
            raise BuildError(f"conflicting fieldspecs{where} for path '{'/'.join(spec.path)}'")
    return tuple(out)


_RANK = {k: i - len(order.FIRST) for i, k in enumerate(order.FIRST)}
_RANK.update({k: 1 + i for i, k in enumerate(order.LAST)})


def _sorted(specs: Iterable[FieldSpec]) -> Specs:
    """kustomize's sort of a table: by kind rank, then group_version_kind text."""
    return tuple(sorted(specs, key=lambda s: (_RANK.get(s.kind, 0),
                                              str(Gvk(s.group, s.version, s.kind)))))


def _normal(specs: Iterable[FieldSpec], table: str = "") -> Specs:
    """A table as an empty accumulator holds it after merging it in."""
    return _sorted(merge_specs((), _sorted(specs), table))


def _merge_backrefs(have: tuple[NameBackRef, ...], new: tuple[NameBackRef, ...]
                    ) -> tuple[NameBackRef, ...]:
    if not have:
        return new
    return merge_name_references(have, new)


@functools.lru_cache(maxsize=None)
def default_config() -> TransformerConfig:
    """kustomize's default tables, built once and shared."""
    tables = {name: _normal(fieldspec.defaults(key), key) for name, key in _TABLES.items()
              if name not in ("name_suffix", "labels")}
    # nameSuffix uses the namePrefix table; the labels table is empty.
    tables["name_suffix"] = tables["name_prefix"]
    return TransformerConfig(name_reference=default_name_references(), normal=True, **tables)


# --- a kustomization's own config --------------------------------------------------

def for_kustomization(k: Kustomization, files: Files, restrictor: str) -> TransformerConfig:
    """Defaults + ``configurations:`` files + ``crds:`` files of ``k``."""
    configs, crds = k.seq("configurations"), k.seq("crds")
    config = default_config()
    if configs:
        extra = EMPTY
        for entry in configs:
            extra = extra.merge(_from_file(k, entry, files, restrictor))
        config = config.merge(extra)
    for entry in crds:
        config = config.merge(_from_crd_file(k, entry, files, restrictor))
    return config


def _read(k: Kustomization, entry: Node, files: Files, restrictor: str, field: str
          ) -> tuple[str, str]:
    if not isinstance(entry, Scalar) or not isinstance(entry.value, str):
        raise BuildError(f"a {field} entry must be a file path", entry.origin)
    path = join(k.directory, entry.value)
    return files.read_text(path, entry.origin, within=(restrictor, k.directory)), files.display(path)


def _from_file(k: Kustomization, entry: Node, files: Files, restrictor: str) -> TransformerConfig:
    text, display = _read(k, entry, files, restrictor, "configurations")
    try:
        docs = load_documents(text, display, by="configurations")
    except LoadError as e:
        raise BuildError(e.message, Origin(e.path, e.line, e.col)) from None
    # kustomize decodes the first document alone: a null one is no
    # configuration, and documents after it are never read.
    first = docs[0] if docs else None
    if first is None or isinstance(first, Scalar) and first.value is None:
        return EMPTY
    if not isinstance(first, Mapping):
        raise BuildError(f"{display} must hold a map of field-spec tables", first.origin)
    return parse_config(first)


def parse_config(node: Mapping) -> TransformerConfig:
    """A ``configurations:`` file's map (strict, as kustomize reads it)."""
    keys = {v: k for k, v in _TABLES.items()}
    tables: dict[str, Any] = {}
    for key, value in node.items.items():
        if key == _NAME_REFERENCE:
            tables["name_reference"] = _parse_backrefs(value)
        elif key in keys:
            tables[keys[key]] = _normal(_parse_specs(value, key), key)
        else:
            raise BuildError(f"unknown field \"{key}\" in transformer configuration "
                             f"(known: {', '.join(sorted(list(keys) + [_NAME_REFERENCE]))})",
                             value.origin)
    return TransformerConfig(**tables)


def _items(node: Node, what: str) -> list[Mapping]:
    if isinstance(node, Scalar) and node.value is None:
        return []
    if not isinstance(node, Sequence):
        raise BuildError(f"{what} must be a list", node.origin)
    out = []
    for item in node.items:
        if not isinstance(item, Mapping):
            raise BuildError(f"an entry of {what} must be a map", item.origin)
        out.append(item)
    return out


def _check_keys(item: Mapping, allowed: frozenset[str], what: str) -> None:
    for key, value in item.items.items():
        if key not in allowed:
            raise BuildError(f"unknown field \"{key}\" in a {what} entry", value.origin)


def _parse_specs(node: Node, table: str) -> list[FieldSpec]:
    out = []
    for item in _items(node, table):
        _check_keys(item, _SPEC_KEYS, table)
        out.append(FieldSpec.from_dict(item.to_data()))
    return out


def _parse_backrefs(node: Node) -> tuple[NameBackRef, ...]:
    items = _items(node, _NAME_REFERENCE)
    for item in items:
        _check_keys(item, _BACKREF_KEYS, _NAME_REFERENCE)
        specs = item.items.get("fieldSpecs")
        for spec in _items(specs, "fieldSpecs") if specs is not None else []:
            _check_keys(spec, _SPEC_KEYS, "fieldSpecs")
    return merge_name_references((), parse_name_references(i.to_data() for i in items))


# --- crds: OpenAPI definitions of custom kinds ----------------------------------------

# kustomize's annotations on a property of a custom kind's definition
# (api/internal/accumulator/loadconfigfromcrds.go).
_X_ANNOTATION = "x-kubernetes-annotation"
_X_LABEL_SELECTOR = "x-kubernetes-label-selector"
_X_IDENTITY = "x-kubernetes-identity"
_X_REF_VERSION = "x-kubernetes-object-ref-api-version"
_X_REF_KIND = "x-kubernetes-object-ref-kind"
_X_REF_NAME_KEY = "x-kubernetes-object-ref-name-key"


def _from_crd_file(k: Kustomization, entry: Node, files: Files, restrictor: str
                   ) -> TransformerConfig:
    text, display = _read(k, entry, files, restrictor, "crds")
    try:
        api = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as e:
        raise BuildError(f"unable to parse open API definition from '{display}': {e}",
                         entry.origin) from None
    if not isinstance(api, dict):
        raise BuildError(f"unable to parse open API definition from '{display}': not a map",
                         entry.origin)
    return crd_config(api)


def crd_config(api: dict[str, Any]) -> TransformerConfig:
    """The specs a map of type name -> {Schema, Dependencies} implies: one
    entry per type that looks like a Kubernetes object (kind, apiVersion and
    metadata properties), its kind being the type name's last dotted part."""
    found = _CrdSpecs(api)
    for name in sorted(api):
        if _looks_like_object(_properties(api, name)):
            found.walk(Gvk("", "", name.rsplit(".", 1)[-1]), name, (), set())
    return found.config()


def _properties(api: dict[str, Any], name: str) -> dict[str, Any]:
    entry = api.get(name)
    schema = entry.get("Schema") if isinstance(entry, dict) else None
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _looks_like_object(props: dict[str, Any]) -> bool:
    return all(k in props for k in ("kind", "apiVersion", "metadata"))


class _CrdSpecs:
    """Collects the specs while walking definitions through their $refs."""

    def __init__(self, api: dict[str, Any]) -> None:
        self.api = api
        self.annotations: list[FieldSpec] = []
        self.labels: list[FieldSpec] = []
        self.identity: list[FieldSpec] = []
        self.refs: list[NameBackRef] = []

    def walk(self, gvk: Gvk, name: str, path: tuple[str, ...], seen: set[str]) -> None:
        if name in seen:  # a self-referencing type would never end
            return
        for prop, schema in sorted(_properties(self.api, name).items()):
            if isinstance(schema, dict):
                self._property(gvk, path + (prop,), schema, seen | {name})

    def _property(self, gvk: Gvk, path: tuple[str, ...], schema: dict[str, Any],
                  seen: set[str]) -> None:
        spec = FieldSpec(path, gvk.group, gvk.version, gvk.kind)
        if isinstance(schema.get(_X_ANNOTATION), str):
            self.annotations.append(spec)
        if isinstance(schema.get(_X_LABEL_SELECTOR), str):
            self.labels.append(spec)
        if isinstance(schema.get(_X_IDENTITY), str):
            self.identity.append(spec)
        version, kind = schema.get(_X_REF_VERSION), schema.get(_X_REF_KIND)
        if isinstance(version, str) and isinstance(kind, str):
            key = schema.get(_X_REF_NAME_KEY)
            key = key if isinstance(key, str) else "name"
            self.refs.append(NameBackRef(Gvk("", version, kind),
                                         (FieldSpec(path + (key,), gvk.group, gvk.version, gvk.kind),)))
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref:
            self.walk(gvk, ref, path, seen)

    def config(self) -> TransformerConfig:
        return TransformerConfig(
            common_annotations=_normal(self.annotations),
            common_labels=_normal(self.labels),
            name_prefix=_normal(self.identity),
            name_reference=merge_name_references((), self.refs) if self.refs else ())


# --- the build's accumulator config ---------------------------------------------------

class Entered(NamedTuple):
    """What ``Tracker.enter`` saved: the enclosing accumulator's config and
    whether a schema had been chosen before this kustomization."""

    outer: TransformerConfig
    chosen_before: bool


@dataclass
class Tracker:
    """The transformer config of the accumulator being filled and the schema
    choice of the build in progress; shared by a Builder and its sub-builders.

    Per kustomization directory it also remembers what that subtree
    contributed (its config, and the schema it chose), so a base taken from
    the render cache still passes its configurations up to the overlay.
    """

    config: TransformerConfig = EMPTY
    schemas: SchemaChoice = field(default_factory=SchemaChoice)
    _subtrees: dict[str, tuple[TransformerConfig, Schemas | None]] = field(default_factory=dict)

    def start_build(self) -> SchemaChoice:
        self.config, self.schemas = EMPTY, SchemaChoice()
        return self.schemas

    def cache_key(self, real: str) -> str:
        """A rendered directory depends on the schemas in effect when it is entered."""
        return f"{real}\n{self.schemas.schemas.key}"

    def reuse(self, key: str) -> bool:
        """Replay a cached subtree's contribution; False when not cached."""
        done = self._subtrees.get(key)
        if done is None:
            return False
        self.config = self.config.merge(done[0])
        self.schemas.adopt(done[1])
        return True

    def enter(self, k: Kustomization, files: Files, restrictor: str, top_level: bool) -> Entered:
        """Start a kustomization's own accumulator (components share their parent's)."""
        entered = Entered(self.config, self.schemas.chosen)
        self.offer_schema(k, files, restrictor, top_level)
        self.config = EMPTY
        return entered

    def offer_schema(self, k: Kustomization, files: Files, restrictor: str,
                     top_level: bool = False) -> None:
        self.schemas.offer(read_request(k, files, restrictor), top_level)

    def add_own(self, k: Kustomization, files: Files, restrictor: str) -> None:
        """Merge ``k``'s defaults, configurations and crds (after its resources)."""
        try:
            self.config = self.config.merge(for_kustomization(k, files, restrictor))
        except BuildError as e:
            raise e.add_context("merging configurations and crds") from None

    def leave(self, entered: Entered, key: str) -> None:
        """The kustomization is built: its config joins the enclosing one."""
        picked = self.schemas.schemas if self.schemas.chosen and not entered.chosen_before else None
        self._subtrees[key] = (self.config, picked)
        self.config = entered.outer.merge(self.config)
