"""The pull-request view: a caller of the pipeline that checks the roots a change can
affect at REF and in the work tree (two runs sharing a memo) and compares them."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path


from krmcheck.pipeline.run import CheckOptions, Run, UsageError
from krmcheck import cache
from krmcheck import discover
from krmcheck.reporters import plural
from krmcheck.results import Note, RunReport

from krmcheck.pipeline.check import check_run, seen_secrets, with_seen_secrets
from krmcheck.pipeline.run import Progress, load_config, start, with_options
from krmcheck.pipeline.select import root_names

def against_revision(opts: CheckOptions, progress: Progress) -> RunReport:
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
    try:
        base_top = kdiff.base_tree(top, tree, cache.directory() / "trees")
    except git.GitError as e:
        raise UsageError(f"--diff-against {ref}: {e}") from None
    key = kdiff.secret_key(cache.directory())

    def on_base(p: Path) -> Path:
        mapped = base_top / os.path.relpath(p, top)
        return mapped if os.path.exists(mapped) else base_top

    base_opts = dataclasses.replace(run.options, junit=None, sarif=None, json=None, gitlab=None,
                                    markdown=None,
                                    write_baseline=None, paths=tuple(on_base(p) for p in run.options.paths),
                                    cwd=on_base(run.cwd),
                                    repo_urls=opts.repo_urls + (git.origin_url(top),))
    base_run = Run(base_opts, base_top, load_config(base_opts, base_top), run.memo)
    names = set(root_names(run, changed)) | set(root_names(base_run, changed))
    base = check_run(with_options(base_run, only_roots=frozenset(names), diff=kdiff.Context(key)), progress)
    rendered = tuple((r.root, tuple(kdiff.Rendered(*x) for x in r.rendered)) for r in base.roots)
    work = check_run(with_options(run, only_roots=frozenset(names), diff=kdiff.Context(key, rendered)),
                     progress)
    # the base side was masked before the work tree's Secret values were seen
    base = with_seen_secrets(base, seen_secrets(run))
    compared = kdiff.against(base, work, ref)
    from krmcheck import impact

    diffs, images = impact.review(base.roots, work.roots, compared.diff, ref)
    compared = dataclasses.replace(compared, diff=diffs, images=images,
                                   fail_on_flags=tuple(opts.fail_on_flags))
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
