"""Machine-readable report: the whole run as one JSON document.

``roots`` lists every root checked (with its rendered resources), and
``findings`` every finding in report order, each with its source location,
validator, the resource and field the validator named, and its trail of
earlier writers (newest first, as in the text report). ``summary`` counts
findings by severity. The field names follow the KRM Functions result
(``resourceRef``, ``field``) so other tools can read them alike.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from krmcheck.reporters import ordered
from krmcheck.results import Finding, RootReport, RunReport


class JsonReporter:
    def write(self, run: RunReport, out: TextIO) -> None:
        json.dump(document(run), out, indent=2, ensure_ascii=False)
        out.write("\n")


def document(run: RunReport) -> dict[str, Any]:
    return {
        "roots": [root_entry(r) for r in sorted(run.roots, key=lambda r: r.root)],
        "findings": [finding_entry(f) for f in ordered(run.findings)],
        "summary": {
            "errors": run.count("error"),
            "warnings": run.count("warning"),
            "infos": run.count("info"),
        },
    }


def root_entry(root: RootReport) -> dict[str, Any]:
    return {
        "root": root.root,
        "buildFailed": root.build_failed,
        "resources": [ref.to_dict() for ref in root.resources],
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
        "field": finding.result.field_path or None,
        "trail": [
            {"path": o.path, "line": o.line, "col": o.col, "by": o.by}
            for o in reversed(finding.trail)
        ],
    }
