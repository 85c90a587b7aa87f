"""Joining the reports of ``--shard`` jobs: JUnit XML, SARIF 2.1.0, JSON.

Each input's format is read from its content (shard jobs name their files
as they like). Every output is made from the inputs of its own format and
in the shape one unsharded run would have written: JUnit suites and JSON
roots by root name, findings and SARIF results in report order
(``reporters.sort_key``), totals and summaries recounted. A root reported
by two inputs is refused: it means two jobs checked the same shard, and
its findings would be counted twice.
"""

from __future__ import annotations

import json
import re
import xml.dom.minidom
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import unquote

from krmcheck.reporters import json_report, safe
from krmcheck.resource.files import read_bounded
from krmcheck.results import SEVERITIES, SEVERITY_RANK

JUNIT, SARIF, JSON = "junit", "sarif", "json"
FORMATS = (JUNIT, SARIF, JSON)
_SARIF_LEVELS = {"error": "error", "warning": "warning", "note": "info"}
# A finding's first line in JUnit text: ``path:line:col: severity: message [rule]``.
_JUNIT_HEAD = re.compile(r"^\S[^\n]*?: (error|warning|info): ", re.MULTILINE)

_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["roots", "findings", "summary"],
    "properties": {
        "roots": {"type": "array", "items": {
            "type": "object", "required": ["root", "buildFailed", "resources"],
            "properties": {"root": {"type": "string"}, "buildFailed": {"type": "boolean"},
                           "resources": {"type": "array"}}}},
        "findings": {"type": "array", "items": {
            "type": "object",
            "required": ["path", "line", "col", "severity", "message", "validator", "root"],
            "properties": {"path": {"type": "string"}, "line": {"type": "integer"},
                           "col": {"type": "integer"}, "severity": {"enum": list(SEVERITIES)},
                           "message": {"type": "string"}, "validator": {"type": "string"},
                           "root": {"type": "string"}}}},
        "summary": {"type": "object"},
    },
}

# The parts of SARIF 2.1.0 a merge relies on (the full schema is 100 kB).
_SARIF_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "items": {
            "type": "object", "required": ["tool"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {
                    "driver": {"type": "object", "required": ["name"], "properties": {
                        "rules": {"type": "array", "items": {
                            "type": "object", "required": ["id"]}}}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["message"], "properties": {
                        "message": {"type": "object"},
                        "ruleId": {"type": "string"},
                        "ruleIndex": {"type": "integer"},
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "properties": {"type": "object"},
                        "locations": {"type": "array", "items": {
                            "type": "object", "properties": {
                                "physicalLocation": {"type": "object", "properties": {
                                    "artifactLocation": {"type": "object", "properties": {
                                        "uri": {"type": "string"}}},
                                    "region": {"type": "object", "properties": {
                                        "startLine": {"type": "integer"},
                                        "startColumn": {"type": "integer"}}}}}}}}}}},
                "invocations": {"type": "array", "items": {"type": "object"}},
            }}},
    },
}


class MergeError(Exception):
    """An input that cannot be merged; the message names the file."""


class Report(NamedTuple):
    """One input report: where it came from, its format, its parsed content
    (the root element for JUnit, the document for SARIF and JSON)."""

    path: str
    format: str
    content: Any


class Tally(NamedTuple):
    """What the exit code and the summary line need from one report."""

    errors: int
    warnings: int
    infos: int
    roots: int | None  # None when the format does not list the roots checked
    build_failed: bool

    def count(self, severity: str) -> int:
        return {"error": self.errors, "warning": self.warnings, "info": self.infos}[severity]


# --- reading -----------------------------------------------------------------------

def load(path: Path) -> Report:
    try:
        data = read_bounded(path)
    except OSError as e:
        raise MergeError(f"{path}: cannot read: {e.strerror or e}") from None
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<"):
        # bytes, so that the XML declaration's encoding is honoured
        return Report(str(path), JUNIT, _junit_root(path, data))
    if head.startswith(b"{"):
        try:
            return _json_report(path, data.decode("utf-8-sig"))
        except UnicodeDecodeError as e:
            raise MergeError(f"{path}: not UTF-8 text: {e.reason} at byte {e.start}") from None
    raise MergeError(f"{path}: not a JUnit XML, SARIF 2.1.0 or krmcheck JSON report")


