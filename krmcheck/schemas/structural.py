"""A CustomResourceDefinition's schemas as the apiextensions API server
judges them before it creates the CRD: each ``openAPIV3Schema`` of an
``apiextensions.k8s.io/v1`` CRD must be a valid structural schema, its
defaults must be valid and pruned, and its CEL rules must compile within
the cost budget. :func:`check` lists every reason for a refusal as a
:class:`Problem` at the schema node to edit (``type: strign`` is refused
at its ``type:`` line).

Each rule below mirrors one check of the Kubernetes source (in
k8s.io/apiextensions-apiserver; ``validation.go`` is
``pkg/apis/apiextensions/validation/validation.go``, ``structural`` is
``pkg/apiserver/schema/validation.go``, ``complete.go`` is
``pkg/apiserver/schema/complete.go``, ``defaulting`` is
``pkg/apiserver/schema/defaulting/validation.go``); the rule id is the tag
``rule`` of the finding:

=========================  ==================================================================
rule                       mirrors
=========================  ==================================================================
crd-type                   validation.go ``specStandardValidatorV3.validate``: ``type`` one of
                           the six OpenAPI types, never ``null``
crd-keyword                validation.go ``specStandardValidatorV3.validate`` (``$ref``,
                           ``id``, ``definitions``...), convert.go ``validateUnsupportedFields``
crd-default-forbidden      validation.go ``specStandardValidatorV3.validate`` with
                           ``withForbiddenDefaults`` (top-level metadata, apiVersion, kind)
crd-unique-items           validation.go ``ValidateCustomResourceDefinitionOpenAPISchema``
crd-additional-properties  validation.go ``ValidateCustomResourceDefinitionOpenAPISchema``
                           (with ``properties``); structural ``validateStructuralInvariants``
                           (at the root, with an embedded resource)
crd-extension              validation.go ``ValidateCustomResourceDefinitionOpenAPISchema``:
                           ``x-kubernetes-preserve-unknown-fields: false``, map and list types
crd-list-type              validation.go ``ValidateCustomResourceDefinitionOpenAPISchema``:
                           list types, ``x-kubernetes-list-map-keys``, atomic set items
crd-list-map-keys          validation.go ``validateMapListKeysMapSet``: keys required or
                           defaulted, never nullable; set and map items never nullable
crd-items                  structural ``validateStructuralInvariants``: ``items`` on arrays;
                           validation.go: ``items`` is one schema
crd-type-missing           structural ``validateStructuralInvariants``: ``type`` everywhere but
                           under ``x-kubernetes-int-or-string`` or
                           ``x-kubernetes-preserve-unknown-fields``; object at the root
crd-embedded               structural ``validateStructuralInvariants``, ``validateExtensions``
crd-metadata               structural ``validateStructuralInvariants``,
                           ``validateStructuralMetadataInvariants``
crd-value-validation       structural ``validateNestedValueValidation`` (what ``allOf``,
                           ``anyOf``, ``oneOf`` and ``not`` may not say)
crd-pattern                structural ``validateValueValidation``: Go's ``regexp.Compile``
crd-complete               complete.go ``validateStructuralCompleteness``
crd-root                   validation.go ``validateCustomResourceDefinitionValidation``
                           (status subresource, ``nullable`` at the root)
crd-default                defaulting ``ValidateDefaults``: each default pruned, valid
                           against its schema and its CEL rules
crd-cel-*                  see :mod:`krmcheck.schemas.cel_static`
=========================  ==================================================================

What is not certain is not reported: defaults that hold embedded
resources or sit in a resource's metadata (the server coerces their
ObjectMeta), ``format``\\s of defaults, regular expressions only Go or only
RE2 accepts (RE2 is asked, and a pattern too large for it is left alone).
A ``properties`` under a node whose ``type`` is not ``object`` is
accepted by the API server (nothing in the source refuses it) and is not
reported either.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from krmcheck import regex
from krmcheck.schemas import cel_static

Path = tuple[str | int, ...]
Schema = dict[str, Any]

TYPES = ("array", "boolean", "integer", "number", "object", "string")
_META = ("metadata", "apiVersion", "kind")
_NESTED = ("allOf", "anyOf", "oneOf")
_UNSUPPORTED = ("$ref", "id", "$schema", "definitions", "dependencies", "patternProperties", "additionalItems")
# validation.go allowedFieldsAtRootSchema, as the JSON keys they are written with
_STATUS_ROOT = frozenset({"description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum",
                          "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
                          "uniqueItems", "multipleOf", "required", "items", "properties", "externalDocs",
                          "example", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-validations"})
# structural validateNestedValueValidation: what a value validation may not say
_NESTED_FORBIDDEN = ("type", "additionalProperties", "default", "title", "description", "nullable",
                     "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
                     "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys", "x-kubernetes-list-type",
                     "x-kubernetes-map-type", "x-kubernetes-validations")


class Problem(NamedTuple):
    """One reason the API server refuses the CRD."""

    path: Path  # in the CRD document: the node to edit
    message: str
    rule: str


def check(doc: Any, version: str = "") -> list[Problem]:
    """Every reason the API server would refuse to create ``doc``, an
    ``apiextensions.k8s.io/v1`` CRD (other documents have none here), for
    Kubernetes ``version`` ("1.33"; "" for the newest rules). A CRD many
    roots render is judged once."""
    if not (isinstance(doc, dict) and doc.get("apiVersion") == "apiextensions.k8s.io/v1"
            and doc.get("kind") == "CustomResourceDefinition"):
        return []
    key = (version, json.dumps(doc, sort_keys=True, default=str))
    if key not in _JUDGED:
        if len(_JUDGED) >= 64:
            _JUDGED.clear()
        _JUDGED[key] = _check(doc, version)
    return list(_JUDGED[key])


_JUDGED: dict[tuple[str, str], list[Problem]] = {}


def _check(doc: dict[str, Any], version: str) -> list[Problem]:
    spec = doc.get("spec")
    versions = spec.get("versions") if isinstance(spec, dict) else None
    problems: list[Problem] = []
    for i, served in enumerate(versions if isinstance(versions, list) else ()):
        if not isinstance(served, dict):
            continue
        holder = served.get("schema")
        schema = holder.get("openAPIV3Schema") if isinstance(holder, dict) else None
        if isinstance(schema, dict):
            name = str(served.get("name", i))
            subresources = served.get("subresources")
            status = isinstance(subresources, dict) and isinstance(subresources.get("status"), dict)
            problems += check_schema(schema, ("spec", "versions", i, "schema", "openAPIV3Schema"), name,
                                     status, version)
    return problems


def check_schema(schema: Schema, at: Path, name: str, status: bool = False, version: str = "") -> list[Problem]:
    """The problems of one version's ``openAPIV3Schema`` (found at ``at``)."""
    walk = _Walk(at, name)
    walk.root(schema, status)
    walk.api(schema, at, _Api(root=True))
    structural_before = len(walk.found)
    walk.structural(schema, at, "root")
    walk.complete(schema, at)
    sane = len(walk.found) == structural_before and not walk.unstructured
    if sane:
        walk.defaults(schema, at)
    problems = _first_per_path(walk.found)
    for refusal in cel_static.check(schema, clean=sane and not problems, version=version):
        node = at + refusal.node
        problems.append(Problem(at + refusal.path, f"{label(name, node, len(at))}: {refusal.text}", refusal.rule))
    return _first_per_path(problems)


