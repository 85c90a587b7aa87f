"""Command line: parsing only; ``runner`` does the work and decides the exit code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from krmcheck import runner
from krmcheck.kustomize.files import RESTRICTORS, ROOT_ONLY

FAIL_ON = ("error", "warning", "info", "never")


def _check_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="krmcheck",
        description="Render every kustomize overlay, validate it, and report each finding "
                    "at the source line that caused it. Other commands: `krmcheck build DIR`.")
    p.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                   help="directories to search for kustomizations, or changed files "
                        "(only the roots that read them are checked); default: .")
    p.add_argument("--roots", nargs="+", metavar="MODE|DIR", default=None,
                   help="'all' checks every kustomization; DIR... checks exactly those; "
                        "default: the kustomizations no other one includes")
    p.add_argument("--changed-since", metavar="REF",
                   help="only check roots that read files changed since this git commit")
    p.add_argument("--kubernetes-version", metavar="VERSION",
                   help="schema version to validate against (default: newest bundled)")
    p.add_argument("--strict", action="store_true", help="reject fields the schema does not know")
    p.add_argument("--fail-on", choices=FAIL_ON, default="error",
                   help="lowest severity that fails the run (default: error)")
    p.add_argument("--junit", metavar="FILE", help="write a JUnit XML report")
    p.add_argument("--sarif", metavar="FILE", help="write a SARIF 2.1.0 report")
    p.add_argument("--json", metavar="FILE", help="write a JSON report")
    p.add_argument("--github", choices=("auto", "on", "off"), default="auto",
                   help="GitHub annotations and job summary (auto: on under GITHUB_ACTIONS)")
    p.add_argument("--load-restrictor", choices=RESTRICTORS, default=ROOT_ONLY)
    p.add_argument("--jobs", "-j", type=int, default=1, help="roots rendered in parallel")
    return p


def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="krmcheck build",
                                description="Print what `kubectl kustomize DIR` prints.")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--load-restrictor", choices=RESTRICTORS, default=ROOT_ONLY)
    return p


def parse_check(argv: Sequence[str]) -> runner.CheckOptions:
    a = _check_parser().parse_args(list(argv))
    return runner.CheckOptions(
        paths=tuple(Path(p) for p in a.paths), roots=tuple(a.roots) if a.roots else (),
        changed_since=a.changed_since, kubernetes_version=a.kubernetes_version,
        strict=a.strict, fail_on=a.fail_on, junit=a.junit, sarif=a.sarif, json=a.json,
        github=a.github, load_restrictor=a.load_restrictor, jobs=max(1, a.jobs))


def _normalise_restrictor(argv: list[str]) -> list[str]:
    # kubectl spells it --load-restrictor=X as well as --load-restrictor X
    out: list[str] = []
    for a in argv:
        if a.startswith("--load_restrictor"):
            a = a.replace("--load_restrictor", "--load-restrictor", 1)
        out.append(a)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = _normalise_restrictor(list(sys.argv[1:] if argv is None else argv))
    if args[:1] == ["build"]:
        b = _build_parser().parse_args(args[1:])
        return runner.run_build(Path(b.dir), b.load_restrictor, sys.stdout, sys.stderr)
    if args[:1] == ["check"]:
        args = args[1:]
    return runner.run_check(parse_check(args), sys.stdout, sys.stderr)


def run() -> None:
    raise SystemExit(main())


if __name__ == "__main__":
    run()
