"""Rendering a controller root: the build, then what the controller does after it."""

from __future__ import annotations

import dataclasses

from krmcheck.gitops import Rendered, argocd, chart, flux, helmrelease
from krmcheck.gitops.root import FLUX, FLUX_HELM, ControllerRoot
from krmcheck.gitops.substitute import Problem, disabled, substitute
from krmcheck.kustomize import order
from krmcheck.kustomize.kustomization import Kustomization
from krmcheck.kustomize.target import Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import id_key, is_cluster_scoped
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Scalar, Sequence, lookup, walk
from krmcheck.tree.origin import Location

SOURCE = "source"  # the id of findings about a controller's source


def render(builder: Builder, root: ControllerRoot) -> Rendered:
    """What the controller applies for ``root`` (an Argo CD application's
    sources one after another)."""
    if root.also:
        parts = [_render(builder, r) for r in (dataclasses.replace(root, also=()), *root.also)]
        return Rendered([r for p in parts for r in p.resources], [x for p in parts for x in p.problems],
                        sum(p.placeholders for p in parts), frozenset().union(*(p.unknown for p in parts)))
    return _render(builder, root)


def _render(builder: Builder, root: ControllerRoot) -> Rendered:
    if root.elsewhere:
        return Rendered([], list(root.problems) + [_elsewhere(root)], 0)
    if root.helm is not None:
        builder.secrets.update(root.secret_values)
        try:
            resources, problems = chart.render(builder, root)
        except BuildError as e:
            raise e.add_context(f"rendering {root.name}")
        if root.controller == FLUX_HELM:
            flux.owner_labels(resources, root, helmrelease.OWNER_LABELS)
        return Rendered(resources, list(root.problems) + problems, 0)
    try:
        if root.controller == FLUX:
            _check_in_source(root, builder)
            k = flux.kustomization(root, builder.files)
            resources, repeated = builder.build(root.directory, k), list[Problem]()
        else:
            k = argocd.kustomization(root, builder.files)
            resources, repeated = _argocd_build(builder, root, k)
    except BuildError as e:
        raise e.add_context(f"rendering {root.name}")
    # kustomize's deprecation warnings about fields the controller wrote
    # (Argo CD's commonLabels) are not the user's to fix
    builder.warnings[:] = [w for w in builder.warnings if w.origin.path != root.origin.path]
    problems = list(root.problems) + repeated
    placeholders = 0
    unknown: frozenset[int] = frozenset()
    if root.controller == FLUX:
        builder.secrets.update(root.secret_values)
        if root.variables is not None:
            outcome = substitute(resources, root.lookup, strict=root.strict)
            problems += outcome.problems
            placeholders, unknown = outcome.placeholders, outcome.unknown
        else:
            placeholders, unknown, problems = _unsubstituted(resources, root, problems)
        flux.owner_labels(resources, root)
        flux.common_metadata(resources, root.obj)
    else:
        _destination_namespace(resources, root)
    return Rendered(resources, problems, placeholders, unknown)


# kustomize's words for an object added twice (krmcheck.kustomize.accumulator)
_REPEATED = "may not add resource with an already registered id"


def _argocd_build(builder: Builder, root: ControllerRoot, k: Kustomization) -> tuple[list[Resource], list[Problem]]:
    """An Argo CD application's build. A plain directory is no kustomization
    to Argo CD: an object two of its files define is not refused, the
    controller keeps the last one and sets a RepeatedResourceWarning
    condition (controller/state.go). Such a directory is built file by file
    then, the last copy kept, and each repeat is a warning at its line."""
    try:
        return builder.build(root.directory, k), []
    except BuildError as e:
        entries = k.node.sequence("resources")
        if _REPEATED not in e.message or not k.display.endswith(argocd.DIRECTORY_APPLICATION) or entries is None:
            raise
    by_id: dict[tuple[str, ...], list[Resource]] = {}
    warnings, document_errors = [], []
    secrets: set[str] = set()
    places: set[Location] = set()
    for entry in entries.items:
        part = Kustomization(k.path, k.display, Mapping({"resources": Sequence([entry], entry.origin)}, k.node.origin))
        for res in builder.build(root.directory, part):
            by_id.setdefault(id_key(res.id()), []).append(res)
        # each build starts these afresh: the directory's are every file's
        warnings += builder.warnings
        document_errors += builder.document_errors
        secrets |= builder.secrets
        places |= builder.secret_places
    builder.warnings[:], builder.document_errors[:] = warnings, document_errors
    builder.secrets.update(secrets)
    builder.secret_places.update(places)
    problems = []
    for copies in by_id.values():
        for earlier in copies[:-1]:
            at = copies[-1].node.origin
            problems.append(Problem(
                f"{copies[-1].id().describe()} appears {len(copies)} times among the application's files "
                f"(also {at.path}:{at.line}): Argo CD applies the last one and reports a "
                f"RepeatedResourceWarning", "warning", earlier.node.origin, validator="build"))
    resources = order.apply([copies[-1] for copies in by_id.values()], order.options_of(None))
    return resources, problems


