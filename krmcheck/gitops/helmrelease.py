"""Flux HelmReleases (helm.toolkit.fluxcd.io): what helm-controller applies
for one, a root of its own (``flux-helm:NAMESPACE/NAME``), since the
controller installs the chart apart from the Kustomization that holds the
HelmRelease.

- The chart: ``spec.chart.spec`` with a ``sourceRef`` to a GitRepository
  that is this repository and ``chart`` a path in it, or ``spec.chartRef``
  to a HelmChart object built that way; other sources (HelmRepository,
  OCIRepository, a GitRepository elsewhere) are not rendered.
- The values, in helm-controller's order: each ``valuesFrom`` entry in turn
  (a ConfigMap's or Secret's ``valuesKey``, default ``values.yaml``, merged
  at the top or set at ``targetPath`` as a string; ``optional`` entries may
  be absent), then ``spec.values`` on top; under them ``chart.spec.valuesFiles``
  (paths in the source) and the chart's own ``values.yaml``.
- The release: ``releaseName``, else ``[targetNamespace-]name``, in
  ``targetNamespace``, else the HelmRelease's namespace.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from krmcheck.gitops import chart
from krmcheck.gitops.flux import object_data
from krmcheck.gitops.objects import Objects
from krmcheck.gitops.root import FLUX_HELM, ControllerRoot, HelmSource, confined
from krmcheck.gitops.substitute import Problem
from krmcheck.kustomize.errors import BuildError
from krmcheck.kustomize.files import NONE, Files
from krmcheck.kustomize.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, lookup
from krmcheck.tree.origin import Origin

GROUP = "helm.toolkit.fluxcd.io/"
DEFAULT_KEY = "values.yaml"

Ours = Callable[[str, str, str], bool]  # (namespace, GitRepository name, near) -> is this repository


def is_helm_release(res: Resource) -> bool:
    return res.kind == "HelmRelease" and res.api_version.startswith(GROUP)


def make_root(res: Resource, top: Path, files: Files, objects: Objects, ours: Ours) -> ControllerRoot:
    spec = res.node.mapping("spec") or Mapping()
    name_node = lookup(res.node, ["metadata", "name"])
    origin = name_node.origin if name_node is not None else res.node.origin
    namespace = res.namespace or "default"
    target = _str(spec.get("targetNamespace"))
    release = _str(spec.get("releaseName")) or (f"{target}-{res.name}" if target else res.name)
    chart_spec, chart_origin = _chart_spec(res, spec, objects)
    problems: list[Problem] = []
    secrets: set[str] = set()
    directory = top / os.path.dirname(res.node.origin.path)
    path, remote = _chart_path(chart_spec, res, ours)
    values = Mapping({}, chart_origin)
    reads: list[Path] = []
    if path is not None:
        directory = confined(top, path)
        reads = [Path(here) / f for here, _, names in os.walk(directory) for f in sorted(names)]
        values, extra = _values(res, spec, chart_spec, top, files, objects, problems, secrets)
        reads += extra
        renderers = spec.get("postRenderers")
        if renderers is not None:
            problems.append(Problem("postRenderers are not applied: the objects are checked as the "
                                    "chart renders them", "info", renderers.origin, validator=chart.VALIDATOR))
    source = HelmSource(chart=directory if path is not None else None, release=release,
                        namespace=target or namespace, values=values, origin=chart_origin,
                        remote=remote)
    return ControllerRoot(
        name=f"{FLUX_HELM}:{namespace}/{res.name}", controller=FLUX_HELM, directory=directory,
        obj=res.node.copy(), origin=origin, restrictor=NONE, secret_values=frozenset(secrets),
        problems=tuple(problems), reads=tuple(sorted(set(reads))), helm=source)


def _str(node: Node | None) -> str:
    return node.value if isinstance(node, Scalar) and isinstance(node.value, str) else ""


def _chart_spec(res: Resource, spec: Mapping, objects: Objects) -> tuple[Mapping, Origin]:
    """``spec.chart.spec``, or the spec of the HelmChart ``spec.chartRef``
    names; and the line rendered objects point at."""
    given = lookup(spec, ["chart", "spec"])
    if isinstance(given, Mapping):
        line = spec.get("chart")
        return given, (line.origin if line is not None else given.origin)
    ref = spec.mapping("chartRef")
    if ref is not None:
        if _str(ref.get("kind")) == "HelmChart":
            found = objects.get("HelmChart", _str(ref.get("namespace")) or res.namespace,
                                _str(ref.get("name")), near=res.node.origin.path)
            helm_chart = found.mapping("spec") if found is not None else None
            if helm_chart is not None:
                return helm_chart, spec.items["chartRef"].origin
        return ref, spec.items["chartRef"].origin
    return Mapping({}, res.node.origin), res.node.origin


def _chart_path(chart_spec: Mapping, res: Resource, ours: Ours) -> tuple[str | None, str]:
    """The chart's path in this repository, or None and where it comes from."""
    ref = chart_spec.mapping("sourceRef")
    if ref is None:  # a chartRef straight to an OCIRepository (or a HelmChart not in the repository)
        kind, name = _str(chart_spec.get("kind")), _str(chart_spec.get("name"))
        if not kind or not name:
            return None, "no chart source the HelmRelease names"
        return None, f"{kind} {_str(chart_spec.get('namespace')) or res.namespace}/{name}"
    kind, name = _str(ref.get("kind")), _str(ref.get("name"))
    namespace = _str(ref.get("namespace")) or res.namespace
    path = _str(chart_spec.get("chart"))
    if kind == "GitRepository" and path and ours(namespace, name, res.node.origin.path):
        return path, ""
    return None, f"{kind} {namespace}/{name}" + (f" (chart {path})" if path else "")


