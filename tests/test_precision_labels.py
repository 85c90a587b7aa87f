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
import pytest  # noqa: E402
import yaml  # noqa: E402


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


def test_each_batch_records_its_first_sight_and_its_figure_now() -> None:
    """A batch keeps the precision it had when first labelled, before any
    rule changed for it (labels of errors no longer reported stay, false
    ones counted as fixed), and the figure the benchmark gives now; the
    figures now meet the target."""
    doc = yaml.safe_load(precision.LABELS.read_text(encoding="utf-8"))
    repos, labels = precision.load()
    batches = {str(b["batch"]): b for b in doc["batches"]}
    assert {str(r.get("batch")) for r in repos.values()} <= set(batches)
    true_now = false_now = 0
    for batch in batches.values():
        for when in ("first-sight", "now"):
            figures = {str(k).lower(): v for k, v in batch[when].items()}  # (YAML reads a true: key as True)
            judged = figures["true"] + figures["false"]
            assert figures["precision"] == (round(figures["true"] / judged, 3) if judged else None), batch
        now = {str(k).lower(): v for k, v in batch["now"].items()}
        first = {str(k).lower(): v for k, v in batch["first-sight"].items()}
        if str(batch["batch"]) != "catalog":  # (the catalog row is every batch again)
            true_now += now["true"]
            false_now += now["false"]
            # what is left false now was labelled false at first sight: nothing is relabelled to fit
            assert now["false"] <= first["false"], batch
    assert true_now / (true_now + false_now) >= precision.TARGET


def test_a_label_matches_by_place_check_and_the_start_of_the_message() -> None:
    label = precision.Label("o/r", "a.yaml", 3, "schema", "spec: missing", "true", "a fact checked at the line")
    assert label.matches({"path": "a.yaml", "line": 3, "validator": "schema", "message": "spec: missing x"})
    assert not label.matches({"path": "a.yaml", "line": 4, "validator": "schema", "message": "spec: missing x"})
    assert not label.matches({"path": "a.yaml", "line": 3, "validator": "metadata", "message": "spec: missing"})


def test_only_a_warning_a_test_input_renders_keeps_a_true_label_from_being_lost(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A true defect shown as a warning counts as not lost only where the
    report lists the warning's root under `inputs` (a test input); a
    warning for another reason (here an image without a tag) is a loss."""
    partial = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nstatus:\n  readyReplicas: 1\n"
    (tmp_path / "test" / "e2e").mkdir(parents=True)
    (tmp_path / "test" / "e2e" / "partial.yaml").write_text(partial, encoding="utf-8")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: nginx\n",
        encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(BENCHMARKS.parent))  # the checkout's krmcheck in the benchmark's process
    errors, warned, code, _ = precision.errors_of(tmp_path, [])
    assert errors == [] and code == 0
    assert [(w["path"], w["validator"]) for w in warned] == [("test/e2e/partial.yaml", "schema")]
