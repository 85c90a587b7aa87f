"""Render: a root's resources as what is applied (the build's boundary: any failure is a
BuildError naming the root, never a traceback), and the builders a run makes."""

from __future__ import annotations

import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence


from krmcheck.pipeline.run import Run
from krmcheck import config as krmconfig
from krmcheck import gitops
from krmcheck.gitops.root import ControllerRoot, Root
from krmcheck.kustomize import deprecation
from krmcheck.kustomize.kustomization import find_file
from krmcheck.resource.errors import BuildError, NeedsNetwork, ProgramError
from krmcheck.resource.files import REPOSITORY, ROOT_ONLY, Files, OutsideRoot
from krmcheck.results import NOT_CHECKED, Finding, Result
from krmcheck.tree.origin import Location

if TYPE_CHECKING:
    # What only some runs use is imported where it is used: a plain check of
    # kustomizations loads no git, no function runtime, no controller
    # rendering, no baseline, diff or merge code, and no worker pool unless
    # it starts workers (the render cache's hits build nothing at all).

    from krmcheck.fn.loader import PluginLoader
    from krmcheck.kustomize.target import Builder
    from krmcheck.resource.resource import Resource



CONTROLLER_PREFIXES = ("flux:", "flux-helm:", "argocd:")

def build_root(builder: Builder, directory: Path) -> list[Resource]:
    """``Builder.build``, where any failure becomes a BuildError: this is the
    boundary at which a defect in krmcheck turns into one clear message
    naming the root, never a traceback."""
    try:
        return builder.load_manifest(directory, as_kubectl=True) if os.path.isfile(directory) \
            else builder.build(directory)
    except BuildError:
        raise
    except RecursionError:
        raise BuildError(f"{directory}: the kustomizations nest too deeply") from None
    except Exception as e:  # noqa: BLE001 - the named boundary described above
        raise BuildError(f"internal error in krmcheck while building {directory}: "
                         f"{type(e).__name__}: {e} (please report this)") from None


def warning_lines(builder: Builder) -> str:
    return "".join(f"{w.line}\n" for w in builder.warnings)


