"""The objects a repository holds that controllers read at run time:
ConfigMaps and Secrets (Flux ``substituteFrom`` and ``valuesFrom``),
GitRepositories, ArtifactGenerators and HelmCharts (which repository, and
where in it, a Flux Kustomization or HelmRelease renders), HelmRepositories
and OCIRepositories (where helm pulls a HelmRelease's chart from),
ResourceSetInputProviders (the inputs of a ResourceSet).

The controllers read ConfigMaps and Secrets from the cluster, so only those
a controller root of the repository applies (or that files listed under
``gitops.cluster-objects`` hold) give values (:meth:`Objects.applied`):
a Secret written as a template for a bootstrap script is not what the
cluster holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from krmcheck import discover
from krmcheck.gitops import injected
from krmcheck.resource.files import Files
from krmcheck.scope import PathPatterns
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping

SCAN_WHAT = "controller objects"  # what the scan looks for, in the message where it stops
KINDS = ("ConfigMap", "Secret", "GitRepository", "ArtifactGenerator", "HelmChart", "HelmRepository",
         "OCIRepository", "FluxInstance", "HelmRelease", "ResourceSet", "ResourceSetInputProvider")


@dataclass
class Objects:
    """(kind, namespace, name) -> the objects' trees. Where several have one
    name (a ``cluster-vars`` ConfigMap in each cluster's directory), the one
    written nearest to the asking object wins."""

    found: dict[tuple[str, str, str], list[Mapping]] = field(default_factory=dict)
    _scanned: bool = False
    top: Path | None = None
    files: Files | None = None
    # (kind, namespace, name) -> (object, the tree whose controller roots apply it)
    applied_objects: dict[tuple[str, str, str], list[tuple[Mapping, str]]] = field(default_factory=dict)
    listed: PathPatterns | None = None  # gitops.cluster-objects: in the cluster, applied or not
    missed: set[tuple[str, str, str]] = field(default_factory=set)  # asked for, not applied (yet)
    # the walk of _scan, bounded in size and time; shared by discovery's passes so
    # that their walks together stay within its time, and what it refused is said
    scan: discover.Scan | None = None
    also: frozenset[Path] = frozenset()  # files kustomizations read: links out of the repository allowed
    # documents of files that name kustomize-mutating-webhook (krmcheck.gitops.injected)
    webhook_documents: list[Mapping] = field(default_factory=list)
    _injected: tuple[injected.Source, ...] | None = None

    def add(self, resources: list[Resource], tree: str | None = None) -> None:
        """``tree``: the objects are what a controller root found from that
        tree applies (None: read as written)."""
        for res in resources:
            if res.kind in KINDS:
                key = (res.kind, res.namespace, res.name)
                same = self.found.setdefault(key, [])
                if all(n.origin.path != res.node.origin.path for n in same):
                    same.append(res.node)
                if tree is not None and res.kind in ("ConfigMap", "Secret"):
                    done = self.applied_objects.setdefault(key, [])
                    if all(n.origin.path != res.node.origin.path or t != tree for n, t in done):
                        done.append((res.node, tree))

    def applied(self, kind: str, namespace: str, name: str, near: str = "", tree: str = "",
                note_miss: bool = True) -> Mapping | None:
        """A ConfigMap or Secret as the cluster holds it: one a controller
        root applies (from ``tree`` first, then the nearest to ``near``), or
        one a listed file holds; None when there is none (yet)."""
        got = self.applied_objects.get((kind, namespace, name), []) + \
            self.applied_objects.get((kind, "", name), [])
        if got:
            return max(got, key=lambda nt: (nt[1] == tree, _shared(nt[0].origin.path, near)))[0]
        if self.listed is not None:
            listed = self.get(kind, namespace, name, near)
            if listed is not None and self.listed.matches(listed.origin.path):
                return listed
        if note_miss:
            self.missed.add((kind, namespace, name))
        return None

    def late(self) -> bool:
        """Whether an object asked for before any root applied it was
        applied later: its askers must be made again (another pass)."""
        return any((k, ns, n) in self.applied_objects or (k, "", n) in self.applied_objects
                   for k, ns, n in self.missed)

    def seed(self, other: Objects) -> None:
        """What ``other`` (an earlier pass) found applied counts as applied here."""
        for key, pairs in other.applied_objects.items():
            for node, tree in pairs:
                self.applied_objects.setdefault(key, []).append((node, tree))

    def get(self, kind: str, namespace: str, name: str, near: str = "") -> Mapping | None:
        """The object; ``near``: the file of the object that asks."""
        got = self._get(kind, namespace, name)
        if not got and not self._scanned:
            self._scan()
            got = self._get(kind, namespace, name)
        return max(got, key=lambda n: _shared(n.origin.path, near)) if got else None

    def of_kind(self, kind: str, namespace: str, near: str = "") -> list[Mapping]:
        if not self._scanned:
            self._scan()
        found = [node for (k, ns, _), nodes in self.found.items() if k == kind and ns in (namespace, "")
                 for node in nodes]
        return sorted(found, key=lambda n: -_shared(n.origin.path, near))

    def injected_sources(self) -> tuple[injected.Source, ...]:
        """What an admission webhook the repository installs adds to every
        Flux Kustomization's substitution (:mod:`krmcheck.gitops.injected`)."""
        if not self._scanned:
            self._scan()
        if self._injected is None:
            self._injected = injected.sources(self.webhook_documents)
        return self._injected

    def _get(self, kind: str, namespace: str, name: str) -> list[Mapping]:
        # an object without a namespace lands in the one its Kustomization gives it
        return self.found.get((kind, namespace, name), []) + self.found.get((kind, "", name), [])

    def _scan(self) -> None:
        """Objects written in files no rendered root holds (read as written),
        each file read bounded and the walk bounded in time (discover.Scan:
        what it refused, and where it stopped, become ``scan`` warnings)."""
        self._scanned = True
        if self.top is None or self.files is None:
            return
        if self.scan is None:
            self.scan = discover.Scan(self.files.repo_root, SCAN_WHAT, self.also)
        scan = self.scan
        for directory, names in discover.walk([self.top]):
            if scan.out_of_time(directory):
                return
            for n in names:
                path = directory / n
                if path.suffix not in discover.MANIFEST_SUFFIXES:
                    continue
                if scan.out_of_time(path):
                    return
                text = scan.text(path)
                if text is None:
                    continue
                webhook = injected.MARK in text
                if not webhook and not any(f"kind: {k}" in text for k in KINDS):
                    continue
                try:
                    docs = load_documents(text, self.files.display(path))
                except LoadError:
                    continue
                if webhook:
                    self.webhook_documents += [doc for doc in docs if isinstance(doc, Mapping)]
                for doc in docs:
                    if isinstance(doc, Mapping) and doc.value("kind") in KINDS:
                        self.add([Resource(doc)])


def _shared(a: str, b: str) -> int:
    """How many leading directories two repo-relative paths share."""
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1]):
        if x != y:
            break
        n += 1
    return n
