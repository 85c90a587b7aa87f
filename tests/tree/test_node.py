"""The provenance tree's nodes: values, writers and trails, and the helpers
that build, walk and restamp trees. Shares are in test_share.py."""

from __future__ import annotations

import pytest

from krmcheck.tree.node import Mapping, Scalar, Sequence, from_data, lookup, restamp, walk
from krmcheck.tree.origin import UNKNOWN, Location, Origin, from_mark

BASE = Origin("base/deployment.yaml", 4, 3)
PATCH = Origin("overlay/patch.yaml", 7, 5, "patch")
PREFIX = Origin("overlay/kustomization.yaml", 2, 1, "namePrefix")


def deployment() -> Mapping:
    return Mapping({
        "kind": Scalar("Deployment", BASE),
        "metadata": Mapping({"name": Scalar("web", BASE), "labels": Mapping({}, BASE)}, BASE),
        "spec": Mapping({"ports": Sequence([Scalar(80, BASE), Scalar(443, BASE)], BASE)}, BASE),
    }, BASE)


# --- origins ---------------------------------------------------------------------

def test_from_mark_turns_zero_based_marks_into_one_based_positions() -> None:
    class Mark:
        line, column = 0, 4

    assert from_mark("a.yaml", Mark(), "patch") == Origin("a.yaml", 1, 5, "patch")


def test_an_origin_prints_its_position_and_writer_and_gives_its_location() -> None:
    assert str(PATCH) == "overlay/patch.yaml:7:5 (patch)"
    assert PATCH.location == Location("overlay/patch.yaml", 7, 5)
    assert str(PATCH.location) == "overlay/patch.yaml:7:5"


def test_a_node_made_by_code_has_the_unknown_origin() -> None:
    assert Scalar(1).origin == UNKNOWN
    assert Mapping().items == {} and Sequence().items == []


# --- writers and trails ---------------------------------------------------------------

def test_rewrite_keeps_the_replaced_writer_in_the_trail_oldest_first() -> None:
    node = Scalar("web", BASE)
    node.rewrite(PATCH)
    node.rewrite(PREFIX)
    assert node.origin == PREFIX
    assert node.trail == (BASE, PATCH)


def test_rewrite_by_the_same_writer_adds_nothing() -> None:
    node = Scalar("web", BASE)
    node.rewrite(BASE)
    assert node.trail == ()


def test_set_changes_the_value_forgets_the_source_spelling_and_records_the_writer() -> None:
    node = Scalar(True, BASE, text="True")
    node.set("false", PATCH)
    assert (node.value, node.text, node.origin, node.trail) == ("false", None, PATCH, (BASE,))


# --- scalars as kustomize's strings -----------------------------------------------------

@pytest.mark.parametrize(("value", "text", "expected"), [
    (True, "True", "True"),  # a plain scalar keeps its spelling
    (True, None, "true"),
    (False, None, "false"),
    (None, None, ""),
    (8, "010", "010"),
    (8, None, "8"),
    (1.5, None, "1.5"),
    ("web", None, "web"),
])
def test_as_string(value: object, text: str | None, expected: str) -> None:
    assert Scalar(value, BASE, text=text).as_string() == expected  # type: ignore[arg-type]


# --- copies ---------------------------------------------------------------------------

def test_a_copy_is_deep_and_keeps_origins_and_trails() -> None:
    source = deployment()
    source.items["metadata"].rewrite(PATCH)
    copied = source.copy()
    copied.items["spec"].items["ports"].items.append(Scalar(8080, PATCH))  # type: ignore[attr-defined]
    copied.items["metadata"].items["name"].set("api", PATCH)  # type: ignore[attr-defined]
    assert source.to_data()["spec"] == {"ports": [80, 443]}
    assert source.to_data()["metadata"]["name"] == "web"
    assert copied.items["metadata"].origin == PATCH
    assert copied.items["metadata"].trail == (BASE,)


def test_a_scalar_copy_is_independent() -> None:
    source = Scalar("web", BASE, text="web")
    copied = source.copy()
    copied.set("api", PATCH)
    assert (source.value, source.text, source.origin) == ("web", "web", BASE)


def test_to_data_gives_plain_python_values() -> None:
    assert deployment().to_data() == {"kind": "Deployment", "metadata": {"name": "web", "labels": {}},
                                      "spec": {"ports": [80, 443]}}


