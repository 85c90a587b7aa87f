"""Reporters: one module per output format, looked up by name in ``REPORTERS``.

Reporters are the only part of krmcheck that writes output (besides ``cli``).
Each receives the whole ``RunReport`` and writes one document to ``out``; the
runner decides the exit code, never a reporter.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TextIO

from krmcheck.results import SEVERITY_RANK, Finding, RunReport
from krmcheck.tree.origin import Location


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


def where(location: Location) -> str:
    """``path:line:col``, shortened when the position (or the file) is unknown."""
    if location.line > 0:
        return str(location)
    return location.path or "-"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def counts_line(run: RunReport) -> str:
    """``N errors, N warnings, N infos in R roots`` (the same words everywhere)."""
    words = ", ".join(plural(run.count(s), s) for s in ("error", "warning", "info"))
    failed = sum(1 for r in run.roots if r.build_failed)
    tail = f"; {plural(failed, 'root')} failed to build" if failed else ""
    return f"{words} in {plural(len(run.roots), 'root')}{tail}"


# The format modules use the helpers above, so they are imported only once
# those exist (a registry in the package itself keeps `REPORTERS` one import away).
from krmcheck.reporters.github import GithubReporter  # noqa: E402
from krmcheck.reporters.json_report import JsonReporter  # noqa: E402
from krmcheck.reporters.junit import JunitReporter  # noqa: E402
from krmcheck.reporters.sarif import SarifReporter  # noqa: E402
from krmcheck.reporters.text import TextReporter  # noqa: E402

REPORTERS: dict[str, Reporter] = {
    "text": TextReporter(),
    "github": GithubReporter(),
    "junit": JunitReporter(),
    "sarif": SarifReporter(),
    "json": JsonReporter(),
}
