"""Triage: what silences a finding (overrides, ignore comments, the baseline) and the
findings about files the run refused to read."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import yaml


from krmcheck.pipeline.run import Run, UsageError
from krmcheck import config as krmconfig
from krmcheck import applied, discover, suppression
from krmcheck.kustomize.kustomization import FILENAMES as KUSTOMIZATION_FILES
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files, read_text_bounded
from krmcheck.results import Finding, Note, Result, RootReport
from krmcheck.scope import PathPatterns
from krmcheck.tree.load import FAST_LOADER
from krmcheck.tree.origin import Location

if TYPE_CHECKING:
    # What only some runs use is imported where it is used: a plain check of
    # kustomizations loads no git, no function runtime, no controller
    # rendering, no baseline, diff or merge code, and no worker pool unless
    # it starts workers (the render cache's hits build nothing at all).

    from krmcheck import baseline as kbaseline
    from krmcheck.validators.api_version import Version



def with_refused(reports: tuple[RootReport, ...], refused: Sequence[discover.Refusal],
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

def overrides_of(config: krmconfig.Config) -> tuple[tuple[PathPatterns, dict[str, str]], ...]:
    return tuple((scope, {v: ("off" if not s.enabled else s.severity or "") for v, s in settings.items()
                          if not s.enabled or s.severity})
                 for scope, settings in config.overrides)


def ignore_comments(readers: dict[str, tuple[str, ...]], top: Path) -> Iterator[suppression.Ignore]:
    for path in sorted(readers):
        try:
            text = read_text_bounded(top / path)
        except (OSError, ValueError):
            continue  # the build reports a file it cannot read
        yield from suppression.comments_in(path, text)


def baseline_of(run: Run) -> kbaseline.Baseline | None:
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


# The messages of the YAML-level defects a build reports (tree/load.py):
# content lost whatever reads the file, so never a test's licence.
# the defect itself, or the last step of a build that reached it ("accumulating resources of ...: ...")
_YAML_LEVEL = re.compile(r'(?:^|: )(?:invalid YAML|mapping key ".*" already defined)')


def as_warning(finding: Finding) -> Finding:
    """The finding, shown but never failing the run."""
    return dataclasses.replace(finding, result=dataclasses.replace(finding.result, severity="warning"))


# A directory named for a Kubernetes minor release: 1.21, v1.21,
# kubernetes-1.21, k8s-v1.21 (a patch release names an application's version)
_RELEASE_DIR = re.compile(r"(?:v|k8s-?v?|kubernetes-?v?)?1\.(\d{1,2})")


def _lowered(reports: tuple[RootReport, ...], reason_of: Callable[[Finding], str | None],
             said: bool = False) -> tuple[tuple[RootReport, ...], list[Location], set[str]]:
    """Each schema error ``reason_of`` gives a reason for, shown as a
    warning (the reason added to its message, with ``said``): the reports,
    where the lowered errors lie, and the reasons."""
    out, where, reasons = [], [], set()
    for report in reports:
        kept, changed = [], False
        for f in report.findings:
            reason = reason_of(f) if f.severity == "error" and f.result.validator == "schema" else None
            if reason is not None:
                f = as_warning(f)
                if said:
                    said_why = f"{f.result.message} ({reason})"
                    f = dataclasses.replace(f, result=dataclasses.replace(f.result, message=said_why))
                changed = True
                where.append(f.location)
                reasons.add(reason)
            kept.append(f)
        out.append(dataclasses.replace(report, findings=tuple(kept)) if changed else report)
    return tuple(out), where, reasons

def for_older_release(findings: list[Finding], files: Files) -> list[Finding]:
    """An apiVersion the target release no longer serves, in a file kept for
    an older one, is an error only where that file is not applied: a
    directory named for a release beside directories named for others
    (manifests/1.21 beside manifests/1.22: one set of manifests per
    Kubernetes release) holds the file for clusters of that release. Where
    that release still serves the apiVersion, the finding is a warning
    saying so."""
    from krmcheck.validators import api_version

    out = []
    for f in findings:
        ref = f.result.resource_ref
        if f.severity == "error" and f.result.validator == "api-version" and ref is not None:
            entry = api_version.find(ref.apiVersion, ref.kind)
            release = _release_of(files.repo_root, f.location.path)
            if entry is not None and entry.removed is not None and release is not None and release < entry.removed:
                f = as_warning(f)
                f = dataclasses.replace(f, result=dataclasses.replace(
                    f.result, message=f"{f.result.message} (this file is kept for Kubernetes {release}, "
                                      f"its directory's release among others, which serves it)"))
        out.append(f)
    return out


def _release_of(top: Path, path: str) -> Version | None:
    """The Kubernetes release the nearest directory of ``path`` is named
    for, if its siblings are named for other releases the same way."""
    from krmcheck.validators.api_version import Version  # (imported when a finding needs it)

    parts = Path(path).parts[:-1]
    for i in range(len(parts) - 1, -1, -1):
        m = _RELEASE_DIR.fullmatch(parts[i])
        if m is None:
            continue
        try:
            siblings = os.listdir(top.joinpath(*parts[:i]))
        except OSError:
            return None
        prefix = parts[i][:m.start(1) - 2]
        if any(s != parts[i] and s.startswith(prefix) and _RELEASE_DIR.fullmatch(s) for s in siblings):
            return Version(1, int(m.group(1)))
        return None
    return None


def is_yaml_level(finding: Finding) -> bool:
    return finding.result.tags == (("validator", "build"),) and bool(_YAML_LEVEL.search(finding.result.message))


def _refused_by_reader(finding: Finding, shown: applied.SetAside) -> bool:
    """Whether the tool that reads the set-aside file refuses the finding's
    object as well as the cluster would (oc, which renders a Template given
    to ``oc process``, refuses one of OpenShift 3's ungrouped ``v1``): then
    it is no cluster finding, and stays an error."""
    from krmcheck.schemas.kinds import REFUSED_BY

    return any(key == REFUSED_BY and re.search(rf"(?<![\w-]){re.escape(tool)}(?![\w-])", shown.why)
               for key, tool in finding.result.tags)


def as_test_inputs(reports: tuple[RootReport, ...], test_inputs: Sequence[applied.SetAside],
                   files: Files) -> tuple[tuple[RootReport, ...], tuple[Note, ...]]:
    """The cluster errors of files in test directories as warnings: tests
    transform their inputs before anything is applied (placeholder names,
    golden files compared as text, cases invalid on purpose); and of
    documentation fragments. YAML-level defects stay errors, but in a test
    input named as a negative case (``basic-invalid.yaml``), which may be
    broken on purpose, and in a documentation fragment, which people read
    (``...`` for what is left out). One note per class says how many files
    and errors."""
    names = {files.display(t.path): t for t in test_inputs}
    if not names:
        return reports, ()
    out: list[RootReport] = []
    lowered = {reason: 0 for reason in applied.WARNED}
    for report in reports:
        if report.root not in names:
            out.append(report)
            continue
        # a test input named as a negative case may be broken on purpose, YAML
        # and all; a documentation fragment is read by people, not by a tool
        shown = names[report.root]
        on_purpose = shown.reason == applied.DOC_FRAGMENT or applied.negative_case(shown.path)
        kept = []
        for f in report.findings:
            if f.severity == "error" and (on_purpose or not (is_yaml_level(f) or _refused_by_reader(f, shown))):
                f = as_warning(f)
                lowered[names[report.root].reason] += 1
            kept.append(f)
        failed = report.build_failed and any(is_yaml_level(f) and f.severity == "error" for f in kept)
        out.append(dataclasses.replace(report, findings=tuple(kept), build_failed=failed))
    notes = []
    for reason, said in ((applied.TEST_INPUT, "in test directories (or invalid on purpose: beside the valid case, or shown refused by a page) "
                                              "judged as test inputs: tests transform them before anything is "
                                              "applied"),
                         (applied.DOC_FRAGMENT, "shown by documentation pages judged as fragments: a page often "
                                                "shows one field of an object"),
                         (applied.BUNDLE_INPUT, "that a tool reads before anything is applied (an OLM bundle or "
                                                "package, a build a script pipes into operator-sdk generate "
                                                "bundle or into a program kept in the built directory, a file a page gives to the "
                                                "repository's own program, a file a program transforms with yq or sed into another, the "
                                                "input of a generator whose output is another file (istioctl manifest generate), a "
                                                "Template oc process renders, a "
                                                "template a Go program embeds and fills in, a kustomization a Go program builds with "
                                                "kustomize's API and transforms, a template a program reads by its own path and "
                                                "fills in, an overlay Rancher "
                                                "Fleet applies to a chart's output, a Workflow argo submit names or an Application argocd app create names, a file a "
                                                "program copies to object storage, a KRM function's --fn-config, the "
                                                "input a kustomization's plugin configuration names), "
                                                "not kubectl")):
        mine = sorted(name for name, t in names.items() if t.reason == reason)
        if not mine:
            continue
        count = "1 file" if len(mine) == 1 else f"{len(mine)} files"
        errors = "1 error" if lowered[reason] == 1 else f"{lowered[reason]} errors"
        notes.append(Note(f"{count} {said}, so their cluster findings are warnings ({errors} shown as "
                          f"warnings) [{reason}]", Location(mine[0], 1, 1)))
    return tuple(out), tuple(notes)


UNREACHED = "unreached"  # the rule of a kustomization a Flux sync does not reach and that fails to build


def csv_bases(reports: tuple[RootReport, ...],
              files: Files) -> tuple[tuple[RootReport, ...], tuple[Note, ...]]:
    """The errors at an operator-sdk ClusterServiceVersion base a root reads
    (no deployment to install yet, :func:`applied.csv_base`: ``operator-sdk
    generate bundle`` completes it) as warnings: the generator's input, not
    what OLM installs. The rest of the root (samples beside it) is judged as
    ever; one note."""
    bases: dict[str, bool] = {}
    scan = object()  # the repository's programs are read once for every base judged here
    out, lowered = [], 0
    for report in reports:
        kept = []
        for f in report.findings:
            where = f.location.path
            if f.severity == "error" and where.endswith(applied.CSV_SUFFIXES) and not is_yaml_level(f):
                if where not in bases:
                    bases[where] = applied.csv_base(files.repo_root / where, files.repo_root, scan) is not None
                if bases[where]:
                    f = as_warning(f)
                    lowered += 1
            kept.append(f)
        out.append(dataclasses.replace(report, findings=tuple(kept)) if kept != list(report.findings) else report)
    if not lowered:
        return reports, ()
    first = sorted(p for p, base in bases.items() if base)[0]
    count = "1 error" if lowered == 1 else f"{lowered} errors"
    return tuple(out), (Note(f"{count} at operator-sdk ClusterServiceVersion bases (no deployment to install yet) "
                             f"shown as warnings: operator-sdk generate bundle completes them [{applied.BUNDLE_INPUT}]",
                             Location(first, 1, 1)),)


def patch_objects(reports: tuple[RootReport, ...],
                  files: Files) -> tuple[tuple[RootReport, ...], tuple[Note, ...]]:
    """The errors of a workload shaped as a patch (neither a selector nor a
    container image, or only its pod template's labels or annotations:
    :func:`applied.patch_shaped`), and of an object written with nothing
    but its labels or annotations whose kind requires a field outside
    metadata (:func:`applied.metadata_only_objects`), as warnings, at the
    object in the file that writes it: the API server creates no such
    object, so what applies it (``kubectl apply``, a kustomization's build
    that Argo CD or Flux applies) merges it onto the live one. (A file of
    nothing but such workloads that no kustomization reads is set aside as
    a patch file.) YAML-level defects stay errors; one note."""
    out, lowered, where = [], 0, []
    shapes: dict[str, tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]] = {}

    def shaped_in(path: str) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]:
        if path not in shapes:
            shapes[path] = (frozenset(), frozenset())
            if path.endswith((".yaml", ".yml")) and (files.repo_root / path).is_file():
                try:
                    text = read_text_bounded(files.repo_root / path)
                    shapes[path] = (applied.patch_shaped_objects(text), applied.metadata_only_objects(text))
                except (OSError, ValueError):
                    pass
        return shapes[path]

    def written_as_patch(f: Finding) -> bool:
        ref = f.result.resource_ref
        if f.severity != "error" or ref is None or not f.location.path:
            return False
        workloads, annotated = shaped_in(f.location.path)
        if f.result.message.endswith("missing required field 'selector'"):
            return any(kind == ref.kind and name and name in ref.name for kind, name in workloads)
        # a field the kind requires outside metadata, at the top of an object
        # the file writes as its metadata only
        return _TOP_MISSING.fullmatch(f.result.message) is not None and \
            any(kind == ref.kind and name and name in ref.name for kind, name in annotated)

    for report in reports:
        # the objects rendered without a selector (or a required field)
        # whose source writes them as a patch: nothing completed them (a
        # patch's line that wrote a value into a complete object is no such
        # source)
        partial = {(f.result.resource_ref.kind, f.result.resource_ref.name) for f in report.findings
                   if f.result.resource_ref is not None and written_as_patch(f)}
        kept, changed = [], False
        for f in report.findings:
            ref = f.result.resource_ref
            if partial and f.severity == "error" and ref is not None and not is_yaml_level(f) and \
                    (ref.kind, ref.name) in partial:
                f = as_warning(f)
                lowered += 1
                changed = True
                where.append(f.location)
            kept.append(f)
        out.append(dataclasses.replace(report, findings=tuple(kept)) if changed else report)
    if not lowered:
        return reports, ()
    count = "1 error" if lowered == 1 else f"{lowered} errors"
    return tuple(out), (Note(f"{count} at objects shaped as patches (a workload with neither a selector nor a "
                             f"container image, or only the pod template's labels or annotations; an object of "
                             f"nothing but its labels or annotations whose kind requires more: the API server "
                             f"creates no such object, kubectl apply merges one onto the live object) shown as "
                             f"warnings [{applied.PATCH_FILE}]",
                             min(where, key=lambda w: (w.path, w.line))),)


_MISSING_FIELD = re.compile(r"missing required field '([^']+)'")
_TOP_MISSING = re.compile(r"missing required field '[^']+'")


_MISSING_NAMESPACE = re.compile(r"missing required field 'namespace'")


def namespaced_roots(reports: tuple[RootReport, ...], files: Files) -> tuple[tuple[RootReport, ...], tuple[Note, ...]]:
    """A kustomization a program of the repository gives its namespace with
    ``kustomize edit set namespace`` before it builds it
    (:func:`krmcheck.applied.namespaced_by`): an error that a field's
    namespace is missing is one the program's namespace fills (a
    ServiceAccount subject, a webhook's service), so it is a warning; one
    note names the program."""
    if not any(f.severity == "error" and _MISSING_NAMESPACE.search(f.result.message)
               for r in reports for f in r.findings):
        return reports, ()
    given = applied.namespaced_by(files.repo_root)
    if not given:
        return reports, ()
    out, lowered = [], []
    for report in reports:
        program = given.get(report.root)
        if program is None:
            out.append(report)
            continue
        kept = [as_warning(f) if f.severity == "error" and _MISSING_NAMESPACE.search(f.result.message) else f
                for f in report.findings]
        if kept != list(report.findings):
            lowered.append((report.root, program))
            report = dataclasses.replace(report, findings=tuple(kept))
        out.append(report)
    if not lowered:
        return reports, ()
    root, program = sorted(lowered)[0]
    count = "1 kustomization" if len(lowered) == 1 else f"{len(lowered)} kustomizations (the first {root})"
    note = Note(f"{count} that {program} gives a namespace with kustomize edit set namespace before it builds "
                f"{'it' if len(lowered) == 1 else 'them'}: a missing namespace is the one the program sets, so "
                f"such errors are warnings", Location(_kustomization_of(files.repo_root / root, files), 1, 1))
    return tuple(out), (note,)


def admission_defaults(reports: tuple[RootReport, ...], files: Files,
                       crd_files: tuple[str, ...] = ()) -> tuple[tuple[RootReport, ...], tuple[Note, ...]]:
    """A required field missing from an object that mutating admission may
    fill before the API server checks the schema: a Kyverno policy of the
    repository that writes the field on objects of the kind
    (:func:`krmcheck.schemas.kyverno.added_fields`), or the repository's own
    defaulting webhook on the kind when no Go field of the repository
    declares the field (its type is an imported module's, so what the
    webhook sets is not known here) or a defaulting method of the
    repository assigns it (:func:`krmcheck.schemas.webhooks.own_defaulting`).
    Such errors are warnings naming the policy or the webhook; one note."""
    candidates = [f for r in reports for f in r.findings
                  if f.severity == "error" and f.result.validator == "schema" and f.result.resource_ref is not None
                  and _MISSING_FIELD.search(f.result.message)]
    if not candidates:
        return reports, ()
    from krmcheck.schemas.kyverno import added_fields
    from krmcheck.schemas.webhooks import own_defaulting

    added = added_fields(files.repo_root)
    defaulting = own_defaulting(files.repo_root, crd_files)
    hooks = defaulting.kinds
    if not added and not hooks:
        return reports, ()

    def writer_of(f: Finding) -> str | None:
        ref, found = f.result.resource_ref, _MISSING_FIELD.search(f.result.message)
        if ref is None or found is None:
            return None
        at = tuple(p for p in f.result.field_path.split(".") if p) if f.result.field_path else ()
        path = (*at, found.group(1))
        for kind in (ref.kind, "*"):
            policy = added.get(kind, {}).get(path)
            if policy is not None:
                return f"{policy}, a Kyverno policy writing it"
        hook = hooks.get((ref.apiVersion.rpartition("/")[0], ref.kind))
        if hook is None:
            return None
        if found.group(1) not in defaulting.declared:
            return f"the repository's defaulting webhook in {hook}, whose Go code runs in the cluster, for a field " \
                   f"no Go type of the repository declares"
        method = defaulting.assigned.get(found.group(1))
        if method is not None:
            return f"the repository's defaulting webhook in {hook}, whose defaulting method in {method} assigns " \
                   f"the field"
        return None

    out, where, named = _lowered(reports, writer_of)
    if not where:
        return reports, ()
    count = "1 error" if len(where) == 1 else f"{len(where)} errors"
    writers = ", ".join(sorted(named)[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
    return tuple(out), (Note(f"{count} about a required field that admission may write before the API server "
                             f"checks the schema ({writers}) shown as warnings [admission-default]",
                             min(where, key=lambda w: (w.path, w.line))),)



def for_owner_release(reports: tuple[RootReport, ...], files: Files,
                      crd_files: tuple[str, ...] = ()) -> tuple[tuple[RootReport, ...], tuple[Note, ...]]:
    """A schema error from a validation rule that a later release of the
    API's owner added (:data:`krmcheck.schemas.releases.RULES`), on an
    object of a repository that shows it runs an earlier release and not
    that one, is a warning saying so; one note. A repository that holds
    the CRD itself, or says nothing of the release, keeps the error."""
    from krmcheck.schemas import releases

    def rule_for(f: Finding) -> releases.ReleaseRule | None:
        ref = f.result.resource_ref
        if f.severity != "error" or f.result.validator != "schema" or ref is None:
            return None
        return releases.rule_of(ref.apiVersion.rpartition("/")[0], f.result.message)

    rules = {rule for r in reports for f in r.findings if (rule := rule_for(f)) is not None}
    earlier: dict[releases.ReleaseRule, str] = {}
    for rule in rules:
        if releases.defines_group(crd_files, rule.group):
            continue
        runs = releases.releases_run(files.repo_root, rule)
        if runs and rule.release not in runs:
            major = max(runs)
            earlier[rule] = f"a rule {rule.owner} {rule.release} added; the repository runs {rule.owner} {major}: " \
                            f"{runs[major]}"
    if not earlier:
        return reports, ()
    def reason_of(f: Finding) -> str | None:
        rule = rule_for(f)
        return None if rule is None else earlier.get(rule)

    out, where, _ = _lowered(reports, reason_of, said=True)
    count = "1 error" if len(where) == 1 else f"{len(where)} errors"
    return tuple(out), (Note(f"{count} from a validation rule a later release of the API's owner added than the one "
                             f"the repository runs shown as warnings [owner-release]",
                             min(where, key=lambda w: (w.path, w.line))),)

def template_failures(reports: tuple[RootReport, ...],
                      files: Files) -> tuple[tuple[RootReport, ...], tuple[Note, ...]]:
    """A root whose every build error lies on a line holding a templating
    language's placeholder (``{{ .name }}``, ``${{ values.name }}``, ``{% if
    %}``: the text is not YAML there, or an entry names a file by it) is a
    templating tool's input, a scaffold or a skeleton: not built as written.
    Its build errors go; one note names such roots. (A ``${NAME}`` is no
    such evidence: Flux substitutes only after the build has read the YAML,
    and none in a kustomization, so there a failure is a defect. It is in a
    file a Terraform program renders with ``templatefile()``.)"""
    out, templates = [], []
    texts: dict[str, str | None] = {}
    rendered: list[dict[str, str]] = []  # what Terraform renders, read on the first line with a ${...}
    for report in reports:
        errors = [f for f in report.findings if f.severity == "error"]
        if not (report.build_failed and errors and
                all(f.result.validator == "build" and _at_template(f.location, files, texts, rendered)
                    for f in errors)):
            out.append(report)
            continue
        templates.append(report.root)
        out.append(dataclasses.replace(report, findings=tuple(f for f in report.findings if f.severity != "error"),
                                       build_failed=False))
    if not templates:
        return reports, ()
    count = "1 root fails" if len(templates) == 1 else f"{len(templates)} roots fail"
    first = next(f for r in reports if r.root == templates[0] for f in r.findings if f.severity == "error")
    note = Note(f"{count} to build only at templates' placeholders: a templating tool renders them before "
                f"any build (a scaffold, a skeleton), so they are not built as written [{applied.TEMPLATE}]",
                first.location)
    return tuple(out), (note,)




# What a template tree names a file it renders to: Copier's default
# suffix, Jinja's others, Go's and Helmfile's.
_TEMPLATE_SUFFIXES = (".jinja", ".jinja2", ".j2", ".tmpl", ".tpl", ".gotmpl")
_ENTRY = re.compile(r"^\s*-?\s*[\"']?([^\"'#\s]+)[\"']?\s*(?:#.*)?$")


# ``name: {VALUE}``: a format string's fill-in word written bare, which YAML
# reads as a map of one key, so the object has no name
_BRACED_NAME = re.compile(r"[ \t]*name:[ \t]*\{[ \t]*[A-Za-z_][A-Za-z0-9_.-]*[ \t]*\}[ \t]*(?:#.*)?\Z")
# ``newName: {accountid}.dkr.ecr.{region}.amazonaws.com/app``: a value that
# starts with a fill-in word in braces and goes on, which YAML reads as a
# map followed by text, and cannot read at all
_BRACED_START = re.compile(r"[ \t]*(?:-[ \t]+)?[\w.-]+:[ \t]*\{[A-Za-z_][A-Za-z0-9_.-]*\}[^\s#,}]")


def _at_template(where: Location, files: Files, texts: dict[str, str | None],
                 rendered: list[dict[str, str]]) -> bool:
    """Whether a build error lies where a templating tool acts: on a line
    holding its placeholder (or a name written ``{VALUE}``), in a directory named by one (Copier's
    ``clusters/{{ cluster_name }}``), at an entry naming a file the tree
    holds as the template it is rendered from (``platform.yaml.jinja``, a
    directory's ``kustomization.yaml.jinja``), or on a line holding a
    ``${...}`` of a file a Terraform program renders with ``templatefile()``
    (``rendered``: read on the first such line, then kept)."""
    if any(applied.TEMPLATING.search(part) for part in where.path.split("/")[:-1]):
        return True
    if where.path not in texts:
        try:
            texts[where.path] = read_text_bounded(files.repo_root / where.path)
        except (OSError, ValueError):
            texts[where.path] = None
    text = texts[where.path]
    if text is None:
        return False
    lines = text.splitlines()
    if not 0 < where.line <= len(lines):
        return False
    line = lines[where.line - 1]
    if applied.TEMPLATING.search(line) is not None or _BRACED_NAME.match(line) is not None or \
            _BRACED_START.match(line) is not None:
        return True
    if "${" in line:
        if not rendered:  # the programs are read once per run
            rendered.append(applied.terraform_templates(files.repo_root))
        if where.path in rendered[0]:
            return True
    entry = _ENTRY.match(line.split(":", 1)[1] if ":" in line and not line.lstrip().startswith("-") else line)
    if entry is None or "://" in entry.group(1):
        return False
    named = (files.repo_root / where.path).parent / entry.group(1)
    return any(_is_file(Path(f"{candidate}{suffix}"))
               for candidate in (named, *(named / name for name in KUSTOMIZATION_FILES))
               for suffix in _TEMPLATE_SUFFIXES)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # a name too long, a NUL byte: no such file
        return False


def unreached_failures(reports: tuple[RootReport, ...], roots: Sequence[object],
                       files: Files) -> tuple[tuple[RootReport, ...], tuple[Note, ...]]:
    """Where Flux Kustomizations of the repository apply its clusters, a
    kustomization that none of them reaches and that fails to build is not
    what the sync applies (an app taken out, a directory moved aside whose
    paths still name the old places): its build errors are warnings, but
    for the YAML-level ones (content lost whatever reads the file); one
    note names them."""
    from krmcheck.gitops.root import ControllerRoot

    if not any(isinstance(r, ControllerRoot) and r.name.startswith("flux:") and not r.helm for r in roots):
        return reports, ()
    plain = {files.display(r): r for r in roots if isinstance(r, Path) and r.is_dir()}
    out, lowered = [], []
    for report in reports:
        if not (report.build_failed and report.root in plain):
            out.append(report)
            continue
        kept = []
        for f in report.findings:
            if f.severity == "error" and f.result.validator == "build" and not is_yaml_level(f):
                f = as_warning(f)
            kept.append(f)
        failed = any(is_yaml_level(f) and f.severity == "error" for f in kept)
        if not failed:
            lowered.append(report.root)
        out.append(dataclasses.replace(report, findings=tuple(kept), build_failed=failed))
    if not lowered:
        return tuple(out), ()
    count = "1 kustomization" if len(lowered) == 1 else f"{len(lowered)} kustomizations"
    note = Note(f"{count} that no Flux Kustomization of the repository applies fail to build: the sync "
                f"does not apply them, so their build errors are warnings [{UNREACHED}]",
                Location(_kustomization_of(plain[sorted(lowered)[0]], files), 1, 1))
    return tuple(out), (note,)


def completed_bases(reports: tuple[RootReport, ...], roots: Sequence[object], readers: dict[str, tuple[str, ...]],
                    files: Files) -> tuple[tuple[RootReport, ...], tuple[Note, ...]]:
    """Where Flux Kustomizations of the repository apply its clusters, a
    kustomization that none of them reaches, built on its own, can lack
    what the overlays that read its files add (a base HelmRelease without
    ``interval``, which each cluster's overlay lists file by file and
    patches in). An error such a kustomization has at a file that roots the
    sync applies read too, when every one of them was built and checked
    and none has that error there, is a warning: what the cluster gets from
    that file has not the defect. YAML-level defects stay errors; one note
    names the kustomizations."""
    from krmcheck.gitops.root import ControllerRoot

    synced = {r.name for r in roots if isinstance(r, ControllerRoot) and r.name.startswith("flux:") and not r.helm}
    if not synced:
        return reports, ()
    plain = {files.display(r): r for r in roots if isinstance(r, Path) and r.is_dir()}
    by_root = {r.root: r for r in reports}
    out, lowered = [], []
    for report in reports:
        if report.root not in plain or not any(f.severity == "error" for f in report.findings):
            out.append(report)
            continue
        kept = [as_warning(f) if f.severity == "error" and _completed(f, synced, readers, by_root) else f
                for f in report.findings]
        if kept != list(report.findings):
            lowered.append(report.root)
        out.append(dataclasses.replace(report, findings=tuple(kept)))
    if not lowered:
        return reports, ()
    count, verb = ("1 kustomization", "has") if len(lowered) == 1 else (f"{len(lowered)} kustomizations", "have")
    first = sorted(lowered)[0]
    note = Note(f"{count} that no Flux Kustomization of the repository applies {verb} errors at files that "
                f"roots the sync applies read without them: overlays complete what these bases leave out, so "
                f"those errors are warnings [{UNREACHED}]", Location(_kustomization_of(plain[first], files), 1, 1))
    return tuple(out), (note,)


def _completed(finding: Finding, synced: set[str], readers: dict[str, tuple[str, ...]],
               by_root: dict[str, RootReport]) -> bool:
    """Roots the sync applies read the finding's file, each was built and
    checked, and none has the same finding there."""
    if finding.result.validator == "build" or not finding.location.path:
        return False
    applying = [by_root.get(name) for name in readers.get(finding.location.path, ()) if name in synced]
    if not applying:
        return False
    for report in applying:
        if report is None or report.build_failed or report.needs_network:
            return False  # not checked here, or not selected: no evidence either way
        if any(f.location.path == finding.location.path and f.message == finding.message for f in report.findings):
            return False
    return True


def patch_completed(reports: tuple[RootReport, ...], readers: dict[str, tuple[str, ...]],
                    files: Files) -> tuple[tuple[RootReport, ...], tuple[Note, ...]]:
    """A required field missing from an object that a kustomization of the
    repository writes on every object of its kind that it reads: one of its
    patches, targeted at the kind (by ``annotationSelector`` or
    ``labelSelector`` too, which the object's metadata satisfies), writes
    the field (:func:`krmcheck.schemas.patch_targets.completions`). The
    repository writes such objects incomplete for that kustomization; where
    no root a GitOps controller applies reads the object's file with the
    error (an app not listed there yet), the error is a warning naming the
    kustomization; one note."""
    candidates = [f for r in reports for f in r.findings
                  if f.severity == "error" and f.result.validator == "schema" and f.result.resource_ref is not None
                  and _MISSING_FIELD.search(f.result.message)]
    if not candidates:
        return reports, ()
    from krmcheck.schemas.patch_targets import completions

    known = completions(files.repo_root)
    if not known:
        return reports, ()
    by_root = {r.root: r for r in reports}
    metadata: dict[tuple[str, str, str], tuple[dict[str, str], dict[str, str]] | None] = {}

    def writer_of(f: Finding) -> str | None:
        ref, found = f.result.resource_ref, _MISSING_FIELD.search(f.result.message)
        if ref is None or found is None or not f.location.path:
            return None
        path = (*(p for p in f.result.field_path.split(".") if p), found.group(1))
        fitting = [c for c in known if c.kind == ref.kind and c.path == path]
        if not fitting:
            return None
        for name in readers.get(f.location.path, ()):
            report = by_root.get(name)
            if name.startswith(("flux:", "argocd:")) and report is not None and \
                    any(g.location == f.location and g.result.message == f.result.message for g in report.findings):
                return None  # a controller applies the object as it is
        key = (f.location.path, ref.kind, ref.name)
        if key not in metadata:
            metadata[key] = _metadata_of(files.repo_root / f.location.path, ref.kind, ref.name)
        meta = metadata[key]
        if meta is None:
            return None
        return next((c.where for c in fitting if c.selects(ref.kind, *meta)), None)

    out, where, named = _lowered(reports, writer_of)
    if not where:
        return reports, ()
    count = "1 error" if len(where) == 1 else f"{len(where)} errors"
    kustomizations = ", ".join(sorted(named)[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
    return tuple(out), (Note(f"{count} about a required field that a kustomization of the repository "
                             f"({kustomizations}) writes by a patch targeted at every object of the kind it "
                             f"selects, at objects no GitOps controller applies as they are: written incomplete "
                             f"for that kustomization, shown as warnings [{UNREACHED}]",
                             min(where, key=lambda w: (w.path, w.line))),)


def _metadata_of(path: Path, kind: str, name: str) -> tuple[dict[str, str], dict[str, str]] | None:
    """(annotations, labels) of the object of ``kind`` and ``name`` written
    in ``path``, as written."""
    try:
        docs = list(yaml.load_all(read_text_bounded(path), Loader=FAST_LOADER))
    except (OSError, ValueError, yaml.YAMLError, RecursionError):
        return None
    for doc in docs:
        meta = doc.get("metadata") if isinstance(doc, dict) and doc.get("kind") == kind else None
        if isinstance(meta, dict) and str(meta.get("name", "")) == name:
            annotations, labels = meta.get("annotations") or {}, meta.get("labels") or {}
            if isinstance(annotations, dict) and isinstance(labels, dict):
                return ({str(k): str(v) for k, v in annotations.items()}, {str(k): str(v) for k, v in labels.items()})
    return None


def disabled_roots(reports: tuple[RootReport, ...], roots: Sequence[object], kustomizations: Iterable[Path],
                   files: Files) -> tuple[tuple[RootReport, ...], tuple[Note, ...]]:
    """A kustomization directory that another kustomization lists only in an
    entry commented out (``#- ../webhook``) was switched off by its
    maintainers: nothing applies it (else it would be no root of its own).
    Its errors are warnings, but for the YAML-level ones (content lost
    whatever reads the file); one note names them."""
    plain = {files.display(r): r for r in roots if isinstance(r, Path) and r.is_dir()}
    if not plain:
        return reports, ()
    commented = applied.commented_entries(kustomizations)
    off = {shown: commented[d] for shown, d in plain.items() if d in commented}
    # the directory a Flux Kustomization builds, when that Kustomization's
    # file is named only in a commented-out entry and no Kustomization of
    # the repository that is applied builds the directory
    built = {getattr(r, "directory", None) for r in roots if not isinstance(r, Path)}
    for entry, naming in commented.items():
        if entry.suffix in (".yaml", ".yml") and entry.is_file():
            for directory, _ in applied.flux_kustomizations(entry, files.repo_root):
                shown = files.display(directory)
                if shown in plain and directory not in built:
                    off.setdefault(shown, naming)
    out, lowered = [], []
    for report in reports:
        if report.root not in off or not any(f.severity == "error" for f in report.findings):
            out.append(report)
            continue
        kept = [as_warning(f) if f.severity == "error" and not is_yaml_level(f) else f for f in report.findings]
        if kept == list(report.findings):
            out.append(report)  # only YAML-level defects: errors wherever they are
            continue
        failed = report.build_failed and any(is_yaml_level(f) and f.severity == "error" for f in kept)
        lowered.append(report.root)
        out.append(dataclasses.replace(report, findings=tuple(kept), build_failed=failed))
    if not lowered:
        return reports, ()
    first = sorted(lowered)[0]
    count = ("1 kustomization listed only in an entry commented out, or built by a Flux Kustomization "
             "so listed (in" if len(lowered) == 1 else
             f"{len(lowered)} kustomizations listed only in entries commented out, or built by Flux "
             f"Kustomizations so listed (the first in")
    verb = "has" if len(lowered) == 1 else "have"
    note = Note(f"{count} {files.display(off[first])}) {verb} errors: switched off, nothing applies them, so "
                f"their errors are warnings [{applied.DISABLED}]",
                Location(_kustomization_of(plain[first], files), 1, 1))
    return tuple(out), (note,)


def _kustomization_of(directory: Path, files: Files) -> str:
    """The kustomization file of a root directory, as shown (the directory when it has several)."""
    from krmcheck.pipeline.render import kustomization_file

    try:
        return kustomization_file(files, directory)
    except BuildError:
        return files.display(directory)


def with_yaml_defects(reports: tuple[RootReport, ...], set_aside: Sequence[applied.SetAside],
                      files: Files) -> tuple[RootReport, ...]:
    """An error at each YAML-level defect of a file set aside as not applied
    (not YAML, a repeated key, documents run together): whatever tool reads
    the file loses content. Vendored files are no tool's input here, and a
    template is YAML only once its tool renders it, but for a ytt template,
    which ytt reads as YAML. Given to the first root, as run-wide findings
    are; where no root is checked (the set-aside file is the only one a
    file argument or ``--diff-against`` selects), to a report of its own."""
    found = []
    for s in set_aside:
        if s.reason == applied.VENDORED:
            continue  # no tool here reads it
        display = files.display(s.path)
        try:
            text = read_text_bounded(s.path)
        except (OSError, ValueError):
            continue
        ytt = applied.ytt_template(text) is not None
        if s.reason == applied.TEMPLATE and not ytt:
            continue  # YAML only once its tool renders it
        defect = applied.ytt_yaml_defect(text, display) if ytt else applied.yaml_defect(text, display)
        if defect is not None and not applied.is_template(text):  # a template is YAML once rendered
            result = Result(defect.message, "error", tags=(("validator", "build"),))
            found.append(Finding(result, display, Location(defect.path, defect.line, defect.col)))
    if not found:
        return reports
    if not reports:
        return (RootReport(found[0].root, findings=tuple(found)),)
    return (dataclasses.replace(reports[0], findings=reports[0].findings + tuple(found)),) + reports[1:]
