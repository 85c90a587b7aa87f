"""Patch metadata of built-in kinds, read from packaged Kubernetes schemas.

Strategic merge needs to know, for each list of a built-in kind, whether it
merges element by element and on which key (``containers`` by ``name``,
``ports`` by ``containerPort``...). Kubernetes publishes that in its OpenAPI
definitions as ``x-kubernetes-patch-strategy`` / ``x-kubernetes-patch-merge-key``
(and ``x-kubernetes-list-map-keys`` for lists keyed by several fields). The
``kubernetes-validate`` package ships those definitions; we read them from
there instead of keeping a hand-typed table.

Kinds with no definition (CRDs) have no schema: kustomize then replaces their
lists wholesale, and so do we, unless a kustomization's ``openapi:`` field
gives a schema for them (``SchemaChoice``; see kyaml/openapi.SetSchema and
kusttarget.accumulateDirectory in Kustomize v5.5.0). A ``path`` that is an
http(s) URL is downloaded, as kustomize's file loader does, under the rules
of all remote content (:mod:`krmcheck.kustomize.remote`: only with
``--network``, else :class:`NeedsNetwork`), then read as a local file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterator, NamedTuple

import yaml

from krmcheck.kustomize import remote
from krmcheck.kustomize.kustomization import Kustomization
from krmcheck.kustomize.repospec import is_http_url
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files, join
from krmcheck.resource.resid import Gvk
from krmcheck.schemas import builtin as builtin_schemas
from krmcheck.tree.load import FAST_LOADER
from krmcheck.tree.node import Scalar
from krmcheck.tree.origin import Origin

Schema = dict[str, Any]

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


def _definitions(version: str) -> dict[str, Schema]:
    doc = builtin_schemas.definitions(version)
    return doc.get("$defs") or doc.get("definitions") or {}


# Groups whose kinds moved elsewhere before the bundled schemas begin.
_MOVED_GROUPS = {"extensions": ("apps", "networking.k8s.io", "policy")}


def _kind_index(definitions: dict[str, Schema]) -> dict[Gvk, str]:
    """Definition name for every group/version/kind the definitions declare."""
    index: dict[Gvk, str] = {}
    for name, schema in definitions.items():
        gvks = schema.get(_GVK_EXT) if isinstance(schema, dict) else None
        for gvk in gvks if isinstance(gvks, list) else ():
            if not isinstance(gvk, dict):
                continue
            key = Gvk(str(gvk.get("group") or ""), str(gvk.get("version") or ""),
                      str(gvk.get("kind") or ""))
            # Several definitions can claim a kind (e.g. DeleteOptions for
            # every group); the first, full one wins.
            index.setdefault(key, name)
    return index


def _is_array(schema: Schema) -> bool:
    kind = schema.get("type")
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


_UNKNOWN = object()


class Schemas:
    """One set of OpenAPI definitions strategic merge reads patch metadata
    from: the bundled Kubernetes ones, or a kustomization's ``openapi:``
    schema. Lookups are memoised per instance; share instances."""

    def __init__(self, definitions: dict[str, Schema], key: str) -> None:
        self.definitions = definitions
        self.key = key  # names the schema set (cache keys of rendered bases)
        self._kinds = _kind_index(definitions)
        self._fields: dict[tuple[Gvk, tuple[str, ...]], Schema | None] = {}
        self._metas: dict[tuple[Gvk, tuple[str, ...]], PatchMeta] = {}

    def _kind_definition(self, gvk: Gvk) -> str | None:
        """The definition of a kind; for an API version the schemas no longer
        carry (apps/v1beta1, extensions/v1beta1...) the same kind of a served
        version, since kustomize's own older schemas still know them."""
        if gvk in self._kinds:
            return self._kinds[gvk]
        for group in (gvk.group,) + _MOVED_GROUPS.get(gvk.group, ()):
            for known, name in self._kinds.items():
                if known.group == group and known.kind == gvk.kind:
                    return name
        return None

    def _resolve(self, schema: Schema) -> Schema:
        seen = 0
        while "$ref" in schema and seen < 32:
            name = str(schema["$ref"]).rsplit("/", 1)[-1]
            schema = self.definitions.get(name) or {}
            seen += 1
        return schema

    def _child(self, schema: Schema, key: str) -> Schema | None:
        """The (unresolved) schema of field ``key`` of an object schema; list
        levels are stepped through, as paths carry no indexes."""
        schema = self._resolve(schema)
        if _is_array(schema) and isinstance(schema.get("items"), dict):
            schema = self._resolve(schema["items"])
        props = schema.get("properties") or {}
        if key in props:
            return props[key]
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return extra
        return None

    def field_schema(self, gvk: Gvk, path: tuple[str, ...]) -> Schema | None:
        """The schema at ``path`` (mapping keys only) of a kind, or None when
        the kind or the field is unknown."""
        found = self._fields.get((gvk, path), _UNKNOWN)
        if found is not _UNKNOWN:
            return found  # type: ignore[return-value]
        if not path:
            name = self._kind_definition(gvk)
            result = self.definitions.get(name) if name else None
        else:
            parent = self.field_schema(gvk, path[:-1])
            result = None if parent is None else self._child(parent, path[-1])
        self._fields[(gvk, path)] = result
        return result

    def patch_meta(self, gvk: Gvk, path: tuple[str, ...]) -> PatchMeta:
        meta = self._metas.get((gvk, path))
        if meta is None:
            meta = _meta_of(self.field_schema(gvk, path))
            self._metas[(gvk, path)] = meta
        return meta


