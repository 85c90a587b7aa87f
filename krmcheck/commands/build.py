"""``krmcheck build DIR``: what ``kubectl kustomize DIR`` prints, or what a GitOps
controller applies for one of its roots (``flux:NS/NAME``...)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence, TextIO


from krmcheck.pipeline.run import CheckOptions, UsageError, anchored
from krmcheck.pipeline.report import EXIT_BROKEN, EXIT_OK
from krmcheck import discover
from krmcheck import redact
from krmcheck.gitops.root import ControllerRoot
from krmcheck.kustomize.plugins import FunctionOptions
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.tree.emit import emit_all

if TYPE_CHECKING:
    # What only some runs use is imported where it is used: a plain check of
    # kustomizations loads no git, no function runtime, no controller
    # rendering, no baseline, diff or merge code, and no worker pool unless
    # it starts workers (the render cache's hits build nothing at all).

    from krmcheck.kustomize.target import Builder

from krmcheck.pipeline.render import Builders, CONTROLLER_PREFIXES, build_root, plugin_loader, render_root, warning_lines
from krmcheck.pipeline.run import start
from krmcheck.pipeline.select import excludes_of, selection_of, with_controller_roots

def run(directory: Path, restrictor: str, out: TextIO, err: TextIO,
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
                                          plugins=plugin_loader(files, trusted, network)))
    if controller:
        return _controller_root(str(directory), builder, files, out, err, here)
    try:
        resources = build_root(builder, directory)
    except BuildError as e:
        # the rendered output holds the Secrets; a message never does
        err.write(warning_lines(builder) + f"Error: {redact.text(str(e), frozenset(builder.secrets))}\n")
        return EXIT_BROKEN
    err.write(warning_lines(builder))  # kubectl warns on stderr as it loads each kustomization
    out.write(emit_all([r.node for r in resources]))
    return EXIT_OK


def _controller_root(name: str, builder: Builder, files: Files, out: TextIO, err: TextIO,
                           here: Path) -> int:
    """``krmcheck build flux:NS/NAME``: what the controller applies for one of
    the controller roots found under the current directory."""
    given = builder.options  # the flags of `krmcheck build`, for the controller's own builder too
    opts = anchored(CheckOptions(load_restrictor=given.load_restrictor, network=given.network,
                                 enable_alpha_plugins=given.enable_alpha_plugins, enable_helm=given.enable_helm,
                                 helm_command=given.helm_command, functions=given.functions), here)
    try:
        run = start(opts)[0]
        excludes = excludes_of(run)
        selection = selection_of(run, excludes)
        found = [r for r in with_controller_roots(run, selection, excludes)
                 if isinstance(r, ControllerRoot) and r.name == name]
    except UsageError as e:
        err.write(f"Error: {e}\n")
        return EXIT_BROKEN
    if not found:
        err.write(f"Error: {name}: no such GitOps controller root under the current directory\n")
        return EXIT_BROKEN
    builders = Builders(run)
    builders.made[builder.options.load_restrictor] = builder
    root_builder = builders.for_root(found[0])
    try:
        rendered = render_root(builders, found[0], run.config)
    except BuildError as e:
        err.write(f"Error: {redact.text(str(e), frozenset(root_builder.secrets))}\n")
        return EXIT_BROKEN
    for p in rendered.problems:
        err.write(redact.text(f"Warning: {p.origin.location}: {p.message}\n", frozenset(root_builder.secrets)))
    out.write(emit_all([r.node for r in rendered.resources]))
    return EXIT_OK
