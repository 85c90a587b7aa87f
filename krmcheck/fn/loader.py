"""The function runtime's side of the build's plugin interface
(:class:`krmcheck.kustomize.plugins.ExternalPlugins`), which the pipeline
passes to every build it makes.

A config naming a KRM function runs that function (``krm.py``); one whose
kind a catalog of its kustomization lists runs what the catalog says
(the ``catalog`` package, KEP-2906); any other runs the legacy exec plugin of its
kind (``exec_plugin.py``). Those modules, the wire format and the
transports are imported when a config first needs them: a build whose
kustomizations list no external plugin and no catalog loads none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from krmcheck.fn.catalog_context import CatalogContext
from krmcheck.kustomize.plugins import Config, Context, Plugin
from krmcheck.resource.files import Files

if TYPE_CHECKING:
    from krmcheck.kustomize.kustomization import Kustomization


@dataclass(frozen=True)
class PluginLoader:
    """Runs external plugins and functions; ``catalogs`` says which catalogs
    are trusted and where they are kept, for the run."""

    catalogs: CatalogContext = field(default_factory=CatalogContext)

    def check_catalogs(self, k: Kustomization, files: Files) -> None:
        """An error on the first catalog of ``k`` not trusted."""
        from krmcheck.fn.catalog.resolve import for_layer

        for_layer(k, files, self.catalogs)

    def resolve(self, config: Config, ctx: Context, k: Kustomization) -> Plugin:
        from krmcheck.fn import krm
        from krmcheck.fn.catalog.resolve import for_layer
        from krmcheck.fn.exec_plugin import ExecPlugin

        spec = krm.spec_of(config, ctx.kdir)
        if spec is None and k.seq("catalogs"):
            spec = for_layer(k, ctx.files, self.catalogs).resolve(config)
        return krm.KrmFunction(spec) if spec is not None else ExecPlugin()
