"""Finding the controller objects that say what is applied, and their roots.

The plain roots (kustomizations and manifests) that hold Flux
Kustomizations or Argo CD Applications are rendered; each such object whose
source is this repository becomes a root. A Flux root is rendered in turn
(with its substitution), since the objects it applies may be controller
objects too: ``clusters/prod`` applies ``apps`` and ``infrastructure``.
A controller root replaces the plain roots it reads.

A root's identity is its object and the tree it was found in (the plain
root its chain of controller roots starts at): one file applied by two
clusters' trees with different results (a tenant patched per cluster,
other cluster variables) is two roots. What a controller applies wins over
the same object read plainly, and the roots found through a plain reading
that lost go with it.

ConfigMaps and Secrets count as in the cluster only when a controller root
applies them (``objects.py``); where one was asked for before the root that
applies it was rendered, discovery runs again with what the first pass found
applied.
"""

from __future__ import annotations

import dataclasses
import json
import os
import posixpath
import re
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import yaml

from krmcheck import discover
from krmcheck.git import Checkout, checkout
from krmcheck.gitops import appset, argocd, artifact, flux, helmrelease, instance, oci, resourceset, sourceignore
from krmcheck.gitops.envsubst import Unknown, Variable
from krmcheck.gitops.markers import has_marker as _has_marker
from krmcheck.gitops.markers import mentions_controllers as _mentions_controllers
from krmcheck.gitops.objects import Objects
from krmcheck.gitops.render import render
from krmcheck.gitops.root import ARGOCD, FLUX, FLUX_HELM, ControllerRoot
from krmcheck.gitops.source import FLUX_SYSTEM, describe, elsewhere, normalise, same_repository
from krmcheck.gitops.sourceignore import SourceIgnore
from krmcheck.kustomize.kustomization import FILENAMES as KUSTOMIZATION_FILES
from krmcheck.kustomize.target import Builder
from krmcheck.resource.errors import BuildError, NeedsNetwork
from krmcheck.resource.files import Files, OutsideRoot
from krmcheck.resource.resource import Resource
from krmcheck.scope import PathPatterns
from krmcheck.tree.load import FAST_LOADER
from krmcheck.tree.node import Mapping, Node, Scalar, lookup
from krmcheck.tree.node import Sequence as SequenceNode
from krmcheck.tree.origin import Location, Origin

MAX_ROOTS = 10_000  # a bound on what a repository can make discovery render
MAX_PASSES = 3  # discovery runs again while objects asked for turn out to be applied later


# where a flux-instance chart release writes its sync path inline
_RELEASE_SYNC_PATH = ["spec", "values", "instance", "sync", "path"]


class Found(NamedTuple):
    roots: tuple[ControllerRoot, ...]
    replaced: frozenset[Path]  # the plain roots the controller roots read
    notes: tuple[tuple[str, Location], ...] = ()  # why objects that look like roots are not
    # files the scan for controller objects did not read, and where it ran out of time
    refused: tuple[discover.Refusal, ...] = ()


BuilderFor = Callable[[str], Builder]  # a builder for a load restrictor


def find(plain_roots: Sequence[Path], infos: dict[Path, discover.KustomizationInfo],
         builder_for: BuilderFor, files: Files, urls: frozenset[str], top: Path,
         plain_builder: Callable[[Path], Builder] | None = None,
         cluster_objects: PathPatterns | None = None,
         lifted: Callable[[Builder], Builder | None] = lambda _: None) -> Found:
    """``top``: the directory the objects' paths are relative to (the source's
    root); ``plain_builder``: the builder of a plain root, as it is checked
    (default: ``builder_for("")``); ``cluster_objects``: files whose
    ConfigMaps and Secrets are in the cluster although no root applies them;
    ``lifted``: the builder a plain root's check builds with again when the
    load restrictor refused a file (krmcheck.pipeline.render.lifted)."""
    context = _Context(infos, builder_for, plain_builder or (lambda _: builder_for("")), files, urls, top,
                       checkout(files.repo_root), lifted)
    seen: Objects | None = None
    read = frozenset(f for info in infos.values() for f in info.files)
    for _ in range(MAX_PASSES):
        discovery = _Discovery(context, Objects(top=top, files=files, listed=cluster_objects,
                                                scan=seen.scan if seen is not None else None, also=read))
        if seen is not None:
            discovery.objects.seed(seen)
        discovery.run(plain_roots)
        if not discovery.objects.late():
            break
        seen = discovery.objects
    scan = discovery.objects.scan
    found = discovery.found()
    return found._replace(refused=tuple(dict.fromkeys(scan.refused))) if scan is not None else found


class _Context(NamedTuple):
    infos: dict[Path, discover.KustomizationInfo]
    builder_for: BuilderFor
    plain_builder: Callable[[Path], Builder]
    files: Files
    urls: frozenset[str]
    top: Path
    checkout: Checkout
    lifted: Callable[[Builder], Builder | None]


@dataclasses.dataclass(eq=False)
class _Entry:
    """A root discovery made, where it came from, and what it looks like."""

    root: ControllerRoot
    via_controller: bool  # found in what a controller root applies (not read plainly)
    written: Location  # where its object is written
    fingerprint: str  # the object as applied, and its variables: two trees may differ
    parent: _Entry | None
    alive: bool = True

    @property
    def key(self) -> tuple[str, str]:
        return (self.root.name, self.root.origin.path)


class _Pending(NamedTuple):
    res: Resource
    via_controller: bool
    tree: str
    parent: _Entry | None


