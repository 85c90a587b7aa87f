"""Terminal report: one compiler-style line per defect, then a summary.

    apps/base/deployment.yaml:12:16: warning: image has no tag [image-tag] (2 roots: apps/prod, apps/staging)
      via apps/base/deployment.yaml:20:16 (resource)
    0 errors, 1 warning, 0 infos in 2 roots (2 findings before grouping by defect)

The first line is what editors and CI log scrapers link to: paths are
relative to the current directory, so a terminal can open them. A defect
that several roots render is printed once, with the roots (long lists
shortened). Each ``via`` line names an earlier writer of the same value
(newest first), so a value an overlay patched can be traced back to the
base that first set it. A message of several lines keeps its later lines
indented under the first. Notes (a stale baseline entry, nothing to check)
come before the summary.

Paths, names and messages may come from whoever opened the pull request:
their control characters are shown escaped, and no line can be read by
the GitHub runner as a workflow command (see ``reporters.safe``).
"""

from __future__ import annotations

from typing import TextIO

from krmcheck.reporters import (change_line, counts_line, diff_heading, ordered_defects, plural,
                                relative, roots_text, where)
from krmcheck.reporters.safe import log_text, one_line
from krmcheck.results import Defect, RunReport
from krmcheck.tree.origin import Location

_CONTINUATION = "\n    "


class TextReporter:
    def write(self, run: RunReport, out: TextIO) -> None:
        for defect in ordered_defects(run.defects):
            out.write(defect_lines(defect, run.cwd, run.top_from_cwd))
        if run.diff_against:
            out.write(diff_lines(run))
        for note in run.notes:
            place = f"{_here(note.location, run.cwd, run.top_from_cwd)}: " if note.location else ""
            out.write(log_text(f"{place}note: {one_line(note.message)}\n"))
        out.write(counts_line(run) + "\n")


def defect_lines(defect: Defect, cwd: str = "", top_from_cwd: str = "") -> str:
    lines = defect.message.replace("\r\n", "\n").split("\n")
    message = _CONTINUATION.join(one_line(line) for line in lines)
    roots = roots_text([one_line(relative(r, cwd, top_from_cwd)) for r in defect.roots])
    head = (f"{_here(defect.location, cwd, top_from_cwd)}: {one_line(defect.severity)}: {message}"
            f" [{one_line(defect.rule)}] ({roots})\n")
    vias = "".join(f"  via {_here(o.location, cwd, top_from_cwd)} ({one_line(o.by)})\n"
                   for o in reversed(defect.trail))
    return log_text(head + vias)


def diff_lines(run: RunReport) -> str:
    """Each affected root's changes against the base revision: a line per
    resource, the unified diff of each changed one indented below it, then
    the findings the change fixed."""
    from krmcheck.reporters import review

    lines = review.text_lines(run)
    lines.append(f"changes against {one_line(run.diff_against)} ({plural(len(run.diff), 'affected root')}):")
    for d in run.diff:
        lines.append("  " + one_line(diff_heading(d)))
        for c in d.changes:
            lines.append("    " + one_line(change_line(c)))
            lines.extend("      " + one_line(line) for line in c.diff.splitlines())
        for f in d.fixed:
            lines.append(f"    fixed: {_here(f.location, run.cwd, run.top_from_cwd)}: {one_line(f.severity)}: "
                         f"{one_line(f.message)} [{one_line(f.rule)}]")
    return log_text("".join(line + "\n" for line in lines))


def _here(location: Location, cwd: str, top_from_cwd: str = "") -> str:
    return one_line(where(location._replace(path=relative(location.path, cwd, top_from_cwd))))
