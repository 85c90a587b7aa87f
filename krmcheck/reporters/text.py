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
"""

from __future__ import annotations

from typing import TextIO

from krmcheck.reporters import counts_line, ordered_defects, relative, roots_text, where
from krmcheck.results import Defect, RunReport
from krmcheck.tree.origin import Location

_CONTINUATION = "\n    "


class TextReporter:
    def write(self, run: RunReport, out: TextIO) -> None:
        for defect in ordered_defects(run.defects):
            out.write(defect_lines(defect, run.cwd))
        for note in run.notes:
            place = f"{_here(note.location, run.cwd)}: " if note.location else ""
            out.write(f"{place}note: {note.message}\n")
        out.write(counts_line(run) + "\n")


def defect_lines(defect: Defect, cwd: str = "") -> str:
    message = defect.message.replace("\r\n", "\n").replace("\n", _CONTINUATION)
    roots = roots_text([relative(r, cwd) for r in defect.roots])
    head = (f"{_here(defect.location, cwd)}: {defect.severity}: {message}"
            f" [{defect.rule}] ({roots})\n")
    vias = "".join(f"  via {_here(o.location, cwd)} ({o.by})\n" for o in reversed(defect.trail))
    return head + vias


def _here(location: Location, cwd: str) -> str:
    return where(location._replace(path=relative(location.path, cwd)))
