"""Where a custom resource holds embedded resources (x-kubernetes-embedded-resource)."""

from __future__ import annotations

from typing import Any

from krmcheck.schemas import embedded

RESOURCE: dict[str, Any] = {"type": "object", "x-kubernetes-embedded-resource": True,
                            "x-kubernetes-preserve-unknown-fields": True}
SCHEMA: dict[str, Any] = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "template": RESOURCE,
    "templates": {"type": "array", "items": RESOURCE},
    "byName": {"type": "object", "additionalProperties": RESOURCE},
    "size": {"type": "integer"},
}}}}


def test_embedded_resources_under_properties_items_and_maps() -> None:
    data = {"spec": {"template": {}, "templates": [{}, {}], "byName": {"a": {}}, "size": 1}}
    assert list(embedded.resources(SCHEMA, data)) == [
        ("spec", "template"), ("spec", "templates", 0), ("spec", "templates", 1), ("spec", "byName", "a")]


def test_missing_and_non_object_values_are_no_resources() -> None:
    assert list(embedded.resources(SCHEMA, {"spec": {"template": None, "templates": "x"}})) == []


def test_a_schema_without_embedded_resources_is_not_walked() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object"}}}
    assert not embedded.has_embedded(schema)
    assert embedded.has_embedded(SCHEMA)
    assert list(embedded.resources(schema, {"spec": {}})) == []
