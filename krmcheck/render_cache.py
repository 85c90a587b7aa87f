"""The render cache: a root's report kept between runs, reused only when
checking the root again would give the same report.

An entry lives under ``cache.directory() / "renders"``, in a directory named
by the *key*: a digest of everything a root's check is given (krmcheck's
own files, the installed packages and their versions, the engine flags, the
validator options with the content of every repository CRD file, the
``.krmcheck.yaml`` in use, the root itself, the top of the repository and
the current directory). The entry holds the root's :class:`RootReport` and
its *reads*: every file the check opened (with a digest of its content),
every directory it listed (with its names), and every path it probed with
``stat``, ``lstat`` or ``readlink`` (with what the probe saw). A report is
reused only when its key matches and every read gives what it gave.

The reads are journaled while a root is checked: an audit hook
(:func:`sys.addaudithook`) sees ``open``, ``os.listdir`` and ``os.scandir``,
and ``os.stat``, ``os.lstat`` and ``os.readlink`` (which raise no audit
event; ``os.path``, ``pathlib`` and :class:`Files` probe through them) are
wrapped while a journal is open. What is computed once per process and
reused by later roots (a base rendered once, a schema looked up once) keeps
the reads it made (:func:`start`, :func:`stop`) and gives them to each root
that reuses it (:func:`replay`).

A root is never stored when its check ran a program or used the network
(audit events of processes and sockets, and :func:`impure` where krmcheck
runs plugins, functions, helm and external validators or fetches remote
bases and schemas), nor when a file it read changed while it was checked.
An entry that cannot be read is a miss, never an error. The directory is
kept under :data:`LIMIT` bytes, least recently used entries first out.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import enum
import functools
import hashlib
import io
import locale
import os
import re
import stat
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePath
from typing import Any

from krmcheck import cache
from krmcheck.results import RootReport

LIMIT = 256 * 1024 * 1024  # bytes of entries kept; the least recently used go first
VARIANTS = 4  # entries kept per key (the same root at different file contents)
FORMAT = 1  # bumped whenever what an entry holds changes
# A file whose status changed less than this long before it was recorded may
# change again without its status changing: its content is hashed again.
RACY_NS = 2_000_000_000

# Counters for tests and measurements: hit, miss, stored, uncacheable.
STATS: collections.Counter[str] = collections.Counter()


def directory() -> Path:
    return cache.directory() / "renders"


# --- the journal ------------------------------------------------------------------
#
# A frame collects the reads of one span of the check: (operation, absolute
# path) -> what was seen first. For "stat", "lstat" and "readlink" that is
# the answer itself; for "file" (opened) and "dir" (listed) it is the
# path's status, compared when the root is done with the status then (a
# change means the file changed while it was checked) before its content
# or its names are digested.

Observed = dict[tuple[str, str], Any]


class _Frame:
    __slots__ = ("seen", "impure", "unstable")

    def __init__(self) -> None:
        self.seen: Observed = {}
        self.impure = ""  # what ran outside the process or used the network
        self.unstable = ""  # why the reads cannot be trusted

    def merge(self, seen: Any, impure: str, unstable: str) -> None:
        mine = self.seen
        for key, value in seen:
            before = mine.setdefault(key, value)
            if before != value and not self.unstable:
                self.unstable = f"{key[1]} changed while it was checked"
        self.impure = self.impure or impure
        self.unstable = self.unstable or unstable


@dataclasses.dataclass(frozen=True)
class Reads:
    """What one span of a check read, to be given to each later user of what it made."""

    seen: tuple[tuple[tuple[str, str], Any], ...] = ()
    impure: str = ""
    unstable: str = ""


UNCAPTURED = Reads(unstable="made while no journal was open")

_frames: list[_Frame] = []
_busy: list[bool] = []  # non-empty while the journal itself looks at files


def start() -> _Frame | None:
    """Open a span inside the root's journal (None when no journal is open)."""
    if not _frames:
        return None
    frame = _Frame()
    _frames.append(frame)
    return frame


