"""Which resource a Result names (kpt's conventions), as the function
runtime and the locator both ask it."""

from __future__ import annotations

from krmcheck.resource.lookup import Lookup
from krmcheck.resource.resource import Resource
from krmcheck.results import ResourceRef, Result
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping


def docs(text: str, path: str = "src.yaml") -> list[Resource]:
    return [Resource(d) for d in load_documents(text, path) if isinstance(d, Mapping)]


def test_by_ref_current_name_before_an_earlier_one() -> None:
    a, b = docs("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
    b.remember_id()
    b.set_name("a", b.node.origin)  # b was renamed to a: the current a wins
    found = Lookup([a, b]).find(Result("m", resource_ref=ResourceRef("v1", "ConfigMap", "a")))
    assert found is a


def test_an_object_the_api_server_names_is_named_by_its_prefix() -> None:
    a, b = docs("apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: one-}\n---\n"
                "apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: two-}\n")
    assert Lookup([a, b]).find(Result("m", resource_ref=ResourceRef("batch/v1", "Job", "two-"))) is b


def test_by_file_and_index_against_the_source_documents() -> None:
    a, b = docs("kind: ConfigMap\nmetadata: {name: a}\n---\nkind: ConfigMap\nmetadata: {name: b}\n")
    lookup = Lookup([b, a])  # output order is not document order
    assert lookup.find(Result("m", file_path="src.yaml", file_index=1)) is b
    assert lookup.find(Result("m", file_path="src.yaml", file_index=0)) is a
    assert lookup.find(Result("m", file_path="other.yaml")) is None
