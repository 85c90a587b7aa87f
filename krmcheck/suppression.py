"""What silences or re-grades a finding, applied once per run after every
root is checked, in this order:

1. severities: ``validators: {ID: {severity: ...}}`` of ``.krmcheck.yaml``,
   then the ``overrides:`` whose ``paths`` match the finding's file (later
   entries win, as in ruff's per-file settings);
2. ``overrides:`` that turn a validator off for matching files;
3. ``exclude:`` and ``--exclude`` patterns matching the finding's file;
4. a ``# krmcheck: ignore`` or ``# krmcheck: ignore[ID,ID] reason`` comment on
   the finding's source line, or alone on the line above it (the
   ``krmcheck.io/ignore`` resource annotation is applied while each root is
   checked, where the resources are at hand);
5. the baseline (:func:`apply_baseline`, a step of its own so that
   ``--write-baseline`` can record what the steps before it left).

Nothing is dropped: a silenced finding becomes a :class:`Suppressed` that
the reports count and the JSON report lists. An ignore comment or
annotation that silences nothing becomes an ``unused-ignore`` info finding.
Build errors are never silenced: a root that cannot be built is excluded
instead.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from krmcheck.resource.resource import Resource
from krmcheck.results import Finding, Note, Result, RootReport, Suppressed
from krmcheck.scope import PathPatterns, any_match
from krmcheck.tree.node import Scalar
from krmcheck.tree.origin import Location

if TYPE_CHECKING:
    from krmcheck.baseline import Baseline, Entry

IGNORE_ANNOTATION = "krmcheck.io/ignore"
UNUSED = "unused-ignore"
BUILD = "build"

# ``# krmcheck: ignore`` with optional ``[ID,ID]`` and a free-text reason;
# the ``#`` starts a YAML comment only at the line start or after a blank.
_COMMENT = re.compile(r"(?:^|(?<=\s))#\s*krmcheck:\s*ignore(?:\[(?P<ids>[^\]]*)\])?(?=\s|$)")
MARKER = "krmcheck:"


@dataclass(frozen=True)
class Ignore:
    """An ignore comment or annotation: where it is written, the line it
    covers, and the validator ids it names (none: every validator)."""

    location: Location
    line: int  # the line whose findings it silences (0: the annotation's resource)
    ids: frozenset[str]
    what: str  # "comment" or "annotation"

    def names(self, rule: str) -> bool:
        return not self.ids or rule in self.ids or "*" in self.ids


def parse_ids(text: str) -> frozenset[str]:
    return frozenset(part.strip() for part in text.split(",") if part.strip())


def comments_in(path: str, text: str) -> list[Ignore]:
    """The ignore comments of a file (``path`` is repo-relative)."""
    if MARKER not in text:
        return []
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        m = _COMMENT.search(line)
        if m is None:
            continue
        alone = not line[:m.start()].strip()
        ids = parse_ids(m["ids"]) if m["ids"] is not None else frozenset()
        found.append(Ignore(Location(path, number, m.start() + 1), number + 1 if alone else number,
                            ids, "comment"))
    return found


@dataclass(frozen=True)
class Policy:
    """The run's settings that re-grade or silence findings."""

    severities: dict[str, str] = dataclasses.field(default_factory=dict)  # validator -> severity
    # (paths, validator -> severity or "off"), in the order written
    overrides: tuple[tuple[PathPatterns, dict[str, str]], ...] = ()
    exclude: tuple[PathPatterns, ...] = ()
    comments: tuple[Ignore, ...] = ()
    # which roots read each file, for placing unused-ignore findings
    readers: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)


def apply(roots: Sequence[RootReport], policy: Policy) -> tuple[RootReport, ...]:
    """Every root's findings re-graded and filtered; unused ignores reported."""
    by_line: dict[tuple[str, int], list[Ignore]] = {}
    for c in policy.comments:
        by_line.setdefault((c.location.path, c.line), []).append(c)
    used: set[Location] = {_where(s) for r in roots for s in r.suppressed
                           if s.by == "annotation"}
    out = []
    for root in roots:
        kept: list[Finding] = []
        silenced = list(root.suppressed)
        for finding in root.findings:
            finding = _graded(finding, policy)
            why = _silenced(finding, policy, by_line)
            if why is None:
                kept.append(finding)
            else:
                silenced.append(why)
                if why.by == "comment":
                    used.add(_where(why))
        out.append(dataclasses.replace(root, findings=tuple(kept), suppressed=tuple(silenced)))
    return _with_unused(out, policy, used)


def _graded(finding: Finding, policy: Policy) -> Finding:
    if finding.rule == BUILD:
        return finding
    severity = policy.severities.get(finding.rule)
    for scope, settings in policy.overrides:
        wanted = settings.get(finding.rule)
        if wanted not in (None, "off") and scope.matches(finding.location.path):
            severity = wanted
    if severity is None or severity == finding.severity:
        return finding
    return dataclasses.replace(finding, result=dataclasses.replace(finding.result, severity=severity))


