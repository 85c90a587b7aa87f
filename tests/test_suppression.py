"""Silencing and re-grading findings: ignore comments, the ignore annotation,
severities, per-path overrides and exclude patterns. Whatever silences a
finding keeps it in the JSON report's ``suppressed`` list and the count."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.suppression import comments_in
from krmcheck.tree.origin import Location
from tests.checkrun import DEPLOYMENT, check, write

LATEST = DEPLOYMENT.replace("nginx:1.27", "nginx:latest")


def repo(tmp_path: Path, deployment: str = LATEST) -> Path:
    write(tmp_path, "base/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "base/deployment.yaml", deployment)
    for overlay in ("prod", "staging"):
        write(tmp_path, f"overlays/{overlay}/kustomization.yaml",
              f"resources: [../../base]\nnamePrefix: {overlay}-\n")
    return tmp_path


# --- comments -------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "ids", "covers"), [
    ("image: x  # krmcheck: ignore", frozenset(), 1),
    ("image: x # krmcheck: ignore[image-tag] pinned by the registry", frozenset({"image-tag"}), 1),
    ("# krmcheck: ignore[schema, metadata]", frozenset({"schema", "metadata"}), 2),
    ("  #krmcheck:ignore", frozenset(), 2),
])
def test_comment_forms(line: str, ids: frozenset[str], covers: int) -> None:
    [found] = comments_in("f.yaml", line + "\nnext: 1\n")
    assert (found.ids, found.line, found.location) == (ids, covers, Location("f.yaml", 1, line.index("#") + 1))


@pytest.mark.parametrize("line", [
    "image: x#krmcheck: ignore",  # no blank before '#': part of the value
    "note: '# krmcheck: ignored'",  # another word
    "# krmcheck: ignorance",
])
def test_text_that_is_not_an_ignore_comment(line: str) -> None:
    assert comments_in("f.yaml", line + "\n") == []


def test_a_comment_on_the_line_silences_that_finding_in_every_root(tmp_path: Path) -> None:
    repo(tmp_path, LATEST.replace("image: nginx:latest", "image: nginx:latest  # krmcheck: ignore[image-tag] demo"))
    run = check(tmp_path)
    assert run.code == 0
    assert run.located() == []
    assert sorted(run.suppressed()) == [("base/deployment.yaml", 15, "image-tag", "comment")] * 2
    assert "2 suppressed" in run.out


def test_a_comment_alone_on_the_line_above(tmp_path: Path) -> None:
    repo(tmp_path, LATEST.replace("        image: nginx:latest",
                                  "        # krmcheck: ignore\n        image: nginx:latest"))
    run = check(tmp_path)
    assert run.located() == [] and len(run.suppressed()) == 2


def test_a_comment_naming_another_validator_does_not_silence(tmp_path: Path) -> None:
    repo(tmp_path, LATEST.replace("image: nginx:latest", "image: nginx:latest  # krmcheck: ignore[schema]"))
    run = check(tmp_path)
    assert ("base/deployment.yaml", 15, "image-tag") in run.located()
    # and the comment itself silenced nothing
    assert ("base/deployment.yaml", 15, "unused-ignore") in run.located("info")


def test_an_unused_ignore_is_one_info_finding(tmp_path: Path) -> None:
    repo(tmp_path, DEPLOYMENT.replace("  replicas: 1", "  replicas: 1  # krmcheck: ignore"))
    run = check(tmp_path)
    assert run.code == 0
    [defect] = run.report["defects"]
    assert (defect["path"], defect["line"], defect["validator"], defect["severity"]) == (
        "base/deployment.yaml", 6, "unused-ignore", "info")
    assert defect["roots"] == ["overlays/prod", "overlays/staging"]


# --- the annotation -------------------------------------------------------------------

def test_the_annotation_silences_the_validators_it_names(tmp_path: Path) -> None:
    annotated = LATEST.replace("  name: web\n", "  name: web\n  annotations:\n    krmcheck.io/ignore: image-tag\n")
    repo(tmp_path, annotated)
    run = check(tmp_path)
    assert run.code == 0 and run.located() == []
    assert {s[3] for s in run.suppressed()} == {"annotation"}
    where = {s["where"] for s in run.report["suppressed"]}
    assert where == {"base/deployment.yaml:6:5"}


def test_an_annotation_that_silences_nothing_is_reported(tmp_path: Path) -> None:
    annotated = DEPLOYMENT.replace("  name: web\n", "  name: web\n  annotations:\n    krmcheck.io/ignore: schema\n")
    repo(tmp_path, annotated)
    run = check(tmp_path)
    assert run.located() == [("base/deployment.yaml", 6, "unused-ignore")]


# --- severities and overrides -----------------------------------------------------------

def test_a_validator_s_severity_is_configurable(tmp_path: Path) -> None:
    repo(tmp_path)
    assert check(tmp_path).code == 0  # image-tag is a warning by default
    write(tmp_path, ".krmcheck.yaml", "validators:\n  image-tag: {severity: error}\n")
    run = check(tmp_path)
    assert run.code == 1 and run.located("error") == [("base/deployment.yaml", 15, "image-tag")]


def test_overrides_apply_to_matching_files_and_later_entries_win(tmp_path: Path) -> None:
    repo(tmp_path)
    write(tmp_path, ".krmcheck.yaml",
          "validators:\n  image-tag: {severity: error}\n"
          "overrides:\n"
          "- paths: ['base/']\n  validators: {image-tag: {severity: info}}\n"
          "- paths: ['*.md']\n  validators: {image-tag: {severity: warning}}\n")
    run = check(tmp_path)
    assert run.code == 0 and run.located("info") == [("base/deployment.yaml", 15, "image-tag")]


def test_an_override_can_turn_a_validator_off_for_some_files(tmp_path: Path) -> None:
    repo(tmp_path)
    write(tmp_path, ".krmcheck.yaml", "overrides:\n- paths: ['base/deployment.yaml']\n"
                                      "  validators: {image-tag: false}\n")
    run = check(tmp_path)
    assert run.located() == []
    assert {(s["by"], s["where"]) for s in run.report["suppressed"]} == {
        ("override", ".krmcheck.yaml overrides: base/deployment.yaml")}


# --- exclude ---------------------------------------------------------------------------

def test_excluded_paths_are_never_roots(tmp_path: Path) -> None:
    repo(tmp_path)
    write(tmp_path, "legacy/broken/kustomization.yaml", "resources: [missing.yaml]\n")
    assert check(tmp_path).code == 2
    write(tmp_path, ".krmcheck.yaml", "exclude: ['legacy/']\n")
    run = check(tmp_path)
    assert run.code == 0
    assert [r["root"] for r in run.report["roots"]] == ["overlays/prod", "overlays/staging"]


def test_exclude_on_the_command_line_is_relative_to_the_current_directory(tmp_path: Path) -> None:
    repo(tmp_path)
    write(tmp_path, "test/broken/kustomization.yaml", "resources: [missing.yaml]\n")
    assert check(tmp_path, "--exclude", "broken/", cwd=tmp_path / "test").code == 2  # nothing left to check
    run = check(tmp_path, ".", "--exclude", "test/broken")
    assert run.code == 0 and len(run.report["roots"]) == 2


def test_findings_in_excluded_files_are_suppressed(tmp_path: Path) -> None:
    repo(tmp_path)
    write(tmp_path, ".krmcheck.yaml", "exclude: ['base/']\n")
    run = check(tmp_path)
    assert run.located() == []
    assert {s[3] for s in run.suppressed()} == {"exclude"}
