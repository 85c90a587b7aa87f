"""discover -> build -> validate -> locate -> report; the one place that
decides the exit code."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import io
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence, TextIO

import yaml

from krmcheck import cache
from krmcheck import config as krmconfig
from krmcheck import discover, scope, stack, suppression
from krmcheck import gitops
from krmcheck import redact
from krmcheck import render_cache
from krmcheck import shard as kshard
from krmcheck.gitops import placeholders as gitops_placeholders
from krmcheck.gitops import summary as gitops_summary
from krmcheck.gitops.markers import mentions_controllers
from krmcheck.gitops.root import ControllerRoot, Root
from krmcheck.kustomize import deprecation
from krmcheck.kustomize.kustomization import find_file
from krmcheck.kustomize.plugins import FunctionOptions
from krmcheck.locate import Locator, source_id
from krmcheck.reporters import REPORTERS, plural
from krmcheck.resource.errors import BuildError, NeedsNetwork
from krmcheck.resource.files import ROOT_ONLY, Files, OutsideRoot, read_text_bounded
from krmcheck.results import (NOT_CHECKED, SEVERITY_RANK, Finding, Note, ResourceRef, Result,
                              RootReport, RunReport)
from krmcheck.schemas import crds
from krmcheck.schemas import sources as schema_sources
from krmcheck.schemas.sources import SchemaSettings
from krmcheck.scope import PathPatterns, any_match
from krmcheck.tree.emit import emit_all
from krmcheck.tree.origin import Location
from krmcheck.validators import VALIDATORS, ValidatorOptions, duplicate, schema
from krmcheck.pipeline import run as run_module
from krmcheck.pipeline.run import anchored

if TYPE_CHECKING:
    # What only some runs use is imported where it is used: a plain check of
    # kustomizations loads no git, no function runtime, no controller
    # rendering, no baseline, diff or merge code, and no worker pool unless
    # it starts workers (the render cache's hits build nothing at all).
    from concurrent.futures import Executor, Future

    from krmcheck import baseline as kbaseline
    from krmcheck import diff as kdiff
    from krmcheck import merge as kmerge
    from krmcheck.fn.loader import PluginLoader
    from krmcheck.kustomize.target import Builder
    from krmcheck.resource.resource import Resource

EXIT_OK, EXIT_FINDINGS, EXIT_BROKEN = 0, 1, 2


# concurrent.futures (with multiprocessing and logging) is imported when a
# run first starts workers: importing it is a good part of a small run's start-up.

def ProcessPoolExecutor(*args: Any, **kwargs: Any) -> Executor:  # noqa: N802 - stands for the class
    """concurrent.futures.ProcessPoolExecutor(*args, **kwargs)."""
    from concurrent.futures import ProcessPoolExecutor as Pool

    return Pool(*args, **kwargs)


def as_completed(futures: Iterable[Future[Any]]) -> Iterator[Future[Any]]:
    """concurrent.futures.as_completed(futures)."""
    from concurrent.futures import as_completed as each

    return each(futures)


# What a check is asked, and the run made of it, live in the pipeline.
CheckOptions = run_module.CheckOptions
UsageError = run_module.UsageError
Run = run_module.Run


# --- build -----------------------------------------------------------------------

def run_build(directory: Path, restrictor: str, out: TextIO, err: TextIO,
              network: bool = False, enable_alpha_plugins: bool = False,
              enable_helm: bool = False, helm_command: str = "helm",
              trusted_catalogs: Sequence[str] = (),
              functions: FunctionOptions | None = None, cwd: Path | None = None) -> int:
    """``krmcheck build DIR``: the top of the repository is DIR's (a
    controller root's name is looked up in the working directory's)."""
    from krmcheck.kustomize.target import BuildOptions, Builder

    here = (cwd or Path.cwd()).resolve()
    controller = str(directory).startswith(CONTROLLER_PREFIXES)
    directory = directory if controller or directory.is_absolute() else here / directory
    files = Files(discover.top_of(here if controller else directory, here))
    trusted = anchored(CheckOptions(trusted_catalogs=tuple(trusted_catalogs)), here).trusted_catalogs
    builder = Builder(files, BuildOptions(restrictor, network, enable_alpha_plugins,
                                          enable_helm, helm_command,
                                          functions=functions or FunctionOptions(),
                                          plugins=_plugin_loader(files, trusted, network)))
    if controller:
        return _build_controller_root(str(directory), builder, files, out, err, here)
    try:
        resources = _build(builder, directory)
    except BuildError as e:
        # the rendered output holds the Secrets; a message never does
        err.write(_warning_lines(builder) + f"Error: {redact.text(str(e), frozenset(builder.secrets))}\n")
        return EXIT_BROKEN
    err.write(_warning_lines(builder))  # kubectl warns on stderr as it loads each kustomization
    out.write(emit_all([r.node for r in resources]))
    return EXIT_OK


CONTROLLER_PREFIXES = ("flux:", "flux-helm:", "argocd:")


def _build_controller_root(name: str, builder: Builder, files: Files, out: TextIO, err: TextIO,
                           here: Path) -> int:
    """``krmcheck build flux:NS/NAME``: what the controller applies for one of
    the controller roots found under the current directory."""
    given = builder.options  # the flags of `krmcheck build`, for the controller's own builder too
    opts = anchored(CheckOptions(load_restrictor=given.load_restrictor, network=given.network,
                                 enable_alpha_plugins=given.enable_alpha_plugins, enable_helm=given.enable_helm,
                                 helm_command=given.helm_command, functions=given.functions), here)
    try:
        run = start(opts)[0]
        excludes = _excludes(run)
        selection = _select(run, excludes)
        found = [r for r in _with_controller_roots(run, selection, excludes)
                 if isinstance(r, ControllerRoot) and r.name == name]
    except UsageError as e:
        err.write(f"Error: {e}\n")
        return EXIT_BROKEN
    if not found:
        err.write(f"Error: {name}: no such GitOps controller root under the current directory\n")
        return EXIT_BROKEN
    builders = _Builders(run)
    builders.made[builder.options.load_restrictor] = builder
    root_builder = builders.get(found[0].restrictor)
    try:
        rendered = _render_root(root_builder, found[0], run.config)
    except BuildError as e:
        err.write(f"Error: {redact.text(str(e), frozenset(root_builder.secrets))}\n")
        return EXIT_BROKEN
    for p in rendered.problems:
        err.write(redact.text(f"Warning: {p.origin.location}: {p.message}\n", frozenset(root_builder.secrets)))
    out.write(emit_all([r.node for r in rendered.resources]))
    return EXIT_OK


def _build(builder: Builder, directory: Path) -> list[Resource]:
    """``Builder.build``, where any failure becomes a BuildError: this is the
    boundary at which a defect in krmcheck turns into one clear message
    naming the root, never a traceback."""
    try:
        return builder.load_manifest(directory) if os.path.isfile(directory) else builder.build(directory)
    except BuildError:
        raise
    except RecursionError:
        raise BuildError(f"{directory}: the kustomizations nest too deeply") from None
    except Exception as e:  # noqa: BLE001 - the named boundary described above
        raise BuildError(f"internal error in krmcheck while building {directory}: "
                         f"{type(e).__name__}: {e} (please report this)") from None


def _warning_lines(builder: Builder) -> str:
    return "".join(f"{w.line}\n" for w in builder.warnings)


def _plugin_loader(files: Files, trusted: Sequence[str], network: bool,
                   config: krmconfig.Config | None = None) -> PluginLoader:
    """What runs a build's external plugins and functions: the function
    runtime, trusting the catalogs named by --trusted-catalog values
    (absolute: they were relative to the working directory) and
    ``trusted-catalogs`` of .krmcheck.yaml (relative to it)."""
    from krmcheck.fn.catalog_context import CatalogContext
    from krmcheck.fn.loader import PluginLoader

    keys: set[str] = set()
    listed = config.trusted_catalogs if config is not None else ()
    if trusted or listed:  # (the catalogs module is imported by runs that name catalogs)
        from krmcheck.fn.catalog.sources import trust_keys

        keys |= trust_keys(trusted, files, files.repo_root)
        for entry in listed:
            keys |= trust_keys([entry.reference], files, entry.directory)
    return PluginLoader(CatalogContext(frozenset(keys), network))


# --- catalog view ------------------------------------------------------------------

def run_catalog_view(location: str, out: TextIO, err: TextIO) -> int:
    """Print a catalog (publisher, functions, versions, runtimes, digests) so
    that a person can decide to trust it. Fetching the catalog the user named
    is allowed; nothing it lists is downloaded or run."""
    from krmcheck.fn.catalog.sources import load_catalog, reference
    from krmcheck.fn.catalog.view import view_lines
    from krmcheck.fn.catalog_context import CatalogContext

    here = Path.cwd()  # read once: the location may be relative to it
    files = Files(discover.repo_root(here))
    ref = reference(location, here, files, None)
    try:
        found = load_catalog(ref, CatalogContext(network=True))
    except BuildError as e:
        err.write(f"Error: {e}\n")
        return EXIT_BROKEN
    out.write("".join(f"{line}\n" for line in view_lines(found)))
    return EXIT_OK


# --- merge-reports -----------------------------------------------------------------

def run_merge(opts: kmerge.MergeOptions, out: TextIO, err: TextIO) -> int:
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
    return _merged_exit_code(tallies, opts.fail_on)


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


def _merged_exit_code(tallies: Sequence[kmerge.Tally], fail_on: str) -> int:
    if any(t.build_failed for t in tallies):
        return EXIT_BROKEN  # a shard could not build a root, and exited 2 itself
    if fail_on == "never":
        return EXIT_OK
    failing = [s for s, rank in SEVERITY_RANK.items() if s != "never" and rank >= SEVERITY_RANK[fail_on]]
    return EXIT_FINDINGS if any(t.count(s) for t in tallies for s in failing) else EXIT_OK


# --- check -----------------------------------------------------------------------

Progress = Callable[[int, int, str], None]  # (roots done, roots in all, the root just done)


def run_check(opts: CheckOptions, out: TextIO, err: TextIO,
              env: dict[str, str] | None = None, progress: Progress | None = None) -> int:
    env = dict(os.environ) if env is None else env
    opts = anchored(opts)
    try:
        run = check(opts, progress or _silent)
    except UsageError as e:
        err.write(f"krmcheck: error: {e}\n")
        return EXIT_BROKEN
    _report(run, opts, out, env)
    return exit_code(run)


def check(opts: CheckOptions, progress: Progress) -> RunReport:
    """discover -> build -> validate -> locate -> triage: the run's report.
    Everything a user can get wrong is a UsageError before any root is built.
    Paths in several repositories are checked one repository at a time, each
    with its own top, and reported together."""
    opts = anchored(opts)
    if opts.diff_against:
        return _check_diff(opts, progress)
    runs = start(opts)
    reports = [check_run(run, progress) for run in runs]
    return reports[0] if len(reports) == 1 else _joined(runs, reports)


def start(opts: CheckOptions) -> list[Run]:
    """The runs of an anchored ``opts``: one per repository its paths are in,
    each with the top found from its paths and its configuration."""
    cwd = opts.cwd or Path.cwd()
    by_top: dict[Path, list[Path]] = {}
    for p in opts.paths:
        by_top.setdefault(discover.top_of(p, cwd), []).append(p)
    if not by_top:  # no path: the working directory's repository
        by_top[discover.top_of(cwd, cwd)] = []
    runs = []
    for top, paths in by_top.items():
        mine = dataclasses.replace(opts, paths=tuple(paths) or (top,))
        # Directories use the configuration nearest above them; changed
        # files (pre-commit) the one the whole repository's run uses, so
        # that a file is judged as a full run judges it.
        dirs = [p for p in paths if os.path.isdir(p)]
        runs.append(Run(mine, top, _load_config(dataclasses.replace(mine, paths=tuple(dirs) or (top,)), top)))
    return runs


def check_run(run: Run, progress: Progress) -> RunReport:
    """One repository's check."""
    opts, config, files, top = run.options, run.config, run.files, run.top
    schema_sources.new_run()
    excludes = _excludes(run)
    found_notes: list[Note] = []  # why controller objects that look like roots are not
    selection, roots = _roots(run, excludes, found_notes)
    crd_scan = discover.Scan(top.resolve(), "CRD files",
                             also=frozenset(f for info in selection.infos.values() for f in info.files))
    vopts = ValidatorOptions(opts.kubernetes_version, opts.strict,
                             _schema_settings(run, selection, excludes, crd_scan))
    _check_validator_options(vopts)
    readers = _readers(roots, selection.infos, files)
    known = _baseline(run)
    _prepare_outputs(opts, set(readers) | {config.path}, files)
    reports = _check_all(run, roots, vopts, progress)
    reports = _with_crds_of_other_roots(run, roots, reports, vopts)
    reports = _with_refused(reports, selection.refused + tuple(crd_scan.refused), files)
    if config.clusters and config.enabled(duplicate.id):
        reports = duplicate.across_roots(reports, [r.places for r in reports], config.clusters)
    severities = dict(config.severities)
    if opts.require_schemas or config.require_schemas:
        severities[schema.MISSING] = "error"
    policy = suppression.Policy(severities=severities, overrides=_overrides(config),
                                exclude=excludes, comments=tuple(_comments(readers, top)),
                                readers=readers)
    reports = suppression.apply(schema.missing_per_run(reports), policy)
    reports = gitops_summary.summarise(reports)
    notes: tuple[Note, ...] = ()
    if opts.write_baseline:
        from krmcheck import baseline as kbaseline

        _write_report(opts.write_baseline, kbaseline.dump(f for r in reports for f in r.findings))
        known = kbaseline.load(Path(opts.write_baseline), files.display(Path(opts.write_baseline)))
    if known is not None:
        reports, notes = suppression.apply_baseline(reports, known, set(readers))
    if not roots and selection.changed:
        notes += (Note("no root reads the changed files; nothing to check"),)
    notes += _set_aside_notes(selection, files) + tuple(found_notes)
    here = run.here()
    return RunReport(reports, opts.fail_on or config.fail_on or "error",
                     cwd="" if here.startswith("..") else here,
                     top_from_cwd=Path(os.path.relpath(top, run.cwd)).as_posix() if here.startswith("..") else "",
                     notes=notes, disabled=config.disabled,
                     baseline=known.display if known is not None else "",
                     set_aside=tuple((files.display(s.path), s.reason, s.why) for s in selection.set_aside),
                     read_files=tuple(sorted(readers)))


