"""``krmcheck roots [PATH...]``: every root a check would check, with its
kind, what it renders from and its path (as flux-local's ``get ks`` lists
Flux Kustomizations); ``--build`` prints what each one applies, one after
the other (flux-local's ``build all``).

A root's kind is ``Kustomization`` (a Flux Kustomization), ``HelmRelease``,
``Application`` (Argo CD), ``kustomization`` (a kustomize directory) or
``manifest`` (a file of objects no kustomization reads). Its source is the
object its controller renders from: a GitRepository of this repository, a
chart repository, an Argo CD ``repoURL``; a plain root's is this checkout.
"""

from __future__ import annotations

import json
import os
from typing import NamedTuple, TextIO

from krmcheck import redact
from krmcheck.pipeline.render import Builders, render_root
from krmcheck.pipeline.report import EXIT_BROKEN, EXIT_OK
from krmcheck.pipeline.run import CheckOptions, Run, UsageError, anchored, start
from krmcheck.pipeline.select import excludes_of, root_name, to_check
from krmcheck.gitops.root import ARGOCD, FLUX, FLUX_HELM, ControllerRoot, Root
from krmcheck.reporters.safe import json_text, one_line
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.results import Note
from krmcheck.tree.emit import emit_all

KINDS = {FLUX: "Kustomization", FLUX_HELM: "HelmRelease", ARGOCD: "Application"}
HEAD = ("ROOT", "KIND", "SOURCE", "PATH")


class Row(NamedTuple):
    root: str
    kind: str
    source: str
    path: str  # what it renders, relative to the repository's top ("-": nothing here)
    defined: str  # path:line of the controller object ("" for a plain root)
    note: str  # why it renders nothing, if it does not


def rows(opts: CheckOptions) -> tuple[list[Row], list[Note]]:
    """The roots of a check with ``opts`` (a UsageError as for a check)."""
    _, files, roots, notes = _roots(opts)
    return [_row(files, r) for r in roots], notes


def _roots(opts: CheckOptions) -> tuple[Run, Files, list[Root], list[Note]]:
    runs = start(anchored(opts))
    if len(runs) > 1:
        raise UsageError(f"the paths are in {len(runs)} repositories; give paths of one")
    run = runs[0]
    notes: list[Note] = []
    _, found = to_check(run, excludes_of(run), notes)
    # what the controllers apply first, then the plain kustomizations and manifests
    found.sort(key=lambda r: (not isinstance(r, ControllerRoot), root_name(run.files, r)))
    return run, run.files, found, notes


def _row(files: Files, root: Root) -> Row:
    if not isinstance(root, ControllerRoot):
        kind = "manifest" if os.path.isfile(root) else "kustomization"
        return Row(files.display(root), kind, "this checkout", files.display(root), "", "")
    path = files.display(root.directory)
    if root.helm is not None and root.helm.chart is None:
        path = "-"  # a chart pulled from a repository
    note = root.elsewhere
    if root.helm is not None and root.helm.chart is None and root.helm.pull is None:
        note = f"the chart comes from {root.helm.remote}, not this repository, and is not rendered"
    return Row(root.name, KINDS.get(root.controller, root.controller), root.source or "-",
               "-" if root.elsewhere else path, f"{root.origin.path}:{root.origin.line}", note)


def run_list(opts: CheckOptions, out: TextIO, err: TextIO, as_json: bool = False) -> int:
    try:
        found, notes = rows(opts)
    except UsageError as e:
        err.write(f"krmcheck roots: error: {e}\n")
        return EXIT_BROKEN
    if as_json:
        doc = [{"root": r.root, "kind": r.kind, "source": r.source, "path": r.path,
                "defined": r.defined or None, "notRendered": r.note or None} for r in found]
        out.write(json_text(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n")
    else:
        table = [HEAD] + [(r.root, r.kind, r.source, r.path) for r in found]
        widths = [max(len(row[i]) for row in table) for i in range(len(HEAD) - 1)]
        for row in table:
            line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1]
            out.write(one_line(line.rstrip()) + "\n")
    for note in notes:
        where = f"{note.location.path}:{note.location.line}: " if note.location else ""
        err.write(f"{where}note: {note.message}\n")
    return EXIT_OK


def run_build(opts: CheckOptions, out: TextIO, err: TextIO) -> int:
    """Every root's rendered objects, each root's after a ``# Root: NAME``
    comment; a root that does not build is reported on stderr and the rest
    are still printed (exit 2)."""
    try:
        run, files, found, _ = _roots(opts)
    except UsageError as e:
        err.write(f"krmcheck roots: error: {e}\n")
        return EXIT_BROKEN
    config = run.config
    builders = Builders(run)
    code = EXIT_OK
    first = True
    for root in found:
        name = root_name(files, root)
        try:
            rendered = render_root(builders, root, config)
        except BuildError as e:
            secrets = frozenset(s for b in builders.made.values() for s in b.secrets)
            err.write(f"Error: {name}: {redact.text(str(e), secrets)}\n")
            code = EXIT_BROKEN
            continue
        if not rendered.resources:
            continue
        out.write(("" if first else "---\n") + f"# Root: {one_line(name)}\n")
        out.write(emit_all([r.node for r in rendered.resources]))
        first = False
    return code