def _unsubstituted(resources: list[Resource], root: ControllerRoot,
                   problems: list[Problem]) -> tuple[int, frozenset[int], list[Problem]]:
    """Values holding Flux ``${VAR}`` in what a Kustomization without
    ``postBuild`` applies: written for a substitution this object does not
    ask for. Either it lacks ``postBuild`` or something outside it adds one
    (an admission webhook, a parent written elsewhere): one warning says so,
    and the values themselves are not judged (the defect, if any, is the
    missing ``postBuild``)."""
    held: list[Scalar] = []
    for res in resources:
        # a Flux Kustomization's own ${VAR}s (in its patches, its postBuild)
        # are for its own substitution, when it applies; a CRD's are its
        # schema's prose (Flux's own CRDs describe ${var:=default})
        if disabled(res) or flux.is_kustomization(res) or res.kind == "CustomResourceDefinition":
            continue
        held += [n for n in walk(res.node) if isinstance(n, Scalar) and isinstance(n.value, str)
                 and flux.PLACEHOLDER.search(n.value)]
    if not held:
        return 0, frozenset(), problems
    names = sorted({m.group(1) for n in held for m in flux.PLACEHOLDER.finditer(str(n.value))})
    shown = ", ".join("${" + n + "}" for n in names[:3]) + (", ..." if len(names) > 3 else "")
    count = "1 value holds" if len(held) == 1 else f"{len(held)} values hold"
    problems = problems + [Problem(
        f"{count} {shown}, but this Kustomization has no postBuild: Flux applies them as written, unless "
        f"something outside the object adds substitution (an admission webhook); those values are not "
        f"judged", "warning", root.origin)]
    return len(held), frozenset(id(n) for n in held), problems


def _destination_namespace(resources: list[Resource], root: ControllerRoot) -> None:
    """Argo CD applies a namespaced object that names no namespace into the
    Application's ``destination.namespace``; the value points at that line."""
    node = lookup(root.obj, ["spec", "destination", "namespace"])
    if not isinstance(node, Scalar) or not isinstance(node.value, str) or not node.value:
        return
    for res in resources:
        if not res.namespace and not is_cluster_scoped(res.gvk):
            res.set_namespace(node.value, node.origin)


def _elsewhere(root: ControllerRoot) -> Problem:
    """The one finding of a root whose source is not this checkout, at its ``sourceRef``."""
    ref = lookup(root.obj, ["spec", "sourceRef"])
    origin = ref.origin if ref is not None else root.origin
    # worded alike in every tree that applies the object: one defect naming them all
    name = root.name.partition(":")[2].partition("@")[0]
    return Problem(f"Kustomization {name}: {root.elsewhere}", "info", origin, validator=SOURCE)


def _check_in_source(root: ControllerRoot, builder: Builder) -> None:
    """A file the build reads that the source leaves out is not in the
    artifact kustomize-controller builds: the build fails on it."""
    ignore = root.ignore
    if ignore is None:
        return
    for path in root.reads:
        pattern = ignore.excludes(path)
        if pattern is not None:
            path_line = lookup(root.obj, ["spec", "path"])
            raise BuildError(f"{builder.files.display(path)} is left out of the source by "
                             f"{ignore.describe(pattern)}: kustomize-controller's build cannot read it",
                             path_line.origin if path_line is not None else root.origin)
