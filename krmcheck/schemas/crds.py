"""CustomResourceDefinitions as schemas: each served version's
``openAPIV3Schema`` turned into a JSON schema the validators compile.

A CRD's schema is an OpenAPI v3.0 "structural schema": close to JSON Schema
draft 4 (``exclusiveMinimum`` is a boolean), with Kubernetes extensions
that change what a value may be. Converted as the apiextensions API server
reads them (``pkg/apiserver/schema``: pruning, objectmeta, defaulting):

- ``nullable: true``: ``null`` is allowed too (a ``null`` elsewhere is
  pruned before validation: :mod:`krmcheck.schemas.defaults`);
- ``x-kubernetes-int-or-string``: the type is "integer or string", whatever
  ``anyOf``/``allOf`` the node also has (the server sets the type so);
- ``x-kubernetes-embedded-resource``: ``apiVersion`` and ``kind`` are
  required, non-empty strings (``kind`` a DNS-1035 label but for case, the
  ``apiVersion`` at most one ``/``), and ``metadata`` is an ObjectMeta,
  whatever the node's own ``required`` says;
- the root is a resource too: it always knows ``apiVersion``, ``kind`` and
  ``metadata``, which is an ObjectMeta plus what the CRD says of it;
- ``x-kubernetes-list-type: set``: items are unique (``map``, unique by
  ``x-kubernetes-list-map-keys``, is checked by :mod:`krmcheck.schemas.lists`).

Unknown fields. The server prunes a field its schema does not know, and
``kubectl apply`` (strict field validation, its default) refuses the object
instead. The converted schema closes (``additionalProperties: false``) every
object the server prunes: one with ``properties`` (and, in a CRD, a bare
``type: object``), unless it sets ``x-kubernetes-preserve-unknown-fields``,
is the item of a list that does (the server keeps those items' unknown
fields too), or has a schema for ``additionalProperties``. ``apiVersion``,
``kind`` and ``metadata`` of a resource are never pruned by the CRD's
schema (metadata is decoded as an ObjectMeta: its own unknown fields are
unknown), nor is anything under ``allOf``/``anyOf``/``oneOf``/``not``, which
the server's pruning does not read. The schema validator reports what a
closed object rejects as unknown fields (a warning, an error with
``--strict``). A CRD whose ``spec.preserveUnknownFields`` is true (the
v1beta1 default) prunes nothing.

Schemas from a location or the cache (the CRDs-catalog) were converted from
CRDs by a script that writes ``additionalProperties: false`` on every
object with properties but the root, regardless of
``x-kubernetes-preserve-unknown-fields`` and embedded resources: that
``false`` is not trusted (nor is it in a CRD: structural schemas never
close an object so), the same rules close them, and a bare ``type: object``
stays open (a location may serve schemas not made from a CRD, and the CRD's
``preserveUnknownFields`` is lost).

``default`` and ``x-kubernetes-validations`` (CEL rules) are kept in the
original schema, which defaulting and the CEL evaluation walk; the converted
schema has no ``default`` (fastjsonschema would fill it into the checked
data). A ``pattern`` is a regular expression in Go's syntax, matched by
RE2 as the API server matches it (:mod:`krmcheck.regex`; the validators of
:mod:`krmcheck.schemas.sources` never hand it to Python's ``re``); one RE2
cannot compile is left out and listed (:class:`Unjudged`), so that the run
says which field of which CRD was not judged. ``format`` is not asserted
(the API server validates few formats, and differently from JSON Schema).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from krmcheck import regex

Schema = dict[str, Any]

CRD_KIND = "CustomResourceDefinition"
CRD_GROUP = "apiextensions.k8s.io"

# keywords copied as they are (draft 4 reads them the same way)
_PLAIN = ("type", "required", "enum", "minimum", "maximum", "exclusiveMinimum",
          "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
          "minProperties", "maxProperties", "multipleOf")
_MANY = ("allOf", "anyOf", "oneOf")


class Served(NamedTuple):
    """One served version of a CRD."""

    group: str
    version: str
    kind: str
    schema: Schema  # the openAPIV3Schema, as written (defaults and CEL rules included)
    prunes: bool = True  # unknown fields and nulls are pruned (not spec.preserveUnknownFields)
    # served with a status subresource: the API server drops ``status`` from
    # what is created or updated through the object itself, before validating
    status_subresource: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def is_crd(doc: Any) -> bool:
    return (isinstance(doc, dict) and doc.get("kind") == CRD_KIND
            and str(doc.get("apiVersion", "")).startswith(CRD_GROUP + "/"))


def names_of(doc: Any) -> str | None:
    """The kind a CRD document defines, if it is one."""
    if not is_crd(doc):
        return None
    spec = doc.get("spec")
    names = spec.get("names") if isinstance(spec, dict) else None
    kind = names.get("kind") if isinstance(names, dict) else None
    return kind if isinstance(kind, str) else None


def served(doc: dict[str, Any]) -> Iterator[Served]:
    """The served versions of a CRD document that have a schema."""
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    group, kind = spec.get("group"), names.get("kind") if isinstance(names, dict) else None
    if not isinstance(group, str) or not isinstance(kind, str):
        return
    shared = _schema_of(spec.get("validation"))  # apiextensions v1beta1: one schema for all
    # v1beta1 CRDs keep unknown fields unless they say otherwise (v1 forbids keeping them)
    keeps = spec.get("preserveUnknownFields")
    prunes = keeps is False or (keeps is None and not str(doc.get("apiVersion")).endswith("/v1beta1"))
    shared_status = _has_status(spec.get("subresources"))  # v1beta1: for every version
    versions = spec.get("versions")
    if isinstance(versions, list) and versions:
        for v in versions:
            if isinstance(v, dict) and v.get("served", True) is not False and isinstance(v.get("name"), str):
                schema = _schema_of(v.get("schema")) or shared
                if schema is not None:
                    status = _has_status(v.get("subresources")) or shared_status
                    yield Served(group, v["name"], kind, schema, prunes, status)
    elif isinstance(spec.get("version"), str) and shared is not None:
        yield Served(group, spec["version"], kind, shared, prunes, shared_status)


def _has_status(subresources: Any) -> bool:
    """``subresources: {status: {}}`` (customresource_handler.go serves the
    status subresource when the key is there, whatever its value)."""
    return isinstance(subresources, dict) and "status" in subresources


def _schema_of(holder: Any) -> Schema | None:
    if isinstance(holder, dict) and isinstance(holder.get("openAPIV3Schema"), dict):
        schema: Schema = holder["openAPIV3Schema"]
        return schema
    return None


class ObjectMeta(NamedTuple):
    """The JSON schema of ObjectMeta as a ``$ref`` into ``defs``, which the
    converted schema carries under ``$defs``."""

    ref: Schema
    defs: Schema


# How a node's objects are pruned of unknown fields (pruning/algorithm.go):
_PRUNE = "prune"  # unknown fields are dropped: the object is closed
_KEEP = "keep"  # kept (x-kubernetes-preserve-unknown-fields, and the items of such a list)
_OPEN = "open"  # not read by pruning at all: metadata, allOf/anyOf/oneOf/not
# an embedded resource's apiVersion is what ParseGroupVersion accepts, its
# kind a DNS-1035 label but for case (objectmeta/validation.go)
_EMBEDDED_TYPE_META: dict[str, Schema] = {
    "apiVersion": {"minLength": 1, "pattern": r"^[^/]*(/[^/]*)?$"},
    "kind": {"minLength": 1, "maxLength": 63, "pattern": r"^[A-Za-z]([-A-Za-z0-9]*[A-Za-z0-9])?$"},
}


class Unjudged(NamedTuple):
    """A ``pattern`` of a schema that RE2 (Go's syntax) cannot compile."""

    field: str  # where in the object: spec.ports[*].name, spec.labels.*
    pattern: str
    reason: str  # RE2's


class _Context(NamedTuple):
    crd: bool  # a CRD's own schema (not a catalog's conversion of one)
    prunes: bool  # False: the CRD keeps unknown fields (spec.preserveUnknownFields)
    meta: ObjectMeta | None
    unjudged: list[Unjudged]


def to_json_schema(schema: Schema, meta: ObjectMeta | None = None, crd: bool = True,
                   prunes: bool = True, unjudged: list[Unjudged] | None = None) -> Schema:
    """The draft 4 JSON schema that checks a custom resource of this schema.

    ``crd``: the schema is a CRD's (a bare ``type: object`` is closed too);
    ``prunes``: the CRD prunes unknown fields (not ``preserveUnknownFields``);
    ``meta``: the ObjectMeta schema for the root's and embedded resources'
    ``metadata`` (else only an object); ``unjudged`` receives the patterns
    left out."""
    context = _Context(crd, prunes, meta, unjudged if unjudged is not None else [])
    out = _convert(schema if isinstance(schema, dict) else {}, context, _PRUNE, resource=True)
    if meta is not None:
        out["$defs"] = meta.defs
    out["$schema"] = "http://json-schema.org/draft-04/schema#"
    return out


def _convert(schema: Any, context: _Context, mode: str, resource: bool = False, at: str = "") -> Schema:
    if not isinstance(schema, dict):
        return {}
    out: Schema = {k: schema[k] for k in _PLAIN if k in schema and _well_formed(k, schema[k])}
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        reason = regex.refusal(pattern)
        if reason is None:
            out["pattern"] = pattern
        else:
            context.unjudged.append(Unjudged(at or "(the object)", pattern, reason))
    embedded = resource or schema.get("x-kubernetes-embedded-resource") is True
    keeps = mode == _KEEP or schema.get("x-kubernetes-preserve-unknown-fields") is True
    inner = _OPEN if mode == _OPEN else _PRUNE  # known fields are pruned even where unknown ones are kept
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {k: _convert(v, context, _OPEN if embedded and k == "metadata" else inner,
                                         at=f"{at}.{k}" if at else str(k))
                             for k, v in schema["properties"].items()}
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = _convert(extra, context, inner, at=f"{at}.*" if at else "*")
    if isinstance(schema.get("items"), dict):
        out["items"] = _convert(schema["items"], context, _OPEN if mode == _OPEN else _KEEP if keeps else _PRUNE,
                                at=f"{at}[*]")
    if isinstance(schema.get("not"), dict):
        out["not"] = _convert(schema["not"], context, _OPEN, at=at)
    for key in _MANY:
        if isinstance(schema.get(key), list):
            out[key] = [_convert(s, context, _OPEN, at=at) for s in schema[key]]
    if schema.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
    if embedded:
        _resource_fields(out, context, nested=not resource)
    if schema.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    if context.prunes and mode == _PRUNE and not keeps and not isinstance(extra, dict) and extra is not True:
        if "properties" in out or embedded or (context.crd and schema.get("type") == "object"):
            out.setdefault("properties", {})
            out["additionalProperties"] = False
    if schema.get("nullable") is True:
        _allow_null(out)
    return out


_JSON_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_COUNTS = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"})


def _well_formed(keyword: str, value: Any) -> bool:
    """Whether a keyword's value is of the kind JSON Schema reads. A schema no
    API server would take (``type: strign``, ``enum: null``, ``maxItems: {}``;
    :mod:`krmcheck.schemas.structural` reports it at the CRD) still checks its
    objects by the rest, instead of crashing the validator."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if keyword == "type":
        return value in _JSON_TYPES if isinstance(value, str) else (
            isinstance(value, list) and all(isinstance(t, str) and t in _JSON_TYPES for t in value))
    if keyword == "required":
        return isinstance(value, list) and all(isinstance(name, str) for name in value)
    if keyword == "enum":
        return isinstance(value, list)
    if keyword in _COUNTS:
        return number and value >= 0 and float(value).is_integer()
    if keyword in ("exclusiveMinimum", "exclusiveMaximum", "uniqueItems"):
        return isinstance(value, bool)
    if keyword == "multipleOf":
        return number and value > 0
    return number  # minimum, maximum


def _resource_fields(out: Schema, context: _Context, nested: bool) -> None:
    """apiVersion, kind and metadata of the root or of an embedded resource
    (objectmeta/validation.go: an embedded resource needs apiVersion and kind)."""
    props = out.setdefault("properties", {})
    for name in ("apiVersion", "kind"):
        own = props.get(name) or {"type": "string"}
        if nested:  # the root's apiVersion and kind chose this schema
            own = {**_EMBEDDED_TYPE_META[name], **own}
        props[name] = own
    written = props.get("metadata") or {"type": "object"}
    props["metadata"] = {"allOf": [context.meta.ref, written]} if context.meta is not None else written
    if nested:
        written_required = out.get("required")
        required: list[Any] = written_required if isinstance(written_required, list) else []
        out["required"] = required + [n for n in ("apiVersion", "kind") if n not in required]


def _allow_null(out: Schema) -> None:
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = kind + ["null"]
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = out["enum"] + [None]
    if "anyOf" in out and "type" not in out:
        out["anyOf"] = out["anyOf"] + [{"type": "null"}]