def stop(frame: _Frame | None) -> Reads:
    """Close a span opened by :func:`start` (and any left open inside it,
    when an exception skipped their :func:`stop`); its reads also count
    for the enclosing spans."""
    if frame is None or not any(f is frame for f in _frames):
        return UNCAPTURED  # no journal, or the span was closed already
    while _frames:
        top = _frames.pop()
        if _frames:
            _frames[-1].merge(top.seen.items(), top.impure, top.unstable)
        if top is frame:
            break
    return Reads(tuple(frame.seen.items()), frame.impure, frame.unstable)


def replay(reads: Reads | None) -> None:
    """What is reused counts as read again by the current root."""
    if _frames:
        reads = UNCAPTURED if reads is None else reads
        _frames[-1].merge(reads.seen, reads.impure, reads.unstable)


def impure(reason: str) -> None:
    """The root's check runs something outside the process or uses the network."""
    if _frames and not _frames[-1].impure:
        _frames[-1].impure = reason


def _note(op: str, path: Any, value: Any) -> None:
    where = _absolute(path)
    if where is None:
        _frames[-1].unstable = _frames[-1].unstable or f"{op} relative to an open directory"
        return
    if _ignored(where):
        return
    frame = _frames[-1]
    before = frame.seen.setdefault((op, where), value)
    if before != value and not frame.unstable:
        frame.unstable = f"{where} changed while it was checked"


def _absolute(path: Any) -> str | None:
    if isinstance(path, int):
        return None
    if path is None:
        path = "."
    text = os.fsdecode(os.fspath(path))
    return text if os.path.isabs(text) else os.path.join(os.getcwd(), text)


_IMPURE_EVENTS = frozenset({
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
    "os.forkpty", "pty.spawn", "socket.connect", "socket.getaddrinfo", "socket.gethostbyname",
    "socket.gethostbyaddr", "socket.sendto", "socket.bind", "urllib.Request",
})


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _frames or _busy:
        return
    _busy.append(True)
    try:
        if sys._getframe(1).f_code.co_filename.startswith("<frozen importlib"):
            return  # an import (of a module the check uses first): the key holds the software
        if event == "open":
            if not isinstance(args[0], int):  # an open file descriptor: its opening was seen
                _note("file", args[0], _signature(args[0]))
        elif event in ("os.listdir", "os.scandir"):
            path = "." if args[0] is None else args[0]
            _note("dir", path, None if isinstance(path, int) else _signature(path))
        elif event in _IMPURE_EVENTS:
            impure(event)
    except Exception as e:  # noqa: BLE001 - a hook must never break the check it watches
        _frames[-1].unstable = _frames[-1].unstable or f"journal: {type(e).__name__}"
    finally:
        _busy.clear()


_REAL_STAT, _REAL_LSTAT, _REAL_READLINK = os.stat, os.lstat, os.readlink


