"""Function catalogs (KEP-2906): find how to run a function config that
names no runtime.

A kustomization lists catalogs under ``catalogs:`` (a local file, an
http(s) URL, a git reference or an ``oci://`` reference). A catalog
(``kind: Catalog`` or ``KRMFunctionCatalog``, apiVersion
``config.kubernetes.io/v1alpha1``; schema in ``catalog_schema.json``) lists
functions by group and kind, and for each version a container image and/or
executables per platform. kustomize never shipped this; the KEP is the spec,
and where it leaves a choice open the choice is written down here:

* A catalog reference is local to its kustomization layer (a base's
  catalogs do not serve the overlay, nor the reverse).
* An explicit runtime on the config (``config.kubernetes.io/function``)
  wins; otherwise the layer's catalogs are searched in the order listed and,
  inside a catalog, functions in the order written: the first whose group,
  kind and version match runs the config.
* Trust is explicit for every catalog, local files included: a pull request
  can add or edit a catalog file as easily as a remote one, and trusting a
  catalog means downloading and running what it names. A reference that
  ``--trusted-catalog`` does not name is an error as soon as its layer is
  built, before anything of that layer runs or is fetched. The value must
  name the catalog as the kustomization does: the same URL or reference, or
  a path to the same file.
* Nothing goes over the network without ``--network`` (as for remote
  resources); plain ``http://`` is refused for catalogs except on loopback,
  since a catalog is what the digests come from. Executables may come over
  http because their sha256 is checked.
* An exec runtime for this machine's os/arch is preferred to a container
  (it needs no container engine and is pinned by its sha256).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import posixpath
import re
import shutil
import stat
import urllib.parse
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from krmcheck.fn.catalog_context import CatalogContext as CatalogContext
from krmcheck.fn.catalog_context import Store as Store
from krmcheck.fn.catalog_context import default_cache_dir as default_cache_dir
from krmcheck.fn.catalog_context import host_platform as host_platform
from krmcheck.fn.spec import FunctionSpec, Mount
from krmcheck.kustomize import remote, repospec
from krmcheck.kustomize.kustomization import Kustomization
from krmcheck.kustomize.plugins import Config
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files, inside
from krmcheck.tree import fieldpath
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence as SeqNode
from krmcheck.tree.origin import Origin

if TYPE_CHECKING:  # imported where used: a build whose kustomizations list no catalog needs none
    import tarfile

    import jsonschema

API_VERSION = "config.kubernetes.io/v1alpha1"
KINDS = ("Catalog", "KRMFunctionCatalog")
# kustomize's annotation for an explicit runtime, and its older spelling.
FUNCTION_ANNOTATIONS = ("config.kubernetes.io/function", "config.k8s.io/function")
# Where a container function that asks for storage sees its kustomization directory.
STORAGE_MOUNT_TARGET = "/workspace"
TIMEOUT = 60.0  # seconds for one download

LOCAL, HTTP, GIT, OCI = "local", "http", "git", "oci"
_SEMVER_TAG = re.compile(r"v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?")
# Values that must stay text although they may look like numbers (a digest of digits).
_STRING_KEYS = frozenset({"sha256", "name", "bin", "uri", "image", "group", "kind"})


# --- the model --------------------------------------------------------------------

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


# --- references and trust ---------------------------------------------------------------

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


@dataclass(frozen=True)
class LayerCatalogs:
    """The catalogs one kustomization layer lists, trusted, read on first use
    (a catalog nobody needs is never fetched, as the KEP asks)."""

    refs: tuple[CatalogRef, ...]
    context: CatalogContext

    def load(self) -> tuple[Catalog, ...]:
        return tuple(self.context.store.catalog(ref, self.context) for ref in self.refs)

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


# --- resolution ----------------------------------------------------------------------

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


# --- exec runtimes: download, verify, unpack, cache ------------------------------------

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
        _require_network(uri, ctx, p.origin)
        with tempfile.TemporaryDirectory(prefix="oci-", dir=_mkdir(ctx.cache)) as tmp:
            return oci.single_file(uri, oci.pull(uri, Path(tmp), p.origin), p.origin).read_bytes()
    if repospec.is_http_url(uri):
        _require_network(uri, ctx, p.origin)
        return _http_get(uri, p.origin)
    if "://" in uri or posixpath.isabs(uri):
        raise BuildError(f"uri '{uri}' must be an https://, http:// or oci:// URL or a path "
                         f"relative to the catalog", p.origin)
    if source.base_url is not None:
        url = urllib.parse.urljoin(source.base_url, uri)
        _require_network(url, ctx, p.origin)
        return _http_get(url, p.origin)
    return _relative_file(uri, source, p.origin)


def _relative_file(uri: str, source: Source, origin: Origin) -> bytes:
    assert source.base_dir is not None and source.root is not None  # set for every file catalog
    path = Path(os.path.abspath(source.base_dir / uri))
    if not inside(path, source.root, resolve=True):
        raise BuildError(f"uri '{uri}' leaves the catalog's repository", origin)
    try:
        return path.read_bytes()
    except OSError as e:
        raise BuildError(f"uri '{uri}': {e.strerror or 'cannot read'} ({path.name})", origin) from None


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


# --- reading catalogs -------------------------------------------------------------------

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
        return path.read_bytes()
    except FileNotFoundError:
        raise BuildError(f"catalog {display}: no such file", origin) from None
    except OSError as e:
        raise BuildError(f"catalog {display}: {e.strerror or 'cannot read'}", origin) from None


def _read_http(ref: CatalogRef, ctx: CatalogContext) -> tuple[bytes, Source]:
    parsed = urllib.parse.urlsplit(ref.text)
    if parsed.scheme.lower() == "http" and not _is_loopback(parsed.hostname or ""):
        raise BuildError(f"catalog '{ref.text}': a catalog is fetched over https only (plain "
                         f"http is allowed on loopback addresses)", ref.origin)
    _require_network(ref.text, ctx, ref.origin)
    data = _http_get(ref.text, ref.origin)
    return data, _source(ref.text, ref.text, data, base_url=ref.text)


def _read_git(ref: CatalogRef, ctx: CatalogContext) -> tuple[bytes, Source]:
    spec = repospec.parse_repo_spec(ref.text)
    if not spec.is_local:
        _require_network(ref.text, ctx, ref.origin)
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

    _require_network(ref.text, ctx, ref.origin)
    dest = ctx.store.remotes.directory(f"oci\0{ref.text}")  # removed when the run ends
    path = oci.single_file(ref.text, oci.pull(ref.text, dest, ref.origin), ref.origin)
    data = path.read_bytes()
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


def _require_network(what: str, ctx: CatalogContext, origin: Origin | None) -> None:
    if not remote.network_allowed(ctx.network):
        raise BuildError(f"'{what}' needs the network, which is off by default; pass --network "
                         f"or set {remote.NETWORK_ENV}=1 to fetch it", origin)


def _http_get(url: str, origin: Origin | None) -> bytes:
    from krmcheck import download

    try:
        return download.get(url, TIMEOUT)
    except download.StatusError as e:
        raise BuildError(f"fetching '{url}': HTTP status {e.code} ({e.reason})", origin) from None
    except download.GetError as e:
        raise BuildError(f"fetching '{url}': {e.reason}", origin) from None


def parse(data: bytes, source: Source) -> Catalog:
    """A catalog from the bytes of its file; errors at the file's lines."""
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    try:
        docs = load_documents(text, source.display, by="catalog")
    except LoadError as e:
        raise BuildError(e.message, Origin(e.path, e.line, e.col)) from None
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        at = docs[1].origin if len(docs) > 1 else (docs[0].origin if docs else Origin(source.display, 1, 1))
        raise BuildError(f"catalog {source.display} must hold exactly one Catalog object", at)
    _validate(docs[0], source.display)
    return _catalog(docs[0], source)


