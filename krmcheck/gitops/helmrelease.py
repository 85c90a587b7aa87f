"""Flux HelmReleases (helm.toolkit.fluxcd.io): what helm-controller applies
for one, a root of its own (``flux-helm:NAMESPACE/NAME``), since the
controller installs the chart apart from the Kustomization that holds the
HelmRelease.

- The chart: ``spec.chart.spec`` with a ``sourceRef`` to a GitRepository
  that is this repository and ``chart`` a path in it, or ``spec.chartRef``
  to a HelmChart object built that way; or, pulled by helm with
  ``--network``, a chart of a HelmRepository the repository holds
  (``spec.url``, ``oci://`` with ``type: oci``; ``chart`` its name,
  ``version``) or ``spec.chartRef`` to an OCIRepository it holds
  (``spec.url``, ``ref.digest``, ``ref.semver`` or ``ref.tag``). Other
  sources (a GitRepository elsewhere, a source object not in the
  repository) are not rendered.
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
from krmcheck.kustomize.builtins.helm import Remote
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import NONE, Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, lookup
from krmcheck.tree.origin import Origin

GROUP = "helm.toolkit.fluxcd.io/"
# what helm-controller's OriginLabels post-renderer puts on every object (internal/postrender)
OWNER_LABELS = ("helm.toolkit.fluxcd.io/name", "helm.toolkit.fluxcd.io/namespace")
OCI = "oci://"
DEFAULT_KEY = "values.yaml"

Ours = Callable[[str, str, str], bool]  # (namespace, GitRepository name, near) -> is this repository


def is_helm_release(res: Resource) -> bool:
    return res.kind == "HelmRelease" and res.api_version.startswith(GROUP)


def make_root(res: Resource, top: Path, files: Files, objects: Objects, ours: Ours,
              tree: str = "") -> ControllerRoot:
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
    path, remote, pull, held = _chart_source(chart_spec, res, ours, objects)
    values = Mapping({}, chart_origin)
    reads: list[Path] = []
    if path is not None or pull is not None:
        if path is not None:
            directory = confined(top, path)
            reads = [Path(here) / f for here, _, names in os.walk(directory) for f in sorted(names)]
        values, extra = _values(res, spec, chart_spec, top, files, objects, problems, secrets,
                                remote=path is None, tree=tree)
        reads += extra + [files.repo_root / p for p in held]
        renderers = spec.get("postRenderers")
        if renderers is not None:
            problems.append(Problem("postRenderers are not applied: the objects are checked as the "
                                    "chart renders them", "info", renderers.origin, validator=chart.VALIDATOR))
    source = HelmSource(chart=directory if path is not None else None, release=release,
                        namespace=target or namespace, values=values, origin=chart_origin,
                        remote=remote, pull=pull)
    return ControllerRoot(
        name=f"{FLUX_HELM}:{namespace}/{res.name}", controller=FLUX_HELM, directory=directory,
        obj=res.node.copy(), origin=origin, restrictor=NONE, secret_values=frozenset(secrets),
        problems=tuple(problems), reads=tuple(sorted(set(reads))), helm=source, tree=tree,
        source=f"chart {path}" if path is not None else remote)


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


def _chart_source(chart_spec: Mapping, res: Resource, ours: Ours,
                  objects: Objects) -> tuple[str | None, str, Remote | None, list[str]]:
    """The chart's path in this repository; else where it comes from, and how
    helm pulls it when the repository holds its source object (whose file
    is the last item)."""
    ref = chart_spec.mapping("sourceRef")
    if ref is None:  # a chartRef straight to an OCIRepository (or a HelmChart not in the repository)
        kind, name = _str(chart_spec.get("kind")), _str(chart_spec.get("name"))
        if not kind or not name:
            return None, "no chart source the HelmRelease names", None, []
        namespace = _str(chart_spec.get("namespace")) or res.namespace
        where = f"{kind} {namespace}/{name}"
        if kind == "OCIRepository":
            return _pulled(where, objects.get(kind, namespace, name, near=res.node.origin.path),
                           _oci_repository)
        return None, where, None, []
    kind, name = _str(ref.get("kind")), _str(ref.get("name"))
    namespace = _str(ref.get("namespace")) or res.namespace
    path = _str(chart_spec.get("chart"))
    if kind == "GitRepository" and path and ours(namespace, name, res.node.origin.path):
        return path, "", None, []
    where = f"{kind} {namespace}/{name}" + (f" (chart {path})" if path else "")
    if kind == "HelmRepository" and path:
        version = _scalar_text(chart_spec.get("version"))
        return _pulled(where, objects.get(kind, namespace, name, near=res.node.origin.path),
                       lambda spec: _helm_repository(spec, path, version))
    return None, where, None, []


def _pulled(where: str, obj: Mapping | None,
            make: Callable[[Mapping], Remote | None]) -> tuple[None, str, Remote | None, list[str]]:
    if obj is None:
        return None, f"{where}, which the repository does not hold", None, []
    spec = obj.mapping("spec") or Mapping()
    provider = _str(spec.get("provider"))
    if "secretRef" in spec.items or provider not in ("", "generic"):
        # helm runs with a fresh configuration: it has no credentials to pull with
        how = "secretRef" if "secretRef" in spec.items else f"provider {provider}"
        return None, f"{where}, which needs credentials ({how}) krmcheck does not have", None, []
    pull = make(spec)
    if pull is None:
        return None, f"{where}, whose spec.url is not a chart repository", None, []
    return None, where, pull, [obj.origin.path]


def _helm_repository(spec: Mapping, chart_name: str, version: str) -> Remote | None:
    url = _str(spec.get("url"))
    if not url:
        return None
    if _str(spec.get("type")) == "oci" or url.startswith(OCI):
        if not url.startswith(OCI):
            return None
        return Remote(f"{url.rstrip('/')}/{chart_name}", version=version)
    if not url.startswith(("http://", "https://")):
        return None
    return Remote(chart_name, repo=url, version=version)


def _oci_repository(spec: Mapping) -> Remote | None:
    """source-controller's precedence: ``digest``, then ``semver``, then
    ``tag``; no ref at all is helm's newest version (Flux's tag ``latest``)."""
    url = _str(spec.get("url"))
    if not url.startswith(OCI):
        return None
    ref = spec.mapping("ref") or Mapping()
    digest = _str(ref.get("digest"))
    if digest:
        return Remote(f"{url.rstrip('/')}@{digest}")
    version = _scalar_text(ref.get("semver")) or _scalar_text(ref.get("tag"))
    return Remote(url.rstrip("/"), version=version)


def _scalar_text(node: Node | None) -> str:
    """A version written as a YAML number (``version: 1.2``) as written."""
    return node.as_string() if isinstance(node, Scalar) and node.value is not None \
        and not isinstance(node.value, bool) else ""


def _values(res: Resource, spec: Mapping, chart_spec: Mapping, top: Path, files: Files,
            objects: Objects, problems: list[Problem], secrets: set[str],
            remote: bool = False, tree: str = "") -> tuple[Mapping, list[Path]]:
    values = Mapping({}, res.node.origin)
    reads: list[Path] = []
    files_given = chart_spec.sequence("valuesFiles")
    for entry in files_given.items if files_given is not None else ():
        if isinstance(entry, Scalar) and isinstance(entry.value, str) and remote:
            problems.append(Problem(f"valuesFiles: {entry.value} is a file of the pulled chart: its "
                                    f"values are not passed to it", "info", entry.origin,
                                    validator=chart.VALIDATOR))
        elif isinstance(entry, Scalar) and isinstance(entry.value, str):
            path = confined(top, entry.value)
            if os.path.isfile(path):
                loaded = chart.load_file_or_say(path, files, entry.origin, problems)
                values = chart.merge(values, loaded) if loaded is not None else values
                reads.append(path)
            elif chart_spec.value("ignoreMissingValuesFiles") is not True:
                problems.append(Problem(f"valuesFiles: {entry.value} is not in the repository",
                                        "error", entry.origin, validator=chart.VALIDATOR))
    refs = spec.sequence("valuesFrom")
    for ref in refs.items if refs is not None else ():
        if isinstance(ref, Mapping):
            given = _values_from(res, ref, files, objects, problems, secrets, tree)
            if given is not None:
                values = chart.merge(values, given)
                reads.append(files.repo_root / given.origin.path)
    inline = spec.mapping("values")
    if inline is not None:
        values = chart.merge(values, inline)
    return values, reads


def _values_from(res: Resource, ref: Mapping, files: Files, objects: Objects,
                 problems: list[Problem], secrets: set[str], tree: str) -> Mapping | None:
    """One ``valuesFrom`` entry, as fluxcd/pkg chartutil
    ``ChartValuesFromReferences`` reads it: the object's ``valuesKey`` (default
    ``values.yaml``) as values, or with ``targetPath`` set at that path the
    way ``--set`` sets it (quoted text a string, else typed)."""
    kind, name = _str(ref.get("kind")), _str(ref.get("name"))
    key = _str(ref.get("valuesKey")) or DEFAULT_KEY
    optional = ref.value("optional") is True
    where = f"valuesFrom {kind}/{name}"
    near = res.node.origin.path
    # the object as the cluster holds it (applied from this tree first), else as written
    obj = (objects.applied(kind, res.namespace, name, near, tree, note_miss=False)
           or objects.get(kind, res.namespace, name, near)) if kind in ("ConfigMap", "Secret") else None
    data = object_data(obj, kind) if obj is not None else None
    if obj is None or data is None:
        if not optional:
            state = "encrypted" if obj is not None else \
                f"not in the repository (in namespace {res.namespace or 'default'})"
            problems.append(Problem(f"{where} is {state}: its values are not passed to the chart",
                                    "info", ref.origin, validator=chart.VALIDATOR))
        return None
    found = dict(data).get(key)
    raw = obj.mapping("data")
    if found is None and raw is not None and key in raw.items:
        # held, but not readable here: a value kustomize-controller decrypts
        # (a SOPS-encrypted file of a secretGenerator), or not base64
        if not optional:
            problems.append(Problem(f"{where} holds '{key}', but its value cannot be read here (encrypted): "
                                    f"its values are not passed to the chart", "info", ref.origin,
                                    validator=chart.VALIDATOR))
        return None
    if found is None and not any(obj.mapping(field) for field in ("data", "stringData", "binaryData")):
        # written with no data at all: a shell something else fills (an
        # operator writing a token, a reflector), as the reference check reads it
        if not optional:
            problems.append(Problem(f"{where} holds no data in the repository (something else fills it): "
                                    f"its values are not passed to the chart", "info", ref.origin,
                                    validator=chart.VALIDATOR))
        return None
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
        value = chart.target_value(found.value, ref.value("literal") is True)
        chart.set_path(out, target, Scalar(value, origin))
        return out
    try:
        return chart.load_values(found.value, origin, where, files, shift=kind == "ConfigMap")
    except BuildError as e:
        problems.append(Problem(e.message, "error", ref.origin, validator=chart.VALIDATOR))
        return None
