"""A run's report named from another directory: every repo-relative path
(roots, locations, trails) gets a prefix.

A run whose paths lie in several repositories checks each repository with
its own top; their reports are joined with paths named from the working
directory, so that ``a/apps/prod`` and ``b/apps/prod`` stay apart.
"""

from __future__ import annotations

import dataclasses
import posixpath

from krmcheck.results import Finding, Note, RootReport, RunReport
from krmcheck.tree.origin import Location, Origin

CONTROLLER_PREFIXES = ("flux:", "flux-helm:", "argocd:")


def path(prefix: str, name: str) -> str:
    """A repo-relative path under ``prefix``; a controller root's name
    (``flux:NS/NAME``) says its repository after an ``@``."""
    if not prefix or prefix == "." or not name:
        return name
    if name.startswith(CONTROLLER_PREFIXES):
        return f"{name}@{prefix}"
    return posixpath.normpath(posixpath.join(prefix, name))


def location(prefix: str, where: Location) -> Location:
    return where._replace(path=path(prefix, where.path))


def origin(prefix: str, where: Origin) -> Origin:
    return where._replace(path=path(prefix, where.path))


def finding(prefix: str, f: Finding) -> Finding:
    return dataclasses.replace(f, root=path(prefix, f.root), location=location(prefix, f.location),
                               trail=tuple(origin(prefix, o) for o in f.trail))


def root_report(prefix: str, r: RootReport) -> RootReport:
    return dataclasses.replace(
        r, root=path(prefix, r.root), findings=tuple(finding(prefix, f) for f in r.findings),
        suppressed=tuple(dataclasses.replace(s, finding=finding(prefix, s.finding)) for s in r.suppressed),
        ignore_annotations=tuple((location(prefix, loc), ids) for loc, ids in r.ignore_annotations),
        places=tuple((ref, location(prefix, loc), sid) for ref, loc, sid in r.places),
        rendered=tuple((ref, sid, text, path(prefix, p)) for ref, sid, text, p in r.rendered))


def report(run: RunReport, prefix: str) -> RunReport:
    """``run`` with every path under ``prefix`` (the way from the new base
    directory to the run's top)."""
    return dataclasses.replace(
        run, roots=tuple(root_report(prefix, r) for r in run.roots),
        notes=tuple(Note(n.message, location(prefix, n.location) if n.location else None) for n in run.notes),
        set_aside=tuple((path(prefix, p), reason, why) for p, reason, why in run.set_aside),
        inputs=tuple((path(prefix, p), reason, why) for p, reason, why in run.inputs))

