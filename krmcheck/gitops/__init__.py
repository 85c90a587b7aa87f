"""What a GitOps controller applies: Flux Kustomizations and Argo CD
Applications as roots (``controllers.py`` finds them, ``render.py`` renders
them), Flux's post-build substitution (``envsubst.py``, ``substitute.py``)
and envsubst-style templates outside Flux (``.krmcheck.yaml`` ``substitute:``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from krmcheck.gitops.envsubst import Variable
from krmcheck.locate import source_id
from krmcheck.results import Finding, ResourceRef, Result
from krmcheck.scope import PathPatterns

if TYPE_CHECKING:  # a run without controller objects or templates imports neither
    from krmcheck.gitops.substitute import Problem
    from krmcheck.resource.resource import Resource

VALIDATOR = "substitution"  # the id of findings about variable substitution

Templates = tuple[tuple[PathPatterns, tuple[tuple[str, Variable], ...]], ...]

__all__ = ["HELM", "Rendered", "VALIDATOR", "Variable", "findings", "templates"]


HELM = "helm"  # the id of findings about charts a controller renders
# the summary key of a substituteFrom object taken from a directory nothing
# applies, by directory: one note per directory (gitops.summary)
SYNC_PATH = "sync-path "
NOT_HELD = "elsewhere"  # why a chart was not rendered (gitops.summary): no flag brings it in


class Rendered(NamedTuple):
    """What a root renders to: its resources as applied, and what went wrong
    with substitution and the controller object's own fields."""

    resources: list[Resource]
    problems: list[Problem]  # about substitution and the object's own fields
    placeholders: int  # ${...} expressions left as written (unknown variables)
    unknown: frozenset[int] = frozenset()  # id() of the values holding such an expression


def findings(rendered: Rendered, root: str,
             enabled: Callable[[str], bool] = lambda _: True) -> list[Finding]:
    """The substitution and helm problems of a rendering, each at its own line."""
    return [_finding(p, root) for p in rendered.problems if enabled(p.validator)]


def _finding(p: Problem, root: str) -> Finding:
    ref = None
    if p.resource is not None:
        r = p.resource
        ref = ResourceRef(r.api_version, r.kind, r.name, r.namespace)
    tags = (("validator", p.validator),) + ((("summary", p.summary),) if p.summary else ())
    result = Result(message=p.message, severity=p.severity, resource_ref=ref, tags=tags)
    return Finding(result, root, p.origin.location,
                   source_id=source_id(p.resource) if p.resource is not None else "")


def templates(resources: list[Resource], given: Templates) -> Rendered:
    """``substitute:`` of ``.krmcheck.yaml``: each resource written in a file
    a pattern matches gets that pattern's variables (the first pattern
    wins); an undefined variable stays as written, as for a template whose
    values come later."""
    problems: list[Problem] = []
    kept = 0
    if not given:
        return Rendered(resources, [], 0)
    from krmcheck.gitops.substitute import substitute

    for res in resources:
        path = res.node.origin.path
        for scope, variables in given:
            if scope.matches(path):
                values = dict(variables)
                outcome = substitute([res], lambda name: values.get(name), honour_opt_out=False,
                                     keep_undefined=True)
                problems += outcome.problems
                kept += outcome.placeholders
                break
    return Rendered(resources, problems, kept)
