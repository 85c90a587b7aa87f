"""Validate: the built-in validators, the external ones, and what each root's schemas covered."""

from __future__ import annotations

import collections
import dataclasses
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING


from krmcheck.pipeline.run import Run, UsageError
from krmcheck import applied, cache
from krmcheck import config as krmconfig
from krmcheck import discover
from krmcheck.gitops.root import ControllerRoot, Root
from krmcheck.locate import Locator
from krmcheck.resource.files import Files
from krmcheck.resource.errors import BuildError
from krmcheck.resource.function import ExternalValidator
from krmcheck.results import Finding, ResourceRef, Result
from krmcheck.schemas import crds
from krmcheck.schemas.sources import SchemaSettings
from krmcheck.scope import PathPatterns, any_match
from krmcheck.tree.origin import Location
from krmcheck.validators import VALIDATORS, ValidatorOptions, schema

if TYPE_CHECKING:
    # What only some runs use is imported where it is used: a plain check of
    # kustomizations loads no git, no function runtime, no controller
    # rendering, no baseline, diff or merge code, and no worker pool unless
    # it starts workers (the render cache's hits build nothing at all).

    from krmcheck.kustomize.target import BuildOptions
    from krmcheck.resource.resource import Resource

from krmcheck.pipeline.render import render_root, shared_builders

def schema_settings(run: Run, selection: discover.Selection,
                     excludes: tuple[PathPatterns, ...], scan: discover.Scan | None = None) -> SchemaSettings:
    """Where schemas come from: the CRD files of the whole repository (a
    checked overlay's CRDs often live elsewhere), then ``--schema-location``
    (relative to the current directory) and the configuration's
    ``schema-locations``, then the cache."""
    opts, config, files = run.options, run.config, run.files

    def skip(path: Path, directory: bool) -> bool:
        return any_match(excludes, files.display(path), directory) is not None

    webhook_files: list[Path] = []
    searched = [p.resolve() for p in opts.paths if p.is_dir()]
    tests_apart = applied.TEST_INPUT in config.not_applied and opts.roots != ("all",)
    crd_files = tuple((str(p), files.display(p))
                      for p in discover.find_crd_files([files.repo_root], skip, scan, webhook_files)
                      if not (tests_apart and _tests_own(p, searched, files.repo_root)))
    given = opts.schema_locations  # (anchored: paths are absolute)
    chosen = given + config.schema_locations
    for location in chosen:
        from krmcheck.schemas import locations as schema_locations

        try:
            schema_locations.check_template(location)
        except schema_locations.LocationError as e:
            raise UsageError(f"--schema-location {e}") from None
    written: tuple[tuple[tuple[str, str], ...], tuple[str, ...]] = ((), ())
    if webhook_files:
        from krmcheck.schemas import webhooks

        written = webhooks.written_back(files.repo_root, [str(p) for p in webhook_files], [p for p, _ in crd_files])
    return SchemaSettings("", opts.strict, crd_files, (), chosen, str(cache.directory() / "schemas"),
                          opts.network, written[0], written[1])


def _tests_own(path: Path, searched: list[Path], top: Path) -> bool:
    """A CRD in a test directory is a test's input (an old version an
    upgrade test starts from, a fake the test serves): what the cluster
    serves is not judged by it. A directory the run is asked to check is
    judged in full, its tests' CRDs too."""
    base = next((d for d in searched if d == path.parent or d in path.parents), top)
    return applied.test_directory(path, base) is not None


def crds_rendered_beyond_files(run: Run, roots: list[Root],
                               settings: SchemaSettings) -> SchemaSettings:
    """The schema sources with the CRDs the roots render that no file of the
    repository holds, known before any root is validated. Only a remote
    base, a kustomize chart or a plugin can make such a CRD, so the roots are
    rendered for them only when a flag lets one run (the network, helm,
    plugins). A GitOps controller's chart root is not rendered twice for it:
    the CRDs a HelmRelease's chart installs give schemas where the
    repository holds them."""
    opts = run.options
    if not (opts.enable_helm or opts.network or opts.enable_alpha_plugins or opts.functions.enable_exec):
        return settings
    builders = shared_builders(run)
    rendered = []
    for root in roots:
        if isinstance(root, ControllerRoot) and root.helm is not None:
            continue
        try:
            resources = render_root(builders, root, run.config).resources
        except BuildError:
            continue  # its own check reports it
        rendered += [(json.dumps(r.node.to_data()), str(r.node.origin.location)) for r in resources
                     if crds.is_crd({"kind": r.kind, "apiVersion": r.api_version})]
    return dataclasses.replace(settings, rendered_crds=tuple(rendered)) if rendered else settings


def check_validator_options(vopts: ValidatorOptions) -> None:
    try:
        VALIDATORS["schema"].validate([], vopts)
    except ValueError as e:
        raise UsageError(str(e)) from None


