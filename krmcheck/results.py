"""Results (KRM Functions specification) and Findings (a Result at a source line)."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from krmcheck.tree.origin import Location, Origin

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"error": 3, "warning": 2, "info": 1, "never": 4}
NOT_CHECKED = "remote"  # the rule of a root not checked because it needs the network, which is off


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
    # Written by a program (a KRM function, a plugin, an external validator:
    # its Results, or its output in a build error): text with no provenance,
    # so every Secret value the run has seen is masked in it (krmcheck.redact).
    by_program: bool = field(default=False, compare=False)

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
    # The resource as its source file names it (``Kind/namespace/name``
    # before prefixes, suffixes, namespaces or hashes an overlay added), so
    # that a base's defect has one identity in every root; "" when unknown.
    source_id: str = ""

    @property
    def severity(self) -> str:
        return self.result.severity

    @property
    def message(self) -> str:
        return self.result.message

    @property
    def rule(self) -> str:
        return self.result.validator or "krmcheck"

    @property
    def resource_id(self) -> str:
        """The resource's identity for baselines: as the source names it."""
        if self.source_id:
            return self.source_id
        return str(self.result.resource_ref) if self.result.resource_ref else ""

    @property
    def fingerprint(self) -> str:
        """What stays the same while the defect does, whatever moves around
        it: validator, file, resource and message (no line numbers)."""
        return fingerprint(self.rule, self.location.path, self.resource_id, self.message)


def fingerprint(validator: str, path: str, resource: str, message: str) -> str:
    text = "\0".join((validator, path, resource, message))
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:32]  # a non-UTF-8 file name too


@dataclass(frozen=True)
class Suppressed:
    """A finding that something asked to silence: kept, counted and listed."""

    finding: Finding
    by: str  # comment, annotation, exclude, override, baseline
    where: str  # what silenced it: the comment's location, the pattern, the baseline file...


@dataclass(frozen=True)
class Defect:
    """One defect: the findings of every root that renders it, all at the same
    location, from the same validator, with the same message."""

    findings: tuple[Finding, ...]  # one or more per root, ordered by root

    @property
    def finding(self) -> Finding:
        """The representative finding (the first root's)."""
        return self.findings[0]

    @property
    def roots(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.root for f in self.findings))

    @property
    def severity(self) -> str:
        return max((f.severity for f in self.findings), key=lambda s: SEVERITY_RANK.get(s, 0))

    @property
    def location(self) -> Location:
        return self.finding.location

    @property
    def message(self) -> str:
        return self.finding.message

    @property
    def rule(self) -> str:
        return self.finding.rule

    @property
    def trail(self) -> tuple[Origin, ...]:
        return self.finding.trail

    @property
    def fingerprint(self) -> str:
        return self.finding.fingerprint


def defect_key(finding: Finding) -> tuple[Location, str, str]:
    return (finding.location, finding.rule, finding.message)


def group(findings: Iterable[Finding]) -> list[Defect]:
    """Findings as defects, in the order each defect is first seen."""
    by_key: dict[tuple[Location, str, str], list[Finding]] = {}
    for f in findings:
        by_key.setdefault(defect_key(f), []).append(f)
    return [Defect(tuple(sorted(fs, key=lambda f: f.root))) for fs in by_key.values()]


@dataclass(frozen=True)
class RootReport:
    """What checking one kustomization root produced."""

    root: str  # repo-relative directory of the kustomization (or file, for a plain manifest)
    resources: tuple[ResourceRef, ...] = ()  # every rendered resource, in output order
    findings: tuple[Finding, ...] = ()
    build_failed: bool = False  # the root could not be built (its findings say why)
    # not checked: it needs the network, which is off (a ``remote`` warning says where)
    needs_network: bool = False
    suppressed: tuple[Suppressed, ...] = ()
    # Where the root's resources carry a krmcheck.io/ignore annotation, with
    # the validator ids it names (an annotation that silences nothing is reported).
    ignore_annotations: tuple[tuple[Location, str], ...] = ()
    # per kind: (apiVersion, kind, schema source, where the schema came from,
    # rendered resources); the source is "" when no schema was found
    coverage: tuple[tuple[str, str, str, str, int], ...] = ()
    crds: tuple[tuple[str, str, str], ...] = ()  # CRDs it renders: (group, kind, where)
    # each rendered object, where its name is written, and its source id
    # (only when .krmcheck.yaml groups roots into clusters)
    places: tuple[tuple[ResourceRef, Location, str], ...] = ()
    # with --diff-against: each rendered resource as (ref, source id, YAML
    # with Secret values hidden, the file that wrote it), in output order
    # (see krmcheck.diff)
    rendered: tuple[tuple[ResourceRef, str, str, str], ...] = ()
    # what the root needs that is policy, not a defect (krmcheck.pipeline.policy
    # gives the run one finding for each): (setting, the entry that needs it),
    # "load-restrictor" (it was checked as it builds with the restrictor
    # lifted) or "helm" (not checked: it inflates Helm charts, and
    # --enable-helm is off)
    policies: tuple[tuple[str, Location], ...] = ()
    # The Secret values its build saw, as they are (so that text a program
    # wrote in any root is masked with every root's values: krmcheck.redact,
    # ``program_text``). In memory only: the render cache keeps none, and
    # says so with ``secrets_withheld``.
    secrets: frozenset[str] = field(default=frozenset(), repr=False)
    secrets_withheld: bool = False
    # with --diff-against, on the work tree's side: what the change does
    # that a reviewer must see (see krmcheck.flags)
    flags: tuple[Flag, ...] = ()
    # the GitOps controller object that applies the root, when one does
    controller: Controller | None = None

    @property
    def program_text(self) -> bool:
        """Whether any of its findings is text a program wrote."""
        return any(f.result.by_program for f in self.findings) or \
            any(s.finding.result.by_program for s in self.suppressed)


