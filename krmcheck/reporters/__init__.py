"""Reporters: one module per output format, looked up by name in ``REPORTERS``.

Reporters are the only part of krmcheck that writes output (besides ``cli``).
Each receives the whole ``RunReport`` and writes one document to ``out``; the
the pipeline (pipeline/report.py) decides the exit code, never a reporter.
"""

from __future__ import annotations

import importlib
import posixpath
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TextIO

from krmcheck.reporters.safe import well_formed
from krmcheck.results import SEVERITY_RANK, Defect, Finding, RunReport, defect_key, fingerprint
from krmcheck.tree.origin import Location

if TYPE_CHECKING:
    from krmcheck.results import Change, RootDiff


class Reporter(Protocol):
    def write(self, run: RunReport, out: TextIO) -> None: ...


def sort_key(finding: Finding) -> tuple[str, int, int, int, str, str, str]:
    """Path, line, column, most severe first; the rest only breaks ties so
    that the same findings always come out in the same order."""
    loc = finding.location
    rank = SEVERITY_RANK.get(finding.severity, 0)
    return (loc.path, loc.line, loc.col, -rank, finding.rule, finding.message, finding.root)


def ordered(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=sort_key)


def ordered_defects(defects: Iterable[Defect]) -> list[Defect]:
    """Defects in location order (each by its first root's finding)."""
    return sorted(defects, key=lambda d: sort_key(d.finding)[:-1] + (",".join(d.roots),))


def most_severe_first(defects: Iterable[Defect]) -> list[Defect]:
    """Errors, then warnings, then infos; location order within each."""
    return sorted(ordered_defects(defects), key=lambda d: -SEVERITY_RANK.get(d.severity, 0))


def roots_text(roots: Sequence[str], shown: int = 3) -> str:
    """``overlays/prod`` or ``3 roots: a, b, c`` or ``14 roots: a, b, c and 11 more``."""
    if len(roots) == 1:
        return roots[0]
    names = ", ".join(roots[:shown])
    more = f" and {len(roots) - shown} more" if len(roots) > shown else ""
    return f"{len(roots)} roots: {names}{more}"


def relative(path: str, cwd: str, top_from_cwd: str = "") -> str:
    """A repo-relative ``path`` as seen from ``cwd`` (repo-relative too), or,
    for a command started outside the repository, from where
    ``top_from_cwd`` leads to the top; a GitOps controller root's name
    (``flux:NS/NAME``, ``argocd:NAME``) is no path."""
    if path.startswith(("flux:", "flux-helm:", "argocd:")) or not path:
        return path
    if top_from_cwd:
        return posixpath.normpath(posixpath.join(top_from_cwd, path))
    return posixpath.relpath(path, cwd) if cwd else path


def where(location: Location) -> str:
    """``path:line:col``, shortened when the position (or the file) is unknown."""
    if location.line > 0:
        return str(location)
    return location.path or "-"


def defect_fingerprint(validator: str, path: str, resource: str, message: str) -> str:
    """``results.fingerprint`` of a defect as the reports write it: a
    surrogate (a file name that is not UTF-8), which UTF-8 cannot encode,
    counts as its escape. The same for every report, and for a report read
    back by ``merge-reports``."""
    return fingerprint(*(well_formed(text) for text in (validator, path, resource, message)))


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def counts_line(run: RunReport) -> str:
    """``N errors, N warnings, N infos in R roots`` (the same words everywhere),
    counting defects: a defect that several roots render counts once."""
    words = ", ".join(plural(run.count(s), s) for s in ("error", "warning", "info"))
    line = f"{words} in {plural(len(run.roots), 'root')}"
    found = len(run.findings)
    if found != len(run.defects):
        line += f" ({plural(found, 'finding')} before grouping by defect)"
    if run.suppressed:
        line += f"; {len(run.suppressed)} suppressed"
    failed = sum(1 for r in run.roots if r.build_failed)
    if failed:
        line += f"; {plural(failed, 'root')} failed to build"
    offline = sum(1 for r in run.roots if r.needs_network)
    if offline:
        line += f"; {plural(offline, 'root')} not checked: the network is off"
    if run.diff_against:
        new = len({defect_key(f) for d in run.diff for f in d.new})  # defects, as the counts before
        fixed = len({defect_key(f) for d in run.diff for f in d.fixed})
        line += f"; against {run.diff_against}: {new} new, {fixed} fixed"
        flagged = {(f.finding.location, f.id, f.finding.message) for d in run.diff for f in d.flags
                   if f.section == "flag"}
        line += f", {plural(len(flagged), 'flag')}"
    return line


def diff_heading(d: RootDiff) -> str:
    """``apps/prod: 1 changed, 2 added (new root)``: one root's change in a line."""
    side = {"work": " (new root)", "base": " (root removed)"}.get(d.side, "")
    if d.fails:
        where = {"base": "at the base revision", "work": "in the work tree", "both": "on both sides"}[d.fails]
        return f"{d.root}: fails to build {where}: {d.error}{side}"
    counts = ", ".join(f"{n} {status}" for status, n in d.counts.items() if n)
    if not counts and d.unrendered:
        return f"{d.root}: not compared: {d.unrendered}{side}"
    also = f"; {d.unrendered}" if d.unrendered else ""
    return f"{d.root}: {counts or 'rendered output unchanged'}{also}{side}"


def change_line(c: Change) -> str:
    return f"renamed {c.was} -> {c.resource}" if c.status == "renamed" else f"{c.status} {c.resource}"


class _Registry(Mapping[str, Reporter]):
    """The reporters by format name. A format's module (which uses the
    helpers above) is imported when its reporter is first looked up: a run
    imports the text reporter and the formats it was asked for, no other."""

    def __init__(self, where: dict[str, tuple[str, str]]) -> None:
        self._where = where  # name -> (module, class)
        self._made: dict[str, Reporter] = {}

    def __getitem__(self, name: str) -> Reporter:
        if name not in self._made:
            module, cls = self._where[name]
            self._made[name] = getattr(importlib.import_module(module), cls)()
        return self._made[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


REPORTERS: Mapping[str, Reporter] = _Registry({
    "text": ("krmcheck.reporters.text", "TextReporter"),
    "github": ("krmcheck.reporters.github", "GithubReporter"),
    "junit": ("krmcheck.reporters.junit", "JunitReporter"),
    "sarif": ("krmcheck.reporters.sarif", "SarifReporter"),
    "json": ("krmcheck.reporters.json_report", "JsonReporter"),
    "gitlab": ("krmcheck.reporters.gitlab", "GitlabReporter"),
    "markdown": ("krmcheck.reporters.markdown", "MarkdownReporter"),
})
