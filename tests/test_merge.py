"""``krmcheck merge-reports``: the reports of shard jobs joined into one run's."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from krmcheck.cli import main

PROJECT = Path(__file__).resolve().parent.parent
DEMO = PROJECT / "fixtures" / "gitops-demo"
CLEAN = PROJECT / "fixtures" / "gitops-clean"
FORMATS = {"junit": "xml", "sarif": "sarif", "json": "json"}
COMPONENT = "components:\n  - ../../../../components/metrics-sidecar\n"


@pytest.fixture(autouse=True)
def outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


def split_repo(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of an example repository whose web and api apps share nothing
    (the web production overlay drops the shared component), so that two
    shards get two roots each."""
    top = tmp_path / source.name
    shutil.copytree(source, top)
    web = top / "apps/web/overlays/production/kustomization.yaml"
    text = web.read_text()
    assert COMPONENT in text
    web.write_text(text.replace(COMPONENT, ""))
    monkeypatch.chdir(top)
    return top


def reports_of(out_dir: Path, *args: str) -> tuple[int, dict[str, Path]]:
    out_dir.mkdir()
    paths = {fmt: out_dir / f"report.{ext}" for fmt, ext in FORMATS.items()}
    flags = [x for fmt, p in paths.items() for x in (f"--{fmt}", str(p))]
    return main([".", *flags, *args]), paths


def merge(inputs: list[Path], out_dir: Path, *args: str) -> tuple[int, dict[str, Path]]:
    out_dir.mkdir()
    paths = {fmt: out_dir / f"merged.{ext}" for fmt, ext in FORMATS.items()}
    flags = [x for fmt, p in paths.items() for x in (f"--{fmt}", str(p))]
    return main(["merge-reports", *flags, *args, *map(str, inputs)]), paths


# --- end to end over the example repositories --------------------------------------

def test_merged_shards_equal_the_unsharded_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    split_repo(DEMO, tmp_path, monkeypatch)
    whole_code, whole = reports_of(tmp_path / "whole")
    shard_runs = [reports_of(tmp_path / f"shard{k}", "--shard", f"{k}/2") for k in (1, 2)]
    assert [code for code, _ in shard_runs] == [1, 1]
    roots = [json.loads(paths["json"].read_text())["roots"] for _, paths in shard_runs]
    assert [len(r) for r in roots] == [2, 2]
    capsys.readouterr()

    inputs = [paths[fmt] for _, paths in shard_runs for fmt in FORMATS]
    code, merged = merge(inputs, tmp_path / "merged")
    assert code == whole_code == 1
    for fmt in FORMATS:
        assert merged[fmt].read_text() == whole[fmt].read_text(), fmt
    summary = json.loads(merged["json"].read_text())["summary"]
    assert f"merged 6 reports: {summary['errors']} errors" in capsys.readouterr().out


def test_merged_clean_shards_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    split_repo(CLEAN, tmp_path, monkeypatch)
    shard_runs = [reports_of(tmp_path / f"shard{k}", "--shard", f"{k}/2") for k in (1, 2)]
    assert [code for code, _ in shard_runs] == [0, 0]
    inputs = [paths[fmt] for _, paths in shard_runs for fmt in FORMATS]
    code, merged = merge(inputs, tmp_path / "merged")
    assert code == 0
    doc = json.loads(merged["json"].read_text())
    assert len(doc["roots"]) == 4 and doc["summary"]["errors"] == 0


def test_an_empty_shard_merges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    # The demo's shared component ties its four overlays into one group:
    # shard 2 of 2 checks nothing and still writes valid reports.
    top = tmp_path / "gitops-demo"
    shutil.copytree(DEMO, top)
    monkeypatch.chdir(top)
    whole_code, whole = reports_of(tmp_path / "whole")
    shard_runs = [reports_of(tmp_path / f"shard{k}", "--shard", f"{k}/2") for k in (1, 2)]
    assert [code for code, _ in shard_runs] == [1, 0]
    code, merged = merge([p for _, paths in shard_runs for p in paths.values()], tmp_path / "m")
    assert code == whole_code
    for fmt in FORMATS:
        assert merged[fmt].read_text() == whole[fmt].read_text(), fmt


# --- inline reports ----------------------------------------------------------------

def finding(root: str, severity: str = "error", path: str = "a.yaml", line: int = 1,
            validator: str = "schema") -> dict[str, Any]:
    return {"path": path, "line": line, "col": 3, "severity": severity, "message": "bad",
            "validator": validator, "root": root, "resourceRef": None, "field": None, "trail": []}


