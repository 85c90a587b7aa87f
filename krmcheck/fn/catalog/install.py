"""Exec runtimes: the executable a catalog names for this platform,
downloaded, checked against its sha256, unpacked and kept in the cache
(``<cache>/functions/<sha256>/``)."""

from __future__ import annotations

import hashlib
import io
import os
import posixpath
import shutil
import stat
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING

from krmcheck.fn.catalog.model import Platform, Source
from krmcheck.fn.catalog.sources import http_get, require_network
from krmcheck.fn.catalog_context import CatalogContext
from krmcheck.kustomize import repospec
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import inside, read_bounded
from krmcheck.tree.origin import Origin

if TYPE_CHECKING:  # imported where used: only an exec runtime in an archive needs it
    import tarfile

RUNTIME = "function runtime"  # what a download here is, in messages


def install(p: Platform, source: Source, ctx: CatalogContext) -> Path:
    """The executable of ``p``, downloaded and verified once into the cache
    (``<cache>/functions/<sha256>/``, the archive unpacked)."""
    final = ctx.cache / "functions" / p.sha256
    with ctx.store.locked():
        if not final.is_dir():
            data = _runtime_bytes(p, source, ctx)
            actual = hashlib.sha256(data).hexdigest()
            if actual != p.sha256:
                raise BuildError(f"{p.uri} has sha256 {actual}, but the catalog says {p.sha256}: "
                                 f"refusing to run it", p.origin)
            _unpack_into(final, data, p)
    return _executable(final, p)


def _unpack_into(final: Path, data: bytes, p: Platform) -> None:
    """Unpack next to ``final`` and rename: another process may race us."""
    import tempfile

    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=final.parent))
    try:
        _unpack(data, tmp, p)
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _unpack(data: bytes, target: Path, p: Platform) -> None:
    import tarfile

    if data[:2] != b"\x1f\x8b":  # not gzip: the download is the executable itself
        _inside(target, p.bin, p).write_bytes(data)
        return
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            _extract(tar, target)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise BuildError(f"cannot unpack {p.uri} as tar.gz: {e}", p.origin) from None


def _extract(tar: tarfile.TarFile, target: Path) -> None:
    import tarfile

    if hasattr(tarfile, "data_filter"):
        # refuses absolute paths, "..", links out of the target and devices
        tar.extractall(target, filter="data")
        return
    for member in tar.getmembers():  # Pythons before the filters: files and directories only
        name = posixpath.normpath(member.name)
        if not (member.isfile() or member.isdir()) or posixpath.isabs(name) or name.startswith(".."):
            raise tarfile.TarError(f"refusing member '{member.name}'")
    tar.extractall(target)  # noqa: S202 (members checked above)


def _executable(root: Path, p: Platform) -> Path:
    exe = _inside(root, p.bin, p)
    if not exe.is_file():
        held = sorted(x.relative_to(root).as_posix() for x in root.rglob("*") if x.is_file())
        raise BuildError(f"the archive {p.uri} has no file '{p.bin}' (it holds "
                         f"{', '.join(held[:10]) or 'nothing'})", p.origin)
    mode = exe.stat().st_mode
    if not mode & stat.S_IXUSR:
        exe.chmod(mode | stat.S_IXUSR)
    return exe.resolve()


def _inside(root: Path, rel: str, p: Platform) -> Path:
    if not inside(rel, os.curdir, resolve=False):  # the archive is not unpacked yet
        raise BuildError(f"bin '{rel}' must be a path inside the archive", p.origin)
    path = root / posixpath.normpath(rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _runtime_bytes(p: Platform, source: Source, ctx: CatalogContext) -> bytes:
    import tempfile

    from krmcheck.fn import oci

    uri = p.uri
    if oci.is_reference(uri):
        require_network(uri, ctx, p.origin, RUNTIME)
        with tempfile.TemporaryDirectory(prefix="oci-", dir=_mkdir(ctx.cache)) as tmp:
            return oci.single_file(uri, oci.pull(uri, Path(tmp), p.origin), p.origin).read_bytes()
    if repospec.is_http_url(uri):
        require_network(uri, ctx, p.origin, RUNTIME)
        return http_get(uri, p.origin)
    if "://" in uri or posixpath.isabs(uri):
        raise BuildError(f"uri '{uri}' must be an https://, http:// or oci:// URL or a path "
                         f"relative to the catalog", p.origin)
    if source.base_url is not None:
        url = urllib.parse.urljoin(source.base_url, uri)
        require_network(url, ctx, p.origin, RUNTIME)
        return http_get(url, p.origin)
    return _relative_file(uri, source, p.origin)


def _relative_file(uri: str, source: Source, origin: Origin) -> bytes:
    assert source.base_dir is not None and source.root is not None  # set for every file catalog
    path = Path(os.path.abspath(source.base_dir / uri))
    if not inside(path, source.root, resolve=True):
        raise BuildError(f"uri '{uri}' leaves the catalog's repository", origin)
    try:
        return read_bounded(path)
    except OSError as e:
        raise BuildError(f"uri '{uri}': {e.strerror or 'cannot read'} ({path.name})", origin) from None


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
