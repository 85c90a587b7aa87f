"""Machine-readable report: the whole run as one JSON document.

- ``roots``: every root checked, with its rendered resources and its schema
  coverage (``schemas``: resources validated, by source, kinds with none);
  ``buildFailed`` when it could not be built, ``needsNetwork`` when it was
  not checked because it needs the network, which is off;
- ``findings``: every finding of every root, in report order, each with its
  source location, validator, the resource and field the validator named,
  the resource as its source file names it (``resourceId``), and its trail
  of earlier writers (newest first, as in the text report);
- ``defects``: the same findings grouped by defect (same location,
  validator and message), each with the roots that render it and its
  baseline fingerprint;
- ``suppressed``: the findings something silenced, each with ``by`` (comment,
  annotation, exclude, override, baseline) and ``where`` (what silenced it);
- ``notes``, ``disabled`` (validators the configuration turned off),
  ``baseline`` (the baseline file in use);
- ``setAside``: every file discovery did not take as a manifest because it
  is not applied to a cluster, with its ``reason`` (tool-config,
  test-framework, patch-file) and ``why``;
- ``inputs``: every file (or kustomization's directory) judged as the
  input of a test, a documentation page or a tool, whose cluster errors
  are warnings, with its ``reason`` (test-input, doc-fragment,
  bundle-input) and ``why``; it is the root of those warnings;
- ``summary``: defects by severity, and how many findings, defects, roots
  and suppressed findings there are;
- with ``--diff-against REF``, ``diff``: ``against`` (REF) and each affected
  root with ``side`` (both, work or base), ``failsToBuild`` (base, work or
  both, with the ``error``), ``notCompared`` (why its output says nothing of
  the change), its ``changes`` (status, resource, ``was`` for a rename,
  ``diff``), its ``new`` findings and ``fixed`` ones; ``images`` (each
  image the change replaces: ``old``, ``new``, ``workloads``) and the
  ``flags`` of every root (``id``, ``section``,
  ``severity``, ``root``, ``resource``, ``path``, ``line``, ``col``,
  ``field``, ``old``, ``new``, ``message``, ``objects``).

The field names follow the KRM Functions result (``resourceRef``,
``field``) so other tools can read them alike. Strings are kept as they are,
except that the document is ``json_text``: valid JSON that encodes as UTF-8
whatever the strings (a byte of a file name that is not UTF-8 is written as
the escape ``\\udcff`` of the surrogate that stands for it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TextIO

from krmcheck.reporters import defect_fingerprint, ordered
from krmcheck.reporters.safe import json_text
from krmcheck.results import SEVERITIES, SEVERITY_RANK, Finding, Flag, RootReport, RunReport


class JsonReporter:
    def write(self, run: RunReport, out: TextIO) -> None:
        out.write(json_text(json.dumps(document(run), indent=2, ensure_ascii=False)) + "\n")


def document(run: RunReport) -> dict[str, Any]:
    findings = [finding_entry(f) for f in ordered(run.findings)]
    suppressed = [dict(finding_entry(s.finding), by=s.by, where=s.where)
                  for s in sorted(run.suppressed, key=lambda s: _key(finding_entry(s.finding)))]
    doc = {
        "roots": [root_entry(r) for r in sorted(run.roots, key=lambda r: r.root)],
        "findings": findings,
        "defects": defect_entries(findings),
        "suppressed": suppressed,
        "notes": [{"message": n.message, "path": n.location.path if n.location else None}
                  for n in run.notes],
        "disabled": list(run.disabled),
        "baseline": run.baseline or None,
        "setAside": [{"path": path, "reason": reason, "why": why} for path, reason, why in run.set_aside],
        "inputs": [{"path": path, "reason": reason, "why": why} for path, reason, why in run.inputs],
        "summary": summary(findings, len(run.roots), len(suppressed)),
    }
    if run.diff_against:
        doc["diff"] = {"against": run.diff_against, "roots": [
            {"root": d.root, "side": d.side, "failsToBuild": d.fails or None, "error": d.error or None,
             "notCompared": d.unrendered or None,
             "changes": [{"status": c.status, "resource": c.resource, "was": c.was or None,
                          "diff": c.diff or None} for c in d.changes],
             "new": [finding_entry(f) for f in ordered(d.new)],
             "fixed": [finding_entry(f) for f in ordered(d.fixed)]} for d in run.diff],
            "images": [{"old": i.old, "new": i.new, "workloads": list(i.workloads)} for i in run.images],
            "flags": [flag_entry(f) for d in run.diff for f in d.flags]}
    return doc


def flag_entry(flag: Flag) -> dict[str, Any]:
    """A flag of the pull-request view: its id (what --fail-on-flag names),
    section (flag, or controller: what the GitOps controller will do), the
    object and source line, old and new value, and the objects it is about."""
    ref = flag.finding.result.resource_ref
    return {"id": flag.id, "section": flag.section, "severity": flag.finding.severity,
            "root": flag.finding.root, "resource": str(ref) if ref is not None else None,
            "resourceRef": ref.to_dict() if ref is not None else None,
            "path": flag.finding.location.path, "line": flag.finding.location.line,
            "col": flag.finding.location.col, "field": flag.finding.result.field_path or None,
            "old": flag.old or None, "new": flag.new or None, "message": flag.finding.message,
            "objects": list(flag.objects)}


def root_entry(root: RootReport) -> dict[str, Any]:
    return {
        "root": root.root,
        "buildFailed": root.build_failed,
        "needsNetwork": root.needs_network,
        "resources": [ref.to_dict() for ref in root.resources],
        "schemas": schema_coverage(root),
    }


def schema_coverage(root: RootReport) -> dict[str, Any]:
    """How many of the root's resources a schema checked, by source, and the
    kinds no source has."""
    by_source: dict[str, int] = {}
    for _, _, source, _, count in root.coverage:
        if source:
            by_source[source] = by_source.get(source, 0) + count
    return {
        "validated": sum(by_source.values()),
        "bySource": dict(sorted(by_source.items())),
        "missing": sorted(f"{kind} ({api})" for api, kind, source, _, _ in root.coverage if not source),
        "kinds": [{"apiVersion": api, "kind": kind, "source": source or None, "where": where or None,
                   "resources": count} for api, kind, source, where, count in sorted(root.coverage)],
    }


def finding_entry(finding: Finding) -> dict[str, Any]:
    ref = finding.result.resource_ref
    return {
        "path": finding.location.path,
        "line": finding.location.line,
        "col": finding.location.col,
        "severity": finding.severity,
        "message": finding.message,
        "validator": finding.rule,
        "root": finding.root,
        "resourceRef": ref.to_dict() if ref is not None else None,
        "resourceId": finding.resource_id,
        "field": finding.result.field_path or None,
        "trail": [
            {"path": o.path, "line": o.line, "col": o.col, "by": o.by}
            for o in reversed(finding.trail)
        ],
    }


def _key(f: dict[str, Any]) -> tuple[str, int, int, int, str, str, str]:
    """``reporters.sort_key`` of a finding entry."""
    return (f["path"], f["line"], f["col"], -SEVERITY_RANK.get(f["severity"], 0),
            f["validator"], f["message"], f["root"])


def defect_entries(findings: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Finding entries grouped by defect, in report order (also used to merge shards)."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for f in sorted(findings, key=_key):
        groups.setdefault((f["path"], f["line"], f["col"], f["validator"], f["message"]), []).append(f)
    out = []
    for members in groups.values():
        first = members[0]
        entry = {k: v for k, v in first.items() if k not in ("root", "resourceId")}
        entry["severity"] = max((m["severity"] for m in members), key=lambda s: SEVERITY_RANK.get(s, 0))
        entry["roots"] = sorted({m["root"] for m in members})
        entry["fingerprint"] = defect_fingerprint(first["validator"], first["path"],
                                                  first.get("resourceId") or "", first["message"])
        out.append(entry)
    return out


def summary(findings: list[dict[str, Any]], roots: int, suppressed: int) -> dict[str, int]:
    defects = defect_entries(findings)
    counts = {f"{s}s": sum(1 for d in defects if d["severity"] == s) for s in SEVERITIES}
    return {**counts, "defects": len(defects), "findings": len(findings), "roots": roots,
            "suppressed": suppressed}
