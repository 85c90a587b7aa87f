"""helmCharts (and the legacy helmChartInflationGenerator): inflate local
charts with ``helm template``, as Kustomize v5.5.0 does with --enable-helm.

Facts mirrored here (checked with kubectl and a stand-in helm on PATH):

- nothing runs without ``--enable-helm``; then helm is asked
  ``version -c --short`` first (major version 3 only), then
  ``template <releaseName|--generate-name> <chartHome>/<name>
  [--namespace N] [--name-template T] -f <values> [-f <additional>]...
  [--api-versions V]... [--kube-version K] [--include-crds] [--skip-tests]
  [--no-hooks] [--debug]``, with ``HELM_CONFIG_HOME`` (``configHome`` or
  a fresh temporary ``.../helm``), ``HELM_CACHE_HOME`` and
  ``HELM_DATA_HOME`` below it;
- the chart home is ``helmGlobals.chartHome`` (default ``charts``) next to
  the kustomization, plus ``<name>-<version>`` when both version and repo
  are given; the values file defaults to the chart's ``values.yaml``;
- ``-f`` always names a copy in the temporary directory
  (``<name>-kustomize-values.yaml``): the values file as it is, or, with
  ``valuesInline``, the two merged (``override``, the default: inline
  wins; ``merge``: the file wins; ``replace``: inline only; a null removes
  a key), written with sorted keys;
- the kustomization's ``namespace`` is not passed to helm.

A chart that is not in the chart home is pulled from its ``repo``, and a
GitOps controller's chart from a chart repository (``krmcheck.gitops.chart``,
``Chart.remote``) too: only with ``--network`` (else the root needs the
network), into the temporary directory, never the chart home, with
kustomize's pull command, ``pull --untar --untardir DIR [--repo URL]
NAME|oci://REF [--version V]``, then templated from there.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from krmcheck import journal
from krmcheck.kustomize.remote import NETWORK_ENV, network_allowed
from krmcheck.resource.errors import BuildError, NeedsNetwork, ProgramError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.emit import emit
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, from_data, walk
from krmcheck.tree.origin import Origin

DEFAULT_HOME = "charts"
MERGE_OPTIONS = ("merge", "override", "replace")
TIMEOUT_SECONDS = 300
_CHART_FIELDS = frozenset({
    "name", "version", "repo", "releaseName", "namespace", "additionalValuesFiles",
    "valuesFile", "valuesInline", "valuesMerge", "includeCRDs", "skipHooks", "apiVersions",
    "kubeVersion", "nameTemplate", "skipTests", "debug"})
_GLOBAL_FIELDS = frozenset({"chartHome", "configHome"})
# helmChartInflationGenerator's old field names -> helmCharts' (kustomize's SplitHelmParameters)
_LEGACY = {"chartName": "name", "chartVersion": "version", "chartRepoUrl": "repo",
           "values": "valuesFile", "valuesLocal": "valuesInline", "valuesMerge": "valuesMerge",
           "releaseName": "releaseName"}
_LEGACY_GLOBALS = {"chartHome": "chartHome", "helmHome": "configHome"}
_LEGACY_FIELDS = frozenset(_LEGACY) | frozenset(_LEGACY_GLOBALS) | {
    "chartRepoName", "helmBin", "releaseNamespace", "extraArgs"}
_VERSION = re.compile(r"v?\d+(\.\d+)+")


@dataclass(frozen=True)
class HelmEnv:
    """Where and how to run helm for one kustomization."""

    kdir: Path
    files: Files
    enabled: bool
    command: str = "helm"
    network: bool = False  # may pull a Chart.remote (--network)


@dataclass(frozen=True)
class Remote:
    """A chart to pull before templating it: ``ref`` is the chart's name in
    the http(s) chart repository ``repo``, or, without ``repo``, a whole
    ``oci://`` reference (``@sha256:...`` allowed); ``version`` a version
    or semver range ("" for the latest)."""

    ref: str
    repo: str = ""
    version: str = ""

    @property
    def name(self) -> str:
        """The directory ``helm pull --untar`` makes: the chart's name."""
        return self.ref.rstrip("/").rsplit("/", 1)[-1].split("@", 1)[0]

    def describe(self) -> str:
        version = f" {self.version}" if self.version else ""
        return f"{self.ref}{version} from {self.repo}" if self.repo else f"{self.ref}{version}"


