"""The kustomize-compatible emitter.

kustomize prints each resource through JSON and go-yaml v2: keys sorted with
go-yaml v2's key order, two-space indentation, block sequences not indented
under their key, strings quoted only where go-yaml v2 would read them as
another type, literal blocks for multi-line strings. libyaml's emitter
(which go-yaml's is a port of) makes the remaining style and folding choices.
"""

from __future__ import annotations

import functools
from typing import Any

import yaml

from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.scalars import format_float, needs_quotes

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"

_BaseDumper: type[Any]
try:
    _BaseDumper = yaml.CDumper  # type: ignore[attr-defined]
except AttributeError:  # pragma: no cover
    _BaseDumper = yaml.Dumper  # type: ignore[misc]


class _Dumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """Every scalar is implicitly typed: the style chosen below says it all."""

    def resolve(self, kind, value, implicit):  # type: ignore[no-untyped-def]
        if kind is yaml.ScalarNode:
            return _STR
        return _MAP if kind is yaml.MappingNode else _SEQ


def _go_v2_less(a: str, b: str) -> bool:
    """go-yaml v2's map key order (letters before digits runs, numbers by value)."""
    digits = False
    for i in range(min(len(a), len(b))):
        ca, cb = a[i], b[i]
        if ca == cb:
            digits = ca.isdigit()
            continue
        al, bl = ca.isalpha(), cb.isalpha()
        if al and bl:
            return ca < cb
        if al or bl:
            return al if digits else bl
        an = bn = 0
        if ca == "0" or cb == "0":
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and a[ai].isdigit():
            an = an * 10 + int(a[ai])
            ai += 1
        bi = i
        while bi < len(b) and b[bi].isdigit():
            bn = bn * 10 + int(b[bi])
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return ca < cb
    return len(a) < len(b)


def _cmp(a: str, b: str) -> int:
    if a == b:
        return 0
    return -1 if _go_v2_less(a, b) else 1


_KEY = functools.cmp_to_key(_cmp)


def sorted_keys(keys: list[str]) -> list[str]:
    # ASCII letters only: go-yaml's order is plain byte order (the common case)
    if "".join(keys).isalpha() and "".join(keys).isascii():
        return sorted(keys)
    return sorted(keys, key=_KEY)


def _str_node(s: str) -> yaml.ScalarNode:
    if needs_quotes(s):
        style = '"'
    elif "\n" in s:
        style = "|"
    else:
        style = None
    return yaml.ScalarNode(_STR, s, style=style)


def _to_yaml(node: Node) -> yaml.Node:
    if isinstance(node, Mapping):
        items = node.view()  # reading a share copies nothing
        return yaml.MappingNode(_MAP, [(_str_node(k), _to_yaml(items[k]))
                                       for k in sorted_keys(list(items))])
    if isinstance(node, Sequence):
        return yaml.SequenceNode(_SEQ, [_to_yaml(n) for n in node.view()])
    assert isinstance(node, Scalar)
    v = node.value
    if isinstance(v, str):
        return _str_node(v)
    if v is None:
        text = "null"
    elif v is True:
        text = "true"
    elif v is False:
        text = "false"
    elif isinstance(v, float):
        text = format_float(v)
    else:
        text = str(v)
    return yaml.ScalarNode(_STR, text, style=None)


def emit(node: Node) -> str:
    """One document as kustomize prints it (no ``---`` separator)."""
    if isinstance(node, Mapping) and not node.view():
        return "{}\n"
    text = yaml.serialize(_to_yaml(node), Dumper=_Dumper, allow_unicode=True, width=80, indent=2)
    # libyaml closes a document that ends in a keep-chomped block ("|+")
    # with "..."; go-yaml does not.
    return text[:-4] if text.endswith("\n...\n") else text


def emit_all(nodes: list[Node]) -> str:
    """A stream of documents separated by ``---`` lines, as kustomize prints it."""
    return "---\n".join(emit(n) for n in nodes)