def _silenced(finding: Finding, policy: Policy,
              by_line: dict[tuple[str, int], list[Ignore]]) -> Suppressed | None:
    if finding.rule == BUILD:
        return None
    path = finding.location.path
    for scope, settings in reversed(policy.overrides):
        if finding.rule in settings and scope.matches(path):
            if settings[finding.rule] == "off":
                return Suppressed(finding, "override", f"{scope.source}: {', '.join(scope.patterns)}")
            break
    excluded = any_match(policy.exclude, path)
    if excluded is not None:
        return Suppressed(finding, "exclude", f"{excluded.source}: {', '.join(excluded.patterns)}")
    for comment in by_line.get((path, finding.location.line), ()):
        if comment.names(finding.rule):
            return Suppressed(finding, "comment", str(comment.location))
    return None


def apply_baseline(roots: Sequence[RootReport], baseline: Baseline, read: set[str]
                   ) -> tuple[tuple[RootReport, ...], tuple[Note, ...]]:
    """Findings the baseline records become suppressed; its entries about
    files this run read that match no finding are noted as removable."""
    from krmcheck.baseline import entry_of

    matched: set[Entry] = set()
    out = []
    for root in roots:
        kept, silenced = [], list(root.suppressed)
        for finding in root.findings:
            entry = entry_of(finding)
            if finding.rule != BUILD and entry in baseline.entries:
                matched.add(entry)
                silenced.append(Suppressed(finding, "baseline", baseline.display))
            else:
                kept.append(finding)
        matched.update(entry_of(s.finding) for s in root.suppressed)
        out.append(dataclasses.replace(root, findings=tuple(kept), suppressed=tuple(silenced)))
    stale = sorted((e for e in baseline.entries - matched if e.path in read),
                   key=lambda e: (e.path, e.validator, e.resource, e.message))
    notes = tuple(Note(f"baseline {baseline.display}: no finding matches the entry "
                       f"[{e.validator}] {e.resource or '-'}: {e.message}; it can be removed",
                       Location(e.path, 0, 0)) for e in stale)
    return tuple(out), notes


def _where(s: Suppressed) -> Location:
    """The location of the comment or annotation that silenced ``s``."""
    path, line, col = s.where.rsplit(":", 2)
    return Location(path, int(line), int(col))


def _with_unused(roots: list[RootReport], policy: Policy, used: set[Location]) -> tuple[RootReport, ...]:
    """Each root with the unused-ignore findings of the files it reads."""
    extra: dict[str, list[Finding]] = {}
    for comment in policy.comments:
        if comment.location not in used:
            for reader in policy.readers.get(comment.location.path, ()):
                extra.setdefault(reader, []).append(_unused(comment, reader))
    for report in roots:
        for location, ids in report.ignore_annotations:
            if location not in used:
                ignore = Ignore(location, 0, parse_ids(ids), "annotation")
                extra.setdefault(report.root, []).append(_unused(ignore, report.root))
    return tuple(dataclasses.replace(r, findings=r.findings + tuple(extra.get(r.root, ())))
                 if r.root in extra else r for r in roots)


def _unused(ignore: Ignore, root: str) -> Finding:
    named = f"[{','.join(sorted(ignore.ids))}]" if ignore.ids else ""
    if ignore.what == "comment":
        message = f"'krmcheck: ignore{named}' silences no finding; remove it"
    else:
        message = f"annotation {IGNORE_ANNOTATION}: '{','.join(sorted(ignore.ids))}' silences no finding; remove it"
    result = Result(message, "info", tags=(("validator", UNUSED),))
    return Finding(result, root, ignore.location)


def by_annotation(findings: Sequence[Finding], resources: Sequence[Resource],
                  find: Callable[[Result], Resource | None]
                  ) -> tuple[list[Finding], list[Suppressed], list[tuple[Location, str]]]:
    """One root's findings, less those a ``krmcheck.io/ignore`` annotation on
    their resource silences; and where each such annotation is written."""
    written: dict[int, tuple[Location, frozenset[str]]] = {}
    places: list[tuple[Location, str]] = []
    for resource in resources:
        annotations = resource.annotations()
        node = annotations.get(IGNORE_ANNOTATION) if annotations is not None else None
        if isinstance(node, Scalar):
            text = node.as_string()
            written[id(resource)] = (node.origin.location, parse_ids(text) or frozenset({"*"}))
            places.append((node.origin.location, text))
    if not written:
        return list(findings), [], []
    kept: list[Finding] = []
    silenced: list[Suppressed] = []
    for finding in findings:
        named = find(finding.result) if finding.rule != BUILD else None
        place = written.get(id(named)) if named is not None else None
        if place is not None and Ignore(place[0], 0, place[1], "annotation").names(finding.rule):
            silenced.append(Suppressed(finding, "annotation", str(place[0])))
        else:
            kept.append(finding)
    return kept, silenced, places