def _first_per_path(problems: list[Problem]) -> list[Problem]:
    """One problem per node: the first found (several checks may refuse one node)."""
    seen: set[Path] = set()
    out = []
    for p in problems:
        if p.path not in seen:
            seen.add(p.path)
            out.append(p)
    return out


def label(name: str, at: Path, base_len: int) -> str:
    """How a message names a schema node: the version and the field it
    describes (``schema of v1, spec.ports[*].name``)."""
    parts: list[str] = []
    nested = ""
    steps = list(at[base_len:])
    i = 0
    while i < len(steps):
        step = steps[i]
        if step == "properties" and i + 1 < len(steps):
            parts.append(f".{steps[i + 1]}")
            i += 2
            continue
        if step == "items":
            parts.append("[*]")
        elif step == "additionalProperties":
            parts.append(".*")
        elif step in _NESTED + ("not",):
            nested = f" ({step}" + (f"[{steps[i + 1]}])" if i + 1 < len(steps) and isinstance(steps[i + 1], int)
                                    else ")")
            if step != "not":
                i += 1
        else:
            break
        i += 1
    field = "".join(parts).lstrip(".")
    return f"schema of {name}" + (f", {field}" if field else "") + nested


class _Api(NamedTuple):
    """What validation.go's walk knows of a node (``specStandardValidatorV3``)."""

    root: bool = False
    no_defaults: str = ""  # why defaults are forbidden here ("" allowed)
    in_meta: bool = False  # inside a resource's metadata, apiVersion or kind


