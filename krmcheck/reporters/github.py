"""GitHub Actions: annotations, a job summary and the step's outputs.

Annotations are workflow commands written to ``out`` (the step's log)::

    ::error file=PATH,line=L,col=C,title=TITLE::MESSAGE

Annotations, the summary and the outputs count defects: a base line that
twelve roots render is one annotation naming the twelve roots. GitHub shows
at most 10 error and 10 warning annotations per step (and treats notices
alike), so the most severe defects are annotated first and one last
``::notice`` counts the ones left out. Every defect, annotated or not, is
listed (errors first) in the Markdown job summary appended to the file named
by ``GITHUB_STEP_SUMMARY``, which stays under GitHub's 1 MiB limit per step
and says how many rows it left out; ``errors=N`` and ``warnings=N`` go to the
file named by ``GITHUB_OUTPUT`` (the action's outputs). Neither file is
touched when its variable is unset, e.g. outside Actions.

Paths, names and messages may come from whoever opened the pull request:
they are escaped as GitHub decodes them in commands (``%``, CR and LF; also
``:`` and ``,`` in properties), other control characters are shown escaped,
and in the summary every cell is escaped so that it stays one cell of text
(see ``reporters.safe``).
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

from krmcheck.reporters import (change_line, counts_line, diff_heading, most_severe_first, roots_text,
                                where)
from krmcheck.reporters.safe import (command_data, command_property, markdown_code,
                                     longest_backtick_run, markdown_text, plain_text)
from krmcheck.results import RootDiff
from krmcheck.results import Defect, RunReport

# https://docs.github.com/actions/reference/workflow-commands-for-github-actions
COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}
PER_STEP_LIMIT = 10
# GitHub refuses a job summary over 1 MiB; keep well under it.
SUMMARY_LIMIT = 1024 * 1024 - 16 * 1024


@dataclass(frozen=True)
class GithubReporter:
    # None means os.environ, read at write time so the process environment
    # of the actual run is used; tests pass a mapping pointing at temp files.
    env: Mapping[str, str] | None = None

    def write(self, run: RunReport, out: TextIO) -> None:
        env = os.environ if self.env is None else self.env
        defects = most_severe_first(run.defects)
        out.write(annotation_lines(defects))
        if run.diff_against:  # the pull-request view's flags, in the slots the defects left
            from krmcheck.reporters import review

            shown = _within_limits(defects)
            out.write(review.flag_annotations(run, {c: sum(1 for d in shown if _command(d) == c) + (
                c == "notice" and len(shown) < len(defects)) for c in COMMANDS.values()}))
        if env.get("GITHUB_STEP_SUMMARY"):
            _append(env["GITHUB_STEP_SUMMARY"], job_summary(run, defects))
        if env.get("GITHUB_OUTPUT"):
            _append(env["GITHUB_OUTPUT"], step_outputs(run))


# Their names in this module before they moved to reporters.safe.
escape_data = command_data
escape_property = command_property


def annotation(defect: Defect) -> str:
    props = []
    if defect.location.path:
        props.append(("file", defect.location.path))
        if defect.location.line > 0:
            props += [("line", str(defect.location.line)), ("col", str(defect.location.col))]
    props.append(("title", f"krmcheck {defect.rule} ({roots_text(defect.roots)})"))
    joined = ",".join(f"{key}={command_property(value)}" for key, value in props)
    return f"::{_command(defect)} {joined}::{command_data(defect.message)}\n"


def annotation_lines(defects: list[Defect]) -> str:
    """The commands for the most severe defects GitHub will show (``defects``
    come most severe first), plus a notice counting the rest."""
    shown = _within_limits(defects)
    lines = [annotation(d) for d in shown]
    left = len(defects) - len(shown)
    if left:
        lines.append(
            f"::notice title=krmcheck::{left} more finding{'s' if left != 1 else ''}"
            f" not annotated (GitHub shows at most {PER_STEP_LIMIT} of each severity"
            " per step); all findings are in the job summary\n")
    return "".join(lines)


def _within_limits(defects: list[Defect]) -> list[Defect]:
    picked: list[Defect] = []
    used = {command: 0 for command in COMMANDS.values()}
    for defect in defects:
        command = _command(defect)
        if used[command] < PER_STEP_LIMIT:
            used[command] += 1
            picked.append(defect)
    if len(picked) < len(defects) and used["notice"] == PER_STEP_LIMIT:
        # The counting notice needs one of the notice slots.
        picked.pop()
    return picked


def _command(defect: Defect) -> str:
    return COMMANDS.get(defect.severity, "notice")


def job_summary(run: RunReport, defects: list[Defect], limit: int = SUMMARY_LIMIT) -> str:
    """The summary: counts, then one row per defect (``defects`` come errors
    first), as many rows as fit in ``limit`` bytes."""
    # The leading blank line ends whatever block an earlier step left open
    # (a table would otherwise swallow our heading).
    head = "\n".join(["", "## krmcheck", "", f"**{markdown_text(counts_line(run))}**"]) + "\n"
    # notes (files set aside as not applied, a stale baseline entry) stay
    # short: one line each
    head += "".join(f"\n- {markdown_text(n.message)}" for n in run.notes[:20]) + ("\n" if run.notes else "")
    if run.diff_against:  # the pull-request view: what the merge does, before the findings and diffs
        from krmcheck.reporters import review

        head += review.markdown(run)
    changes = diff_summary(run, min(DIFF_LIMIT, limit // 4)) if run.diff_against else ""
    limit -= len(changes.encode("utf-8"))
    if not defects:
        return head + changes
    table = "\n| Severity | Location | Message | Validator | Roots |\n| --- | --- | --- | --- | --- |\n"
    rows: list[str] = []
    used = len((head + table).encode("utf-8")) + 200  # room for the closing line
    for defect in defects:
        row = _row(defect) + "\n"
        used += len(row.encode("utf-8"))
        if used > limit:
            break
        rows.append(row)
    left = len(defects) - len(rows)
    tail = (f"\n{left} more row{'s' if left != 1 else ''} left out: GitHub limits a job summary "
            f"to 1 MiB; the JSON and SARIF reports list every finding.\n") if left else ""
    return head + table + "".join(rows) + tail + changes


# The pull-request view's share of the summary, and one root's.
DIFF_LIMIT = 256 * 1024
ROOT_DIFF_LIMIT = 32 * 1024


def diff_summary(run: RunReport, limit: int) -> str:
    """Each affected root folded (``<details>``), its changes as a diff
    block, cut at ``ROOT_DIFF_LIMIT`` per root and ``limit`` in all."""
    head = f"\n### Changes against {markdown_code(run.diff_against)}\n\n"
    parts: list[str] = []
    used = len(head.encode("utf-8")) + 200
    for d in run.diff:
        part = _root_diff(d)
        used += len(part.encode("utf-8"))
        if used > limit:
            left = len(run.diff) - len(parts)
            parts.append(f"{left} more root{'s' if left != 1 else ''} left out: GitHub limits a job summary "
                         f"to 1 MiB; the text report shows every change.\n")
            break
        parts.append(part)
    return head + "".join(parts)


def _root_diff(d: RootDiff) -> str:
    lines: list[str] = []
    for c in d.changes:
        lines.append(f"# {change_line(c)}")
        lines.extend(c.diff.splitlines())
    body = plain_text("\n".join(lines))
    if len(body.encode("utf-8")) > ROOT_DIFF_LIMIT:
        body = body.encode("utf-8")[:ROOT_DIFF_LIMIT].decode("utf-8", "ignore").rpartition("\n")[0]
        body += "\n# ... cut here: the text report shows the whole diff"
    fence = "`" * max(3, longest_backtick_run(body) + 1)
    fixed = "".join(f"- fixed: {markdown_code(where(f.location))} {markdown_text(f.message)} "
                    f"({markdown_code(f.rule)})\n" for f in d.fixed)
    new = f", {len(d.new)} new finding{'s' if len(d.new) != 1 else ''}" if d.new else ""
    block = f"{fence}diff\n{body}\n{fence}\n\n" if body else ""
    return (f"<details><summary>{html.escape(plain_text(diff_heading(d)))}{new}</summary>\n\n"
            f"{block}{fixed}\n</details>\n\n")


def _row(defect: Defect) -> str:
    cells = (markdown_text(defect.severity), markdown_code(where(defect.location)),
             markdown_text(defect.message), markdown_code(defect.rule),
             markdown_code(roots_text(defect.roots)))
    return "| " + " | ".join(cells) + " |"


def step_outputs(run: RunReport) -> str:
    return f"errors={run.count('error')}\nwarnings={run.count('warning')}\n"


def _append(path: str, text: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)
