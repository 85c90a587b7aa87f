"""The objects a repository holds that controllers read at run time:
ConfigMaps and Secrets (Flux ``substituteFrom`` and ``valuesFrom``),
GitRepositories, ArtifactGenerators and HelmCharts (which repository, and
where in it, a Flux Kustomization or HelmRelease renders), HelmRepositories
and OCIRepositories (where helm pulls a HelmRelease's chart from)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from krmcheck import discover
from krmcheck.resource.files import Files, read_text_bounded
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping

KINDS = ("ConfigMap", "Secret", "GitRepository", "ArtifactGenerator", "HelmChart", "HelmRepository",
         "OCIRepository")


@dataclass
class Objects:
    """(kind, namespace, name) -> the objects' trees. Where several have one
    name (a ``cluster-vars`` ConfigMap in each cluster's directory), the one
    written nearest to the asking object wins."""

    found: dict[tuple[str, str, str], list[Mapping]] = field(default_factory=dict)
    _scanned: bool = False
    top: Path | None = None
    files: Files | None = None

    def add(self, resources: list[Resource]) -> None:
        for res in resources:
            if res.kind in KINDS:
                same = self.found.setdefault((res.kind, res.namespace, res.name), [])
                if all(n.origin.path != res.node.origin.path for n in same):
                    same.append(res.node)

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

    def _get(self, kind: str, namespace: str, name: str) -> list[Mapping]:
        # an object without a namespace lands in the one its Kustomization gives it
        return self.found.get((kind, namespace, name), []) + self.found.get((kind, "", name), [])

    def _scan(self) -> None:
        """Objects written in files no rendered root holds (read as written)."""
        self._scanned = True
        if self.top is None or self.files is None:
            return
        for directory, names in discover.walk([self.top]):
            for n in names:
                path = directory / n
                if path.suffix not in discover.MANIFEST_SUFFIXES:
                    continue
                try:
                    text = read_text_bounded(path)
                except OSError:
                    continue
                if not any(f"kind: {k}" in text for k in KINDS):
                    continue
                try:
                    docs = load_documents(text, self.files.display(path))
                except LoadError:
                    continue
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
