"""SARIF 2.1.0 (OASIS), the format GitHub code scanning uploads.

One run; ``tool.driver.rules`` lists one rule per validator id seen, and
every result points at its rule by id and index. Locations are
repo-relative URIs under ``%SRCROOT%`` (the checkout), with the 1-based
line and column; the provenance trail becomes ``relatedLocations``, newest
writer first, each saying what wrote the earlier value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TextIO
from urllib.parse import quote

from krmcheck.reporters import ordered
from krmcheck.results import Finding, RunReport

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SRCROOT = "%SRCROOT%"
# Descriptions for ids that are not validators; validators' own ids fall
# back to a generic sentence unless the runner passes their descriptions.
DEFAULT_DESCRIPTIONS = MappingProxyType({"build": "The kustomization could not be built."})


@dataclass(frozen=True)
class SarifReporter:
    # Validator id -> one-sentence description, e.g. from the validators registry.
    descriptions: Mapping[str, str] = field(default_factory=dict)

    def write(self, run: RunReport, out: TextIO) -> None:
        json.dump(self.log(run), out, indent=2, ensure_ascii=False)
        out.write("\n")

    def log(self, run: RunReport) -> dict[str, Any]:
        findings = ordered(run.findings)
        rule_ids = sorted({f.rule for f in findings})
        index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
        return {
            "$schema": SCHEMA_URI,
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "krmcheck",
                    "rules": [self.rule(rule_id) for rule_id in rule_ids],
                }},
                "invocations": [{"executionSuccessful": not run.build_failed}],
                "columnKind": "unicodeCodePoints",  # PyYAML columns count code points
                "results": [result(f, index[f.rule]) for f in findings],
            }],
        }

    def rule(self, rule_id: str) -> dict[str, Any]:
        text = (self.descriptions.get(rule_id) or DEFAULT_DESCRIPTIONS.get(rule_id)
                or f"Findings of the krmcheck validator {rule_id}.")
        return {"id": rule_id, "shortDescription": {"text": text}}


def result(finding: Finding, rule_index: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": LEVELS.get(finding.severity, "note"),
        "message": {"text": finding.message},
    }
    if finding.location.path:
        where = physical(finding.location.path, finding.location.line, finding.location.col)
        out["locations"] = [{"physicalLocation": where}]
    related = [
        {"id": i, "physicalLocation": physical(o.path, o.line, o.col),
         "message": {"text": f"earlier value, set by {o.by}"}}
        for i, o in enumerate(reversed(finding.trail)) if o.path
    ]
    if related:
        out["relatedLocations"] = related
    out["properties"] = _properties(finding)
    return out


def physical(path: str, line: int, col: int) -> dict[str, Any]:
    where: dict[str, Any] = {"artifactLocation": {"uri": uri(path), "uriBaseId": SRCROOT}}
    if line > 0:
        where["region"] = {"startLine": line, "startColumn": max(col, 1)}
    return where


def uri(path: str) -> str:
    """A repo-relative path as a relative URI reference: ``%``, spaces and
    ``:`` (which would read as a scheme) are percent-encoded."""
    return quote(path, safe="/!$&'()*+,;=@-._~")


def _properties(finding: Finding) -> dict[str, Any]:
    props: dict[str, Any] = {"root": finding.root}
    ref = finding.result.resource_ref
    if ref is not None:
        props["resourceRef"] = ref.to_dict()
    if finding.result.field_path:
        props["field"] = finding.result.field_path
    return props
