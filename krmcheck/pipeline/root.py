"""One root's report: render, validate, locate each Result, and the findings an
annotation silences; every Secret value masked before the report leaves."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import yaml

from krmcheck import applied
from krmcheck import config as krmconfig
from krmcheck import suppression
from krmcheck import gitops
from krmcheck import redact
from krmcheck.gitops import placeholders as gitops_placeholders
from krmcheck.gitops.root import ControllerRoot, Root
from krmcheck.locate import Locator, source_id
from krmcheck.resource.errors import BuildError, Encrypted, MissingFile, NeedsNetwork
from krmcheck.resource.files import Files
from krmcheck.kustomize import kustomization as kfile
from krmcheck.tree.node import Mapping, Scalar
from krmcheck.results import Controller, Finding, Flag, ResourceRef, Result, RootReport
from krmcheck.tree.origin import Location
from krmcheck.tree.emit import emit_all
from krmcheck.validators import ValidatorOptions

if TYPE_CHECKING:
    # What only some runs use is imported where it is used: a plain check of
    # kustomizations loads no git, no function runtime, no controller
    # rendering, no baseline, diff or merge code, and no worker pool unless
    # it starts workers (the render cache's hits build nothing at all).

    from krmcheck import diff as kdiff
    from krmcheck import flags as kflags
    from krmcheck.kustomize.target import Builder
    from krmcheck.resource.resource import Resource

from krmcheck.pipeline import policy
from krmcheck.pipeline.render import (Build, build_finding, deprecations, kustomization_file, offline_findings,
                                      render_root)
from krmcheck.pipeline.select import root_name
from krmcheck.pipeline.triage import as_warning, for_older_release
from krmcheck.pipeline.validate import coverage, external_results, places, ref_of, rendered_crds, validate_resources

def check_root(builder: Builder, files: Files, root: Root, vopts: ValidatorOptions,
               config: krmconfig.Config, diff: kdiff.Context | None = None) -> RootReport:
    """A root's report with every Secret value the build read or made masked
    (redact.py): the one place where a root's messages leave the build and
    validate steps, whichever process ran them and however the build ended,
    before anything fingerprints, groups, baselines or reports them. The
    rendered resources tell which values came from a Secret's data."""
    resources: list[Resource] = []
    build = Build()
    report = root_report(builder, files, root, vopts, config, diff, resources, build)
    built = build.builders or [builder]  # (a root built again with the restrictor lifted: both builds)
    secrets = redact.Secrets(frozenset().union(*(b.secrets for b in built)),
                             frozenset().union(*(b.secret_places for b in built)),
                             root.secret_values if isinstance(root, ControllerRoot) else frozenset())
    masked = redact.root_report(report, secrets, resources)
    # kept for the text programs wrote in any root of the run (redact.program_text)
    return dataclasses.replace(masked, secrets=secrets.values | secrets.unplaced)