def _joined(runs: Sequence[Run], reports: Sequence[RunReport]) -> RunReport:
    """The reports of runs in several repositories as one, each path named
    from the working directory (which is then the report's top)."""
    from krmcheck import rebase  # noqa: F401 - joined runs only

    cwd = runs[0].cwd
    parts = [rebase.report(r, Path(os.path.relpath(run.top, cwd)).as_posix()) for run, r in zip(runs, reports)]
    first = parts[0]
    return dataclasses.replace(
        first, roots=tuple(root for p in parts for root in p.roots), cwd="", top_from_cwd="",
        notes=tuple(n for p in parts for n in p.notes),
        disabled=tuple(sorted({d for p in parts for d in p.disabled})),
        set_aside=tuple(x for p in parts for x in p.set_aside))


def _set_aside_notes(selection: discover.Selection, files: Files) -> tuple[Note, ...]:
    """One note per reason for the files discovery set aside as not applied,
    at the first of them (the JSON report lists every one)."""
    from krmcheck import applied

    return tuple(Note(line, Location(files.display(listed[0].path), 1, 1))
                 for _, listed, line in applied.summary(selection.set_aside))


def _roots(run: Run, excludes: tuple[PathPatterns, ...],
           notes: list[Note] | None = None) -> tuple[discover.Selection, list[Root]]:
    """The selection of kustomizations and manifests, and the roots to check."""
    opts, files = run.options, run.files
    if opts.only_roots is not None:
        try:
            selection = _select(_whole(run), excludes)
        except UsageError:  # nothing at all on this side
            return discover.Selection((), {}, False), []
    else:
        selection = _select(run, excludes)
    roots: list[Root] = list(selection.roots)
    if selection.changed:
        roots = _affected(run, excludes, notes)
    elif run.config.gitops and opts.roots in ((), ("all",)):
        roots = _with_controller_roots(run, selection, excludes, notes)
    if opts.only_roots is not None:
        roots = [r for r in roots if _root_name(files, r) in opts.only_roots]
    if opts.shard is not None:
        roots = _shard_select(roots, opts.shard)
    return selection, roots