def _meta_of(schema: Schema | None) -> PatchMeta:
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


@lru_cache(maxsize=None)
def builtin(version: str = "") -> Schemas:
    """The bundled Kubernetes schemas (newest by default), shared."""
    version = version or builtin_schemas.versions()[-1]
    return Schemas(_definitions(version), f"builtin:{version}")


# The schemas of the build in progress. kustomize keeps one process-wide
# schema (kyaml/openapi.SetSchema); a context variable keeps ours per build
# and per thread, so parallel builds of different roots do not mix.
_ACTIVE: ContextVar["SchemaChoice | None"] = ContextVar("krmcheck_openapi", default=None)

# How the build in progress fetches a schema URL: (url, what, origin) -> body,
# the builder's own (its per-run cache and its --network), as for generator
# inputs (remote.fetch_file).
Fetch = Callable[[str, str, Origin], bytes]
_FETCH: ContextVar["Fetch | None"] = ContextVar("krmcheck_openapi_fetch", default=None)


def current() -> Schemas:
    """The schemas strategic merge reads now."""
    choice = _ACTIVE.get()
    return choice.schemas if choice is not None else builtin()


def field_schema(gvk: Gvk, path: tuple[str, ...], version: str = "") -> Schema | None:
    """The schema at ``path`` of a kind in the current (or a bundled) schema set."""
    return (builtin(version) if version else current()).field_schema(gvk, path)


def has_schema(gvk: Gvk, path: tuple[str, ...] = ()) -> bool:
    """Whether the current schemas describe this field of this kind."""
    return current().field_schema(gvk, path) is not None


def patch_meta(gvk: Gvk, path: tuple[str, ...]) -> PatchMeta:
    """Patch strategy and merge key of the field at ``path`` of a kind;
    empty for unknown kinds and fields (their lists are replaced)."""
    return current().patch_meta(gvk, path)


# --- the ``openapi:`` field ----------------------------------------------------------

# The only schema version Kustomize v5.5.0 has built in (its default); asking
# for it means "the built-in schemas", which for us are the bundled ones.
KUSTOMIZE_VERSIONS = ("v1.21.2",)


@dataclass(frozen=True)
class SchemaRequest:
    """A kustomization's ``openapi:`` field, its file already read."""

    version: str
    text: str | None  # the schema file's content, when ``path`` is given
    display: str  # the schema file, repo-relative
    origin: Origin


def read_request(k: Kustomization, files: Files, restrictor: str) -> SchemaRequest | None:
    """The kustomization's ``openapi:`` request. Like kustomize, the file is
    read even when an earlier kustomization's schema will win."""
    node = k.mapping("openapi")
    if node is None:
        return None
    version = node.value("version")
    path_node = node.items.get("path")
    text, display = None, ""
    if isinstance(path_node, Scalar) and path_node.value not in (None, ""):
        rel = path_node.as_string()
        if is_http_url(rel):  # kustomize's loader fetches it; no load restrictor applies
            text, display = _fetch_text(rel, path_node.origin), rel
        else:
            path = join(k.directory, rel)
            display = files.display(path)
            if files.kind(path, path_node.origin) == "missing":
                raise BuildError(f"openapi path '{display}': no such file", path_node.origin)
            text = files.read_text(path, path_node.origin, within=(restrictor, k.directory))
    return SchemaRequest("" if version is None else str(version), text, display, node.origin)


