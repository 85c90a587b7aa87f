"""File access for a build, under kustomize's load restrictor.

Paths in origins and messages are repo-relative (POSIX separators); the
repository root is fixed once per run.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from krmcheck.resource.errors import BuildError, Encrypted, MissingFile
from krmcheck.tree.origin import Origin

# git-crypt writes this header before a file's ciphertext (git-crypt's own
# file format: a NUL, GITCRYPT, a NUL, then the nonce)
GIT_CRYPT = b"\x00GITCRYPT\x00"

ROOT_ONLY = "LoadRestrictionsRootOnly"
NONE = "LoadRestrictionsNone"
# Not a kustomize value: how kustomize-controller builds a Flux Kustomization,
# LoadRestrictionsNone inside a file system confined to the source artifact
# (here: the repository), so no file outside the repository is read.
REPOSITORY = "LoadRestrictionsRepository"
RESTRICTORS = (ROOT_ONLY, NONE)


Within = tuple[str, Path]  # (load restrictor, kustomization directory)


@dataclass(frozen=True)
class Files:
    """Reads files and names them relative to ``repo_root``."""

    repo_root: Path

    @property
    def root_only(self) -> bool:
        """Read under LoadRestrictionsRootOnly whatever the flag says (a clone)."""
        return False

    def display(self, path: Path) -> str:
        try:
            return Path(os.path.relpath(path, self.repo_root)).as_posix()
        except ValueError:
            return path.as_posix()

    def kind(self, path: Path, origin: Origin | None = None) -> str:
        """"dir", "file" or "missing" for a path a kustomization names; a path
        the system cannot look at (a NUL byte, a name too long, a symbolic
        link loop, no permission) is an error at ``origin``."""
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            return "missing"
        except NotADirectoryError:
            return "missing"
        except ValueError:
            raise BuildError(f"{_shown(self.display(path))}: a path may not hold a NUL byte", origin) from None
        except OSError as e:
            raise BuildError(f"{_shown(self.display(path))}: {_reason(e)}", origin) from None
        return "dir" if stat.S_ISDIR(mode) else "file"

    def read_text(self, path: Path, origin: Origin | None = None, within: Within | None = None) -> str:
        """The file as text. ``within`` (the load restrictor and the
        kustomization directory) is given for every file a kustomization
        names: the restrictor is enforced here, for every such read."""
        if within is not None:
            check_restriction(within[0], within[1], path, origin, self)
        try:
            data = self._read(path, origin)
        except FileNotFoundError:
            raise MissingFile(f"{self.display(path)}: no such file", origin, path) from None
        except IsADirectoryError:
            raise BuildError(f"{self.display(path)}: is a directory, not a file", origin) from None
        except OSError as e:
            raise BuildError(f"{self.display(path)}: {e.strerror}", origin) from None
        if data.startswith(GIT_CRYPT):
            raise self._encrypted(path, origin)
        try:
            return data.decode("utf-8").lstrip("\ufeff")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            col = len(data[data.rfind(b"\n", 0, e.start) + 1:e.start].decode("utf-8", "replace")) + 1
            raise BuildError(f"invalid YAML: invalid UTF-8 (byte 0x{data[e.start]:02x})",
                             Origin(self.display(path), line, col)) from None

    def read_bytes(self, path: Path, origin: Origin | None = None, within: Within | None = None) -> bytes:
        if within is not None:
            check_restriction(within[0], within[1], path, origin, self)
        try:
            data = self._read(path, origin)
        except OSError as e:
            raise BuildError(f"{self.display(path)}: {e.strerror or 'cannot read'}", origin) from None
        if data.startswith(GIT_CRYPT):
            raise self._encrypted(path, origin)
        return data

    def _encrypted(self, path: Path, origin: Origin | None) -> Encrypted:
        return Encrypted(f"{self.display(path)} is encrypted with git-crypt (its header); it is read in a checkout "
                         f"unlocked with the key (git-crypt unlock)", origin or Origin(self.display(path), 1, 1), path)


    def _read(self, path: Path, origin: Origin | None) -> bytes:
        """The file's bytes, read by :func:`read_bounded`; a refused file
        is an error at ``origin``."""
        try:
            return read_bounded(path)
        except Refused as e:
            raise BuildError(f"{_shown(self.display(path))}: {e.reason}", origin) from None


def join(directory: Path, rel: str) -> Path:
    """The file or directory a kustomization in ``directory`` names as
    ``rel``, joined as kustomize joins it (Go's ``filepath.Join``, which
    cleans the name): ``.`` and ``..`` inside the name are folded as
    written, before any symbolic link is followed, so ``link/../cm.yaml``
    is ``cm.yaml`` beside the kustomization wherever ``link`` leads. Only
    a ``..`` left at the start climbs out of ``directory``, through the
    file system, as kustomize climbs from the directory's real path. Where
    the result really is stays for the load restrictor to check."""
    return directory / os.path.normpath(rel) if rel else directory


MAX_FILE_BYTES = 128 * 1024 * 1024  # any file read; the largest real manifests are a few MB


class Refused(OSError):
    """A file not read: not a regular file (a FIFO would wait for a writer
    forever, a device never ends), larger than the limit, or a symbolic
    link that leads out of the directory it must stay in. An ``OSError``,
    so that a reader that treats an unreadable file as absent does the
    same with a refused one; ``reason`` says why, for a message."""

    def __init__(self, reason: str) -> None:
        super().__init__(errno.EPERM, reason)
        self.reason = reason


def read_bounded(path: str | os.PathLike[str], within: str | os.PathLike[str] | None = None,
                 limit: int | None = None) -> bytes:
    """The bytes of the file at ``path``, the one way krmcheck reads a file
    of a repository: at most ``limit`` bytes (default ``MAX_FILE_BYTES``),
    a regular file only, and with ``within``, only where it really is at or
    below that directory. Raises :class:`Refused`, or the ``OSError`` of
    the file system (FileNotFoundError, IsADirectoryError...)."""
    limit = MAX_FILE_BYTES if limit is None else limit
    if within is not None and not inside(path, within, resolve=True):
        raise Refused("a symbolic link to a file outside the repository")
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        raise Refused(f"not a regular file ({_special(info.st_mode)})")
    # Opened without blocking: a FIFO put in the file's place after the stat
    # above must not wait for a writer; what was opened is checked again.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"not a regular file ({_special(info.st_mode)})")
        if info.st_size > limit:
            raise Refused(_too_large(info.st_size, limit))
        os.set_blocking(fd, True)
        data = f.read(limit + 1)
    if len(data) > limit:  # it grew while read, or says it is smaller than it is
        raise Refused(f"more than the limit of {limit:,} bytes for one file")
    return data


def read_text_bounded(path: str | os.PathLike[str], within: str | os.PathLike[str] | None = None) -> str:
    """:func:`read_bounded` as text, undecodable bytes replaced: for the
    readers that only look at a file (discovery, markers, the CRD scan)."""
    return read_bounded(path, within).decode("utf-8", errors="replace")


def _too_large(size: int, limit: int) -> str:
    return f"{size:,} bytes, more than the limit of {limit:,} for one file"


def _special(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"


def _reason(e: OSError) -> str:
    if e.errno == errno.ELOOP:
        return "a symbolic link loop"
    if e.errno == errno.ENAMETOOLONG:
        return "the name is too long"
    return e.strerror or type(e).__name__


def _shown(path: Path | str, limit: int = 200) -> str:
    """A path for a message: printable, and shortened when very long."""
    text = str(path).encode("unicode_escape").decode("ascii") if not str(path).isprintable() else str(path)
    return text if len(text) <= limit else text[:limit // 2] + "..." + text[-limit // 2:]


def inside(path: str | os.PathLike[str], root: str | os.PathLike[str], *, resolve: bool) -> bool:
    """Whether ``path`` is ``root`` or lies below it.

    With ``resolve``, both are followed through symbolic links first: where
    the file really is, for what is read or mounted. Without, only ``.`` and
    ``..`` are folded, as the names are written: for a path that does not
    exist yet, a path already resolved, or a relative path that must not
    climb out of ``"."`` (so ``a/../../d`` is outside even when it comes
    back in). Raises ValueError for a name holding a NUL byte."""
    if resolve:
        real, top = os.path.realpath(path), os.path.realpath(root)
    else:
        real, top = os.path.normpath(path), os.path.normpath(root)
    if top == os.curdir:
        return not os.path.isabs(real) and real != os.pardir and not real.startswith(os.pardir + os.sep)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def check_restriction(restrictor: str, root: Path, target: Path, origin: Origin | None,
                      files: Files) -> None:
    """Under RootOnly, a file must lie at or below the kustomization root;
    under REPOSITORY, at or below the top of the repository."""
    if restrictor == NONE:
        return
    if restrictor == REPOSITORY:
        root = files.repo_root
    try:
        allowed = inside(target, root, resolve=True)
    except ValueError:
        raise BuildError(f"{_shown(files.display(target))}: a path may not hold a NUL byte", origin) from None
    if not allowed and restrictor == REPOSITORY:
        raise BuildError(f"security; file '{files.display(target)}' is outside the repository, the "
                         f"only files a GitOps controller's build can read", origin)
    if not allowed:
        raise OutsideRoot(f"security; file '{files.display(target)}' is not in or below "
                          f"'{files.display(root)}'", origin, fixed=files.root_only)


class OutsideRoot(BuildError):
    """A file the load restrictor refuses. Unless the restrictor is
    ``fixed`` (a clone), the message ends with how to allow it, and
    :meth:`allow_also` adds another way."""

    HOW = "pass --load-restrictor LoadRestrictionsNone"

    def __init__(self, message: str, origin: Origin | None, fixed: bool = False) -> None:
        if fixed:
            message += " (a remote kustomization is always built with LoadRestrictionsRootOnly)"
        else:
            message += f"; this root builds only with LoadRestrictionsNone: {self.HOW}"
        super().__init__(message, origin)
        self.fixed = fixed

    def allow_also(self, how: str) -> None:
        if not self.fixed:
            self.message += f" or {how}"


def texts_under(top: Path, wanted: Callable[[Path], bool], skip: frozenset[str], seconds: float,
                limit: int) -> Iterator[tuple[Path, str]]:
    """(path, text) of each file under ``top`` whose path ``wanted``
    accepts, in a stable order, leaving out ``skip`` and hidden directories;
    a scan of the repository's own files, so it stops once ``seconds`` have
    passed or ``limit`` characters are read (checked at each directory), and
    a file it cannot read is passed over."""
    started, total = time.monotonic(), 0
    for directory, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in skip and not d.startswith("."))
        if time.monotonic() - started > seconds or total > limit:
            return
        for name in sorted(names):
            path = Path(directory, name)
            if not wanted(path):
                continue
            try:
                text = read_text_bounded(path)
            except (OSError, ValueError):
                continue
            total += len(text)
            yield path, text
