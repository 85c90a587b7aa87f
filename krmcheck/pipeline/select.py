"""Select roots: which kustomizations, manifests and GitOps controller roots a run checks,
and, for changed files, every root whose result can change when they change."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Sequence

import yaml

from krmcheck.pipeline.run import CheckOptions, Run, UsageError
from krmcheck import config as krmconfig
from krmcheck import discover, scope
from krmcheck import gitops
from krmcheck.pipeline import render_cache
from krmcheck import shard as kshard
from krmcheck.gitops.markers import mentions_controllers
from krmcheck.gitops.root import ControllerRoot, Root
from krmcheck.resource.files import Files, read_text_bounded
from krmcheck.results import Note
from krmcheck.schemas import crds
from krmcheck.scope import PathPatterns, any_match
from krmcheck.tree.origin import Location

from krmcheck.pipeline.render import Builders, lifted
from krmcheck.pipeline.run import shown, whole_repository, with_options

def set_aside_notes(selection: discover.Selection, files: Files) -> tuple[Note, ...]:
    """One note per reason for the files discovery set aside as not applied,
    at the first of them (the JSON report lists every one)."""
    from krmcheck import applied

    return tuple(Note(line, Location(files.display(listed[0].path), 1, 1))
                 for _, listed, line in applied.summary(selection.set_aside))


def to_check(run: Run, excludes: tuple[PathPatterns, ...], notes: list[Note] | None = None,
             refused: list[discover.Refusal] | None = None) -> tuple[discover.Selection, list[Root]]:
    """The selection of kustomizations and manifests, and the roots to check;
    into ``notes`` and ``refused``, what finding the controller roots said
    (why objects are not roots; files the scan for their objects did not read)."""
    opts, files = run.options, run.files
    if opts.only_roots is not None:
        try:
            selection = selection_of(whole_repository(run), excludes)
        except UsageError:  # nothing at all on this side
            return discover.Selection((), {}, False), []
    else:
        selection = selection_of(run, excludes)
    roots: list[Root] = list(selection.roots)
    if selection.changed:
        roots = affected(run, excludes, notes, refused)
    elif run.config.gitops and opts.roots in ((), ("all",)):
        roots = with_controller_roots(run, selection, excludes, notes, refused)
    if opts.only_roots is not None:
        roots = [r for r in roots if root_name(files, r) in opts.only_roots]
    if opts.shard is not None:
        roots = shard_select(roots, opts.shard)
    return selection, roots


def affected(run: Run, excludes: tuple[PathPatterns, ...], notes: list[Note] | None = None,
             refused: list[discover.Refusal] | None = None) -> list[Root]:
    """The roots whose result can change when the changed files change (as
    pre-commit passes them, or since ``--changed-since``): of every root of
    the repository, those that read one of them, by the dependency graph
    (kustomizations, controller objects and what they add, their sources and
    variables) or by what the read journal saw the root's last check read;
    every root when the configuration or a local schema location changed;
    the roots whose files name a kind a changed CRD defines; and the plain
    manifests beside or below a changed kustomization (which it may have
    stopped reading)."""
    whole_run = whole_repository(run)
    try:
        whole = selection_of(whole_run, excludes)
    except UsageError:
        return []
    candidates: list[Root] = list(whole.roots)
    if run.config.gitops and run.options.roots in ((), ("all",)):
        candidates = with_controller_roots(whole_run, whole, excludes, notes, refused)
    changed = changed_files(run.options, run.top)
    if changes_everything(run, changed):
        return candidates
    kinds = crd_kinds(changed)
    # a changed kustomization may no longer read files beside or below it,
    # which become plain manifests of their own
    edited = [p.parent for p in changed if p.name in discover.FILENAMES]
    files = run.files
    naming = KindNames(kinds)
    out = []
    for root in candidates:
        reads = controller_reads(root, files) if isinstance(root, ControllerRoot) else discover.reads(root, whole.infos)
        journal = {Path(p) for p in render_cache.recorded_reads(run.top, root_name(files, root))}
        if (reads & changed or journal & changed or naming.any_of(reads | journal)
                or (isinstance(root, Path) and os.path.isfile(root) and any(d in root.parents for d in edited))):
            out.append(root)
    return out


def changes_everything(run: Run, changed: set[Path]) -> bool:
    """Whether a changed file is the configuration or in a local schema location."""
    if run.config.path and (run.top / run.config.path).resolve() in changed:
        return True
    places = [Path(loc).resolve() for loc in run.options.schema_locations + run.config.schema_locations
              if "://" not in loc and "{{" not in loc]
    return any(p == place or place in p.parents for p in changed for place in places)


def crd_kinds(changed: set[Path]) -> set[str]:
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


class KindNames:
    """Which files name one of ``kinds`` (``kind: Widget``), each file read
    once however many roots read it."""

    def __init__(self, kinds: set[str]) -> None:
        self.pattern = (re.compile(r"kind:[ \t]*[\"']?(" + "|".join(sorted(map(re.escape, kinds))) + r")\b")
                        if kinds else None)
        self.seen: dict[Path, bool] = {}

    def any_of(self, reads: set[Path]) -> bool:
        return self.pattern is not None and any(self._names(p) for p in reads)

    def _names(self, path: Path) -> bool:
        if path not in self.seen:
            try:
                self.seen[path] = (self.pattern is not None and os.path.isfile(path)
                                   and self.pattern.search(read_text_bounded(path)) is not None)
            except OSError:
                self.seen[path] = False
        return self.seen[path]


def root_names(run: Run, changed: Sequence[str]) -> list[str]:
    """The roots of ``run``'s repository that read one of the ``changed``
    files (repo-relative) that exist there."""
    top = run.top
    paths = tuple(top / p for p in changed if os.path.lexists(top / p))
    if not paths:
        return []
    mine = with_options(run, paths=paths, changed_since=None)
    _, roots = to_check(mine, excludes_of(mine))
    return [root_name(mine.files, r) for r in roots]


def selection_of(run: Run, excludes: tuple[PathPatterns, ...]) -> discover.Selection:
    opts, top, files, config = run.options, run.top, run.files, run.config

    def skip(path: Path, directory: bool) -> bool:
        return any_match(excludes, files.display(path), directory) is not None

    try:
        mode = () if opts.roots == (PLAIN_MODE,) else opts.roots
        return run.memo.get(("select", top, opts.paths, mode, opts.changed_since, config.not_applied),
                            lambda: discover.select(opts.paths, mode, opts.changed_since, top, skip,
                                                    config_reads(config, top), config.not_applied,
                                                    lambda p: shown(p, run.cwd)))
    except discover.NothingToCheck as e:
        raise UsageError(str(e)) from None


def config_reads(config: krmconfig.Config, top: Path) -> tuple[Path, ...]:
    """The function configurations ``.krmcheck.yaml`` reads (never plain manifests)."""
    origins = [v.function_config.origin.path for v in config.external_validators
               if v.function_config is not None]
    return tuple(top / p for p in origins if p and p != config.path)


def excludes_of(run: Run) -> tuple[PathPatterns, ...]:
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


def readers_of(roots: Sequence[Root], infos: dict[Path, discover.KustomizationInfo],
             files: Files) -> dict[str, tuple[str, ...]]:
    """Each file the roots read (repo-relative), with the roots that read it."""
    readers: dict[str, list[str]] = {}
    for root in roots:
        name = root_name(files, root)
        reads = controller_reads(root, files) if isinstance(root, ControllerRoot) else discover.reads(root, infos)
        for path in reads:
            if os.path.isfile(path):
                readers.setdefault(files.display(path), []).append(name)
    return {path: tuple(names) for path, names in readers.items()}


def root_name(files: Files, root: Root) -> str:
    return root.name if isinstance(root, ControllerRoot) else files.display(root)


PLAIN_MODE = "kustomize"  # --roots kustomize: kustomizations and manifests, no controller objects


def with_controller_roots(run: Run, selection: discover.Selection, excludes: tuple[PathPatterns, ...],
                          notes: list[Note] | None = None,
                          refused: list[discover.Refusal] | None = None) -> list[Root]:
    """The selected roots with the controller objects' roots in place of
    the plain roots they read (``selection`` is of the whole repository)."""
    opts, files, config = run.options, run.files, run.config
    whole = selection
    # Only a plain root whose files name a controller's API group can hold
    # controller objects; without one, nothing is rendered and git is not read.
    # (a test's input or a documentation fragment shows controller objects;
    # the repository does not apply them)
    shown_only = {t.path for t in whole.test_inputs}
    candidates = run.memo.get(("mentions", files.repo_root, whole.roots),
                              lambda: [r for r in whole.roots
                                       if r not in shown_only and mentions_controllers(r, whole.infos)])
    found_roots: tuple[ControllerRoot, ...] = ()
    replaced: frozenset[Path] = frozenset()
    if candidates:
        from krmcheck.gitops import argocd
        from krmcheck.gitops import controllers as gitops_controllers
        from krmcheck.gitops.source import repository_urls

        builders = Builders(run)
        urls = repository_urls(files.repo_root, config.repo_urls + opts.repo_urls)
        found = run.memo.get(("controllers", files.repo_root, whole.roots, urls),
                             lambda: gitops_controllers.find(candidates, whole.infos, builders.get, files, urls,
                                                             config.source_root or files.repo_root,
                                                             builders.for_root, config.cluster_objects,
                                                             lifted))
        found_roots, replaced = found.roots, found.replaced
        excluded, why = run.memo.get(("argocd excluded", files.repo_root, whole.roots, urls),
                                     lambda: argocd.excluded_roots(found.roots, whole.roots, whole.infos,
                                                                   files.display))
        replaced |= excluded
        if notes is not None:
            notes += [Note(message, location) for message, location in found.notes]
            if why is not None:
                notes.append(Note(why[0], Location(why[1].path, why[1].line, why[1].col)))
        if refused is not None:
            refused += found.refused
    plain: list[Root] = [r for r in selection.roots
                         if opts.roots == ("all",) or r not in replaced]
    controller_roots = [dataclasses.replace(r, strict=True) if config.strict_substitution else r
                        for r in found_roots]
    return plain + controller_roots


def controller_reads(root: ControllerRoot, files: Files) -> set[Path]:
    """What a controller root depends on: the files its rendering reads, the
    file of its object and the files defining its variables."""
    written = {root.origin.path} | {v.origin.path for _, v in root.variables or ()
                                    if isinstance(v, gitops.Variable)}
    return set(root.reads) | {(files.repo_root / p).resolve() for p in written if p}


def changed_files(opts: CheckOptions, top: Path) -> set[Path]:
    changed = {p.resolve() for p in opts.paths if not os.path.isdir(p)}
    if opts.changed_since:
        try:
            changed |= {p.resolve() for p in discover.changed_paths(opts.changed_since, top)}
        except discover.NothingToCheck as e:
            raise UsageError(str(e)) from None
    return changed


def root_key(root: Root) -> Path:
    return root.directory if isinstance(root, ControllerRoot) else root


def shard_select(roots: list[Root], shard: kshard.Shard) -> list[Root]:
    chosen = set(kshard.select(list(dict.fromkeys(root_key(r) for r in roots)), shard))
    return [r for r in roots if root_key(r) in chosen]
