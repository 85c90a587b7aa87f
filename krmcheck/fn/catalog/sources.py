"""Where catalogs come from: a ``catalogs:`` entry (or a command-line
location) classified as a local file, an http(s) URL, a git reference or an
``oci://`` reference, and the catalog it names fetched and read. Nothing
goes over the network without ``--network``; a catalog is fetched over
https only, except on loopback."""

from __future__ import annotations

import hashlib
import os
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from krmcheck.fn.catalog.model import Catalog, Source
from krmcheck.fn.catalog.parse import parse
from krmcheck.fn.catalog_context import CatalogContext
from krmcheck.kustomize import remote, repospec
from krmcheck.resource.errors import BuildError, NeedsNetwork
from krmcheck.resource.files import Files, inside, read_bounded
from krmcheck.tree.origin import Origin

TIMEOUT = 60.0  # seconds for one download

LOCAL, HTTP, GIT, OCI = "local", "http", "git", "oci"


# --- references and trust ----------------------------------------------------------------

@dataclass(frozen=True)
class CatalogRef:
    """One ``catalogs:`` entry (or a command-line location), classified."""

    text: str
    kind: str  # LOCAL | HTTP | GIT | OCI
    identity: str  # a local file's repo-relative name; otherwise the text itself
    path: Path | None = None  # LOCAL: the file
    root: Path | None = None  # LOCAL: relative uris in it must stay inside this
    origin: Origin | None = None


def reference(text: str, base_dir: Path, files: Files, origin: Origin | None) -> CatalogRef:
    """Classify a catalog location written in ``base_dir`` (a kustomization
    directory, or the current directory for a command-line value).

    An http(s) URL is a single file unless it carries kustomize's git markers
    (``repo//path`` or ``?ref=``); a ``file://``, ``ssh://``, ``git@`` or
    ``github.com/...`` location is git unless a local file has that name."""
    from krmcheck.fn import oci

    text = text.strip()
    if oci.is_reference(text):
        return CatalogRef(text, OCI, text, origin=origin)
    if repospec.is_http_url(text):
        return CatalogRef(text, GIT if _git_marked(text) else HTTP, text, origin=origin)
    path = Path(os.path.abspath(base_dir / text))
    if not path.is_file() and _is_git(text):
        return CatalogRef(text, GIT, text, origin=origin)
    return CatalogRef(text, LOCAL, files.display(path), path, files.repo_root, origin)


def _git_marked(url: str) -> bool:
    rest = url.split("://", 1)[1]
    path, _, query = rest.partition("?")
    keys = {part.partition("=")[0] for part in query.split("&")}
    return "//" in path or bool(keys & {"ref", "version"})


def _is_git(text: str) -> bool:
    try:
        repospec.parse_repo_spec(text)
    except repospec.NotARepo:
        return False
    return True


def trust_keys(values: Sequence[str], files: Files, cwd: Path) -> frozenset[str]:
    """The identities ``--trusted-catalog`` values give trust to (paths are
    taken relative to the current directory)."""
    return frozenset(reference(v, cwd, files, None).identity for v in values if v.strip())


# --- reading catalogs --------------------------------------------------------------------

def load_catalog(ref: CatalogRef, ctx: CatalogContext) -> Catalog:
    """Fetch, validate and read the catalog ``ref`` names."""
    data, source = _read(ref, ctx)
    return parse(data, source)


def _read(ref: CatalogRef, ctx: CatalogContext) -> tuple[bytes, Source]:
    if ref.kind == LOCAL:
        assert ref.path is not None
        data = _read_file(ref.path, ref.identity, ref.origin)
        return data, _source(ref.identity, ref.identity, data, base_dir=ref.path.parent, root=ref.root)
    if ref.kind == HTTP:
        return _read_http(ref, ctx)
    if ref.kind == GIT:
        return _read_git(ref, ctx)
    return _read_oci(ref, ctx)


