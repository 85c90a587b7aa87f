"""A root that a GitOps controller object makes: what Flux or Argo CD applies."""

from __future__ import annotations

import posixpath

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Union

from krmcheck.gitops.envsubst import Unknown, Variable
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Origin

if TYPE_CHECKING:  # the pipeline tells roots apart by this module's classes: it stays light
    from krmcheck.gitops.sourceignore import SourceIgnore
    from krmcheck.gitops.substitute import Problem
    from krmcheck.kustomize.builtins.helm import Remote

FLUX = "flux"
FLUX_HELM = "flux-helm"  # a Flux HelmRelease: helm-controller applies it apart from its Kustomization
ARGOCD = "argocd"


@dataclass(frozen=True)
class HelmSource:
    """A chart a controller renders with ``helm template`` (a Flux HelmRelease,
    an Argo CD Application's helm source), the values it passes merged."""

    chart: Path | None  # the chart directory in this repository; None: not here
    release: str
    namespace: str
    values: Mapping  # what the controller gives helm, each value with its origin
    origin: Origin  # the chart's line in the object: what rendered objects point at
    remote: str = ""  # where a chart that is not in this repository comes from
    pull: Remote | None = None  # how helm pulls that chart (--network); None: it cannot


@dataclass(frozen=True, eq=False)
class ControllerRoot:
    """A Flux Kustomization or an Argo CD Application whose source is this
    repository, checked instead of the directory it points at."""

    name: str  # flux:NAMESPACE/NAME, flux-helm:NAMESPACE/NAME or argocd:NAME
    controller: str  # FLUX, FLUX_HELM or ARGOCD
    directory: Path  # what it renders (absolute)
    obj: Mapping  # the controller object as rendered, with its origins
    origin: Origin  # where the object is written (its metadata.name line)
    restrictor: str  # the controller's kustomize load restrictor
    # Flux post-build substitution: None when the controller does not
    # substitute (no variables at all); else name -> value or Unknown
    variables: tuple[tuple[str, Union[Variable, Unknown]], ...] | None = None
    unknown_source: str = ""  # a substituteFrom object the repository does not hold readably
    secret_values: frozenset[str] = frozenset()  # variables that came from Secrets
    problems: tuple[Problem, ...] = ()  # found reading the object (bad variables...)
    reads: tuple[Path, ...] = ()  # every file the rendering reads
    helm: HelmSource | None = None  # a chart to render instead of a kustomization
    # kustomize-controller's StrictPostBuildSubstitutions: an undefined
    # variable without a default is an error, not an empty value
    strict: bool = False
    tree: str = ""  # where discovery found it: the plain root its chain of controller roots starts at
    # why the controller's source is not this checkout (a GitRepository at
    # another branch, tag or commit): nothing is rendered, an info says so
    elsewhere: str = ""
    source: str = ""  # what it renders from, for `krmcheck roots` (GitRepository flux-system/flux-system...)
    ignore: SourceIgnore | None = None  # what the source's artifact leaves out (.sourceignore, spec.ignore)
    also: tuple[ControllerRoot, ...] = ()  # an Argo CD application's other sources, rendered with it

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ControllerRoot) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    @cached_property
    def _by_name(self) -> dict[str, Union[Variable, Unknown]]:
        return dict(self.variables or ())

    def lookup(self, name: str) -> Variable | Unknown | None:
        found = self._by_name.get(name)
        if found is None and self.unknown_source:
            return Unknown(self.unknown_source)
        return found


Root = Union[Path, ControllerRoot]


def confined(top: Path, path: str) -> Path:
    """A controller object's source path joined to the top of the repository
    as the controllers join it: inside the source, whatever it says (``..``
    cannot climb out and a leading ``/`` is the source's top). A NUL byte is
    kept visible, so the path is simply not found."""
    clean = posixpath.normpath("/" + path.strip().replace("\0", "\\x00")).lstrip("/")
    return top / clean if clean and clean != "." else top
