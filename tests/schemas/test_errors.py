"""A jsonschema error leads to the node, and line, it is about."""

from __future__ import annotations

from typing import Any

import jsonschema

from krmcheck.schemas.errors import error_node, error_parts, unexpected_keys
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "ports": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "properties": {"port": {"type": "integer"}, "protocol": {"enum": ["TCP", "UDP"]}}}},
    },
    "additionalProperties": False,
}
TEXT = """\
name: web
ports:
- port: 80
- port: http
  protocol: SCTP
  color: blue
  size: 3
extra: 1
"""


def _errors() -> tuple[Mapping, dict[tuple[str, str], jsonschema.ValidationError]]:
    [doc] = load_documents(TEXT, "svc.yaml")
    assert isinstance(doc, Mapping)
    found = jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc.to_data())
    return doc, {(str(e.validator), "/".join(map(str, e.absolute_path))): e for e in found}


def test_unexpected_keys_are_those_the_schema_does_not_name_in_map_order() -> None:
    _, errors = _errors()
    assert unexpected_keys(errors["additionalProperties", "ports/1"]) == ["color", "size"]
    assert unexpected_keys(errors["additionalProperties", ""]) == ["extra"]
    assert unexpected_keys(errors["type", "ports/1/port"]) == []


def test_error_parts_go_on_to_the_first_unexpected_key() -> None:
    _, errors = _errors()
    assert error_parts(errors["additionalProperties", "ports/1"]) == ["ports", 1, "color"]
    assert error_parts(errors["additionalProperties", ""]) == ["extra"]
    assert error_parts(errors["enum", "ports/1/protocol"]) == ["ports", 1, "protocol"]


def test_error_node_is_at_the_line_to_edit() -> None:
    doc, errors = _errors()
    assert error_node(doc, errors["type", "ports/1/port"]).origin.location == ("svc.yaml", 4, 3)
    assert error_node(doc, errors["enum", "ports/1/protocol"]).origin.location == ("svc.yaml", 5, 3)
    assert error_node(doc, errors["additionalProperties", "ports/1"]).origin.location == ("svc.yaml", 6, 3)
    assert error_node(doc, errors["additionalProperties", ""]).origin.location == ("svc.yaml", 8, 1)


def test_error_node_of_the_whole_document_is_the_document() -> None:
    [doc] = load_documents("- a\n", "list.yaml")
    [error] = jsonschema.Draft202012Validator({"type": "object"}).iter_errors(doc.to_data())
    assert error_parts(error) == []
    assert error_node(doc, error) is doc
