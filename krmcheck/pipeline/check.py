"""The check, stage by stage over one Run: select roots, render and validate each
(workers), locate, triage, and the run's report."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Sequence


from krmcheck.pipeline.run import CheckOptions, Run, anchored
from krmcheck import discover, redact, suppression
from krmcheck.applied import BUNDLE_INPUT, DISABLED, PATCH_FILE, TEMPLATE
from krmcheck.gitops import summary as gitops_summary
from krmcheck.results import Note, RootReport, RunReport
from krmcheck.schemas import sources as schema_sources
from krmcheck.validators import ValidatorOptions, duplicate, schema

from krmcheck.pipeline.report import prepare_outputs, write_report
from krmcheck.pipeline.run import Progress, start
from krmcheck.pipeline.select import PLAIN_MODE, excludes_of, readers_of, set_aside_notes, to_check
from krmcheck.pipeline.triage import (as_test_inputs, completed_bases, unreached_failures, baseline_of,
                                      patch_completed, ignore_comments, overrides_of, csv_bases, disabled_roots,
                                      namespaced_roots, patch_objects, admission_defaults, for_owner_release,
                                      template_failures, with_refused, with_yaml_defects)
from krmcheck.pipeline.validate import check_validator_options, schema_settings, crds_rendered_beyond_files
from krmcheck.pipeline.workers import check_all
from krmcheck.pipeline.policy import with_policy_findings

def check(opts: CheckOptions, progress: Progress) -> RunReport:
    """select -> render -> validate -> locate -> triage: the run's report.
    Everything a user can get wrong is a UsageError before any root is built.
    Paths in several repositories are checked one repository at a time, each
    with its own top, and reported together."""
    opts = anchored(opts)
    runs = start(opts)
    reports = [check_run(run, progress) for run in runs]
    if len(reports) == 1:
        return reports[0]
    seen = frozenset().union(*(seen_secrets(run) for run in runs))  # each repository's roots, all masked alike
    return joined(runs, [with_seen_secrets(r, seen) for r in reports])


def check_run(run: Run, progress: Progress) -> RunReport:
    """One repository's check."""
    opts, config, files, top = run.options, run.config, run.files, run.top
    schema_sources.new_run()
    excludes = excludes_of(run)
    found_notes: list[Note] = []  # why controller objects that look like roots are not
    found_refused: list[discover.Refusal] = []  # files the scan for controller objects did not read
    selection, roots = to_check(run, excludes, found_notes, found_refused)
    crd_scan = discover.Scan(top.resolve(), "CRD files",
                             also=frozenset(f for info in selection.infos.values() for f in info.files))
    settings = crds_rendered_beyond_files(run, roots, schema_settings(run, selection, excludes, crd_scan))
    vopts = ValidatorOptions(opts.kubernetes_version, opts.strict, settings)
    check_validator_options(vopts)
    readers = readers_of(roots, selection.infos, files)
    known = baseline_of(run)
    prepare_outputs(opts, set(readers) | {config.path}, files)
    reports = check_all(run, roots, vopts, progress)
    reports = redact.program_text(reports, seen_secrets(run, reports))
    reports = with_policy_findings(reports, config)  # roots that fail only by policy: one finding each
    reports = with_refused(reports, selection.refused + tuple(crd_scan.refused) + tuple(found_refused), files)
    reports = with_yaml_defects(reports, selection.set_aside, files)
    reports, test_notes = as_test_inputs(reports, selection.test_inputs, files)
    reports, unreached_notes = unreached_failures(reports, roots, files)
    test_notes += unreached_notes
    reports, completed_notes = completed_bases(reports, roots, readers, files)
    test_notes += completed_notes
    reports, patched_notes = patch_completed(reports, readers, files)
    test_notes += patched_notes
    if opts.roots in ((), (PLAIN_MODE,)):  # not --roots all, nor roots named to the run
        if TEMPLATE in config.not_applied:
            reports, template_notes = template_failures(reports, files)
            test_notes += template_notes
        if BUNDLE_INPUT in config.not_applied:
            reports, csv_notes = csv_bases(reports, files)
            test_notes += csv_notes
        if PATCH_FILE in config.not_applied:
            reports, patch_notes = patch_objects(reports, files)
            test_notes += patch_notes
        reports, admission_notes = admission_defaults(reports, files, tuple(p for p, _ in settings.crd_files))
        test_notes += admission_notes
        reports, namespaced_notes = namespaced_roots(reports, files)
        test_notes += namespaced_notes
        reports, release_notes = for_owner_release(reports, files, tuple(p for p, _ in settings.crd_files))
        test_notes += release_notes
        if DISABLED in config.not_applied:
            reports, disabled_notes = disabled_roots(reports, roots, selection.infos, files)
            test_notes += disabled_notes
    if config.clusters and config.enabled(duplicate.id):
        reports = duplicate.across_roots(reports, [r.places for r in reports], config.clusters)
    severities = dict(config.severities)
    if opts.require_schemas or config.require_schemas:
        severities[schema.MISSING] = "error"
    policy = suppression.Policy(severities=severities, overrides=overrides_of(config),
                                exclude=excludes, comments=tuple(ignore_comments(readers, top)),
                                readers=readers)
    reports = suppression.apply(schema.missing_per_run(reports), policy)
    reports = gitops_summary.summarise(reports)
    notes: tuple[Note, ...] = ()
    if opts.write_baseline:
        from krmcheck import baseline as kbaseline

        write_report(opts.write_baseline, kbaseline.dump(f for r in reports for f in r.findings))
        known = kbaseline.load(Path(opts.write_baseline), files.display(Path(opts.write_baseline)))
    if known is not None:
        reports, notes = suppression.apply_baseline(reports, known, set(readers))
    if not roots and selection.changed and not any(r.findings for r in reports):
        notes += (Note("no root reads the changed files; nothing to check"),)
    notes += set_aside_notes(selection, files) + test_notes + tuple(found_notes)
    here = run.here()
    return RunReport(reports, opts.fail_on or config.fail_on or "error",
                     cwd="" if here.startswith("..") else here,
                     top_from_cwd=Path(os.path.relpath(top, run.cwd)).as_posix() if here.startswith("..") else "",
                     notes=notes, disabled=config.disabled,
                     baseline=known.display if known is not None else "",
                     set_aside=tuple((files.display(s.path), s.reason, s.why) for s in selection.set_aside),
                     inputs=tuple((files.display(t.path), t.reason, t.why) for t in selection.test_inputs),
                     read_files=tuple(sorted(readers)))


def seen_secrets(run: Run, reports: Sequence[RootReport] = ()) -> frozenset[str]:
    """Every Secret value the run has seen so far: ``reports``' and, through
    the memo, those of the runs before it that share it (the other side of
    --diff-against)."""
    seen: set[str] = run.memo.get(("secret values seen",), set)
    for r in reports:
        seen.update(r.secrets)
    return frozenset(seen)


def with_seen_secrets(report: RunReport, seen: frozenset[str]) -> RunReport:
    """``report`` with the text programs wrote masked with every value of ``seen``."""
    return dataclasses.replace(report, roots=redact.program_text(report.roots, seen))


def joined(runs: Sequence[Run], reports: Sequence[RunReport]) -> RunReport:
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
        set_aside=tuple(x for p in parts for x in p.set_aside),
        inputs=tuple(x for p in parts for x in p.inputs))
