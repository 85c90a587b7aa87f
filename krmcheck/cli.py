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
    p.add_argument("--network", action="store_true",
                   help="fetch remote resources and bases (git repositories, URLs); "
                        "also allowed by KRMCHECK_NETWORK=1; default: off")
    _add_plugin_flags(p)
    return p


def _add_plugin_flags(p: argparse.ArgumentParser) -> None:
    # kubectl kustomize's spellings
    p.add_argument("--enable-alpha-plugins", action="store_true",
                   help="run plugins that are not builtin (exec plugins, KRM functions)")
    p.add_argument("--enable-helm", action="store_true",
                   help="inflate helmCharts with `helm template`")
    p.add_argument("--helm-command", default="helm", metavar="CMD",
                   help="helm binary to run with --enable-helm (default: helm on PATH)")


def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="krmcheck build",
                                description="Print what `kubectl kustomize DIR` prints.")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--load-restrictor", choices=RESTRICTORS, default=ROOT_ONLY)
    p.add_argument("--network", action="store_true",
                   help="fetch remote resources and bases (git repositories, URLs); "
                        "also allowed by KRMCHECK_NETWORK=1; default: off")
    _add_plugin_flags(p)
    return p


def parse_check(argv: Sequence[str]) -> runner.CheckOptions:
    a = _check_parser().parse_args(list(argv))
    return runner.CheckOptions(
        paths=tuple(Path(p) for p in a.paths), roots=tuple(a.roots) if a.roots else (),
        changed_since=a.changed_since, kubernetes_version=a.kubernetes_version,
        strict=a.strict, fail_on=a.fail_on, junit=a.junit, sarif=a.sarif, json=a.json,
        github=a.github, load_restrictor=a.load_restrictor, jobs=max(1, a.jobs),
        network=a.network, enable_alpha_plugins=a.enable_alpha_plugins,
        enable_helm=a.enable_helm, helm_command=a.helm_command)


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
        return runner.run_build(Path(b.dir), b.load_restrictor, sys.stdout, sys.stderr, b.network,
                                b.enable_alpha_plugins, b.enable_helm, b.helm_command)
    if args[:1] == ["check"]:
        args = args[1:]
    return runner.run_check(parse_check(args), sys.stdout, sys.stderr)


def run() -> None:
    raise SystemExit(main())


if __name__ == "__main__":
    run()