class _Walk:
    def __init__(self, base: Path, name: str) -> None:
        self.base = base
        self.name = name
        self.found: list[Problem] = []
        self.unstructured = False  # NewStructural itself would fail (no defaults are judged)

    def add(self, at: Path, node_at: Path, text: str, rule: str) -> None:
        self.found.append(Problem(at, f"{label(self.name, node_at, len(self.base))}: {text}", rule))

    # -- validateCustomResourceDefinitionValidation: the root ---------------------------
    def root(self, schema: Schema, status: bool) -> None:
        at = self.base
        if schema.get("nullable") is True:
            self.add(at + ("nullable",), at, "the root cannot be nullable", "crd-root")
        if not status:
            return
        if schema.get("type") not in (None, "", "object"):
            self.add(at + ("type",), at, "with the status subresource the root must be of type object", "crd-root")
        for key, value in schema.items():
            if key not in _STATUS_ROOT and not _zero(value):
                self.add(at + (key,), at, f"{key} is not allowed at the root of a schema whose version has the "
                         "status subresource", "crd-root")

    # -- validation.go ValidateCustomResourceDefinitionOpenAPISchema: every node ---------
    def api(self, schema: Any, at: Path, ctx: _Api) -> None:
        if not isinstance(schema, dict):
            return
        self._standard(schema, at, ctx)
        if schema.get("uniqueItems") is True:
            self.add(at + ("uniqueItems",), at, "uniqueItems: true is refused (its check takes quadratic time; "
                     "x-kubernetes-list-type: set says the same)", "crd-unique-items")
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if extra is not None and isinstance(props, dict) and props and extra is not True:
            self.add(at + ("additionalProperties",), at, "properties and additionalProperties cannot both be set",
                     "crd-additional-properties")
        if isinstance(extra, dict):
            inner = ctx._replace(root=False)
            if ctx.in_meta:
                inner = inner._replace(no_defaults="inside additionalProperties applying to object metadata")
            self.api(extra, at + ("additionalProperties",), inner)
        if isinstance(props, dict):
            for key, sub in props.items():
                inner = ctx._replace(root=False)
                if (ctx.root or schema.get("x-kubernetes-embedded-resource") is True) and key in _META:
                    inner = inner._replace(in_meta=True)
                    if ctx.root:
                        inner = inner._replace(no_defaults=f"in top-level {key}")
                self.api(sub, at + ("properties", key), inner)
        for key in ("not",):
            self.api(schema.get(key), at + (key,), ctx._replace(root=False))
        for key in _NESTED:
            for i, sub in enumerate(_list(schema.get(key))):
                self.api(sub, at + (key, i), ctx._replace(root=False))
        items = schema.get("items")
        if isinstance(items, dict):
            self.api(items, at + ("items",), ctx._replace(root=False))
        elif isinstance(items, list):
            for i, sub in enumerate(items):
                self.api(sub, at + ("items", i), ctx._replace(root=False))
        self._extensions(schema, at)
        self._list_type(schema, at)
        self._map_list(schema, at)

    def _standard(self, schema: Schema, at: Path, ctx: _Api) -> None:
        """specStandardValidatorV3.validate; convert.go validateUnsupportedFields."""
        kind = schema.get("type")
        if kind == "null":
            self.add(at + ("type",), at, "type 'null' is refused (nullable: true allows null)", "crd-type")
        elif isinstance(kind, str) and kind and kind not in TYPES:
            self.add(at + ("type",), at, f"type {kind!r} is not an OpenAPI type the API server accepts "
                     f"({', '.join(TYPES)})", "crd-type")
        if "default" in schema and schema["default"] is not None and ctx.no_defaults:
            self.add(at + ("default",), at, f"a default is not allowed {ctx.no_defaults}", "crd-default-forbidden")
        for key in _UNSUPPORTED:
            if key in schema and not _zero(schema[key]):
                self.add(at + (key,), at, f"{key} is not supported in a CRD schema", "crd-keyword")
                if key in ("$ref", "id", "$schema"):
                    self.unstructured = True
        if isinstance(schema.get("items"), list):
            self.add(at + ("items",), at, "items must be one schema, not a list of schemas", "crd-items")
            self.unstructured = True
        if ctx.in_meta and schema.get("x-kubernetes-embedded-resource") is True:
            self.add(at + ("x-kubernetes-embedded-resource",), at,
                     "x-kubernetes-embedded-resource cannot be used inside a resource's metadata", "crd-embedded")

    def _extensions(self, schema: Schema, at: Path) -> None:
        kind = schema.get("type")
        if schema.get("x-kubernetes-preserve-unknown-fields") is False:
            self.add(at + ("x-kubernetes-preserve-unknown-fields",), at,
                     "x-kubernetes-preserve-unknown-fields must be true or left out", "crd-extension")
            self.unstructured = True
        map_type = schema.get("x-kubernetes-map-type")
        if map_type is not None:
            if kind != "object":
                self.add(_type_or(schema, at), at, "x-kubernetes-map-type needs type: object", "crd-extension")
            if map_type not in ("atomic", "granular"):
                self.add(at + ("x-kubernetes-map-type",), at,
                         f"x-kubernetes-map-type {map_type!r} is not atomic or granular", "crd-extension")

    def _list_type(self, schema: Schema, at: Path) -> None:
        list_type = schema.get("x-kubernetes-list-type")
        kind = schema.get("type")
        items = schema.get("items")
        keys = schema.get("x-kubernetes-list-map-keys")
        if list_type is not None and kind != "array":
            self.add(_type_or(schema, at), at, "x-kubernetes-list-type needs type: array", "crd-list-type")
        elif list_type == "set" and isinstance(items, dict):
            item_type = items.get("type")
            if item_type == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
                self.add(at + ("items", "x-kubernetes-list-type"), at, "the items of a list-type set that are lists "
                         "must be atomic", "crd-list-type")
            elif item_type == "object" and items.get("x-kubernetes-map-type") != "atomic":
                self.add(at + ("items",), at, "the items of a list-type set that are objects need "
                         "x-kubernetes-map-type: atomic", "crd-list-type")
        if list_type is not None and list_type not in ("atomic", "set", "map"):
            self.add(at + ("x-kubernetes-list-type",), at,
                     f"x-kubernetes-list-type {list_type!r} is not atomic, set or map", "crd-list-type")
        if isinstance(keys, list) and keys and list_type != "map":
            self.add(at + ("x-kubernetes-list-map-keys",), at,
                     "x-kubernetes-list-map-keys needs x-kubernetes-list-type: map", "crd-list-type")
        if list_type != "map":
            return
        if not (isinstance(keys, list) and keys):
            self.add(at + ("x-kubernetes-list-type",), at,
                     "x-kubernetes-list-type: map needs x-kubernetes-list-map-keys", "crd-list-type")
        if items is None:
            self.add(at + ("x-kubernetes-list-type",), at, "x-kubernetes-list-type: map needs items", "crd-list-type")
            return
        if not isinstance(items, dict):
            return
        if items.get("type") != "object":
            self.add(_type_or(items, at + ("items",)), at, "the items of x-kubernetes-list-type: map must be objects",
                     "crd-list-type")
            return
        props = _dict(items.get("properties"))
        seen: set[Any] = set()
        for key in keys if isinstance(keys, list) else ():
            if not isinstance(key, str):
                continue  # the decoder refuses a key that is no string
            if key in props:
                key_type = props[key].get("type") if isinstance(props[key], dict) else None
                if key_type in ("array", "object"):
                    self.add(at + ("items", "properties", key, "type"), at,
                             f"list-map key {key!r} must be a scalar, not {key_type}", "crd-list-type")
            else:
                self.add(at + ("x-kubernetes-list-map-keys",), at,
                         f"list-map key {key!r} is not a property of the items", "crd-list-type")
            if key in seen:
                self.add(at + ("x-kubernetes-list-map-keys",), at, f"list-map key {key!r} is repeated",
                         "crd-list-type")
            seen.add(key)

    def _map_list(self, schema: Schema, at: Path) -> None:
        """validateMapListKeysMapSet."""
        list_type = schema.get("x-kubernetes-list-type")
        items = schema.get("items")
        if list_type not in ("set", "map") or not isinstance(items, dict):
            return
        if items.get("nullable") is True:
            self.add(at + ("items", "nullable"), at, f"the items of x-kubernetes-list-type: {list_type} cannot be "
                     "nullable", "crd-list-map-keys")
        if list_type != "map":
            return
        required = set(r for r in _list(items.get("required")) if isinstance(r, str))
        props = _dict(items.get("properties"))
        for key in _list(schema.get("x-kubernetes-list-map-keys")):
            prop = props.get(key) if isinstance(key, str) else None
            if not isinstance(prop, dict):
                continue
            if key not in required and prop.get("default") is None:
                self.add(at + ("items", "properties", key), at, f"list-map key {key!r} must be required by the items "
                         "or have a default", "crd-list-map-keys")
            if prop.get("nullable") is True:
                self.add(at + ("items", "properties", key, "nullable"), at,
                         f"list-map key {key!r} cannot be nullable", "crd-list-map-keys")

    # -- structural validateStructuralInvariants: properties, items, additionalProperties -----
    def structural(self, schema: Any, at: Path, level: str) -> None:
        if not isinstance(schema, dict):
            return
        kind = schema.get("type")
        typed = isinstance(kind, str) and kind != ""
        untyped = kind is None or kind == ""  # a type that is no string is the decoder's to refuse
        embedded = schema.get("x-kubernetes-embedded-resource") is True
        int_or_string = schema.get("x-kubernetes-int-or-string") is True
        preserves = schema.get("x-kubernetes-preserve-unknown-fields") is True
        items = schema.get("items")
        if kind == "array" and items is None:
            self.add(at + ("type",), at, "an array needs items (the schema of its elements)", "crd-items")
        if isinstance(items, dict):
            self.structural(items, at + ("items",), "items")
        props = _dict(schema.get("properties"))
        for key, sub in props.items():
            self.structural(sub, at + ("properties", key), "field")
        extra = schema.get("additionalProperties")  # false is set too (StructuralOrBool)
        if extra is not None:
            if level == "root":
                self.add(at + ("additionalProperties",), at, "additionalProperties is not allowed at the root",
                         "crd-additional-properties")
            if isinstance(extra, dict):
                self.structural(extra, at + ("additionalProperties",), "field")
        if int_or_string and preserves:
            self.add(at + ("x-kubernetes-preserve-unknown-fields",), at, "x-kubernetes-preserve-unknown-fields "
                     "cannot be true with x-kubernetes-int-or-string", "crd-embedded")
        if int_or_string and embedded:
            self.add(at + ("x-kubernetes-embedded-resource",), at, "x-kubernetes-embedded-resource cannot be true "
                     "with x-kubernetes-int-or-string", "crd-embedded")
        self._value_validation(schema, at, level, _int_or_string_any_of(schema), _int_or_string_all_of(schema))
        if embedded and typed and kind != "object":
            self.add(at + ("type",), at, "x-kubernetes-embedded-resource needs type: object", "crd-embedded")
        elif embedded and untyped:
            self.add(at, at, "x-kubernetes-embedded-resource needs type: object", "crd-embedded")
        elif untyped and not embedded and not int_or_string and not preserves:
            where = {"root": "at the root", "items": "for the items of an array", "field": "for a field"}[level]
            self.add(at, at, f"type is required {where} (only x-kubernetes-int-or-string or "
                     "x-kubernetes-preserve-unknown-fields may leave it out)", "crd-type-missing")
        if embedded and extra is not None:
            self.add(at + ("additionalProperties",), at, "x-kubernetes-embedded-resource cannot have "
                     "additionalProperties", "crd-embedded")
        if level == "root" and typed and kind != "object":
            self.add(at + ("type",), at, "the root must be of type object", "crd-type-missing")
        resource = level == "root" or embedded
        for key in ("kind", "apiVersion"):
            sub = props.get(key)
            if resource and isinstance(sub, dict) and sub.get("type") != "string":
                self.add(_type_or(sub, at + ("properties", key)), at, f"{key} must be of type string", "crd-metadata")
        meta = props.get("metadata")
        if isinstance(meta, dict):
            self._metadata(meta, at + ("properties", "metadata"), at, resource, level == "root")
        if embedded and not preserves and not props:
            self.add(at, at, "x-kubernetes-embedded-resource needs properties, or "
                     "x-kubernetes-preserve-unknown-fields: true", "crd-embedded")

    def _metadata(self, meta: Schema, at: Path, parent: Path, resource: bool, root: bool) -> None:
        """validateStructuralMetadataInvariants."""
        if resource and meta.get("type") != "object":
            self.add(_type_or(meta, at), parent, "metadata must be of type object", "crd-metadata")
        if not root:
            return
        props = _dict(meta.get("properties"))
        names = set(props)
        rest = {k: v for k, v in meta.items() if k not in ("type", "default", "properties") and not _zero(v)}
        if (names and not names <= {"name", "generateName"}) or rest:
            self.add(at, parent, "the root's metadata may only restrict name and generateName (write just "
                     "type: object, and properties name or generateName)", "crd-metadata")

    def _value_validation(self, schema: Schema, at: Path, level: str, skip_any_of: bool,
                          skip_first_all_of_any_of: bool) -> None:
        """validateValueValidation: the logic junctors, and the pattern."""
        if not skip_any_of:
            for i, sub in enumerate(_list(schema.get("anyOf"))):
                self._nested(sub, at + ("anyOf", i), level, False)
        for i, sub in enumerate(_list(schema.get("allOf"))):
            self._nested(sub, at + ("allOf", i), level, skip_first_all_of_any_of and i == 0)
        for i, sub in enumerate(_list(schema.get("oneOf"))):
            self._nested(sub, at + ("oneOf", i), level, False)
        if isinstance(schema.get("not"), dict):
            self._nested(schema["not"], at + ("not",), level, False)
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and pattern:
            reason = regex.go_refusal(pattern)
            if reason is not None:
                self.add(at + ("pattern",), at, f"pattern {pattern!r} is not a valid regular expression: {reason}",
                         "crd-pattern")

    def _nested(self, schema: Any, at: Path, level: str, skip_any_of: bool) -> None:
        """validateNestedValueValidation: a value validation says nothing structural."""
        if not isinstance(schema, dict):
            return
        self._value_validation(schema, at, level, skip_any_of, False)
        if isinstance(schema.get("items"), dict):
            self._nested(schema["items"], at + ("items",), level, False)
        props = _dict(schema.get("properties"))
        for key, sub in props.items():
            self._nested(sub, at + ("properties", key), "field", False)
        for key in _NESTED_FORBIDDEN:
            if key in schema and (not _zero(schema[key]) or (key == "additionalProperties" and schema[key] is False)):
                self.add(at + (key,), at, f"{key} is not allowed inside allOf, anyOf, oneOf or not (a structural "
                         "schema says it outside of them)", "crd-value-validation")
        if "metadata" in props:
            self.add(at + ("properties", "metadata"), at, "metadata cannot be specified inside allOf, anyOf, oneOf "
                     "or not", "crd-value-validation")

    # -- complete.go validateStructuralCompleteness: the root's value validations ------------
    def complete(self, schema: Schema, at: Path) -> None:
        self._complete_junctors(schema, schema, at, at)

    def _complete_junctors(self, validation: Schema, structural: Any, s_at: Path, v_at: Path) -> None:
        for key in _NESTED:
            for i, sub in enumerate(_list(validation.get(key))):
                self._complete(sub, structural, s_at, v_at + (key, i))
        if isinstance(validation.get("not"), dict):
            self._complete(validation["not"], structural, s_at, v_at + ("not",))

    def _complete(self, validation: Any, structural: Any, s_at: Path, v_at: Path) -> None:
        if not isinstance(validation, dict):
            return
        if not isinstance(structural, dict):
            self.add(v_at, v_at, "this value validation names a field the schema does not declare outside of it",
                     "crd-complete")
            return
        self._complete_junctors(validation, structural, s_at, v_at)
        if isinstance(validation.get("items"), dict):
            self._complete(validation["items"], structural.get("items"), s_at + ("items",), v_at + ("items",))
        declared = _dict(structural.get("properties"))
        for key, sub in _dict(validation.get("properties")).items():
            if key not in declared:
                self.add(v_at + ("properties", key), v_at, f"property {key!r} of a value validation must also be "
                         "declared in the schema's own properties", "crd-complete")
            else:
                self._complete(sub, declared[key], s_at + ("properties", key), v_at + ("properties", key))

    # -- defaulting ValidateDefaults ---------------------------------------------------
    def defaults(self, schema: Schema, at: Path) -> None:
        from krmcheck.schemas import crd_defaults

        for where, text in crd_defaults.problems(schema):
            node = at + where
            self.add(node + ("default",), node, text, "crd-default")


