"""``krmcheck merge-reports``: the reports of --shard jobs joined, exiting as one
unsharded run would."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, TextIO


from krmcheck.pipeline.report import EXIT_BROKEN, EXIT_FINDINGS, EXIT_OK
from krmcheck.reporters import plural
from krmcheck.results import SEVERITY_RANK

if TYPE_CHECKING:
    # What only some runs use is imported where it is used: a plain check of
    # kustomizations loads no git, no function runtime, no controller
    # rendering, no baseline, diff or merge code, and no worker pool unless
    # it starts workers (the render cache's hits build nothing at all).

    from krmcheck import merge as kmerge



def run(opts: kmerge.MergeOptions, out: TextIO, err: TextIO) -> int:
    """Join the reports of --shard jobs; exit as one unsharded run would have."""
    from krmcheck import merge as kmerge

    try:
        reports = kmerge.load_all(opts.inputs)
        merged = [(target, kmerge.merge(reports, fmt))
                  for fmt, target in (("junit", opts.junit), ("sarif", opts.sarif),
                                      ("json", opts.json)) if target]
        for target, text in merged:
            _write(target, text)
    except kmerge.MergeError as e:
        err.write(f"krmcheck merge-reports: error: {e}\n")
        return EXIT_BROKEN
    tallies = kmerge.tallies(reports)
    out.write(f"merged {plural(len(reports), 'report')}: {_tally_line(tallies[0])}\n")
    return _exit_code(tallies, opts.fail_on)

def _write(target: str, text: str) -> None:
    from krmcheck import merge as kmerge

    try:
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise kmerge.MergeError(f"{target}: cannot write: {e.strerror or e}") from None


def _tally_line(t: kmerge.Tally) -> str:
    words = ", ".join(plural(t.count(s), s) for s in ("error", "warning", "info"))
    return words + (f" in {plural(t.roots, 'root')}" if t.roots is not None else "")


def _exit_code(tallies: Sequence[kmerge.Tally], fail_on: str) -> int:
    if any(t.build_failed for t in tallies):
        return EXIT_BROKEN  # a shard could not build a root, and exited 2 itself
    if fail_on == "never":
        return EXIT_OK
    failing = [s for s, rank in SEVERITY_RANK.items() if s != "never" and rank >= SEVERITY_RANK[fail_on]]
    return EXIT_FINDINGS if any(t.count(s) for t in tallies for s in failing) else EXIT_OK
