"""The labels of the precision benchmark (benchmarks/precision_labels.yaml)
are well formed: each names a listed repository at a fixed commit, a place
and check, a verdict and why. The benchmark itself needs the repositories'
clones and runs outside the tests (benchmarks/precision.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import precision  # noqa: E402


def test_every_label_names_a_repository_at_a_commit_and_says_why() -> None:
    repos, labels = precision.load()
    assert repos
    for entry in repos.values():
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), entry
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", entry["repo"]), entry
    for label in labels:
        assert label.repo in repos, label
        assert label.verdict in precision.VERDICTS, label
        assert label.line > 0 and label.path and not label.path.startswith("/"), label
        assert label.message and len(label.why) > 20, label


def test_no_error_is_labelled_twice() -> None:
    _, labels = precision.load()
    keys = [(lab.repo, lab.path, lab.line, lab.check, lab.message) for lab in labels]
    assert len(keys) == len(set(keys))


def test_the_labels_meet_the_target_they_are_measured_against() -> None:
    _, labels = precision.load()
    true = sum(1 for lab in labels if lab.verdict == "true")
    false = sum(1 for lab in labels if lab.verdict == "false")
    assert true / (true + false) >= precision.TARGET


def test_a_label_matches_by_place_check_and_the_start_of_the_message() -> None:
    label = precision.Label("o/r", "a.yaml", 3, "schema", "spec: missing", "true", "a fact checked at the line")
    assert label.matches({"path": "a.yaml", "line": 3, "validator": "schema", "message": "spec: missing x"})
    assert not label.matches({"path": "a.yaml", "line": 4, "validator": "schema", "message": "spec: missing x"})
    assert not label.matches({"path": "a.yaml", "line": 3, "validator": "metadata", "message": "spec: missing"})