@dataclass(frozen=True)
class Chart:
    """One chart to inflate: a helmCharts entry with helmGlobals folded in,
    or a HelmChartInflationGenerator config."""

    node: Mapping  # holds the chart fields (and maybe chartHome/configHome)
    globals: Mapping | None
    by: str = "helmCharts"  # what the rendered objects' origins say made them
    # values a GitOps controller passes whole (krmcheck.gitops.chart): written
    # as they are, helm adding the chart's own defaults
    values: Mapping | None = None
    remote: Remote | None = None  # pulled into the temporary directory, then templated

    @property
    def origin(self) -> Origin:
        o = self.node.origin
        return Origin(o.path, o.line, o.col, self.by)

    def text(self, key: str) -> str:
        for source in (self.node, self.globals) if key in _GLOBAL_FIELDS else (self.node,):
            node = source.get(key) if source is not None else None
            if isinstance(node, Scalar) and node.value is not None:
                return node.as_string()
        return ""

    def flag(self, key: str) -> bool:
        return self.node.value(key) is True

    def strings(self, key: str) -> list[str]:
        node = self.node.get(key)
        if isinstance(node, Sequence):
            return [i.as_string() for i in node if isinstance(i, Scalar) and i.value is not None]
        return []

    @staticmethod
    def from_config(node: Mapping) -> "Chart":
        return Chart(node, None)


# --- reading the kustomization -------------------------------------------------

def charts_of(helm_charts: list[Node], globals_node: Mapping | None,
              legacy: list[Node]) -> list[Chart]:
    """helmCharts entries, then the converted helmChartInflationGenerator ones."""
    out = []
    for entry in helm_charts:
        out.append(Chart(_checked(entry, _CHART_FIELDS, "helmCharts"), globals_node))
    legacy_globals = None
    for entry in legacy:
        node = _checked(entry, _LEGACY_FIELDS, "helmChartInflationGenerator")
        fields = {_LEGACY[k]: v for k, v in node.items.items() if k in _LEGACY}
        found = {_LEGACY_GLOBALS[k]: v for k, v in node.items.items() if k in _LEGACY_GLOBALS}
        if found:
            legacy_globals = Mapping(found, node.origin)
        out.append(Chart(Mapping(fields, node.origin), None))
    # the legacy globals apply only when helmGlobals is absent, and to every chart
    if globals_node is None and legacy_globals is not None:
        out = [Chart(c.node, legacy_globals) for c in out]
    return out


def _checked(entry: Node, allowed: frozenset[str], field: str) -> Mapping:
    if not isinstance(entry, Mapping):
        raise BuildError(f"a {field} entry must be a map", entry.origin)
    for key, value in entry.items.items():
        if key not in allowed:
            raise BuildError(f"invalid Kustomization: {field}: unknown field \"{key}\"", value.origin)
    return entry


def generate(charts: list[Chart], env: HelmEnv) -> list[Resource]:
    out: list[Resource] = []
    for chart in charts:
        out.extend(inflate(chart, env))
    return out


# --- inflating -------------------------------------------------------------------------

def inflate(chart: Chart, env: HelmEnv) -> list[Resource]:
    """The resources ``helm template`` makes of one chart."""
    name = chart.text("name")
    if not env.enabled:
        raise BuildError(f"helm chart '{name}': must specify --enable-helm to inflate helm charts",
                         chart.origin)
    if not name:
        raise BuildError("helm chart name cannot be empty", chart.origin)
    merge = chart.text("valuesMerge") or "override"
    if merge not in MERGE_OPTIONS:
        raise BuildError(f"helm chart '{name}': valuesMerge must be one of {', '.join(MERGE_OPTIONS)}",
                         chart.origin)
    home = _chart_home(chart, env)
    pull = chart.remote or _from_repo(chart, home)
    if pull is None:
        _require_local(chart, env, home / name)
    elif not network_allowed(env.network):
        raise NeedsNetwork(f"helm chart {pull.describe()} needs the network, which is off by default; "
                           f"pass --network or set {NETWORK_ENV}=1 to pull it", chart.origin,
                           "helm chart", pull.describe())
    journal.impure("helm")
    import tempfile  # with the process transport below: only a build that runs helm needs them

    tmp = Path(tempfile.mkdtemp(prefix="kustomize-helm-"))
    try:
        run = _Runner(env.command, _helm_env(chart, env, tmp), chart.origin)
        _check_version(run.output(["version", "-c", "--short"]))
        if pull is not None:
            home = _pull(run, chart, pull, tmp / "charts")
        values = _values_file(chart, env, home, tmp, merge)
        text = run.output(template_args(chart, env, home, values))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _resources(text, chart)


