"""Which paths a setting applies to: gitignore-style patterns, relative to
the directory of the file that wrote them (``.krmcheck.yaml``) or to the
current directory (``--exclude``).

Paths given to :meth:`PathPatterns.matches` are repo-relative POSIX paths,
the same spelling every Location uses. Matching follows gitignore: a
pattern with no slash matches at any depth, one with a slash is anchored
at the base, ``**`` spans directories, a trailing ``/`` matches only
directories (and everything below them), ``!`` re-includes.

The patterns come from the repository: pathspec matches them with RE2
(linear time, :mod:`krmcheck.regex`), never with Python's backtracking
``re`` (``a*a*a*a*a*a*a*a*b`` against a long name). A pattern that cannot
be compiled is refused where it is written (:func:`refusal`).
"""

from __future__ import annotations

import functools
import posixpath
import warnings
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


class PatternError(ValueError):
    """A gitignore-style pattern that cannot be compiled, and why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def refusal(pattern: str) -> str | None:
    """Why ``pattern`` cannot be used, or None."""
    try:
        _spec((pattern,))
    except PatternError as e:
        return e.reason
    return None


@functools.lru_cache(maxsize=64)
def _spec(patterns: tuple[str, ...]) -> pathspec.PathSpec:
    import pathspec
    import re2

    with warnings.catch_warnings():
        # pathspec also compiles each pattern with re, which warns about
        # what it would read differently; RE2 matches them
        warnings.simplefilter("ignore")
        try:
            return pathspec.GitIgnoreSpec.from_lines(patterns, backend="re2")
        except (ValueError, re2.error) as e:
            if isinstance(e, re2.error):  # RE2 refused the regular expression pathspec made of it
                raise PatternError("RE2 cannot compile the regular expression it makes") from None
            raise PatternError(str(e)) from None


def any_match(scopes: tuple[PathPatterns, ...], path: str, directory: bool = False) -> PathPatterns | None:
    """The first of ``scopes`` that matches ``path``."""
    for scope in scopes:
        if scope.matches(path, directory):
            return scope
    return None
