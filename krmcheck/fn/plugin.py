"""What every plugin runtime shares: a plugin config, the context it runs in,
and the one Protocol a runtime (builtin, exec, container...) satisfies."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol

from krmcheck.kustomize.files import Files
from krmcheck.kustomize.resource import Gvk, Resource
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Origin

GENERATOR = "generator"
TRANSFORMER = "transformer"
# kustomize runs a config as builtin when its group is empty and its version
# is this word: ``apiVersion: builtin`` (or ``/builtin``).
BUILTIN_VERSION = "builtin"


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
class Context:
    """Where a config runs: the kustomization that lists it, and the flags."""

    kdir: Path
    files: Files
    restrictor: str
    enable_alpha_plugins: bool = False
    enable_helm: bool = False
    helm_command: str = "helm"


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