def _source(identity: str, display: str, data: bytes, **where: Any) -> Source:
    return Source(identity, display, hashlib.sha256(data).hexdigest(), **where)


def _read_file(path: Path, display: str, origin: Origin | None) -> bytes:
    try:
        return read_bounded(path)
    except FileNotFoundError:
        raise BuildError(f"catalog {display}: no such file", origin) from None
    except OSError as e:
        raise BuildError(f"catalog {display}: {e.strerror or 'cannot read'}", origin) from None


def _read_http(ref: CatalogRef, ctx: CatalogContext) -> tuple[bytes, Source]:
    parsed = urllib.parse.urlsplit(ref.text)
    if parsed.scheme.lower() == "http" and not _is_loopback(parsed.hostname or ""):
        raise BuildError(f"catalog '{ref.text}': a catalog is fetched over https only (plain "
                         f"http is allowed on loopback addresses)", ref.origin)
    require_network(ref.text, ctx, ref.origin)
    data = http_get(ref.text, ref.origin)
    return data, _source(ref.text, ref.text, data, base_url=ref.text)


def _read_git(ref: CatalogRef, ctx: CatalogContext) -> tuple[bytes, Source]:
    spec = repospec.parse_repo_spec(ref.text)
    if not spec.is_local:
        require_network(ref.text, ctx, ref.origin)
    try:
        clone = ctx.store.remotes.clone(spec)
    except BuildError as e:
        raise BuildError(f"fetching catalog {ref.text}: {e.message}", ref.origin) from None
    except Exception as e:  # dulwich and its transports raise many types; this is the boundary
        raise BuildError(f"fetching catalog {ref.text}: {type(e).__name__}: {e}", ref.origin) from None
    path = Path(os.path.abspath(clone / spec.path))
    # below the clone, and not the clone itself (a directory is no catalog file)
    if not spec.path or not inside(path, clone, resolve=True) or inside(clone, path, resolve=True):
        raise BuildError(f"catalog '{ref.text}' must name a file inside the repository "
                         f"(repo//path/to/catalog.yaml)", ref.origin)
    data = _read_file(path, spec.display(spec.path), ref.origin)
    return data, _source(ref.text, spec.display(spec.path), data, base_dir=path.parent, root=clone,
                         owner=ctx.store.remotes)


def _read_oci(ref: CatalogRef, ctx: CatalogContext) -> tuple[bytes, Source]:
    from krmcheck.fn import oci

    require_network(ref.text, ctx, ref.origin)
    dest = ctx.store.remotes.directory(f"oci\0{ref.text}")  # removed when the run ends
    path = oci.single_file(ref.text, oci.pull(ref.text, dest, ref.origin), ref.origin)
    try:
        data = read_bounded(path)
    except OSError as e:
        raise BuildError(f"catalog {ref.text}: {e.strerror or 'cannot read'}", ref.origin) from None
    return data, _source(ref.text, ref.text, data, base_dir=path.parent, root=dest,
                         owner=ctx.store.remotes)


def _is_loopback(hostname: str) -> bool:
    import ipaddress

    if hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def require_network(what: str, ctx: CatalogContext, origin: Origin | None,
                    kind: str = "function catalog") -> None:
    """``what`` (a URL or reference of a ``kind`` of download) may be fetched."""
    if not remote.network_allowed(ctx.network):
        raise NeedsNetwork(f"'{what}' needs the network, which is off by default; pass --network "
                           f"or set {remote.NETWORK_ENV}=1 to fetch it", origin, kind, what)


def http_get(url: str, origin: Origin | None) -> bytes:
    from krmcheck import download

    try:
        return download.get(url, TIMEOUT)
    except download.StatusError as e:
        raise BuildError(f"fetching '{url}': HTTP status {e.code} ({e.reason})", origin) from None
    except download.GetError as e:
        raise BuildError(f"fetching '{url}': {e.reason}", origin) from None
