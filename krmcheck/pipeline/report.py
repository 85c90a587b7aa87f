"""Report: the reporters a run writes to, the report files, and the exit code."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import TextIO


from krmcheck.pipeline.run import CheckOptions, UsageError
from krmcheck import discover
from krmcheck.reporters import REPORTERS
from krmcheck.resource.files import Files
from krmcheck.results import SEVERITY_RANK, RunReport

from krmcheck.pipeline.run import shown

EXIT_OK, EXIT_FINDINGS, EXIT_BROKEN = 0, 1, 2


def exit_code(run: RunReport) -> int:
    if run.build_failed:
        return EXIT_BROKEN
    wanted = set(run.fail_on_flags)  # --fail-on-flag: the flags a team gates on ("any": every flag)
    if any(f.id in wanted or ("any" in wanted and f.section == "flag") for d in run.diff for f in d.flags):
        return EXIT_FINDINGS
    if run.fail_on == "never":
        return EXIT_OK
    floor = SEVERITY_RANK[run.fail_on]
    if any(SEVERITY_RANK.get(f.severity, 0) >= floor for f in run.findings):
        return EXIT_FINDINGS
    return EXIT_OK


def prepare_outputs(opts: CheckOptions, inputs: set[str], files: Files) -> None:
    """Report files: parent directories made, and each one writable and not
    an input of the run, before any root is built."""
    for flag, target in (("--junit", opts.junit), ("--sarif", opts.sarif), ("--json", opts.json),
                         ("--gitlab", opts.gitlab), ("--markdown", opts.markdown),
                         ("--write-baseline", opts.write_baseline)):
        if not target:
            continue
        path = Path(target)
        target = shown(path, opts.cwd or path.parent)  # as it was given
        if files.display(path.resolve()) in inputs or discover.is_input_name(path):
            raise UsageError(f"{flag} {target}: is an input of the run; write the report elsewhere")
        if os.path.isdir(path):
            raise UsageError(f"{flag} {target}: is a directory")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8"):
                pass
        except OSError as e:
            raise UsageError(f"{flag} {target}: cannot write: {e.strerror or e}") from None


def write_reports(run: RunReport, opts: CheckOptions, out: TextIO, env: dict[str, str]) -> None:
    REPORTERS["text"].write(run, out)
    github = opts.github == "on" or (opts.github == "auto" and env.get("GITHUB_ACTIONS") == "true")
    if github:
        REPORTERS["github"].write(run, out)
    for fmt, target in (("junit", opts.junit), ("sarif", opts.sarif), ("json", opts.json),
                        ("gitlab", opts.gitlab), ("markdown", opts.markdown)):
        if target:
            buffer = io.StringIO()
            REPORTERS[fmt].write(run, buffer)
            write_report(target, buffer.getvalue())


def write_report(target: str, text: str) -> None:
    """Write a report file whole (its directory was made, and the path
    checked, before the run)."""
    with open(target, "w", encoding="utf-8") as fh:
        fh.write(text)