def pull_args(remote: Remote, home: Path) -> list[str]:
    """kustomize's pullCommand, in its order."""
    args = ["pull", "--untar", "--untardir", str(home)]
    if remote.repo:
        args += ["--repo", remote.repo]
    args.append(remote.ref)
    if remote.version:
        args += ["--version", remote.version]
    return args


def _pull(run: "_Runner", chart: Chart, remote: Remote, home: Path) -> Path:
    """Pull ``remote`` below ``home``; the chart home to template it from."""
    run.output(pull_args(remote, home))
    if not (home / chart.text("name")).is_dir():
        raise BuildError(f"helm chart {remote.describe()}: `helm pull` made no directory "
                         f"'{chart.text('name')}'", chart.origin)
    return home


def template_args(chart: Chart, env: HelmEnv, home: Path, values: Path) -> list[str]:
    """kustomize's HelmChart.AsHelmArgs, in its order."""
    release = chart.text("releaseName")
    args = ["template", release if release else "--generate-name", str(home / chart.text("name"))]
    for flag, key in (("--namespace", "namespace"), ("--name-template", "nameTemplate")):
        if chart.text(key):
            args += [flag, chart.text(key)]
    args += ["-f", str(values)]
    for extra in chart.strings("additionalValuesFiles"):
        args += ["-f", str(_abs(env.kdir, extra))]
    for version in chart.strings("apiVersions"):
        args += ["--api-versions", version]
    if chart.text("kubeVersion"):
        args += ["--kube-version", chart.text("kubeVersion")]
    for flag, key in (("--include-crds", "includeCRDs"), ("--skip-tests", "skipTests"),
                      ("--no-hooks", "skipHooks"), ("--debug", "debug")):
        if chart.flag(key):
            args.append(flag)
    return args


def _abs(base: Path, path: str) -> Path:
    return Path(path) if os.path.isabs(path) else Path(os.path.abspath(base / path))


def _chart_home(chart: Chart, env: HelmEnv) -> Path:
    home = _abs(env.kdir, chart.text("chartHome") or DEFAULT_HOME)
    if chart.text("version") and chart.text("repo"):
        return home / f"{chart.text('name')}-{chart.text('version')}"
    return home


def _from_repo(chart: Chart, home: Path) -> Remote | None:
    """A chart kustomize would pull from its ``repo`` (it is not in the chart
    home): pulled into the temporary directory instead, never the repository."""
    repo, name = chart.text("repo"), chart.text("name")
    if not repo or (home / name).is_dir():
        return None
    if repo.startswith("oci://"):  # kustomize pulls oci://REPO/NAME
        return Remote(f"{repo.rstrip('/')}/{name}", version=chart.text("version"))
    return Remote(name, repo=repo, version=chart.text("version"))


def _require_local(chart: Chart, env: HelmEnv, path: Path) -> None:
    if path.is_dir():
        return
    shown = env.files.display(path)
    raise BuildError(f"helm chart '{chart.text('name')}' not found at {shown}, and no repo "
                     f"is given to pull it from", chart.origin)


def _helm_env(chart: Chart, env: HelmEnv, tmp: Path) -> dict[str, str]:
    config_home = chart.text("configHome")
    home = str(_abs(env.kdir, config_home)) if config_home else str(tmp / "helm")
    return {**os.environ, "HELM_CONFIG_HOME": home, "HELM_CACHE_HOME": f"{home}/.cache",
            "HELM_DATA_HOME": f"{home}/.data"}