def _affected(run: Run, excludes: tuple[PathPatterns, ...], notes: list[Note] | None = None) -> list[Root]:
    """The roots whose result can change when the changed files change (as
    pre-commit passes them, or since ``--changed-since``): of every root of
    the repository, those that read one of them, by the dependency graph
    (kustomizations, controller objects and what they add, their sources and
    variables) or by what the read journal saw the root's last check read;
    every root when the configuration or a local schema location changed;
    the roots whose files name a kind a changed CRD defines; and the plain
    manifests beside or below a changed kustomization (which it may have
    stopped reading)."""
    whole_run = _whole(run)
    try:
        whole = _select(whole_run, excludes)
    except UsageError:
        return []
    candidates: list[Root] = list(whole.roots)
    if run.config.gitops and run.options.roots in ((), ("all",)):
        candidates = _with_controller_roots(whole_run, whole, excludes, notes)
    changed = _changed_files(run.options, run.top)
    if _changes_everything(run, changed):
        return candidates
    kinds = _crd_kinds(changed)
    # a changed kustomization may no longer read files beside or below it,
    # which become plain manifests of their own
    edited = [p.parent for p in changed if p.name in discover.FILENAMES]
    files = run.files
    out = []
    for root in candidates:
        reads = _controller_reads(root, files) if isinstance(root, ControllerRoot) else discover.reads(root, whole.infos)
        journal = {Path(p) for p in render_cache.recorded_reads(run.top, _root_name(files, root))}
        if (reads & changed or journal & changed or (kinds and _names_a_kind(reads | journal, kinds))
                or (isinstance(root, Path) and os.path.isfile(root) and any(d in root.parents for d in edited))):
            out.append(root)
    return out


def _changes_everything(run: Run, changed: set[Path]) -> bool:
    """Whether a changed file is the configuration or in a local schema location."""
    if run.config.path and (run.top / run.config.path).resolve() in changed:
        return True
    places = [Path(loc).resolve() for loc in run.options.schema_locations + run.config.schema_locations
              if "://" not in loc and "{{" not in loc]
    return any(p == place or place in p.parents for p in changed for place in places)


def _crd_kinds(changed: set[Path]) -> set[str]:
    """The kinds the changed files that hold CRDs define (``spec.names.kind``)."""
    from krmcheck.tree.load import FAST_LOADER

    kinds: set[str] = set()
    for path in changed:
        try:
            text = read_text_bounded(path)
            if "CustomResourceDefinition" not in text:
                continue
            docs = list(yaml.load_all(text, Loader=FAST_LOADER))
        except (OSError, yaml.YAMLError, RecursionError, ValueError):
            continue  # a broken file selects through the graph; its root reports it
        for doc in docs:
            names = crds.names_of(doc)
            if names is not None:
                kinds.add(names)
    return kinds


def _names_a_kind(reads: set[Path], kinds: set[str]) -> bool:
    pattern = re.compile(r"kind:[ \t]*[\"']?(" + "|".join(sorted(map(re.escape, kinds))) + r")\b")
    for path in reads:
        try:
            if os.path.isfile(path) and pattern.search(read_text_bounded(path)):
                return True
        except OSError:
            continue
    return False


# --- --diff-against ----------------------------------------------------------------

