"""Which function runs a config that names no runtime: the trusted
catalogs of its kustomization layer searched in order, the first function
of its group, version and kind chosen, and an exec runtime for this
platform preferred to a container."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

from krmcheck.fn.catalog.install import install
from krmcheck.fn.catalog.model import Catalog, Container, Function, Version
from krmcheck.fn.catalog.sources import CatalogRef, load_catalog, reference
from krmcheck.fn.catalog_context import CatalogContext
from krmcheck.resource.function import FunctionSpec, Mount
from krmcheck.kustomize.kustomization import Kustomization
from krmcheck.kustomize.plugins import Config
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.tree.node import Scalar

# kustomize's annotation for an explicit runtime, and its older spelling.
FUNCTION_ANNOTATIONS = ("config.kubernetes.io/function", "config.k8s.io/function")
# Where a container function that asks for storage sees its kustomization directory.
STORAGE_MOUNT_TARGET = "/workspace"
_SEMVER_TAG = re.compile(r"v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?")


# --- a layer's catalogs ------------------------------------------------------------------

@dataclass(frozen=True)
class LayerCatalogs:
    """The catalogs one kustomization layer lists, trusted, read on first use
    (a catalog nobody needs is never fetched, as the KEP asks)."""

    refs: tuple[CatalogRef, ...]
    context: CatalogContext

    def load(self) -> tuple[Catalog, ...]:
        return tuple(self._catalog(ref) for ref in self.refs)

    def _catalog(self, ref: CatalogRef) -> Catalog:
        """A catalog, read once per run (the run's store keeps it)."""
        return self.context.store.catalog(ref.identity, lambda: load_catalog(ref, self.context))

    def resolve(self, config: Config) -> FunctionSpec:
        return resolve_from_catalogs(config, self.load(), self.context)


def for_layer(k: Kustomization, files: Files, ctx: CatalogContext) -> LayerCatalogs:
    """The ``catalogs:`` of ``k``; an error on the first one not trusted."""
    refs = []
    for entry in k.seq("catalogs"):
        if not isinstance(entry, Scalar) or not isinstance(entry.value, str) or not entry.value.strip():
            raise BuildError("a catalogs entry must be a path, an http(s) URL, a git reference "
                             "or an oci:// reference", entry.origin)
        ref = reference(entry.value, k.directory, files, entry.origin)
        if ref.identity not in ctx.trusted:
            raise BuildError(f"catalog '{entry.value}' is not trusted: review it with `krmcheck "
                             f"catalog view {ref.identity}`, then pass --trusted-catalog "
                             f"{ref.identity} to run the functions it lists", entry.origin)
        refs.append(ref)
    return LayerCatalogs(tuple(refs), replace(ctx, layer=k.directory))


# --- resolution --------------------------------------------------------------------------

def has_explicit_runtime(config: Config) -> bool:
    """The config says itself how to run it; catalogs are not consulted."""
    md = config.node.mapping("metadata")
    ann = md.mapping("annotations") if md is not None else None
    return ann is not None and any(ann.value(a) not in (None, "") for a in FUNCTION_ANNOTATIONS)


def resolve_from_catalogs(config: Config, catalogs: Sequence[Catalog],
                          ctx: CatalogContext) -> FunctionSpec:
    """How to run ``config``, from the first catalog that has its group,
    version and kind. The caller has checked that the config names no
    runtime of its own."""
    gvk = config.gvk
    for catalog in catalogs:
        found = catalog.find(gvk.group, gvk.version, gvk.kind)
        if found is not None:
            return _spec(catalog, found[0], found[1], ctx)
    raise BuildError(_no_match(config, catalogs), config.at)


def _no_match(config: Config, catalogs: Sequence[Catalog]) -> str:
    gvk = config.gvk
    what = f"{config.describe()} has no runtime (no {FUNCTION_ANNOTATIONS[0]} annotation)"
    if not catalogs:
        return f"{what} and its kustomization lists no catalogs"
    searched = ", ".join(c.source.display for c in catalogs)
    other = [f"{c.source.display} has it in version {', '.join(v.name for v in f.versions)}"
             for c in catalogs for f in c.functions if f.group == gvk.group and f.kind == gvk.kind]
    hint = f" ({'; '.join(other)})" if other else ""
    return (f"{what} and no catalog has a function for kind '{gvk.kind}' in "
            f"{gvk.api_version}; searched {searched}{hint}")


def _spec(catalog: Catalog, function: Function, version: Version, ctx: CatalogContext) -> FunctionSpec:
    os_name, arch = ctx.platform
    chosen = next((p for p in version.platforms if (p.os, p.arch) == (os_name, arch)), None)
    if chosen is not None:
        return FunctionSpec(exec_path=str(install(chosen, catalog.source, ctx)), origin=chosen.origin)
    if version.container is not None:
        return _container_spec(version.container, ctx)
    have = ", ".join(f"{p.os}/{p.arch}" for p in version.platforms)
    raise BuildError(f"function {function.kind} {version.name} in catalog {catalog.source.display} "
                     f"has no executable for {os_name}/{arch} (only {have}) and no container image",
                     version.origin)


def _container_spec(c: Container, ctx: CatalogContext) -> FunctionSpec:
    mounts: tuple[Mount, ...] = ()
    if c.storage_mount:
        if ctx.layer is None:
            raise BuildError(f"{c.image} asks for a storage mount, but no kustomization "
                             f"directory is known to mount", c.origin)
        mounts = (Mount("bind", str(ctx.layer), STORAGE_MOUNT_TARGET),)
    return FunctionSpec(image=pinned_image(c), network=c.network, mounts=mounts, origin=c.origin)


def pinned_image(c: Container) -> str:
    """The image with its digest. KEP-2906 asks for a digest when the tag is
    a semantic version (a tag that people expect to be immutable)."""
    name, at, digest = c.image.partition("@")
    if at:
        if c.sha256 and digest.lower() != f"sha256:{c.sha256}":
            raise BuildError(f"image '{c.image}' is pinned to {digest}, but the catalog's "
                             f"sha256 says sha256:{c.sha256}", c.origin)
        return c.image
    if c.sha256:
        return f"{c.image}@sha256:{c.sha256}"
    tag = name.rsplit("/", 1)[-1].partition(":")[2]
    if _SEMVER_TAG.fullmatch(tag):
        raise BuildError(f"image '{c.image}' has a version tag but no sha256: a catalog must pin "
                         f"it by digest", c.origin)
    return c.image
