"""Command line: parsing only; each subcommand's module in ``krmcheck/commands/``
does the work and returns the exit code."""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence, TextIO, cast

from krmcheck import shard, stack
from krmcheck.pipeline.run import CheckOptions
from krmcheck.kustomize.plugins import DEFAULT_FN_TIMEOUT, FunctionOptions
from krmcheck.reporters.safe import MessageStream, one_line
from krmcheck.resource.files import RESTRICTORS, ROOT_ONLY

if TYPE_CHECKING:
    from krmcheck import merge

# Each command imports what it needs when it runs: `krmcheck check` loads
# neither blame, merge-reports, the function server nor the schema catalog.

FAIL_ON = ("error", "warning", "info", "never")


SUBCOMMANDS = """commands:
  krmcheck [check] [PATH...]     render and validate (the default; its options below)
  krmcheck build DIR             print what `kubectl kustomize DIR` prints
  krmcheck build flux:NS/NAME    print what Flux (or argocd:NAME, Argo CD) applies for that object
  krmcheck roots [PATH...]       list every root with its kind, source and path (--build: render them all)
  krmcheck blame ROOT KIND/[NAMESPACE/]NAME FIELD
                                 print a rendered field's value and every source line that wrote it
  krmcheck fn VALIDATOR...       run built-in validators as an exec KRM function
  krmcheck catalog view LOCATION print a KRM function catalog, to decide whether to trust it
  krmcheck schemas list [PATH...] which schema source serves each kind the roots render
  krmcheck schemas pull [SOURCE] copy a schema catalog at a pinned commit into the cache
  krmcheck merge-reports INPUT...
                                 join the JUnit, SARIF and JSON reports of --shard jobs
Each command has its own --help."""


