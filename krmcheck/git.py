"""Git, through dulwich (no git binary): the one module that reads
repositories. It clones remote bases and schema catalogs (``git init; git
fetch --depth=1 URL REF; git checkout FETCH_HEAD``), lists the files a
work tree changed since a revision, writes out the tree of a revision
(the base side of ``--diff-against``) from the object store, and reads a
repository's origin URL and what its checkout is (branch, commit, tags).
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast
from urllib.parse import urljoin

if TYPE_CHECKING:  # dulwich is imported lazily: most runs never touch git
    from dulwich.client import GitClient
    from dulwich.repo import Repo


class GitError(Exception):
    """A ref, commit or repository that is not there."""

    @property
    def message(self) -> str:
        return str(self)


def is_http_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def clone(url: str, ref: str, target: Path, timeout: float, submodules: bool = False) -> str:
    """``git init; git fetch --depth=1 URL REF; git checkout FETCH_HEAD`` in
    dulwich; the commit id checked out."""
    from dulwich.repo import Repo

    target.mkdir(parents=True)
    repo = Repo.init(str(target))
    try:
        commit = _fetch_commit(repo, url, ref, timeout)
        _checkout(repo, commit)
        if submodules:
            _update_submodules(repo, url, commit, timeout)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)  # a later attempt starts afresh
        raise
    finally:
        repo.close()
    return commit.decode()


def _client(url: str, timeout: float) -> tuple[GitClient, str]:
    from dulwich.client import default_urllib3_manager, get_transport_and_path

    if is_http_url(url):
        # cast: dulwich's stubs type pool_manager as a plain PoolManager only
        pool = cast(Any, default_urllib3_manager(None, timeout=timeout))
        return get_transport_and_path(url, pool_manager=pool, quiet=True)
    return get_transport_and_path(url, quiet=True)


def _fetch_commit(repo: Repo, url: str, ref: str, timeout: float) -> bytes:
    """Fetch ``ref`` (branch, tag, full ref name, commit id, or HEAD) and
    return its commit id; depth 1 when the transport supports it."""
    client, path = _client(url, timeout)
    try:
        sha = _fetch_wanted(client, path, repo, lambda refs: _resolve_ref(refs, ref), 1)
    except GitError:
        raise
    except Exception:  # dulwich's transports raise many types; this is the boundary
        if not _is_commit_id(ref):
            raise
        # the server would not send an unadvertised commit: fetch all it has
        _fetch_wanted(client, path, repo, lambda refs: b"", None)
        sha = ref.encode()
    return _peel(repo, sha)


def _fetch_wanted(client: GitClient, path: str, repo: Repo,
                  pick: Callable[[dict[bytes, bytes]], bytes], depth: int | None) -> bytes:
    """Fetch the object ``pick`` chooses from the advertised refs (all of
    them when it chooses b""), shallow to ``depth``; return the choice."""
    chosen: list[bytes] = []

    def wants(refs: dict[bytes, bytes], depth: int | None = None) -> list[bytes]:
        chosen.append(pick(refs))
        return [chosen[0]] if chosen[0] else sorted(set(refs.values()))

    # cast: newer dulwich types refs with its Ref/ObjectID NewTypes (plain bytes at runtime)
    try:
        client.fetch(path, repo, determine_wants=cast(Any, wants), depth=depth)
    except NotImplementedError:  # some transports cannot fetch shallow
        chosen.clear()
        client.fetch(path, repo, determine_wants=cast(Any, wants))
    return chosen[0]


def _is_commit_id(ref: str) -> bool:
    return re.fullmatch(r"[0-9a-f]{40}", ref) is not None


def _resolve_ref(refs: dict[bytes, bytes], ref: str) -> bytes:
    if not ref:
        if b"HEAD" not in refs:
            raise GitError("the repository has no HEAD")
        return refs[b"HEAD"]
    name = ref.encode()
    # the order in which git expands a short ref name
    for candidate in (name, b"refs/" + name, b"refs/tags/" + name, b"refs/heads/" + name,
                      b"refs/remotes/" + name, b"refs/remotes/" + name + b"/HEAD"):
        if candidate in refs:
            return refs[candidate]
    if _is_commit_id(ref):
        return name  # a commit id: servers that allow it send it unadvertised
    raise GitError(f"couldn't find remote ref {ref}")


def _peel(repo: Repo, sha: bytes) -> bytes:
    obj = repo[sha]
    while obj.type_name == b"tag":  # an annotated tag: follow it to the commit
        obj = repo[obj.object[1]]  # type: ignore[attr-defined]
    if obj.type_name != b"commit":
        raise GitError(f"{sha.decode()} is not a commit")
    return bytes(obj.id)


def _checkout(repo: Repo, commit: bytes) -> None:
    from dulwich.index import build_index_from_tree

    # cast: newer dulwich types refs with its Ref/ObjectID NewTypes (plain bytes at runtime)
    repo.refs[cast(Any, b"HEAD")] = cast(Any, commit)  # detached, as after ``git checkout FETCH_HEAD``
    build_index_from_tree(repo.path, repo.index_path(), repo.object_store,
                          repo[commit].tree)  # type: ignore[attr-defined]


def _update_submodules(repo: Repo, url: str, commit: bytes, timeout: float) -> None:
    """``git submodule update --init --recursive``: each submodule at the
    commit the superproject records; relative URLs resolve against ``url``."""
    from dulwich.config import ConfigFile, parse_submodules
    from dulwich.object_store import tree_lookup_path
    from dulwich.objects import S_ISGITLINK

    top = Path(repo.path)
    if not (top / ".gitmodules").is_file():
        return
    tree = repo[commit].tree  # type: ignore[attr-defined]
    for sm_path, sm_url, _ in parse_submodules(ConfigFile.from_path(str(top / ".gitmodules"))):
        try:
            mode, sha = tree_lookup_path(repo.__getitem__, tree, sm_path)
        except KeyError:
            continue  # listed in .gitmodules but not recorded in the tree
        if S_ISGITLINK(mode):
            dest = top / sm_path.decode()
            shutil.rmtree(dest, ignore_errors=True)
            clone(_submodule_url(url, sm_url.decode()), sha.decode(), dest, timeout, True)


def unfetched_submodule(top: Path, path: str) -> str | None:
    """The submodule (its path, as ``.gitmodules`` names it) that ``path``
    (relative to ``top``) lies in, when this checkout has not fetched it:
    its directory is absent or holds nothing, as a clone without
    ``--recurse-submodules`` leaves it."""
    try:
        from dulwich.config import ConfigFile, parse_submodules

        modules = top / ".gitmodules"
        if not modules.is_file():
            return None
        for sm_path, _, _ in parse_submodules(ConfigFile.from_path(str(modules))):
            where = sm_path.decode().strip("/")
            if path == where or path.startswith(where + "/"):
                folder = top / where
                return where if not folder.is_dir() or not any(folder.iterdir()) else None
    except (OSError, ValueError, KeyError):  # unreadable .gitmodules: nothing is known
        return None
    return None


def _submodule_url(parent: str, url: str) -> str:
    if not url.startswith(("./", "../")):
        return url
    base = parent.rstrip("/") + "/"
    if "://" in base:
        return urljoin(base, url)
    return posixpath.normpath(posixpath.join(base, url))


# --- the work tree ------------------------------------------------------------------

def changed_since(ref: str, root: Path) -> list[Path]:
    """Files that differ between commit ``ref`` and the work tree: committed
    since, staged, unstaged or untracked (dulwich; no git binary needed).
    ``ref`` is a branch, tag, full or abbreviated id, each optionally
    followed by ``~N`` and ``^N`` steps (``HEAD~1``, ``main^``)."""
    from dulwich import porcelain
    from dulwich.diff_tree import tree_changes
    from dulwich.repo import Repo

    repo = Repo(str(root))
    old = resolve_commit(repo, ref)
    head: Any = repo[repo.head()]  # HEAD names a commit, which has .tree
    paths: set[str] = set()
    for change in tree_changes(repo.object_store, old.tree, head.tree):
        for entry in (change.old, change.new):
            if entry is not None and entry.path is not None:
                paths.add(_text(entry.path))
    status = porcelain.status(repo, untracked_files="all")  # each file of a new directory
    for kind in ("add", "delete", "modify"):
        paths.update(_text(p) for p in status.staged.get(kind, []))
    paths.update(_text(p) for p in status.unstaged)
    paths.update(_text(p) for p in status.untracked)
    return sorted(root / p for p in paths)


def _text(path: str | bytes) -> str:
    # dulwich gives bytes or str depending on the field and its version
    return os.fsdecode(path)


_REV = re.compile(r"(.*?)((?:[~^]\d*)*)")
_REV_STEP = re.compile(r"([~^])(\d*)")


def resolve_commit(repo: Any, spec: str) -> Any:
    """The commit ``spec`` names, with git's ``~N`` (Nth first-parent
    ancestor) and ``^N`` (Nth parent) suffixes; KeyError when there is none."""
    from dulwich.objectspec import parse_commit

    m = _REV.fullmatch(spec)
    base, steps = (m[1], m[2]) if m else (spec, "")
    commit = parse_commit(repo, (base or "HEAD").encode())
    for op, digits in _REV_STEP.findall(steps):
        count = int(digits) if digits else 1
        if op == "~":
            for _ in range(count):
                commit = _parent(repo, commit, 1, spec)
        elif count:
            commit = _parent(repo, commit, count, spec)
    return commit


def _parent(repo: Any, commit: Any, number: int, spec: str) -> Any:
    if len(commit.parents) < number:
        raise KeyError(f"{spec}: the commit has no such parent")
    return repo[commit.parents[number - 1]]


def origin_url(top: Path) -> str:
    """The URL of the ``origin`` remote of the repository at ``top``; "" when
    there is no repository, no such remote or an unreadable configuration."""
    try:
        from dulwich.repo import Repo

        with Repo(str(top)) as repo:
            value = repo.get_config().get((b"remote", b"origin"), b"url")
    except Exception:  # noqa: BLE001 - no repository, no remote, an unreadable config: no URL
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else ""


class Checkout(NamedTuple):
    """What the work tree at a directory is checked out at."""

    branch: str = ""  # the branch HEAD is on; "" when detached or not a repository
    commit: str = ""  # HEAD's commit id; "" when not a repository
    tags: tuple[tuple[str, str], ...] = ()  # every tag and the commit it points at
    default_branch: str = ""  # the branch the origin remote's HEAD names, if recorded


def checkout(top: Path) -> Checkout:
    """The checkout of the repository at ``top``; an empty one when there is
    no repository or it cannot be read."""
    try:
        from dulwich.repo import Repo

        # cast: newer dulwich types refs with its Ref NewType (plain bytes at runtime)
        with Repo(str(top)) as repo:
            refs = cast(Any, repo.refs)
            chain, head = refs.follow(b"HEAD")
            branch = chain[-1].decode() if len(chain) > 1 else ""
            tags = []
            for name in refs.keys(base=b"refs/tags"):
                try:
                    tags.append((name.decode(), _peel(repo, refs[b"refs/tags/" + name]).decode()))
                except (KeyError, ValueError, GitError):  # a tag of a tree or a blob
                    continue
            origin = refs.get_symrefs().get(b"refs/remotes/origin/HEAD", b"").decode()
    except Exception:  # noqa: BLE001 - no repository or an unreadable one: nothing known
        return Checkout()
    return Checkout(branch=branch.removeprefix("refs/heads/"), commit=head.decode() if head else "",
                    tags=tuple(sorted(tags)), default_branch=origin.removeprefix("refs/remotes/origin/"))


def revision(top: Path, spec: str) -> tuple[str, str]:
    """(commit id, tree id) of revision ``spec`` in the repository at ``top``;
    KeyError when there is no such revision."""
    from dulwich.repo import Repo

    with Repo(str(top)) as repo:
        commit = resolve_commit(repo, spec)
        return commit.id.decode(), commit.tree.decode()


def export_tree(top: Path, tree: str, target: Path) -> int:
    """Write the files of tree ``tree`` (an id from :func:`revision`) of the
    repository at ``top`` under ``target``, straight from the object store:
    the work tree, index and HEAD are not touched. Symbolic links are made
    as links; submodules (recorded commits) are left out. The number of
    files written."""
    from dulwich.objects import S_ISGITLINK
    from dulwich.repo import Repo

    written = 0
    with Repo(str(top)) as repo:
        store = repo.object_store
        for entry in store.iter_tree_contents(cast(Any, tree.encode())):
            if entry.path is None or entry.mode is None or entry.sha is None or S_ISGITLINK(entry.mode):
                continue
            path = target / _text(entry.path)
            path.parent.mkdir(parents=True, exist_ok=True)
            data = _blob(top, store, entry.sha, _text(entry.path))
            if entry.mode & 0o170000 == 0o120000:  # a symbolic link: the blob is its target
                os.symlink(os.fsdecode(data), path)
            else:
                path.write_bytes(data)
                if entry.mode & 0o100:
                    path.chmod(0o755)
            written += 1
    return written


def _blob(top: Path, store: Any, sha: bytes, path: str) -> bytes:
    """A file's content by its object id. A partial clone (``--filter=blob:none``)
    holds no blob it has not needed yet; git fetches one from the clone's
    remote when asked, so git is asked before giving up."""
    try:
        return cast(bytes, store[sha].as_raw_string())
    except KeyError:
        pass
    try:
        done = subprocess.run(["git", "cat-file", "blob", sha.decode()], cwd=top, capture_output=True,
                              timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is None or done.returncode != 0:
        raise GitError(f"{path}: its content (object {sha.decode()[:12]}) is not in this clone, and git "
                       f"could not fetch it (a partial or incomplete clone): fetch the revision in full")
    return done.stdout


def ignored(top: Path, paths: Sequence[str]) -> list[str]:
    """Of ``paths`` (relative to ``top``), those the repository's ignore rules
    (``.gitignore`` files, ``.git/info/exclude``) ignore: files that exist in
    the work tree only, never at a revision."""
    try:
        from dulwich.ignore import IgnoreFilterManager
        from dulwich.repo import Repo

        with Repo(str(top)) as repo:
            rules = IgnoreFilterManager.from_repo(repo)
            return [p for p in paths if rules.is_ignored(p)]
    except Exception:  # noqa: BLE001 - no repository or unreadable rules: nothing is known ignored
        return []