def _int_or_string_any_of(schema: Schema) -> bool:
    """structural isIntOrStringAnyOfPattern: anyOf [{type: integer}, {type: string}] and nothing else."""
    return _is_int_or_string(schema.get("anyOf"))


def _int_or_string_all_of(schema: Schema) -> bool:
    """structural isIntOrStringAllOfPattern: the same anyOf as the first allOf."""
    all_of = schema.get("allOf")
    return (isinstance(all_of, list) and bool(all_of) and isinstance(all_of[0], dict)
            and _is_int_or_string(all_of[0].get("anyOf")))


def _is_int_or_string(any_of: Any) -> bool:
    if not isinstance(any_of, list) or len(any_of) != 2:
        return False
    wanted = ("integer", "string")
    return all(isinstance(sub, dict) and {k for k, v in sub.items() if not _zero(v)} == {"type"}
               and sub["type"] == t for sub, t in zip(any_of, wanted))


def _type_or(schema: Any, at: Path) -> Path:
    """The node's ``type:`` line when it has one, else the node."""
    return at + ("type",) if isinstance(schema, dict) and "type" in schema else at


def _zero(value: Any) -> bool:
    """A value Go decodes to its field's zero value (as if not written)."""
    return value is None or value is False or value == "" or value == [] or value == {}


def _dict(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []

