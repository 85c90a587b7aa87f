"""Plugin runtime: find what runs a config, run it as a generator,
transformer or validator, and pass its errors on with the config's location.

Builtin kinds (``apiVersion: builtin``) run in process (``krmcheck.kustomize.builtins.kinds``).
Any other config is an external plugin: without ``--enable-alpha-plugins``
it is kustomize's "external plugins disabled" error; with it, a config
naming a KRM function runs that function (``krm.py``), any other runs the
legacy exec plugin of its kind (``exec_plugin.py``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from krmcheck import render_cache
from krmcheck.kustomize.plugins import GENERATOR, TRANSFORMER, Config, Context, FunctionOptions, Plugin
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import same_id
from krmcheck.resource.wire import strip_wire_annotations

if TYPE_CHECKING:
    from krmcheck.resource.resource import Resource

# The function runtime, the builtin plugin table, the exec and container
# transports and the catalogs are imported by resolve(): a build whose
# kustomizations name no plugin loads none of them.

__all__ = ["Config", "Context", "FunctionOptions", "Plugin", "resolve", "generate", "transform",
           "validate", "strip_wire_annotations"]

# kustomize keeps this label out of its "validator changed something" check.
VALIDATED_BY = "validated-by"


def resolve(config: Config, ctx: Context, role: str) -> Plugin:
    """The plugin that runs ``config`` in ``role`` (generator or transformer)."""
    from krmcheck.fn import catalog, krm
    from krmcheck.kustomize.builtins.kinds import BUILTIN_KINDS
    from krmcheck.fn.exec_plugin import ExecPlugin

    if config.is_builtin:
        plugin = BUILTIN_KINDS.get(config.kind)
        if plugin is None:
            raise BuildError(f"unable to load builtin {config.kind}: kustomize has no builtin "
                             f"plugin of kind '{config.kind}'", config.entry)
    elif not ctx.enable_alpha_plugins:
        raise BuildError(f"external plugins disabled; unable to load external plugin "
                         f"'{config.kind}' (enable them with --enable-alpha-plugins)", config.entry)
    else:
        spec = krm.spec_of(config, ctx.kdir)
        if spec is None and ctx.catalogs is not None and ctx.catalogs.refs:
            spec = catalog.resolve_from_catalogs(config, ctx.catalogs.load(), ctx.catalogs.context)
        plugin = krm.KrmFunction(spec) if spec is not None else ExecPlugin()
    if role not in plugin.roles:
        raise BuildError(f"plugin {config.describe()} is not a {role}", config.entry)
    return plugin


def generate(config: Config, ctx: Context) -> list[Resource]:
    """What a ``generators:`` config makes."""
    return _run(config, ctx, GENERATOR, [])


def transform(config: Config, ctx: Context, resources: list[Resource]) -> list[Resource]:
    """The resource list after a ``transformers:`` config."""
    return _run(config, ctx, TRANSFORMER, resources)


def validate(config: Config, ctx: Context, resources: list[Resource]) -> None:
    """Run a ``validators:`` config on a copy; like kustomize, it fails the
    build by failing, and may not change, add or drop a resource."""
    before = [r.copy() for r in resources]
    after = _run(config, ctx, TRANSFORMER, [r.copy() for r in resources])
    if config.is_builtin:
        if not _same(before, after):
            raise BuildError(f"validator shouldn't modify the resource map: {config.describe()} "
                             f"changed the resources", config.entry)
        return
    # kustomize re-reads an external validator's output and compares the
    # parsed nodes, source positions included, with the resources it had:
    # any resource given back, even unchanged, fails; new ones are dropped.
    returned = [r for r in after if any(same_id(r.id(), old.id()) for old in before)]
    if returned:
        names = ", ".join(r.id().describe() for r in returned)
        raise BuildError(f"validator shouldn't modify the resource map: nodes unequal: "
                         f"{config.describe()} printed {names}, which it was given; a validator "
                         f"must print nothing (or only an empty item list)", config.entry)


def _run(config: Config, ctx: Context, role: str, resources: list[Resource]) -> list[Resource]:
    if not config.is_builtin and ctx.enable_alpha_plugins:
        render_cache.impure("a plugin")  # what it prints is not known before it runs
    plugin = resolve(config, ctx, role)
    try:
        return plugin.run(config, replace(ctx, role=role), resources)
    except BuildError as e:
        if e.location is None:
            e.location = config.at.location
        raise e.add_context(f"running {role} {config.describe()} listed at {config.entry.location}")


def _same(before: list[Resource], after: list[Resource]) -> bool:
    if len(before) != len(after):
        return False
    for old in before:
        match = [r for r in after if same_id(r.id(), old.id())]
        if len(match) != 1 or _data(match[0]) != _data(old):
            return False
    return True


def _data(res: Resource) -> object:
    data = res.node.to_data()
    labels = data.get("metadata", {}).get("labels") if isinstance(data, dict) else None
    if isinstance(labels, dict):
        labels.pop(VALIDATED_BY, None)
    return data
