"""The configs a kustomization lists under ``generators:``, ``transformers:``
and ``validators:``: a config, the context it runs in, the Protocol every
way of running one satisfies, and how a layer runs them (:class:`LayerPlugins`).

Builtin kinds (``apiVersion: builtin``) run in process
(``krmcheck.kustomize.builtins.kinds``). Any other config is an external
plugin: without ``--enable-alpha-plugins`` it is kustomize's "external
plugins disabled" error; with it, it runs through :class:`ExternalPlugins`,
an interface the build owns and the function runtime implements
(``krmcheck.fn.loader``: KRM functions, legacy exec plugins, functions
listed in catalogs). Whoever makes a build passes one in
(``BuildOptions.plugins``): the build never imports the function runtime.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Mapping as MappingType, Protocol

from krmcheck import journal
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resid import Gvk, same_id
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Origin

if TYPE_CHECKING:
    from krmcheck.kustomize.kustomization import Kustomization
    from krmcheck.results import Result

GENERATOR = "generator"
TRANSFORMER = "transformer"
# kustomize runs a config as builtin when its group is empty and its version
# is this word: ``apiVersion: builtin`` (or ``/builtin``).
BUILTIN_VERSION = "builtin"
# kustomize's default time limit for a function is none; krmcheck never waits forever.
DEFAULT_FN_TIMEOUT = 60.0
# kustomize keeps this label out of its "validator changed something" check.
VALIDATED_BY = "validated-by"


@dataclass(frozen=True)
class Config:
    """One plugin configuration object, as listed by a kustomization.

    ``node`` keeps the origins of the file (or the inline block) it was
    written in; ``entry`` is the line of the ``generators:``/``transformers:``
    /``validators:`` entry that brought it in.
    """

    node: Mapping
    entry: Origin

    @property
    def gvk(self) -> Gvk:
        api = self.node.value("apiVersion")
        kind = self.node.value("kind")
        return Gvk.from_api_version(api if isinstance(api, str) else "",
                                    kind if isinstance(kind, str) else "")

    @property
    def kind(self) -> str:
        return self.gvk.kind

    @property
    def name(self) -> str:
        md = self.node.mapping("metadata")
        name = md.value("name") if md is not None else None
        return "" if name is None else str(name)

    @property
    def is_builtin(self) -> bool:
        gvk = self.gvk
        return gvk.group == "" and gvk.version == BUILTIN_VERSION

    @property
    def at(self) -> Origin:
        """Where to point a message about this config: the object itself."""
        return self.node.origin if self.node.origin.path else self.entry

    def describe(self) -> str:
        api = self.node.value("apiVersion")
        return f"{self.kind} '{self.name}' (apiVersion {api or '<none>'})"


@dataclass(frozen=True)
class FunctionOptions:
    """The command line's say over external plugins and functions (kubectl's
    flags, plus kustomize's --enable-exec); see :class:`Context`."""

    env: MappingType[str, str] | None = None  # None: this process' environment
    enable_exec: bool = False
    network_name: str = ""
    mounts: tuple[str, ...] = ()
    envs: tuple[str, ...] = ()
    as_current_user: bool = False
    fn_timeout: float = DEFAULT_FN_TIMEOUT


@dataclass(frozen=True)
class Context:
    """Where a config runs: the kustomization that lists it, and the flags."""

    kdir: Path
    files: Files
    restrictor: str
    enable_alpha_plugins: bool = False
    enable_helm: bool = False
    helm_command: str = "helm"
    # What external plugins and functions see and may do. ``env`` is the
    # environment of the build (plugin home lookup, PATH for docker, the
    # exec plugin's own environment): callers pass it, nobody reads os.environ.
    env: MappingType[str, str] = field(default_factory=dict)
    enable_exec: bool = False  # run KRM exec functions (kustomize's flag; kubectl lacks it)
    network: bool = False  # functions that declare network: true may have it
    network_name: str = ""  # accepted like kubectl's --network-name, which it does not use
    mounts: tuple[str, ...] = ()  # --mount specs added to every container function
    envs: tuple[str, ...] = ()  # -e/--env K=V or K for every container function
    as_current_user: bool = False  # run containers as uid:gid instead of nobody
    fn_timeout: float = DEFAULT_FN_TIMEOUT  # seconds per plugin or function run
    role: str = TRANSFORMER  # generator or transformer (validators run as transformers)
    # Where function Results go (with the output resource they name, if any):
    # kustomize ignores them for the build's success; krmcheck reports them.
    results: list[tuple["Result", Resource | None]] = field(default_factory=list)
    # What each plugin or function wrote to stderr, by what ran (kubectl passes it through).
    logs: list[tuple[str, str]] = field(default_factory=list)
    # Reads a generator input that is an http(s) URL: (url, what, origin) -> bytes
    fetch_file: Callable[[str, str, Origin], bytes] | None = None

    def using(self, options: FunctionOptions, network: bool,
              results: list[tuple["Result", Resource | None]],
              logs: list[tuple[str, str]] | None = None) -> "Context":
        """This context with the build's function options, Results and stderr sinks."""
        env = dict(os.environ) if options.env is None else options.env
        return replace(self, env=env, enable_exec=options.enable_exec, network=network,
                       network_name=options.network_name, mounts=options.mounts,
                       envs=options.envs, as_current_user=options.as_current_user,
                       fn_timeout=options.fn_timeout, results=results,
                       logs=self.logs if logs is None else logs)


