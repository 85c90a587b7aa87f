"""What every plugin runtime shares: a plugin config, the context it runs in,
and the one Protocol a runtime (builtin, exec, container...) satisfies."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Mapping as MappingType, Protocol

from krmcheck.resource.files import Files
from krmcheck.resource.resid import Gvk
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Origin

if TYPE_CHECKING:
    from krmcheck.fn.catalog import LayerCatalogs
    from krmcheck.results import Result

GENERATOR = "generator"
TRANSFORMER = "transformer"
# kustomize runs a config as builtin when its group is empty and its version
# is this word: ``apiVersion: builtin`` (or ``/builtin``).
BUILTIN_VERSION = "builtin"
# kustomize's default time limit for a function is none; krmcheck never waits forever.
DEFAULT_FN_TIMEOUT = 60.0


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
    # The function catalogs of the kustomization layer the config belongs to (KEP-2906).
    catalogs: "LayerCatalogs | None" = None

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
