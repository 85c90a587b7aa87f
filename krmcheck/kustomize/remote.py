"""Remote resources, bases and components: git repositories and plain URLs.

kustomize v5.5 accepts, wherever a path to a kustomization may stand, a git
URL (``https://github.com/org/repo//path?ref=v1``, ``github.com/org/repo/path``,
``git@github.com:org/repo.git//path``, ``ssh://``, ``file://``, Azure ``_git/``
URLs...) and, for resources, an http(s) URL of a single file. The URL grammar
below follows kustomize's ``api/internal/git/repospec.go`` (NewRepoSpecFromURL);
the code is our own.

Repositories are fetched with dulwich (never a git binary), at depth 1 when
the server allows it, into a per-run cache directory keyed by (url, ref).
Nothing is fetched over the network unless the user allowed it
(``--network`` or ``KRMCHECK_NETWORK=1``); ``file://`` repositories are local
and always allowed.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shutil
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote_plus

from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files, inside
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Origin


NETWORK_ENV = "KRMCHECK_NETWORK"
DEFAULT_TIMEOUT = 27.0  # seconds; kustomize's default for git commands
DEFAULT_SUBMODULES = True  # kustomize clones submodules unless ?submodules=false

_FILE, _HTTP, _HTTPS, _SSH = "file://", "http://", "https://", "ssh://"
_USERNAME = re.compile(r"^([a-zA-Z][a-zA-Z0-9-]*)@")
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0,
                   "m": 60.0, "h": 3600.0}
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


class NotARepo(ValueError):
    """The text is not a git URL kustomize would clone (so it is a local path)."""


# --- parsing --------------------------------------------------------------------

@dataclass(frozen=True)
class RepoSpec:
    """A git URL taken apart: what to clone, which ref, which directory in it."""

    raw: str
    host: str  # scheme, user and host, e.g. "https://github.com/" or "git@github.com:"
    repo_path: str  # e.g. "org/repo" or "org/repo.git"
    path: str  # the kustomization root inside the repository ("" for its top)
    ref: str = ""  # "" means the remote's HEAD
    timeout: float = DEFAULT_TIMEOUT
    submodules: bool = DEFAULT_SUBMODULES

    @property
    def clone_url(self) -> str:
        return self.host + self.repo_path

    @property
    def is_local(self) -> bool:
        return self.host == _FILE

    def display(self, rel: str) -> str:
        """How a file ``rel`` (relative to the repository top) is named in origins."""
        where = f"{self.clone_url}//{rel}" if rel else self.clone_url
        return f"{where}?ref={self.ref}" if self.ref else where


def parse_repo_spec(text: str) -> RepoSpec:
    """Take a git URL apart as kustomize does; NotARepo if it is not one."""
    if posixpath.isabs(text) or os.path.isabs(text):
        raise NotARepo(f"uri looks like abs path: {text}")
    rest, _, query = text.partition("?")
    ref, timeout, submodules = _parse_query(query)
    host, rest = _extract_host(rest)
    repo_path, path = _split_repo_path(rest, host.startswith(_FILE))
    return RepoSpec(text, host, repo_path, path, ref, timeout, submodules)


def is_http_url(text: str) -> bool:
    return text.lower().startswith((_HTTP, _HTTPS))


def _parse_query(query: str) -> tuple[str, float, bool]:
    values = _query_values(query)
    if values is None:  # Go's url.ParseQuery failed: kustomize falls back to defaults
        return "", DEFAULT_TIMEOUT, DEFAULT_SUBMODULES
    ref = values.get("ref") or values.get("version", "")  # ref wins over version
    return ref, _parse_timeout(values.get("timeout", "")), _parse_bool(values.get("submodules", ""))


def _query_values(query: str) -> dict[str, str] | None:
    """The first value of each key, or None where Go's parser reports an error."""
    values: dict[str, str] = {}
    for part in query.split("&") if query else []:
        if ";" in part or re.search(r"%(?![0-9A-Fa-f]{2})", part):
            return None
        key, _, value = part.partition("=")
        values.setdefault(unquote_plus(key), unquote_plus(value))
    return values


