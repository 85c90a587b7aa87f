"""Where a jsonschema error is: the keys that lead to it, and its node.

Every file krmcheck checks with jsonschema (resources, ``.krmcheck.yaml``,
function catalogs) is a provenance tree, so an error's path leads to the
node, and so to the line, that is wrong. jsonschema reports an unknown key
(``additionalProperties``) at the map that holds it; the line a person
edits is the key's own, so the path goes one step further, to the first key
the schema does not name. Each caller words its own message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from krmcheck.tree import fieldpath
from krmcheck.tree.node import Node

if TYPE_CHECKING:  # jsonschema is imported by whoever validates
    import jsonschema


def unexpected_keys(error: jsonschema.ValidationError) -> list[str]:
    """The keys an ``additionalProperties`` error is about, in the map's order:
    those its schema's ``properties`` do not name. None for any other error."""
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return []
    known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
    return [k for k in error.instance if k not in known]


def error_parts(error: jsonschema.ValidationError) -> list[str | int]:
    """The path of the value an error is about: jsonschema's path, then the
    first unexpected key."""
    return list(error.absolute_path) + unexpected_keys(error)[:1]


def error_node(root: Node, error: jsonschema.ValidationError) -> Node:
    """The node of ``root`` (the tree that was validated) an error is about;
    as deep as the path exists."""
    node, _ = fieldpath.walk(root, fieldpath.from_parts(error_parts(error)))
    return node
