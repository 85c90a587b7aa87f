"""The read journal: what a root's check read, to tell later whether
checking it again would read the same.

While a journal is open (:func:`begin` ... :func:`end`, around one root's
check), an audit hook (:func:`sys.addaudithook`) sees ``open``,
``os.listdir`` and ``os.scandir``, and ``os.stat``, ``os.lstat`` and
``os.readlink`` (which raise no audit event; ``os.path``, ``pathlib`` and
``Files`` probe through them) are wrapped. Each read is noted with what it
saw: a file's or directory's status (digested later), a probe's answer.
What is computed once per process and reused by later roots (a base
rendered once, a schema looked up once) keeps the reads it made
(:func:`start`, :func:`stop`) and gives them to each root that reuses it
(:func:`replay`). Running a program or using the network makes the span
*impure* (audit events of processes and sockets, and :func:`impure` where
krmcheck runs plugins, functions, helm and external validators or fetches
remote bases and schemas). What the garbage collector's finalizers do
while a root is checked (an earlier run's scratch directory removed) is
nobody's read. The render cache (``render_cache``) keeps a report only with
a pure, stable journal.

The build and the schema lookup write here; nothing here knows of them.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import hashlib
import os
import stat
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any, Callable

# A file whose status changed less than this long before it was recorded may
# change again without its status changing: its content is hashed again.
RACY_NS = 2_000_000_000



# --- the journal ------------------------------------------------------------------
#
# A frame collects the reads of one span of the check: (operation, absolute
# path) -> what was seen first. For "stat", "lstat" and "readlink" that is
# the answer itself; for "file" (opened) and "dir" (listed) it is the
# path's status, compared when the root is done with the status then (a
# change means the file changed while it was checked) before its content
# or its names are digested.

Observed = dict[tuple[str, str], Any]


class Frame:
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

_frames: list[Frame] = []
_busy: list[bool] = []  # non-empty while the journal itself looks at files
# True while the garbage collector runs: a finalizer it calls (an earlier
# run's scratch directory removed) reads nothing for the root being checked
_collecting = [False]


def start() -> Frame:
    """Open a span: inside a root's journal, or alone (what is made before
    any root is checked, and reused by roots later, records its reads too)."""
    if not _frames:
        return begin()
    frame = Frame()
    _frames.append(frame)
    return frame


def stop(frame: Frame | None) -> Reads:
    """Close a span opened by :func:`start` (and any left open inside it,
    when an exception skipped their :func:`stop`); its reads also count
    for the enclosing spans."""
    if frame is None or not any(f is frame for f in _frames):
        return UNCAPTURED  # the span was closed already
    if _frames[0] is frame:  # a span alone
        end(frame)
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
    if not _frames or _busy or _collecting[0]:
        return
    _busy.append(True)
    try:
        if sys._getframe(1).f_code.co_filename.startswith("<frozen importlib"):
            return  # an import (of a module the check uses first): the key holds the software
        if event == "open":
            if not isinstance(args[0], int):  # an open file descriptor: its opening was seen
                _note("file", args[0], signature(args[0]))
        elif event in ("os.listdir", "os.scandir"):
            path = "." if args[0] is None else args[0]
            _note("dir", path, None if isinstance(path, int) else signature(path))
        elif event in _IMPURE_EVENTS:
            impure(event)
    except Exception as e:  # noqa: BLE001 - a hook must never break the check it watches
        _frames[-1].unstable = _frames[-1].unstable or f"journal: {type(e).__name__}"
    finally:
        _busy.clear()


REAL_STAT, _REAL_LSTAT, REAL_READLINK = os.stat, os.lstat, os.readlink


def _stat(path: Any, *, dir_fd: int | None = None, follow_symlinks: bool = True) -> os.stat_result:
    if not _frames or _busy or _collecting[0] or isinstance(path, int):
        return REAL_STAT(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
    op = "stat" if follow_symlinks else "lstat"
    try:
        found = REAL_STAT(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
    except OSError as e:
        _watch(op, path, dir_fd, error_text(e))
        raise
    _watch(op, path, dir_fd, kind_of(found.st_mode))
    return found


def _lstat(path: Any, *, dir_fd: int | None = None) -> os.stat_result:
    return _stat(path, dir_fd=dir_fd, follow_symlinks=False)


def _readlink(path: Any, *, dir_fd: int | None = None) -> Any:
    if not _frames or _busy or _collecting[0] or isinstance(path, int):
        return REAL_READLINK(path, dir_fd=dir_fd)
    try:
        found = REAL_READLINK(path, dir_fd=dir_fd)
    except OSError as e:
        _watch("readlink", path, dir_fd, error_text(e))
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


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "link" if stat.S_ISLNK(mode) else "other"


def error_text(e: OSError) -> str:
    return f"error {e.errno}"


def _collection(phase: str, info: dict[str, int]) -> None:
    _collecting[0] = phase == "start"


@functools.cache
def _install_hook() -> None:
    sys.addaudithook(_audit)
    gc.callbacks.append(_collection)


def unwatched(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)``, whose reads belong to no root (a finalizer)."""
    _busy.append(True)
    try:
        return function(*args)
    finally:
        _busy.clear()


def begin() -> Frame:
    _install_hook()
    _ignored_prefixes()
    frame = Frame()
    _frames.append(frame)
    os.stat, os.lstat, os.readlink = _stat, _lstat, _readlink  # type: ignore[assignment]
    return frame


def end(frame: Frame) -> Frame:
    try:
        while _frames:
            top = _frames.pop()
            if top is frame:
                break
            frame.merge(top.seen.items(), top.impure, top.unstable)
    finally:
        os.stat, os.lstat, os.readlink = REAL_STAT, _REAL_LSTAT, REAL_READLINK
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


def signature(path: Any) -> Signature:
    """What says that a file or directory is as it was: kind, identity, size, times."""
    try:
        s = REAL_STAT(path)
    except OSError as e:
        return (error_text(e),)
    except ValueError:
        return ("invalid",)
    return (kind_of(s.st_mode), s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)


def settled(sig: Signature) -> bool:
    """A signature old enough that the next change of the file will change it."""
    return len(sig) == 6 and time.time_ns() - sig[5] > RACY_NS


_DIGESTS: dict[tuple[str, Signature], str] = {}  # per process, of settled files only


def file_digest(path: str, sig: Signature) -> str:
    if sig[0] != "file":
        return sig[0]
    known = _DIGESTS.get((path, sig))
    if known is not None:
        return known
    from krmcheck.resource.files import MAX_FILE_BYTES

    if sig[3] > MAX_FILE_BYTES:  # refused unread by every reader (files.read_bounded): its size is all that counts
        return f"{sig[3]} bytes, over the limit"
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(functools.partial(fh.read, 1 << 20), b""):
                h.update(block)
    except OSError as e:
        return error_text(e)
    digest = h.hexdigest()
    if settled(sig) and signature(path) == sig:
        _DIGESTS[(path, sig)] = digest
    return digest


def dir_digest(path: str, sig: Signature) -> str:
    if sig[0] != "dir":
        return sig[0]
    try:
        with os.scandir(path) as it:
            names = sorted((os.fsencode(e.name), _entry_kind(e)) for e in it)
    except OSError as e:
        return error_text(e)
    return hashlib.sha256(repr(names).encode()).hexdigest()


def _entry_kind(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_symlink():
            return "link"
        return "dir" if entry.is_dir() else "file" if entry.is_file() else "other"
    except OSError as e:
        return error_text(e)


def journaling() -> bool:
    """Whether a journal is open in this process (a root is being checked)."""
    return bool(_frames)
