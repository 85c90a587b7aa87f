"""Where a custom resource holds embedded resources
(``x-kubernetes-embedded-resource``): objects the API server checks as
resources of their own.

Their ``apiVersion``, ``kind`` and the types and fields of their ``metadata``
are in the converted JSON schema (:mod:`krmcheck.schemas.crds`); what no
schema says (label and annotation keys, label values, the name and the
namespace, as ``objectmeta/validation.go`` checks them) the schema
validator checks at the places this module finds. The schema's own
``properties``, ``additionalProperties`` and ``items`` are followed, as the
server's structural schema has them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Schema = dict[str, Any]
Path = tuple[str | int, ...]

_HAS: dict[int, tuple[Any, bool]] = {}


def _children(schema: Schema) -> list[Any]:
    found = list((schema.get("properties") or {}).values()) if isinstance(schema.get("properties"), dict) else []
    return found + [schema.get(k) for k in ("items", "additionalProperties") if isinstance(schema.get(k), dict)]


def has_embedded(schema: Any) -> bool:
    """Whether any node of a schema is an embedded resource (cached per schema object)."""
    if not isinstance(schema, dict):
        return False
    found = _HAS.get(id(schema))
    if found is None or found[0] is not schema:
        here = schema.get("x-kubernetes-embedded-resource") is True
        found = (schema, here or any(has_embedded(c) for c in _children(schema)))
        _HAS[id(schema)] = found
    return found[1]


def resources(schema: Schema, data: Any) -> Iterator[Path]:
    """The paths of the embedded resources in ``data`` (an object of ``schema``)."""
    if has_embedded(schema):
        props = schema.get("properties")
        for key, sub in (props.items() if isinstance(props, dict) else ()):
            if isinstance(data, dict) and key in data:
                yield from _walk(sub, data[key], (key,))


def _walk(schema: Any, value: Any, at: Path) -> Iterator[Path]:
    if not isinstance(schema, dict) or not has_embedded(schema):
        return
    if isinstance(value, dict):
        if schema.get("x-kubernetes-embedded-resource") is True:
            yield at
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        extra = schema.get("additionalProperties")
        for key, sub in value.items():
            child = props.get(key) if key in props else extra if isinstance(extra, dict) else None
            yield from _walk(child, sub, at + (key,))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            yield from _walk(schema["items"], item, at + (i,))
