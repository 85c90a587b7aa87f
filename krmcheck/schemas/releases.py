"""Validation rules a release of an API's owner added, and the release a repository runs.

A schema from a catalog (``--schema-location``) is one release of the
CRDs: the newest. Where that release added a validation rule that earlier
ones did not have, an object written for an earlier release fails it
without being wrong for the cluster it is written for. Crossplane 2 made
``spec.package`` of a Provider, Configuration or Function a fully
qualified image name; Crossplane 1 completed a name without a registry
with its default registry (``crossplane/provider-aws:v0.29.0``).

So such a rule is an error only where the repository shows it runs the
release that added it. Evidence, from the repository's own files: a Go
module requiring the owner's runtime library at a major version
(``github.com/crossplane/crossplane-runtime/v2`` is Crossplane 2;
``github.com/crossplane/crossplane-runtime v0.19.0`` is Crossplane 1), or
the owner's chart installed at a pinned version (a HelmRelease, an Argo CD
Application, a kustomization's ``helmCharts`` or a helmfile naming the
``crossplane`` chart with ``version:``/``targetRevision: 1.16.0``). Where the
repository holds the CRD itself, its rule is the repository's and stays
judged; where nothing says which release it runs, the newest is assumed,
as the catalog does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from krmcheck.resource.files import read_text_bounded, texts_under


@dataclass(frozen=True)
class ReleaseRule:
    """A validation rule the CRDs of ``owner`` have from ``release`` on."""
    group: str      # the API group of the objects it judges
    message: str    # the start of the rule's message, as the CRD writes it
    owner: str
    release: int    # the major release that added it
    runtime: str    # the Go module of the owner's runtime library (its /vN path names the major)
    chart: str      # the owner's Helm chart
    source: str     # where the owner documents the change


RULES: tuple[ReleaseRule, ...] = (
    ReleaseRule(
        group="pkg.crossplane.io", message="must be a fully qualified image name", owner="Crossplane", release=2,
        runtime="github.com/crossplane/crossplane-runtime", chart="crossplane",
        source="Crossplane v2.0 release notes: package references must be fully qualified; "
               "pkg.crossplane.io CRDs' x-kubernetes-validations on spec.package"),
)

_SCAN_SECONDS = 5.0
_SCAN_BYTES = 32 << 20
_SKIP = frozenset({".git", "node_modules", "vendor", "third_party", ".venv"})


def rule_of(group: str, message: str) -> ReleaseRule | None:
    """The release rule a finding's message and its object's group name."""
    return next((r for r in RULES if r.group == group and r.message in message), None)


def _go_requires(text: str, runtime: str) -> int | None:
    """The major release of ``runtime`` a go.mod requires: its /vN path, or
    the version of the unsuffixed module (v0 and v1 are release 1)."""
    found = re.search(re.escape(runtime) + r"(?:/v(\d+))?\s+v(\d+)\.", text)
    if found is None:
        return None
    return int(found.group(1)) if found.group(1) else max(1, int(found.group(2)))


def _chart_pins(text: str, chart: str) -> Iterable[int]:
    """Major versions a YAML file pins the owner's chart at: a document
    naming the chart (``chart: crossplane``, ``chart: crossplane-stable/
    crossplane``, a ``helmCharts`` entry ``name: crossplane`` whose repo is
    the owner's) and a ``version:`` or ``targetRevision:``."""
    names = re.compile(r"^[ \t-]*(?:chart|name):[ \t]*[\"']?(?:[\w.-]+/)?" + re.escape(chart) + r"[\"']?[ \t]*$",
                       re.MULTILINE)
    pin = re.compile(r"^[ \t-]*(?:version|targetRevision):[ \t]*[\"']?v?(\d+)\.\d+", re.MULTILINE)
    for document in re.split(r"^---[ \t]*$", text, flags=re.MULTILINE):
        if names.search(document) is None:
            continue
        for found in pin.finditer(document):
            yield int(found.group(1))


def releases_run(top: Path, rule: ReleaseRule) -> dict[int, str]:
    """{a major release of the rule's owner the repository shows it runs ->
    the file that says so}."""
    out: dict[int, str] = {}
    def wanted(path: Path) -> bool:
        return path.name == "go.mod" or path.name.endswith((".yaml", ".yml"))

    for path, text in texts_under(top, wanted, _SKIP, _SCAN_SECONDS, _SCAN_BYTES):
        rel = path.relative_to(top).as_posix()
        if path.name == "go.mod":
            major = _go_requires(text, rule.runtime)
            if major is not None:
                out.setdefault(major, f"{rel} requires {rule.runtime}" + (f"/v{major}" if major > 1 else ""))
        elif rule.chart in text:
            for major in _chart_pins(text, rule.chart):
                out.setdefault(major, f"{rel} installs the {rule.chart} chart {major}.x")
    return out


def defines_group(crd_files: Iterable[str], group: str) -> bool:
    """Whether a CRD file of the repository defines an API of ``group``."""
    pattern = re.compile(r"^\s*group:[ \t]*[\"']?" + re.escape(group) + r"[\"']?\s*$", re.MULTILINE)
    for path in crd_files:
        try:
            if pattern.search(read_text_bounded(path)):
                return True
        except (OSError, ValueError):
            continue
    return False
