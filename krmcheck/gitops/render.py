"""Rendering a controller root: the build, then what the controller does after it."""

from __future__ import annotations

from typing import NamedTuple

from krmcheck.gitops import argocd, chart, flux
from krmcheck.gitops.root import FLUX, ControllerRoot
from krmcheck.gitops.substitute import Problem, substitute
from krmcheck.kustomize.errors import BuildError
from krmcheck.kustomize.resource import Resource
from krmcheck.kustomize.target import Builder


class Rendered(NamedTuple):
    resources: list[Resource]
    problems: list[Problem]  # about substitution and the object's own fields
    placeholders: int  # ${...} expressions left as written (unknown variables)


def render(builder: Builder, root: ControllerRoot) -> Rendered:
    """What the controller applies for ``root``."""
    if root.helm is not None:
        builder.secrets.update(root.secret_values)
        try:
            resources, problems = chart.render(builder, root)
        except BuildError as e:
            raise e.add_context(f"rendering {root.name}")
        return Rendered(resources, list(root.problems) + problems, 0)
    try:
        if root.controller == FLUX:
            k = flux.kustomization(root, builder.files)
        else:
            k = argocd.kustomization(root, builder.files)
        resources = builder.build(root.directory, k)
    except BuildError as e:
        raise e.add_context(f"rendering {root.name}")
    # kustomize's deprecation warnings about fields the controller wrote
    # (Argo CD's commonLabels) are not the user's to fix
    builder.warnings[:] = [w for w in builder.warnings if w.origin.path != root.origin.path]
    problems = list(root.problems)
    placeholders = 0
    if root.controller == FLUX:
        builder.secrets.update(root.secret_values)
        if root.variables is not None:
            outcome = substitute(resources, root.lookup, strict=root.strict)
            problems += outcome.problems
            placeholders = outcome.placeholders
        flux.common_metadata(resources, root.obj)
    return Rendered(resources, problems, placeholders)
