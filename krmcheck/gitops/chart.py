"""Rendering a chart a controller applies (a Flux HelmRelease, an Argo CD
Application with a helm source) through the same helm runner as
kustomize's ``helmCharts`` (``krmcheck.kustomize.builtins.helm``).

The controller's values are merged here, each value keeping the origin of
the line that gave it, and passed to helm as one values file; helm adds the
chart's own ``values.yaml`` under them, as it does for the controllers.

A chart from a chart repository (``HelmSource.pull``) is pulled by that
runner, and only with both ``--enable-helm`` and ``--network``.

helm's output has no lines a person edits: every rendered node points at the
object's chart line, except a string or number that is one of the values the object
supplied (or ends in one after ``:`` or ``@``, as an image tag or digest
does), which points at that value's line, the chart line kept in the trail.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from krmcheck.gitops import NOT_HELD
from krmcheck.gitops.root import ARGOCD, ControllerRoot, HelmSource
from krmcheck.gitops.substitute import Problem
from krmcheck.kustomize.builtins import helm
from krmcheck.kustomize.remote import network_allowed
from krmcheck.kustomize.target import Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, Value, walk
from krmcheck.tree.origin import Origin

VALIDATOR = "helm"  # krmcheck.gitops.HELM
BY = "helm values"
MIN_MATCH = 3  # shorter supplied strings ("v1", "80") say too little to claim a rendered value


def render(builder: Builder, root: ControllerRoot) -> tuple[list[Resource], list[Problem]]:
    """The objects the controller applies for a chart, or, where the chart
    is not rendered, none and one info problem at the object's chart line
    saying why."""
    source = root.helm
    assert source is not None
    enabled = builder.options.enable_helm
    if source.chart is None and source.pull is None:
        return [], [Problem(f"the chart comes from {source.remote}, not this repository, "
                            f"and is not rendered", "info", source.origin, validator=VALIDATOR,
                            summary=NOT_HELD)]
    if source.pull is not None:
        missing = [flag for flag, on in (("--enable-helm", enabled),
                                         ("--network", network_allowed(builder.options.network))) if not on]
        if missing:
            return [], [Problem(f"the chart comes from {source.remote}, not this repository, and is not "
                                f"rendered: pass {' and '.join(missing)} to pull it with helm and check "
                                f"what it makes", "info", source.origin, validator=VALIDATOR,
                                summary=" and ".join(missing))]
        node = _chart_node(source, source.pull.name, None)
        chart = helm.Chart(node, None, by=root.controller, values=source.values, remote=source.pull)
        env = helm.HelmEnv(root.directory, builder.files, True, builder.options.helm_command, network=True)
    else:
        assert source.chart is not None
        if root.controller == ARGOCD and not os.path.isdir(source.chart):
            return [], []  # the application's path is not there: its root's problems say so
        if not enabled:
            return [], [Problem(f"the chart {builder.files.display(source.chart)} is not rendered: "
                                f"pass --enable-helm (and --helm-command if helm is not on PATH) to check "
                                f"what it makes", "info", source.origin, validator=VALIDATOR,
                                summary="--enable-helm")]
        node = _chart_node(source, source.chart.name, source.chart.parent)
        chart = helm.Chart(node, None, by=root.controller, values=source.values)
        env = helm.HelmEnv(source.chart.parent, builder.files, True, builder.options.helm_command)
    resources = helm.inflate(chart, env)
    _attribute(resources, source.values)
    return resources, []


def _chart_node(source: HelmSource, name: str, home: Path | None) -> Mapping:
    o = source.origin
    fields: dict[str, Node] = {
        "name": Scalar(name, o),
        "releaseName": Scalar(source.release, o),
        "includeCRDs": Scalar(True, o),  # both controllers install a chart's crds/ by default
    }
    if home is not None:
        fields["chartHome"] = Scalar(str(home), o)
    if source.namespace:
        fields["namespace"] = Scalar(source.namespace, o)
    return Mapping(fields, o)


def _attribute(resources: list[Resource], values: Mapping) -> None:
    supplied = _supplied(values)
    if not supplied:
        return
    for res in resources:
        for n in walk(res.node):
            text = _text(n)
            if text is not None:
                origin = _match(text, supplied)
                if origin is not None:
                    n.rewrite(origin)


def _supplied(values: Mapping) -> dict[str, Origin]:
    """Supplied string values that say enough, each with its one origin
    (a text given at two places names neither)."""
    found: dict[str, Origin] = {}
    ambiguous: set[str] = set()
    for n in walk(values):
        text = _text(n)
        if text is not None and len(text) >= MIN_MATCH:
            if text in found and found[text] != n.origin:
                ambiguous.add(text)
            found[text] = n.origin
    return {k: Origin(o.path, o.line, o.col, BY) for k, o in found.items() if k not in ambiguous}


def _text(n: Node) -> str | None:
    """A string or number as helm would print it into a template."""
    if not isinstance(n, Scalar) or n.value is None or isinstance(n.value, bool):
        return None
    return n.value if isinstance(n.value, str) else n.as_string()


def _match(text: str, supplied: dict[str, Origin]) -> Origin | None:
    if text in supplied:
        return supplied[text]
    for sep in ("@", ":"):  # an image's digest, then its tag
        if sep in text:
            tail = text.rsplit(sep, 1)[1]
            if tail in supplied:
                return supplied[tail]
    return None


# --- values ------------------------------------------------------------------------

def merge(base: Mapping, over: Mapping) -> Mapping:
    """Helm's and Flux's merge of values: maps merge key by key, ``over``
    winning; anything else (lists too) is replaced whole. A null stays, for
    helm to remove the chart's default."""
    out = Mapping(dict(base.items), base.origin, base.trail)
    for key, value in over.items.items():
        old = out.items.get(key)
        out.items[key] = merge(old, value) if isinstance(old, Mapping) and isinstance(value, Mapping) \
            else value.copy()
    return out


