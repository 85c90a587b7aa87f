"""Triage: what silences a finding (overrides, ignore comments, the baseline) and the
findings about files the run refused to read."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Sequence


from krmcheck.pipeline.run import Run, UsageError
from krmcheck import config as krmconfig
from krmcheck import discover, suppression
from krmcheck.resource.files import Files, read_text_bounded
from krmcheck.results import Finding, Result, RootReport
from krmcheck.scope import PathPatterns
from krmcheck.tree.origin import Location

if TYPE_CHECKING:
    # What only some runs use is imported where it is used: a plain check of
    # kustomizations loads no git, no function runtime, no controller
    # rendering, no baseline, diff or merge code, and no worker pool unless
    # it starts workers (the render cache's hits build nothing at all).

    from krmcheck import baseline as kbaseline



def with_refused(reports: tuple[RootReport, ...], refused: Sequence[discover.Refusal],
                  files: Files) -> tuple[RootReport, ...]:
    """A warning at each file a scan of the repository did not read (a
    device, a FIFO, a file over the size limit, a link out of the
    repository) and where a scan ran out of time: run-wide findings, given
    to the first root (as ``placeholders.summarise`` does)."""
    if not refused or not reports:
        return reports
    found = tuple(Finding(Result(reason, "warning", tags=(("validator", discover.SCAN),)), reports[0].root,
                          Location(files.display(path), 1, 1))
                  for path, reason in dict.fromkeys(refused))  # a file both scans refused is said once
    return (dataclasses.replace(reports[0], findings=reports[0].findings + found),) + reports[1:]

def overrides_of(config: krmconfig.Config) -> tuple[tuple[PathPatterns, dict[str, str]], ...]:
    return tuple((scope, {v: ("off" if not s.enabled else s.severity or "") for v, s in settings.items()
                          if not s.enabled or s.severity})
                 for scope, settings in config.overrides)


def ignore_comments(readers: dict[str, tuple[str, ...]], top: Path) -> Iterator[suppression.Ignore]:
    for path in sorted(readers):
        try:
            text = read_text_bounded(top / path)
        except (OSError, ValueError):
            continue  # the build reports a file it cannot read
        yield from suppression.comments_in(path, text)


def baseline_of(run: Run) -> kbaseline.Baseline | None:
    """``--baseline`` (relative to the current directory), else the configuration's ``baseline:``."""
    opts, config, files = run.options, run.config, run.files
    path = Path(opts.baseline).resolve() if opts.baseline else config.baseline
    if path is None or opts.write_baseline:
        return None
    from krmcheck import baseline as kbaseline

    try:
        return kbaseline.load(path, files.display(path))
    except kbaseline.BaselineError as e:
        raise UsageError(str(e)) from None
