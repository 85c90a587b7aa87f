"""Finding the controller objects that say what is applied, and their roots.

The plain roots (kustomizations and manifests) that hold Flux
Kustomizations or Argo CD Applications are rendered; each such object whose
source is this repository becomes a root. A Flux root is rendered in turn
(with its substitution), since the objects it applies may be controller
objects too: ``clusters/prod`` applies ``apps`` and ``infrastructure``.
A controller root replaces the plain roots it reads.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from krmcheck import discover
from krmcheck.gitops import argocd, artifact, flux, helmrelease
from krmcheck.gitops.markers import has_marker as _has_marker
from krmcheck.gitops.markers import mentions_controllers as _mentions_controllers
from krmcheck.gitops.objects import Objects
from krmcheck.gitops.render import render
from krmcheck.gitops.root import ControllerRoot
from krmcheck.gitops.source import FLUX_SYSTEM, same_repository
from krmcheck.kustomize.target import Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Scalar, lookup
from krmcheck.tree.node import Sequence as SequenceNode
from krmcheck.tree.origin import Location

MAX_ROOTS = 10_000  # a bound on what a repository can make discovery render


class Found(NamedTuple):
    roots: tuple[ControllerRoot, ...]
    replaced: frozenset[Path]  # the plain roots the controller roots read


BuilderFor = Callable[[str], Builder]  # a builder for a load restrictor


def find(plain_roots: Sequence[Path], infos: dict[Path, discover.KustomizationInfo],
         builder_for: BuilderFor, files: Files, urls: frozenset[str], top: Path,
         plain_builder: Callable[[Path], Builder] | None = None) -> Found:
    """``top``: the directory the objects' paths are relative to (the source's
    root); ``plain_builder``: the builder of a plain root, as it is checked
    (default: ``builder_for("")``)."""
    objects = Objects(top=top, files=files)
    # (object, whether a controller root rendered it): what a controller
    # applies (substituted, amended) wins over the same object read plainly
    pending: list[tuple[Resource, bool]] = []
    for plain in plain_roots:
        if _mentions_controllers(plain, infos):
            resources = _quietly(lambda: _plain(plain_builder or (lambda _: builder_for("")), plain))
            objects.add(resources)
            pending += [(r, False) for r in resources if _is_controller(r)]
    # keyed by name and the file that defines the object: two clusters'
    # directories may each hold a flux-system/apps
    made: dict[tuple[str, str], ControllerRoot] = {}
    applied: set[tuple[str, str]] = set()  # made from a controller root's rendering
    # where each root's object is written: a controller's namePrefix or
    # targetNamespace renames an object, whose plain reading then names nothing applied
    written: dict[tuple[str, str], Location] = {}
    while pending and len(made) < MAX_ROOTS:
        res, via_controller = pending.pop(0)
        made_now = _root_of(res, top, files, objects, urls)
        key = (made_now.name, made_now.origin.path) if made_now is not None else ("", "")
        if made_now is None or key in applied or (key in made and not via_controller):
            continue
        root = _with_reads(made_now, infos, _source_files(res, objects, files))
        made[key] = root
        written[key] = res.node.origin.location
        if via_controller:
            applied.add(key)
        if root.helm is not None:
            continue  # a chart is rendered when its root is checked, never to discover
        if any(_has_marker(p) for p in root.reads if os.path.isfile(p)):
            rendered = _quietly(lambda: render(builder_for(root.restrictor), root).resources)
            objects.add(rendered)
            pending += [(r, True) for r in rendered if _is_controller(r)]
    renamed = {written[k] for k in applied}
    made = {k: r for k, r in made.items() if k in applied or written[k] not in renamed}
    # a chart's root replaces nothing: its objects are checked where they are written
    replaced = {p for r in made.values() if r.helm is None for p in (r.directory, *r.reads)}
    return Found(tuple(sorted(_qualified(made), key=lambda r: r.name)), frozenset(replaced))


def _qualified(made: dict[tuple[str, str], ControllerRoot]) -> list[ControllerRoot]:
    """Roots whose objects share a name (one per cluster directory) are told
    apart by the directory of the file that defines each: ``flux:NS/NAME@clusters/prod``."""
    count = Counter(name for name, _ in made)
    return [root if count[name] == 1 else
            dataclasses.replace(root, name=f"{name}@{posixpath.dirname(path) or '.'}")
            for (name, path), root in made.items()]


def _plain(builder_of: Callable[[Path], Builder], root: Path) -> list[Resource]:
    builder = builder_of(root)
    return builder.load_manifest(root) if os.path.isfile(root) else builder.build(root)


def _quietly(make: Callable[[], list[Resource]]) -> list[Resource]:
    """A root that does not build says so when it is checked; discovery goes on."""
    try:
        return make()
    except (BuildError, RecursionError):
        return []
    except Exception:  # noqa: BLE001 - the check of that root reports it as an internal error
        return []


def _is_controller(res: Resource) -> bool:
    return flux.is_kustomization(res) or helmrelease.is_helm_release(res) or argocd.is_application(res)


def _root_of(res: Resource, top: Path, files: Files, objects: Objects,
             urls: frozenset[str]) -> ControllerRoot | None:
    if helmrelease.is_helm_release(res):
        return helmrelease.make_root(res, top, files, objects,
                                     lambda ns, n, near: _ours(ns, n, objects, urls, near))
    if flux.is_kustomization(res):
        kind, namespace, name = flux.source_name(res)
        if kind == "ExternalArtifact":
            path = artifact.path_in_source(res, name, namespace, objects,
                                           lambda ns, n, near: _ours(ns, n, objects, urls, near))
            return flux.make_root(res, top, files, objects, path) if path is not None else None
        if kind != "GitRepository" or not _ours(namespace, name, objects, urls, res.node.origin.path):
            return None
        return flux.make_root(res, top, files, objects)
    source = argocd.source_of(res, urls)
    return argocd.make_root(res, source, top, files) if source is not None else None


def _ours(namespace: str, name: str, objects: Objects, urls: frozenset[str], near: str) -> bool:
    """The GitRepository ``flux bootstrap`` makes (flux-system) is this
    repository whatever its URL says (a checkout's origin may be a mirror, a
    fork or a path); another is when its URL is one of this repository's."""
    if name == FLUX_SYSTEM:
        return True
    repo = objects.get("GitRepository", namespace, name, near)
    url = lookup(repo, ["spec", "url"]) if repo is not None else None
    if isinstance(url, Scalar) and isinstance(url.value, str) and urls:
        return same_repository(url.value, urls)
    return False