@dataclass(frozen=True)
class Flag:
    """A change the merge makes that a reviewer must see, at the source line
    that made it: one that wedges or hurts (``section`` "flag"), or what the
    GitOps controller will do with it ("controller"). ``id`` is stable
    (``selector-changed``, ``suspended``...): teams gate on it."""

    id: str
    finding: Finding  # the object, the line, the message and how severe it is
    old: str = ""
    new: str = ""
    section: str = "flag"
    objects: tuple[str, ...] = ()  # the objects it is about, when several (pruned, orphaned)


@dataclass(frozen=True)
class Controller:
    """The controller object that applies a root, as the pull-request view
    needs it: whether it holds changes back and what happens to removed objects."""

    ref: ResourceRef  # the controller object
    location: Location  # where it is written
    suspended: bool = False
    suspend_at: Location | None = None  # the spec.suspend line, when set
    # removed objects are deleted (Flux prune: true, a HelmRelease's upgrade,
    # Argo CD automated prune); else they are left running
    prune: bool = False
    prune_at: Location | None = None
    automated: bool = True  # it syncs by itself (an Argo CD Application may not)


@dataclass(frozen=True)
class ImageChange:
    """A container image that the change replaces, with the workloads using it."""

    old: str
    new: str
    workloads: tuple[str, ...]  # Kind/namespace/name, each once


@dataclass(frozen=True)
class Note:
    """Something the run wants a person to know that is not a finding
    (a baseline entry that can go, a path with nothing to check)."""

    message: str
    location: Location | None = None


@dataclass(frozen=True)
class Change:
    """One resource a --diff-against root adds, removes, renames or changes."""

    status: str  # added, removed, renamed, changed
    resource: str  # Kind/[namespace/]name (for a rename: the new one)
    was: str = ""  # a renamed resource's old Kind/[namespace/]name
    diff: str = ""  # unified diff of the rendered YAML ("" for added and removed)


@dataclass(frozen=True)
class RootDiff:
    """One root's change: its resources, and its findings that are new or fixed."""

    root: str
    side: str  # "both", or "base" / "work" for a root that exists only there
    changes: tuple[Change, ...] = ()
    new: tuple[Finding, ...] = ()
    fixed: tuple[Finding, ...] = ()
    flags: tuple[Flag, ...] = ()  # flags and what the controller will do, in report order
    # the root fails to build at REF ("base"), in the work tree ("work") or
    # on both sides ("both"): no resource comparison then, with the error
    fails: str = ""
    error: str = ""
    # why its rendered output says nothing of the change (a chart or a
    # remote base that was not rendered), "" when it was rendered
    unrendered: str = ""

    @property
    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in ("added", "removed", "renamed", "changed")}
        for c in self.changes:
            out[c.status] += 1
        return out


@dataclass(frozen=True)
class RunReport:
    """Everything one run checked, handed to every reporter."""

    roots: tuple[RootReport, ...]
    fail_on: str = "error"
    # The current directory relative to the top of the repository ("" at the
    # top): the text report names files from there, so they are clickable.
    # Started outside the repository: cwd is "" and top_from_cwd leads from
    # the working directory to the top ("repo", "../repo").
    cwd: str = ""
    top_from_cwd: str = ""
    notes: tuple[Note, ...] = ()
    disabled: tuple[str, ...] = ()  # validators turned off by the configuration
    baseline: str = ""  # the baseline file in use, if any
    # with --diff-against REF: the revision, and each affected root's changes
    diff_against: str = ""
    diff: tuple[RootDiff, ...] = ()
    images: tuple[ImageChange, ...] = ()  # every image the change replaces, across the roots
    fail_on_flags: tuple[str, ...] = ()  # --fail-on-flag: these flags fail the run
    # files discovery did not take as manifests: (repo-relative path, reason, why)
    set_aside: tuple[tuple[str, str, str], ...] = ()
    # files judged as inputs of a test, a page or a tool, whose cluster
    # errors are warnings: (repo-relative path, reason, why)
    inputs: tuple[tuple[str, str, str], ...] = ()
    # the files the roots read (repo-relative), for the pull-request view
    read_files: tuple[str, ...] = ()

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.roots for f in r.findings]

    @functools.cached_property
    def defects(self) -> list[Defect]:
        return group(self.findings)

    @property
    def suppressed(self) -> list[Suppressed]:
        return [s for r in self.roots for s in r.suppressed]

    def count(self, severity: str) -> int:
        """Defects of ``severity`` (a defect many roots render counts once)."""
        return sum(1 for d in self.defects if d.severity == severity)

    @property
    def build_failed(self) -> bool:
        return any(r.build_failed for r in self.roots)