# --- validation -------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    import jsonschema

    schema = json.loads(Path(__file__).with_name("catalog_schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def _validate(doc: Mapping, display: str) -> None:
    from krmcheck.schemas import errors as schema_errors

    errors = [(schema_errors.error_node(doc, e), e) for e in _validator().iter_errors(_data(doc))]
    if not errors:
        return
    errors.sort(key=lambda pair: (pair[0].origin.line, pair[0].origin.col))
    node, error = errors[0]
    where = fieldpath.dotted(error.absolute_path) or "the document"
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    raise BuildError(f"invalid catalog {display}: {where}: {_message(error)}{more}", node.origin)


def _data(node: Node) -> Any:
    """Plain data to validate; strings where the schema wants text although
    the YAML spelling looks like a number (``sha256: 0123...``)."""
    if isinstance(node, Mapping):
        return {k: (v.as_string() if k in _STRING_KEYS and isinstance(v, Scalar)
                    and v.value is not None and not isinstance(v.value, bool) else _data(v))
                for k, v in node.items.items()}
    if isinstance(node, SeqNode):
        return [_data(v) for v in node.items]
    return node.to_data()


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "pattern" and list(error.absolute_path)[-1:] == ["sha256"]:
        return f"{error.instance!r} is not a sha256 digest (64 hexadecimal digits)"
    if error.validator == "additionalProperties":
        from krmcheck.schemas.errors import unexpected_keys

        allowed = sorted(error.schema.get("properties", {})) if isinstance(error.schema, dict) else []
        extra = unexpected_keys(error)
        return f"unknown field {', '.join(repr(k) for k in extra)} (known: {', '.join(allowed)})"
    if error.validator == "minProperties" and list(error.absolute_path)[-1:] == ["runtime"]:
        return "a runtime needs container, exec or both"
    return error.message


# --- building the model ----------------------------------------------------------------

def _catalog(doc: Mapping, source: Source) -> Catalog:
    md = doc.mapping("metadata")
    name = md.value("name") if md is not None else None
    spec = doc.mapping("spec")
    seq = spec.sequence("krmFunctions") if spec is not None else None
    functions = tuple(_function(n) for n in (seq.items if seq is not None else []) if isinstance(n, Mapping))
    return Catalog(str(name or ""), str(doc.value("kind")), functions, source, doc.origin)


def _function(node: Mapping) -> Function:
    names = node.mapping("names")
    seq = node.sequence("versions")
    versions = tuple(_version(v) for v in (seq.items if seq is not None else []) if isinstance(v, Mapping))
    return Function(_text(node, "group"), _text(names, "kind") if names else "", _text(node, "publisher"),
                    _text(node, "description"), versions, node.origin)


def _version(node: Mapping) -> Version:
    runtime = node.mapping("runtime")
    container = runtime.mapping("container") if runtime is not None else None
    exec_node = runtime.mapping("exec") if runtime is not None else None
    platforms = exec_node.sequence("platforms") if exec_node is not None else None
    return Version(_text(node, "name"), _container(container) if container is not None else None,
                   tuple(_platform(p) for p in (platforms.items if platforms else []) if isinstance(p, Mapping)),
                   node.origin)


def _container(node: Mapping) -> Container:
    sha = _text(node, "sha256")
    return Container(_text(node, "image"), _digest(sha) if sha else None,
                     node.value("requireNetwork") is True, node.value("requireStorageMount") is True,
                     node.origin)


def _platform(node: Mapping) -> Platform:
    return Platform(_text(node, "os"), _text(node, "arch"), _text(node, "bin"), _text(node, "uri"),
                    _digest(_text(node, "sha256")), node.origin)


def _text(node: Mapping, key: str) -> str:
    child = node.items.get(key)
    return child.as_string() if isinstance(child, Scalar) else ""


def _digest(text: str) -> str:
    return text.lower().removeprefix("sha256:")


# --- viewing ------------------------------------------------------------------------------

def view_lines(catalog: Catalog) -> list[str]:
    """What ``krmcheck catalog view`` prints: enough to decide on trust."""
    src = catalog.source
    lines = [f"{catalog.kind} {catalog.name or '(unnamed)'}",
             f"  location: {src.display}",
             f"  sha256:   {src.sha256}",
             f"  trust it: --trusted-catalog {src.identity}",
             f"functions: {len(catalog.functions)}"]
    for f in catalog.functions:
        lines.append(f"- {f.kind} ({f.group or 'core'})")
        lines.append(f"    publisher:   {f.publisher}")
        if f.description:
            lines.append(f"    description: {f.description}")
        for v in f.versions:
            lines.append(f"    version {v.name} (apiVersion {f.group + '/' if f.group else ''}{v.name}):")
            lines.extend(_runtime_lines(v))
    return lines


def _runtime_lines(v: Version) -> list[str]:
    out = []
    if v.container is not None:
        c = v.container
        needs = [w for w, on in (("network", c.network), ("storage mount", c.storage_mount)) if on]
        digest = f"sha256:{c.sha256}" if c.sha256 else "(no sha256)"
        out.append(f"      container {c.image}  {digest}"
                   f"{'  needs ' + ' and '.join(needs) if needs else ''}")
    for p in v.platforms:
        out.append(f"      exec {p.os}/{p.arch}  {p.bin} from {p.uri}  sha256:{p.sha256}")
    return out