def _stat(path: Any, *, dir_fd: int | None = None, follow_symlinks: bool = True) -> os.stat_result:
    if not _frames or _busy or isinstance(path, int):
        return _REAL_STAT(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
    op = "stat" if follow_symlinks else "lstat"
    try:
        found = _REAL_STAT(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
    except OSError as e:
        _watch(op, path, dir_fd, _error(e))
        raise
    _watch(op, path, dir_fd, _kind(found.st_mode))
    return found


def _lstat(path: Any, *, dir_fd: int | None = None) -> os.stat_result:
    return _stat(path, dir_fd=dir_fd, follow_symlinks=False)


def _readlink(path: Any, *, dir_fd: int | None = None) -> Any:
    if not _frames or _busy or isinstance(path, int):
        return _REAL_READLINK(path, dir_fd=dir_fd)
    try:
        found = _REAL_READLINK(path, dir_fd=dir_fd)
    except OSError as e:
        _watch("readlink", path, dir_fd, _error(e))
        raise
    _watch("readlink", path, dir_fd, os.fsdecode(found))
    return found


def _watch(op: str, path: Any, dir_fd: int | None, value: str) -> None:
    _busy.append(True)
    try:
        _note(op, path if dir_fd is None else 0, value)
    except Exception as e:  # noqa: BLE001 - as in _audit
        _frames[-1].unstable = _frames[-1].unstable or f"journal: {type(e).__name__}"
    finally:
        _busy.clear()


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "link" if stat.S_ISLNK(mode) else "other"


def _error(e: OSError) -> str:
    return f"error {e.errno}"


@functools.cache
def _install_hook() -> None:
    sys.addaudithook(_audit)


def _begin() -> _Frame:
    _install_hook()
    _ignored_prefixes()
    frame = _Frame()
    _frames.append(frame)
    os.stat, os.lstat, os.readlink = _stat, _lstat, _readlink  # type: ignore[assignment]
    return frame


def _end(frame: _Frame) -> _Frame:
    try:
        while _frames:
            top = _frames.pop()
            if top is frame:
                break
            frame.merge(top.seen.items(), top.impure, top.unstable)
    finally:
        os.stat, os.lstat, os.readlink = _REAL_STAT, _REAL_LSTAT, _REAL_READLINK
    return frame


@functools.cache
def _ignored_prefixes() -> tuple[str, ...]:
    """Python's own files and the installed packages' (imports open them):
    the key holds what they are (see :func:`_software`)."""
    paths = sysconfig.get_paths()
    found = {paths.get(k, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    found.add(str(Path(__file__).resolve().parent))
    return tuple(sorted(p.rstrip(os.sep) + os.sep for p in found if p))


def _ignored(path: str) -> bool:
    return path.startswith(_ignored_prefixes())


# --- digests --------------------------------------------------------------------------

Signature = tuple[Any, ...]


def _signature(path: Any) -> Signature:
    """What says that a file or directory is as it was: kind, identity, size, times."""
    try:
        s = _REAL_STAT(path)
    except OSError as e:
        return (_error(e),)
    except ValueError:
        return ("invalid",)
    return (_kind(s.st_mode), s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)


def _settled(sig: Signature) -> bool:
    """A signature old enough that the next change of the file will change it."""
    return len(sig) == 6 and time.time_ns() - sig[5] > RACY_NS


_DIGESTS: dict[tuple[str, Signature], str] = {}  # per process, of settled files only


def _file_digest(path: str, sig: Signature) -> str:
    if sig[0] != "file":
        return sig[0]
    known = _DIGESTS.get((path, sig))
    if known is not None:
        return known
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(functools.partial(fh.read, 1 << 20), b""):
                h.update(block)
    except OSError as e:
        return _error(e)
    digest = h.hexdigest()
    if _settled(sig) and _signature(path) == sig:
        _DIGESTS[(path, sig)] = digest
    return digest


def _dir_digest(path: str, sig: Signature) -> str:
    if sig[0] != "dir":
        return sig[0]
    try:
        with os.scandir(path) as it:
            names = sorted((os.fsencode(e.name), _entry_kind(e)) for e in it)
    except OSError as e:
        return _error(e)
    return hashlib.sha256(repr(names).encode()).hexdigest()


def _entry_kind(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_symlink():
            return "link"
        return "dir" if entry.is_dir() else "file" if entry.is_file() else "other"
    except OSError as e:
        return _error(e)


# --- keys ----------------------------------------------------------------------------

class _Unkeyable(Exception):
    """A value with no stable spelling: whatever depends on it is not cached."""


def _feed(h: Any, value: Any, depth: int = 0) -> None:
    """A spelling of ``value`` that is the same in every process for equal
    values (never ``hash()``- or id-dependent), into the hash ``h``."""
    if depth > 200:
        raise _Unkeyable("too deep")
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        h.update(f"{type(value).__name__}:{value!r};".encode("utf-8", "backslashreplace"))
    elif isinstance(value, enum.Enum):
        h.update(f"enum:{type(value).__qualname__}.{value.name};".encode())
    elif isinstance(value, PurePath):
        h.update(f"path:{value.as_posix()!r};".encode("utf-8", "backslashreplace"))
    elif isinstance(value, re.Pattern):
        _feed(h, ("re", value.pattern, value.flags), depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        h.update(f"dc:{type(value).__qualname__}{{".encode())
        for f in dataclasses.fields(value):
            h.update(f.name.encode() + b"=")
            _feed(h, getattr(value, f.name), depth + 1)
        h.update(b"}")
    elif isinstance(value, (tuple, list)):
        h.update(f"{type(value).__qualname__}[{len(value)}".encode())
        for item in value:
            _feed(h, item, depth + 1)
        h.update(b"]")
    elif isinstance(value, collections.abc.Mapping):
        h.update(f"map:{type(value).__qualname__}[{len(value)}".encode())
        for k, v in value.items():
            _feed(h, k, depth + 1)
            _feed(h, v, depth + 1)
        h.update(b"]")
    elif isinstance(value, (set, frozenset)):
        items = []
        for item in value:
            one = hashlib.sha256()
            _feed(one, item, depth + 1)
            items.append(one.hexdigest())
        h.update(f"set[{','.join(sorted(items))}]".encode())
    elif callable(value):
        raise _Unkeyable(type(value).__qualname__)  # no spelling says what a function does
    elif hasattr(type(value), "__slots__") or hasattr(value, "__dict__"):
        h.update(f"obj:{type(value).__module__}.{type(value).__qualname__}{{".encode())
        names = [n for c in type(value).__mro__ for n in getattr(c, "__slots__", ())]
        for name in sorted(set(names) | set(getattr(value, "__dict__", {}))):
            if hasattr(value, name):  # a function held here is unkeyable, as above
                h.update(name.encode() + b"=")
                _feed(h, getattr(value, name), depth + 1)
        h.update(b"}")
    else:
        raise _Unkeyable(type(value).__qualname__)


@functools.cache
def _software() -> str:
    """krmcheck's files (an editable install changes without a new
    version), Python's version and the installed distributions: the names
    of their metadata directories carry their versions, krmcheck's too (its
    version is not looked up apart: importing importlib.metadata to read it
    would cost a warm run more than its whole check)."""
    h = hashlib.sha256()
    h.update(f"{FORMAT}\0{sys.version}\0{sys.platform}\0".encode())
    package = Path(__file__).resolve().parent
    for where, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith((".pyc", ".pyo")):
                continue
            try:
                s = _REAL_STAT(os.path.join(where, name))
            except OSError:
                continue
            rel = os.path.relpath(os.path.join(where, name), package)
            h.update(f"{rel}\0{s.st_size}\0{s.st_mtime_ns}\n".encode("utf-8", "backslashreplace"))
    for entry in sys.path:
        if not entry:
            continue
        try:
            with os.scandir(entry) as it:
                found = sorted((e.name, e.stat().st_mtime_ns) for e in it
                               if e.name.endswith((".dist-info", ".egg-info", ".egg-link", ".pth")))
        except OSError:
            continue
        h.update(repr((entry, found)).encode("utf-8", "backslashreplace"))
    return h.hexdigest()


# Fields of CheckOptions that reach a root's check only through what is in
# the key already (the root chosen, the validator options, the configuration,
# the diff context) or that only shape the run's report. Any other field,
# one added later too, is part of the key.
NOT_KEYED = frozenset({
    "paths", "roots", "changed_since", "fail_on", "junit", "sarif", "json", "gitlab", "github",
    "jobs", "shard", "exclude", "require_schemas", "baseline", "write_baseline", "diff_against",
    "only_roots", "diff", "repo_urls", "cache",
})


def _run_key(opts: Any, vopts: Any, config: Any, top: Path) -> str:
    from krmcheck.kustomize import remote  # its environment variable allows the network too

    h = hashlib.sha256()
    # how deep an input may nest, and how text without a declared encoding is read
    _feed(h, (_software(), str(top), os.getcwd(), remote.network_allowed(False), sys.getrecursionlimit(),
              locale.getpreferredencoding(False)))
    _feed(h, [(f.name, getattr(opts, f.name)) for f in dataclasses.fields(opts) if f.name not in NOT_KEYED])
    _feed(h, vopts)
    schemas = getattr(vopts, "schemas", None)
    for path, _ in getattr(schemas, "crd_files", ()):  # their content, not only their names
        h.update(_file_digest(path, _signature(path)).encode())
    _feed(h, config)
    if getattr(config, "path", ""):
        config_file = str(top / config.path)
        h.update(_file_digest(config_file, _signature(config_file)).encode())
    return h.hexdigest()


# --- the cache --------------------------------------------------------------------------

Dependency = tuple[str, str, Any, Any]  # (operation, path, what it gave, the file's signature)


class Renders:
    """The render cache for one batch of roots (in one process)."""

    def __init__(self, run_key: str | None) -> None:
        self.run_key = run_key
        self._now: dict[tuple[str, str], Any] = {}  # what each read gives in this run

    @classmethod
    def of(cls, opts: Any, vopts: Any, config: Any, top: Path) -> "Renders":
        if not getattr(opts, "cache", True):
            return cls(None)
        try:
            return cls(_run_key(opts, vopts, config, top))
        except _Unkeyable:
            return cls(None)

    def lookup(self, root: Any, name: str, diff: Any) -> RootReport | None:
        """The report ``root`` gave before, when nothing its check read has changed."""
        if self.run_key is None or _frames:
            return None
        try:
            key = self._key(root, name, diff)
        except _Unkeyable:
            return None
        found = self._lookup(key)
        STATS["hit" if found is not None else "miss"] += 1
        return found

    def report(self, root: Any, name: str, diff: Any, check: Callable[[], RootReport],
               looked_up: bool = False) -> RootReport:
        """``check()``, or the report it gave before when nothing it read has
        changed (``looked_up``: :meth:`lookup` found none just now)."""
        if self.run_key is None or _frames:
            return check()
        try:
            key = self._key(root, name, diff)
        except _Unkeyable:
            return check()
        if not looked_up:
            found = self._lookup(key)
            if found is not None:
                STATS["hit"] += 1
                return found
            STATS["miss"] += 1
        frame = _begin()
        try:
            report = check()
        finally:
            _end(frame)
        deps = self._dependencies(frame)
        if deps is None:
            STATS["uncacheable"] += 1
        else:
            self._store(key, deps, report)
        return report

    def _key(self, root: Any, name: str, diff: Any) -> str:
        h = hashlib.sha256()
        _feed(h, (self.run_key, name, root))
        if diff is not None:
            _feed(h, (hashlib.sha256(diff.secret_key).hexdigest(), diff.base is not None, diff.base_of(name)))
        return h.hexdigest()

    # --- reads -------------------------------------------------------------------------
    def _dependencies(self, frame: _Frame) -> list[Dependency] | None:
        if frame.impure or frame.unstable:
            return None
        out: list[Dependency] = []
        for (op, path), seen in frame.seen.items():
            if op in ("file", "dir"):
                sig = _signature(path)
                if sig != seen:
                    return None  # changed while the root was checked
                digest = _file_digest(path, sig) if op == "file" else _dir_digest(path, sig)
                if _signature(path) != sig:
                    return None
                out.append((op, path, digest, sig if op == "file" and _settled(sig) else None))
            else:
                out.append((op, path, seen, None))
        return out

    def _holds(self, dep: Dependency) -> bool:
        op, path, value, sig = dep
        key = (op, path)
        now = self._now.get(key)
        if now is None:
            now = self._now[key] = self._current(op, path)
        if op == "file":
            current_sig, digest = now
            if sig is not None and sig == current_sig:
                return True
            if digest is None:
                digest = _file_digest(path, current_sig)
                self._now[key] = (current_sig, digest)
            return bool(digest == value)
        return bool(now == value)

    def _current(self, op: str, path: str) -> Any:
        if op == "file":
            return (_signature(path), None)
        if op == "dir":
            return _dir_digest(path, _signature(path))
        try:
            if op == "readlink":
                return os.fsdecode(_REAL_READLINK(path))
            return _kind(_REAL_STAT(path, follow_symlinks=op == "stat").st_mode)
        except OSError as e:
            return _error(e)
        except ValueError:
            return "invalid"

    # --- entries -----------------------------------------------------------------------
    def _lookup(self, key: str) -> RootReport | None:
        import pickle  # (here and in _store: a run without the cache needs none)

        try:
            with os.scandir(directory() / key) as it:
                entries = sorted(((e.stat().st_mtime_ns, e.path) for e in it if e.name.endswith(".entry")),
                                 reverse=True)
        except OSError:
            return None
        for _, path in entries:
            try:
                with open(path, "rb") as fh:
                    head = pickle.load(fh)
                    if not (isinstance(head, tuple) and len(head) == 2 and head[0] == FORMAT):
                        continue
                    if not all(self._holds(dep) for dep in head[1]):
                        continue
                    report = pickle.load(fh)
            except Exception:  # noqa: BLE001 - an entry that cannot be read is a miss
                continue
            if isinstance(report, RootReport):
                with contextlib.suppress(OSError):
                    os.utime(path)  # recently used
                return report
        return None

    def _store(self, key: str, deps: list[Dependency], report: RootReport) -> None:
        import pickle

        variant = hashlib.sha256(repr([d[:3] for d in deps]).encode("utf-8", "backslashreplace")).hexdigest()
        where = directory() / key
        buffer = io.BytesIO()
        try:
            pickle.dump((FORMAT, deps), buffer, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump(report, buffer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - a report that cannot be pickled is not cached
            STATS["uncacheable"] += 1
            return
        try:
            directory().mkdir(parents=True, exist_ok=True, mode=0o700)  # reports may quote the repository
            where.mkdir(exist_ok=True, mode=0o700)
            target = where / f"{variant[:32]}.entry"
            tmp = where / f".{variant[:32]}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                fh.write(buffer.getvalue())
            os.replace(tmp, target)
        except OSError:
            return  # a cache that cannot be written is no cache
        STATS["stored"] += 1
        _keep_variants(where)
        _written(len(buffer.getvalue()))


def _keep_variants(where: Path) -> None:
    try:
        with os.scandir(where) as it:
            entries = sorted(((e.stat().st_mtime_ns, e.path) for e in it if e.name.endswith(".entry")),
                             reverse=True)
        for _, path in entries[VARIANTS:]:
            os.unlink(path)
    except OSError:
        pass


_WRITTEN = [-1]  # bytes written by this process since the size was last checked; -1: never


def _written(size: int) -> None:
    if _WRITTEN[0] < 0 or _WRITTEN[0] + size >= LIMIT // 16:
        _WRITTEN[0] = 0
        evict(LIMIT)
    else:
        _WRITTEN[0] += size


def evict(limit: int) -> None:
    """Remove the least recently used entries until those left take at most
    nine tenths of ``limit`` bytes, when they take more than ``limit``."""
    entries = []
    for keyed in _scan(directory()):
        for entry in _scan(Path(keyed.path)):
            try:
                s = entry.stat()
            except OSError:
                continue
            entries.append((s.st_mtime_ns, s.st_size, entry.path))
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return
    for _, size, path in sorted(entries):
        if total <= limit * 9 // 10:
            break
        try:
            os.unlink(path)
            total -= size
            os.rmdir(os.path.dirname(path))  # when it was the key's last entry
        except OSError:
            pass


def _scan(path: Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            yield from list(it)
    except OSError:
        return