class _Discovery:
    def __init__(self, context: _Context, objects: Objects) -> None:
        self.c = context
        self.objects = objects
        self.entries: list[_Entry] = []
        self.by_key: dict[tuple[str, str], list[_Entry]] = {}
        self.notes: dict[str, tuple[str, Location]] = {}
        self.ignores: dict[tuple[str | None, Location | None], SourceIgnore] = {}
        self.branches = frozenset(b for b in (context.checkout.branch, context.checkout.default_branch) if b)
        self._pushed: list[tuple[re.Pattern[str], oci.Pushed]] | None = None  # artifacts the repository pushes
        self.kustomization_files: dict[Path, str] = {}  # plain roots of Flux objects only -> shown
        self.application_files: dict[Path, str] = {}  # plain roots of Argo CD objects, none of Flux's -> shown
        self._helmfile: list[oci.Sync] | None = None  # what helmfile releases of the flux-instance chart sync
        self._copies: dict[int, tuple[Builder, Builder]] = {}  # builder -> the copy discovery builds with
        # the sources a FluxInstance's sync makes (flux-system, or the
        # instance's namespace, or its sync.name): the repository, as flux-system is
        self.sync_sources: set[tuple[str, str]] = set()
        self.unknown_paths: set[int] = set()  # id() of spec.path values holding unknowable variables
        # id() of postBuild.substitute values holding unknowable variables: the
        # child's variable is unknown too, whatever text substitution left in it
        self.unknown_values: set[int] = set()
        self.copied: dict[str, str] = {}  # a flux-system source's file -> where another repository's copy lies
        self.beside: dict[str, bool] = {}  # a flux-system source's file -> whether its sync is written in it
        self.left_over: list[tuple[str, Location, str]] = []  # Kustomizations their own source leaves out
        self._restrictor: str | None = None  # what Argo CD builds with (its kustomize.buildOptions)
        self._globbing: bool | None = None  # the ApplicationSet controller's new git file globbing

    def run(self, plain_roots: Sequence[Path]) -> None:
        pending: deque[_Pending] = deque()
        plain: list[tuple[Path, list[Resource]]] = []
        for p in plain_roots:
            if _mentions_controllers(p, self.c.infos):
                resources = _quietly(lambda: _plain(self.c.plain_builder, p, self._offline, self.c.lifted))
                self.objects.add(resources)
                plain.append((p, resources))
        self.branches |= self._bootstrap_branches()
        for p, resources in plain:
            tree = self.c.files.display(p)
            pending += [_Pending(r, False, tree, None) for r in resources if _is_controller(r)]
            if _flux_only(resources):
                self.kustomization_files[p] = tree
            elif any(argocd.is_application(r) or appset.is_application_set(r) for r in resources):
                self.application_files[p] = tree
        for item, root in self._helmfile_roots():
            entry = self._add(item, root)
            if entry is not None:
                pending += self._children(entry)
        while pending and len(self.entries) < MAX_ROOTS:
            item = pending.popleft()
            if item.parent is not None and not item.parent.alive:
                continue  # found through a reading that lost to a controller's
            for root in self._roots_of(item):
                entry = self._add(item, root)
                if entry is not None:
                    pending += self._children(entry)

    def _bootstrap_branches(self) -> frozenset[str]:
        """The branches the ``flux-system`` GitRepositories follow: what
        ``flux bootstrap`` syncs is this repository, at that branch."""
        found = set()
        for (kind, _, name), nodes in self.objects.found.items():
            if kind == "GitRepository" and name == FLUX_SYSTEM:
                for node in nodes:
                    branch = lookup(node, ["spec", "ref", "branch"])
                    if isinstance(branch, Scalar) and isinstance(branch.value, str) and branch.value:
                        found.add(branch.value)
        return frozenset(found)

    def _add(self, item: _Pending, root: ControllerRoot) -> _Entry | None:
        entry = _Entry(root, item.via_controller, item.res.node.origin.location, _fingerprint(root), item.parent)
        same = [e for e in self.by_key.get(entry.key, []) if e.alive]
        if item.via_controller:
            applied = [e for e in same if e.via_controller]
            if any(e.fingerprint == entry.fingerprint or e.root.tree == root.tree for e in applied):
                return None
            for e in same:
                if not e.via_controller:
                    self._drop(e)
        elif same:
            if any(e.via_controller or e.fingerprint == entry.fingerprint or e.root.tree == root.tree
                   for e in same):
                return None
        entry.root = _with_reads(root, self.c.infos, _source_files(item.res, self.objects, self.c.files))
        self.entries.append(entry)
        self.by_key.setdefault(entry.key, []).append(entry)
        return entry

    def _offline(self, builder: Builder) -> Builder:
        """The copy of ``builder`` discovery builds with (``Builder.offline_copy``), one per builder."""
        kept = self._copies.get(id(builder))
        if kept is None or kept[0] is not builder:
            kept = self._copies[id(builder)] = (builder, builder.offline_copy())
        return kept[1]

    def _drop(self, entry: _Entry) -> None:
        entry.alive = False
        for e in self.entries:
            if e.alive and e.parent is entry:
                self._drop(e)

    def _children(self, entry: _Entry) -> list[_Pending]:
        root = entry.root
        if root.helm is not None or root.elsewhere:
            return []  # a chart is rendered when its root is checked, never to discover
        if not any(_has_marker(p) for p in root.reads if os.path.isfile(p)):
            return []
        unknown: list[frozenset[int]] = []

        def make(b: Builder) -> list[Resource]:
            out = render(b, root)
            unknown.append(out.unknown)
            return out.resources

        rendered = _quietly(lambda: _lenient(self._offline(self.c.builder_for(root.restrictor)), make))
        self.objects.add(rendered, root.tree)
        if unknown:
            # a child's spec.path that holds a variable whose value the
            # repository cannot show (from an encrypted Secret): not undefined
            for r in rendered:
                for path in (lookup(r.node, ["spec", "path"]), lookup(r.node, _RELEASE_SYNC_PATH)):
                    if path is not None and id(path) in unknown[-1]:
                        self.unknown_paths.add(id(path))
                inline = lookup(r.node, ["spec", "postBuild", "substitute"])
                if isinstance(inline, Mapping):
                    self.unknown_values.update(id(v) for v in inline.items.values() if id(v) in unknown[-1])
        return [_Pending(r, True, root.tree, entry) for r in rendered if _is_controller(r)]

    # --- a controller object's roots -----------------------------------------------

    def _roots_of(self, item: _Pending) -> list[ControllerRoot]:
        res = item.res
        if appset.is_application_set(res):
            return self._application_set(res, item.tree)
        if resourceset.is_resource_set(res):
            return self._resource_set(item)
        if res.kind in _OPERATOR_KINDS and res.api_version.startswith(_OPERATOR_GROUP):
            return self._sync_roots(res, item.tree)
        root = self._root_of(res, item.tree)
        if root is not None and root.variables is not None and self.unknown_values:
            root = _unknown_inline(root, res, self.unknown_values)
        path = lookup(res.node, ["spec", "path"])
        if root is not None and path is not None and id(path) in self.unknown_paths and \
                isinstance(path, Scalar) and not os.path.isdir(root.directory):
            root = dataclasses.replace(root, elsewhere=(
                f"its spec.path {path.value!r} holds a variable whose value comes from a source the "
                f"repository cannot show (an encrypted Secret, an object it does not hold): what it "
                f"applies is not known here"))
        roots = [root] if root is not None else []
        if helmrelease.is_helm_release(res):
            roots += self._sync_roots(res, item.tree, item.via_controller)
        return roots

    def _resource_set(self, item: _Pending) -> list[ControllerRoot]:
        """The roots of what a ResourceSet makes (its Flux Kustomizations,
        HelmReleases, a FluxInstance's sync...); the objects it makes count
        as the repository's. Why some are not known, the check of the root
        that applies the ResourceSet says (resourceset.applied)."""
        res = item.res
        providers = self.objects.of_kind(resourceset.PROVIDER, res.namespace, res.node.origin.path)
        made = resourceset.expand(res, providers).resources
        if not made:  # (the sync of a flux-instance release it writes plainly, as before)
            return self._sync_roots(res, item.tree)
        self.objects.add([r for r in made if not resourceset.from_cluster(r)],
                         item.tree if item.via_controller else None)
        return [root for r in made if _is_controller(r) for root in self._roots_of(item._replace(res=r))]

    def _sync_roots(self, res: Resource, tree: str, substituted: bool = True) -> list[ControllerRoot]:
        """The cluster's sync a FluxInstance defines (the object, the
        flux-instance chart's release, or either inside a ResourceSet): the
        ``flux-system`` Kustomization the operator makes, as a root. A sync
        path that still holds a ``${VAR}`` is not followed where nothing
        could fill it here: in a release read as written (not
        ``substituted`` by a Flux Kustomization that applies it), where it
        is each cluster's, filled by what applies the file (a
        Kustomization's postBuild, a bootstrap that runs envsubst); or where
        the variable's value comes from a source the repository cannot show."""
        objects = self.objects
        nested = oci.resource_set_resources(res.node) if res.kind == "ResourceSet" else [res.node]
        path = lookup(res.node, _RELEASE_SYNC_PATH)
        fillable = substituted and not (path is not None and id(path) in self.unknown_paths)
        instances = [n for n in nested if n.value("kind") == "FluxInstance"]
        releases = [n for n in nested if n.value("kind") == "HelmRelease"]

        def configmap(namespace: str, name: str, near: str) -> Mapping | None:
            return objects.get("ConfigMap", namespace, name, near)

        out = []
        for sync in oci.instance_syncs(instances, releases, configmap, self._chart_url(nested), self._applied_in):
            if not fillable and flux.PLACEHOLDER.search(sync.path):
                continue
            found = self._sync_root(sync, tree)
            if found is not None:
                out.append(found[1])
        return out

    def _sync_root(self, sync: oci.Sync, tree: str) -> tuple[Resource, ControllerRoot] | None:
        """The sync's Kustomization, the instance's patches applied to it
        (not to what it applies), and its root."""
        if sync.kind not in ("GitRepository", "OCIRepository") or not isinstance(sync.origin, Node):
            return None
        kustomization, problems = instance.sync_kustomization(sync)
        if kustomization is None:
            return None
        made = Resource(kustomization)
        name = sync.name or FLUX_SYSTEM
        self.sync_sources.add((sync.namespace, name))
        if sync.kind == "OCIRepository":
            root = self._oci_root(made, sync.namespace, name, tree, from_sync=sync.url)
        elif same_repository(sync.url, self.c.urls) or not self.c.urls or self._holds(sync.path):
            # this repository by its URL, or (a clone of a mirror or a
            # fork) by holding the directory the sync applies
            root = self._root_of(made, tree)
        else:
            root = None
        if root is None:
            return None
        return made, dataclasses.replace(root, source=f"{root.source} (the sync of the FluxInstance in {sync.where})",
                                         problems=root.problems + tuple(problems))

    def _helmfile_syncs(self) -> list[oci.Sync]:
        if self._helmfile is None:
            self._helmfile = oci.helmfile_syncs(self.c.top, self.c.files.display)
        return self._helmfile

    def _helmfile_roots(self) -> list[tuple[_Pending, ControllerRoot]]:
        """The sync a helmfile release of the flux-instance chart defines
        (a bootstrap), where no FluxInstance or release of the chart in the
        repository defines one."""
        syncs = self._helmfile_syncs()
        if not syncs or self._instance_syncs(helmfiles=False):
            return []
        out = []
        for sync in syncs:
            tree = sync.where
            found = self._sync_root(sync, tree)
            if found is not None:
                made, root = found
                out.append((_Pending(made, False, tree, None), root))
        return out

    def _holds(self, path: str) -> bool:
        inside = posixpath.normpath(path.strip().lstrip("/") or ".")
        return inside not in (".", "..") and not inside.startswith("../") and (self.c.top / inside).is_dir()

    def _chart_url(self, nested: list[Mapping]) -> Callable[[str, str, str], str]:
        def chart_url(namespace: str, name: str, near: str) -> str:
            repo = self.objects.get("OCIRepository", namespace, name, near) or next(
                (r for r in nested if r.value("kind") == "OCIRepository" and _name_of(r) == name), None)
            url = lookup(repo, ["spec", "url"]) if repo is not None else None
            return url.value if isinstance(url, Scalar) and isinstance(url.value, str) else ""
        return chart_url

    def _root_of(self, res: Resource, tree: str) -> ControllerRoot | None:
        c = self.c
        if helmrelease.is_helm_release(res):
            return helmrelease.make_root(res, c.top, c.files, self.objects, self._ours, tree)
        if flux.is_kustomization(res):
            kind, namespace, name = flux.source_name(res)
            if kind == "ExternalArtifact":
                path = artifact.path_in_source(res, name, namespace, self.objects, self._held)
                if path is None:
                    return None
                return dataclasses.replace(flux.make_root(res, c.top, c.files, self.objects, path, tree),
                                           source=f"ExternalArtifact {namespace}/{name}")
            if kind == "OCIRepository":
                return self._oci_root(res, namespace, name, tree)
            written_path = lookup(res.node, ["spec", "path"])
            inside = written_path.value.strip().lstrip("/") \
                if isinstance(written_path, Scalar) and isinstance(written_path.value, str) else ""
            if kind != "GitRepository" or not (self._ours(namespace, name, res.node.origin.path)
                                                or self._renamed(namespace, name, res.node.origin.path, inside)):
                return None
            copy = self._copy_top(namespace, name, res)
            root = flux.make_root(res, c.top, c.files, self.objects,
                                  posixpath.normpath(posixpath.join(copy, inside)) if copy else None, tree)
            other = self._elsewhere(namespace, name, res.node.origin.path)
            where = f"GitRepository {namespace}/{name}" + (f" (another repository, copied to {copy})"
                                                           if copy else "")
            if other:
                return dataclasses.replace(root, elsewhere=self._why(where, other), source=where)
            ignore = self._ignore(namespace, name, res.node.origin.path)
            written = res.node.origin.path
            left_out = ignore.excludes(c.top / written) if written and not copy else None
            if left_out is not None and not root.directory.is_dir():
                # its source's artifact leaves out the very file that writes it,
                # and its path is not here: a left-over (an archived cluster)
                self.left_over.append((written, res.node.origin.location, ignore.describe(left_out)))
                return None
            return dataclasses.replace(root, source=where, ignore=ignore)
        app = argocd.application_root(res, c.top, c.files, c.urls, tree, self._argocd_restrictor())
        if app is None and not c.urls:
            self._no_urls(res)
        return app

    def _oci_root(self, res: Resource, namespace: str, name: str, tree: str,
                  from_sync: str = "") -> ControllerRoot | None:
        """A Flux Kustomization whose source is an OCI artifact the
        repository's CI pushes from one of its directories (``from_sync``:
        the URL a FluxInstance syncs, whose Kustomization is written where
        the instance is, not in the artifact)."""
        near = res.node.origin.path
        url = from_sync or self._oci_url(namespace, name, near)
        if self._pushed is None:
            self._pushed = oci.pushed_artifacts(self.c.top, self.c.urls)
        pushed = oci.find_pushed(self._pushed, url) if url else None
        if pushed is None:
            return None
        if pushed.directory and not from_sync and not near.startswith(pushed.directory + "/"):
            # written outside what the artifact holds: the cluster's Flux,
            # which syncs from the artifact, cannot have read it there
            return None
        path = lookup(res.node, ["spec", "path"])
        inside = path.value.strip() if isinstance(path, Scalar) and isinstance(path.value, str) else ""
        where = posixpath.normpath(posixpath.join(pushed.directory or ".", inside.lstrip("/")))
        root = flux.make_root(res, self.c.top, self.c.files, self.objects, where, tree)
        return dataclasses.replace(root, source=f"OCIRepository {namespace}/{name} (pushed from "
                                                f"{pushed.directory or '.'} by {pushed.where})")

    def _held(self, kind: str, namespace: str, name: str, near: str) -> str | None:
        """The directory of this repository a source holds ("" its top), or None."""
        if kind == "GitRepository":
            return "" if self._ours(namespace, name, near) else None
        if kind == "OCIRepository":
            url = self._oci_url(namespace, name, near)
            if self._pushed is None:
                self._pushed = oci.pushed_artifacts(self.c.top, self.c.urls)
            pushed = oci.find_pushed(self._pushed, url) if url else None
            return pushed.directory if pushed is not None else None
        return None

    def _oci_url(self, namespace: str, name: str, near: str) -> str:
        """An OCIRepository's URL; for ``flux-system`` not in the repository,
        the one its FluxInstance syncs from."""
        repo = self.objects.get("OCIRepository", namespace, name, near)
        url = lookup(repo, ["spec", "url"]) if repo is not None else None
        if isinstance(url, Scalar) and isinstance(url.value, str):
            return url.value
        if name != FLUX_SYSTEM:
            return ""
        syncs = {oci.oci_key(s.url): s.url for s in self._instance_syncs() if s.kind == "OCIRepository"}
        return next(iter(syncs.values())) if len(syncs) == 1 else ""

    def _applied_in(self, node: Mapping) -> str:
        """The namespace the Flux Kustomization whose ``spec.path`` is the
        object's directory (or the nearest above it) gives it: its
        ``targetNamespace`` ("" when none does). Such a Kustomization is
        looked for in the files of the directories above the object's, as
        apps lay them out (``app/helmrelease.yaml`` beside ``ks.yaml``)."""
        directory = posixpath.dirname(node.origin.path)
        here = directory
        for _ in range(4):
            found = flux.applying_namespace(self.c.top / here, self.c.top, self.c.top / directory) if here else None
            if found is not None:
                return found
            if not here:
                break
            here = posixpath.dirname(here)
        return ""

    def _instance_syncs(self, helmfiles: bool = True) -> list[oci.Sync]:
        objects = self.objects
        # a ResourceSet's resources are objects too (those without templates
        # read as written: the operator installs itself so)
        nested = [r for rs in objects.of_kind("ResourceSet", FLUX_SYSTEM) + objects.of_kind("ResourceSet", "")
                  for r in oci.resource_set_resources(rs)]

        def of_kind(kind: str) -> list[Mapping]:
            return objects.of_kind(kind, FLUX_SYSTEM) + objects.of_kind(kind, "") + \
                [r for r in nested if r.value("kind") == kind]

        def configmap(namespace: str, name: str, near: str) -> Mapping | None:
            return objects.get("ConfigMap", namespace, name, near)

        def chart_url(namespace: str, name: str, near: str) -> str:
            repo = objects.get("OCIRepository", namespace, name, near) or next(
                (r for r in of_kind("OCIRepository") if _name_of(r) == name), None)
            url = lookup(repo, ["spec", "url"]) if repo is not None else None
            return url.value if isinstance(url, Scalar) and isinstance(url.value, str) else ""

        found = oci.instance_syncs(of_kind("FluxInstance"), of_kind("HelmRelease"), configmap, chart_url,
                                   self._applied_in)
        return found or (self._helmfile_syncs() if helmfiles else [])

    def _application_set(self, res: Resource, tree: str) -> list[ControllerRoot]:
        c = self.c
        if not c.urls:
            self._no_urls(res)
            return []
        if self._globbing is None:
            self._globbing = argocd.new_git_file_globbing(c.top)
        apps, problems = appset.expand(res, c.top, c.urls, self._globbing)
        for p in problems:
            self.notes.setdefault(p.message, (p.message, p.origin.location))
        made = [argocd.application_root(app, c.top, c.files, c.urls, tree, self._argocd_restrictor()) for app in apps]
        return [r for r in made if r is not None]

    def _argocd_restrictor(self) -> str:
        """The load restrictor of Argo CD builds (:func:`argocd.build_restrictor`), read once."""
        if self._restrictor is None:
            self._restrictor = argocd.build_restrictor(self.c.top)
        return self._restrictor

    def _no_urls(self, res: Resource) -> None:
        """An Argo CD Application names its repository by URL only: without
        one for this checkout, none can be told to be this repository."""
        self.notes.setdefault("argocd", (
            "Argo CD Applications and ApplicationSets name their repository by URL, but this "
            "checkout has no origin remote and .krmcheck.yaml lists no gitops.repo-urls: none of "
            "them can be told to deploy from this repository, so none is a root (list the "
            "repository's URL under gitops.repo-urls)", res.node.origin.location))

    def _ours(self, namespace: str, name: str, near: str) -> bool:
        """The GitRepository ``flux bootstrap`` makes (flux-system) is this
        repository whatever its URL says (a checkout's origin may be a mirror, a
        fork or a path); another is when its URL is one of this repository's."""
        if name == FLUX_SYSTEM or (namespace, name) in self.sync_sources:
            return True
        repo = self.objects.get("GitRepository", namespace, name, near)
        url = lookup(repo, ["spec", "url"]) if repo is not None else None
        if isinstance(url, Scalar) and isinstance(url.value, str) and self.c.urls:
            return same_repository(url.value, self.c.urls)
        return False

    def _renamed(self, namespace: str, name: str, near: str, path: str) -> bool:
        """A GitRepository whose URL names a repository of this one's owner
        (``github.com/owner/home-infra`` for a checkout of
        ``github.com/owner/k8s-gitops``: the repository renamed, its old or
        new name still in the manifests) is this repository where a
        Kustomization of it applies a directory of this repository that
        holds the GitRepository itself: the repository's own sync, which no
        other repository's copy can be. Its other Kustomizations follow. Not
        where the flux-system GitRepository names this repository by its
        current URL: the other name is then the owner's other repository (a
        private secrets repository laid out like this one), nor where a
        FluxInstance's sync does."""
        repo = self.objects.get("GitRepository", namespace, name, near)
        url = lookup(repo, ["spec", "url"]) if repo is not None else None
        if repo is None or not (isinstance(url, Scalar) and isinstance(url.value, str)) or not self._holds(path):
            return False
        owner = normalise(url.value).rpartition("/")[0]
        if not ("/" in owner and any(u.rpartition("/")[0] == owner for u in self.c.urls)):
            return False
        bootstrap = self.objects.get("GitRepository", FLUX_SYSTEM, FLUX_SYSTEM, near)
        named = lookup(bootstrap, ["spec", "url"]) if bootstrap is not None else None
        if isinstance(named, Scalar) and isinstance(named.value, str) and same_repository(named.value, self.c.urls):
            return False  # the bootstrap source names this repository as it is: the other name is a sibling's
        if any(s.kind == "GitRepository" and same_repository(s.url, self.c.urls) for s in self._instance_syncs()):
            return False  # so does a FluxInstance's sync (the operator makes the bootstrap source)
        inside = posixpath.normpath(path.strip().lstrip("/"))
        if not (repo.origin.path + "/").startswith(inside + "/"):
            return False
        self.sync_sources.add((namespace, name))
        return True

    def _copy_top(self, namespace: str, name: str, res: Resource) -> str:
        """Where a copy of another bootstrap repository lies in this one ("" for
        none): ``flux bootstrap`` writes its sync to ``PATH/flux-system/``
        with ``spec.path: ./PATH``; where the flux-system GitRepository names
        another repository by its URL, and that path is not in this one but
        is the directory the sync is written in, seen from a directory above
        it (``demos/flux-demo/`` + ``clusters/home``), that directory is the
        copy's top, and every path read from that source is read from it.
        Where no sync of it is written beside the GitRepository (a script
        applies it, and Kustomizations of it one by one), a Kustomization's
        path is read from the nearest directory above its own file that holds
        it (``playwright/`` for ``playwright/utils/data/sets.yaml`` with
        ``path: ./gitops-sets``: a copy of the repository the URL names)."""
        if name != FLUX_SYSTEM:
            return ""
        repo = self.objects.get("GitRepository", namespace, name, res.node.origin.path)
        if repo is None:
            return self._pushed_top(res)
        url = lookup(repo, ["spec", "url"])
        if (not isinstance(url, Scalar) or not isinstance(url.value, str)
                or (self.c.urls and same_repository(url.value, self.c.urls))):
            return ""  # this repository: a path it does not hold is a defect
        written = repo.origin.path
        if written not in self.copied:
            if not (res.name == FLUX_SYSTEM and res.node.origin.path == written):
                if not self._sync_beside(written):
                    # no sync of it beside it (a script applies the source):
                    # the copy's top is where the paths are
                    return self._nearest_top(res)
                return ""  # the sync itself is rooted first
            self.copied[written] = self._copied_to(written, lookup(res.node, ["spec", "path"]))
        return self.copied[written]

    def _sync_beside(self, written: str) -> bool:
        """Whether the file of a flux-system GitRepository writes the
        flux-system Kustomization too (``flux bootstrap``'s gotk-sync.yaml);
        a file that cannot be read counts as writing it."""
        if written not in self.beside:
            try:
                docs = list(yaml.load_all(self.c.files.read_text(self.c.top / written), Loader=FAST_LOADER))
            except (BuildError, yaml.YAMLError):
                self.beside[written] = True
            else:
                self.beside[written] = any(
                    isinstance(d, dict) and d.get("kind") == "Kustomization"
                    and isinstance(d.get("metadata"), dict) and d["metadata"].get("name") == FLUX_SYSTEM
                    for d in docs)
        return self.beside[written]

    def _pushed_top(self, res: Resource) -> str:
        """Where the bootstrap's repository lies in this one when nothing in
        it writes the flux-system GitRepository (a FluxInstance Terraform
        applies, a bootstrap run elsewhere): "" where the Kustomization's
        path is in this repository from its top (a path it does not hold is a
        defect); else the nearest directory at or above the Kustomization's
        own file from which the path is there (``gitops/`` for
        ``gitops/clusters/production/infra.yaml`` with ``path:
        infrastructure/production``: the directory a program pushes to
        another repository as its top, or a page copies into the reader's)."""
        top = self._nearest_top(res)
        # a FluxInstance of the repository makes the source: its sync says where
        return top if top and not self._instance_syncs() else ""

    def _nearest_top(self, res: Resource) -> str:
        """The nearest directory at or above the Kustomization's own file from
        which its path is there ("" where the path is there from the top,
        or from no such directory)."""
        path = lookup(res.node, ["spec", "path"])
        if not (isinstance(path, Scalar) and isinstance(path.value, str)):
            return ""
        inside = posixpath.normpath(path.value.strip().lstrip("/") or ".")
        if inside in (".", "..") or inside.startswith("../") or self._holds(inside):
            return ""
        directory = posixpath.dirname(res.node.origin.path)
        while directory not in ("", "."):
            if self._holds(posixpath.join(directory, inside)):
                return directory
            directory = posixpath.dirname(directory)
        return ""

    def _copied_to(self, written: str, path: Node | None) -> str:
        if not (isinstance(path, Scalar) and isinstance(path.value, str)):
            return ""
        inside = posixpath.normpath(path.value.strip().lstrip("/") or ".")
        if inside in (".", "..") or inside.startswith("../") or self._holds(inside):
            return ""
        directory = posixpath.dirname(written)
        if posixpath.basename(directory) == FLUX_SYSTEM:
            directory = posixpath.dirname(directory)
        if not directory.endswith("/" + inside):
            return ""
        top = directory[:-len(inside) - 1]
        return top if self._holds(posixpath.join(top, inside)) else ""

    def _ignore(self, namespace: str, name: str, near: str) -> SourceIgnore:
        """What the GitRepository's artifact leaves out: the repository's
        ``.sourceignore`` files and its ``spec.ignore``."""
        repo = self.objects.get("GitRepository", namespace, name, near)
        given = lookup(repo, ["spec", "ignore"]) if repo is not None else None
        spec_ignore = None
        if isinstance(given, Scalar) and isinstance(given.value, str):
            # a block's lines start on the line after the key
            spec_ignore = (given.value, Location(given.origin.path, given.origin.line + 1, 1))
        key = (spec_ignore[0] if spec_ignore is not None else None, spec_ignore[1] if spec_ignore else None)
        if key not in self.ignores:
            self.ignores[key] = sourceignore.load(self.c.top, self.c.files.display, spec_ignore)
        return self.ignores[key]

    def _elsewhere(self, namespace: str, name: str, near: str) -> str:
        """What a GitRepository of this repository follows when that is not this checkout."""
        if name == FLUX_SYSTEM or (namespace, name) in self.sync_sources:
            return ""
        repo = self.objects.get("GitRepository", namespace, name, near)
        ref = lookup(repo, ["spec", "ref"]) if repo is not None else None
        return elsewhere(ref if isinstance(ref, Mapping) else None, self.c.checkout, self.branches)

    def _why(self, source: str, other: str) -> str:
        return (f"its source {source} is this repository at {other}, not this checkout "
                f"({describe(self.c.checkout, self.branches)}): what it applies is not here, "
                f"so it is not rendered")

    # --- the result ----------------------------------------------------------------

    def found(self) -> Found:
        alive = [e for e in self.entries if e.alive]
        # a controller's namePrefix or targetNamespace renames an object, whose
        # plain reading then names nothing applied
        renamed = {e.written for e in alive if e.via_controller}
        for e in alive:
            if not e.via_controller and e.written in renamed:
                self._drop(e)
        alive = [e for e in self.entries if e.alive]
        unreached = self._unreached(alive)
        unreached |= self._left_out(alive)
        alive = [e for e in self.entries if e.alive]
        roots = _qualified(alive)
        # a chart's root replaces nothing: its objects are checked where they
        # are written; each other source of an Application does (a chart
        # first, then a directory of this repository: that directory's files)
        replaced = {p for r in roots for part in (r, *r.also) if part.helm is None and not part.elsewhere
                    for p in (part.directory, *part.reads)}
        if self.left_over:
            files = sorted({w for w, _, _ in self.left_over})
            first = min(self.left_over)
            count = "1 Flux Kustomization is" if len(self.left_over) == 1 else \
                f"{len(self.left_over)} Flux Kustomizations are"
            self.notes.setdefault("left-over", (
                f"{count} written in files their own GitRepository leaves out ({first[2]}: "
                f"{', '.join(files[:3])}{f' and {len(files) - 3} more' if len(files) > 3 else ''}) and name paths "
                f"the repository does not hold: no sync of this repository "
                f"reads them (left-overs, such as an archived cluster), so they are not rendered", first[1]))
        return Found(tuple(sorted(roots, key=lambda r: r.name)), frozenset(replaced | unreached),
                     tuple(self.notes.values()))

    def _left_out(self, alive: list[_Entry]) -> set[Path]:
        """Argo CD objects in files no Application reads, lying below the
        directory of an Application that renders it as plain files and
        leaves them out (no ``directory.recurse``, or its ``exclude``): the
        repository's own Application says they are not applied (an
        ``archived/`` beside the applied ones). Neither they nor their files
        are checked; one note says how many."""
        directories = [(e, e.root.directory.resolve()) for e in alive
                       if argocd.renders_plain_files(e.root) and not e.root.also]
        leaving: dict[int, tuple[_Entry, _Entry]] = {}
        for e in alive:
            if e.via_controller or e.root.controller != ARGOCD:
                continue
            written = (self.c.top / e.written.path).resolve()
            for other, directory in directories:
                if other is not e and directory in written.parents and written not in other.root.reads:
                    leaving[id(e)] = (e, other)
                    break
        # an Application itself left out says nothing: two bootstrap
        # Applications side by side, each reading what the other is not, are both applied
        dropped = []
        for e, other in leaving.values():
            if id(other) not in leaving:
                self._drop(e)
                dropped.append((e.written, other))
        if not dropped:
            return set()
        where, by = min(dropped, key=lambda d: (d[0].path, d[0].line))
        count = "1 Argo CD object lies" if len(dropped) == 1 else f"{len(dropped)} Argo CD objects lie"
        self.notes.setdefault("left-out", (
            f"{count} in files below the directory of an Application that leaves them out "
            f"({by.root.name} reads {self.c.files.display(by.root.directory)} without them: no "
            f"directory.recurse, or its exclude): not applied to the cluster, so not rendered", where))
        return {(self.c.top / w.path).resolve() for w, _ in dropped}

    @staticmethod
    def _argocd_reached(alive: list[_Entry]) -> bool:
        """Whether what the Flux sync applies holds Argo CD: an Application
        or ApplicationSet found from a Flux object down, or a HelmRelease of
        the argo-cd chart (Argo CD installed, its root Application then
        applied by hand)."""
        for e in alive:
            if e.root.controller == ARGOCD and e.via_controller:
                top = e
                while top.parent is not None:
                    top = top.parent
                if top.root.controller != ARGOCD:
                    return True
            if e.root.controller == FLUX_HELM:
                chart = lookup(e.root.obj, ["spec", "chart", "spec", "chart"])
                named = chart.value if isinstance(chart, Scalar) and isinstance(chart.value, str) else ""
                remote = e.root.helm.remote if e.root.helm is not None else ""
                if any(_ARGO_CD_CHART.search(text) for text in (named, remote)):
                    return True
        return False

    def _applied_beside(self, starts: set[str]) -> set[Path]:
        """The directories of the files where a sync's chain starts that hold
        no kustomization: Flux applies a directory, never one file of it, and
        for a directory without a kustomization kustomize-controller applies
        every manifest in it (a cluster's ``infrastructure.yaml`` beside its
        ``tenants.yaml``, under a ``flux-system`` whose sync ``flux
        bootstrap`` writes)."""
        out = set()
        for shown in starts:
            path = self.c.top / shown
            if path.is_file() and not any((path.parent / name).is_file() for name in KUSTOMIZATION_FILES):
                out.add(path.parent)
        return out

    def _unreached(self, alive: list[_Entry]) -> set[Path]:
        """Plain roots of Flux objects (Kustomizations, HelmReleases, their
        sources) that the repository's sync does not reach, where a sync is
        found (some Kustomization is applied by another): the cluster's Flux
        applies such files by listing them, from the sync down, and lists
        none of these (an app taken out of its cluster's list, an archive).
        Neither they nor the roots only they lead to are checked; one note
        says which."""
        if not any(e.via_controller and e.root.controller == FLUX for e in alive):
            return set()  # no Kustomization applies another: no sync to reach from
        # where a sync's chain of Kustomizations begins (a HelmRelease an app applies is no sync)
        starts = {e.root.tree for e in alive if e.via_controller and e.root.controller == FLUX}
        beside = self._applied_beside(starts)
        applied = starts | {shown for p, shown in self.kustomization_files.items() if p.parent in beside}
        # what the applied objects read: those a Kustomization applies, and those written where a chain starts
        read = {p for e in alive if e.via_controller or e.root.tree in applied
                for p in (e.root.directory, *e.root.reads)}
        inside = {parent for q in read for parent in q.parents}  # a directory root some of whose files are read
        unreached = {p: shown for p, shown in self.kustomization_files.items()
                     if p not in read and p not in inside and shown not in applied}
        applications = {} if self._argocd_reached(alive) else {
            # the sync applies nothing of Argo CD: Applications written aside
            # (an archive kept from a move to Flux, examples) reach no cluster
            p: shown for p, shown in self.application_files.items() if p not in read and p not in inside}
        if not unreached and not applications:
            return set()
        for found, key, what in ((unreached, "unreached", "Flux objects (Kustomizations, HelmReleases, their "
                                  "sources) that no Kustomization of the repository applies, while its sync "
                                  "applies others"),
                                 (applications, "unreached-argocd", "Argo CD Applications that nothing "
                                  "applies: the repository's Flux sync applies no Argo CD object and "
                                  "installs no Argo CD")):
            trees = set(found.values())
            if not trees:
                continue
            for e in alive:
                if not e.via_controller and e.root.tree in trees and e.parent is None:
                    self._drop(e)
            first = sorted(trees)[0]
            count = "1 root holds" if len(trees) == 1 else f"{len(trees)} roots hold"
            self.notes.setdefault(key, (
                f"{count} {what}: not applied to the cluster, so neither they nor what they point at "
                f"are checked", Location(first, 1, 1)))
        return set(unreached) | set(applications)