def _junit_root(path: Path, data: bytes) -> ET.Element:
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise MergeError(f"{path}:{e.position[0]}:{e.position[1] + 1}: not well-formed XML") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise MergeError(f"{path}: not a JUnit report: the top element is <{root.tag}>, "
                         "not <testsuites> or <testsuite>")
    return root


def _json_report(path: Path, text: str) -> Report:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise MergeError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise MergeError(f"{path}: not valid JSON: {e}") from None
    if isinstance(doc, dict) and "runs" in doc:
        _check_shape(path, doc, _SARIF_SCHEMA, "SARIF 2.1.0 log")
        return Report(str(path), SARIF, doc)
    if isinstance(doc, dict) and ("findings" in doc or "roots" in doc):
        _check_shape(path, doc, _JSON_SCHEMA, "krmcheck JSON report")
        return Report(str(path), JSON, doc)
    raise MergeError(f"{path}: JSON, but neither a SARIF log (no 'runs') "
                     "nor a krmcheck JSON report (no 'roots' and 'findings')")


def _check_shape(path: Path, doc: Any, schema: dict[str, Any], what: str) -> None:
    import jsonschema

    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    if error is not None:
        where = error.json_path if error.path else "the document"
        raise MergeError(f"{path}: not a {what}: {where}: {error.message}")


def load_all(paths: Sequence[Path]) -> list[Report]:
    """Every input, refused when two of one format report the same root."""
    reports = [load(p) for p in paths]
    for fmt, roots_of in _ROOTS.items():
        _refuse_repeats([(r.path, roots_of(r.content)) for r in of_format(reports, fmt)])
    return reports


def of_format(reports: Sequence[Report], fmt: str) -> list[Report]:
    return [r for r in reports if r.format == fmt]


def _refuse_repeats(named: Sequence[tuple[str, Sequence[str]]]) -> None:
    """(input path, its root names): a root in two inputs is an error."""
    seen: dict[str, str] = {}
    for path, roots in named:
        for root in roots:
            if root in seen and seen[root] != path:
                raise MergeError(f"{path}: root {root} is also in {seen[root]}; "
                                 "did two jobs check the same shard?")
            seen[root] = path


# --- JUnit -------------------------------------------------------------------------

def _suites(root: ET.Element) -> list[ET.Element]:
    return [root] if root.tag == "testsuite" else list(root.iter("testsuite"))


def _strip_indent(element: ET.Element) -> None:
    # The inputs are pretty-printed; the layout whitespace is dropped so that
    # printing the merged tree again indents it once, not twice.
    for child in element:
        _strip_indent(child)
        if child.tail is not None and not child.tail.strip():
            child.tail = None
    if len(element) and element.text is not None and not element.text.strip():
        element.text = None


def merge_junit(reports: Sequence[Report]) -> str:
    """One <testsuites> holding every input's suites by name, totals summed
    as junit_xml (the writer of the inputs) sums them."""
    suites = sorted(((r.path, s) for r in reports for s in _suites(r.content)),
                    key=lambda ps: ps[1].get("name", ""))
    top = ET.Element("testsuites")
    if suites:
        for key in ("disabled", "errors", "failures", "tests"):
            top.set(key, str(sum(_int(p, s, key) for p, s in suites)))
        top.set("time", str(sum(_float(p, s, "time") for p, s in suites)))
    for _, suite in suites:
        _strip_indent(suite)
        suite.tail = None
        top.append(suite)
    text = ET.tostring(top, encoding="unicode")
    return xml.dom.minidom.parseString(text).toprettyxml() + "\n"


def _int(path: str, suite: ET.Element, key: str) -> int:
    value = suite.get(key)
    if value is None:  # other writers leave zero counts out
        return _count_cases(suite, key)
    try:
        return int(value)
    except ValueError:
        raise MergeError(f"{path}: testsuite {suite.get('name', '')!r}: "
                         f"{key}={value!r} is not a whole number") from None


def _count_cases(suite: ET.Element, key: str) -> int:
    cases = suite.findall("testcase")
    if key == "tests":
        return len(cases)
    tag = {"errors": "error", "failures": "failure", "disabled": "skipped"}[key]
    return sum(1 for c in cases if c.find(tag) is not None)


def _float(path: str, suite: ET.Element, key: str) -> float:
    try:
        return float(suite.get(key) or 0)
    except ValueError:
        raise MergeError(f"{path}: testsuite {suite.get('name', '')!r}: "
                         f"{key}={suite.get(key)!r} is not a number") from None