def _values(res: Resource, spec: Mapping, chart_spec: Mapping, top: Path, files: Files,
            objects: Objects, problems: list[Problem], secrets: set[str]) -> tuple[Mapping, list[Path]]:
    values = Mapping({}, res.node.origin)
    reads: list[Path] = []
    files_given = chart_spec.sequence("valuesFiles")
    for entry in files_given.items if files_given is not None else ():
        if isinstance(entry, Scalar) and isinstance(entry.value, str):
            path = confined(top, entry.value)
            if os.path.isfile(path):
                values = chart.merge(values, chart.load_file(path, files, entry.origin))
                reads.append(path)
            elif chart_spec.value("ignoreMissingValuesFiles") is not True:
                problems.append(Problem(f"valuesFiles: {entry.value} is not in the repository",
                                        "error", entry.origin, validator=chart.VALIDATOR))
    refs = spec.sequence("valuesFrom")
    for ref in refs.items if refs is not None else ():
        if isinstance(ref, Mapping):
            given = _values_from(res, ref, files, objects, problems, secrets)
            if given is not None:
                values = chart.merge(values, given)
                reads.append(files.repo_root / given.origin.path)
    inline = spec.mapping("values")
    if inline is not None:
        values = chart.merge(values, inline)
    return values, reads


def _values_from(res: Resource, ref: Mapping, files: Files, objects: Objects,
                 problems: list[Problem], secrets: set[str]) -> Mapping | None:
    kind, name = _str(ref.get("kind")), _str(ref.get("name"))
    key = _str(ref.get("valuesKey")) or DEFAULT_KEY
    optional = ref.value("optional") is True
    where = f"valuesFrom {kind}/{name}"
    obj = objects.get(kind, res.namespace, name, near=res.node.origin.path) \
        if kind in ("ConfigMap", "Secret") else None
    data = object_data(obj, kind) if obj is not None else None
    if obj is None or data is None:
        if not optional:
            state = "encrypted" if obj is not None else \
                f"not in the repository (in namespace {res.namespace or 'default'})"
            problems.append(Problem(f"{where} is {state}: its values are not passed to the chart",
                                    "info", ref.origin, validator=chart.VALIDATOR))
        return None
    found = dict(data).get(key)
    if found is None:
        if not optional:
            problems.append(Problem(f"{where} has no key '{key}': helm-controller fails the release",
                                    "error", ref.origin, validator=chart.VALIDATOR))
        return None
    if kind == "Secret":
        secrets.add(found.value)
    origin = Origin(found.origin.path, found.origin.line, found.origin.col, chart.BY)
    target = _str(ref.get("targetPath"))
    if target:
        out = Mapping({}, origin)
        chart.set_path(out, target, Scalar(found.value, origin))
        return out
    try:
        return chart.load_values(found.value, origin, where, files, shift=kind == "ConfigMap")
    except BuildError as e:
        problems.append(Problem(e.message, "error", ref.origin, validator=chart.VALIDATOR))
        return None
