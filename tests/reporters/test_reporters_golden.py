"""Every reporter's output for the sample run, compared with golden files.

Regenerate after an intended change with ``KRMCHECK_UPDATE_GOLDEN=1 pytest
tests/reporters`` and review the diff.
"""

from __future__ import annotations

import dataclasses
import io
import os
import random
from pathlib import Path

import pytest
from reporter_sample import sample_run

from krmcheck.reporters import REPORTERS
from krmcheck.reporters.github import GithubReporter
from krmcheck.results import RunReport

GOLDEN = Path(__file__).parent / "golden"
OUTPUT_NAMES = {"text": "out.txt", "github": "out.txt", "junit": "out.xml",
                "sarif": "out.sarif", "json": "out.json", "gitlab": "out.json", "markdown": "out.md"}


def render(name: str, run: RunReport, tmp: Path) -> dict[str, str]:
    """Everything a reporter writes: its stream, and for github the two files."""
    tmp.mkdir(parents=True, exist_ok=True)
    reporter = REPORTERS[name]
    env = {"GITHUB_STEP_SUMMARY": str(tmp / "step-summary.md"),
           "GITHUB_OUTPUT": str(tmp / "github-output.txt")}
    if name == "github":
        reporter = GithubReporter(env=env)
    out = io.StringIO()
    reporter.write(run, out)
    files = {OUTPUT_NAMES[name]: out.getvalue()}
    for extra in ("step-summary.md", "github-output.txt"):
        if (tmp / extra).exists():
            files[extra] = (tmp / extra).read_text(encoding="utf-8")
    return files


@pytest.mark.parametrize("name", sorted(OUTPUT_NAMES))
def test_matches_golden(name: str, tmp_path: Path) -> None:
    got = render(name, sample_run(), tmp_path)
    folder = GOLDEN / name
    if os.environ.get("KRMCHECK_UPDATE_GOLDEN"):
        folder.mkdir(parents=True, exist_ok=True)
        for file, text in got.items():
            (folder / file).write_text(text, encoding="utf-8", newline="")
    expected = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}
    assert got == expected


def test_registry_covers_every_golden_format() -> None:
    assert list(REPORTERS) == ["text", "github", "junit", "sarif", "json", "gitlab", "markdown"]
    assert sorted(p.name for p in GOLDEN.iterdir()) == sorted(OUTPUT_NAMES)


@pytest.mark.parametrize("name", sorted(OUTPUT_NAMES))
def test_same_findings_give_same_bytes(name: str, tmp_path: Path) -> None:
    first = render(name, sample_run(), tmp_path / "first")
    again = render(name, sample_run(), tmp_path / "again")
    assert first == again


@pytest.mark.parametrize("name", sorted(OUTPUT_NAMES))
def test_output_does_not_depend_on_input_order(name: str, tmp_path: Path) -> None:
    run = sample_run()
    shuffle = random.Random(7)
    roots = list(run.roots)
    shuffle.shuffle(roots)
    shuffled = dataclasses.replace(run, roots=tuple(
        dataclasses.replace(root, findings=tuple(shuffle.sample(root.findings, len(root.findings))))
        for root in roots))
    assert render(name, shuffled, tmp_path / "shuffled") == render(name, run, tmp_path / "plain")
