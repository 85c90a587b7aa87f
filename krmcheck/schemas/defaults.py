"""A custom resource as the API server has it when it validates it: nulls
pruned, then defaults applied.

The apiextensions API server decodes a custom resource, prunes it
(``pkg/apiserver/schema/defaulting``: PruneNonNullableNullsWithoutDefaults,
after pruning unknown fields), then applies the schema's structural
defaults (Default), and only then checks types, required fields, enums and
CEL rules. So:

1. a ``null`` in an object, for a field whose schema (under ``properties``,
   or ``additionalProperties`` when that is a schema) is not
   ``nullable: true`` and has no ``default``, is removed; the items of a
   list are never removed (a ``null`` item stays, and is an error unless
   nullable or defaulted);
2. a property that is missing, or a non-nullable ``null``, gets its
   ``default``; so does a non-nullable ``null`` value of an
   ``additionalProperties`` map or item of a list whose schema has one;
   then every value is defaulted in turn, defaults inside defaults included.

Only the schema's own ``properties``, ``additionalProperties`` and
``items`` are read, as the server's structural schema has them
(``allOf``/``anyOf``/... hold no defaults there); a ``default: null`` is no
default. Both steps change the data in place: the caller passes its own copy
(``Node.to_data()`` makes one), never the resource tree.
"""

from __future__ import annotations

import copy
from typing import Any

Schema = dict[str, Any]


def prepare(schema: Schema, data: Any, prunes: bool = True) -> Any:
    """``data`` (changed in place) as the API server validates it: nulls
    pruned (unless the CRD keeps unknown fields, ``prunes`` False), then
    defaults applied."""
    if prunes:
        prune_nulls(schema, data)
    apply_defaults(schema, data)
    return data


def _field_schema(schema: Any, key: str) -> Schema | None:
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties")
    if isinstance(props, dict) and key in props:
        found = props[key]
        return found if isinstance(found, dict) else None
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _items(schema: Any) -> Schema | None:
    items = schema.get("items") if isinstance(schema, dict) else None
    return items if isinstance(items, dict) else None


def _non_nullable_null(value: Any, schema: Schema | None) -> bool:
    return value is None and schema is not None and schema.get("nullable") is not True


def prune_nulls(schema: Any, value: Any) -> None:
    """Remove the non-nullable nulls without a default from objects."""
    if isinstance(value, dict):
        for key in list(value):
            sub = _field_schema(schema, key)
            if _non_nullable_null(value[key], sub) and sub is not None and sub.get("default") is None:
                del value[key]
            else:
                prune_nulls(sub, value[key])
    elif isinstance(value, list):
        items = _items(schema)
        for item in value:
            prune_nulls(items, item)


def apply_defaults(schema: Any, value: Any) -> None:
    """Fill in the schema's defaults where fields are missing or null."""
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        for key, sub in props.items():
            if isinstance(sub, dict) and sub.get("default") is not None:
                if key not in value or _non_nullable_null(value[key], sub):
                    value[key] = copy.deepcopy(sub["default"])
        extra = schema.get("additionalProperties")
        for key in list(value):
            if key in props:
                apply_defaults(props[key], value[key])
            elif isinstance(extra, dict):
                if _non_nullable_null(value[key], extra):
                    value[key] = copy.deepcopy(extra.get("default"))
                apply_defaults(extra, value[key])
    elif isinstance(value, list):
        items = _items(schema)
        if items is None:
            return
        for i, item in enumerate(value):
            if _non_nullable_null(item, items):
                value[i] = copy.deepcopy(items.get("default"))
            apply_defaults(items, value[i])
