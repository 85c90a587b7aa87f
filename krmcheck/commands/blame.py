"""``krmcheck blame ROOT KIND/[NAMESPACE/]NAME FIELD``: who wrote a rendered value.

The rendered node at FIELD carries its provenance (:mod:`krmcheck.tree.node`):
``origin``, the last writer, and ``trail``, the earlier ones oldest first.
Blame prints the value and every writer newest first: the node's origin,
then its trail reversed.

What wrote each one is its ``Origin.by`` in words. Some writers are made
clearer by the line they point at: ``by`` says ``kustomization`` for every
field of a kustomization file, so the field under that line tells an
``images`` entry from a ``namePrefix``; a Flux Kustomization's or an Argo CD
Application's amendments and a substitution variable's ConfigMap are
resources to the loader, and the line tells what they are.

A Secret's ``data`` and ``stringData`` are never printed: their values show
as ``<redacted>``, and any other value is masked by provenance as the
pipeline masks findings (:mod:`krmcheck.redact`): one that came from a
Secret is masked, a public one shown even when a Secret holds the same text.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import NamedTuple, TextIO, cast

from krmcheck import discover, redact
from krmcheck.pipeline.render import Builders, CONTROLLER_PREFIXES, render_root
from krmcheck.pipeline.report import EXIT_BROKEN, EXIT_OK
from krmcheck.pipeline.run import CheckOptions, Run, UsageError, anchored, load_config
from krmcheck.pipeline.select import excludes_of, selection_of, with_controller_roots
from krmcheck.gitops.root import ControllerRoot, Root
from krmcheck.reporters import relative
from krmcheck.reporters.safe import MessageStream, json_text
from krmcheck.resource.secrets import secret_places, secret_values
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files, inside, read_bounded
from krmcheck.resource.resid import ResId
from krmcheck.resource.resource import Resource
from krmcheck.tree import fieldpath
from krmcheck.tree.emit import emit
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Origin

SECRET_FIELDS = ("data", "stringData")

# Origin.by as a person reads it.
BY_WORDS = {
    "resource": "resource file",
    "kustomization": "kustomization",
    "patch": "patch",
    "replacements": "replacement",
    "vars": "var",
    "configMapGenerator": "configMapGenerator",
    "secretGenerator": "secretGenerator",
    "function": "KRM function",
    "function output": "KRM function output",
    "plugin": "exec plugin",
    "plugin output": "plugin output",
    "helmCharts": "helm chart",
    "helm values": "helm values",
    "buildMetadata": "buildMetadata",
    "flux Kustomization": "Flux Kustomization",
    "krmcheck config": ".krmcheck.yaml substitution variable",
    "functionConfig": "function config",
    "unknown": "unknown writer",
}

# A kustomization's fields (and the same fields of a Flux Kustomization's
# spec, or an Argo CD Application's spec.source.kustomize) as writers.
FIELD_WORDS = {
    "images": "images entry",
    "replicas": "replicas entry",
    "namePrefix": "namePrefix",
    "nameSuffix": "nameSuffix",
    "namespace": "namespace",
    "targetNamespace": "targetNamespace",
    "commonLabels": "commonLabels",
    "labels": "labels entry",
    "commonAnnotations": "commonAnnotations",
    "commonMetadata": "commonMetadata",
    "patches": "patch",
    "patchesStrategicMerge": "patch",
    "patchesJson6902": "patch",
    "replacements": "replacement",
    "vars": "var",
    "configMapGenerator": "configMapGenerator",
    "secretGenerator": "secretGenerator",
    "generatorOptions": "generatorOptions",
    "helmCharts": "helm chart",
    "buildMetadata": "buildMetadata",
}


class BlameError(Exception):
    """Something the user named does not exist: one line, exit 2."""


class Writer(NamedTuple):
    path: str
    line: int
    col: int
    by: str  # what wrote it, in words


@dataclasses.dataclass(frozen=True)
class Blame:
    root: str  # as given
    resource: str  # Kind/[namespace/]name as rendered
    field: str  # the canonical spelling of the path
    value: Node  # masked where it holds Secret values
    writers: tuple[Writer, ...]  # newest first

    def to_json(self) -> dict[str, object]:
        return {"root": self.root, "resource": self.resource, "field": self.field,
                "value": self.value.to_data(),
                "writers": [w._asdict() for w in self.writers]}


# --- the command ------------------------------------------------------------------

def run(root: str, resource: str, field: str, opts: CheckOptions,
        out: TextIO, err: TextIO, as_json: bool = False) -> int:
    """Print the blame of ``field`` in ``resource`` as ``root`` renders it."""
    opts = anchored(opts)
    try:
        found = blame(root, resource, field, opts)
    except (BlameError, UsageError) as e:
        err.write(f"krmcheck blame: error: {_one_line(str(e))}\n")
        return EXIT_BROKEN
    if as_json:
        out.write(json_text(json.dumps(found.to_json(), indent=2, ensure_ascii=False)) + "\n")
    else:
        assert opts.cwd is not None
        top = _top(root, opts.cwd)
        here = os.path.relpath(opts.cwd, top)
        cast(TextIO, MessageStream(out)).write(text(found, "" if here == "." else Path(here).as_posix()))
    return EXIT_OK


def _top(root: str, cwd: Path) -> Path:
    """The top of the repository: the root's (a controller root is looked up
    in the working directory's repository)."""
    if root.startswith(CONTROLLER_PREFIXES):
        return discover.top_of(cwd, cwd)
    return discover.top_of(cwd / root, cwd)


