"""GitHub Actions: annotations, a job summary and the step's outputs.

Annotations are workflow commands written to ``out`` (the step's log)::

    ::error file=PATH,line=L,col=C,title=TITLE::MESSAGE

GitHub shows at most 10 error and 10 warning annotations per step (and
treats notices alike), so the most severe findings are annotated first and
one last ``::notice`` counts the ones left out. Every finding, annotated or
not, is listed in the Markdown job summary appended to the file named by
``GITHUB_STEP_SUMMARY``; ``errors=N`` and ``warnings=N`` go to the file named
by ``GITHUB_OUTPUT`` (the action's outputs). Neither file is touched when its
variable is unset, e.g. outside Actions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

from krmcheck.reporters import counts_line, ordered, where
from krmcheck.results import SEVERITY_RANK, Finding, RunReport

# https://docs.github.com/actions/reference/workflow-commands-for-github-actions
COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}
PER_STEP_LIMIT = 10


@dataclass(frozen=True)
class GithubReporter:
    # None means os.environ, read at write time so the process environment
    # of the actual run is used; tests pass a mapping pointing at temp files.
    env: Mapping[str, str] | None = None

    def write(self, run: RunReport, out: TextIO) -> None:
        env = os.environ if self.env is None else self.env
        findings = ordered(run.findings)
        out.write(annotation_lines(findings))
        if env.get("GITHUB_STEP_SUMMARY"):
            _append(env["GITHUB_STEP_SUMMARY"], job_summary(run, findings))
        if env.get("GITHUB_OUTPUT"):
            _append(env["GITHUB_OUTPUT"], step_outputs(run))


def escape_data(text: str) -> str:
    """A command's message: GitHub decodes %25, %0D and %0A."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value: ``:`` and ``,`` would end it early."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding) -> str:
    props = []
    if finding.location.path:
        props.append(("file", finding.location.path))
        if finding.location.line > 0:
            props += [("line", str(finding.location.line)), ("col", str(finding.location.col))]
    props.append(("title", f"krmcheck {finding.rule} ({finding.root})"))
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{_command(finding)} {joined}::{escape_data(finding.message)}\n"


def annotation_lines(findings: list[Finding]) -> str:
    """The commands for the most severe findings GitHub will show, plus a
    notice counting the rest."""
    shown = _within_limits(sorted(findings, key=_most_severe_first))
    lines = [annotation(f) for f in shown]
    left = len(findings) - len(shown)
    if left:
        lines.append(
            f"::notice title=krmcheck::{left} more finding{'s' if left != 1 else ''}"
            f" not annotated (GitHub shows at most {PER_STEP_LIMIT} of each severity"
            " per step); all findings are in the job summary\n")
    return "".join(lines)


def _within_limits(findings: list[Finding]) -> list[Finding]:
    picked: list[Finding] = []
    used = {command: 0 for command in COMMANDS.values()}
    for finding in findings:
        command = _command(finding)
        if used[command] < PER_STEP_LIMIT:
            used[command] += 1
            picked.append(finding)
    if len(picked) < len(findings) and used["notice"] == PER_STEP_LIMIT:
        # The counting notice needs one of the notice slots.
        picked.pop()
    return picked


def _command(finding: Finding) -> str:
    return COMMANDS.get(finding.severity, "notice")


def _most_severe_first(finding: Finding) -> int:
    # sorted() is stable, so location order holds within a severity.
    return -SEVERITY_RANK.get(finding.severity, 0)


def job_summary(run: RunReport, findings: list[Finding]) -> str:
    # The leading blank line ends whatever block an earlier step left open
    # (a table would otherwise swallow our heading).
    lines = ["", "## krmcheck", "", f"**{counts_line(run)}**"]
    if findings:
        lines += ["", "| Severity | Location | Message | Validator | Root |",
                  "| --- | --- | --- | --- | --- |"]
        lines += [_row(f) for f in findings]
    return "\n".join(lines) + "\n"


def _row(finding: Finding) -> str:
    cells = (finding.severity, _code(where(finding.location)), _markdown_text(finding.message),
             _code(finding.rule), _code(finding.root))
    return "| " + " | ".join(cells) + " |"


def _markdown_text(text: str) -> str:
    """Plain text inside a table cell: punctuation that Markdown or HTML would
    act on is backslash-escaped, and line breaks become ``<br>``."""
    escaped = "".join("\\" + c if c in "\\`*_[]<>|~&#!" else c for c in text)
    return escaped.replace("\r\n", "\n").replace("\n", "<br>")


def _code(text: str) -> str:
    # A code span must be fenced by more backticks than any run inside it;
    # a pipe still needs its backslash there because the table splits first.
    fence = "`" * (_longest_backtick_run(text) + 1)
    body = text.replace("|", "\\|").replace("\n", " ")
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def _longest_backtick_run(text: str) -> int:
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def step_outputs(run: RunReport) -> str:
    return f"errors={run.count('error')}\nwarnings={run.count('warning')}\n"


def _append(path: str, text: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)