def _parse_timeout(value: str) -> float:
    """Whole seconds ("61") or a Go duration ("1m30s"); anything else: the default."""
    if re.fullmatch(r"[+-]?\d+", value):
        return float(value) if int(value) > 0 else DEFAULT_TIMEOUT
    if value and re.fullmatch(f"[+-]?(?:{_DURATION_PART.pattern})+", value):
        seconds = sum(float(n) * _DURATION_UNITS[u] for n, u in _DURATION_PART.findall(value))
        return seconds if seconds > 0 and not value.startswith("-") else DEFAULT_TIMEOUT
    return DEFAULT_TIMEOUT


def _parse_bool(value: str) -> bool:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return DEFAULT_SUBMODULES


def _trim_prefix_fold(s: str, prefix: str) -> tuple[str, bool]:
    if s[:len(prefix)].lower() == prefix:
        return s[len(prefix):], True
    return s, False


def _extract_host(n: str) -> tuple[str, str]:
    # go-getter's "git::" prefix is accepted and ignored, as kustomize does
    n, _ = _trim_prefix_fold(n, "git::")
    scheme = ""
    for prefix in (_SSH, _HTTPS, _HTTP, _FILE):
        n, found = _trim_prefix_fold(n, prefix)
        if found:
            scheme = prefix
            break
    m = _USERNAME.match(n)
    username = m.group(0) if m else ""
    n = n[len(username):]
    github = n.lower().startswith(("github.com/", "github.com:"))
    scp = scheme == "" and (username != "" or github)
    if scheme == "" and not scp:
        raise NotARepo("failed to parse scheme")
    if scheme == _FILE:  # the rest is an absolute path on this machine
        return scheme, username + n
    host, rest = n, ""
    sep = _path_separator(n, scp)
    if sep >= 0:
        host, rest = n[:sep + 1], n[sep + 1:]
    if github:  # github URLs are normalised to https, or to scp style for ssh users
        if scheme.startswith(_SSH) or username:
            scheme, host = "", "github.com:"
        else:
            scheme, username, host = _HTTPS, "", "github.com/"
    if host == "":
        raise NotARepo("failed to parse host segment")
    return scheme + username + host, rest


def _path_separator(n: str, scp: bool) -> int:
    sep = n.find("/")
    if scp:
        colon = n.find(":")
        # in scp-style URLs the colon ends the host unless a slash comes first
        if sep == -1 or 0 < colon < sep:
            sep = colon
    return sep


def _split_repo_path(n: str, whole: bool) -> tuple[str, str]:
    """Split "org/repo//some/dir" into the repository and the directory in it."""
    split = _split_at_marker(n)
    if split is None:
        split = (n, "") if whole else _split_two_segments(n)
    if split is None or not split[0]:
        raise NotARepo("failed to parse repo path segment")
    repo, path = split
    if posixpath.normpath(path.removeprefix("/")).split("/")[0] == "..":
        raise NotARepo(f"url path exits repo: {n}")
    return repo, path.removeprefix("/")


def _split_at_marker(n: str) -> tuple[str, str] | None:
    i = n.find("_git/")
    if i >= 0:  # Azure DevOps: the repository is the segment after _git/
        head, _, tail = n[i + len("_git/"):].partition("/")
        return n[:i + len("_git/")] + head, tail
    i = n.find("//")
    if i >= 0:  # the conventional repo//path separator; not part of either
        return n[:i], n[i + 2:]
    i = n.find(".git")
    if i >= 0:
        return n[:i + len(".git")], n[i + len(".git"):]
    return None


def _split_two_segments(n: str) -> tuple[str, str] | None:
    # no marker: the historical github default of org/repo
    parts = n.split("/")
    if len(parts) < 2:
        return None
    return "/".join(parts[:2]), "/".join(parts[2:])


# --- naming fetched files -------------------------------------------------------------

@dataclass(frozen=True)
class RemoteFiles(Files):
    """Files of a clone or a download, named in origins by the URL they came from."""

    spec: RepoSpec | None = None  # None: ``repo_root`` is one downloaded file
    url: str = ""

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
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def directory(self, key: str) -> Path:
        if self._root is None:
            self._root = _make_run_dir()
            weakref.finalize(self, shutil.rmtree, self._root, True)
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
    if "\0" not in rel and len(rel) < 4096 and _is_file(directory / rel):
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


def _require_network(rel: str, origin: Origin, network: bool) -> None:
    if not network_allowed(network):
        raise BuildError(f"remote resource '{rel}' needs the network, which is off by default; "
                         f"pass --network or set {NETWORK_ENV}=1 to fetch it", origin)


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
