"""What resolving functions through catalogs may do in one run: the
catalogs ``--trusted-catalog`` trusts, the network, the cache, this
machine's platform and the run's store of catalogs read. Every build is
given one; the catalogs themselves (the :mod:`krmcheck.fn.catalog`
package) are imported only by a build whose kustomizations list some.
"""

from __future__ import annotations

import platform as host
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from krmcheck import cache
from krmcheck.kustomize import remote

if TYPE_CHECKING:
    from krmcheck.fn.catalog.model import Catalog

_GOOS = {"linux": "linux", "darwin": "darwin", "win32": "windows", "cygwin": "windows"}
_GOARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


@dataclass
class Store:
    """Per-run memory: catalogs read once, git clones shared, installs serialised."""

    remotes: remote.Remotes = field(default_factory=remote.Remotes)
    _catalogs: dict[str, Catalog] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def catalog(self, identity: str, load: Callable[[], Catalog]) -> Catalog:
        """The catalog ``identity`` names, loaded once per run."""
        with self._lock:
            if identity not in self._catalogs:
                self._catalogs[identity] = load()
            return self._catalogs[identity]

    def locked(self) -> threading.RLock:
        return self._lock


def host_platform() -> tuple[str, str]:
    """This machine as (GOOS, GOARCH), the names catalogs use."""
    machine = host.machine().lower()
    return _GOOS.get(sys.platform, sys.platform), _GOARCH.get(machine, machine)


def default_cache_dir() -> Path:
    return cache.directory()


@dataclass(frozen=True)
class CatalogContext:
    """What resolving through catalogs may do, for one run (and one layer)."""

    trusted: frozenset[str] = frozenset()  # identities given by --trusted-catalog
    network: bool = False  # may fetch (also KRMCHECK_NETWORK=1)
    cache_dir: Path | None = None  # None: $XDG_CACHE_HOME/krmcheck or ~/.cache/krmcheck
    platform: tuple[str, str] = field(default_factory=host_platform)
    layer: Path | None = None  # the kustomization directory, mounted for requireStorageMount
    store: Store = field(default_factory=Store, compare=False, repr=False)

    @property
    def cache(self) -> Path:
        return self.cache_dir if self.cache_dir is not None else default_cache_dir()