# the Argo CD chart, by name or at the end of where it is pulled from
_ARGO_CD_CHART = re.compile(r"(?:\A|/)argo-cd\Z")


def _flux_only(resources: list[Resource]) -> bool:
    """Whether a plain root is made for Flux: it holds Flux objects
    (Kustomizations, HelmReleases, their sources, alerts), which only Flux
    applies, with what goes beside them (a Namespace, a Service); where the
    sync does not reach it, it is not applied as a whole."""
    return any(r.api_version.partition("/")[0].endswith(".toolkit.fluxcd.io") for r in resources)


def _name_of(node: Mapping) -> str:
    name = lookup(node, ["metadata", "name"])
    return name.value if isinstance(name, Scalar) and isinstance(name.value, str) else ""


def _fingerprint(root: ControllerRoot) -> str:
    variables = [(k, v.value if isinstance(v, Variable) else f"unknown {v.source}")
                 for k, v in root.variables or ()]
    values = root.helm.values.to_data() if root.helm is not None else None
    return json.dumps([root.obj.to_data(), variables, values, root.elsewhere], sort_keys=True, default=str)


def _qualified(entries: list[_Entry]) -> list[ControllerRoot]:
    """Roots whose objects share a name (one per cluster directory) are told
    apart by the directory of the file that defines each
    (``flux:NS/NAME@clusters/prod``); where that is not enough, by the file,
    and where one file is applied by several trees, by the tree as well
    (``flux:NS/NAME@tenants/staging``)."""
    count = Counter(e.root.name for e in entries)
    by_file = Counter((e.root.name, e.root.origin.path) for e in entries)
    by_dir = Counter((e.root.name, posixpath.dirname(e.root.origin.path)) for e in entries)
    out = []
    for e in entries:
        root = e.root
        if count[root.name] > 1:
            path = root.origin.path
            if by_file[(root.name, path)] > 1:
                where = root.tree if by_dir[(root.name, posixpath.dirname(path))] == by_file[(root.name, path)] \
                    else f"{path}@{root.tree}"
            elif by_dir[(root.name, posixpath.dirname(path))] > 1:
                where = path
            else:
                where = posixpath.dirname(path) or "."
            root = dataclasses.replace(root, name=f"{root.name}@{where}")
        out.append(root)
    seen: Counter[str] = Counter()
    unique = []
    for root in out:  # the same name and tree twice over (one ApplicationSet's two generators)
        seen[root.name] += 1
        unique.append(root if seen[root.name] == 1 else dataclasses.replace(root, name=f"{root.name}#{seen[root.name]}"))
    return unique


