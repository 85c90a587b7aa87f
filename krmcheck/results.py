"""Results (KRM Functions specification) and Findings (a Result at a source line)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from krmcheck.tree.origin import Location, Origin

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"error": 3, "warning": 2, "info": 1, "never": 4}


@dataclass(frozen=True)
class ResourceRef:
    apiVersion: str
    kind: str
    name: str
    namespace: str = ""

    def to_dict(self) -> dict[str, str]:
        d = {"apiVersion": self.apiVersion, "kind": self.kind, "name": self.name}
        if self.namespace:
            d["namespace"] = self.namespace
        return d

    def __str__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"


@dataclass(frozen=True)
class Result:
    """One item of a ResourceList's ``results``, exactly as a function emits it."""

    message: str
    severity: str = "error"
    resource_ref: ResourceRef | None = None
    field_path: str = ""
    file_path: str = ""
    file_index: int = 0
    tags: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"message": self.message, "severity": self.severity}
        if self.resource_ref:
            d["resourceRef"] = self.resource_ref.to_dict()
        if self.field_path:
            d["field"] = {"path": self.field_path}
        if self.file_path:
            d["file"] = {"path": self.file_path, "index": self.file_index}
        if self.tags:
            d["tags"] = dict(self.tags)
        return d

    @property
    def validator(self) -> str:
        return dict(self.tags).get("validator", "")


@dataclass(frozen=True)
class Finding:
    """A Result located at the source line a person must edit."""

    result: Result
    root: str
    location: Location
    trail: tuple[Origin, ...] = field(default=())

    @property
    def severity(self) -> str:
        return self.result.severity

    @property
    def message(self) -> str:
        return self.result.message

    @property
    def rule(self) -> str:
        return self.result.validator or "krmcheck"


@dataclass(frozen=True)
class RootReport:
    """What checking one kustomization root produced."""

    root: str  # repo-relative directory of the kustomization
    resources: tuple[ResourceRef, ...] = ()  # every rendered resource, in output order
    findings: tuple[Finding, ...] = ()
    build_failed: bool = False  # the root could not be built (its findings say why)


@dataclass(frozen=True)
class RunReport:
    """Everything one run checked, handed to every reporter."""

    roots: tuple[RootReport, ...]
    fail_on: str = "error"

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.roots for f in r.findings]

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def build_failed(self) -> bool:
        return any(r.build_failed for r in self.roots)