# --- mapping access ----------------------------------------------------------------------

def test_typed_accessors_return_none_for_another_type_or_a_missing_key() -> None:
    doc = deployment()
    assert doc.value("kind") == "Deployment"
    assert doc.value("metadata") is None  # not a scalar
    assert doc.value("missing", "fallback") == "fallback"
    assert doc.mapping("metadata") is doc.items["metadata"]
    assert doc.mapping("kind") is None
    spec = doc.mapping("spec")
    assert spec is not None and spec.sequence("ports") is spec.items["ports"]
    assert doc.sequence("metadata") is None
    assert doc.get("kind") is doc.items["kind"] and doc.get("missing") is None
    assert "kind" in doc and "missing" not in doc


def test_setdefault_mapping_keeps_an_existing_map() -> None:
    doc = deployment()
    metadata = doc.items["metadata"]
    assert doc.setdefault_mapping("metadata", PATCH) is metadata
    assert metadata.origin == BASE


def test_setdefault_mapping_adds_a_map_written_by_the_caller() -> None:
    doc = deployment()
    added = doc.setdefault_mapping("status", PATCH)
    assert doc.items["status"] is added
    assert (added.items, added.origin) == ({}, PATCH)


def test_setdefault_mapping_replaces_a_scalar() -> None:
    doc = Mapping({"metadata": Scalar(None, BASE)}, BASE)
    added = doc.setdefault_mapping("metadata", PATCH)
    assert isinstance(doc.items["metadata"], Mapping) and added.origin == PATCH


def test_a_sequence_iterates_and_counts_its_items() -> None:
    ports = Sequence([Scalar(80, BASE), Scalar(443, BASE)], BASE)
    assert len(ports) == 2
    assert [n.to_data() for n in ports] == [80, 443]


# --- trees from data, walking, lookup, restamping ----------------------------------------------

def test_from_data_writes_every_node_with_one_origin_and_keys_as_strings() -> None:
    tree = from_data({"a": [1, {"b": None}], 2: "x"}, PATCH)
    assert tree.to_data() == {"a": [1, {"b": None}], "2": "x"}
    assert isinstance(tree, Mapping) and isinstance(tree.items["a"], Sequence)
    assert {n.origin for n in walk(tree)} == {PATCH}


def test_walk_visits_parents_before_children_in_order() -> None:
    doc = deployment()
    visited = [n.to_data() for n in walk(doc) if isinstance(n, Scalar)]
    assert visited == ["Deployment", "web", 80, 443]
    assert next(walk(doc)) is doc
    assert len(list(walk(doc))) == 9


def test_lookup_follows_mapping_keys() -> None:
    doc = deployment()
    assert lookup(doc, ["metadata", "name"]) is doc.items["metadata"].items["name"]  # type: ignore[attr-defined]
    assert lookup(doc, []) is doc


@pytest.mark.parametrize("path", [["metadata", "missing"], ["kind", "name"], ["spec", "ports", "0"]])
def test_lookup_is_none_for_a_missing_step_or_a_non_mapping(path: list[str]) -> None:
    assert lookup(deployment(), path) is None


def test_restamp_marks_a_whole_subtree_and_keeps_earlier_writers() -> None:
    doc = deployment()
    doc.items["spec"].items["ports"].items[0].rewrite(PATCH)  # type: ignore[attr-defined]
    restamp(doc.items["spec"], PREFIX)
    spec_nodes = list(walk(doc.items["spec"]))
    assert {n.origin for n in spec_nodes} == {PREFIX}
    assert spec_nodes[2].trail == (BASE, PATCH)  # the first port
    assert spec_nodes[3].trail == (BASE,)
    assert doc.origin == BASE and doc.items["metadata"].origin == BASE


def test_reprs_name_the_content_and_the_writer() -> None:
    assert repr(Scalar("web", BASE)) == "Scalar('web' @ base/deployment.yaml:4:3 (resource))"
    assert repr(Mapping({"a": Scalar(1)}, PATCH)) == "Mapping(['a'] @ overlay/patch.yaml:7:5 (patch))"
    assert repr(Sequence([Scalar(1)], PATCH)) == "Sequence(1 @ overlay/patch.yaml:7:5 (patch))"
