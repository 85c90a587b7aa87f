"""``krmcheck [check] [PATH...]``: check, report, exit. With
``--diff-against REF`` the pull-request view (``pipeline/compare.py``)
calls the pipeline twice and compares."""

from __future__ import annotations

import os
from typing import TextIO

from krmcheck.pipeline.check import check
from krmcheck.pipeline.report import EXIT_BROKEN, exit_code, write_reports
from krmcheck.pipeline.run import CheckOptions, Progress, UsageError, anchored, silent
from krmcheck.results import RunReport


def run(opts: CheckOptions, out: TextIO, err: TextIO,
        env: dict[str, str] | None = None, progress: Progress | None = None) -> int:
    env = dict(os.environ) if env is None else env
    try:
        report = checked(opts, progress or silent)
    except UsageError as e:
        err.write(f"krmcheck: error: {e}\n")
        return EXIT_BROKEN
    write_reports(report, anchored(opts), out, env)
    return exit_code(report)


def checked(opts: CheckOptions, progress: Progress = silent) -> RunReport:
    """The run's report: the check, or the pull-request view."""
    opts = anchored(opts)
    if opts.diff_against:
        from krmcheck.pipeline.compare import against_revision  # (only pull-request runs)

        return against_revision(opts, progress)
    return check(opts, progress)