def root_report(builder: Builder, files: Files, root: Root, vopts: ValidatorOptions,
                 config: krmconfig.Config, diff: kdiff.Context | None = None,
                 rendered_into: list[Resource] | None = None, build: Build | None = None) -> RootReport:
    name = root_name(files, root)
    build = build if build is not None else Build()
    try:
        rendered = render_root(builder, root, config, build)
    except BuildError as e:
        builder = build.builders[-1] if build.builders else builder  # the build that failed
        return failed_report(e, builder, root, name, config, build)
    builder = build.builders[-1]  # the build that made the resources (lifted, when it was)
    policies = ((policy.LOAD_RESTRICTOR, build.outside),) if build.outside is not None else ()
    if any(r.kind == "ResourceSet" for r in rendered.resources):
        # what the Flux Operator makes of a ResourceSet is checked with it
        from krmcheck.gitops import resourceset

        rendered = resourceset.applied(rendered)
    resources = rendered.resources
    if rendered_into is not None:
        rendered_into.extend(resources)
    # Results the build's KRM functions reported come first, then the validators'.
    results = [r for r, _ in builder.function_results] + validate_resources(resources, vopts, config)
    outputs = rendered_yaml(resources, builder, root, diff) if diff is not None else ()
    raised: list[kflags.Raised] = []
    if diff is not None and diff.base is not None:
        from krmcheck import flags as kflags

        raised = kflags.raised(diff.base_of(name), [(ref_of(r), source_id(r), r.node.to_data(), r.node.origin.path,
                                                     text) for r, (_, _, text, _) in zip(resources, outputs)],
                               diff.secret_key)
    skipped: tuple[Finding, ...] = ()
    try:  # external validators come after the built-ins, as in the README
        ran, skipped = external_results(files, root, resources, config, builder.options, name)
        results += ran
        broken: tuple[Finding, ...] = ()
    except BuildError as e:
        broken = (build_finding(e, name),)
    # a plain manifest's documents that are no resources, each an error of its own
    broken += tuple(build_finding(e, name) for e in builder.document_errors)
    results = [r for r in results if config.enabled(r.validator)]
    locator = Locator(resources, name, kustomization_file(files, root))
    located = [locator.locate(r) for r in results] + list(broken + skipped + deprecations(builder, name, config))
    located = gitops.findings(rendered, name, config.enabled) + located
    if isinstance(root, ControllerRoot) and root.name.startswith("flux:") and root.helm is None:
        located = server_side_apply(located)
    kept, silenced, annotations = suppression.by_annotation(located, resources, locator.find)
    kept = for_older_release(self_patched(kept, builder.files, root), builder.files)
    # Outside controller roots nothing substitutes a template's ${...}: a
    # value holding one is not judged (``placeholders: templates``, the
    # default, or ``skip``); in a controller root, a value wholly ${...} whose
    # variable the repository cannot show is not judged either.
    holding = config.placeholders == "skip" or (config.placeholders == "templates"
                                                and not isinstance(root, ControllerRoot))
    # a word a page tells the reader to replace in the files it names
    # (``sed -i "s~REPO_PREFIX~$URL~g" clusters/mgmt/flux-system/gotk-sync.yaml``),
    # in any root: those files are a template for the reader's copy
    named = _page_words(builder, kept) if config.placeholders != "check" and kept else {}
    if holding or rendered.placeholders or named:
        # a word a program of the repository replaces (``sed s/HOSTNAME/...``)
        words = applied.sed_words(builder.files.repo_root, builder.files) if holding and kept else None
        # a word a page says stands for a value to fill in ("Any UNDEFINED
        # values should be patched via the overlay")
        told = applied.page_told_words(builder.files.repo_root, builder.files) if holding and kept else None
        kept, exempt = gitops_placeholders.split(kept, locator, holding, rendered.unknown,
                                                 left=rendered.placeholders > 0, words=words,
                                                 source=_source(builder.files), named=named, told=told)
        silenced = list(silenced) + exempt
    return RootReport(name, tuple(ref_of(r) for r in resources), tuple(kept),
                      build_failed=bool(broken), suppressed=tuple(silenced),
                      ignore_annotations=tuple(annotations),
                      coverage=coverage(resources, vopts, config),
                      crds=rendered_crds(resources),
                      places=places(resources, locator) if config.clusters or diff is not None else (),
                      rendered=outputs, policies=policies,
                      flags=located_flags(raised, locator, builder),
                      controller=controller_of(root) if diff is not None else None)


def located_flags(raised: list[kflags.Raised], locator: Locator, builder: Builder) -> tuple[Flag, ...]:
    """The pull-request view's flags at their source lines, any Secret value
    the build read masked."""
    if not raised:
        return ()
    from krmcheck.flag_ids import CONTROLLER

    mask = redact.masker(frozenset(builder.secrets))
    out = []
    for x in raised:
        f = locator.locate(x.result)
        f = dataclasses.replace(f, result=dataclasses.replace(f.result, message=mask.text(f.message)))
        section = "controller" if x.id in CONTROLLER else "flag"
        out.append(Flag(x.id, f, mask.text(x.old), mask.text(x.new), section))
    return tuple(out)


def controller_of(root: Root) -> Controller | None:
    if not isinstance(root, ControllerRoot):
        return None
    from krmcheck import flags as kflags

    return kflags.controller(root)


def server_side_apply(findings: list[Finding]) -> list[Finding]:
    """kustomize-controller applies with server-side apply, which refuses
    what a plain create only warns about: a container's env with a name twice."""
    from krmcheck.validators import schema

    return [dataclasses.replace(f, result=dataclasses.replace(f.result, severity="error"))
            if f.result.severity == "warning" and dict(f.result.tags).get("rule") == schema.ENV_HIDES else f
            for f in findings]


