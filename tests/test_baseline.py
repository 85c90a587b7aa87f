"""Baselines: record today's findings, then fail only on new ones."""

from __future__ import annotations

import json
from pathlib import Path

from tests.checkrun import DEPLOYMENT, check, write

BAD = DEPLOYMENT.replace("  replicas: 1", "  replicas: '1'").replace("nginx:1.27", "nginx:latest")


def repo(tmp_path: Path) -> Path:
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "app/deployment.yaml", BAD)
    return tmp_path


def test_write_then_use_a_baseline(tmp_path: Path) -> None:
    repo(tmp_path)
    assert check(tmp_path).code == 1
    written = check(tmp_path, "--write-baseline", "ci/baseline.json")
    assert written.code == 0  # what it recorded no longer fails the run
    doc = json.loads((tmp_path / "ci/baseline.json").read_text())
    assert doc["krmcheck-baseline"] == 1
    assert [(e["validator"], e["path"], e["resource"]) for e in doc["findings"]] == [
        ("image-tag", "app/deployment.yaml", "Deployment/web"),
        ("schema", "app/deployment.yaml", "Deployment/web")]
    run = check(tmp_path, "--baseline", "ci/baseline.json")
    assert run.code == 0
    assert sorted(s[3] for s in run.suppressed()) == ["baseline", "baseline"]


def test_a_new_finding_fails_and_moved_lines_still_match(tmp_path: Path) -> None:
    repo(tmp_path)
    check(tmp_path, "--write-baseline", "baseline.json")
    # lines inserted above the recorded findings, and one new defect
    moved = BAD.replace("metadata:\n", "metadata:\n  labels:\n    team: a\n    tier: b\n", 1)
    write(tmp_path, "app/deployment.yaml", moved.replace("  selector:", "  paused: 'no'\n  selector:"))
    run = check(tmp_path, "--baseline", "baseline.json")
    assert run.code == 1
    assert run.located() == [("app/deployment.yaml", 10, "schema")]
    assert "paused" in run.report["defects"][0]["message"]
    assert len(run.suppressed()) == 2


def test_entries_that_match_nothing_are_reported_as_removable(tmp_path: Path) -> None:
    repo(tmp_path)
    check(tmp_path, "--write-baseline", "baseline.json")
    write(tmp_path, "app/deployment.yaml", BAD.replace("nginx:latest", "nginx:1.27"))
    run = check(tmp_path, "--baseline", "baseline.json")
    assert run.code == 0
    [note] = run.report["notes"]
    assert note["path"] == "app/deployment.yaml" and "image-tag" in note["message"]
    assert "it can be removed" in run.out


def test_the_configuration_names_a_baseline_relative_to_itself(tmp_path: Path) -> None:
    repo(tmp_path)
    check(tmp_path, "--write-baseline", "ci/baseline.json")
    write(tmp_path, ".krmcheck.yaml", "baseline: ci/baseline.json\n")
    run = check(tmp_path)
    assert run.code == 0 and run.report["baseline"] == "ci/baseline.json"


def test_sarif_carries_the_baseline_fingerprint(tmp_path: Path) -> None:
    repo(tmp_path)
    check(tmp_path, "--write-baseline", "baseline.json", "--sarif", "out.sarif")
    recorded = {e["fingerprint"] for e in json.loads((tmp_path / "baseline.json").read_text())["findings"]}
    check(tmp_path, "--sarif", "out.sarif")
    log = json.loads((tmp_path / "out.sarif").read_text())
    assert {r["partialFingerprints"]["krmcheck/v1"] for r in log["runs"][0]["results"]} == recorded


def test_a_file_that_is_not_a_baseline_is_a_usage_error(tmp_path: Path) -> None:
    repo(tmp_path)
    write(tmp_path, "baseline.json", '{"findings": []}\n')
    run = check(tmp_path, "--baseline", "baseline.json")
    assert run.code == 2 and "not a krmcheck baseline" in run.err
    run = check(tmp_path, "--baseline", "missing.json")
    assert run.code == 2 and "missing.json: cannot read the baseline" in run.err