def blame(root: str, resource: str, field: str, opts: CheckOptions) -> Blame:
    kind, namespace, name = parse_resource(resource)
    try:
        steps = fieldpath.parse(field)
    except ValueError as e:
        raise BlameError(str(e)) from None
    opts = anchored(opts)
    cwd = opts.cwd or Path.cwd()
    top = _top(root, cwd)
    files = Files(top)
    controller = root.startswith(CONTROLLER_PREFIXES)
    if not controller:
        if not os.path.exists(cwd / root):
            raise BlameError(f"{root}: no such kustomization directory or manifest")
        opts = dataclasses.replace(opts, paths=(cwd / root,))  # its .krmcheck.yaml
    else:
        opts = dataclasses.replace(opts, paths=(cwd,))
    run = Run(opts, top, load_config(opts, top))
    builders = Builders(run)
    config = run.config
    try:
        target: Root = _controller_root(root, run) if controller else (cwd / root)
        rendered = render_root(builders, target, config)
    except BuildError as e:
        raise BlameError(redact.text(str(e), frozenset(s for b in builders.made.values() for s in b.secrets))) \
            from None
    secrets = redact.Secrets(
        frozenset(s for b in builders.made.values() for s in b.secrets) | secret_values(rendered.resources),
        frozenset(p for b in builders.made.values() for p in b.secret_places) | secret_places(rendered.resources),
        target.secret_values if isinstance(target, ControllerRoot) else frozenset())
    res = find_resource(rendered.resources, kind, namespace, name, root)
    chain = fieldpath.trace(res.node, steps)
    shown = _spelling(steps, field)
    if len(chain) <= len(steps):
        missing = _spelling(steps[:len(chain)], field)
        raise BlameError(f"{resource_id(res)} has no field {shown}"
                         + (f" ({missing} does not exist)" if missing != shown else ""))
    node = chain[-1]
    value = _masked(node, res.kind == "Secret" and _under_secret_data(steps), secrets,
                    res.kind == "Secret" and not steps)
    describe = _Describer(files, res, substituted=root.startswith("flux:"))
    origins = [node.origin, *reversed(node.trail)]
    writers = tuple(Writer(o.path, o.line, o.col, describe(o, origins[i - 1] if i else None))
                    for i, o in enumerate(origins) if o.line > 0)
    return Blame(root, resource_id(res), shown, value, writers)


def text(found: Blame, cwd: str = "") -> str:
    """The header with the value (inline for a scalar, YAML below for the
    rest), then the writers, newest first; paths relative to ``cwd`` (the
    current directory, repo-relative), as the text report names them."""
    head = f"{found.resource} {found.field}" if found.field else found.resource
    if isinstance(found.value, Scalar):
        first, *rest = _scalar_text(found.value).split("\n")
        lines = [f"{head}: {first}"] + ["  " + line if line else line for line in rest]
    else:
        shown = emit(found.value).rstrip("\n")
        lines = [f"{head}:"] + ["  " + line if line else line for line in shown.split("\n")]
    if found.writers:
        lines.append("written by (newest first):")
        places = [_here(w, cwd) for w in found.writers]
        width = max(len(p) for p in places)
        lines += [f"  {p.ljust(width)}  {w.by}" for p, w in zip(places, found.writers)]
    else:
        lines.append("written by: no recorded writer")
    return "\n".join(lines) + "\n"


