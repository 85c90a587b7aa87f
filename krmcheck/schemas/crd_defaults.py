"""The ``default``\\s of a CRD schema, judged as the API server judges them
before it creates the CRD (apiextensions-apiserver
``pkg/apiserver/schema/defaulting/validation.go`` ``ValidateDefaults``):
each default, as written, must survive pruning unchanged (no field its
schema does not declare: ``pkg/apiserver/schema/pruning/algorithm.go``),
be valid against the schema it sits on (types, enums, required fields,
patterns, bounds; nested defaults are not applied first) and pass that
schema's CEL rules.

The server walks ``items`` and ``properties``, never
``additionalProperties``. Not judged here: defaults in a resource's
``metadata``, ``apiVersion`` or ``kind`` (the server coerces them into an
ObjectMeta), defaults holding embedded resources, the schema of a default
holding a ``null``, the ``format`` of a value, transition rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

Path = tuple[str | int, ...]
Schema = dict[str, Any]
_META = ("metadata", "apiVersion", "kind")
_OLD_SELF = re.compile(r"\boldSelf\b")


def problems(root: Schema) -> list[tuple[Path, str]]:
    """(path of the node relative to ``root``, why its default is refused)."""
    return list(_walk(root, (), resource=True, in_meta=False))


def _walk(schema: Any, at: Path, resource: bool, in_meta: bool) -> Iterator[tuple[Path, str]]:
    if not isinstance(schema, dict):
        return
    embedded = resource or schema.get("x-kubernetes-embedded-resource") is True
    if embedded:
        in_meta = False
    default = schema.get("default")
    if default is not None and not in_meta and not _holds_embedded(schema):
        why = _refusal(schema, default, embedded)
        if why:
            yield at, why
    if isinstance(schema.get("items"), dict):
        yield from _walk(schema["items"], at + ("items",), False, in_meta)
    props = schema.get("properties")
    for key, sub in (props.items() if isinstance(props, dict) else ()):
        yield from _walk(sub, at + ("properties", key), False, in_meta or (embedded and key in _META))


def _refusal(schema: Schema, default: Any, embedded: bool) -> str:
    unknown = list(_unknown_fields(default, schema, embedded, ()))
    if unknown:
        return (f"the default has {'fields' if len(unknown) > 1 else 'a field'} the schema does not declare "
                f"({', '.join(_dotted(p) for p in unknown[:3])}{', ...' if len(unknown) > 3 else ''}): the API "
                "server would prune it, and refuses defaults that pruning changes")
    if _holds_null(default):
        return ""  # how the server's validator takes a null inside a default is not certain here
    invalid = _schema_error(schema, default)
    if invalid:
        return f"the default is not valid against its own schema: {invalid}"
    return _cel_error(schema, default)


def _dotted(path: Path) -> str:
    from krmcheck.tree import fieldpath

    return fieldpath.dotted(path)


# --- pruning (pruning/algorithm.go prune, skipPrune) ----------------------------------------

def _unknown_fields(value: Any, schema: Any, embedded: bool, at: Path) -> Iterator[Path]:
    """The fields pruning would drop from ``value``."""
    if isinstance(schema, dict) and schema.get("x-kubernetes-preserve-unknown-fields") is True:
        yield from _kept(value, schema, at)
        return
    if isinstance(value, dict):
        if not isinstance(schema, dict):
            yield from (at + (k,) for k in value)
            return
        yield from _by_key(value, schema, embedded, at, keep_unknown=False)
    elif isinstance(value, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        for i, sub in enumerate(value):
            yield from _unknown_fields(sub, items, _is_embedded(items), at + (i,))


def _kept(value: Any, schema: Schema, at: Path) -> Iterator[Path]:
    """Under x-kubernetes-preserve-unknown-fields unknown fields stay; known ones are pruned inside."""
    embedded = _is_embedded(schema)
    if isinstance(value, dict):
        yield from _by_key(value, schema, embedded, at, keep_unknown=True)
    elif isinstance(value, list):
        items = schema.get("items")
        for i, sub in enumerate(value):
            if isinstance(items, dict):
                yield from _kept(sub, items, at + (i,))


def _by_key(value: dict[Any, Any], schema: Schema, embedded: bool, at: Path, keep_unknown: bool) -> Iterator[Path]:
    """Each key of an object by the schema that decides it: its property's,
    else ``additionalProperties`` (a schema, or true or false: the key
    stays), else unknown (dropped, unless preserved)."""
    props = _mapping(schema.get("properties"))
    extra = schema.get("additionalProperties")
    for key, sub in value.items():
        if embedded and key in _META:
            continue
        if key in props:
            yield from _unknown_fields(sub, props[key], _is_embedded(props[key]), at + (key,))
        elif extra is not None:
            yield from _unknown_fields(sub, extra if isinstance(extra, dict) else None, _is_embedded(extra),
                                       at + (key,))
        elif not keep_unknown:
            yield at + (key,)


def _mapping(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def _is_embedded(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("x-kubernetes-embedded-resource") is True


def _holds_null(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_null(v) for v in value)
    return value is None


def _holds_embedded(schema: Any) -> bool:
    """Whether a node or anything under it is an embedded resource (its ObjectMeta is coerced)."""
    if not isinstance(schema, dict):
        return False
    if _is_embedded(schema):
        return True
    props = schema.get("properties")
    children = list(props.values()) if isinstance(props, dict) else []
    children += [schema.get("items"), schema.get("additionalProperties")]
    return any(_holds_embedded(c) for c in children)


# --- the schema (apiserver/validation ValidateCustomResource) -------------------------------

def _schema_error(schema: Schema, default: Any) -> str:
    from krmcheck.schemas import crds
    from krmcheck.schemas.sources import json_validator

    converted = crds.to_json_schema({"type": "object", "properties": {"default": schema}}, None, crd=True,
                                    prunes=False)
    # set semantics (x-kubernetes-list-type: set) are checked on objects, not on a schema's defaults
    document = _without_unique_items(converted)
    # keywords of the wrong kind are left out of the conversion (crds._well_formed)
    for error in sorted(json_validator(document).iter_errors({"default": default}),
                        key=lambda e: [str(p) for p in e.absolute_path]):
        where = _dotted(tuple(error.absolute_path)[1:])
        message = error.message if len(error.message) <= 160 else error.message[:157] + "..."
        return f"{where}: {message}" if where else message
    return ""


def _without_unique_items(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_unique_items(v) for k, v in schema.items() if k != "uniqueItems"}
    if isinstance(schema, list):
        return [_without_unique_items(v) for v in schema]
    return schema


# --- CEL rules (schema/cel Validator on the default, as it is) ------------------------------

def _cel_error(schema: Schema, default: Any) -> str:
    from krmcheck.schemas import cel

    if not cel.available() or not cel.has_rules(schema):
        return ""
    for violation in cel.evaluate(schema, default).violations:
        if _OLD_SELF.search(violation.rule):
            continue  # the server runs rules reading oldSelf with the default as the old value too
        where = _dotted(violation.path)
        return f"the default fails the rule {violation.rule!r}" + (f" at {where}" if where else "") + \
            f": {violation.message}"
    return ""
