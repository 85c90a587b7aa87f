"""Where a node came from: the one place PyYAML marks become locations."""

from __future__ import annotations

from typing import NamedTuple


class Location(NamedTuple):
    """A repo-relative file position, 1-based line and column."""

    path: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


class Origin(NamedTuple):
    """A location plus what put the value there (a resource file, a patch,
    the ``namePrefix`` field, a generator, a function...)."""

    path: str
    line: int
    col: int
    by: str = "resource"

    @property
    def location(self) -> Location:
        return Location(self.path, self.line, self.col)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col} ({self.by})"


UNKNOWN = Origin("", 0, 0, "unknown")


def from_mark(path: str, mark: object, by: str = "resource") -> Origin:
    """Convert a PyYAML mark (0-based) into an Origin (1-based)."""
    return Origin(path, getattr(mark, "line", -1) + 1, getattr(mark, "column", -1) + 1, by)


class Variable(NamedTuple):
    """A defined variable: its value and the line that defined it (Flux
    substitution, the configuration's ``substitute:``)."""

    value: str
    origin: Origin
