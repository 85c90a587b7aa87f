"""kustomize's content hash suffix; every expected suffix was printed by
``kubectl kustomize`` (Kustomize v5.5.0) for the same content."""

from __future__ import annotations

import pytest

from krmcheck.kustomize.hashing import UnhashableKind, content_hash, encode, hashed_name
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping


def resource(text: str) -> Resource:
    node = load_documents(text, "r.yaml")[0]
    assert isinstance(node, Mapping)
    return Resource(node)


CM_X1 = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  x: '1'\n"


def test_configmap_with_data() -> None:
    assert content_hash(resource(CM_X1)) == "hmg6f82fh6"


def test_hashed_name_appends_with_a_dash() -> None:
    assert hashed_name("cm", resource(CM_X1)) == "cm-hmg6f82fh6"


def test_name_namespace_labels_annotations_and_immutable_do_not_count() -> None:
    # kubectl gave named-differently-hmg6f82fh6 for this one too
    other = resource("apiVersion: v1\nkind: ConfigMap\nimmutable: true\nmetadata:\n"
                     "  name: named-differently\n  namespace: ns\n  labels: {a: b}\n"
                     "  annotations: {c: d}\ndata:\n  x: '1'\n")
    assert content_hash(other) == "hmg6f82fh6"


def test_configmap_without_data_hashes_an_empty_string() -> None:
    assert content_hash(resource("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: empty\n")) \
        == "6ct58987ht"


def test_binary_data_counts() -> None:
    text = """\
apiVersion: v1
binaryData:
  bin.dat: AP/+Ymlu
data:
  A: "1"
  'B ': ' two'
  C: ""
  D: '"q"'
  export E: "5"
  f.txt: |
    hello
    world
  k2: |
    hello
    world
  u: ""
  v: =eq
  w: '"mis'''
  x: "1"
  "y": quoted
  z: single
kind: ConfigMap
metadata:
  name: cm
"""
    assert content_hash(resource(text)) == "bf9m98c274"


def test_go_json_escapes_html_and_line_separators() -> None:
    text = ('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: html\ndata:\n'
            '  a: "<b> & c"\n  u: "\u017c\u00f3\u0142w \U0001F422"\n  ls: "x\u2028y"\n'
            '  q: \'say "hi"\\n\'\n')
    assert content_hash(resource(text)) == "b45h9mkhgf"


@pytest.mark.parametrize("body, expected", [
    ("type: Opaque\ndata: {}\n", "46f8b28mk5"),
    ("type: Opaque\n", "8226t8dd99"),  # after a merge of two empty Secrets
    ("type: kubernetes.io/tls\nimmutable: true\ndata:\n  pw: c2VjcmV0\n", "5m8htcdmc8"),
    ("type: Opaque\ndata:\n  a: PGI+ICYgYw==\n", "bg8ccg7ftb"),
])
def test_secret_type_and_data_count(body: str, expected: str) -> None:
    text = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  labels: {l: '1'}\n" + body
    assert content_hash(resource(text)) == expected


def test_encode_replaces_vowels_and_lookalike_digits() -> None:
    assert encode("0123456789abcdef") == "gh2k456789"
    assert encode("aeaeaeaeae00") == "mtmtmtmtmt"
    with pytest.raises(ValueError):
        encode("abc")


def test_other_kinds_are_refused() -> None:
    with pytest.raises(UnhashableKind):
        content_hash(resource("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"))