def _plain(builder_of: Callable[[Path], Builder], root: Path, offline: Callable[[Builder], Builder],
           lifted: Callable[[Builder], Builder | None]) -> list[Resource]:
    """A plain root's resources as its check builds them: a kustomization
    that reads outside its directory with the load restrictor lifted within
    the repository, where its check lifts it too (the controller objects of
    a cluster directory that names ``../../deploy/...`` are found); a
    generator's input named by URL read as empty while the network is off
    (``offline``)."""
    builder = builder_of(root)
    if os.path.isfile(root):
        return builder.load_manifest(root)
    try:
        return _lenient(offline(builder), lambda b: b.build(root))
    except OutsideRoot as e:
        again = None if e.fixed else lifted(builder)
        if again is None:
            raise
        return _lenient(offline(again), lambda b: b.build(root))


@dataclass(frozen=True)
class _Blanked(Files):
    """The repository's files, some of them read as empty."""

    blank: frozenset[str] = frozenset()

    def _read(self, path: Path, origin: Origin | None) -> bytes:
        if os.path.normpath(os.path.abspath(path)) in self.blank:
            return b""
        return super()._read(path, origin)


_MAX_BLANKED = 8


def _lenient(builder: Builder, make: Callable[[Builder], list[Resource]]) -> list[Resource]:
    """What ``make`` builds, with a file that fails the build read as empty
    (a few at most): one broken file in a cluster's kustomization fails the
    whole sync, which keeps what it applied last, and the rest of what the
    cluster runs is still found (the root's check reports the broken file).
    Only for discovery: nothing built so is checked."""
    blank: set[str] = set()
    current = builder
    while True:
        try:
            return make(current)
        except (OutsideRoot, NeedsNetwork):
            raise
        except BuildError as e:
            where = e.location.path if e.location is not None else ""
            path = os.path.normpath(os.path.join(builder.files.repo_root, where)) if where else ""
            if (not path or path in blank or len(blank) >= _MAX_BLANKED or type(builder.files) is not Files
                    or not os.path.isfile(path) or os.path.basename(path) in discover.FILENAMES):
                raise
            blank.add(path)
            current = Builder(_Blanked(builder.files.repo_root, frozenset(blank)), builder.options,
                              remotes=builder.remotes)