def failed_report(e: BuildError, builder: Builder, root: Root, name: str, config: krmconfig.Config,
                  build: Build) -> RootReport:
    """The report of a root that did not build: a build error, except that a
    root that needs the network, which is off, or that inflates Helm charts
    while --enable-helm is off, or that runs external plugins while
    --enable-alpha-plugins is off, is not checked, and that is no build
    failure (a ``remote`` warning at the entry that needs the network; for
    Helm charts and plugins, one warning for the run, krmcheck.pipeline.policy)."""
    policies = ((policy.LOAD_RESTRICTOR, build.outside),) if build.outside is not None else ()
    if isinstance(e, NeedsNetwork) and not config.require_network:
        broken = offline_defect(builder, root, config)
        # built offline, it may fail only for want of a flag, as a root that
        # needs no network does: that is policy, not a defect
        needed = tuple(n for n in (policy.helm_off(b, builder, root, name) or policy.plugins_off(b, builder, root, name)
                                   for b in broken) if n is not None)
        broken = broken if not needed else ()
        return RootReport(name, (), offline_findings(e, name, config) + deprecations(builder, name, config)
                          + tuple(build_finding(b, name) for b in broken),
                          needs_network=True, build_failed=bool(broken), policies=policies + needed)
    if isinstance(e, Encrypted):
        loc = e.location if e.location is not None and e.location.path else Location(name, 1, 1)
        message = f"not checked: {e.message}"
        return RootReport(name, (), (Finding(Result(message, "warning", tags=(("validator", ENCRYPTED),)), name, loc),)
                          + deprecations(builder, name, config), policies=policies)
    needs = policy.helm_off(e, builder, root, name) or policy.plugins_off(e, builder, root, name)
    if needs is not None:
        return RootReport(name, (), deprecations(builder, name, config), policies=policies + (needs,))
    written = written_at_run_time(e, builder, name) or filled_by_page(e, builder, name)
    if written is not None:
        return RootReport(name, (), (written,) + deprecations(builder, name, config), policies=policies)
    return RootReport(name, (), (build_finding(e, name),) + deprecations(builder, name, config),
                      build_failed=True, policies=policies)


