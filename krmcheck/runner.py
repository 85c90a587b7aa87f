"""discover -> build -> validate -> locate -> report; the one place that
decides the exit code."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from krmcheck import discover
from krmcheck.kustomize.errors import BuildError
from krmcheck.kustomize.files import ROOT_ONLY, Files
from krmcheck.kustomize.kustomization import find_file
from krmcheck.kustomize.resource import Resource
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.locate import locate_all
from krmcheck.redact import redact, secret_values
from krmcheck.reporters import REPORTERS
from krmcheck.results import (SEVERITY_RANK, Finding, ResourceRef, Result, RootReport,
                              RunReport)
from krmcheck.tree.emit import emit_all
from krmcheck.tree.origin import Location
from krmcheck.validators import VALIDATORS, ValidatorOptions

EXIT_OK, EXIT_FINDINGS, EXIT_BROKEN = 0, 1, 2


@dataclass(frozen=True)
class CheckOptions:
    paths: tuple[Path, ...] = (Path("."),)
    roots: tuple[str, ...] = ()
    changed_since: str | None = None
    kubernetes_version: str | None = None
    strict: bool = False
    fail_on: str = "error"
    junit: str | None = None
    sarif: str | None = None
    json: str | None = None
    github: str = "auto"
    load_restrictor: str = ROOT_ONLY
    jobs: int = 1
    network: bool = False
    enable_alpha_plugins: bool = False
    enable_helm: bool = False
    helm_command: str = "helm"


class UsageError(Exception):
    """Bad arguments or configuration: exit 2 with one message."""


# --- build -----------------------------------------------------------------------

def run_build(directory: Path, restrictor: str, out: TextIO, err: TextIO,
              network: bool = False, enable_alpha_plugins: bool = False,
              enable_helm: bool = False, helm_command: str = "helm") -> int:
    files = Files(discover.repo_root(Path.cwd()))
    builder = Builder(files, BuildOptions(restrictor, network, enable_alpha_plugins,
                                          enable_helm, helm_command))
    try:
        resources = builder.build(directory)
    except BuildError as e:
        err.write(f"Error: {e}\n")
        return EXIT_BROKEN
    out.write(emit_all([r.node for r in resources]))
    return EXIT_OK


# --- check -----------------------------------------------------------------------

def run_check(opts: CheckOptions, out: TextIO, err: TextIO,
              env: dict[str, str] | None = None) -> int:
    env = dict(os.environ) if env is None else env
    try:
        roots = _select_roots(opts)
        vopts = ValidatorOptions(opts.kubernetes_version, opts.strict)
        _check_validator_options(vopts)
    except UsageError as e:
        err.write(f"krmcheck: error: {e}\n")
        return EXIT_BROKEN
    files = Files(discover.repo_root(Path.cwd()))
    builder = Builder(files, BuildOptions(opts.load_restrictor, opts.network,
                                          opts.enable_alpha_plugins, opts.enable_helm,
                                          opts.helm_command))
    reports = tuple(_check_root(builder, files, root, vopts) for root in roots)
    run = RunReport(reports, opts.fail_on)
    _report(run, opts, out, env)
    return exit_code(run)


def exit_code(run: RunReport) -> int:
    if run.build_failed:
        return EXIT_BROKEN
    if run.fail_on == "never":
        return EXIT_OK
    floor = SEVERITY_RANK[run.fail_on]
    if any(SEVERITY_RANK.get(f.severity, 0) >= floor for f in run.findings):
        return EXIT_FINDINGS
    return EXIT_OK


def _select_roots(opts: CheckOptions) -> list[Path]:
    for p in opts.paths:
        if not p.exists() and not opts.changed_since:
            raise UsageError(f"{p}: no such file or directory")
    if opts.roots and opts.roots != ("all",):
        roots = [Path(r).resolve() for r in opts.roots]
        for r in roots:
            if not r.is_dir():
                raise UsageError(f"--roots {r}: not a directory")
        return roots
    search = [p for p in opts.paths if p.is_dir()] or [Path(".")]
    changed = [p for p in opts.paths if not p.is_dir()]
    infos = discover.graph(discover.find_kustomizations(search if not changed else [Path(".")]))
    roots = discover.all_roots(infos) if opts.roots == ("all",) else discover.default_roots(infos)
    if opts.changed_since:
        try:
            changed += discover.changed_since(opts.changed_since, discover.repo_root(Path.cwd()))
        except Exception as e:  # dulwich raises many types; this is the boundary
            raise UsageError(f"--changed-since {opts.changed_since}: {e}") from None
    if changed:
        roots = discover.touched_roots(roots, changed, infos)
    return roots


def _check_validator_options(vopts: ValidatorOptions) -> None:
    try:
        VALIDATORS["schema"].validate([], vopts)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _check_root(builder: Builder, files: Files, root: Path, vopts: ValidatorOptions) -> RootReport:
    name = files.display(root)
    try:
        resources = builder.build(root)
    except BuildError as e:
        return RootReport(name, (), (_build_finding(e, name),), build_failed=True)
    secrets = secret_values(resources)
    results = [redact(r, secrets) for r in _validate(resources, vopts)]
    findings = locate_all(results, resources, name, _kustomization_file(files, root))
    return RootReport(name, tuple(_ref(r) for r in resources), tuple(findings))


def _kustomization_file(files: Files, root: Path) -> str:
    found = find_file(root)
    return files.display(found) if found else files.display(root / "kustomization.yaml")


def _validate(resources: list[Resource], vopts: ValidatorOptions) -> list[Result]:
    items = [r.node for r in resources]
    results: list[Result] = []
    for validator in VALIDATORS.values():
        results.extend(validator.validate(items, vopts))
    return results


def _build_finding(e: BuildError, root: str) -> Finding:
    loc = e.location if e.location and e.location.path else Location(root, 1, 1)
    message = str(e)
    prefix = f"{e.location}: " if e.location else ""
    if prefix and message.startswith(prefix):
        message = message[len(prefix):]
    result = Result(message=message, severity="error", tags=(("validator", "build"),))
    return Finding(result, root, loc)


def _ref(r: Resource) -> ResourceRef:
    return ResourceRef(r.api_version, r.kind, r.name, r.namespace)


def _report(run: RunReport, opts: CheckOptions, out: TextIO, env: dict[str, str]) -> None:
    REPORTERS["text"].write(run, out)
    github = opts.github == "on" or (opts.github == "auto" and env.get("GITHUB_ACTIONS") == "true")
    if github:
        REPORTERS["github"].write(run, out)
    for fmt, target in (("junit", opts.junit), ("sarif", opts.sarif), ("json", opts.json)):
        if target:
            with open(target, "w", encoding="utf-8") as fh:
                REPORTERS[fmt].write(run, fh)
