"""Remote resources, bases and components: git repositories and plain URLs,
fetched; and the http(s) URLs of generator inputs, downloaded.

An entry that :mod:`krmcheck.kustomize.repospec` reads as a git URL is
cloned; for resources, an http(s) URL of a single file is downloaded, as
is a ``configMapGenerator``/``secretGenerator`` ``files``/``envs``/``env``
URL (kustomize's file loader takes URLs wherever it reads a file).
Repositories are fetched with dulwich (never a git binary), at depth 1 when
the server allows it, into a per-run cache directory keyed by (url, ref).
Nothing is fetched over the network unless the user allowed it
(``--network`` or ``KRMCHECK_NETWORK=1``; else :class:`NeedsNetwork`);
``file://`` repositories are local and always allowed. Downloads go through
:mod:`krmcheck.download`, bounded in size and time.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from krmcheck import journal
from krmcheck.kustomize.repospec import DEFAULT_TIMEOUT, NotARepo, RepoSpec, is_http_url, parse_repo_spec
from krmcheck.resource.errors import BuildError, NeedsNetwork
from krmcheck.resource.files import Files, inside, join
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Origin

NETWORK_ENV = "KRMCHECK_NETWORK"


# --- naming fetched files -------------------------------------------------------------

@dataclass(frozen=True)
class RemoteFiles(Files):
    """Files of a clone or a download, named in origins by the URL they came from."""

    spec: RepoSpec | None = None  # None: ``repo_root`` is one downloaded file
    url: str = ""

    @property
    def root_only(self) -> bool:
        return True  # kustomize forces LoadRestrictionsRootOnly in clones

    def display(self, path: Path) -> str:
        rel = os.path.relpath(path, self.repo_root)
        if rel == os.curdir:
            rel = ""
        if rel.startswith(os.pardir) or os.path.isabs(rel):
            return super().display(path)
        if self.spec is None:
            return self.url
        return self.spec.display(Path(rel).as_posix())


def check_contained(files: Files, path: Path, origin: Origin) -> None:
    """A base inside a cloned repository must stay inside it (kustomize's rule)."""
    if not isinstance(files, RemoteFiles) or files.spec is None:
        return
    if not inside(path, files.repo_root, resolve=True):
        raise BuildError(f"security; bases in kustomizations found in cloned git repos must be "
                         f"within the repo, but base '{path.name}' is outside "
                         f"'{files.spec.clone_url}'", origin)


# --- fetching -----------------------------------------------------------------------

@dataclass(frozen=True)
class Fetched:
    """A remote entry made local: a directory (git) or a file (http)."""

    path: Path
    files: RemoteFiles


@dataclass
class Remotes:
    """The per-run cache: each (url, ref) is fetched once, into one directory
    that is removed when the run ends."""

    _root: Path | None = None
    _clones: dict[tuple[str, str, bool], Path] = field(default_factory=dict)
    _downloads: dict[str, Path] = field(default_factory=dict)
    _bodies: dict[str, bytes] = field(default_factory=dict)  # generator inputs, by URL
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def directory(self, key: str) -> Path:
        if self._root is None:
            self._root = _make_run_dir()
            weakref.finalize(self, journal.unwatched, shutil.rmtree, self._root, True)
        return self._root / hashlib.sha256(key.encode()).hexdigest()[:16]

    def clone(self, spec: RepoSpec) -> Path:
        key = (spec.clone_url, spec.ref, spec.submodules)
        with self._lock:
            if key not in self._clones:
                target = self.directory("\0".join(map(str, key)))
                from krmcheck import git

                git.clone(spec.clone_url, spec.ref, target, spec.timeout, spec.submodules)
                self._clones[key] = target
            return self._clones[key]

    def body(self, url: str, get: Callable[[], bytes]) -> bytes:
        """What ``get()`` gives for ``url``, asked once per run."""
        with self._lock:
            if url not in self._bodies:
                self._bodies[url] = get()
            return self._bodies[url]

    def download(self, url: str, body: bytes) -> Path:
        with self._lock:
            if url not in self._downloads:
                target = self.directory(url)
                target.mkdir(parents=True)
                (target / "content").write_bytes(body)
                self._downloads[url] = target / "content"
            return self._downloads[url]


def _make_run_dir() -> Path:
    import tempfile

    cache = os.environ.get("XDG_CACHE_HOME")
    if cache:
        base = Path(cache) / "krmcheck"
        base.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="run-", dir=base))
    return Path(tempfile.mkdtemp(prefix="krmcheck-remote-"))


def network_allowed(flag: bool) -> bool:
    return flag or os.environ.get(NETWORK_ENV, "").strip().lower() in ("1", "true", "yes")