class Plugin(Protocol):
    """A way to run one kind of config.

    ``roles`` says which fields may list it (kustomize refuses a builtin
    generator under ``transformers:`` and the reverse; an external plugin
    can be both). As a generator, ``run`` gets no resources and returns
    what it made; as a transformer (or validator) it gets the current
    resources and returns the new list.
    """

    roles: ClassVar[frozenset[str]]

    def run(self, config: Config, ctx: Context, resources: list[Resource]) -> list[Resource]: ...


class ExternalPlugins(Protocol):
    """What runs the configs that are not builtin, and the function catalogs
    (KEP-2906) a kustomization lists. The build owns this interface; the
    function runtime implements it (``krmcheck.fn.loader.PluginLoader``)."""

    def check_catalogs(self, k: Kustomization, files: Files) -> None:
        """Fail on the first catalog that ``k`` (which lists some) may not use."""
        ...

    def resolve(self, config: Config, ctx: Context, k: Kustomization) -> Plugin:
        """The plugin that runs ``config``, an external config ``k`` lists."""
        ...


@dataclass(frozen=True)
class NoExternalPlugins:
    """The external plugins of a build that was given no function runtime:
    none, so a catalog or an external config is an error."""

    def check_catalogs(self, k: Kustomization, files: Files) -> None:
        raise BuildError("catalogs list functions, and this build runs none", k.seq("catalogs")[0].origin)

    def resolve(self, config: Config, ctx: Context, k: Kustomization) -> Plugin:
        raise BuildError(f"unable to load external plugin '{config.kind}': this build runs no "
                         f"external plugins", config.entry)


@dataclass(frozen=True)
class LayerPlugins:
    """Runs the configs one kustomization lists, passing their errors on
    with the config's location."""

    k: Kustomization
    ctx: Context
    external: ExternalPlugins
    # the builtin plugin kinds by kind (builtins/kinds.py), given by the build
    builtins: Callable[[], MappingType[str, Plugin]] = lambda: {}

    def generate(self, config: Config) -> list[Resource]:
        """What a ``generators:`` config makes."""
        return self._run(config, GENERATOR, [])

    def transform(self, config: Config, resources: list[Resource]) -> list[Resource]:
        """The resource list after a ``transformers:`` config."""
        return self._run(config, TRANSFORMER, resources)

    def validate(self, config: Config, resources: list[Resource]) -> None:
        """Run a ``validators:`` config on a copy; like kustomize, it fails the
        build by failing, and may not change, add or drop a resource."""
        before = [r.copy() for r in resources]
        after = self._run(config, TRANSFORMER, [r.copy() for r in resources])
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

    def resolve(self, config: Config, role: str) -> Plugin:
        """The plugin that runs ``config`` in ``role`` (generator or transformer)."""
        if config.is_builtin:
            plugin = self.builtins().get(config.kind)
            if plugin is None:
                raise BuildError(f"unable to load builtin {config.kind}: kustomize has no builtin "
                                 f"plugin of kind '{config.kind}'", config.entry)
        elif not self.ctx.enable_alpha_plugins:
            raise BuildError(f"external plugins disabled; unable to load external plugin "
                             f"'{config.kind}' (enable them with --enable-alpha-plugins)", config.entry)
        else:
            plugin = self.external.resolve(config, self.ctx, self.k)
        if role not in plugin.roles:
            raise BuildError(f"plugin {config.describe()} is not a {role}", config.entry)
        return plugin

    def _run(self, config: Config, role: str, resources: list[Resource]) -> list[Resource]:
        if not config.is_builtin and self.ctx.enable_alpha_plugins:
            journal.impure("a plugin")  # what it prints is not known before it runs
        plugin = self.resolve(config, role)
        try:
            return plugin.run(config, replace(self.ctx, role=role), resources)
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
