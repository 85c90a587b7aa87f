"""Transports move bytes: an argv and stdin in, stdout, stderr and an exit
code out, under a time limit. Every untrusted program krmcheck starts
(plugins, functions, helm, oras) runs through the bounded ``exec.py``, so
both the build and the function runtime use this package. Wrapping
resources, ids and results live in ``krmcheck.fn.resource_list``,
``krmcheck.resource.build_state`` and ``krmcheck.fn.adoption``; what a container
command line looks like lives in ``krmcheck.fn.container``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Protocol


@dataclass(frozen=True)
class Invocation:
    """One program run: what to start, where, with what input."""

    argv: tuple[str, ...]
    stdin: bytes
    cwd: Path
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 60.0


@dataclass(frozen=True)
class Completed:
    """What the program gave back."""

    stdout: bytes
    stderr: bytes
    returncode: int

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")


class TransportError(Exception):
    """The program could not be run at all (missing, not executable, timed
    out, or printing more than the transport reads)."""


class TransportTimeout(TransportError):
    """The program did not finish within its time limit (and was killed)."""


class Transport(Protocol):
    def run(self, call: Invocation) -> Completed: ...
