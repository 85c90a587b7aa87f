"""Every root's report, from the render cache or checked here, in worker processes
with --jobs (roots sharing bases stay in one batch)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any


from krmcheck.pipeline.run import Memo, Run
from krmcheck import stack
from krmcheck.pipeline import render_cache
from krmcheck import shard as kshard
from krmcheck.gitops.root import Root
from krmcheck.results import RootReport
from krmcheck.validators import ValidatorOptions

if TYPE_CHECKING:
    # What only some runs use is imported where it is used: a plain check of
    # kustomizations loads no git, no function runtime, no controller
    # rendering, no baseline, diff or merge code, and no worker pool unless
    # it starts workers (the render cache's hits build nothing at all).
    from concurrent.futures import Executor, Future


from krmcheck.pipeline.render import shared_builders
from krmcheck.pipeline.root import check_root
from krmcheck.pipeline.run import Progress, silent
from krmcheck.pipeline.select import root_key, root_name

def ProcessPoolExecutor(*args: Any, **kwargs: Any) -> Executor:  # noqa: N802 - stands for the class
    """concurrent.futures.ProcessPoolExecutor(*args, **kwargs)."""
    from concurrent.futures import ProcessPoolExecutor as Pool

    return Pool(*args, **kwargs)


def as_completed(futures: Iterable[Future[Any]]) -> Iterator[Future[Any]]:
    """concurrent.futures.as_completed(futures)."""
    from concurrent.futures import as_completed as each

    return each(futures)


def check_all(run: Run, roots: list[Root], vopts: ValidatorOptions,
               progress: Progress) -> tuple[RootReport, ...]:
    """Every root's report in ``roots`` order, whatever ran where: the render
    cache's reports first, then the rest; with ``--jobs`` > 1 (by default,
    one per CPU when the roots left form more than one group), batches of
    roots sharing bases go to worker processes."""
    opts, files = run.options, run.files
    renders = render_cache.Renders.of(opts, vopts, run.config, run.top)
    by_root: dict[Root, RootReport] = {}
    for root in roots:
        found = renders.lookup(root, root_name(files, root), opts.diff)
        if found is not None:
            by_root[root] = found
            progress(len(by_root), len(roots), found.root)
    todo = [r for r in roots if r not in by_root]
    jobs = auto_jobs(todo) if opts.jobs == AUTO_JOBS else opts.jobs
    batches = worker_batches(todo, jobs) if jobs > 1 else [todo]
    if len(batches) <= 1:
        done = len(by_root)

        def more(n: int, total: int, root: str) -> None:
            progress(done + n, len(roots), root)

        by_root.update(zip(todo, check_batch(run, todo, vopts, more, len(todo), looked_up=True)))
        return with_secrets(run, roots, by_root, vopts)
    # This process checks the first batch itself, and forks the workers for
    # the others only once its first root is done: they inherit every module,
    # schema and table that root loaded instead of loading them again each.
    first, rest = batches[0], batches[1:]
    futures: dict[Future[tuple[RootReport, ...]], list[Root]] = {}
    with contextlib.ExitStack() as stack:
        def fork_workers() -> None:
            pool = stack.enter_context(ProcessPoolExecutor(max_workers=len(rest)))
            # a worker gets the run without its memo (nothing a worker needs)
            alone = dataclasses.replace(run, memo=Memo())
            futures.update({pool.submit(check_batch_deep, alone, b, vopts): b for b in rest})

        def mine(n: int, total: int, root: str) -> None:
            by_root[first[n - 1]] = reports[n - 1]
            progress(len(by_root), len(roots), root)

        reports: list[RootReport] = []
        check_batch(run, first, vopts, mine, len(first), looked_up=True,
                     after_first=fork_workers, reports=reports)
        for future in as_completed(futures):
            for root, report in zip(futures[future], future.result()):
                by_root[root] = report
                progress(len(by_root), len(roots), report.root)
    return with_secrets(run, roots, by_root, vopts)


def with_secrets(run: Run, roots: list[Root], by_root: dict[Root, RootReport],
                 vopts: ValidatorOptions) -> tuple[RootReport, ...]:
    """Every report in ``roots`` order. When a program wrote text in some
    root, every Secret value of the run must be known to mask it
    (redact.program_text); the render cache keeps none, so the roots it
    answered that held some are checked again (a program never runs in a
    root the cache answers, so this is rare)."""
    if any(r.program_text for r in by_root.values()):
        again = [root for root in roots if by_root[root].secrets_withheld]
        if again:
            by_root.update(zip(again, check_batch(run, again, vopts, looked_up=True)))
    return tuple(by_root[r] for r in roots)


AUTO_JOBS = 0  # --jobs not given: one worker per CPU when there is more than one group of roots


def auto_jobs(roots: Sequence[Root]) -> int:
    cpus = os.cpu_count() or 1
    if cpus < 2 or len(roots) < 2:
        return 1
    return cpus if len(kshard.groups(list(dict.fromkeys(root_key(r) for r in roots)))) > 1 else 1


def check_batch_deep(run: Run, roots: list[Root], vopts: ValidatorOptions) -> tuple[RootReport, ...]:
    """``check_batch`` in a worker process, with room for deep inputs (the
    parent looked the roots up in the render cache already)."""
    return stack.deep(lambda: check_batch(run, roots, vopts, looked_up=True))


def check_batch(run: Run, roots: list[Root], vopts: ValidatorOptions, progress: Progress = silent,
                 total: int = 0, looked_up: bool = False, after_first: Callable[[], None] | None = None,
                 reports: list[RootReport] | None = None) -> tuple[RootReport, ...]:
    """Each root's report, in order, into ``reports`` as they are made;
    ``after_first`` is called once the first is."""
    # One Builder per batch (per process) and load restrictor: it caches
    # rendered directories and holds per-build state, so it is never shared
    # between workers.
    opts, files, config = run.options, run.files, run.config
    builders = shared_builders(run)
    renders = render_cache.Renders.of(opts, vopts, config, run.top)
    reports = [] if reports is None else reports
    for root in roots:
        builder = builders.for_root(root)
        reports.append(renders.report(root, root_name(files, root), opts.diff,
                                      lambda: check_root(builder, files, root, vopts, config, opts.diff),
                                      looked_up))
        progress(len(reports), total, reports[-1].root)
        if after_first is not None and len(reports) == 1:
            after_first()
    return tuple(reports)


def worker_batches(roots: list[Root], jobs: int) -> list[list[Root]]:
    batches = kshard.worker_batches(list(dict.fromkeys(root_key(r) for r in roots)), jobs)
    return [[r for r in roots if root_key(r) in set(b)] for b in batches]