def _check_diff(opts: CheckOptions, progress: Progress) -> RunReport:
    """The pull-request view: the roots the change can affect (read files
    changed since REF, on either side), rendered at REF and in the work
    tree; the work tree's report, where findings REF already had do not
    count, with each root's changes (see :mod:`krmcheck.diff`). The two
    sides are two runs, each with its own top, sharing one memo."""
    from krmcheck import diff as kdiff
    from krmcheck import git

    ref = opts.diff_against or ""
    work_opts = dataclasses.replace(opts, diff_against=None)
    runs = start(work_opts)
    if len(runs) > 1:
        raise UsageError(f"--diff-against {ref}: the paths are in {len(runs)} repositories; give paths of one")
    run = runs[0]
    top, files = run.top, run.files
    try:
        _, tree = git.revision(top, ref)
        changed = sorted({files.display(p) for p in discover.changed_paths(ref, top)})
    except (KeyError, discover.NothingToCheck):
        raise UsageError(f"--diff-against {ref}: no such commit, branch or tag (in CI, check out "
                         f"with the base branch fetched, e.g. actions/checkout with fetch-depth: 0)") from None
    except Exception as e:  # noqa: BLE001 - dulwich raises many types; this is the boundary
        if type(e).__name__ == "NotGitRepository":
            raise UsageError(f"--diff-against {ref}: {files.display(top) or '.'} is not in a git "
                             f"work tree; run krmcheck inside a clone of the repository") from None
        raise UsageError(f"--diff-against {ref}: {e}") from None
    base_top = kdiff.base_tree(top, tree, cache.directory() / "trees")
    key = kdiff.secret_key(cache.directory())

    def on_base(p: Path) -> Path:
        mapped = base_top / os.path.relpath(p, top)
        return mapped if os.path.exists(mapped) else base_top

    base_opts = dataclasses.replace(run.options, junit=None, sarif=None, json=None, gitlab=None,
                                    write_baseline=None, paths=tuple(on_base(p) for p in run.options.paths),
                                    cwd=on_base(run.cwd),
                                    repo_urls=opts.repo_urls + (git.origin_url(top),))
    base_run = Run(base_opts, base_top, _load_config(base_opts, base_top), run.memo)
    names = set(_root_names(run, changed)) | set(_root_names(base_run, changed))
    base = check_run(_with_options(base_run, only_roots=frozenset(names), diff=kdiff.Context(key)), progress)
    rendered = tuple((r.root, tuple(kdiff.Rendered(*x) for x in r.rendered)) for r in base.roots)
    work = check_run(_with_options(run, only_roots=frozenset(names), diff=kdiff.Context(key, rendered)),
                     progress)
    compared = kdiff.against(base, work, ref)
    # a generated file git ignores exists on the work tree's side only
    only_here = [p for p in git.ignored(top, work.read_files) if not os.path.lexists(base_top / p)]
    if only_here:
        shown = ", ".join(only_here[:5]) + (f" and {len(only_here) - 5} more" if len(only_here) > 5 else "")
        note = Note(f"{plural(len(only_here), 'file')} the roots read {'is' if len(only_here) == 1 else 'are'} "
                    f"ignored by git, so {'it exists' if len(only_here) == 1 else 'they exist'} in the work tree "
                    f"only and the roots reading {'it' if len(only_here) == 1 else 'them'} differ from {ref}: "
                    f"{shown}")
        compared = dataclasses.replace(compared, notes=compared.notes + (note,))
    return compared


def _with_options(run: Run, **changes: Any) -> Run:
    return dataclasses.replace(run, options=dataclasses.replace(run.options, **changes))


def _shown(path: Path, cwd: Path) -> str:
    """A path as the user would have written it: relative to the working directory."""
    rel = os.path.relpath(path, cwd)
    return path.as_posix() if rel.startswith("../..") else Path(rel).as_posix()


def _whole(run: Run) -> Run:
    """The run over the whole repository (no changed files)."""
    return _with_options(run, paths=(run.top,), changed_since=None)


def _root_names(run: Run, changed: Sequence[str]) -> list[str]:
    """The roots of ``run``'s repository that read one of the ``changed``
    files (repo-relative) that exist there."""
    top = run.top
    paths = tuple(top / p for p in changed if os.path.lexists(top / p))
    if not paths:
        return []
    mine = _with_options(run, paths=paths, changed_since=None)
    _, roots = _roots(mine, _excludes(mine))
    return [_root_name(mine.files, r) for r in roots]


# --- schemas -----------------------------------------------------------------------

def run_schemas_list(opts: CheckOptions, out: TextIO, err: TextIO) -> int:
    """Which source serves each kind the checked roots render."""
    try:
        run = check(opts, _silent)
    except UsageError as e:
        err.write(f"krmcheck: error: {e}\n")
        return EXIT_BROKEN
    kinds: dict[tuple[str, str], list[Any]] = {}
    for root in run.roots:
        for api_version, kind, source, where, count in root.coverage:
            entry = kinds.setdefault((api_version, kind), [source, where, 0, 0])
            entry[2] += count
            entry[3] += 1
    rows = [(f"{kind} ({api})", src or "none", where or "-", str(n), str(r))
            for (api, kind), (src, where, n, r) in kinds.items()]
    rank = {name: i for i, name in enumerate(schema_sources.ORDER + ("none",))}
    rows.sort(key=lambda row: (rank.get(row[1], 9), row[0]))
    out.write(_table(("KIND", "SOURCE", "SCHEMA", "RESOURCES", "ROOTS"), rows))
    return EXIT_OK


