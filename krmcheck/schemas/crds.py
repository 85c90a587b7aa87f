"""CustomResourceDefinitions as schemas: each served version's
``openAPIV3Schema`` turned into a JSON schema the validators compile.

A CRD's schema is an OpenAPI v3.0 "structural schema": close to JSON Schema
draft 4 (``exclusiveMinimum`` is a boolean), with Kubernetes extensions
that change what a value may be. Converted here:

- ``nullable: true``: ``null`` is allowed too;
- ``x-kubernetes-int-or-string``: an integer or a string;
- ``x-kubernetes-preserve-unknown-fields``: any field is allowed;
- ``x-kubernetes-embedded-resource``: an object with apiVersion, kind and
  metadata, which the API server requires;
- ``x-kubernetes-list-type: set``: items are unique (``map``, unique by
  ``x-kubernetes-list-map-keys``, is checked by :mod:`krmcheck.schemas.lists`);
- the root always knows ``apiVersion``, ``kind`` and ``metadata``.

``default`` and ``x-kubernetes-validations`` (CEL rules) are kept in the
original schema, which the CEL evaluation walks; a ``pattern`` Python's
``re`` would read differently from Go's RE2 is left out; ``format`` is not asserted
(the API server validates few formats, and differently from JSON Schema).
With ``strict``, objects that do not preserve unknown fields reject them, as
the API server's strict field validation does; without it, unknown fields
pass even where a schema (converted for kubeconform) closes the object.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Iterator
from typing import Any, NamedTuple

Schema = dict[str, Any]

CRD_KIND = "CustomResourceDefinition"
CRD_GROUP = "apiextensions.k8s.io"

# keywords copied as they are (draft 4 reads them the same way)
_PLAIN = ("type", "required", "enum", "minimum", "maximum", "exclusiveMinimum",
          "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
          "minProperties", "maxProperties", "multipleOf")
_ONE = ("items", "not")
_MANY = ("allOf", "anyOf", "oneOf")


class Served(NamedTuple):
    """One served version of a CRD."""

    group: str
    version: str
    kind: str
    schema: Schema  # the openAPIV3Schema, as written (defaults and CEL rules included)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def is_crd(doc: Any) -> bool:
    return (isinstance(doc, dict) and doc.get("kind") == CRD_KIND
            and str(doc.get("apiVersion", "")).startswith(CRD_GROUP + "/"))


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
    versions = spec.get("versions")
    if isinstance(versions, list) and versions:
        for v in versions:
            if isinstance(v, dict) and v.get("served", True) is not False and isinstance(v.get("name"), str):
                schema = _schema_of(v.get("schema")) or shared
                if schema is not None:
                    yield Served(group, v["name"], kind, schema)
    elif isinstance(spec.get("version"), str) and shared is not None:
        yield Served(group, spec["version"], kind, shared)


def _schema_of(holder: Any) -> Schema | None:
    if isinstance(holder, dict) and isinstance(holder.get("openAPIV3Schema"), dict):
        schema: Schema = holder["openAPIV3Schema"]
        return schema
    return None


def to_json_schema(schema: Schema, strict: bool = False) -> Schema:
    """The draft 4 JSON schema that checks a custom resource of this schema."""
    out = _convert(schema, strict)
    props = out.setdefault("properties", {})
    for name, kind in (("apiVersion", "string"), ("kind", "string"), ("metadata", "object")):
        props.setdefault(name, {"type": kind})
    out["$schema"] = "http://json-schema.org/draft-04/schema#"
    return out


def _convert(schema: Any, strict: bool) -> Schema:
    if not isinstance(schema, dict):
        return {}
    out: Schema = {k: schema[k] for k in _PLAIN if k in schema}
    if isinstance(schema.get("pattern"), str) and python_regex(schema["pattern"]):
        out["pattern"] = schema["pattern"]
    if "properties" in schema and isinstance(schema["properties"], dict):
        out["properties"] = {k: _convert(v, strict) for k, v in schema["properties"].items()}
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = _convert(extra, strict)
    elif extra is False and strict:
        # catalogs converted for kubeconform close every object; unknown
        # fields are an error only in strict mode, as for built-in kinds
        out["additionalProperties"] = False
    for key in _ONE:
        if isinstance(schema.get(key), dict):
            out[key] = _convert(schema[key], strict)
    for key in _MANY:
        if isinstance(schema.get(key), list):
            out[key] = [_convert(s, strict) for s in schema[key]]
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
    if schema.get("x-kubernetes-embedded-resource"):
        out.setdefault("required", ["apiVersion", "kind"])
        props = out.setdefault("properties", {})
        for name, kind in (("apiVersion", "string"), ("kind", "string"), ("metadata", "object")):
            props.setdefault(name, {"type": kind})
    if schema.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    open_object = schema.get("x-kubernetes-preserve-unknown-fields") is True
    if (strict and out.get("type") == "object" and not open_object
            and "properties" in out and "additionalProperties" not in out):
        out["additionalProperties"] = False
    if schema.get("nullable") is True:
        _allow_null(out)
    return out


@functools.lru_cache(maxsize=4096)
def python_regex(pattern: str) -> bool:
    """Whether a pattern (written for Go's RE2) means the same to Python's
    ``re``; one that does not (``\\p{L}`` classes, RE2-only syntax) is not
    asserted rather than misjudged."""
    if "\\p{" in pattern or "\\P{" in pattern or "(?P<" in pattern:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a FutureWarning means Python may read it differently
        try:
            re.compile(pattern)
        except (re.error, RecursionError, OverflowError, FutureWarning):
            return False
    return True


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
