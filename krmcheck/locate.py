"""Result -> Finding: the source line a person must edit, through provenance.

A Result names a resource (``resourceRef``, or ``file.path`` + ``index``) and
a field (``field.path`` in any spelling :mod:`krmcheck.tree.fieldpath`
accepts). Which resource follows kpt's conventions, here and for the
function runtime (:mod:`krmcheck.resource.lookup`). The rendered node at
that field carries the origin of whoever
wrote it last (a base, a patch, an ``images:`` entry...) and the trail of
earlier writers; the Finding gets both.

Choices where a Result says too little:

* a field that does not exist points at the nearest existing parent (a
  missing ``securityContext`` is fixed by editing the ``spec`` above it);
* a Result with no field, or an unparsable one, points at the resource's
  ``metadata.name`` (the line that identifies it), else its first line;
* a Result about no resource we rendered points at line 1 of its
  ``file.path`` when it has one, else at line 1 of the root's kustomization
  file (``kustomization_file``, by default ``ROOT/kustomization.yaml``): the
  file that asked for the check is the one place a reader can start from.

:class:`Locator` indexes the resources once for the many Results of a root;
:func:`locate` is the one-off form.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Iterable, Sequence

from krmcheck.resource.lookup import Lookup, name_node, norm
from krmcheck.resource.resource import Resource
from krmcheck.results import Finding, ResourceRef, Result
from krmcheck.tree.node import Node
from krmcheck.tree.origin import Location

if TYPE_CHECKING:  # imported when a finding is first located: a clean run has none
    from krmcheck.tree import fieldpath

def locate(result: Result, resources: Sequence[Resource], root: str,
           kustomization_file: str = "") -> Finding:
    """The Finding for ``result`` among the rendered ``resources`` of ``root``."""
    return Locator(resources, root, kustomization_file).locate(result)


def locate_all(results: Iterable[Result], resources: Sequence[Resource], root: str,
               kustomization_file: str = "") -> list[Finding]:
    locator = Locator(resources, root, kustomization_file)
    return [locator.locate(r) for r in results]


class Locator:
    """Resources of one root, indexed by id and by source file."""

    def __init__(self, resources: Sequence[Resource], root: str, kustomization_file: str = "") -> None:
        self.resources = resources
        self.root = root
        self.kustomization_file = kustomization_file or norm(posixpath.join(root, "kustomization.yaml"))
        self.lookup = Lookup(resources, root)

    def locate(self, result: Result) -> Finding:
        resource = self.find(result)
        if resource is None:
            return Finding(result, self.root, self._fallback(result))
        node = _target(resource, result.field_path)
        return Finding(result, self.root, node.origin.location, node.trail, source_id(resource))

    def node(self, resource: Resource, field_path: str) -> Node:
        """The node of ``resource`` a Result with ``field_path`` is located
        at (the deepest that exists and has a known origin)."""
        return _target(resource, field_path)

    # --- which resource (krmcheck.resource.lookup) ------------------------------
    def find(self, result: Result) -> Resource | None:
        """The resource a Result is about: by resourceRef, then by file."""
        return self.lookup.find(result)

    def _fallback(self, result: Result) -> Location:
        return Location(norm(result.file_path) if result.file_path else self.kustomization_file, 1, 1)


def source_id(resource: Resource) -> str:
    """``Kind/namespace/name`` as the resource's source file names it."""
    rid = resource.orig_id()
    return str(ResourceRef(rid.gvk.api_version, rid.gvk.kind, rid.name, rid.namespace))


def _target(resource: Resource, field_path: str) -> Node:
    """The deepest node of ``field_path`` that exists and has a known origin."""
    from krmcheck.tree import fieldpath

    steps: tuple[fieldpath.Step, ...] = ()
    if field_path:
        try:
            steps = fieldpath.parse(field_path)
        except ValueError:
            steps = ()
    chain = fieldpath.trace(resource.node, steps) if steps else _name_chain(resource)
    # Nodes made by code without an origin (line 0) defer to their parent.
    for node in reversed(chain):
        if node.origin.line > 0:
            return node
    return chain[-1]


def _name_chain(resource: Resource) -> list[Node]:
    from krmcheck.tree import fieldpath

    return fieldpath.trace(resource.node, (fieldpath.key("metadata"), fieldpath.key("name")))
