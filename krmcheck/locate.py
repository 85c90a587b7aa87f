"""Result -> Finding: the source line a person must edit, through provenance.

A Result names a resource (``resourceRef``, or ``file.path`` + ``index``) and
a field (``field.path`` in any spelling :mod:`krmcheck.tree.fieldpath`
accepts). Which resource follows kpt's conventions, here and for the
function runtime (:meth:`Locator.find`): a ref names a resource by kind,
name and namespace (``""`` and ``default`` alike) and, when it gives an
apiVersion, its group; the same apiVersion wins over another version of
the group, a current name over an earlier one (before ``namePrefix``, a
namespace or a suffix changed it). A file names the resource whose
``config.kubernetes.io/path`` and ``index`` annotations say so (what a
function's items carry), else the ``index``-th document of that source
file, else the file's first. The rendered node at that field carries the origin of whoever
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
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from krmcheck.resource.resid import Gvk, ResId
from krmcheck.resource.resource import Resource
from krmcheck.resource.wire import INDEX, LEGACY_INDEX, LEGACY_PATH, PATH, annotations_of
from krmcheck.results import Finding, ResourceRef, Result
from krmcheck.tree.node import Mapping, Node
from krmcheck.tree.origin import Location

if TYPE_CHECKING:  # imported when a finding is first located: a clean run has none
    from krmcheck.tree import fieldpath

# (kind, name, namespace), "" and "default" being one namespace
_Name = tuple[str, str, str]
_IdsOf = Callable[[Resource], Iterable[ResId]]
_ByName = dict[_Name, list[tuple[ResId, Resource]]]


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
        self.kustomization_file = kustomization_file or _norm(posixpath.join(root, "kustomization.yaml"))
        self._by_name: dict[_IdsOf, _ByName] = {}  # by current ids, by earlier ones
        self._by_path: dict[str, list[Resource]] | None = None
        self._by_annotation: dict[str, list[tuple[str, Resource]]] | None = None

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

    # --- which resource -------------------------------------------------------
    def find(self, result: Result) -> Resource | None:
        """The resource a Result is about: by resourceRef, then by file."""
        if result.resource_ref is not None:
            found = self._by_ref(result.resource_ref)
            if found is not None:
                return found
        if result.file_path:
            return self._by_file(result.file_path, result.file_index)
        return None

    def _by_ref(self, ref: ResourceRef) -> Resource | None:
        for same in (_same_api_version, names):
            for ids in (_current, _previous):
                found = self._named(ids, ref, same)
                if found is not None:
                    return found
        return None

    def _named(self, ids: _IdsOf, ref: ResourceRef, same: Callable[[ResourceRef, ResId], bool]) -> Resource | None:
        """The first resource (in output order) with one of its ``ids`` that
        ``same`` accepts; one in the ref's own spelling of the namespace first."""
        if ids not in self._by_name:
            self._by_name[ids] = _name_index(self.resources, ids)
        found = [(rid, r) for rid, r in self._by_name[ids].get(_name(ref.kind, ref.name, ref.namespace), ())
                 if same(ref, rid)]
        exact = [r for rid, r in found if rid.namespace == ref.namespace]
        return exact[0] if exact else found[0][1] if found else None

    def _by_file(self, path: str, position: int) -> Resource | None:
        for candidate in _unique([_norm(path), _norm(posixpath.join(self.root, path))]):
            found = self._in_file(candidate, position)
            if found is not None:
                return found
        return None

    def _in_file(self, path: str, position: int) -> Resource | None:
        if self._by_path is None or self._by_annotation is None:
            self._by_path = _documents_by_path(self.resources)
            self._by_annotation = _annotated_by_path(self.resources)
        annotated = self._by_annotation.get(path, [])
        for index, resource in annotated:
            if index == str(position):
                return resource
        documents = self._by_path.get(path, [])
        if 0 <= position < len(documents):
            return documents[position]
        if documents:  # an index past the file's documents settles for its first
            return documents[0]
        return annotated[0][1] if annotated else None

    def _fallback(self, result: Result) -> Location:
        return Location(_norm(result.file_path) if result.file_path else self.kustomization_file, 1, 1)


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


