"""What the cross-resource validators cost and find on the real-world corpus.

For every repository of ../shared/realworld/corpus, `krmcheck .` runs in
this process twice over: with every validator, and without the ones named
by --without (default: selector, reference, api-version, duplicate). Each
is timed (best of --repeat runs, alternating, so caches warm both alike) and
the findings of the named validators are counted. Prints per repository and
in total the two times, the ratio, and the findings (defects) per validator.
Run from the project root:

    python benchmarks/validators.py [--repo OWNER+NAME] [--repeat 2] [--show VALIDATOR]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from krmcheck import cli, runner, validators  # noqa: E402
from krmcheck.results import group  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "realworld" / "corpus"
NEW = ("selector", "reference", "api-version", "duplicate")


def run(repo: Path, without: tuple[str, ...]) -> tuple[float, list]:
    saved = dict(validators.VALIDATORS)
    for vid in without:
        validators.VALIDATORS.pop(vid, None)
    here = os.getcwd()
    os.chdir(repo)
    try:
        t0 = time.perf_counter()
        with contextlib.redirect_stderr(io.StringIO()):
            report = runner.check(cli.parse_check([".", "--github", "off"]), lambda *a: None)
        took = time.perf_counter() - t0
    finally:
        os.chdir(here)
        validators.VALIDATORS.clear()
        validators.VALIDATORS.update(saved)
    return took, [f for r in report.roots for f in r.findings]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", help="only this repository (OWNER+NAME)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--without", nargs="*", default=list(NEW), help="validators the baseline run leaves out")
    ap.add_argument("--show", help="print every defect of this validator")
    args = ap.parse_args()
    repos = sorted(p for p in CORPUS.iterdir() if p.is_dir() and (not args.repo or p.name == args.repo))
    totals = [0.0, 0.0]
    counts: collections.Counter = collections.Counter()
    print(f"{'repository':45} {'without':>8} {'with':>8} {'ratio':>6}  defects of {', '.join(args.without)}")
    for repo in repos:
        best_without = best_with = float("inf")
        findings: list = []
        for _ in range(args.repeat):
            best_without = min(best_without, run(repo, tuple(args.without))[0])
            took, findings = run(repo, ())
            best_with = min(best_with, took)
        defects = [d for d in group(findings) if d.finding.rule in args.without]
        here = collections.Counter(d.finding.rule for d in defects)
        counts.update(here)
        totals[0] += best_without
        totals[1] += best_with
        print(f"{repo.name:45} {best_without:8.2f} {best_with:8.2f} {best_with / best_without:6.2f}  "
              f"{dict(sorted(here.items()))}")
        if args.show:
            for d in defects:
                if d.finding.rule == args.show:
                    print(f"    {d.finding.location}: {d.finding.severity}: {d.finding.message[:200]}")
    print(f"{'total':45} {totals[0]:8.2f} {totals[1]:8.2f} {totals[1] / totals[0]:6.2f}  {dict(sorted(counts.items()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