def _quietly(make: Callable[[], list[Resource]]) -> list[Resource]:
    """A root that does not build says so when it is checked; discovery goes on."""
    try:
        return make()
    except (BuildError, RecursionError):
        return []
    except Exception:  # noqa: BLE001 - the check of that root reports it as an internal error
        return []


# the Flux Operator's objects that define a cluster's sync (fluxcd.controlplane.io)
_OPERATOR_GROUP = oci.OPERATOR_GROUP
_OPERATOR_KINDS = ("FluxInstance", "ResourceSet")


def _unknown_inline(root: ControllerRoot, res: Resource, unknown: set[int]) -> ControllerRoot:
    """The root with each variable of its ``postBuild.substitute`` whose
    value the substitution that applied the object could not fill (a
    variable of a source the repository cannot show, kept as written)
    unknown, as that source's variables are: the text left in it is not
    what the controller substitutes."""
    inline = lookup(res.node, ["spec", "postBuild", "substitute"])
    if not isinstance(inline, Mapping) or root.variables is None:
        return root
    left = {key for key, value in inline.items.items() if id(value) in unknown}
    if not left:
        return root
    source = Unknown("the substitution of the Kustomization that applies it")
    return dataclasses.replace(root, variables=tuple(
        (key, source if key in left else found) for key, found in root.variables))


