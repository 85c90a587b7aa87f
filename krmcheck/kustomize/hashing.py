"""The content hash kustomize appends to generated ConfigMap and Secret names.

What goes into the hash (kustomize's ``api/hasher``, measured against
kubectl's Kustomize v5.5.0):

- the kind, the ``data`` map, ``binaryData`` (ConfigMap, only when it is a
  mapping) or ``type`` and ``stringData`` (Secret, only when a mapping);
  a missing field counts as the empty string;
- not the name: kustomize looks the name up with a path spelled as a single
  field (``metadata/name``), finds nothing and always hashes ``""``, so two
  generators with equal content get the same suffix;
- not labels, annotations, namespace or ``immutable``.

The fields are serialised like Go's ``json.Marshal`` of a map (sorted keys,
no spaces, ``<``, ``>``, ``&``, U+2028 and U+2029 escaped), hashed with
SHA-256, and the first ten hex digits are made pronounceable-safe by
replacing ``0 1 3 a e`` with ``g h k m t`` (no vowels, so no words; no
digits that look like letters).
"""

from __future__ import annotations

import hashlib
import json

from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.scalars import json_number

_SAFE = str.maketrans("013ae", "ghkmt")
# Go's encoder escapes these even inside strings; Python's does not.
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
               "\u2028": "\\u2028", "\u2029": "\\u2029"}


class UnhashableKind(ValueError):
    """kustomize hashes other kinds from go-yaml's internal node structure
    (including source line numbers), which cannot be reproduced."""


def content_hash(resource: Resource) -> str:
    """The 10-character suffix kustomize gives ``resource``."""
    return encode(hex256(_go_json(_hash_input(resource))))


def hashed_name(name: str, resource: Resource) -> str:
    return f"{name}-{content_hash(resource)}"


def encode(hex_digest: str) -> str:
    """The first ten hex digits, with kustomize's character substitutions."""
    if len(hex_digest) < 10:
        raise ValueError("a content hash needs at least 10 hex digits")
    return hex_digest[:10].translate(_SAFE)


def hex256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _hash_input(resource: Resource) -> dict[str, object]:
    kind = resource.kind
    node = resource.node
    if kind == "ConfigMap":
        fields: dict[str, object] = {"kind": kind, "name": "", "data": _field(node, "data")}
        if isinstance(node.get("binaryData"), Mapping):
            fields["binaryData"] = _field(node, "binaryData")
        return fields
    if kind == "Secret":
        fields = {"kind": kind, "name": "", "type": _field(node, "type"),
                  "data": _field(node, "data")}
        if isinstance(node.get("stringData"), Mapping):
            fields["stringData"] = _field(node, "stringData")
        return fields
    raise UnhashableKind(f"kustomize cannot give a stable content hash to a {kind or 'resource without kind'}")


def _field(node: Mapping, key: str) -> object:
    """A top-level field as kustomize's hasher sees it: missing -> ""."""
    child = node.get(key)
    if child is None or (isinstance(child, Scalar) and child.value is None):
        return ""
    if isinstance(child, Scalar):
        # kustomize takes a scalar's source text, not its typed value
        return child.as_string()
    return _json_value(child)


def _json_value(node: Node) -> object:
    """The value after kustomize's YAML -> JSON -> Go interface{} round trip."""
    if isinstance(node, Mapping):
        return {k: _json_value(v) for k, v in node.items.items()}
    if isinstance(node, Sequence):
        return [_json_value(v) for v in node.items]
    assert isinstance(node, Scalar)
    value = node.value
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    # JSON numbers come back from Go as float64
    return json_number(float(value))


def _go_json(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=_unsupported)
    if any(c in text for c in _GO_ESCAPES):
        text = "".join(_GO_ESCAPES.get(c, c) for c in text)
    return text


def _unsupported(value: object) -> object:
    raise TypeError(f"cannot hash {type(value).__name__}")