def _with_reads(root: ControllerRoot, infos: dict[Path, discover.KustomizationInfo],
                more: set[Path] = set()) -> ControllerRoot:  # noqa: B006 - never changed
    """Every file the root's rendering reads (for ignore comments, changed
    files and the plain roots it replaces): its directory's, the components
    the controller object adds to it, and ``more`` (the files of the objects
    its source is read through)."""
    d = root.directory
    if root.helm is not None or not os.path.isdir(d):
        return dataclasses.replace(root, reads=tuple(sorted(set(root.reads) | more))) if more else root
    if discover.find_kustomization(d):  # (two kustomization files are the build's error to report)
        reads = discover.reads(d, infos)
    else:
        reads = set()
        for rel in flux.scan(d):
            p = (d / rel).resolve()
            reads |= discover.reads(p, infos) | {p}
    for component in _components(root):
        c = (d / component).resolve()
        reads |= {c} | discover.reads(c, infos)
    return dataclasses.replace(root, reads=tuple(sorted(reads | more)))


def _components(root: ControllerRoot) -> list[str]:
    """The components a Flux Kustomization (``spec.components``) or an Argo CD
    Application (``kustomize.components`` of its source) adds, relative to
    the directory it renders."""
    found: list[str] = []
    for at in (["spec", "components"], ["spec", "source", "kustomize", "components"]):
        listed = lookup(root.obj, at)
        if isinstance(listed, SequenceNode):
            found += [n.value for n in listed.items if isinstance(n, Scalar) and isinstance(n.value, str)]
    return found


def _source_files(res: Resource, objects: Objects, files: Files) -> set[Path]:
    """The file of the source object a Flux Kustomization reads its
    repository through (a GitRepository, an ExternalArtifact): changing it
    can change what the root is."""
    if not flux.is_kustomization(res):
        return set()
    kind, namespace, name = flux.source_name(res)
    source = objects.get(kind, namespace, name, res.node.origin.path) if kind else None
    if source is None or not source.origin.path:
        return set()
    return {(files.repo_root / source.origin.path).resolve()}