def load_values(text: str, origin: Origin, what: str, files: Files,
                shift: bool = False) -> Mapping:
    """A values document held as text (a ConfigMap or Secret key, an Argo CD
    ``values`` string). Each value points at its own line when ``shift``
    (the text is a literal block of the file at ``origin``), else at ``origin``."""
    try:
        docs = load_documents(text, origin.path, BY)
    except LoadError as e:
        raise BuildError(f"{what}: invalid values YAML: {e.message}", origin) from None
    # an empty document (a values file of only ---) is no values, as helm reads it
    docs = [d for d in docs if not (isinstance(d, Scalar) and d.value is None)]
    doc = docs[0] if docs else Mapping({}, origin)
    if not isinstance(doc, Mapping):
        raise BuildError(f"{what}: values must be a map", origin)
    offset = _block_offset(origin, files) if shift else None
    for n in walk(doc):
        o = n.origin
        n.origin = (Origin(origin.path, origin.line + o.line, offset + o.col - 1, BY)
                    if offset is not None else Origin(origin.path, origin.line, origin.col, BY))
    return doc


_LITERAL = re.compile(r":\s*\|[-+0-9]*\s*(#.*)?$")


def _block_offset(origin: Origin, files: Files) -> int | None:
    """The column of a literal block's content, when ``origin`` is the line
    of ``key: |``."""
    try:
        lines = files.read_text(files.repo_root / origin.path).splitlines()
    except (BuildError, OSError):
        return None
    if origin.line >= len(lines) or not _LITERAL.search(lines[origin.line - 1]):
        return None
    following = lines[origin.line]
    return len(following) - len(following.lstrip(" ")) + 1


def load_file_or_say(path: Path, files: Files, origin: Origin, problems: list[Problem]) -> Mapping | None:
    """A values file, or None with an error problem where it is broken (the
    root is still found: its check reports the file)."""
    try:
        return load_file(path, files, origin)
    except BuildError as e:
        where = Origin(e.location.path, e.location.line, e.location.col) if e.location else origin
        problems.append(Problem(e.message, "error", where, validator=VALIDATOR))
        return None


def load_file(path: Path, files: Files, origin: Origin) -> Mapping:
    """A values file of the repository, each value at its own line."""
    text = files.read_text(path, origin)
    try:
        docs = load_documents(text, files.display(path), BY)
    except LoadError as e:
        raise BuildError(e.message, Origin(e.path, e.line, e.col)) from None
    doc = docs[0] if docs else None
    return doc if isinstance(doc, Mapping) else Mapping({}, origin)


_INDEX = re.compile(r"^(.*)\[(\d+)\]$")


def set_path(values: Mapping, path: str, value: Node) -> None:
    """Set ``value`` at a helm ``--set`` path (``a.b``, ``a\\.b``, ``list[0].x``)."""
    keys = [k.replace("\\.", ".") for k in re.split(r"(?<!\\)\.", path)]
    node: Node = values
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        m = _INDEX.match(key)
        name, index = (m.group(1), int(m.group(2))) if m else (key, None)
        assert isinstance(node, Mapping)
        if index is None:
            if last:
                node.items[name] = value
                return
            nxt = node.items.get(name)
            if not isinstance(nxt, Mapping):
                nxt = Mapping({}, value.origin)
                node.items[name] = nxt
            node = nxt
            continue
        seq = node.items.get(name)
        if not isinstance(seq, Sequence):
            seq = Sequence([], value.origin)
            node.items[name] = seq
        while len(seq.items) <= index:
            seq.items.append(Scalar(None, value.origin))
        if last:
            seq.items[index] = value
            return
        if not isinstance(seq.items[index], Mapping):
            seq.items[index] = Mapping({}, value.origin)
        node = seq.items[index]


def typed(text: str) -> Value:
    """helm ``--set``'s typing of a value (helm strvals ``typedVal``): ``true``,
    ``false`` and ``null`` in any case, a decimal integer that does not start
    with 0 (or 0 itself), else the string."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "null":
        return None
    if text == "0":
        return 0
    if text and text[0] != "0" and re.fullmatch(r"[-+]?[0-9]+", text):
        n = int(text)
        if -(2 ** 63) <= n < 2 ** 63:
            return n
    return text


def target_value(text: str, literal: bool = False) -> Value:
    """A ``valuesFrom`` value set at its ``targetPath`` (fluxcd/pkg chartutil
    ``ReplacePathValue``): text in quotes is the string inside them, else it
    is typed as ``--set`` types it; ``literal`` keeps it a string as it is."""
    if literal:
        return text
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text.strip("'\"")
    return typed(text)
