"""An Argo CD Application whose source is a Helm chart: ``source.path`` a
chart in this repository (rendered), or ``source.chart`` from the chart
repository ``repoURL`` at ``targetRevision``, pulled by helm with
``--network`` (an ``oci://`` repoURL, or one without a scheme, Argo CD's
way of writing an OCI registry, is an OCI reference ``REPOURL/CHART``).

The values, in the order Argo CD passes them to ``helm template``:
``helm.valueFiles`` (relative to the chart, in order), ``helm.values`` (a
YAML string) or ``helm.valuesObject`` (which wins over it), then
``helm.parameters`` (``--set``, or ``--set-string`` with ``forceString``).
The release is ``helm.releaseName`` or the Application's name, in
``spec.destination.namespace``.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
from pathlib import Path
from typing import NamedTuple

from krmcheck import applied
from krmcheck.gitops import chart
from krmcheck.gitops.root import ControllerRoot, HelmSource, confined
from krmcheck.gitops.substitute import Problem
from krmcheck.kustomize.builtins.helm import Remote
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Scalar, lookup


def with_chart(root: ControllerRoot, res: Resource, source: Mapping, files: Files, top: Path,
               refs: dict[str, bool]) -> ControllerRoot:
    """``refs``: the ``ref:`` names of the application's sources, and
    whether each is this repository (``$NAME/path`` value files are read
    from the checkout at ``top`` then)."""
    options = source.mapping("helm") or Mapping({}, source.origin)
    given = options.value("releaseName")
    release = given if isinstance(given, str) and given else res.name
    namespace = lookup(res.node, ["spec", "destination", "namespace"])
    ns = namespace.value if isinstance(namespace, Scalar) and isinstance(namespace.value, str) else ""
    line = source.get("chart") or source.get("path") or source.get("repoURL")
    origin = line.origin if line is not None else root.origin
    problems: list[Problem] = []
    if "chart" in source.items:
        where = f"{source.value('repoURL')} (chart {source.value('chart')})"
        values, reads = _values(root, options, files, problems, _Refs(top, refs), remote=True)
        helm = HelmSource(None, release, ns, values, origin, remote=where, pull=_pull(source))
        return dataclasses.replace(root, helm=helm, problems=tuple(problems), reads=tuple(reads))
    if not os.path.isdir(root.directory):
        path = source.get("path")
        if in_unfetched_submodule(root.directory, files) is not None:
            return root  # built as a directory, whose build says so (a warning: argocd.kustomization)
        problems.append(Problem(f"application path does not exist: {files.display(root.directory)}", "error",
                                path.origin if path is not None else origin, validator="build"))
    values, reads = _values(root, options, files, problems, _Refs(top, refs))
    helm = HelmSource(root.directory, release, ns, values, origin)
    chart_files = [os.path.join(here, f) for here, _, names in os.walk(root.directory) for f in names]
    return dataclasses.replace(root, helm=helm, problems=tuple(problems),
                               reads=tuple(sorted({Path(p) for p in chart_files} | set(reads))))


def in_unfetched_submodule(directory: Path, files: Files) -> str | None:
    """The git submodule a missing application path lies in, when this
    checkout has not fetched it: Argo CD's repo server checks a
    repository's submodules out with it, so the path is there when Argo CD
    renders it, and is another repository's here."""
    from krmcheck import git  # (only a missing application path reads .gitmodules)

    return git.unfetched_submodule(files.repo_root, files.display(directory))


def _pull(source: Mapping) -> Remote | None:
    url, name = _text(source.get("repoURL")), _text(source.get("chart"))
    if not url or not name:
        return None
    revision = _text(source.get("targetRevision"))
    version = "" if revision == "HEAD" else revision
    if url.startswith("oci://") or "://" not in url:
        base = url if url.startswith("oci://") else f"oci://{url}"
        return Remote(f"{base.rstrip('/')}/{name}", version=version)
    if not url.startswith(("http://", "https://")):
        return None
    return Remote(name, repo=url, version=version)


def _text(node: object) -> str:
    return node.as_string().strip() if isinstance(node, Scalar) and node.value is not None else ""


class _Refs(NamedTuple):
    top: Path
    ours: dict[str, bool]

    def path(self, written: str) -> Path | None:
        """Where ``$NAME/path`` is in this checkout; None: another repository's file."""
        name, _, rest = written[1:].partition("/")
        return confined(self.top, rest) if self.ours.get(name) else None


