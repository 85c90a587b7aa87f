"""Field specs: which fields of which kinds a transformer touches.

The default tables live in ``fieldspecs/*.yaml`` (data, not code). A path
is a ``/``-separated list of keys; a sequence met on the way is entered
element by element, as kustomize does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import yaml

from krmcheck.resource.resid import Gvk
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import FAST_LOADER
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Origin


@dataclass(frozen=True)
class FieldSpec:
    path: tuple[str, ...]
    group: str = ""
    version: str = ""
    kind: str = ""
    create: bool = False

    def matches(self, gvk: Gvk) -> bool:
        return ((not self.group or self.group == gvk.group)
                and (not self.version or self.version == gvk.version)
                and (not self.kind or self.kind == gvk.kind))

    @staticmethod
    def from_dict(d: dict) -> "FieldSpec":
        return FieldSpec(split_path(str(d.get("path", ""))), str(d.get("group") or ""),
                         str(d.get("version") or ""), str(d.get("kind") or ""),
                         bool(d.get("create", False)))


def split_path(path: str) -> tuple[str, ...]:
    """Split on ``/`` except where escaped as ``\\/``."""
    parts, cur, i = [], "", 0
    while i < len(path):
        c = path[i]
        if c == "\\" and i + 1 < len(path) and path[i + 1] == "/":
            cur += "/"
            i += 2
            continue
        if c == "/":
            parts.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    parts.append(cur)
    return tuple(p for p in parts if p)


@functools.lru_cache(maxsize=None)
def defaults(table: str) -> tuple[FieldSpec, ...]:
    """The default field specs of one table (``commonLabels``, ``images``...)."""
    text = Path(__file__).with_name("fieldspecs").joinpath(f"{table}.yaml").read_text()
    return tuple(FieldSpec.from_dict(d) for d in yaml.load(text, Loader=FAST_LOADER) or [])


Visit = Callable[[Mapping, str], None]


def visit(resource: Resource, spec: FieldSpec, fn: Visit, origin: Origin | None = None) -> None:
    """Call ``fn(parent, key)`` for each place the spec's path reaches in the
    resource. With ``spec.create``, missing mappings on the way are made
    (written by ``origin``) and ``fn`` is called even if the last key is absent.
    """
    if not spec.matches(resource.gvk):
        return
    _visit(resource.node, spec.path, spec.create, fn, origin)


def _visit(node: Node, path: tuple[str, ...], create: bool, fn: Visit, origin: Origin | None) -> None:
    if isinstance(node, Sequence):
        for item in node.items:
            _visit(item, path, create, fn, origin)
        return
    if not isinstance(node, Mapping) or not path:
        return
    is_seq = path[0].endswith("[]")
    key = path[0].removesuffix("[]")
    child = node.items.get(key)
    if is_seq and _is_null(child):
        # a step marked as a list turns a null met there into an empty list
        assert child is not None
        child = node.items[key] = Sequence([], child.origin, child.trail)
    if len(path) == 1:
        if key in node.items or create:
            fn(node, key)
        return
    if child is None or _is_null(child):
        if not create or origin is None or is_seq:
            return
        child = Mapping({}, origin)
        node.items[key] = child
    _visit(child, path[1:], create, fn, origin)


def _is_null(node: Node | None) -> bool:
    return isinstance(node, Scalar) and node.value is None


def meets_null_list(resource: Resource, spec: FieldSpec) -> bool:
    """Whether walking the spec would turn a null into an empty list (see
    ``_visit``); read without copying a shared tree."""
    return spec.matches(resource.gvk) and _meets_null_list(resource.node, spec.path)


def _meets_null_list(node: Node, path: tuple[str, ...]) -> bool:
    if isinstance(node, Sequence):
        return any(_meets_null_list(item, path) for item in node.view())
    if not isinstance(node, Mapping) or not path:
        return False
    child = node.view().get(path[0].removesuffix("[]"))
    if child is None or _is_null(child):
        return child is not None and path[0].endswith("[]")
    return _meets_null_list(child, path[1:])