def plugin_loader(files: Files, trusted: Sequence[str], network: bool,
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


def make_builder(run: Run, restrictor: str = "") -> Builder:
    from krmcheck.kustomize.target import BuildOptions, Builder

    opts, files, config = run.options, run.files, run.config
    return Builder(files, BuildOptions(restrictor or opts.load_restrictor or ROOT_ONLY, opts.network,
                                       opts.enable_alpha_plugins,
                                       opts.enable_helm, opts.helm_command, functions=opts.functions,
                                       plugins=plugin_loader(files, opts.trusted_catalogs,
                                                              opts.network, config)))


@dataclass
class Build:
    """How ``render_root`` built a root: each builder that built it, the last
    the one whose resources or error it gave, and where the root first read
    outside its directory when it was built again with the load restrictor
    lifted (``lifted``)."""

    builders: list[Builder] = field(default_factory=list)
    outside: Location | None = None


def render_root(builder: "Builder | Builders", root: Root, config: krmconfig.Config,
                build: Build | None = None) -> gitops.Rendered:
    """A root's resources as what is applied: a controller root through its
    controller; a kustomization or manifest as kubectl would render it, with
    the configuration's ``substitute:`` variables for its templates.

    A kustomization root given no load restrictor (``Builders.unset``) that
    reads a file outside its directory, which kustomize refuses by default,
    is built again with the restrictor lifted within the repository
    (``lifted``), as the repositories that always build with
    ``--load-restrictor LoadRestrictionsNone`` (Flux does) build it; that it
    needs it is policy, not a defect (``build.outside`` says where; the run
    says it once, krmcheck.pipeline.policy). A file outside the repository
    is never read so: the refusal stands."""
    if isinstance(builder, Builders):
        builder = builder.for_root(root)
    build = build if build is not None else Build()
    build.builders.append(builder)
    try:
        return _render(builder, root, config)
    except OutsideRoot as e:
        again = None if e.fixed else lifted(builder)
        if again is None:
            raise
        build.builders.append(again)
        try:
            rendered = _render(again, root, config)
        except BuildError as lifted_error:
            if outside_repository(lifted_error):
                raise e from None  # the refusal, which says how to allow it
            build.outside = outside_at(e, builder.files, root)
            raise
        build.outside = outside_at(e, builder.files, root)
        return rendered


def _render(builder: Builder, root: Root, config: krmconfig.Config) -> gitops.Rendered:
    if isinstance(root, ControllerRoot):
        from krmcheck.gitops.render import render as gitops_render

        try:
            return gitops_render(builder, root)
        except BuildError:
            raise
        except RecursionError:
            raise BuildError(f"{root.name}: the kustomizations nest too deeply") from None
        except Exception as e:  # noqa: BLE001 - the named boundary, as in build_root
            raise BuildError(f"internal error in krmcheck while rendering {root.name}: "
                             f"{type(e).__name__}: {e} (please report this)") from None
    resources = build_root(builder, root)
    return gitops.templates(resources, config.substitute)


def outside_at(e: OutsideRoot, files: Files, root: Root) -> Location:
    """The entry that read outside the root's directory (the root's
    kustomization file when the error does not say)."""
    if e.location is not None and e.location.path:
        return e.location
    return Location(kustomization_file(files, root), 1, 1)


def outside_repository(e: BuildError) -> bool:
    """The refusal of a file outside the repository under the restrictor of
    ``lifted`` (resource/files.check_restriction)."""
    return type(e) is BuildError and e.message.startswith("security; file ") \
        and "' is outside the repository" in e.message


UNSET = ""  # Builders.made's key for the builder of roots given no load restrictor
_UNSET_OWNERS: "weakref.WeakValueDictionary[int, Builders]" = weakref.WeakValueDictionary()


def lifted(builder: Builder) -> Builder | None:
    """The builder to build a root again with when ``builder``, the one for
    kustomization roots given no load restrictor (``Builders.unset``),
    refused a file outside the root's directory: the load restrictor lifted
    within the repository (LoadRestrictionsNone, and the repository's
    bounds, as a Flux build has), never beyond, so that no setting but one
    a person wrote lets a kustomization read the rest of the machine. None
    for any other builder: a load restrictor that was given is kept."""
    owner = _UNSET_OWNERS.get(id(builder))
    if owner is None or owner.made.get(UNSET) is not builder:
        return None
    return owner.get(REPOSITORY)


class Builders:
    """One Builder per load restrictor (Flux builds with LoadRestrictionsNone)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.opts, self.files, self.config = run.options, run.files, run.config
        self.made: dict[str, Builder] = {}

    def for_root(self, root: Root) -> Builder:
        """A controller root's builder has the controller's load restrictor; a
        kustomization's (and a controller root's whose controller the
        repository does not configure) has --load-restrictor when given,
        else what .krmcheck.yaml sets for its directory, else RootOnly
        (``unset``)."""
        if isinstance(root, ControllerRoot):
            if root.restrictor:
                return self.get(root.restrictor)
            root = root.directory  # a controller configured elsewhere: as its directory's kustomization
        given = self.opts.load_restrictor or self.config.restrictor_for(self.files.display(root))
        return self.get(given) if given else self.unset()

    def unset(self) -> Builder:
        """The builder of kustomization roots that neither --load-restrictor
        nor .krmcheck.yaml gives a load restrictor: RootOnly, kustomize's
        default; a root whose file outside its directory it refuses is built
        again with the builder ``lifted`` gives for it."""
        if UNSET not in self.made:
            builder = self.made[UNSET] = make_builder(self.run, ROOT_ONLY)
            _UNSET_OWNERS[id(builder)] = self
        return self.made[UNSET]

    def get(self, restrictor: str) -> Builder:
        key = restrictor or self.opts.load_restrictor or ROOT_ONLY  # (never UNSET)
        if key not in self.made:
            self.made[key] = make_builder(self.run, key)
        return self.made[key]


def deprecations(builder: Builder, root: str, config: krmconfig.Config) -> tuple[Finding, ...]:
    """kubectl's deprecation warnings as info findings, once per field of a file
    (kubectl repeats them each time a base is included)."""
    if not config.enabled(deprecation.VALIDATOR):
        return ()
    seen = {(w.field, w.origin.location): w for w in builder.warnings}
    tags = (("validator", deprecation.VALIDATOR),)
    return tuple(Finding(Result(message=w.message, severity="info", tags=tags), root, loc)
                 for (_, loc), w in seen.items())


def kustomization_file(files: Files, root: Root) -> str:
    if isinstance(root, ControllerRoot):
        return root.origin.path  # the controller object's file
    if os.path.isfile(root):
        return files.display(root)  # a plain manifest
    found = find_file(root)
    return files.display(found) if found else files.display(root / "kustomization.yaml")


def build_finding(e: BuildError, root: str) -> Finding:
    if isinstance(e, OutsideRoot):
        e.allow_also("set `load-restrictor: LoadRestrictionsNone` for it in .krmcheck.yaml")
    loc = e.location if e.location and e.location.path else Location(root, 1, 1)
    message = str(e)
    prefix = f"{e.location}: " if e.location else ""
    if prefix and message.startswith(prefix):
        message = message[len(prefix):]
    result = Result(message=message, severity="error", tags=(("validator", "build"),),
                    by_program=isinstance(e, ProgramError))
    return Finding(result, root, loc)


def offline_findings(e: NeedsNetwork, root: str, config: krmconfig.Config) -> tuple[Finding, ...]:
    """A root that needs the network, which is off, is not checked: one
    warning at the entry that needs it, worded alike in every root that
    reaches the entry, so that it is one defect naming them all."""
    if not config.enabled(NOT_CHECKED):
        return ()
    loc = e.location if e.location and e.location.path else Location(root, 1, 1)
    message = (f"not checked: {e.what} '{e.url}' needs the network, which is off by default; "
               f"pass --network to fetch it (--require-network makes this a build error)")
    return (Finding(Result(message=message, severity="warning", tags=(("validator", NOT_CHECKED),)), root, loc),)


def shared_builders(run: Run) -> Builders:
    """The run's builders in this process: a base, or a chart a kustomization
    inflates, rendered once for the CRD pass and the check alike (a worker
    process, given the run without its memo, makes its own)."""
    return run.memo.get(("builders", run.top, run.options), lambda: Builders(run))