def _here(w: Writer, cwd: str) -> str:
    path = w.path if "://" in w.path else relative(w.path, cwd)  # a remote file is named by its URL
    return f"{path}:{w.line}:{w.col}"


def _scalar_text(node: Scalar) -> str:
    """A scalar as the rendered YAML spells it (``"3"`` for a string that
    reads as a number, a ``|`` block for several lines), never folded."""
    shown = emit(node).rstrip("\n")
    value = node.value
    if isinstance(value, str) and "\n" not in value and "\n" in shown:
        return json.dumps(value, ensure_ascii=False)  # folded at 80 columns
    return shown


# --- the root ---------------------------------------------------------------------

def _controller_root(name: str, run: Run) -> ControllerRoot:
    """The controller root ``name`` among those found under the current
    directory, as ``krmcheck build`` finds it."""
    excludes = excludes_of(run)
    selection = selection_of(run, excludes)
    roots = [r for r in with_controller_roots(run, selection, excludes)
             if isinstance(r, ControllerRoot)]
    for r in roots:
        if r.name == name:
            return r
    known = ", ".join(sorted(r.name for r in roots)) or "none"
    raise BlameError(f"{name}: no such GitOps controller root under the current directory "
                     f"(found: {known})")


# --- the resource -----------------------------------------------------------------

def parse_resource(text: str) -> tuple[str, str | None, str]:
    """``Kind/name`` or ``Kind/namespace/name``: (kind, namespace or None, name)."""
    parts = text.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise BlameError(f"{text!r}: name a resource as KIND/NAME or KIND/NAMESPACE/NAME")
    if len(parts) == 2:
        return parts[0], None, parts[1]
    return parts[0], parts[1], parts[2]


def find_resource(resources: list[Resource], kind: str, namespace: str | None, name: str,
                  root: str) -> Resource:
    """The one rendered resource of that kind and name (and namespace, when
    given); failing that, the one that had that name before namePrefix,
    nameSuffix or a namespace changed it."""
    def matches(rid: ResId) -> bool:
        return (rid.gvk.kind == kind and rid.name == name
                and (namespace is None or _same_namespace(rid.namespace, namespace)))

    found = [r for r in resources if matches(r.id())]
    if not found:
        found = [r for r in resources if any(matches(rid) for rid in r.all_ids())]
    wanted = "/".join(p for p in (kind, namespace, name) if p is not None)
    if not found:
        same_kind = sorted(resource_id(r) for r in resources if r.kind == kind)
        hint = (f"; its {kind} resources: {_listed(same_kind)}" if same_kind
                else f"; it renders no {kind}")
        raise BlameError(f"{root} renders no {wanted}{hint}")
    if len(found) > 1:
        ids = [f"{resource_id(r)} ({r.api_version})" for r in found]
        more = "" if namespace is not None else "; name the namespace: KIND/NAMESPACE/NAME"
        raise BlameError(f"{wanted} matches {len(found)} resources of {root}: {_listed(ids)}{more}")
    return found[0]


def resource_id(res: Resource) -> str:
    return "/".join(p for p in (res.kind, res.namespace, res.name) if p)


def _same_namespace(have: str, wanted: str) -> bool:
    return have == wanted or {have, wanted} == {"", "default"}


def _listed(items: list[str], most: int = 10) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


# --- the field --------------------------------------------------------------------

def _spelling(steps: tuple[fieldpath.Step, ...], given: str) -> str:
    try:
        return fieldpath.format(steps)
    except ValueError:  # a selector no dotted spelling can hold
        return given


def _under_secret_data(steps: tuple[fieldpath.Step, ...]) -> bool:
    return bool(steps) and steps[0].key in SECRET_FIELDS


def _masked(node: Node, whole: bool, secrets: redact.Secrets, secret_resource: bool) -> Node:
    """A copy of ``node`` safe to print: every scalar masked when ``whole``
    (a Secret's data); in a whole Secret, its data and stringData; anywhere
    else, by provenance as the pipeline masks findings (redact.shown_tree):
    a value that came from a Secret is masked, a public one is shown even
    when a Secret holds the same text."""
    if whole and isinstance(node, Scalar):
        return Scalar(redact.MASK, node.origin, node.trail)
    if whole or secret_resource:
        if isinstance(node, Mapping):
            return Mapping({k: _masked(v, whole or (secret_resource and k in SECRET_FIELDS), secrets, False)
                            for k, v in node.items.items()}, node.origin, node.trail)
        if isinstance(node, Sequence):
            return Sequence([_masked(v, whole, secrets, False) for v in node.items], node.origin, node.trail)
    return redact.shown_tree(node, secrets)