def places(resources: list[Resource], locator: Locator) -> tuple[tuple[ResourceRef, Location, str], ...]:
    """Each object with the place its name is written, for the duplicate check
    (an object the API server names never collides with another)."""
    out = []
    for r in resources:
        if not r.name:
            continue
        found = locator.locate(Result(message="", resource_ref=ref_of(r), field_path="metadata.name"))
        out.append((found.result.resource_ref or ref_of(r), found.location, found.source_id))
    return tuple(out)


def coverage(resources: list[Resource], vopts: ValidatorOptions,
              config: krmconfig.Config) -> tuple[tuple[str, str, str, str, int], ...]:
    """Per kind: (apiVersion, kind, schema source, where, resources), source "" for none."""
    if not config.enabled(schema.id):
        return ()
    items = [r.node for r in resources]
    found = schema.coverage(items, config.options_for(schema.id, vopts))
    counts = collections.Counter((r.api_version, r.kind) for r in resources)
    return tuple((a, k, src, where, counts[(a, k)]) for (a, k), (src, where) in found.items())


def rendered_crds(resources: list[Resource]) -> tuple[tuple[str, str, str], ...]:
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


def external_results(files: Files, root: Root, resources: list[Resource], config: krmconfig.Config,
                     options: BuildOptions, name: str) -> tuple[list[Result], tuple[Finding, ...]]:
    """The Results of ``.krmcheck.yaml``'s external validators, then those of
    the root's Kptfile (with ``kptfile-validators: true``); and a warning at
    the declaration of each the command line did not allow to run."""
    declared = config.external_validators
    if isinstance(root, ControllerRoot):
        root = root.directory
    directory = root.parent if os.path.isfile(root) else root  # a plain manifest's directory
    if config.kptfile_validators and os.path.isdir(root):
        from krmcheck import kptfile

        declared += kptfile.validators(root, files.display(root))
    if not declared:
        return [], ()
    missing = {v.name: flags_missing(v, options) for v in declared}
    skipped = tuple(not_run(v, missing[v.name], name) for v in declared
                    if missing[v.name] and config.enabled(v.name))
    allowed = [v for v in declared if not missing[v.name]]
    if not allowed:
        return [], skipped
    from krmcheck.fn import external

    where = external.Environment(directory, dict(os.environ))
    return [r for v in allowed for r in external.validate(v, resources, where)], skipped


def flags_missing(validator: ExternalValidator, options: BuildOptions) -> tuple[str, ...]:
    """The flags a validator needs to run that the command line did not give.
    A validator is a program the repository names, and a pull request can
    name another: it runs only with the flag kustomize asks for before it
    runs such a program (an executable: --enable-exec; a container:
    --enable-alpha-plugins; a container's network: --network), never on the
    configuration's word alone."""
    spec = validator.spec
    if spec.exec_path:
        return () if options.functions.enable_exec else ("--enable-exec",)
    wanted = () if options.enable_alpha_plugins else ("--enable-alpha-plugins",)
    return wanted + (("--network",) if spec.network and not options.network else ())


def not_run(validator: ExternalValidator, flags: tuple[str, ...], root: str) -> Finding:
    """The warning, at its declaration, for a validator that was not run."""
    origin = validator.origin
    at = Location(origin.path, origin.line, origin.col) if origin is not None and origin.path else Location(root, 1, 1)
    base = os.path.basename(at.path)
    named_in = "a Kptfile" if base == "Kptfile" else base
    message = (f"validator {validator.name} was not run: a program {named_in} names runs only with "
               f"{' and '.join(flags)} (give {'it' if len(flags) == 1 else 'them'} where {named_in} is trusted: "
               f"a pull request can change what it runs)")
    return Finding(Result(message, "warning", tags=(("validator", validator.name),)), root, at)


def validate_resources(resources: list[Resource], vopts: ValidatorOptions,
                       config: krmconfig.Config) -> list[Result]:
    from krmcheck.tree.node import Mapping
    from krmcheck.validators.base import deleted_by_controller, make_result

    items: list[Mapping] = []
    deleted: list[tuple[Mapping, tuple[str, str]]] = []
    for r in resources:
        marker = deleted_by_controller(r.node)
        if marker is None:
            items.append(r.node)
        else:
            deleted.append((r.node, marker))
    results: list[Result] = []
    if deleted:  # what a controller deletes by name is never created: one note per root
        (first, (written, meaning)), count = deleted[0], len(deleted)
        results.append(make_result("deleted", first, f"{count} object{'s' if count > 1 else ''} annotated "
                                   f"{written} not judged: {meaning}", "", severity="info"))
    for vid, validator in VALIDATORS.items():
        if config.enabled(vid):
            results.extend(validator.validate(items, config.options_for(vid, vopts)))
    return results


def ref_of(r: Resource) -> ResourceRef:
    return ResourceRef(r.api_version, r.kind, r.name, r.namespace)
