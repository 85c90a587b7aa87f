"""SARIF 2.1.0 (OASIS), the format GitHub code scanning uploads.

One run; ``tool.driver.rules`` lists one rule per validator id seen, and
every result points at its rule by id and index. Locations are
repo-relative URIs under ``%SRCROOT%`` (the checkout), with the 1-based
line and column; the provenance trail becomes ``relatedLocations``, newest
writer first, each saying what wrote the earlier value.

A result is a defect: the roots that render it are listed in its
properties, and ``partialFingerprints`` carries the fingerprint a baseline
matches (validator, file, resource and message, no line numbers), so code
scanning follows a defect while lines move. Suppressed findings are results
too, with a ``suppressions`` entry saying what silenced them (``inSource``
for an ignore comment or annotation, ``external`` for the configuration or a
baseline).

Paths, names and messages may come from whoever opened the pull request:
messages, which viewers show, are ``plain_text``; the whole log is
``json_text``, valid JSON that encodes as UTF-8 whatever the strings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TextIO
from urllib.parse import quote

from krmcheck.reporters import defect_fingerprint, ordered_defects
from krmcheck.reporters.safe import json_text, plain_text, well_formed
from krmcheck.results import Defect, RunReport, Suppressed, group

FINGERPRINT_KEY = "krmcheck/v1"
_IN_SOURCE = ("comment", "annotation")

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SRCROOT = "%SRCROOT%"
# Descriptions for ids that are not validators; validators' own ids fall
# back to a generic sentence unless the pipeline passes their descriptions.
DEFAULT_DESCRIPTIONS = MappingProxyType({
    "build": "The kustomization could not be built.",
    "remote": "The root needs the network, which is off: it was not checked.",
})


@dataclass(frozen=True)
class SarifReporter:
    # Validator id -> one-sentence description, e.g. from the validators registry.
    descriptions: Mapping[str, str] = field(default_factory=dict)

    def write(self, run: RunReport, out: TextIO) -> None:
        out.write(json_text(json.dumps(self.log(run), indent=2, ensure_ascii=False)) + "\n")

    def log(self, run: RunReport) -> dict[str, Any]:
        defects = ordered_defects(run.defects)
        silenced = _suppressed_defects(run.suppressed)
        rule_ids = sorted({d.rule for d in defects} | {d.rule for d, _ in silenced})
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
                "results": [result(d, index[d.rule]) for d in defects]
                + [dict(result(d, index[d.rule]), suppressions=why) for d, why in silenced],
            }],
        }

    def rule(self, rule_id: str) -> dict[str, Any]:
        text = (self.descriptions.get(rule_id) or DEFAULT_DESCRIPTIONS.get(rule_id)
                or f"Findings of the krmcheck validator {rule_id}.")
        return {"id": rule_id, "shortDescription": {"text": text}}


def _suppressed_defects(suppressed: list[Suppressed]) -> list[tuple[Defect, list[dict[str, str]]]]:
    """Suppressed findings as defects, each with its SARIF suppressions."""
    why = {id(s.finding): s for s in suppressed}
    out = []
    for defect in ordered_defects(group(s.finding for s in suppressed)):
        reasons = {(why[id(f)].by, why[id(f)].where) for f in defect.findings}
        out.append((defect, [{"kind": "inSource" if by in _IN_SOURCE else "external",
                              "justification": plain_text(f"{by}: {where}")}
                             for by, where in sorted(reasons)]))
    return out


def result(defect: Defect, rule_index: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": defect.rule,
        "ruleIndex": rule_index,
        "level": LEVELS.get(defect.severity, "note"),
        "message": {"text": plain_text(defect.message)},
    }
    if defect.location.path:
        where = physical(defect.location.path, defect.location.line, defect.location.col)
        out["locations"] = [{"physicalLocation": where}]
    related = [
        {"id": i, "physicalLocation": physical(o.path, o.line, o.col),
         "message": {"text": plain_text(f"earlier value, set by {o.by}")}}
        for i, o in enumerate(reversed(defect.trail)) if o.path
    ]
    if related:
        out["relatedLocations"] = related
    out["partialFingerprints"] = {FINGERPRINT_KEY: defect_fingerprint(
        defect.rule, defect.location.path, defect.finding.resource_id, defect.message)}
    out["properties"] = _properties(defect)
    return out


def physical(path: str, line: int, col: int) -> dict[str, Any]:
    where: dict[str, Any] = {"artifactLocation": {"uri": uri(path), "uriBaseId": SRCROOT}}
    if line > 0:
        where["region"] = {"startLine": line, "startColumn": max(col, 1)}
    return where


def uri(path: str) -> str:
    """A repo-relative path as a relative URI reference: ``%``, spaces and
    ``:`` (which would read as a scheme) are percent-encoded, and so are the
    bytes of a file name that is not UTF-8 (which ``os.fsdecode`` kept as
    surrogates)."""
    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that no file name decodes to
        raw = well_formed(path).encode("utf-8")
    return quote(raw, safe="/!$&'()*+,;=@-._~")


def _properties(defect: Defect) -> dict[str, Any]:
    props: dict[str, Any] = {"root": defect.roots[0], "roots": list(defect.roots)}
    ref = defect.finding.result.resource_ref
    if ref is not None:
        props["resourceRef"] = ref.to_dict()
    if defect.finding.result.field_path:
        props["field"] = defect.finding.result.field_path
    return props