def _value_file(chart_dir: Path, top: Path, value: str) -> Path | None:
    """Where Argo CD reads a value file (ResolveValueFilePathOrUrl): a
    relative path from the application's path, which may climb out of the
    chart as long as it stays in the repository; an absolute one from the
    repository's top. None where it leaves the repository."""
    if value.startswith("/"):
        return confined(top, value)
    where = posixpath.normpath(posixpath.join(Path(os.path.relpath(chart_dir, top)).as_posix(), value))
    if where == ".." or where.startswith("../"):
        return None
    return top / where if where != "." else top


def _values(root: ControllerRoot, options: Mapping, files: Files,
            problems: list[Problem], refs: _Refs, remote: bool = False) -> tuple[Mapping, list[Path]]:
    values = Mapping({}, options.origin)
    reads: list[Path] = []
    value_files = options.sequence("valueFiles")
    ignore_missing = options.value("ignoreMissingValueFiles") is True
    for entry in value_files.items if value_files is not None else ():
        if not (isinstance(entry, Scalar) and isinstance(entry.value, str)):
            continue
        if entry.value.startswith("$") and refs.path(entry.value) is not None:
            # another source of the application, this repository: the file is here
            path = refs.path(entry.value)
            assert path is not None
            if os.path.isfile(path):
                loaded = chart.load_file_or_say(path, files, entry.origin, problems)
                if loaded is not None:
                    values = chart.merge(values, loaded)
                reads.append(path)
            elif not ignore_missing:
                problems.append(Problem(f"valueFiles: {entry.value} is not in the repository "
                                        f"({files.display(path)})", "error", entry.origin,
                                        validator=chart.VALIDATOR))
            continue
        if remote:
            problems.append(Problem(f"valueFiles: {entry.value} is a file of the pulled chart: its "
                                    f"values are not passed to it", "info", entry.origin,
                                    validator=chart.VALIDATOR))
            continue
        if entry.value.startswith("$") or "://" in entry.value:
            problems.append(Problem(f"valueFiles: {entry.value} is another source's or a remote file: "
                                    f"its values are not passed to the chart", "info", entry.origin,
                                    validator=chart.VALIDATOR))
            continue
        path = _value_file(root.directory, files.repo_root, entry.value)
        if path is None:
            problems.append(Problem(f"valueFiles: {entry.value} climbs out of the repository, which Argo CD "
                                    f"refuses", "error", entry.origin, validator=chart.VALIDATOR))
            continue
        if not os.path.isfile(path):
            if not ignore_missing:
                problems.append(Problem(f"valueFiles: {entry.value} does not exist ({files.display(path)})",
                                        "error", entry.origin, validator=chart.VALIDATOR))
            continue
        loaded = chart.load_file_or_say(path, files, entry.origin, problems)
        values = chart.merge(values, loaded) if loaded is not None else values
        reads.append(path)
    inline = options.get("valuesObject")
    text = options.get("values")
    if isinstance(inline, Mapping):
        values = chart.merge(values, inline)
    elif isinstance(text, Scalar) and isinstance(text.value, str):
        try:
            values = chart.merge(values, chart.load_values(text.value, text.origin, "helm.values", files,
                                                           shift=True))
        except BuildError as e:
            if applied.is_template(text.value):  # <MARKER> lines a tool replaces: a template's values
                problems.append(Problem(f"{e.message}; it holds placeholders, so it is a template's values, "
                                        f"YAML only once its tool fills them in", "warning", text.origin,
                                        validator=chart.VALIDATOR))
            else:
                problems.append(Problem(e.message, "error", text.origin, validator=chart.VALIDATOR))
    parameters = options.sequence("parameters")
    for p in parameters.items if parameters is not None else ():
        if isinstance(p, Mapping) and isinstance(p.value("name"), str):
            raw = p.get("value")
            text_value = raw.as_string() if isinstance(raw, Scalar) and raw.value is not None else ""
            value = text_value if p.value("forceString") is True else chart.typed(text_value)
            origin = raw.origin if raw is not None else p.origin
            chart.set_path(values, str(p.value("name")), Scalar(value, origin))
    return values, reads