def _check_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="krmcheck",
        description="Render every kustomize overlay, validate it, and report each finding\n"
                    "at the source line that caused it.\n\n" + SUBCOMMANDS,
        epilog=_flags_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_VersionAction)
    p.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                   help="directories to search for kustomizations and plain manifests, or "
                        "changed files (only the roots that read them are checked); default: .")
    p.add_argument("--roots", action="append", metavar="MODE|DIR", default=None,
                   help="'all' checks every kustomization; 'kustomize' checks kustomizations and "
                        "manifests only (no Flux Kustomization or Argo CD Application roots); a "
                        "directory checks exactly that one (repeat for several); default: the "
                        "GitOps controller objects whose source is this repository, the "
                        "kustomizations no other one includes and the manifests no kustomization "
                        "reads, less what the controller objects render")
    p.add_argument("--exclude", action="append", default=[], metavar="PATTERN",
                   help="gitignore-style pattern (relative to the current directory) of paths "
                        "that are never roots and whose findings are suppressed; repeatable")
    p.add_argument("--baseline", metavar="FILE",
                   help="fail only on findings that are not recorded in FILE")
    p.add_argument("--write-baseline", metavar="FILE",
                   help="record the current findings in FILE (then the run passes on them)")
    p.add_argument("--changed-since", metavar="REF",
                   help="only check roots that read files changed since this git commit "
                        "(a branch, tag or id, with ~N and ^N: HEAD~1, origin/main)")
    p.add_argument("--diff-against", metavar="REF",
                   help="the pull-request view: render the roots the change since REF can affect "
                        "both at REF (read from git's object store) and in the work tree; say what "
                        "the merge does (objects added, changed and removed per root, images "
                        "replaced, what the GitOps controller will do) and flag the changes that "
                        "wedge or hurt at the line that made them, then show each root's diff; "
                        "fail only on findings REF did not have")
    p.add_argument("--fail-on-flag", action="append", default=[], metavar="ID", type=_flag_id,
                   help="with --diff-against: fail the run (exit 1) when the view raises this flag; "
                        "repeatable; 'any' for every flag (the ids are listed below)")
    p.add_argument("--markdown", metavar="FILE",
                   help="with --diff-against: write the view (what the merge does, the flags, the "
                        "new findings and the diffs folded per root) as Markdown for a pull-request "
                        "comment, within the 65,536 characters a GitHub comment holds")
    p.add_argument("--kubernetes-version", metavar="VERSION",
                   help="schema version to validate against (default: newest bundled)")
    p.add_argument("--strict", action="store_true", help="reject fields the schema does not know")
    p.add_argument("--schema-location", action="append", default=[], metavar="LOCATION",
                   help="where to find schemas of custom kinds the repository's CRDs do not cover: "
                        "a directory in the CRDs-catalog layout (GROUP/KIND_VERSION.json), a "
                        "template with kubeconform's placeholders ({{.Group}}, {{.ResourceKind}}, "
                        "{{.ResourceAPIVersion}}...), or an http(s) URL (fetched only with "
                        "--network, once, into the cache); repeatable, tried in order")
    p.add_argument("--require-schemas", action="store_true",
                   help="a kind no schema source covers is an error, not an info")
    p.add_argument("--fail-on", choices=FAIL_ON, default=None,
                   help="lowest severity that fails the run (default: .krmcheck.yaml's "
                        "fail-on, else error)")
    p.add_argument("--junit", metavar="FILE", help="write a JUnit XML report")
    p.add_argument("--sarif", metavar="FILE", help="write a SARIF 2.1.0 report")
    p.add_argument("--gitlab", metavar="FILE", help="write a GitLab code-quality report")
    p.add_argument("--json", metavar="FILE", help="write a JSON report")
    p.add_argument("--github", choices=("auto", "on", "off"), default="auto",
                   help="GitHub annotations and job summary (auto: on under GITHUB_ACTIONS)")
    p.add_argument("--load-restrictor", choices=RESTRICTORS, default="",
                   help="as kustomize's flag, for every kustomization root (default: "
                        ".krmcheck.yaml's load-restrictor for the root, else LoadRestrictionsRootOnly)")
    p.add_argument("--no-cache", dest="cache", action="store_false",
                   help="render and validate every root, reusing no report of an earlier run "
                        "(and storing none)")
    p.add_argument("--jobs", "-j", type=_jobs, default=0, metavar="N",
                   help="check roots in N processes, roots sharing bases in the same one; "
                        "0: one per CPU (default: one per CPU when the roots to check form more "
                        "than one group, else 1; the output is the same whatever N is)")
    p.add_argument("--shard", type=_shard, metavar="K/N",
                   help="check only part K of N of the selected roots (roots sharing a base or "
                        "component stay in one part), for a CI matrix; join the parts' reports "
                        "with `krmcheck merge-reports`")
    p.add_argument("--network", action="store_true",
                   help="fetch remote resources and bases (git repositories, URLs) and, with "
                        "--enable-helm, the remote charts of HelmReleases and Applications; give "
                        "network access to functions that declare network: true (kubectl's "
                        "flag); remote fetching is also allowed by KRMCHECK_NETWORK=1; default: off")
    p.add_argument("--require-network", action="store_true",
                   help="a root that needs the network while it is off fails to build (exit 2); "
                        "default: it is not checked, with one warning per URL [remote]")
    _add_plugin_flags(p)
    return p


def _add_plugin_flags(p: argparse.ArgumentParser) -> None:
    # kubectl kustomize's spellings (--network is defined with the other
    # network flag: it also lets functions that declare network: true have it)
    p.add_argument("--enable-exec", action="store_true",
                   help="run KRM exec functions (exec.path) and the executables of external "
                        "validators (.krmcheck.yaml, Kptfiles); kustomize's flag, which kubectl "
                        "lacks: without it they are skipped, as kubectl skips them")
    p.add_argument("--network-name", default="", metavar="NAME",
                   help="accepted for kubectl compatibility; like kubectl, not used")
    p.add_argument("-e", "--env", action="append", default=[], metavar="KEY[=VALUE]",
                   help="environment for container functions (KEY alone copies it from "
                        "this environment); repeatable")
    p.add_argument("--mount", action="append", default=[], metavar="SPEC",
                   help="mount for container functions, type=bind,source=DIR,target=DIR[,rw=true]; "
                        "sources must lie below the kustomization directory; repeatable")
    p.add_argument("--as-current-user", action="store_true",
                   help="run container functions as the current uid:gid instead of nobody")
    p.add_argument("--fn-timeout", type=_seconds, default=DEFAULT_FN_TIMEOUT, metavar="SECONDS",
                   help=f"time limit for each exec plugin or function run "
                        f"(default: {DEFAULT_FN_TIMEOUT:g})")
    p.add_argument("--enable-alpha-plugins", action="store_true",
                   help="run plugins that are not builtin (exec plugins, KRM functions) and "
                        "container validators")
    p.add_argument("--enable-helm", action="store_true",
                   help="inflate helmCharts with `helm template`")
    p.add_argument("--helm-command", default="helm", metavar="CMD",
                   help="helm binary to run with --enable-helm (default: helm on PATH)")
    p.add_argument("--trusted-catalog", action="append", default=[], metavar="LOCATION",
                   help="trust this function catalog (a path, URL, git or oci:// reference, as "
                        "written under catalogs:) to fetch and run the functions it lists; "
                        "repeatable; review one first with `krmcheck catalog view LOCATION`")


