"""What source-controller leaves out of a GitRepository's artifact:
``.sourceignore`` files and ``spec.ignore``, in gitignore syntax.

As fluxcd/pkg does it (``sourceignore.LoadIgnorePatterns`` reads the
``.sourceignore`` of every directory, each scoped to its directory;
``GitRepositoryReconciler.reconcileArtifact`` appends ``spec.ignore``;
``storage.SourceIgnoreFilter`` decides):

- with no pattern at all, source-controller's defaults apply: version
  control files (``.git/``, ``.gitignore``...), images and archives
  (``*.jpg``, ``*.png``, ``*.zip``...), CI configuration (``.github/``,
  ``.gitlab-ci.yml``...) and ``**/.sops.yaml``, ``**/.flux.yaml``,
  ``**/.goreleaser.yml``;
- with any pattern, only the version control files and the patterns;
- each file is matched on its own path (go-git's gitignore matcher): the
  last pattern that matches decides, a name without ``/`` matches any
  component of the path (so a directory's files go with it), one with ``/``
  is anchored to the pattern's directory, ``!`` brings a path back.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from krmcheck.tree.origin import Location

IGNORE_FILE = ".sourceignore"
VCS = (".git/", ".gitignore", ".gitmodules", ".gitattributes")
DEFAULTS = ("*.jpg", "*.jpeg", "*.gif", "*.png", "*.wmv", "*.flv", "*.tar.gz", "*.zip",
            ".github/", ".circleci/", ".travis.yml", ".gitlab-ci.yml", "appveyor.yml", ".drone.yml",
            "cloudbuild.yaml", "codeship-services.yml", "codeship-steps.yml",
            "**/.goreleaser.yml", "**/.sops.yaml", "**/.flux.yaml")
SKIP = {".git"}  # directories whose .sourceignore files are not read


class Pattern(NamedTuple):
    text: str  # as written
    domain: tuple[str, ...]  # the directory it applies below (the .sourceignore's)
    parts: tuple[str, ...]
    inclusion: bool
    dir_only: bool
    anchored: bool  # has a "/": matched from the domain down, else any component
    where: Location | None  # where it is written; None: one of source-controller's own

    def match(self, path: tuple[str, ...], is_dir: bool) -> bool:
        n = len(self.domain)
        if len(path) <= n or path[:n] != self.domain:
            return False
        rest = path[n:]
        return self._glob(rest, is_dir) if self.anchored else self._name(rest, is_dir)

    def _name(self, path: tuple[str, ...], is_dir: bool) -> bool:
        for i, name in enumerate(path):
            if _fnmatch(self.parts[0], name):
                return not (self.dir_only and not is_dir and i == len(path) - 1)
        return False

    def _glob(self, path: tuple[str, ...], is_dir: bool) -> bool:
        matched = traverse = False
        rest = list(path)
        for i, part in enumerate(self.parts):
            if part == "":
                traverse = False
                continue
            if part == "**":
                if i == len(self.parts) - 1:
                    break
                traverse = True
                continue
            if "**" in part or not rest:
                return False
            if traverse:
                traverse = False
                while rest:
                    name = rest.pop(0)
                    if _fnmatch(part, name):
                        matched = True
                        break
                    if not rest:
                        matched = False
            else:
                if not _fnmatch(part, rest[0]):
                    return False
                matched = True
                rest.pop(0)
        return matched and not (self.dir_only and not is_dir and not rest)


def parse(text: str, domain: tuple[str, ...] = (), where: Location | None = None) -> list[Pattern]:
    """The patterns of an ignore file or ``spec.ignore`` (``#`` lines and blank ones skipped)."""
    out = []
    for i, line in enumerate(text.splitlines()):
        if line.startswith("#") or not line.strip():
            continue
        at = Location(where.path, where.line + i, 1) if where is not None else None
        out.append(_pattern(line, domain, at))
    return out


def _pattern(p: str, domain: tuple[str, ...], where: Location | None) -> Pattern:
    written = p
    inclusion = p.startswith("!")
    if inclusion:
        p = p[1:]
    if not p.endswith("\\ "):
        p = p.rstrip(" ")
    dir_only = p.endswith("/")
    if dir_only:
        p = p[:-1]
    return Pattern(written, domain, tuple(p.split("/")), inclusion, dir_only, "/" in p, where)


@dataclass(frozen=True)
class SourceIgnore:
    """The patterns of one source, in order; ``top``: the source's top."""

    patterns: tuple[Pattern, ...]
    top: Path

    def excludes(self, path: Path) -> Pattern | None:
        """The pattern that leaves the file or directory ``path`` out; None: it is in."""
        try:
            rel = path.relative_to(self.top).as_posix()
        except ValueError:
            return None
        # (os.path.isdir: a name too long to stat is no directory, not a crash)
        return self.excluding(rel, os.path.isdir(path)) if rel != "." else None

    def excluding(self, path: str, is_dir: bool = False) -> Pattern | None:
        """The pattern that leaves ``path`` (relative to the source's top) out; None: it is in."""
        parts = tuple(p for p in path.split("/") if p)
        for pattern in reversed(self.patterns):
            if pattern.match(parts, is_dir):
                return None if pattern.inclusion else pattern
        return None

    def describe(self, pattern: Pattern) -> str:
        where = f"{pattern.where.path}:{pattern.where.line}" if pattern.where is not None else \
            "source-controller's defaults, used while no .sourceignore or spec.ignore gives a pattern"
        return f"'{pattern.text}' ({where})"


def load(top: Path, display: Callable[[Path], str],
         spec_ignore: tuple[str, Location] | None = None) -> SourceIgnore:
    """The patterns of the repository at ``top``: every ``.sourceignore``
    below it, then ``spec_ignore`` (the text and where it is written)."""
    found: list[Pattern] = []
    for here, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP)
        if IGNORE_FILE in filenames:
            path = Path(here) / IGNORE_FILE
            rel = Path(here).relative_to(top)
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            found += parse(text, tuple(rel.parts), Location(display(path), 1, 1))
    if spec_ignore is not None:
        found += parse(spec_ignore[0], (), spec_ignore[1])
    own = [_pattern(p, (), None) for p in VCS]
    if not found:
        own += [_pattern(p, (), None) for p in DEFAULTS]
    return SourceIgnore(tuple(own + found), top)


_CACHE: dict[str, re.Pattern[str]] = {}


def _fnmatch(pattern: str, name: str) -> bool:
    """Go's ``filepath.Match`` on one path component: ``*``, ``?``, ``[...]``
    (``^`` negates), ``\\`` escapes; a malformed pattern matches nothing."""
    rx = _CACHE.get(pattern)
    if rx is None:
        rx = _CACHE[pattern] = _translate(pattern)
    return rx.fullmatch(name) is not None


def _translate(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("^", "]") else i + 1)
            if end < 0:
                return re.compile(r"(?!)")  # ErrBadPattern: no match
            body = pattern[i + 1:end]
            negate = body.startswith("^")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return re.compile("".join(out))
    except re.error:
        return re.compile(r"(?!)")
