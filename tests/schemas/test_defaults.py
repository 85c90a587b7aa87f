"""A custom resource as the API server validates it: non-nullable nulls
pruned, then structural defaults applied (apiextensions-apiserver's
PruneNonNullableNullsWithoutDefaults, then Default)."""

from __future__ import annotations

from typing import Any

from krmcheck.schemas import defaults

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "default": "managed"},
                "size": {"type": "integer"},
                "note": {"type": "string", "nullable": True},
                "replicas": {"type": "integer", "default": 1},
                "probe": {"type": "object", "default": {},
                          "properties": {"period": {"type": "integer", "default": 10}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "limits": {"type": "object", "additionalProperties": {"type": "string", "default": "1"}},
                "names": {"type": "array", "items": {"type": "string"}},
                "ports": {"type": "array", "items": {"type": "integer", "default": 80}},
                "nothing": {"type": "string", "default": None},
                "either": {"allOf": [{"default": "x"}], "type": "string"},
            },
        },
    },
}


def prepared(data: Any, prunes: bool = True) -> Any:
    return defaults.prepare(SCHEMA, data, prunes)


def test_a_missing_field_gets_its_default() -> None:
    assert prepared({"spec": {"size": 3}})["spec"] == {"size": 3, "mode": "managed", "replicas": 1,
                                                       "probe": {"period": 10}}


def test_defaults_inside_a_default_are_applied_too() -> None:
    # probe's default {} is itself defaulted: period 10
    assert prepared({"spec": {}})["spec"]["probe"] == {"period": 10}


def test_a_non_nullable_null_without_default_is_pruned_from_objects() -> None:
    spec = prepared({"spec": {"size": None, "labels": {"a": None, "b": "x"}}})["spec"]
    assert "size" not in spec
    assert spec["labels"] == {"b": "x"}


def test_a_non_nullable_null_with_a_default_gets_the_default() -> None:
    spec = prepared({"spec": {"mode": None, "replicas": None, "limits": {"cpu": None}}})["spec"]
    assert (spec["mode"], spec["replicas"], spec["limits"]) == ("managed", 1, {"cpu": "1"})


def test_a_nullable_null_stays() -> None:
    assert prepared({"spec": {"note": None}})["spec"]["note"] is None


def test_list_items_are_never_pruned_but_a_null_item_gets_the_items_default() -> None:
    spec = prepared({"spec": {"names": ["a", None], "ports": [443, None]}})["spec"]
    assert spec["names"] == ["a", None]  # the schema validation then rejects the null
    assert spec["ports"] == [443, 80]


def test_a_null_whole_object_is_pruned_then_defaulted() -> None:
    assert prepared({"spec": None}) == {}  # spec has no default: pruned
    assert prepared({"spec": {"probe": None}})["spec"]["probe"] == {"period": 10}


def test_default_null_and_defaults_under_all_of_are_no_defaults() -> None:
    spec = prepared({"spec": {}})["spec"]
    assert "nothing" not in spec and "either" not in spec


def test_unknown_fields_keep_their_nulls() -> None:
    # a field the schema does not know is pruned as unknown, not as a null
    assert prepared({"spec": {"colour": None}})["spec"]["colour"] is None


def test_a_crd_that_keeps_unknown_fields_prunes_no_nulls() -> None:
    spec = prepared({"spec": {"size": None}}, prunes=False)["spec"]
    assert spec["size"] is None and spec["mode"] == "managed"


def test_defaults_are_copies() -> None:
    first = prepared({"spec": {}})
    first["spec"]["probe"]["period"] = 99
    assert prepared({"spec": {}})["spec"]["probe"] == {"period": 10}
