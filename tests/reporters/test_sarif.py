from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import jsonschema
from reporter_sample import NO_LIMIT, finding, sample_run

from krmcheck.reporters.sarif import SarifReporter, uri
from krmcheck.results import RootReport, RunReport
from krmcheck.tree.origin import Location

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def sarif(run: RunReport, reporter: SarifReporter | None = None) -> dict[str, Any]:
    out = io.StringIO()
    (reporter or SarifReporter()).write(run, out)
    return json.loads(out.getvalue())


def test_output_is_valid_sarif_2_1_0() -> None:
    log = sarif(sample_run())
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert log["version"] == "2.1.0"


def test_schema_check_is_not_vacuous() -> None:
    log = sarif(sample_run())
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert not jsonschema.Draft4Validator(SCHEMA).is_valid(log)


def test_clean_and_locationless_runs_are_valid_too() -> None:
    nowhere = finding("m", "error", "build", "app", Location("", 0, 0))
    for run in (RunReport(()), RunReport((RootReport("app", (), (nowhere,), True),))):
        jsonschema.Draft4Validator(SCHEMA).validate(sarif(run))


def test_rules_catalog_and_results_refer_to_it() -> None:
    run_log = sarif(sample_run(), SarifReporter({"image-tag": "Images are pinned."}))["runs"][0]
    rules = run_log["tool"]["driver"]["rules"]
    assert run_log["tool"]["driver"]["name"] == "krmcheck"
    assert [r["id"] for r in rules] == ["build", "image-tag", "labels", "replicas", "resource-limits"]
    assert rules[1]["shortDescription"] == {"text": "Images are pinned."}
    assert rules[0]["shortDescription"] == {"text": "The kustomization could not be built."}
    for result in run_log["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    assert [(r["ruleId"], r["level"]) for r in run_log["results"]] == [
        ("resource-limits", "warning"), ("labels", "note"), ("image-tag", "error"),
        ("build", "error"), ("replicas", "error")]


def test_a_defect_is_one_result_with_its_roots_and_fingerprint() -> None:
    results = sarif(sample_run())["runs"][0]["results"]
    shared = results[0]
    assert shared["properties"]["roots"] == ["overlays/prod", "overlays/prod-eu"]
    assert shared["partialFingerprints"] == {"krmcheck/v1": NO_LIMIT.fingerprint}
    assert "suppressions" not in shared


def test_suppressed_findings_are_results_with_suppressions() -> None:
    ignored = sarif(sample_run())["runs"][0]["results"][-1]
    assert ignored["suppressions"] == [
        {"kind": "inSource", "justification": "comment: base/deploy, v2.yaml:8:20"}]


def test_result_location_and_trail() -> None:
    image = sarif(sample_run())["runs"][0]["results"][2]
    assert image["message"] == {"text": 'image "nginx" uses tag "latest"; pin 100% of images'}
    assert image["locations"] == [{"physicalLocation": {
        "artifactLocation": {"uri": "overlays/prod/kustomization.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 9, "startColumn": 13}}}]
    assert image["relatedLocations"] == [{
        "id": 0,
        "physicalLocation": {
            "artifactLocation": {"uri": "base/deployment.yaml", "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": 20, "startColumn": 16}},
        "message": {"text": "earlier value, set by resource"}}]
    assert image["properties"]["field"] == "spec.template.spec.containers[name=web].image"


def test_trail_is_newest_first() -> None:
    labels = sarif(sample_run())["runs"][0]["results"][1]
    assert [r["physicalLocation"]["artifactLocation"]["uri"] for r in labels["relatedLocations"]] \
        == ["overlays/prod/kustomization.yaml", "base/configmap.yaml"]


def test_paths_become_relative_uri_references() -> None:
    assert uri("base/deploy, v2.yaml") == "base/deploy,%20v2.yaml"
    assert uri("a/100%.yaml") == "a/100%25.yaml"
    assert uri("c:d/x.yaml") == "c%3Ad/x.yaml"  # would otherwise read as scheme "c"