def fetch(remotes: Remotes, rel: str, directory: Path, origin: Origin,
          network: bool) -> Fetched | None:
    """Fetch a resources/components entry if it is remote; None if it is a local path.

    kustomize first tries an entry as a file (an http(s) URL is downloaded),
    then as a kustomization directory, where a git URL wins over a local path."""
    if is_http_url(rel):
        _require_network(rel, origin, network)
        return _fetch_http(remotes, rel, origin)
    if "\0" not in rel and len(rel) < 4096 and _is_file(join(directory, rel)):
        return None
    try:
        spec = parse_repo_spec(rel)
    except NotARepo:
        return None
    if not spec.is_local:
        _require_network(rel, origin, network)
    return _fetch_git(remotes, spec, origin)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False  # the caller's own probe reports what is wrong with the path


def _require_network(rel: str, origin: Origin, network: bool, what: str = "remote resource") -> None:
    if not network_allowed(network):
        raise NeedsNetwork(f"{what} '{rel}' needs the network, which is off by default; "
                           f"pass --network or set {NETWORK_ENV}=1 to fetch it", origin, what, rel)


def fetch_file(remotes: Remotes, url: str, what: str, origin: Origin, network: bool) -> bytes:
    """The body of a generator input's http(s) ``url`` (``what`` names the
    entry in messages), downloaded once per run."""
    _require_network(url, origin, network, what)
    journal.impure("a remote file")
    return remotes.body(url, lambda: _download(url, what, origin))


def _download(url: str, what: str, origin: Origin) -> bytes:
    from http.client import responses

    from krmcheck import download  # with urllib: only a run that downloads pays for them

    try:
        return download.get(url, DEFAULT_TIMEOUT)
    except download.StatusError as e:
        raise BuildError(f"{what}: fetching '{url}': HTTP Error: status code {e.code} "
                         f"({responses.get(e.code, e.reason)})", origin) from None
    except download.GetError as e:
        raise BuildError(f"{what}: fetching '{url}': {e.reason}", origin) from None


def _fetch_http(remotes: Remotes, url: str, origin: Origin) -> Fetched:
    from http.client import responses

    from krmcheck import download  # with urllib: only a run that downloads pays for them

    try:
        spec: RepoSpec | None = parse_repo_spec(url)
    except NotARepo:
        spec = None
    try:
        body = download.get(url, DEFAULT_TIMEOUT)
    except download.StatusError as e:
        if spec is not None:  # e.g. github.com/org/repo//dir answers 404: clone it
            return _fetch_git(remotes, spec, origin)
        reason = responses.get(e.code, e.reason)
        raise BuildError(f"accumulating resources from '{url}': HTTP Error: status code "
                         f"{e.code} ({reason})", origin) from None
    except download.GetError as e:
        raise BuildError(f"fetching '{url}': {e.reason}", origin) from None
    if spec is not None and not _looks_like_resources(body, url):
        return _fetch_git(remotes, spec, origin)  # a web page, not YAML: a repository
    path = remotes.download(url, body)
    return Fetched(path, RemoteFiles(path, url=url))


def _looks_like_resources(body: bytes, url: str) -> bool:
    try:
        docs = load_documents(body.decode("utf-8", "replace"), url, "resource")
    except LoadError:
        return False
    return bool(docs) and all(isinstance(d, Mapping) for d in docs)


def _fetch_git(remotes: Remotes, spec: RepoSpec, origin: Origin) -> Fetched:
    clone = _clone_or_error(remotes, spec, origin)
    root = clone / spec.path
    if not inside(root, clone, resolve=True):  # a symlink in the repository may point anywhere
        raise BuildError(f"'{spec.raw}' refers to a directory outside of the repository", origin)
    if root.is_file():
        raise BuildError(f"'{spec.raw}' refers to file '{spec.path}'; expecting a directory", origin)
    if not root.is_dir():
        raise BuildError(f"'{spec.raw}': no directory '{spec.path}' in {spec.clone_url} "
                         f"at {spec.ref or 'HEAD'}", origin)
    return Fetched(root, RemoteFiles(clone, spec=spec))


def _clone_or_error(remotes: Remotes, spec: RepoSpec, origin: Origin) -> Path:
    from krmcheck import git

    try:
        return remotes.clone(spec)
    except (BuildError, git.GitError) as e:
        detail = e.message
    except Exception as e:  # dulwich and its transports raise many types; this is the boundary
        detail = _describe(e)
    raise BuildError(f"fetching {spec.clone_url} at {spec.ref or 'HEAD'}: {detail}", origin)


def _describe(e: Exception) -> str:
    text = str(e).strip()
    if type(e).__name__ == "NotGitRepository":
        return f"no git repository there{': ' + text if text else ''}"
    return f"{type(e).__name__}: {text}" if text else type(e).__name__