def json_report(tmp_path: Path, name: str, roots: list[str], findings: list[dict[str, Any]],
                failed: tuple[str, ...] = ()) -> Path:
    doc = {"roots": [{"root": r, "buildFailed": r in failed, "resources": []} for r in roots],
           "findings": findings, "summary": {"errors": 0, "warnings": 0, "infos": 0}}
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def test_json_roots_and_findings_are_joined_in_report_order(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    one = json_report(tmp_path, "one.json", ["b"], [finding("b", path="z.yaml"),
                                                    finding("b", "warning", path="a.yaml", line=9)])
    two = json_report(tmp_path, "two.json", ["a", "c"], [finding("a", path="a.yaml", line=2)])
    out = tmp_path / "merged.json"
    assert main(["merge-reports", "--json", str(out), str(one), str(two)]) == 1
    doc = json.loads(out.read_text())
    assert [r["root"] for r in doc["roots"]] == ["a", "b", "c"]
    assert [(f["path"], f["line"]) for f in doc["findings"]] == [("a.yaml", 2), ("a.yaml", 9),
                                                                 ("z.yaml", 1)]
    assert doc["summary"] == {"errors": 2, "warnings": 1, "infos": 0, "defects": 3,
                              "findings": 3, "roots": 3, "suppressed": 0}
    assert "3 roots" in capsys.readouterr().out


def test_json_defects_seen_by_two_shards_are_one(tmp_path: Path) -> None:
    one = json_report(tmp_path, "one.json", ["a"], [finding("a", path="base.yaml")])
    two = json_report(tmp_path, "two.json", ["b"], [finding("b", path="base.yaml")])
    out = tmp_path / "merged.json"
    assert main(["merge-reports", "--json", str(out), str(one), str(two)]) == 1
    doc = json.loads(out.read_text())
    assert [d["roots"] for d in doc["defects"]] == [["a", "b"]]
    assert (doc["summary"]["errors"], doc["summary"]["findings"]) == (1, 2)


@pytest.mark.parametrize("severity,fail_on,code", [
    ("warning", None, 0), ("warning", "warning", 1), ("info", "warning", 0),
    ("info", "info", 1), ("error", "never", 0), ("error", None, 1),
])
def test_fail_on_decides_like_the_check_command(tmp_path: Path, severity: str, fail_on: str | None,
                                                code: int, capsys: pytest.CaptureFixture[str]) -> None:
    report = json_report(tmp_path, "r.json", ["a"], [finding("a", severity)])
    args = ["--fail-on", fail_on] if fail_on else []
    assert main(["merge-reports", *args, str(report)]) == code


def test_a_root_that_failed_to_build_exits_2(tmp_path: Path) -> None:
    report = json_report(tmp_path, "r.json", ["a", "b"], [finding("a", validator="build")],
                         failed=("a",))
    assert main(["merge-reports", str(report)]) == 2


def test_a_root_in_two_inputs_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = json_report(tmp_path, "one.json", ["a", "b"], [])
    two = json_report(tmp_path, "two.json", ["b"], [])
    assert main(["merge-reports", str(one), str(two)]) == 2
    assert "two.json: root b is also in" in capsys.readouterr().err


JUNIT_ONE = """<?xml version="1.0" ?>
<testsuites disabled="0" errors="0" failures="1" tests="2" time="0.0">
\t<testsuite disabled="0" errors="0" failures="1" name="web" skipped="0" tests="2" time="0">
\t\t<testcase name="Deployment/web" classname="web" file="a.yaml" line="3">
\t\t\t<failure type="error" message="bad">a.yaml:3:1: error: bad [schema]</failure>
\t\t</testcase>
\t\t<testcase name="Service/web" classname="web">
\t\t\t<system-out>b.yaml:1:1: info: note this [metadata]</system-out>
\t\t</testcase>
\t</testsuite>
</testsuites>
"""

# Another writer: a bare <testsuite>, counts left out, an encoding declared.
JUNIT_TWO = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="api">
  <testcase name="Deployment/api" classname="api"/>
  <testcase name="build" classname="api"><error type="build" message="x">oops</error></testcase>
</testsuite>
"""


def test_junit_suites_are_joined_and_totals_recounted(tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_text(JUNIT_ONE)
    (tmp_path / "two.txt").write_text(JUNIT_TWO)
    out = tmp_path / "merged.xml"
    code = main(["merge-reports", "--junit", str(out), str(tmp_path / "one.txt"),
                 str(tmp_path / "two.txt")])
    assert code == 2  # the build error
    top = ET.parse(out).getroot()
    assert [s.get("name") for s in top] == ["api", "web"]
    assert {k: top.get(k) for k in ("tests", "failures", "errors")} == {
        "tests": "4", "failures": "1", "errors": "1"}
    assert top.find("testsuite/testcase/error").text == "oops"


def test_junit_text_findings_count_for_fail_on(tmp_path: Path) -> None:
    (tmp_path / "one.xml").write_text(JUNIT_ONE.replace('type="error"', 'type="warning"'))
    assert main(["merge-reports", str(tmp_path / "one.xml")]) == 0
    assert main(["merge-reports", "--fail-on", "warning", str(tmp_path / "one.xml")]) == 1
    assert main(["merge-reports", "--fail-on", "info", str(tmp_path / "one.xml")]) == 1


def sarif_log(rules: list[str], results: list[dict[str, Any]], ok: bool = True) -> str:
    return json.dumps({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "krmcheck",
                                      "rules": [{"id": r, "shortDescription": {"text": r}}
                                                for r in rules]}},
                  "invocations": [{"executionSuccessful": ok}],
                  "results": results}]})


def sarif_result(rule_index: int, uri: str, line: int, level: str = "error",
                 rule_id: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"ruleIndex": rule_index, "level": level, "message": {"text": "m"},
                           "locations": [{"physicalLocation": {
                               "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                               "region": {"startLine": line, "startColumn": 1}}}]}
    if rule_id:
        out["ruleId"] = rule_id
    return out


def test_sarif_rules_are_unioned_and_indexes_recomputed(tmp_path: Path) -> None:
    (tmp_path / "one.json").write_text(sarif_log(
        ["schema"], [sarif_result(0, "b.yaml", 1, rule_id="schema")]))
    # the second names its rule by index only
    (tmp_path / "two.json").write_text(sarif_log(
        ["metadata", "image-tag"], [sarif_result(1, "a.yaml", 5, "warning"),
                                    sarif_result(0, "c.yaml", 2, "note")]))
    out = tmp_path / "merged.sarif"
    assert main(["merge-reports", "--sarif", str(out), str(tmp_path / "one.json"),
                 str(tmp_path / "two.json")]) == 1
    doc = json.loads(out.read_text())
    assert len(doc["runs"]) == 1
    run = doc["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == ["image-tag", "metadata", "schema"]
    got = [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["ruleId"],
            r["ruleIndex"]) for r in run["results"]]
    assert got == [("a.yaml", "image-tag", 0), ("b.yaml", "schema", 2), ("c.yaml", "metadata", 1)]
    assert run["invocations"] == [{"executionSuccessful": True}]


def test_sarif_unsuccessful_invocation_carries_over(tmp_path: Path) -> None:
    (tmp_path / "one.sarif").write_text(sarif_log([], []))
    (tmp_path / "two.sarif").write_text(sarif_log(["build"], [sarif_result(0, "k.yaml", 1)], ok=False))
    out = tmp_path / "merged.sarif"
    assert main(["merge-reports", "--sarif", str(out), str(tmp_path / "one.sarif"),
                 str(tmp_path / "two.sarif")]) == 2
    assert json.loads(out.read_text())["runs"][0]["invocations"] == [{"executionSuccessful": False}]


# --- bad input ---------------------------------------------------------------------

@pytest.mark.parametrize("text,fragment", [
    ("hello\n", "not a JUnit XML, SARIF 2.1.0 or krmcheck JSON report"),
    ("", "not a JUnit XML, SARIF 2.1.0 or krmcheck JSON report"),
    ("{\"roots\": [}", ":1:12: not valid JSON"),
    ("<testsuites><testsuite>", "not well-formed XML"),
    ("<html><body/></html>", "the top element is <html>"),
    ("{\"a\": 1}", "neither a SARIF log"),
    ("{\"roots\": [], \"findings\": []}", "'summary' is a required property"),
    ("{\"roots\": [], \"findings\": [{\"path\": 1}], \"summary\": {}}", "$.findings[0]"),
    ("{\"version\": \"2.0.0\", \"runs\": []}", "not a SARIF 2.1.0 log"),
    ("{\"version\": \"2.1.0\", \"runs\": [{\"tool\": {}}]}", "'driver' is a required property"),
    ("[1, 2]", "not a JUnit XML, SARIF 2.1.0 or krmcheck JSON report"),
])
def test_bad_input_is_one_message_naming_the_file(tmp_path: Path, text: str, fragment: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    good = json_report(tmp_path, "good.json", ["a"], [])
    bad = tmp_path / "bad-report"
    bad.write_text(text)
    out = tmp_path / "merged.json"
    assert main(["merge-reports", "--json", str(out), str(good), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"krmcheck merge-reports: error: {bad}")
    assert fragment in err
    assert len(err.splitlines()) == 1
    assert not out.exists()


def test_a_missing_input_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["merge-reports", str(tmp_path / "nowhere.json")]) == 2
    assert "nowhere.json: cannot read" in capsys.readouterr().err


def test_an_output_without_inputs_of_its_format_is_an_error(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    report = json_report(tmp_path, "r.json", ["a"], [])
    assert main(["merge-reports", "--sarif", str(tmp_path / "m.sarif"), str(report)]) == 2
    assert "--sarif: none of the inputs is a SARIF 2.1.0 log" in capsys.readouterr().err


def test_no_inputs_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["merge-reports"])
    assert exit_info.value.code == 2


def test_a_malformed_sarif_result_names_the_field(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.sarif"
    bad.write_text(sarif_log(["schema"], [{"message": {"text": "m"}, "locations": ["here"]}]))
    assert main(["merge-reports", str(bad)]) == 2
    assert "$.runs[0].results[0].locations[0]" in capsys.readouterr().err