def _table(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return "".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n" for r in [head, *rows])


def run_schemas_pull(source: str, ref: str, name: str, out: TextIO, err: TextIO) -> int:
    """Fill the cache with a schema catalog at a pinned commit."""
    from krmcheck.schemas import catalog as schema_catalog

    try:
        pulled = schema_catalog.pull(source, ref, name or schema_catalog.default_name(source),
                                     cache.directory() / "schemas")
    except Exception as e:  # noqa: BLE001 - dulwich and its transports raise many types; the boundary
        err.write(f"krmcheck schemas pull: error: {source}: {e}\n")
        return EXIT_BROKEN
    out.write(f"pulled {plural(pulled.schemas, 'schema')} from {source} at {pulled.commit[:12]} "
              f"into {pulled.directory}\n")
    return EXIT_OK


def _silent(done: int, total: int, root: str) -> None:
    pass


def exit_code(run: RunReport) -> int:
    if run.build_failed:
        return EXIT_BROKEN
    if run.fail_on == "never":
        return EXIT_OK
    floor = SEVERITY_RANK[run.fail_on]
    if any(SEVERITY_RANK.get(f.severity, 0) >= floor for f in run.findings):
        return EXIT_FINDINGS
    return EXIT_OK


def _select(run: Run, excludes: tuple[PathPatterns, ...]) -> discover.Selection:
    opts, top, files, config = run.options, run.top, run.files, run.config

    def skip(path: Path, directory: bool) -> bool:
        return any_match(excludes, files.display(path), directory) is not None

    try:
        mode = () if opts.roots == (PLAIN_MODE,) else opts.roots
        return run.memo.get(("select", top, opts.paths, mode, opts.changed_since, config.not_applied),
                            lambda: discover.select(opts.paths, mode, opts.changed_since, top, skip,
                                                    _config_reads(config, top), config.not_applied,
                                                    lambda p: _shown(p, run.cwd)))
    except discover.NothingToCheck as e:
        raise UsageError(str(e)) from None


def _with_refused(reports: tuple[RootReport, ...], refused: Sequence[discover.Refusal],
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


def _schema_settings(run: Run, selection: discover.Selection,
                     excludes: tuple[PathPatterns, ...], scan: discover.Scan | None = None) -> SchemaSettings:
    """Where schemas come from: the CRD files of the whole repository (a
    checked overlay's CRDs often live elsewhere), then ``--schema-location``
    (relative to the current directory) and the configuration's
    ``schema-locations``, then the cache."""
    opts, config, files = run.options, run.config, run.files

    def skip(path: Path, directory: bool) -> bool:
        return any_match(excludes, files.display(path), directory) is not None

    crd_files = tuple((str(p), files.display(p)) for p in discover.find_crd_files([files.repo_root], skip, scan))
    given = opts.schema_locations  # (anchored: paths are absolute)
    chosen = given + config.schema_locations
    for location in chosen:
        from krmcheck.schemas import locations as schema_locations

        try:
            schema_locations.check_template(location)
        except schema_locations.LocationError as e:
            raise UsageError(f"--schema-location {e}") from None
    return SchemaSettings("", opts.strict, crd_files, (), chosen, str(cache.directory() / "schemas"),
                          opts.network)


def _with_crds_of_other_roots(run: Run, roots: list[Root], reports: tuple[RootReport, ...],
                              vopts: ValidatorOptions) -> tuple[RootReport, ...]:
    """Roots that lacked schemas which another root's rendered CRDs give are
    checked again with those CRDs (the repository's files and each root's own
    CRDs were used the first time)."""
    makers = {(group, kind): i for i, r in enumerate(reports) for group, kind, _ in r.crds}
    needed: dict[int, set[int]] = {}
    for i, r in enumerate(reports):
        for api_version, kind, source, _, _ in r.coverage:
            maker = makers.get((api_version.rpartition("/")[0], kind))
            if not source and maker is not None and maker != i:
                needed.setdefault(i, set()).add(maker)
    if not needed or vopts.schemas is None:
        return reports
    makers_used = sorted({m for ms in needed.values() for m in ms})
    builders = _Builders(run)
    rendered = tuple((json.dumps(r.node.to_data()), str(r.node.origin.location))
                     for m in makers_used for r in _render_root(builders, roots[m], run.config).resources
                     if crds.is_crd({"kind": r.kind, "apiVersion": r.api_version}))
    more = vopts._replace(schemas=dataclasses.replace(vopts.schemas, rendered_crds=rendered))
    out = list(reports)
    for i, report in zip(sorted(needed), _check_batch(run, [roots[i] for i in sorted(needed)], more)):
        out[i] = report
    return tuple(out)


def _config_reads(config: krmconfig.Config, top: Path) -> tuple[Path, ...]:
    """The function configurations ``.krmcheck.yaml`` reads (never plain manifests)."""
    origins = [v.function_config.origin.path for v in config.external_validators
               if v.function_config is not None]
    return tuple(top / p for p in origins if p and p != config.path)


def _excludes(run: Run) -> tuple[PathPatterns, ...]:
    """``exclude:`` of the configuration, then ``--exclude`` (relative to the
    directory the command was started in; from above the repository, a
    pattern that leads into it is taken from its top)."""
    config, opts = run.config, run.options
    found = [config.exclude] if config.exclude is not None else []
    for pattern in opts.exclude:
        why = scope.refusal(pattern)
        if why is not None:
            raise UsageError(f"--exclude {pattern!r}: {why}")
    if opts.exclude:
        here = run.here()
        if here.startswith(".."):
            into = Path(os.path.relpath(run.top, run.cwd)).as_posix() + "/"
            patterns = tuple(_into(p, into) for p in opts.exclude)
            found.append(PathPatterns("", patterns, "--exclude"))
        else:
            found.append(PathPatterns(here, opts.exclude, "--exclude"))
    return tuple(found)


def _into(pattern: str, into: str) -> str:
    """A gitignore-style pattern written from above the repository, as one
    from its top (a pattern without a directory matches at any depth)."""
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    bare = body.lstrip("/")
    if bare.startswith(into):
        body = "/" + bare[len(into):]
    return ("!" if negated else "") + body


def _overrides(config: krmconfig.Config) -> tuple[tuple[PathPatterns, dict[str, str]], ...]:
    return tuple((scope, {v: ("off" if not s.enabled else s.severity or "") for v, s in settings.items()
                          if not s.enabled or s.severity})
                 for scope, settings in config.overrides)


def _readers(roots: Sequence[Root], infos: dict[Path, discover.KustomizationInfo],
             files: Files) -> dict[str, tuple[str, ...]]:
    """Each file the roots read (repo-relative), with the roots that read it."""
    readers: dict[str, list[str]] = {}
    for root in roots:
        name = _root_name(files, root)
        reads = _controller_reads(root, files) if isinstance(root, ControllerRoot) else discover.reads(root, infos)
        for path in reads:
            if os.path.isfile(path):
                readers.setdefault(files.display(path), []).append(name)
    return {path: tuple(names) for path, names in readers.items()}


def _comments(readers: dict[str, tuple[str, ...]], top: Path) -> Iterator[suppression.Ignore]:
    for path in sorted(readers):
        try:
            text = read_text_bounded(top / path)
        except (OSError, ValueError):
            continue  # the build reports a file it cannot read
        yield from suppression.comments_in(path, text)


def _baseline(run: Run) -> kbaseline.Baseline | None:
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


def _prepare_outputs(opts: CheckOptions, inputs: set[str], files: Files) -> None:
    """Report files: parent directories made, and each one writable and not
    an input of the run, before any root is built."""
    for flag, target in (("--junit", opts.junit), ("--sarif", opts.sarif), ("--json", opts.json),
                         ("--gitlab", opts.gitlab), ("--write-baseline", opts.write_baseline)):
        if not target:
            continue
        path = Path(target)
        target = _shown(path, opts.cwd or path.parent)  # as it was given
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


def _check_validator_options(vopts: ValidatorOptions) -> None:
    try:
        VALIDATORS["schema"].validate([], vopts)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _load_config(opts: CheckOptions, top: Path) -> krmconfig.Config:
    """``.krmcheck.yaml`` above the checked paths; its problems are usage errors."""
    found = krmconfig.find(opts.paths, top)
    if found is None:
        return _with_flags(krmconfig.EMPTY, opts)
    try:
        config = krmconfig.load(found, Files(top).display(found))
    except krmconfig.ConfigError as e:
        raise UsageError(str(e).replace("\n", "\nkrmcheck: error: ")) from None
    return _with_flags(config, opts)


def _with_flags(config: krmconfig.Config, opts: CheckOptions) -> krmconfig.Config:
    """The configuration with the flags that win over it folded in."""
    return dataclasses.replace(config, require_network=True) if opts.require_network else config


def _check_all(run: Run, roots: list[Root], vopts: ValidatorOptions,
               progress: Progress) -> tuple[RootReport, ...]:
    """Every root's report in ``roots`` order, whatever ran where: the render
    cache's reports first, then the rest; with ``--jobs`` > 1 (by default,
    one per CPU when the roots left form more than one group), batches of
    roots sharing bases go to worker processes."""
    opts, files = run.options, run.files
    renders = render_cache.Renders.of(opts, vopts, run.config, run.top)
    by_root: dict[Root, RootReport] = {}
    for root in roots:
        found = renders.lookup(root, _root_name(files, root), opts.diff)
        if found is not None:
            by_root[root] = found
            progress(len(by_root), len(roots), found.root)
    todo = [r for r in roots if r not in by_root]
    jobs = _auto_jobs(todo) if opts.jobs == AUTO_JOBS else opts.jobs
    batches = _worker_batches(todo, jobs) if jobs > 1 else [todo]
    if len(batches) <= 1:
        done = len(by_root)

        def more(n: int, total: int, root: str) -> None:
            progress(done + n, len(roots), root)

        by_root.update(zip(todo, _check_batch(run, todo, vopts, more, len(todo), looked_up=True)))
        return tuple(by_root[r] for r in roots)
    # This process checks the first batch itself, and forks the workers for
    # the others only once its first root is done: they inherit every module,
    # schema and table that root loaded instead of loading them again each.
    first, rest = batches[0], batches[1:]
    futures: dict[Future[tuple[RootReport, ...]], list[Root]] = {}
    with contextlib.ExitStack() as stack:
        def fork_workers() -> None:
            pool = stack.enter_context(ProcessPoolExecutor(max_workers=len(rest)))
            # a worker gets the run without its memo (nothing a worker needs)
            alone = dataclasses.replace(run, memo=run_module.Memo())
            futures.update({pool.submit(_check_batch_deep, alone, b, vopts): b for b in rest})

        def mine(n: int, total: int, root: str) -> None:
            by_root[first[n - 1]] = reports[n - 1]
            progress(len(by_root), len(roots), root)

        reports: list[RootReport] = []
        _check_batch(run, first, vopts, mine, len(first), looked_up=True,
                     after_first=fork_workers, reports=reports)
        for future in as_completed(futures):
            for root, report in zip(futures[future], future.result()):
                by_root[root] = report
                progress(len(by_root), len(roots), report.root)
    return tuple(by_root[r] for r in roots)


AUTO_JOBS = 0  # --jobs not given: one worker per CPU when there is more than one group of roots


def _auto_jobs(roots: list[Root]) -> int:
    cpus = os.cpu_count() or 1
    if cpus < 2 or len(roots) < 2:
        return 1
    return cpus if len(kshard.groups(list(dict.fromkeys(_key(r) for r in roots)))) > 1 else 1


def _check_batch_deep(run: Run, roots: list[Root], vopts: ValidatorOptions) -> tuple[RootReport, ...]:
    """``_check_batch`` in a worker process, with room for deep inputs (the
    parent looked the roots up in the render cache already)."""
    return stack.deep(lambda: _check_batch(run, roots, vopts, looked_up=True))


def _check_batch(run: Run, roots: list[Root], vopts: ValidatorOptions, progress: Progress = _silent,
                 total: int = 0, looked_up: bool = False, after_first: Callable[[], None] | None = None,
                 reports: list[RootReport] | None = None) -> tuple[RootReport, ...]:
    """Each root's report, in order, into ``reports`` as they are made;
    ``after_first`` is called once the first is."""
    # One Builder per batch (per process) and load restrictor: it caches
    # rendered directories and holds per-build state, so it is never shared
    # between workers.
    opts, files, config = run.options, run.files, run.config
    builders = _Builders(run)
    renders = render_cache.Renders.of(opts, vopts, config, run.top)
    reports = [] if reports is None else reports
    for root in roots:
        builder = builders.for_root(root)
        reports.append(renders.report(root, _root_name(files, root), opts.diff,
                                      lambda: _check_root(builder, files, root, vopts, config, opts.diff),
                                      looked_up))
        progress(len(reports), total, reports[-1].root)
        if after_first is not None and len(reports) == 1:
            after_first()
    return tuple(reports)


def _builder(run: Run, restrictor: str = "") -> Builder:
    from krmcheck.kustomize.target import BuildOptions, Builder

    opts, files, config = run.options, run.files, run.config
    return Builder(files, BuildOptions(restrictor or opts.load_restrictor or ROOT_ONLY, opts.network,
                                       opts.enable_alpha_plugins,
                                       opts.enable_helm, opts.helm_command, functions=opts.functions,
                                       plugins=_plugin_loader(files, opts.trusted_catalogs,
                                                              opts.network, config)))


def _check_root(builder: Builder, files: Files, root: Root, vopts: ValidatorOptions,
                config: krmconfig.Config = krmconfig.EMPTY, diff: kdiff.Context | None = None) -> RootReport:
    """A root's report with every Secret value the build read or made masked
    (redact.py): the one place where a root's messages leave the build and
    validate steps, whichever process ran them and however the build ended,
    before anything fingerprints, groups, baselines or reports them. The
    rendered resources tell which values came from a Secret's data."""
    resources: list[Resource] = []
    report = _root_report(builder, files, root, vopts, config, diff, resources)
    secrets = redact.Secrets(frozenset(builder.secrets), frozenset(builder.secret_places),
                             root.secret_values if isinstance(root, ControllerRoot) else frozenset())
    return redact.root_report(report, secrets, resources)


def _root_report(builder: Builder, files: Files, root: Root, vopts: ValidatorOptions,
                 config: krmconfig.Config, diff: kdiff.Context | None = None,
                 rendered_into: list[Resource] | None = None) -> RootReport:
    name = _root_name(files, root)
    try:
        rendered = _render_root(builder, root, config)
    except NeedsNetwork as e:
        if config.require_network:
            return RootReport(name, (), (_build_finding(e, name),) + _deprecations(builder, name, config),
                              build_failed=True)
        return RootReport(name, (), _offline_findings(e, name, config) + _deprecations(builder, name, config),
                          needs_network=True)
    except BuildError as e:
        return RootReport(name, (), (_build_finding(e, name),) + _deprecations(builder, name, config),
                          build_failed=True)
    resources = rendered.resources
    if rendered_into is not None:
        rendered_into.extend(resources)
    # Results the build's KRM functions reported come first, then the validators'.
    results = [r for r, _ in builder.function_results] + _validate(resources, vopts, config)
    outputs = _rendered(resources, builder, diff) if diff is not None else ()
    if diff is not None and diff.base is not None:
        from krmcheck import diff as kdiff

        results += kdiff.recreate_results(diff.base_of(name), [(_ref(r), source_id(r), r.node.to_data(),
                                                                r.node.origin.path)
                                                               for r in resources], diff.secret_key)
    try:  # external validators come after the built-ins, as in the README
        results += _external(files, root, resources, config)
        broken: tuple[Finding, ...] = ()
    except BuildError as e:
        broken = (_build_finding(e, name),)
    results = [r for r in results if config.enabled(r.validator)]
    locator = Locator(resources, name, _kustomization_file(files, root))
    located = [locator.locate(r) for r in results] + list(broken + _deprecations(builder, name, config))
    located = gitops.findings(rendered, name, config.enabled) + located
    kept, silenced, annotations = suppression.by_annotation(located, resources, locator.find)
    # Outside controller roots nothing substitutes a template's ${...}: a
    # value holding one is not judged (``placeholders: templates``, the
    # default, or ``skip``); in a controller root, a value wholly ${...} whose
    # variable the repository cannot show is not judged either.
    holding = config.placeholders == "skip" or (config.placeholders == "templates"
                                                and not isinstance(root, ControllerRoot))
    if holding or rendered.placeholders:
        kept, exempt = gitops_placeholders.split(kept, locator, holding, rendered.unknown)
        silenced = list(silenced) + exempt
    return RootReport(name, tuple(_ref(r) for r in resources), tuple(kept),
                      build_failed=bool(broken), suppressed=tuple(silenced),
                      ignore_annotations=tuple(annotations),
                      coverage=_coverage(resources, vopts, config),
                      crds=_rendered_crds(resources),
                      places=_places(resources, locator) if config.clusters else (),
                      rendered=outputs)


def _rendered(resources: list[Resource], builder: Builder,
              diff: kdiff.Context) -> tuple[tuple[ResourceRef, str, str, str], ...]:
    """Each resource's YAML for the diff: a Secret's values as keyed digests,
    and any Secret value the build read masked wherever else it appears."""
    from krmcheck import diff as kdiff

    mask = redact.masker(frozenset(builder.secrets))
    out = []
    for r in resources:
        data = r.node.to_data()
        hidden = kdiff.hide_secret_values(data, diff.secret_key) if isinstance(data, dict) else data
        text = emit_all([r.node]) if hidden is data else yaml.safe_dump(hidden, sort_keys=False)
        out.append((_ref(r), source_id(r), mask.text(text), r.node.origin.path))
    return tuple(out)


def _root_name(files: Files, root: Root) -> str:
    return root.name if isinstance(root, ControllerRoot) else files.display(root)


def _render_root(builder: "Builder | _Builders", root: Root,
                 config: krmconfig.Config = krmconfig.EMPTY) -> gitops.Rendered:
    """A root's resources as what is applied: a controller root through its
    controller; a kustomization or manifest as kubectl would render it, with
    the configuration's ``substitute:`` variables for its templates."""
    if isinstance(builder, _Builders):
        builder = builder.for_root(root)
    if isinstance(root, ControllerRoot):
        from krmcheck.gitops.render import render as gitops_render

        try:
            return gitops_render(builder, root)
        except BuildError:
            raise
        except RecursionError:
            raise BuildError(f"{root.name}: the kustomizations nest too deeply") from None
        except Exception as e:  # noqa: BLE001 - the named boundary, as in _build
            raise BuildError(f"internal error in krmcheck while rendering {root.name}: "
                             f"{type(e).__name__}: {e} (please report this)") from None
    resources = _build(builder, root)
    return gitops.templates(resources, config.substitute)


class _Builders:
    """One Builder per load restrictor (Flux builds with LoadRestrictionsNone)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.opts, self.files, self.config = run.options, run.files, run.config
        self.made: dict[str, Builder] = {}

    def for_root(self, root: Root) -> Builder:
        """A controller root's builder has the controller's load restrictor; a
        kustomization's has --load-restrictor when given, else what
        .krmcheck.yaml sets for its directory, else RootOnly."""
        if isinstance(root, ControllerRoot):
            return self.get(root.restrictor)
        return self.get(self.opts.load_restrictor or self.config.restrictor_for(self.files.display(root)) or "")

    def get(self, restrictor: str) -> Builder:
        key = restrictor or self.opts.load_restrictor or ROOT_ONLY
        if key not in self.made:
            self.made[key] = _builder(self.run, key)
        return self.made[key]


# --- GitOps controller roots -------------------------------------------------------

PLAIN_MODE = "kustomize"  # --roots kustomize: kustomizations and manifests, no controller objects


def _with_controller_roots(run: Run, selection: discover.Selection,
                           excludes: tuple[PathPatterns, ...], notes: list[Note] | None = None) -> list[Root]:
    """The selected roots with the controller objects' roots in place of
    the plain roots they read (``selection`` is of the whole repository)."""
    opts, files, config = run.options, run.files, run.config
    whole = selection
    # Only a plain root whose files name a controller's API group can hold
    # controller objects; without one, nothing is rendered and git is not read.
    candidates = run.memo.get(("mentions", files.repo_root, whole.roots),
                              lambda: [r for r in whole.roots if mentions_controllers(r, whole.infos)])
    found_roots: tuple[ControllerRoot, ...] = ()
    replaced: frozenset[Path] = frozenset()
    if candidates:
        from krmcheck.gitops import controllers as gitops_controllers
        from krmcheck.gitops.source import repository_urls

        builders = _Builders(run)
        urls = repository_urls(files.repo_root, config.repo_urls + opts.repo_urls)
        found = run.memo.get(("controllers", files.repo_root, whole.roots, urls),
                             lambda: gitops_controllers.find(candidates, whole.infos, builders.get, files, urls,
                                                             config.source_root or files.repo_root,
                                                             builders.for_root, config.cluster_objects))
        found_roots, replaced = found.roots, found.replaced
        if notes is not None:
            notes += [Note(message, location) for message, location in found.notes]
    plain: list[Root] = [r for r in selection.roots
                         if opts.roots == ("all",) or r not in replaced]
    controller_roots = [dataclasses.replace(r, strict=True) if config.strict_substitution else r
                        for r in found_roots]
    return plain + controller_roots


def _controller_reads(root: ControllerRoot, files: Files) -> set[Path]:
    """What a controller root depends on: the files its rendering reads, the
    file of its object and the files defining its variables."""
    written = {root.origin.path} | {v.origin.path for _, v in root.variables or ()
                                    if isinstance(v, gitops.Variable)}
    return set(root.reads) | {(files.repo_root / p).resolve() for p in written if p}


def _changed_files(opts: CheckOptions, top: Path) -> set[Path]:
    changed = {p.resolve() for p in opts.paths if not os.path.isdir(p)}
    if opts.changed_since:
        try:
            changed |= {p.resolve() for p in discover.changed_paths(opts.changed_since, top)}
        except discover.NothingToCheck as e:
            raise UsageError(str(e)) from None
    return changed


def _key(root: Root) -> Path:
    return root.directory if isinstance(root, ControllerRoot) else root


def _shard_select(roots: list[Root], shard: kshard.Shard) -> list[Root]:
    chosen = set(kshard.select(list(dict.fromkeys(_key(r) for r in roots)), shard))
    return [r for r in roots if _key(r) in chosen]


def _worker_batches(roots: list[Root], jobs: int) -> list[list[Root]]:
    batches = kshard.worker_batches(list(dict.fromkeys(_key(r) for r in roots)), jobs)
    return [[r for r in roots if _key(r) in set(b)] for b in batches]


def _places(resources: list[Resource], locator: Locator) -> tuple[tuple[ResourceRef, Location, str], ...]:
    """Each object with the place its name is written, for the duplicate check
    (an object the API server names never collides with another)."""
    out = []
    for r in resources:
        if not r.name:
            continue
        found = locator.locate(Result(message="", resource_ref=_ref(r), field_path="metadata.name"))
        out.append((found.result.resource_ref or _ref(r), found.location, found.source_id))
    return tuple(out)


def _coverage(resources: list[Resource], vopts: ValidatorOptions,
              config: krmconfig.Config) -> tuple[tuple[str, str, str, str, int], ...]:
    """Per kind: (apiVersion, kind, schema source, where, resources), source "" for none."""
    if not config.enabled(schema.id):
        return ()
    items = [r.node for r in resources]
    found = schema.coverage(items, config.options_for(schema.id, vopts))
    counts = collections.Counter((r.api_version, r.kind) for r in resources)
    return tuple((a, k, src, where, counts[(a, k)]) for (a, k), (src, where) in found.items())


def _rendered_crds(resources: list[Resource]) -> tuple[tuple[str, str, str], ...]:
    """(group, kind, where) of each CRD a root renders, for roots that use its kind."""
    out = []
    for r in resources:
        if crds.is_crd({"kind": r.kind, "apiVersion": r.api_version}):
            spec = r.node.mapping("spec")
            names = spec.mapping("names") if spec is not None else None
            group, kind = (spec.value("group") if spec else None), (names.value("kind") if names else None)
            if isinstance(group, str) and isinstance(kind, str):
                out.append((group, kind, str(r.node.origin.location)))
    return tuple(out)


def _external(files: Files, root: Root, resources: list[Resource],
              config: krmconfig.Config) -> list[Result]:
    """The Results of ``.krmcheck.yaml``'s external validators, then those of
    the root's Kptfile (with ``kptfile-validators: true``)."""
    declared = config.external_validators
    if isinstance(root, ControllerRoot):
        root = root.directory
    directory = root.parent if os.path.isfile(root) else root  # a plain manifest's directory
    if config.kptfile_validators and os.path.isdir(root):
        from krmcheck import kptfile

        declared += kptfile.validators(root, files.display(root))
    if not declared:
        return []
    from krmcheck.fn import external

    where = external.Environment(directory, dict(os.environ))
    return [r for v in declared for r in external.validate(v, resources, where)]


def _deprecations(builder: Builder, root: str, config: krmconfig.Config) -> tuple[Finding, ...]:
    """kubectl's deprecation warnings as info findings, once per field of a file
    (kubectl repeats them each time a base is included)."""
    if not config.enabled(deprecation.VALIDATOR):
        return ()
    seen = {(w.field, w.origin.location): w for w in builder.warnings}
    tags = (("validator", deprecation.VALIDATOR),)
    return tuple(Finding(Result(message=w.message, severity="info", tags=tags), root, loc)
                 for (_, loc), w in seen.items())


def _kustomization_file(files: Files, root: Root) -> str:
    if isinstance(root, ControllerRoot):
        return root.origin.path  # the controller object's file
    if os.path.isfile(root):
        return files.display(root)  # a plain manifest
    found = find_file(root)
    return files.display(found) if found else files.display(root / "kustomization.yaml")


def _validate(resources: list[Resource], vopts: ValidatorOptions,
              config: krmconfig.Config = krmconfig.EMPTY) -> list[Result]:
    items = [r.node for r in resources]
    results: list[Result] = []
    for vid, validator in VALIDATORS.items():
        if config.enabled(vid):
            results.extend(validator.validate(items, config.options_for(vid, vopts)))
    return results


def _build_finding(e: BuildError, root: str) -> Finding:
    if isinstance(e, OutsideRoot):
        e.allow_also("set `load-restrictor: LoadRestrictionsNone` for it in .krmcheck.yaml")
    loc = e.location if e.location and e.location.path else Location(root, 1, 1)
    message = str(e)
    prefix = f"{e.location}: " if e.location else ""
    if prefix and message.startswith(prefix):
        message = message[len(prefix):]
    result = Result(message=message, severity="error", tags=(("validator", "build"),))
    return Finding(result, root, loc)


def _offline_findings(e: NeedsNetwork, root: str, config: krmconfig.Config) -> tuple[Finding, ...]:
    """A root that needs the network, which is off, is not checked: one
    warning at the entry that needs it, worded alike in every root that
    reaches the entry, so that it is one defect naming them all."""
    if not config.enabled(NOT_CHECKED):
        return ()
    loc = e.location if e.location and e.location.path else Location(root, 1, 1)
    message = (f"not checked: {e.what} '{e.url}' needs the network, which is off by default; "
               f"pass --network to fetch it (--require-network makes this a build error)")
    return (Finding(Result(message=message, severity="warning", tags=(("validator", NOT_CHECKED),)), root, loc),)


def _ref(r: Resource) -> ResourceRef:
    return ResourceRef(r.api_version, r.kind, r.name, r.namespace)


def _report(run: RunReport, opts: CheckOptions, out: TextIO, env: dict[str, str]) -> None:
    REPORTERS["text"].write(run, out)
    github = opts.github == "on" or (opts.github == "auto" and env.get("GITHUB_ACTIONS") == "true")
    if github:
        REPORTERS["github"].write(run, out)
    for fmt, target in (("junit", opts.junit), ("sarif", opts.sarif), ("json", opts.json),
                        ("gitlab", opts.gitlab)):
        if target:
            buffer = io.StringIO()
            REPORTERS[fmt].write(run, buffer)
            _write_report(target, buffer.getvalue())


def _write_report(target: str, text: str) -> None:
    """Write a report file whole (its directory was made, and the path
    checked, before the run)."""
    with open(target, "w", encoding="utf-8") as fh:
        fh.write(text)