def _junit_tally(root: ET.Element) -> Tally:
    counts = dict.fromkeys(SEVERITIES, 0)
    build_failed = False
    for case in root.iter("testcase"):
        for failure in case.findall("failure"):
            severity = failure.get("type", "error")
            counts[severity if severity in counts else "error"] += 1
        for error in case.findall("error"):
            counts["error"] += 1
            build_failed = build_failed or error.get("type") == "build"
        for out in case.findall("system-out"):
            # findings below the shard's --fail-on are listed here, one head line each
            for match in _JUNIT_HEAD.finditer(out.text or ""):
                counts[match.group(1)] += 1
    return Tally(counts["error"], counts["warning"], counts["info"],
                  len(_suites(root)), build_failed)


# --- SARIF -------------------------------------------------------------------------

def merge_sarif(reports: Sequence[Report]) -> str:
    """One run: rules unioned by id (sorted, as the reporter writes them),
    results in report order with ``ruleIndex`` pointing into the union."""
    runs = [run for r in reports for run in r.content["runs"]]
    rules: dict[str, dict[str, Any]] = {}
    for run in runs:
        for rule in run["tool"]["driver"].get("rules", []):
            rules.setdefault(rule["id"], rule)
    rule_ids = sorted(rules)
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    results = _regrouped(sorted((_with_rule_id(res, run) for run in runs
                                 for res in run.get("results", [])), key=_sarif_key))
    for res in results:
        if res.get("ruleId") in index:
            res["ruleIndex"] = index[res["ruleId"]]
    first = runs[0] if runs else {"tool": {"driver": {"name": "krmcheck"}}}
    merged: dict[str, Any] = {
        "tool": {"driver": {**first["tool"]["driver"], "rules": [rules[i] for i in rule_ids]}},
        "invocations": [{"executionSuccessful": all(_sarif_succeeded(run) for run in runs)}],
    }
    if "columnKind" in first:
        merged["columnKind"] = first["columnKind"]
    merged["results"] = results
    doc = {"$schema": reports[0].content.get("$schema", ""), "version": "2.1.0", "runs": [merged]}
    return safe.json_text(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"


def _regrouped(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Results of the same defect from two shards as one, listing both's roots."""
    out: list[dict[str, Any]] = []
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for res in results:
        key = _sarif_key(res)[:-1] + (bool(res.get("suppressions")),)
        props = res.get("properties")
        earlier = seen.get(key)
        if earlier is not None and isinstance(props, dict) and isinstance(earlier.get("properties"), dict):
            roots = earlier["properties"].get("roots", []) + props.get("roots", [])
            earlier["properties"]["roots"] = sorted(set(roots))
            continue
        seen[key] = res
        out.append(res)
    return out


def _with_rule_id(result: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    # A result may name its rule only by index into its own run's rules.
    out = dict(result)
    rules = run["tool"]["driver"].get("rules", [])
    i = out.get("ruleIndex")
    if "ruleId" not in out and isinstance(i, int) and 0 <= i < len(rules):
        out["ruleId"] = rules[i]["id"]
    return out


def _sarif_key(result: dict[str, Any]) -> tuple[str, int, int, int, str, str, str]:
    """``reporters.sort_key`` read back from a SARIF result."""
    where = (result.get("locations") or [{}])[0].get("physicalLocation", {})
    region = where.get("region", {})
    severity = _SARIF_LEVELS.get(result.get("level", "warning"), "")
    props = result.get("properties", {})
    return (unquote(where.get("artifactLocation", {}).get("uri", "")),
            region.get("startLine", 0), region.get("startColumn", 0),
            -SEVERITY_RANK.get(severity, 0), str(result.get("ruleId", "")),
            str(result.get("message", {}).get("text", "")), str(props.get("root", "")))


def _sarif_roots(doc: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for run in doc["runs"]:
        for res in run.get("results", []):
            props = res.get("properties")
            if isinstance(props, dict):
                found.update(str(r) for r in props.get("roots", [props.get("root")]) if r is not None)
    return found


def _sarif_succeeded(run: dict[str, Any]) -> bool:
    return all(inv.get("executionSuccessful", True) for inv in run.get("invocations", []))


def _sarif_tally(doc: dict[str, Any]) -> Tally:
    counts = dict.fromkeys(SEVERITIES, 0)
    for run in doc["runs"]:
        for res in run.get("results", []):
            severity = _SARIF_LEVELS.get(res.get("level", "warning"))  # SARIF's default level
            if severity and not res.get("suppressions"):
                counts[severity] += 1
    failed = not all(_sarif_succeeded(run) for run in doc["runs"])
    return Tally(counts["error"], counts["warning"], counts["info"], None, failed)


# --- JSON --------------------------------------------------------------------------

def merge_json(reports: Sequence[Report]) -> str:
    """Roots by name, findings in report order, defects regrouped (a defect
    two shards both saw is one), the summary recounted."""
    roots = sorted((x for r in reports for x in r.content["roots"]), key=lambda x: x["root"])
    findings = sorted((f for r in reports for f in r.content["findings"]), key=_json_key)
    suppressed = sorted((f for r in reports for f in r.content.get("suppressed", [])), key=_json_key)
    baselines = sorted({r.content["baseline"] for r in reports if r.content.get("baseline")})
    doc = {"roots": roots, "findings": findings, "defects": json_report.defect_entries(findings),
           "suppressed": suppressed,
           # every shard discovers the whole run: its notes and the files it
           # set aside are the same in each
           "notes": _unique(n for r in reports for n in r.content.get("notes", [])),
           "disabled": sorted({d for r in reports for d in r.content.get("disabled", [])}),
           "baseline": baselines[0] if baselines else None,
           "setAside": _unique(x for r in reports for x in r.content.get("setAside", [])),
           "inputs": _unique(x for r in reports for x in r.content.get("inputs", [])),
           "summary": json_report.summary(findings, len(roots), len(suppressed))}
    return safe.json_text(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"


def _unique(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = json.dumps(item, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _json_key(f: dict[str, Any]) -> tuple[str, int, int, int, str, str, str]:
    return (f["path"], f["line"], f["col"], -SEVERITY_RANK.get(f["severity"], 0),
            f["validator"], f["message"], f["root"])


def _json_tally(doc: dict[str, Any]) -> Tally:
    s = json_report.summary(doc["findings"], len(doc["roots"]), 0)
    failed = any(x["buildFailed"] for x in doc["roots"])
    return Tally(s["errors"], s["warnings"], s["infos"], len(doc["roots"]), failed)


# --- both --------------------------------------------------------------------------

MERGERS = {JUNIT: merge_junit, SARIF: merge_sarif, JSON: merge_json}


def merge(reports: Sequence[Report], fmt: str) -> str:
    chosen = of_format(reports, fmt)
    if not chosen:
        raise MergeError(f"--{fmt}: none of the inputs is a {_FORMAT_NAMES[fmt]}")
    return MERGERS[fmt](chosen)


_ROOTS: dict[str, Callable[[Any], list[str]]] = {
    JUNIT: lambda root: [s.get("name", "") for s in _suites(root)],
    # SARIF lists no roots; those its results name are the ones it can repeat
    SARIF: lambda doc: sorted(_sarif_roots(doc)),
    JSON: lambda doc: [x["root"] for x in doc["roots"]],
}
_FORMAT_NAMES = {JUNIT: "JUnit XML report", SARIF: "SARIF 2.1.0 log", JSON: "krmcheck JSON report"}
_TALLIES: dict[str, Callable[[Any], Tally]] = {JUNIT: _junit_tally, SARIF: _sarif_tally, JSON: _json_tally}


def tallies(reports: Sequence[Report]) -> list[Tally]:
    """One tally per format present, the most exact first: JSON, SARIF, then
    JUnit (whose text lists findings below the shard's --fail-on only as
    prose). Shards write every format from the same findings, so each
    tally alone would decide the exit code; all are returned for inputs
    that mix formats across shards."""
    out: list[Tally] = []
    for fmt in (JSON, SARIF, JUNIT):
        parts = [_TALLIES[fmt](r.content) for r in of_format(reports, fmt)]
        if parts:
            roots = [p.roots for p in parts]
            out.append(Tally(sum(p.errors for p in parts), sum(p.warnings for p in parts),
                             sum(p.infos for p in parts),
                             None if None in roots else sum(r or 0 for r in roots),
                             any(p.build_failed for p in parts)))
    return out


class MergeOptions(NamedTuple):
    inputs: tuple[Path, ...]
    junit: str | None = None
    sarif: str | None = None
    json: str | None = None
    fail_on: str = "error"
