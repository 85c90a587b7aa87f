"""What a KRM function is and what running one gives back.

The function runtime (``krmcheck/fn/krm.py``) takes a :class:`FunctionSpec`, however
it was found (a ``config.kubernetes.io/function`` annotation, a function
catalog, a Kptfile, ``.krmcheck.yaml``), runs it over resources through a
transport (exec or container) and returns a :class:`FunctionOutput`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from krmcheck.resource.resource import Resource
from krmcheck.results import Result
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Origin


@dataclass(frozen=True)
class Mount:
    """A storage mount a container function declares (kustomize's StorageMount)."""

    type: str  # bind | volume | tmpfs
    src: str
    dst: str
    read_write: bool = False


@dataclass(frozen=True)
class FunctionSpec:
    """How to run one function. Exactly one of ``exec_path`` and ``image``."""

    exec_path: str | None = None  # an executable, resolved to an absolute path
    image: str | None = None  # a container image, optionally pinned "@sha256:..."
    network: bool = False  # the function asks for network access
    mounts: tuple[Mount, ...] = ()
    envs: tuple[str, ...] = ()  # "K=V" or bare "K" (copied from the caller's environment)
    origin: Origin | None = None  # where the function was declared

    def describe(self) -> str:
        return f"exec {self.exec_path}" if self.exec_path else f"container {self.image}"


@dataclass(frozen=True)
class FunctionOutput:
    """A function's answer: the new items (origins kept or re-assigned by
    matching ids) and the Results it reported, with its stderr."""

    items: list[Resource]
    results: list[Result] = field(default_factory=list)
    stderr: str = ""


@dataclass(frozen=True)
class ExternalValidator:
    """A validator KRM function declared in ``.krmcheck.yaml`` or a Kptfile."""

    name: str
    spec: FunctionSpec
    function_config: Mapping | None = None  # with the origins of where it was written

    @property
    def origin(self) -> Origin | None:
        return self.spec.origin