def _page_words(builder: Builder, findings: list[Finding]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Word -> (the page that replaces it, the files its command names), for
    the words a page's ``sed`` replaces in a file one of ``findings`` lies
    in (:func:`applied.page_sed_words`)."""
    found = applied.page_sed_words(builder.files.repo_root, builder.files)
    if not found:
        return {}
    here = {f.location.path for f in findings if f.location is not None and f.location.path}
    return {word: (page, named) for word, (page, named) in found.items()
            if any(applied.named_by(path, named) for path in here)}


def offline_defect(builder: Builder, root: Root, config: krmconfig.Config) -> tuple[BuildError, ...]:
    """What else stops a root that needs the network from building: built
    again with every generator input named by URL read as empty, the error
    that build gives (a broken file the root reads fails the build whatever
    the download holds); nothing when it builds, or needs the network for
    more than a generator's input."""
    if isinstance(root, ControllerRoot) and root.helm is not None:
        return ()
    try:
        render_root(builder.offline_copy(), root, config, Build())
    except NeedsNetwork:
        return ()
    except BuildError as e:
        return (e,)
    return ()


WRITTEN = "written"  # the rule of a root reading a file a program of the repository writes
ENCRYPTED = "encrypted"  # the rule of a root reading a file the repository keeps encrypted


def written_at_run_time(e: BuildError, builder: Builder, name: str) -> Finding | None:
    """A root that reads a file the repository does not hold but one of its
    programs writes (a Makefile target, a test that writes an overlay), or
    that its ignore rules name (generated by its build: controller-gen's
    CRD bases), or a directory whose kustomization they name, is completed
    at run time, and one in a git submodule the checkout has not fetched is
    another repository's: not checked, and said at the
    entry, as a warning naming the program or the rule."""
    if not isinstance(e, MissingFile):
        return None
    top = builder.files.repo_root
    here = top / e.location.path if e.location is not None and e.location.path else None
    program = applied.written_by(top, e.path, e.path.parent, builder.files,
                                 here.parent if here is not None and here.name in applied.KUSTOMIZATION_FILES else None)
    if program is not None:
        why = (f"{program} writes it (names it, fills in its template, copies this directory elsewhere, or makes "
               f"the directory that holds it): the kustomization is completed when that program runs")
    else:
        from krmcheck import git  # (only a root that misses a file reads the ignore rules)

        rel = builder.files.display(e.path)
        module = git.unfetched_submodule(top, rel)
        if module is not None:
            loc = e.location if e.location and e.location.path else Location(name, 1, 1)
            message = (f"not checked: '{e.path.name}' lies in the git submodule {module} (.gitmodules), which this "
                       f"checkout has not fetched: `git submodule update --init` brings it")
            return Finding(Result(message, "warning", tags=(("validator", WRITTEN),)), name, loc)
        if git.ignored(top, [rel]):
            why = "the repository's ignore rules (.gitignore) name it: a file its build generates"
        elif git.ignored(top, [f"{rel}/{n}" for n in applied.KUSTOMIZATION_FILES]):
            # a directory whose kustomization the rules name (config/crd/kustomization.yaml): generated whole
            why = "the repository's ignore rules (.gitignore) name its kustomization: a directory its build generates"
        elif (page := applied.written_by_page(top, e.path, builder.files)) is not None:
            why = (f"{page} beside it has the reader write it first (a command's output redirected to it): the "
                   f"kustomization is completed when the page is followed")
        else:
            return None
    loc = e.location if e.location and e.location.path else Location(name, 1, 1)
    message = f"not checked: '{e.path.name}' does not exist in the repository, and {why}"
    return Finding(Result(message, "warning", tags=(("validator", WRITTEN),)), name, loc)


def filled_by_page(e: BuildError, builder: Builder, name: str) -> Finding | None:
    """A root that fails because a file it reads is not YAML as written, where
    the file holds a token with sigils that a page's ``sed`` replaces in the
    files it names (``sed -i "s|%SLACK_TOKEN%|$SLACK_TOKEN|g" secret.yaml``,
    then ``kustomize build .``): the page completes the file before the
    build, so the root is not checked, said at the file as a warning
    naming the page."""
    if e.location is None or not e.location.path or not re.search(r"(?:^|: )invalid YAML", e.message):
        return None
    where = e.location.path
    try:
        text = (builder.files.repo_root / where).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    for token, (page, named) in applied.page_sed_words(builder.files.repo_root, builder.files).items():
        if not token[0].isalnum() and token in text and applied.page_names(page, where, named):
            message = (f"not checked: {where} holds {token}, which {page} replaces with sed before the build "
                       f"(not YAML until then): the kustomization is completed when that command runs")
            return Finding(Result(message, "warning", tags=(("validator", WRITTEN),)), name, e.location)
    return None


def rendered_yaml(resources: list[Resource], builder: Builder, root: Root,
                  diff: kdiff.Context) -> tuple[tuple[ResourceRef, str, str, str], ...]:
    """Each resource's YAML for the diff: a Secret's values as keyed digests,
    and elsewhere, masked by provenance as findings are (redact.shown_tree):
    a value that came from a Secret is masked, a public value is shown even
    when a Secret holds the same text."""
    from krmcheck import diff as kdiff

    secrets = redact.Secrets(frozenset(builder.secrets), frozenset(builder.secret_places),
                             root.secret_values if isinstance(root, ControllerRoot) else frozenset())
    out = []
    for r in resources:
        node = redact.shown_tree(r.node, secrets)
        data, rendered = node.to_data(), r.node.to_data()
        if isinstance(data, dict) and isinstance(rendered, dict) and kdiff.is_secret(data):
            # its own values as digests of what they are, not of their masks
            data.update((k, rendered[k]) for k in kdiff.SECRET_FIELDS if k in rendered)
            text = yaml.safe_dump(kdiff.hide_secret_values(data, diff.secret_key), sort_keys=False)
        else:
            text = emit_all([node])
        out.append((ref_of(r), source_id(r), text, r.node.origin.path))
    return tuple(out)


def _source(files: Files) -> Callable[[str], str | None]:
    """A file's text by its repository path, None where it cannot be read."""
    def read(path: str) -> str | None:
        try:
            return files.read_text(files.repo_root / path)
        except (OSError, BuildError, UnicodeDecodeError):
            return None
    return read


def self_patched(findings: list[Finding], files: Files, root: Root) -> list[Finding]:
    """A file a kustomization lists both under ``resources`` and as a
    ``patches`` path is a partial object the build carries as a patch: the
    patch makes no change to itself, so the only reason to list it twice is
    that what is built is applied onto objects that exist already
    (``kustomize build DIR | kubectl apply -f -`` merges it into them). Its
    schema errors are warnings, with one info saying why."""
    if isinstance(root, ControllerRoot) or not os.path.isdir(root) or \
            not any(f.severity == "error" and f.result.validator == "schema" for f in findings):
        return findings  # (the kustomization is read again only where it may matter)
    try:
        k = kfile.load(root, files)
    except BuildError:
        return findings
    listed = {_entry(n) for n in k.seq("resources")}
    patches = {_entry(n.get("path") if isinstance(n, Mapping) else n)
               for n in k.seq("patches") + k.seq("patchesStrategicMerge")}
    both = {files.display(root / p) for p in listed & patches if p}
    if not both:
        return findings
    out, lowered = [], 0
    for f in findings:
        if f.severity == "error" and f.result.validator == "schema" and f.location.path in both:
            f = as_warning(f)
            lowered += 1
        out.append(f)
    if lowered:
        where = k.display
        note = Result(message=f"{lowered} schema {'error' if lowered == 1 else 'errors'} shown as warnings in files "
                              f"this kustomization lists both as resources and as patches: partial objects "
                              f"applied onto ones that exist already ({', '.join(sorted(both))})",
                      severity="info", tags=(("validator", "self-patch"),))
        out.append(Finding(note, next(f.root for f in findings), Location(where, 1, 1)))
    return out


def _entry(node: object) -> str:
    value = node.value if isinstance(node, Scalar) else None
    return os.path.normpath(value) if isinstance(value, str) and value else ""
