"""Build errors: every one names the file and line that caused it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from krmcheck.tree.origin import Location, Origin


class BuildError(Exception):
    """A kustomization that cannot be built. ``location`` is where to look;
    ``context`` grows as the error passes up through the build steps."""

    def __init__(self, message: str, location: Location | Origin | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = (Location(location.path, location.line, location.col)
                         if location is not None else None)
        self.context: list[str] = []

    def add_context(self, context: str) -> "BuildError":
        self.context.append(context)
        return self

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location and self.location.path else ""
        chain = "".join(f"{c}: " for c in reversed(self.context))
        return f"{where}{chain}{self.message}"


class ProgramError(BuildError):
    """A build error whose message holds what a program printed (its
    stderr, its output): text with no provenance, masked with every Secret
    value the run has seen (krmcheck.redact)."""

    @classmethod
    def of(cls, e: BuildError) -> "ProgramError":
        if isinstance(e, ProgramError):
            return e
        made = cls(e.message, e.location)
        made.context = list(e.context)
        return made


@contextlib.contextmanager
def reading_program_output() -> Iterator[None]:
    """A build error raised while a program's output is read quotes it."""
    try:
        yield
    except BuildError as e:
        raise ProgramError.of(e) from None


class MissingFile(BuildError):
    """A file a kustomization names that does not exist (``path``)."""

    def __init__(self, message: str, location: Location | Origin | None, path: Path) -> None:
        super().__init__(message, location)
        self.path = path


class Encrypted(BuildError):
    """A file the repository keeps encrypted (git-crypt: ``path``), which
    only a key holder's checkout can read; what reads it is not checked."""

    def __init__(self, message: str, location: Location | Origin | None, path: Path) -> None:
        super().__init__(message, location)
        self.path = path


class MissingKustomization(MissingFile):
    """A directory a kustomization names that holds no kustomization file
    (``path``: where ``kustomization.yaml`` would be)."""


class NeedsNetwork(BuildError):
    """A build that would have to fetch ``url`` while the network is off.

    The message says how to allow it, as a build's error (``krmcheck build``
    fails on it as kubectl fails when it cannot fetch); ``what`` names the
    entry for a check, which reports the root as not checked instead
    (``krmcheck.pipeline``)."""

    def __init__(self, message: str, location: Location | Origin | None, what: str, url: str) -> None:
        super().__init__(message, location)
        self.what = what  # "remote resource", "configMapGenerator 'name' file", "helm chart"...
        self.url = url
