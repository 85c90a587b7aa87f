"""Git URLs of remote bases, as kustomize takes them apart.

kustomize v5.5 accepts, wherever a path to a kustomization may stand, a git
URL (``https://github.com/org/repo//path?ref=v1``, ``github.com/org/repo/path``,
``git@github.com:org/repo.git//path``, ``ssh://``, ``file://``, Azure ``_git/``
URLs...). The grammar below follows kustomize's
``api/internal/git/repospec.go`` (NewRepoSpecFromURL); the code is our own.
Fetching what a spec names is :mod:`krmcheck.kustomize.remote`'s.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote_plus

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