REMOTE_WHAT = "openapi schema"  # names a schema URL in messages ("not checked: openapi schema '...'")


def _fetch_text(url: str, origin: Origin) -> str:
    """The schema at ``url`` as text: downloaded with the network allowed
    (once per run), else :class:`NeedsNetwork` (the root is not checked)."""
    fetch = _FETCH.get()
    if fetch is None:  # outside a builder's build: only KRMCHECK_NETWORK allows it
        body = remote.fetch_file(remote.Remotes(), url, REMOTE_WHAT, origin, False)
    else:
        body = fetch(url, REMOTE_WHAT, origin)
    try:
        return body.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError as e:
        raise BuildError(f"{REMOTE_WHAT} '{url}': invalid UTF-8 (byte 0x{body[e.start]:02x})",
                         origin) from None


@dataclass
class SchemaChoice:
    """Which schemas strategic merge reads during one build.

    Mirrors kyaml's SetSchema: the top kustomization's ``openapi:`` field
    wins, otherwise the first one met while accumulating (resources and
    components, depth first); it takes effect from that point of the build.
    A schema file given at the top replaces the built-in schemas entirely
    (built-in kinds then lose their merge keys, checked with kubectl); one
    given lower down is laid over them, since kustomize has usually parsed
    the built-in schemas by then.
    """

    schemas: Schemas = field(default_factory=builtin)
    chosen: bool = False

    def offer(self, request: SchemaRequest | None, top_level: bool) -> None:
        if request is None or self.chosen:
            return
        if request.text is not None:
            if request.version:
                raise BuildError("openapi: builtin version and custom schema provided, cannot use both",
                                 request.origin)
            self.schemas = _custom(request.text, request.display, not top_level)
            self.chosen = True
        elif request.version:
            if request.version not in KUSTOMIZE_VERSIONS:
                raise BuildError(f"openapi: the specified OpenAPI version '{request.version}' is not "
                                 f"built in (only {', '.join(KUSTOMIZE_VERSIONS)})", request.origin)
            self.schemas = builtin()
            self.chosen = True

    def adopt(self, schemas: Schemas | None) -> None:
        """Take the schemas a (cached) sub-kustomization chose, if none yet."""
        if schemas is not None and not self.chosen:
            self.schemas, self.chosen = schemas, True


@lru_cache(maxsize=64)
def _custom(text: str, display: str, over_builtin: bool) -> Schemas:
    definitions = _parse_definitions(text, display)
    if over_builtin:
        # kustomize parses the built-in schemas after the custom one here,
        # so built-in definitions of the same name win.
        definitions = {**definitions, **builtin().definitions}
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return Schemas(definitions, f"custom:{display}:{digest}:{int(over_builtin)}")


def _parse_definitions(text: str, display: str) -> dict[str, Schema]:
    try:
        doc = json.loads(text) if text.lstrip().startswith("{") else yaml.load(text, Loader=FAST_LOADER)
    except (ValueError, yaml.YAMLError) as e:
        raise BuildError(f"invalid schema file {display}: {e}", Origin(display, 1, 1)) from None
    if not isinstance(doc, dict):
        raise BuildError(f"invalid schema file {display}: not a map", Origin(display, 1, 1))
    defs = doc.get("definitions") or {}
    if not isinstance(defs, dict):
        raise BuildError(f"invalid schema file {display}: definitions must be a map",
                         Origin(display, 1, 1))
    return defs




@contextmanager
def using(choice: SchemaChoice, fetch: Fetch | None = None) -> Iterator[SchemaChoice]:
    """Make ``choice`` the schemas of the build running in this context;
    ``fetch`` downloads the schema URLs its kustomizations name."""
    token, fetch_token = _ACTIVE.set(choice), _FETCH.set(fetch)
    try:
        yield choice
    finally:
        _FETCH.reset(fetch_token)
        _ACTIVE.reset(token)
