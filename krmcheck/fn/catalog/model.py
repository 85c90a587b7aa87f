"""A function catalog as read: its functions, their versions and the
runtimes of each (KEP-2906), and the source it was read from."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from krmcheck.tree.origin import Origin

API_VERSION = "config.kubernetes.io/v1alpha1"
KINDS = ("Catalog", "KRMFunctionCatalog")


@dataclass(frozen=True)
class Platform:
    """One downloadable executable of a function version."""

    os: str
    arch: str
    bin: str  # the executable's path inside the archive
    uri: str
    sha256: str  # lower-case hex, no "sha256:" prefix
    origin: Origin


@dataclass(frozen=True)
class Container:
    image: str
    sha256: str | None
    network: bool
    storage_mount: bool
    origin: Origin


@dataclass(frozen=True)
class Version:
    name: str
    container: Container | None
    platforms: tuple[Platform, ...]
    origin: Origin


@dataclass(frozen=True)
class Function:
    group: str
    kind: str
    publisher: str
    description: str
    versions: tuple[Version, ...]
    origin: Origin

    def version(self, name: str) -> Version | None:
        return next((v for v in self.versions if v.name == name), None)


@dataclass(frozen=True)
class Source:
    """Where a catalog was read from, and how paths written in it resolve."""

    identity: str  # what --trusted-catalog names
    display: str  # the file's name in origins and messages
    sha256: str  # digest of the catalog file, to pin or compare it
    base_url: str | None = None  # an http catalog: relative uris are URLs next to it
    base_dir: Path | None = None  # a file catalog: relative uris are files next to it...
    root: Path | None = None  # ...that must stay inside this directory
    # what owns ``root`` when it is a clone or a pull (removed when that goes)
    owner: object = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Catalog:
    name: str
    kind: str
    functions: tuple[Function, ...]
    source: Source
    origin: Origin

    def find(self, group: str, version: str, kind: str) -> tuple[Function, Version] | None:
        """The first function of this group and kind that has ``version``."""
        for function in self.functions:
            if function.group == group and function.kind == kind:
                found = function.version(version)
                if found is not None:
                    return function, found
        return None
