"""Inline YAML in, rendered YAML and origins out: the harness of the builtin
transformer tests, which call one transformer on resources loaded from text."""

from __future__ import annotations

from krmcheck.resource.resource import Resource
from krmcheck.tree.emit import emit_all
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping, Node, Sequence

RESOURCES = "base/resources.yaml"
KUSTOMIZATION = "overlay/kustomization.yaml"


def resources(text: str) -> list[Resource]:
    """The documents of ``text`` as resources, read from ``base/resources.yaml``."""
    out = []
    for doc in load_documents(text, RESOURCES):
        assert isinstance(doc, Mapping)
        out.append(Resource(doc))
    return out


def kustomization(text: str) -> Mapping:
    """``text`` as the overlay's kustomization, loaded as the builder loads one."""
    doc = load_documents(text, KUSTOMIZATION, by="kustomization", duplicate_keys=True)[0]
    assert isinstance(doc, Mapping)
    return doc


def entry(k: Mapping, field: str, index: int = 0) -> Mapping:
    """One item of a list field of a kustomization."""
    items = k.sequence(field)
    assert items is not None
    item = items.items[index]
    assert isinstance(item, Mapping)
    return item


def rendered(res: list[Resource]) -> str:
    return emit_all([r.node for r in res])


def node(res: Resource, *path: str) -> Node:
    """The node at ``path`` of a resource (mapping keys; a number enters a list)."""
    here: Node | None = res.node
    for step in path:
        if isinstance(here, Sequence) and step.isdigit():
            here = here.items[int(step)]
        elif isinstance(here, Mapping):
            here = here.items.get(step)
        else:
            here = None
    assert here is not None, f"no node at {'/'.join(path)}"
    return here


def at(n: Node) -> tuple[str, int, int, str]:
    """Where a node's writer is, and what it was."""
    o = n.origin
    return o.path, o.line, o.col, o.by