class _VersionAction(argparse._VersionAction):
    """argparse's version action, the version looked up only when asked for
    (importing importlib.metadata to read it is a good part of a run's start-up)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        self.version = f"krmcheck {_version()}"
        super().__call__(parser, namespace, values, option_string)


def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="krmcheck build",
                                description="Print what `kubectl kustomize DIR` prints, or what "
                                            "the GitOps controller applies for a root named "
                                            "flux:NAMESPACE/NAME or argocd:NAME.")
    p.add_argument("dir", metavar="DIR|ROOT")
    p.add_argument("--load-restrictor", choices=RESTRICTORS, default=ROOT_ONLY)
    p.add_argument("--network", action="store_true",
                   help="fetch remote resources and bases (git repositories, URLs) and, with "
                        "--enable-helm, the remote charts of HelmReleases and Applications; give "
                        "network access to functions that declare network: true (kubectl's "
                        "flag); remote fetching is also allowed by KRMCHECK_NETWORK=1; default: off")
    _add_plugin_flags(p)
    return p


def _roots_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="krmcheck roots",
                                description="List every root a check of PATH would check: GitOps "
                                            "controller roots (Flux Kustomizations and HelmReleases, "
                                            "Argo CD Applications) with what they render from and "
                                            "their path, then kustomizations and manifests. Why "
                                            "controller objects are not roots goes to stderr.")
    p.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                   help="as for a check; default: .")
    p.add_argument("--roots", action="append", metavar="MODE|DIR", default=None,
                   help="as for a check: all, kustomize, or directories")
    p.add_argument("--exclude", action="append", default=[], metavar="PATTERN",
                   help="as for a check; repeatable")
    p.add_argument("--json", action="store_true",
                   help="print a JSON list: root, kind, source, path, defined (the object's "
                        "file:line), notRendered (why it renders nothing)")
    p.add_argument("--build", action="store_true",
                   help="print what every root applies instead, each root's objects after a "
                        "'# Root: NAME' comment line (flux-local's build all)")
    p.add_argument("--load-restrictor", choices=RESTRICTORS, default="",
                   help="as for a check")
    p.add_argument("--network", action="store_true", help="as for a check; default: off")
    _add_plugin_flags(p)
    return p


def _blame_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="krmcheck blame",
                                description="Print the rendered value of FIELD in one resource of ROOT "
                                            "and every writer of it, newest first: the source "
                                            "file:line:col and what wrote it (a resource file, a "
                                            "patch, an images entry, a replacement...). A Secret's "
                                            "data is never printed.")
    p.add_argument("root", metavar="ROOT",
                   help="a kustomization directory or manifest, or a GitOps controller root "
                        "(flux:NAMESPACE/NAME, argocd:NAME) as `krmcheck build` takes it")
    p.add_argument("resource", metavar="KIND/[NAMESPACE/]NAME",
                   help="the rendered resource, by its rendered name or its name before "
                        "namePrefix/nameSuffix")
    p.add_argument("field", metavar="FIELD",
                   help="a field path as findings spell it: spec.replicas, "
                        "spec.template.spec.containers[name=web].image, /spec/replicas...")
    p.add_argument("--json", action="store_true",
                   help="print a JSON object: root, resource, field, value, "
                        "writers [{path, line, col, by}]")
    p.add_argument("--load-restrictor", choices=RESTRICTORS, default="",
                   help="as for a check (default: .krmcheck.yaml's for the root, else "
                        "LoadRestrictionsRootOnly)")
    p.add_argument("--network", action="store_true",
                   help="fetch remote resources and bases, as for `krmcheck build`; default: off")
    _add_plugin_flags(p)
    return p


def _catalog_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="krmcheck catalog",
                                description="Inspect a KRM function catalog (KEP-2906).")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    view = sub.add_parser("view", help="print a catalog's publishers, functions, versions, "
                                       "runtimes and digests, to decide whether to trust it")
    view.add_argument("location", metavar="LOCATION",
                      help="a catalog file, an http(s) URL, a git reference (repo//path?ref=) "
                           "or an oci:// reference; fetched even without --network")
    return p


def _schemas_parser() -> argparse.ArgumentParser:
    from krmcheck.schemas import catalog as schema_catalog

    p = argparse.ArgumentParser(prog="krmcheck schemas",
                                description="Where the schemas of the rendered kinds come from.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("list", add_help=False,
                   help="which source serves each kind the checked roots render (takes the "
                        "check command's paths and options)")
    pull = sub.add_parser("pull", help="copy a schema catalog repository (GROUP/KIND_VERSION.json) "
                                       "at a pinned commit into the cache, for offline runs")
    pull.add_argument("source", nargs="?", default=schema_catalog.DEFAULT_SOURCE, metavar="SOURCE",
                      help=f"a git repository URL or path (default: {schema_catalog.DEFAULT_SOURCE})")
    pull.add_argument("--ref", default=None, metavar="REF",
                      help="commit, tag or branch (default: the pinned commit for the default "
                           "catalog, HEAD for others)")
    pull.add_argument("--name", default="", metavar="NAME",
                      help="directory name under the cache (default: from the source)")
    return p


def _fn_parser() -> argparse.ArgumentParser:
    from krmcheck.validators import VALIDATORS

    p = argparse.ArgumentParser(
        prog="krmcheck fn",
        description="Run built-in validators as an exec KRM function: a ResourceList (or a YAML "
                    "stream) on stdin, the ResourceList with `results` on stdout; exit 1 on an "
                    "error result. The functionConfig may set kubernetesVersion and strict.")
    p.add_argument("validators", nargs="+", choices=sorted(VALIDATORS), metavar="VALIDATOR",
                   help=f"validator ids: {', '.join(sorted(VALIDATORS))}")
    p.add_argument("--kubernetes-version", metavar="VERSION",
                   help="default schema version when the functionConfig sets none")
    p.add_argument("--strict", action="store_true", help="default strict mode (schema)")
    return p


MAX_JOBS = max(64, 4 * (os.cpu_count() or 1))  # each job is a process
MAX_FN_TIMEOUT = 3600.0  # seconds: an hour for one plugin or function run


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= n <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"{n}: must be between 0 (one per CPU) and {MAX_JOBS}")
    return n or os.cpu_count() or 1


def _seconds(text: str) -> float:
    try:
        n = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < n <= MAX_FN_TIMEOUT:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text}: must be more than 0 and at most {MAX_FN_TIMEOUT:g}")
    return n


def _flags_epilog() -> str:
    """The flags of the pull-request view, one a line: what --fail-on-flag takes."""
    from krmcheck.flag_ids import CONTROLLER, FLAGS

    def lines(table: Mapping[str, Any]) -> str:
        return "".join(f"  {name:<34} {kind.severity}\n" for name, kind in table.items())

    return ("flags of the pull-request view (--diff-against; --fail-on-flag ID), with their severity:\n"
            + lines(FLAGS) + "what the GitOps controller will do (ids --fail-on-flag takes too):\n"
            + lines(CONTROLLER) + "README's 'What the merge will do' says what raises each.")


def _flag_ids() -> list[str]:
    from krmcheck.flag_ids import ALL

    return list(ALL)


def _flag_id(text: str) -> str:
    if text != "any" and text not in _flag_ids():
        raise argparse.ArgumentTypeError(f"{text!r} is no flag id; the ids: any, {', '.join(_flag_ids())}")
    return text


def _shard(text: str) -> shard.Shard:
    try:
        return shard.parse_shard(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _merge_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="krmcheck merge-reports",
        description="Join the JUnit XML, SARIF 2.1.0 and JSON reports of `--shard` jobs into one "
                    "of each (each input's format is read from its content). Exit 1 when the "
                    "merged findings fail --fail-on, 2 when a shard could not build a root.")
    p.add_argument("inputs", nargs="+", type=Path, metavar="INPUT", help="shard reports")
    p.add_argument("--junit", metavar="OUT", help="write the merged JUnit XML report")
    p.add_argument("--sarif", metavar="OUT", help="write the merged SARIF report")
    p.add_argument("--json", metavar="OUT", help="write the merged JSON report")
    p.add_argument("--fail-on", choices=FAIL_ON, default="error",
                   help="lowest severity that fails (default: error)")
    return p


def parse_merge(argv: Sequence[str]) -> merge.MergeOptions:
    from krmcheck import merge

    a = _merge_parser().parse_args(list(argv))
    return merge.MergeOptions(tuple(a.inputs), a.junit, a.sarif, a.json, a.fail_on)


def parse_check(argv: Sequence[str]) -> CheckOptions:
    a = _check_parser().parse_args(list(argv))
    roots = tuple(a.roots or ())
    for flag, given in (("--fail-on-flag", a.fail_on_flag), ("--markdown", a.markdown)):
        if given and not a.diff_against:
            _check_parser().error(f"{flag} needs --diff-against REF (flags come from the pull-request view)")
    for mode in ("all", "kustomize"):
        if mode in roots and len(roots) > 1:
            _check_parser().error(f"--roots {mode} cannot be combined with other --roots values")
    return CheckOptions(
        paths=tuple(Path(p) for p in a.paths), roots=() if roots == ("default",) else roots,
        exclude=tuple(a.exclude), baseline=a.baseline, write_baseline=a.write_baseline,
        schema_locations=tuple(a.schema_location), require_schemas=a.require_schemas,
        changed_since=a.changed_since, diff_against=a.diff_against,
        fail_on_flags=tuple(a.fail_on_flag), markdown=a.markdown,
        kubernetes_version=a.kubernetes_version,
        strict=a.strict, fail_on=a.fail_on, junit=a.junit, sarif=a.sarif, json=a.json,
        gitlab=a.gitlab, github=a.github, load_restrictor=a.load_restrictor, jobs=a.jobs, shard=a.shard,
        network=a.network, require_network=a.require_network, enable_alpha_plugins=a.enable_alpha_plugins,
        enable_helm=a.enable_helm, helm_command=a.helm_command,
        trusted_catalogs=tuple(a.trusted_catalog), functions=_functions(a), cache=a.cache)


def _functions(a: argparse.Namespace) -> FunctionOptions:
    return FunctionOptions(enable_exec=a.enable_exec, network_name=a.network_name,
                           mounts=tuple(a.mount), envs=tuple(a.env),
                           as_current_user=a.as_current_user, fn_timeout=a.fn_timeout)


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
    return stack.deep(lambda: _main(args))


def _main(args: list[str]) -> int:
    # Messages quote file names and entries from the pull request: each line
    # of stderr is made safe for a terminal and the GitHub runner.
    err = cast(TextIO, MessageStream(sys.stderr))
    command = COMMANDS.get(args[0]) if args else None
    if command is None:  # `krmcheck [PATH...]`: check is the default
        return _check(args, err)
    return command(args[1:], err)


def _check(args: list[str], err: TextIO) -> int:
    from krmcheck.commands import check

    return check.run(parse_check(args), sys.stdout, err,
                     progress=ProgressLine.for_stream(sys.stderr, os.environ))


def _build(args: list[str], err: TextIO) -> int:
    from krmcheck.commands import build

    b = _build_parser().parse_args(args)
    return build.run(Path(b.dir), b.load_restrictor, sys.stdout, err, b.network,
                     b.enable_alpha_plugins, b.enable_helm, b.helm_command,
                     trusted_catalogs=b.trusted_catalog, functions=_functions(b))


def _blame(args: list[str], err: TextIO) -> int:
    from krmcheck.commands import blame

    bl = _blame_parser().parse_args(args)
    return blame.run(bl.root, bl.resource, bl.field, _engine_options(bl), sys.stdout, err, as_json=bl.json)


def _roots(args: list[str], err: TextIO) -> int:
    from krmcheck.commands import roots

    r = _roots_parser().parse_args(args)
    listed = tuple(r.roots or ())
    opts = _engine_options(r, paths=tuple(Path(p) for p in r.paths),
                           roots=() if listed == ("default",) else listed, exclude=tuple(r.exclude))
    if r.build:
        return roots.run_build(opts, sys.stdout, err)
    return roots.run_list(opts, sys.stdout, err, as_json=r.json)


def _catalog(args: list[str], err: TextIO) -> int:
    from krmcheck.commands import catalog

    c = _catalog_parser().parse_args(args)
    return catalog.run(c.location, sys.stdout, err)


def _merge_reports(args: list[str], err: TextIO) -> int:
    from krmcheck.commands import merge_reports

    return merge_reports.run(parse_merge(args), sys.stdout, err)


def _schemas(args: list[str], err: TextIO) -> int:
    from krmcheck.commands import schemas

    if args[:1] == ["list"]:
        return schemas.run_list(parse_check(args[1:]), sys.stdout, err)
    sc = _schemas_parser().parse_args(args)
    from krmcheck.schemas import catalog as schema_catalog

    ref = sc.ref if sc.ref is not None else (
        schema_catalog.DEFAULT_REF if sc.source == schema_catalog.DEFAULT_SOURCE else "")
    return schemas.run_pull(sc.source, ref, sc.name, sys.stdout, err)


def _engine_options(a: argparse.Namespace, **more: Any) -> CheckOptions:
    """The options of a command that renders as a check does (blame, roots):
    the load restrictor, the network, plugins, helm and catalogs."""
    return CheckOptions(load_restrictor=a.load_restrictor, network=a.network,
                        enable_alpha_plugins=a.enable_alpha_plugins, enable_helm=a.enable_helm,
                        helm_command=a.helm_command, trusted_catalogs=tuple(a.trusted_catalog),
                        functions=_functions(a), **more)


def _fn(args: list[str], err: TextIO) -> int:
    from krmcheck.commands import fn
    from krmcheck.validators import ValidatorOptions

    f = _fn_parser().parse_args(args)
    return fn.serve(list(dict.fromkeys(f.validators)), sys.stdin, sys.stdout, err,
                    ValidatorOptions(f.kubernetes_version, f.strict))


# The subcommands, each parsed by its own parser and run by its module in
# krmcheck/commands/ (imported when it runs).
COMMANDS: dict[str, Callable[[list[str], TextIO], int]] = {
    "check": _check, "build": _build, "blame": _blame, "roots": _roots, "catalog": _catalog,
    "merge-reports": _merge_reports, "schemas": _schemas, "fn": _fn,
}


class ProgressLine:
    """``[12/40] overlays/prod`` on one rewritten terminal line, shown only
    once a run has taken a second, and never when the stream is not a
    terminal or in CI (logs would fill with carriage returns)."""

    DELAY = 1.0

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.start = time.monotonic()
        self.shown = False

    @classmethod
    def for_stream(cls, stream: TextIO, env: Mapping[str, str]) -> Callable[[int, int, str], None] | None:
        if not stream.isatty() or env.get("CI") or env.get("GITHUB_ACTIONS"):
            return None
        return cls(stream)

    def __call__(self, done: int, total: int, root: str) -> None:
        if done >= total:
            if self.shown:
                self.stream.write("\r\033[K")
                self.stream.flush()
            return
        if time.monotonic() - self.start < self.DELAY:
            return
        width = 70
        text = f"[{done}/{total}] {one_line(root)}"
        self.stream.write("\r\033[K" + (text if len(text) <= width else text[:width - 3] + "..."))
        self.stream.flush()
        self.shown = True


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("krmcheck")
    except metadata.PackageNotFoundError:
        return "unknown"


# A run builds large trees of small objects that live until it ends, and
# makes next to no cyclic garbage (peak memory of kserve's 50 roots is the
# same with the collector off). The default young-generation threshold (700)
# walks those trees again and again: 40% of a 2,000-Deployment build, 30% of
# kserve's check. Collect every million allocations instead, as a safety net.
GC_THRESHOLDS = (1_000_000, 100, 100)


def run() -> None:
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        code = main()
    except BrokenPipeError:
        # the reader went away (`krmcheck | head`): no traceback, and nothing
        # more written to the closed pipe as the interpreter exits
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    # The process ends here: spare the interpreter's last collections a walk
    # through every schema and table the run loaded (a tenth of a small run).
    gc.freeze()
    raise SystemExit(code)


if __name__ == "__main__":
    run()
