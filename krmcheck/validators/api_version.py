"""Resources use apiVersions that the target Kubernetes version still serves.

Kubernetes deprecates beta apiVersions of its built-in kinds when a newer
version arrives and stops serving them a few releases later; a manifest
that still names one is refused by the API server (``no matches for kind
"CronJob" in version "batch/v1beta1"``). For the Kubernetes version given
with ``--kubernetes-version`` (``1.30``, ``v1.30`` or ``1.30.2``; default:
the newest version whose schemas krmcheck bundles), each resource is
checked against the table of the Kubernetes deprecated API migration guide
(https://kubernetes.io/docs/reference/using-api/deprecation-guide/, from
the 1.16 removals on), completed with the beta versions deprecated after
the guide's last section and the deprecated core ``v1`` Endpoints. One
finding per resource, at its ``apiVersion`` field, naming the apiVersion
to use instead and, where moving needs more than a new apiVersion, what
changes:

- ``removed`` (error): the target version no longer serves it
  (``batch/v1beta1 CronJob was removed in Kubernetes 1.25; use batch/v1``).
  PodSecurityPolicy has no replacement; the message says so.
- ``deprecated`` (warning): still served, but deprecated at the target
  version, with the release that removes it.

An apiVersion deprecated after the target version is not reported. Alpha
apiVersions and custom resources are not checked. The table is package
data, ``krmcheck/validators/api_versions.yaml``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from krmcheck.results import Result
from krmcheck.schemas import builtin
from krmcheck.tree.load import FAST_LOADER
from krmcheck.tree.node import Mapping
from krmcheck.validators.base import ValidatorOptions, make_result, resource_ref

id = "api-version"
description = "apiVersions are still served, and not deprecated, in the target Kubernetes version"

TABLE = "api_versions.yaml"
_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?")


class Version(NamedTuple):
    """A Kubernetes minor release; tuples compare in release order."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


class Deprecation(NamedTuple):
    """One entry of the table: an apiVersion (for some or all of its kinds)
    that is deprecated, and from which release on it is no longer served."""

    api_version: str
    kinds: tuple[str, ...]  # empty: every kind of the apiVersion
    deprecated: Version
    removed: Version | None  # None: served for good
    replacement: str | None  # None: nothing replaces it
    replacement_kind: str = ""  # "": the same kind
    changes: str = ""
    source: str = ""

    def covers(self, kind: str) -> bool:
        return not self.kinds or kind in self.kinds

    def use(self, kind: str) -> str:
        """What to write instead: ``batch/v1`` or ``discovery.k8s.io/v1 EndpointSlice``."""
        if self.replacement is None:
            return ""
        if self.replacement_kind and self.replacement_kind != kind:
            return f"{self.replacement} {self.replacement_kind}"
        return self.replacement


def validate(items: Sequence[Mapping], options: ValidatorOptions) -> list[Result]:
    target = target_version(options.kubernetes_version)
    results = []
    for item in items:
        ref = resource_ref(item)
        entry = find(ref.apiVersion, ref.kind) if ref.kind else None
        if entry is None or target < entry.deprecated:
            continue
        if entry.removed is not None and target >= entry.removed:
            results.append(make_result(id, item, _removed_message(entry, ref.kind), "apiVersion",
                                       severity="error", rule="removed"))
        else:
            results.append(make_result(id, item, _deprecated_message(entry, ref.kind), "apiVersion",
                                       severity="warning", rule="deprecated"))
    return results


def target_version(requested: str | None) -> Version:
    """The release to check against: ``requested`` ("1.30", "v1.30", "1.30.2"),
    or the newest one with bundled schemas; ValueError if it is not a version."""
    text = requested.strip() if requested is not None else builtin.versions()[-1]
    m = _VERSION.fullmatch(text)
    if not m:
        raise ValueError(f"unknown Kubernetes version {requested!r}; expected a version like 1.30")
    return Version(int(m[1]), int(m[2]))


def find(api_version: str, kind: str) -> Deprecation | None:
    """The table's entry for a resource's apiVersion and kind, if any."""
    return next((e for e in _by_api_version().get(api_version, ()) if e.covers(kind)), None)


def _removed_message(entry: Deprecation, kind: str) -> str:
    head = f"{entry.api_version} {kind} was removed in Kubernetes {entry.removed}"
    if entry.replacement is None:
        return f"{head}, with no replacement" + (f": {entry.changes}" if entry.changes else "")
    return f"{head}; use {entry.use(kind)}" + _changes(entry, kind)


def _deprecated_message(entry: Deprecation, kind: str) -> str:
    head = f"{entry.api_version} {kind} is deprecated since Kubernetes {entry.deprecated}"
    if entry.removed is not None:
        head += f" and will be removed in {entry.removed}"
    if entry.replacement is None:
        return f"{head}, with no replacement" + (f": {entry.changes}" if entry.changes else "")
    return f"{head}; use {entry.use(kind)}" + _changes(entry, kind)


def _changes(entry: Deprecation, kind: str) -> str:
    return f". In {entry.use(kind)}: {entry.changes}" if entry.changes else ""


@functools.cache
def table() -> tuple[Deprecation, ...]:
    """Every entry of the packaged table, in file order."""
    text = Path(__file__).with_name(TABLE).read_text(encoding="utf-8")
    data = yaml.load(text, Loader=FAST_LOADER)
    return tuple(_entry(raw, index) for index, raw in enumerate(data["apis"]))


@functools.cache
def _by_api_version() -> dict[str, tuple[Deprecation, ...]]:
    out: dict[str, tuple[Deprecation, ...]] = {}
    for entry in table():
        out[entry.api_version] = out.get(entry.api_version, ()) + (entry,)
    return out


def _entry(raw: dict[str, Any], index: int) -> Deprecation:
    where = f"{TABLE}: apis[{index}]"
    try:
        removed = raw.get("removed")
        return Deprecation(
            api_version=str(raw["apiVersion"]),
            kinds=tuple(str(k) for k in raw.get("kinds") or ()),
            deprecated=_release(raw["deprecated"], where),
            removed=_release(removed, where) if removed is not None else None,
            replacement=str(raw["replacement"]) if raw.get("replacement") is not None else None,
            replacement_kind=str(raw.get("replacementKind") or ""),
            changes=" ".join(str(raw.get("changes") or "").split()),
            source=str(raw.get("source") or ""),
        )
    except KeyError as e:
        raise ValueError(f"{where}: missing {e.args[0]!r}") from None


def _release(value: object, where: str) -> Version:
    # Versions are strings in the file; an unquoted 1.20 would be read as 1.2.
    m = _VERSION.fullmatch(value) if isinstance(value, str) else None
    if not m or value != f"{int(m[1])}.{int(m[2])}":
        raise ValueError(f"{where}: {value!r} is not a quoted release like \"1.25\"")
    return Version(int(m[1]), int(m[2]))
