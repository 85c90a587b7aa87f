"""``x-kubernetes-list-type: map``: the items of such a list are told apart by
their ``x-kubernetes-list-map-keys``, and the API server refuses two items
with the same keys (two containers named ``web``, two ports with the same
``containerPort`` and ``protocol``). A key an item leaves out counts with
its schema ``default`` when it has one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Schema = dict[str, Any]
Path = tuple[str | int, ...]
Resolve = Callable[[Schema], Schema]


def _same(schema: Schema) -> Schema:
    return schema


def duplicates(schema: Schema, data: Any, resolve: Resolve = _same) -> list[tuple[Path, str]]:
    """(path of the repeated item, message) for every map-list item whose keys an earlier item has."""
    out: list[tuple[Path, str]] = []
    _walk(schema, data, (), resolve, out, 0)
    return out


def _walk(schema: Any, data: Any, at: Path, resolve: Resolve, out: list[tuple[Path, str]], depth: int) -> None:
    if not isinstance(schema, dict) or depth > 64:
        return
    schema = resolve(schema)
    if isinstance(data, list):
        if schema.get("x-kubernetes-list-type") == "map" and schema.get("x-kubernetes-list-map-keys"):
            _check_keys(schema, data, at, resolve, out)
        item = schema.get("items")
        if isinstance(item, dict):
            for i, value in enumerate(data):
                _walk(item, value, at + (i,), resolve, out, depth + 1)
    elif isinstance(data, dict):
        props = _mapping(schema.get("properties"))
        extra = schema.get("additionalProperties")
        for key, value in data.items():
            sub = props.get(key) if key in props else (extra if isinstance(extra, dict) else None)
            if sub is not None:
                _walk(sub, value, at + (key,), resolve, out, depth + 1)


def _mapping(value: Any) -> dict[Any, Any]:
    """A schema's mapping as written; anything else (no API server takes it) is none."""
    return value if isinstance(value, dict) else {}


def _check_keys(schema: Schema, data: list[Any], at: Path, resolve: Resolve, out: list[tuple[Path, str]]) -> None:
    written = schema["x-kubernetes-list-map-keys"]
    keys = [str(k) for k in written] if isinstance(written, list) else []
    if not keys:
        return  # keys that are no list: no API server takes the CRD, nothing to compare by
    item_schema = resolve(schema["items"]) if isinstance(schema.get("items"), dict) else {}
    props = _mapping(item_schema.get("properties"))
    defaults = {k: resolve(props[k]).get("default") for k in keys if isinstance(props.get(k), dict)}
    seen: dict[tuple[Any, ...], int] = {}
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            continue
        values = tuple(item.get(k, defaults.get(k)) for k in keys)
        if any(v is None or isinstance(v, (dict, list)) for v in values):
            continue  # a missing key is the schema's business (required)
        if values in seen:
            named = ", ".join(f"{k}={v!r}" for k, v in zip(keys, values))
            out.append((at + (i,), f"duplicate entry ({named}): item {seen[values]} has the same "
                                   f"{'key' if len(keys) == 1 else 'keys'}"))
        else:
            seen[values] = i