# --- the writers ------------------------------------------------------------------

# Writers that copy a field of another resource: the copied field's origin
# follows them in the trail.
COPIERS = {"replacements": "replacement", "vars": "var"}

_Index = dict[tuple[int, int], tuple[Mapping, tuple[str, ...]]]


class _Describer:
    """``Origin.by`` in words, sharpened by the field at the writer's line."""

    def __init__(self, files: Files, resource: Resource, substituted: bool) -> None:
        self.top = files.repo_root.resolve()
        own = resource.orig_id()
        self.own = (own.gvk.kind, own.name)
        self.substituted = substituted  # a Flux root: post-build substitution ran last
        self.indexes: dict[str, _Index | None] = {}

    def __call__(self, origin: Origin, newer: Origin | None) -> str:
        """``origin`` in words; ``newer`` is the writer after it, if any."""
        words = self._words(origin, newest=newer is None)
        if newer is not None and newer.by in COPIERS:
            # replacements and vars put the copied field's origin right
            # before their own in the trail
            return f"{words} (source of the {COPIERS[newer.by]})"
        return words

    def _words(self, origin: Origin, newest: bool) -> str:
        words = BY_WORDS.get(origin.by, origin.by)
        if origin.by not in ("kustomization", "resource", "flux Kustomization"):
            return words
        if origin.path not in self.indexes:
            self.indexes[origin.path] = _index(self.top, origin.path)
        index = self.indexes[origin.path]
        at = index.get((origin.line, origin.col)) if index is not None else None
        if at is None:
            return words
        doc, keys = at
        kind, api_version = doc.value("kind"), doc.value("apiVersion")
        api_version = api_version if isinstance(api_version, str) else ""
        if kind == "Kustomization" and api_version.startswith("kustomize.toolkit.fluxcd.io/"):
            if keys[:1] == ("spec",) and len(keys) > 1:
                if keys[1:3] == ("postBuild", "substitute") and len(keys) > 3:
                    return f"substitution variable {keys[3]} (Flux Kustomization postBuild)"
                return f"{FIELD_WORDS.get(keys[1], keys[1])} (Flux Kustomization)"
            return words
        if kind == "Application" and api_version.startswith("argoproj.io/") and "kustomize" in keys:
            rest = keys[keys.index("kustomize") + 1:]
            if rest:
                return f"{FIELD_WORDS.get(rest[0], rest[0])} (Argo CD Application)"
            return words
        if origin.by == "kustomization" and keys:
            return FIELD_WORDS.get(keys[0], f"kustomization {keys[0]}")
        if (self.substituted and newest and origin.by == "resource" and kind in ("ConfigMap", "Secret")
                and len(keys) > 1 and keys[0] in SECRET_FIELDS and (kind, _name(doc)) != self.own):
            # substituteFrom: the controller substitutes after the build, so last
            return f"substitution variable {keys[1]} ({kind} {_name(doc)})"
        return words


def _name(doc: Mapping) -> str:
    md = doc.mapping("metadata")
    name = md.value("name") if md is not None else None
    return name if isinstance(name, str) else ""


def _index(top: Path, path: str) -> _Index | None:
    """Where each node of the repository file ``path`` is written: its
    document and the keys that lead to it; None for a file outside the
    repository (a remote base), made by code, or unreadable."""
    if not path:
        return None
    full = top / path
    if not inside(full, top, resolve=True) or not full.is_file():
        return None
    index: _Index = {}
    try:
        for doc in load_documents(read_bounded(full).decode("utf-8"), path, duplicate_keys=True):
            if isinstance(doc, Mapping):
                _collect(doc, doc, (), index)
    except (OSError, UnicodeDecodeError, LoadError, RecursionError):
        return None
    return index


def _collect(doc: Mapping, node: Node, keys: tuple[str, ...], index: _Index) -> None:
    """Each node's position; where a node starts with its first child (a
    document, an item of a list), the child's keys."""
    index[(node.origin.line, node.origin.col)] = (doc, keys)
    if isinstance(node, Mapping):
        for k, v in node.items.items():
            _collect(doc, v, keys + (k,), index)
    elif isinstance(node, Sequence):
        for v in node.items:
            _collect(doc, v, keys, index)


def _one_line(message: str) -> str:
    return " ".join(message.split("\n"))


__all__ = ["Blame", "BlameError", "Writer", "blame", "find_resource", "parse_resource", "run", "text"]
