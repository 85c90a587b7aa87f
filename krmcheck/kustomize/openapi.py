"""Patch metadata of built-in kinds, read from packaged Kubernetes schemas.

Strategic merge needs to know, for each list of a built-in kind, whether it
merges element by element and on which key (``containers`` by ``name``,
``ports`` by ``containerPort``...). Kubernetes publishes that in its OpenAPI
definitions as ``x-kubernetes-patch-strategy`` / ``x-kubernetes-patch-merge-key``
(and ``x-kubernetes-list-map-keys`` for lists keyed by several fields). The
``kubernetes-validate`` package ships those definitions; we read them from
there instead of keeping a hand-typed table.

Kinds with no definition (CRDs) have no schema: kustomize then replaces their
lists wholesale, and so do we.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any, NamedTuple

from krmcheck.kustomize.resource import Gvk

Schema = dict[str, Any]

_PACKAGE = "kubernetes_validate"
_SCHEMA_DIR = "kubernetes-json-schema"
_VERSION_DIR = re.compile(r"^v(\d+)\.(\d+)\.(\d+)-local$")
_GVK_EXT = "x-kubernetes-group-version-kind"
_STRATEGY_EXT = "x-kubernetes-patch-strategy"
_MERGE_KEY_EXT = "x-kubernetes-patch-merge-key"
_MAP_KEYS_EXT = "x-kubernetes-list-map-keys"


class PatchMeta(NamedTuple):
    """How strategic merge treats the list (or map) at one field path.

    ``strategy`` is the raw extension ('merge', 'replace', 'retainKeys',
    'merge,retainKeys' or ''); ``merge_key`` the single merge key;
    ``list_keys`` every key that identifies an element (kustomize matches
    on all of ``x-kubernetes-list-map-keys`` when the list has them, so
    ports are told apart by port *and* protocol).
    """

    strategy: str
    merge_key: str
    list_keys: tuple[str, ...] = ()

    @property
    def merges(self) -> bool:
        """True when elements are merged rather than the list replaced."""
        return "merge" in self.strategy.split(",")


NO_META = PatchMeta("", "", ())


def schema_versions() -> list[str]:
    """The bundled schema directories, oldest first (``v1.32.0-local``...)."""
    root = resources.files(_PACKAGE).joinpath(_SCHEMA_DIR)
    found = []
    for entry in root.iterdir():
        m = _VERSION_DIR.match(entry.name)
        if m:
            found.append((tuple(int(g) for g in m.groups()), entry.name))
    return [name for _, name in sorted(found)]


@lru_cache(maxsize=None)
def _definitions(version: str) -> dict[str, Schema]:
    path = resources.files(_PACKAGE).joinpath(_SCHEMA_DIR, version, "_definitions.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    return doc.get("$defs") or doc.get("definitions") or {}


@lru_cache(maxsize=None)
def _default_version() -> str:
    versions = schema_versions()
    if not versions:
        raise RuntimeError("kubernetes-validate ships no schemas")
    return versions[-1]


@lru_cache(maxsize=None)
def _kinds(version: str) -> dict[Gvk, str]:
    """Definition name for every group/version/kind the schemas declare."""
    index: dict[Gvk, str] = {}
    for name, schema in _definitions(version).items():
        for gvk in schema.get(_GVK_EXT) or ():
            key = Gvk(gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))
            # Several definitions can claim a kind (e.g. DeleteOptions for
            # every group); the first, full one wins.
            index.setdefault(key, name)
    return index


# Groups whose kinds moved elsewhere before the bundled schemas begin.
_MOVED_GROUPS = {"extensions": ("apps", "networking.k8s.io", "policy")}


def _kind_definition(gvk: Gvk, version: str) -> str | None:
    """The definition of a kind; for an API version the bundled schemas no
    longer carry (apps/v1beta1, extensions/v1beta1...) the same kind of a
    served version, since kustomize's own older schemas still know them."""
    kinds = _kinds(version)
    if gvk in kinds:
        return kinds[gvk]
    for group in (gvk.group,) + _MOVED_GROUPS.get(gvk.group, ()):
        for known, name in kinds.items():
            if known.group == group and known.kind == gvk.kind:
                return name
    return None


def _resolve(schema: Schema, version: str) -> Schema:
    defs = _definitions(version)
    seen = 0
    while "$ref" in schema and seen < 32:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = defs.get(name, {})
        seen += 1
    return schema


def _is_array(schema: Schema) -> bool:
    kind = schema.get("type")
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


def _child(schema: Schema, key: str, version: str) -> Schema | None:
    """The (unresolved) schema of field ``key`` of an object schema; list
    levels are stepped through, as paths carry no indexes."""
    schema = _resolve(schema, version)
    if _is_array(schema) and isinstance(schema.get("items"), dict):
        schema = _resolve(schema["items"], version)
    props = schema.get("properties") or {}
    if key in props:
        return props[key]
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        return extra
    return None


@lru_cache(maxsize=65536)
def field_schema(gvk: Gvk, path: tuple[str, ...], version: str = "") -> Schema | None:
    """The schema at ``path`` (mapping keys only) of a kind, or None when the
    kind or the field is unknown."""
    version = version or _default_version()
    if not path:
        name = _kind_definition(gvk, version)
        return _definitions(version)[name] if name else None
    parent = field_schema(gvk, path[:-1], version)
    if parent is None:
        return None
    return _child(parent, path[-1], version)


def has_schema(gvk: Gvk, path: tuple[str, ...] = ()) -> bool:
    """Whether the schemas describe this field of this kind."""
    return field_schema(gvk, path) is not None


@lru_cache(maxsize=65536)
def patch_meta(gvk: Gvk, path: tuple[str, ...]) -> PatchMeta:
    """Patch strategy and merge key of the field at ``path`` of a built-in kind;
    empty for unknown kinds and fields (their lists are replaced)."""
    schema = field_schema(gvk, path)
    if schema is None:
        return NO_META
    # The extensions sit on the property itself, next to any $ref.
    strategy = str(schema.get(_STRATEGY_EXT, ""))
    merge_key = str(schema.get(_MERGE_KEY_EXT, ""))
    if not strategy:
        return PatchMeta("", merge_key, ())
    map_keys = schema.get(_MAP_KEYS_EXT)
    if map_keys:
        keys = tuple(str(k) for k in map_keys)
    else:
        keys = (merge_key,) if merge_key else ()
    return PatchMeta(strategy, merge_key, keys)
