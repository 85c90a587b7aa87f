"""Render: a root's resources as what is applied (the build's boundary: any failure is a
BuildError naming the root, never a traceback), and the builders a run makes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence


from krmcheck.pipeline.run import Run
from krmcheck import config as krmconfig
from krmcheck import gitops
from krmcheck.gitops.root import ControllerRoot, Root
from krmcheck.kustomize import deprecation
from krmcheck.kustomize.kustomization import find_file
from krmcheck.resource.errors import BuildError, NeedsNetwork
from krmcheck.resource.files import ROOT_ONLY, Files, OutsideRoot
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
        return builder.load_manifest(directory) if os.path.isfile(directory) else builder.build(directory)
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


def render_root(builder: "Builder | Builders", root: Root, config: krmconfig.Config) -> gitops.Rendered:
    """A root's resources as what is applied: a controller root through its
    controller; a kustomization or manifest as kubectl would render it, with
    the configuration's ``substitute:`` variables for its templates."""
    if isinstance(builder, Builders):
        builder = builder.for_root(root)
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


class Builders:
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
    result = Result(message=message, severity="error", tags=(("validator", "build"),))
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
