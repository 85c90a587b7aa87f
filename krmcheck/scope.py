"""Which paths a setting applies to: gitignore-style patterns, relative to
the directory of the file that wrote them (``.krmcheck.yaml``) or to the
current directory (``--exclude``).

Paths given to :meth:`PathPatterns.matches` are repo-relative POSIX paths,
the same spelling every Location uses. Matching follows gitignore: a
pattern with no slash matches at any depth, one with a slash is anchored
at the base, ``**`` spans directories, a trailing ``/`` matches only
directories (and everything below them), ``!`` re-includes.
"""

from __future__ import annotations

import functools
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when a pattern is first matched: most runs have none
    import pathspec


@dataclass(frozen=True)
class PathPatterns:
    base: str  # repo-relative directory the patterns are relative to ("" at the top)
    patterns: tuple[str, ...]
    source: str = ""  # where they were written, for messages: ".krmcheck.yaml" or "--exclude"

    def matches(self, path: str, directory: bool = False) -> bool:
        """Whether the repo-relative ``path`` (a directory when ``directory``) is matched."""
        relative = _below(path, self.base)
        if relative is None or not self.patterns:
            return False
        return _spec(self.patterns).match_file(relative + "/" if directory else relative)


def _below(path: str, base: str) -> str | None:
    """``path`` relative to ``base``; None when it lies outside."""
    if not base or base == ".":
        return None if path.startswith("../") else path
    relative = posixpath.relpath(path, base)
    return None if relative == ".." or relative.startswith("../") else relative


@functools.lru_cache(maxsize=64)
def _spec(patterns: tuple[str, ...]) -> pathspec.PathSpec:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def any_match(scopes: tuple[PathPatterns, ...], path: str, directory: bool = False) -> PathPatterns | None:
    """The first of ``scopes`` that matches ``path``."""
    for scope in scopes:
        if scope.matches(path, directory):
            return scope
    return None
