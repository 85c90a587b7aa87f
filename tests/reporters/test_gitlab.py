"""The GitLab code-quality report: one issue per defect, SARIF's fingerprints,
GitLab's severities, repo-relative paths, no suppressed findings."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from reporter_sample import (
    BUILD,
    IGNORED,
    IMAGE_TAG,
    LABEL,
    NO_LIMIT,
    finding,
    sample_run,
)
from test_sanitize import NEWLINE_PATH, RAW, hostile_run

from krmcheck.cli import main
from krmcheck.reporters import ordered_defects
from krmcheck.reporters.gitlab import GitlabReporter
from krmcheck.reporters.sarif import SarifReporter
from krmcheck.results import RootReport, RunReport
from krmcheck.tree.origin import Location
from tests.checkrun import DEPLOYMENT, write

GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


def gitlab(run: RunReport) -> list[dict[str, Any]]:
    out = io.StringIO()
    GitlabReporter().write(run, out)
    document = json.loads(out.getvalue())
    assert isinstance(document, list)
    return document


def sarif_fingerprints(log: dict[str, Any]) -> dict[tuple[str, int, str], str]:
    """(uri, line, rule) -> partialFingerprints of the unsuppressed results."""
    out = {}
    for result in log["runs"][0]["results"]:
        if result.get("suppressions"):
            continue
        physical = result["locations"][0]["physicalLocation"]
        key = (physical["artifactLocation"]["uri"], physical["region"]["startLine"], result["ruleId"])
        assert key not in out
        out[key] = result["partialFingerprints"]["krmcheck/v1"]
    return out


def assert_code_quality_issue(issue: dict[str, Any]) -> None:
    """The fields GitLab requires, with the types it reads."""
    assert isinstance(issue["description"], str) and issue["description"]
    assert isinstance(issue["check_name"], str) and issue["check_name"]
    assert re.fullmatch(r"[0-9a-f]{32}", issue["fingerprint"])
    assert issue["severity"] in GITLAB_SEVERITIES
    assert isinstance(issue["location"]["path"], str) and issue["location"]["path"]
    begin = issue["location"]["lines"]["begin"]
    assert isinstance(begin, int) and begin >= 1
    assert isinstance(issue["content"]["body"], str)


def test_one_issue_per_defect_in_report_order() -> None:
    run = sample_run()
    issues = gitlab(run)
    for issue in issues:
        assert_code_quality_issue(issue)
    assert [(i["location"]["path"], i["location"]["lines"]["begin"], i["check_name"]) for i in issues] == [
        ("base/deploy, v2.yaml", 14, "resource-limits"),
        ("components/labels/patch.yaml", 5, "labels"),
        ("overlays/prod/kustomization.yaml", 9, "image-tag"),
        ("overlays/staging/kustomization.yaml", 4, "build"),
    ]
    assert [i["fingerprint"] for i in issues] == [d.fingerprint for d in ordered_defects(run.defects)]
    assert len({i["fingerprint"] for i in issues}) == len(issues)


def test_severities_map_to_gitlab_levels() -> None:
    by_check = {i["check_name"]: i["severity"] for i in gitlab(sample_run())}
    assert by_check == {"image-tag": "major", "build": "major",  # error
                        "resource-limits": "minor",  # warning
                        "labels": "info"}


def test_a_defect_of_several_roots_is_one_issue_naming_them() -> None:
    issues = gitlab(sample_run())
    shared = [i for i in issues if i["check_name"] == "resource-limits"]
    assert len(shared) == 1  # NO_LIMIT and NO_LIMIT_EU, two roots, one defect
    [issue] = shared
    assert issue["description"] == ('container "web" has no memory limit set resources.limits.memory'
                                    " (2 roots: overlays/prod, overlays/prod-eu)")
    assert "`overlays/prod`, `overlays/prod-eu`" in issue["content"]["body"]
    assert issue["fingerprint"] == NO_LIMIT.fingerprint
    single = next(i for i in issues if i["check_name"] == "image-tag")
    assert single["description"].endswith(" (overlays/prod)")


def test_many_roots_are_shortened_in_the_description_and_listed_in_the_body() -> None:
    roots = [f"overlays/r{n:02}" for n in range(5)]
    run = RunReport(tuple(RootReport(r, (), (finding("bad", "error", "schema", r, Location("b.yaml", 3, 1)),))
                          for r in roots))
    [issue] = gitlab(run)
    assert issue["description"] == "bad (5 roots: overlays/r00, overlays/r01, overlays/r02 and 2 more)"
    assert all(f"`{r}`" in issue["content"]["body"] for r in roots)


def test_suppressed_findings_are_not_issues() -> None:
    issues = gitlab(sample_run())
    assert IGNORED.fingerprint not in {i["fingerprint"] for i in issues}
    assert "replicas" not in {i["check_name"] for i in issues}
    assert len(issues) == len(sample_run().defects)


def test_fingerprints_equal_sarif_partial_fingerprints() -> None:
    run = sample_run()
    out = io.StringIO()
    SarifReporter().write(run, out)
    sarif = sarif_fingerprints(json.loads(out.getvalue()))
    gl = {(i["location"]["path"].replace(" ", "%20"), i["location"]["lines"]["begin"], i["check_name"]):
          i["fingerprint"] for i in gitlab(run)}
    assert gl == sarif
    assert {IMAGE_TAG.fingerprint, LABEL.fingerprint, BUILD.fingerprint} <= set(gl.values())


def test_unknown_position_and_file() -> None:
    whole_file = finding("no kind", "warning", "schema", "app", Location("app/x.yaml", 0, 0))
    nowhere = finding("cannot build", "error", "build", "app", Location("", 0, 0))
    [first, second] = gitlab(RunReport((RootReport("app", (), (whole_file, nowhere), True),)))
    assert first["location"] == {"path": "app", "lines": {"begin": 1}}  # no file: its root
    assert second["location"] == {"path": "app/x.yaml", "lines": {"begin": 1}}
    assert first["fingerprint"] == nowhere.fingerprint


def test_clean_run_is_an_empty_array() -> None:
    out = io.StringIO()
    GitlabReporter().write(RunReport((RootReport("app"),)), out)
    assert out.getvalue() == "[]\n"


def test_hostile_input_loads_and_keeps_the_real_path() -> None:
    out = io.StringIO()
    GitlabReporter().write(hostile_run(), out)
    text = out.getvalue()
    assert [c for c in RAW.findall(text) if c != "\n"] == []
    issues = json.loads(text)
    for issue in issues:
        assert_code_quality_issue(issue)
        assert "\n" not in issue["description"]
        assert not RAW.search(issue["description"])
        for value in (issue["description"], issue["content"]["body"], issue["location"]["path"]):
            value.encode("utf-8")  # no lone surrogate
    assert NEWLINE_PATH in {i["location"]["path"] for i in issues}
    # The message, Markdown in the body, shows its tags and links as text.
    messages = [i["content"]["body"].split("\n\n")[0].replace("<br>", "")
                for i in issues if i["check_name"] != "build"]
    assert messages and all(not re.search(r"(?<!\\)[<`&\[]", m) for m in messages)


# --- the command line ------------------------------------------------------------------

BASE = DEPLOYMENT.replace('  replicas: 1', '  replicas: "2"').replace(
    "      labels: {app: web}", "      labels: {app: web}  # krmcheck: ignore").replace(
    "        image: nginx:1.27",
    "        image: nginx:latest\n"
    "      - name: side\n"
    "        image: busybox:latest  # krmcheck: ignore[image-tag] vendored")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A base two overlays render: a schema error, an image-tag warning, an
    unused ignore comment (info) and an image-tag warning silenced by a comment."""
    (tmp_path / ".git").mkdir()
    write(tmp_path, "base/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "base/deployment.yaml", BASE)
    for overlay in ("prod", "staging"):
        write(tmp_path, f"overlays/{overlay}/kustomization.yaml",
              f"resources: [../../base]\nnamePrefix: {overlay}-\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cli_writes_the_report(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([".", "--github", "off", "--gitlab", "reports/gl-code-quality.json",
                 "--sarif", "reports/out.sarif"])
    assert code == 1
    assert "2 suppressed" in capsys.readouterr().out
    issues = json.loads((repo / "reports/gl-code-quality.json").read_text(encoding="utf-8"))
    for issue in issues:
        assert_code_quality_issue(issue)
    assert [(i["location"]["path"], i["location"]["lines"]["begin"], i["check_name"], i["severity"])
            for i in issues] == [
        ("base/deployment.yaml", 6, "schema", "major"),
        ("base/deployment.yaml", 11, "unused-ignore", "info"),
        ("base/deployment.yaml", 15, "image-tag", "minor"),
    ]
    # Six findings (three defects in two roots) are three issues, each naming both roots.
    assert all(i["description"].endswith(" (2 roots: overlays/prod, overlays/staging)") for i in issues)
    # The silenced busybox finding (line 17) is not reported.
    assert all("busybox" not in i["description"] for i in issues)
    sarif = sarif_fingerprints(json.loads((repo / "reports/out.sarif").read_text(encoding="utf-8")))
    assert {(i["location"]["path"], i["location"]["lines"]["begin"], i["check_name"]): i["fingerprint"]
            for i in issues} == sarif


def test_cli_paths_are_repo_relative_from_a_subdirectory(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(repo / "overlays/prod")
    assert main([".", "--github", "off", "--gitlab", "gl.json"]) == 1
    assert "../../base/deployment.yaml:6:3" in capsys.readouterr().out  # the text report is cwd-relative
    issues = json.loads((repo / "overlays/prod/gl.json").read_text(encoding="utf-8"))
    assert {i["location"]["path"] for i in issues} == {"base/deployment.yaml"}
    assert all(i["description"].endswith(" (overlays/prod)") for i in issues)


def test_cli_refuses_to_overwrite_an_input(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([".", "--github", "off", "--gitlab", "base/deployment.yaml"]) == 2
    assert "--gitlab base/deployment.yaml: is an input of the run" in capsys.readouterr().err
    assert (repo / "base/deployment.yaml").read_text() == BASE