def _name_node(resource: Resource) -> Node | None:
    md = resource.node.items.get("metadata")
    return md.items.get("name") if isinstance(md, Mapping) else None


def _documents_by_path(resources: Sequence[Resource]) -> dict[str, list[Resource]]:
    """Each file's resources in document order.

    file.index counts documents in the file, so they are ordered by source
    line, not by the rendered (kind-sorted) order.
    """
    lines: dict[str, list[tuple[int, int, Resource]]] = {}
    for i, resource in enumerate(resources):
        for path, line in _lines(resource).items():
            lines.setdefault(path, []).append((line, i, resource))
    return {path: [r for _, _, r in sorted(found, key=lambda t: (t[0], t[1]))]
            for path, found in lines.items()}


def _lines(resource: Resource) -> dict[str, int]:
    """The line of the resource's document in every file that wrote it.

    The document's own node says it first; when a function restamped the
    whole resource, its trail or its ``metadata.name`` still tell.
    """
    nodes: list[Node] = [resource.node]
    name = _name_node(resource)
    if name is not None:
        nodes.append(name)
    lines: dict[str, int] = {}
    for node in nodes:
        for origin in (node.origin, *node.trail):
            lines.setdefault(origin.path, origin.line)
    return lines


def names(ref: ResourceRef, rid: ResId) -> bool:
    """Whether ``ref`` names the resource ``rid`` (kpt's rule): the same kind,
    name and namespace ("" and "default" alike), and the same group when the
    ref gives an apiVersion, whatever its version."""
    return (rid.gvk.kind == ref.kind and rid.name == ref.name
            and (rid.namespace or "default") == (ref.namespace or "default")
            and (not ref.apiVersion or Gvk.from_api_version(ref.apiVersion, ref.kind).group == rid.gvk.group))


def _same_api_version(ref: ResourceRef, rid: ResId) -> bool:
    return ref.apiVersion == rid.gvk.api_version and names(ref, rid)


def _name(kind: str, name: str, namespace: str) -> _Name:
    return (kind, name, namespace or "default")


def _current(resource: Resource) -> list[ResId]:
    rid = resource.id()
    if not rid.name and resource.metadata is not None:  # named by the API server: by its prefix
        prefix = resource.metadata.value("generateName")
        if isinstance(prefix, str) and prefix:
            return [rid._replace(name=prefix)]
    return [rid]


def _previous(resource: Resource) -> list[ResId]:
    """The ids a resource had before a prefix, namespace or suffix changed them:
    a function may report those."""
    return resource.prev_ids


def _name_index(resources: Sequence[Resource], ids: _IdsOf) -> _ByName:
    index: _ByName = {}
    for resource in resources:
        for rid in ids(resource):
            index.setdefault(_name(rid.gvk.kind, rid.name, rid.namespace), []).append((rid, resource))
    return index


def _annotated_by_path(resources: Sequence[Resource]) -> dict[str, list[tuple[str, Resource]]]:
    """(index annotation, resource) under each path annotation, in output order:
    where the items of a function say they are (kyaml's kioutil annotations,
    the legacy spelling too; a missing index is 0)."""
    found: dict[str, list[tuple[str, Resource]]] = {}
    for resource in resources:
        ann = annotations_of(resource.node)
        if ann is None:
            continue
        index = str(ann.value(INDEX) or ann.value(LEGACY_INDEX) or "0")
        paths = [_norm(str(p)) for p in (ann.value(PATH), ann.value(LEGACY_PATH)) if p]
        for path in _unique(paths):
            found.setdefault(path, []).append((index, resource))
    return found


def _norm(path: str) -> str:
    path = posixpath.normpath(path) if path else path
    return "" if path == "." else path


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