def _is_controller(res: Resource) -> bool:
    return (flux.is_kustomization(res) or helmrelease.is_helm_release(res) or argocd.is_application(res)
            or appset.is_application_set(res)
            or (res.kind in _OPERATOR_KINDS and res.api_version.startswith(_OPERATOR_GROUP)))


def _with_reads(root: ControllerRoot, infos: dict[Path, discover.KustomizationInfo],
                more: set[Path] = set()) -> ControllerRoot:  # noqa: B006 - never changed
    """Every file the root's rendering reads (for ignore comments, changed
    files and the plain roots it replaces): its directory's, the components
    the controller object adds to it, its other sources' reads, and ``more``
    (the files of the objects its source is read through)."""
    if root.also:
        also = tuple(_with_reads(r, infos) for r in root.also)
        main = _with_reads(dataclasses.replace(root, also=()), infos, more)
        reads = set(main.reads).union(*(r.reads for r in also))
        return dataclasses.replace(main, also=also, reads=tuple(sorted(reads)))
    d = root.directory
    if root.helm is not None or root.elsewhere or not os.path.isdir(d):
        return dataclasses.replace(root, reads=tuple(sorted(set(root.reads) | more))) if more else root
    if discover.find_kustomization(d):  # (two kustomization files are the build's error to report)
        reads = discover.reads(d, infos)
    elif root.controller == ARGOCD:  # what the Application's directory options let it read
        reads = set()
        for p in argocd.directory_files(d, _source_of(root)):
            reads |= discover.reads(p.resolve(), infos) | {p.resolve()}
    else:
        reads = set()
        for rel in flux.scan(d, root.ignore):
            p = (d / rel).resolve()
            reads |= discover.reads(p, infos) | {p}
    for component in _components(root):
        c = (d / component).resolve()
        reads |= {c} | discover.reads(c, infos)
    return dataclasses.replace(root, reads=tuple(sorted(reads | more)))


def _source_of(root: ControllerRoot) -> Mapping | None:
    source = lookup(root.obj, ["spec", "source"])
    return source if isinstance(source, Mapping) else None


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
    if resourceset.is_resource_set(res):  # the input providers of what it makes
        providers = objects.of_kind(resourceset.PROVIDER, res.namespace, res.node.origin.path)
        return {(files.repo_root / p.origin.path).resolve() for p in resourceset.referenced(res, providers)
                if p.origin.path}
    if not flux.is_kustomization(res):
        return set()
    kind, namespace, name = flux.source_name(res)
    source = objects.get(kind, namespace, name, res.node.origin.path) if kind else None
    if source is None or not source.origin.path:
        return set()
    return {(files.repo_root / source.origin.path).resolve()}
