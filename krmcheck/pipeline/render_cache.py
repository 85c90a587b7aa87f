"""The render cache: a root's report kept between runs, reused only when
checking the root again would give the same report.

An entry lives under ``cache.directory() / "renders"``, in a directory named
by the *key*: a digest of everything a root's check is given (krmcheck's
own files, the installed packages and their versions, the engine flags, the
validator options with the content of every repository CRD file, the
``.krmcheck.yaml`` in use, the root itself and the top of the repository). The entry holds the root's :class:`RootReport` and
its *reads*: every file the check opened (with a digest of its content),
every directory it listed (with its names), and every path it probed with
``stat``, ``lstat`` or ``readlink`` (with what the probe saw). A report is
reused only when its key matches and every read gives what it gave.

The reads are noted by the read journal (``krmcheck.journal``) while a root
is checked. A root is never stored when its check ran a program or used the
network (the journal calls that impure), nor when a file it read changed
while it was checked. An entry that cannot be read is a miss, never an error. The directory is
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
import sys
from collections.abc import Callable, Iterator
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from krmcheck import cache, journal
from krmcheck.results import RootReport

if TYPE_CHECKING:
    from krmcheck import config as krmconfig
    from krmcheck import diff as kdiff
    from krmcheck.gitops.root import Root
    from krmcheck.pipeline.run import CheckOptions
    from krmcheck.validators.base import ValidatorOptions

LIMIT = 256 * 1024 * 1024  # bytes of entries kept; the least recently used go first
VARIANTS = 4  # entries kept per key (the same root at different file contents)
FORMAT = 3  # bumped whenever what an entry holds changes
# Counters for tests and measurements: hit, miss, stored, uncacheable.
STATS: collections.Counter[str] = collections.Counter()


def directory() -> Path:
    return cache.directory() / "renders"


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
    package = Path(__file__).resolve().parent.parent  # the whole krmcheck package, not pipeline/ alone
    for where, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith((".pyc", ".pyo")):
                continue
            try:
                s = journal.REAL_STAT(os.path.join(where, name))
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
    "only_roots", "diff", "repo_urls", "cache", "fail_on_flags", "markdown",
    "cwd",  # where the command started: it names files in the text report only
})


def _run_key(opts: CheckOptions, vopts: ValidatorOptions, config: krmconfig.Config, top: Path) -> str:
    from krmcheck.kustomize import remote  # its environment variable allows the network too

    h = hashlib.sha256()
    # how deep an input may nest, and how text without a declared encoding is read
    _feed(h, (_software(), str(top), remote.network_allowed(False), sys.getrecursionlimit(),
              locale.getpreferredencoding(False)))
    _feed(h, [(f.name, getattr(opts, f.name)) for f in dataclasses.fields(opts) if f.name not in NOT_KEYED])
    _feed(h, vopts)
    schemas = getattr(vopts, "schemas", None)
    for path, _ in getattr(schemas, "crd_files", ()):  # their content, not only their names
        h.update(journal.file_digest(path, journal.signature(path)).encode())
    _feed(h, config)
    if getattr(config, "path", ""):
        config_file = str(top / config.path)
        h.update(journal.file_digest(config_file, journal.signature(config_file)).encode())
    return h.hexdigest()


# --- the cache --------------------------------------------------------------------------

Dependency = tuple[str, str, Any, Any]  # (operation, path, what it gave, the file's journal.signature)


class Renders:
    """The render cache for one batch of roots (in one process)."""

    def __init__(self, run_key: str | None, top: Path | None = None) -> None:
        self.run_key = run_key
        self.top = top
        self._now: dict[tuple[str, str], Any] = {}  # what each read gives in this run

    @classmethod
    def of(cls, opts: CheckOptions, vopts: ValidatorOptions, config: krmconfig.Config, top: Path) -> "Renders":
        if not getattr(opts, "cache", True):
            return cls(None)
        try:
            return cls(_run_key(opts, vopts, config, top), top)
        except _Unkeyable:
            return cls(None)

    def lookup(self, root: Root, name: str, diff: kdiff.Context | None) -> RootReport | None:
        """The report ``root`` gave before, when nothing its check read has changed."""
        if self.run_key is None or journal.journaling():
            return None
        try:
            key = self._key(root, name, diff)
        except _Unkeyable:
            return None
        found = self._lookup(key)
        STATS["hit" if found is not None else "miss"] += 1
        return found

    def report(self, root: Root, name: str, diff: kdiff.Context | None, check: Callable[[], RootReport],
               looked_up: bool = False) -> RootReport:
        """``check()``, or the report it gave before when nothing it read has
        changed (``looked_up``: :meth:`lookup` found none just now)."""
        if self.run_key is None or journal.journaling():
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
        frame = journal.begin()
        try:
            report = check()
        finally:
            journal.end(frame)
        if self.top is not None:
            record_reads(self.top, name, {path for (op, path) in frame.seen if op in ("file", "dir")})
        deps = self._dependencies(frame)
        if deps is None:
            STATS["uncacheable"] += 1
        else:
            self._store(key, deps, report)
        return report

    def _key(self, root: Root, name: str, diff: kdiff.Context | None) -> str:
        h = hashlib.sha256()
        _feed(h, (self.run_key, name, root))
        if diff is not None:
            _feed(h, (hashlib.sha256(diff.secret_key).hexdigest(), diff.base is not None, diff.base_of(name)))
        return h.hexdigest()

    # --- reads -------------------------------------------------------------------------
    def _dependencies(self, frame: journal.Frame) -> list[Dependency] | None:
        if frame.impure or frame.unstable:
            return None
        out: list[Dependency] = []
        for (op, path), seen in frame.seen.items():
            if op in ("file", "dir"):
                sig = journal.signature(path)
                if sig != seen:
                    return None  # changed while the root was checked
                digest = journal.file_digest(path, sig) if op == "file" else journal.dir_digest(path, sig)
                if journal.signature(path) != sig:
                    return None
                out.append((op, path, digest, sig if op == "file" and journal.settled(sig) else None))
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
                digest = journal.file_digest(path, current_sig)
                self._now[key] = (current_sig, digest)
            return bool(digest == value)
        return bool(now == value)

    def _current(self, op: str, path: str) -> Any:
        if op == "file":
            return (journal.signature(path), None)
        if op == "dir":
            return journal.dir_digest(path, journal.signature(path))
        try:
            if op == "readlink":
                return os.fsdecode(journal.REAL_READLINK(path))
            return journal.kind_of(journal.REAL_STAT(path, follow_symlinks=op == "stat").st_mode)
        except OSError as e:
            return journal.error_text(e)
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
            # no Secret value is written to disk: a later run that needs them checks the root again
            kept = dataclasses.replace(report, secrets=frozenset(), secrets_withheld=bool(report.secrets))
            pickle.dump(kept, buffer, protocol=pickle.HIGHEST_PROTOCOL)
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


# --- what each root read ---------------------------------------------------------------
#
# Beside the entries, the cache keeps the files and directories each root's
# last check read (by the top of its repository and its name), whether or
# not the report could be kept: root selection (``krmcheck FILE``,
# ``--changed-since``, ``--diff-against``) uses it with the dependency
# graph, so that what the journal saw a root read selects the root.

def _reads_path(top: Path, name: str) -> Path:
    h = hashlib.sha256(f"{top}\0{name}".encode("utf-8", "surrogateescape")).hexdigest()
    return cache.directory() / "reads" / h[:2] / h


def record_reads(top: Path, name: str, paths: set[str]) -> None:
    target = _reads_path(top, name)
    text = "".join(p + "\n" for p in sorted(paths) if "\n" not in p)
    try:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8", errors="surrogateescape")
        os.replace(tmp, target)
    except OSError:
        pass  # selection falls back on the dependency graph alone


def recorded_reads(top: Path, name: str) -> frozenset[str]:
    """What the last check of root ``name`` of the repository at ``top`` read
    (empty when it was never checked with the cache on)."""
    try:
        text = _reads_path(top, name).read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return frozenset()
    return frozenset(text.splitlines())


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