def _check_version(output: str) -> None:
    found = _VERSION.search(output)
    if found is None:
        raise BuildError(f"cannot find a version in the output of `helm version`: {output.strip()}")
    version = found.group(0).lstrip("v")
    if version.split(".")[0] != "3":
        raise BuildError(f"helm charts need helm v3, but helm is v{version}")


@dataclass(frozen=True)
class _Runner:
    command: str
    env: dict[str, str]
    origin: Origin

    def output(self, args: list[str]) -> str:
        from krmcheck.transports import Invocation, TransportError, TransportTimeout
        from krmcheck.transports.exec import ExecTransport

        shown = " ".join([self.command, *args])
        if shutil.which(self.command, path=self.env.get("PATH")) is None:
            raise BuildError(f"unable to run '{shown}': '{self.command}' is not installed "
                             f"(set --helm-command)", self.origin)
        call = Invocation((self.command, *args), b"", Path.cwd(), self.env, TIMEOUT_SECONDS)
        try:
            done = ExecTransport().run(call)  # bounded output; its process group killed at the limit
        except TransportTimeout:
            raise BuildError(f"'{shown}' did not finish in {TIMEOUT_SECONDS}s", self.origin) from None
        except TransportError as e:
            raise BuildError(f"unable to run '{shown}': {e}", self.origin) from None
        except OSError as e:
            raise BuildError(f"unable to run '{shown}': {e.strerror}", self.origin) from None
        if done.returncode != 0:
            raise ProgramError(f"'{shown}' failed with exit code {done.returncode}: {done.stderr_text.strip()}",
                             self.origin)
        return done.stdout.decode("utf-8", "replace")


# --- values -------------------------------------------------------------------------------

def _values_file(chart: Chart, env: HelmEnv, home: Path, tmp: Path, merge: str) -> Path:
    given = chart.text("valuesFile")
    source = _abs(env.kdir, given) if given else home / chart.text("name") / "values.yaml"
    inline = chart.node.get("valuesInline")
    target = tmp / f"{chart.text('name')}-kustomize-values.yaml"
    if chart.values is not None:
        target.write_text(emit(chart.values) if chart.values.items else "{}\n")
        return target
    if not isinstance(inline, Mapping) or not inline.items:
        target.write_bytes(env.files.read_bytes(source, chart.origin))
        return target
    values = inline.to_data()
    if merge != "replace":
        chart_values = _load_values(source, env, chart)
        if merge == "override":
            values = _merge(values, chart_values)
        else:
            values = _merge(chart_values, values)
    target.write_text(emit(from_data(values, chart.origin)) if values else "{}\n")
    return target


def _load_values(path: Path, env: HelmEnv, chart: Chart) -> dict:
    text = env.files.read_text(path, chart.origin)
    try:
        docs = load_documents(text, env.files.display(path), "helm values")
    except LoadError as e:
        raise BuildError(e.message, Origin(e.path, e.line, e.col)) from None
    data = docs[0].to_data() if docs else {}
    return data if isinstance(data, dict) else {}


def _merge(src: dict, dest: dict) -> dict:
    """kyaml's merge2 of plain maps: ``src`` wins; a null in ``src`` removes
    the key; lists are replaced whole."""
    out = dict(dest)
    for key, value in src.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(value, out[key])
        else:
            out[key] = value
    return out


# --- output ----------------------------------------------------------------------------------

def _resources(text: str, chart: Chart) -> list[Resource]:
    """helm's output as resources; every node points at the chart entry
    (the rendered text has no lines a person edits)."""
    try:
        docs = load_documents(text, chart.origin.path, "helmCharts")
    except LoadError as e:
        raise BuildError(f"helm chart '{chart.text('name')}': helm printed invalid YAML: {e.message}",
                         chart.origin) from None
    out: list[Resource] = []
    for doc in docs:
        if not isinstance(doc, Mapping) or not doc.items:
            continue
        for n in walk(doc):
            n.origin = chart.origin
        out.extend(_expand(doc, chart))
    return out


def _expand(doc: Mapping, chart: Chart) -> list[Resource]:
    kind = doc.value("kind")
    items = doc.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, Sequence):
        return [r for i in items if isinstance(i, Mapping) for r in _expand(i, chart)]
    if not kind:
        raise BuildError(f"helm chart '{chart.text('name')}' made an object without kind", chart.origin)
    return [Resource(doc)]
