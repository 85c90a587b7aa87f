"""End-to-end runs of the CLI over the example repositories in fixtures/.

``fixtures/gitops-demo`` carries one deliberate defect in each layer a finding
can come from (a base, an overlay patch, an ``images:`` entry, a component's
patch, a generator entry); ``fixtures/gitops-clean`` is the same repository
fixed. These tests pin that every output format points at exactly the line a
person must edit, in every root that renders it, and at nothing else.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

import pytest

from krmcheck.cli import main

PROJECT = Path(__file__).resolve().parent.parent
DEMO = PROJECT / "fixtures" / "gitops-demo"
CLEAN = PROJECT / "fixtures" / "gitops-clean"

OVERLAYS = (
    "apps/api/overlays/production",
    "apps/api/overlays/staging",
    "apps/web/overlays/production",
    "apps/web/overlays/staging",
)

# (file, line, col or None, validator, message fragment), paths relative to
# the fixture's top. The column is that of the key whose value is wrong (a
# mapping value's origin is its key); None would mean "any column".
DEFECTS = [
    # base resource: replicas quoted as a string
    ("apps/api/base/deployment.yaml", 6, 3, "schema", "integer"),
    # strategic-merge patch in an overlay: an env var value that is a number
    ("apps/web/overlays/production/patches/deployment-env.yaml", 14, 15, "schema", "string"),
    # images: entry of an overlay: newTag: latest
    ("apps/web/overlays/staging/kustomization.yaml", 18, 5, "image-tag", "latest"),
    # the shared component's patch: periodSeconds: 10s
    ("components/metrics-sidecar/sidecar.yaml", 28, 13, "schema", "integer"),
    # configMapGenerator options.labels: a label value with a space
    ("apps/api/overlays/production/kustomization.yaml", 29, 9, "metadata", "label value"),
]

# Which roots render each defect: a base or a component defect is one
# finding that names every overlay that includes it.
REACHED_BY = {
    "apps/api/base/deployment.yaml": ("apps/api/overlays/production", "apps/api/overlays/staging"),
    "apps/web/overlays/production/patches/deployment-env.yaml": ("apps/web/overlays/production",),
    "apps/web/overlays/staging/kustomization.yaml": ("apps/web/overlays/staging",),
    "components/metrics-sidecar/sidecar.yaml": ("apps/api/overlays/production",
                                                "apps/web/overlays/production"),
    "apps/api/overlays/production/kustomization.yaml": ("apps/api/overlays/production",),
}

# Error findings of one run over the whole demo repository (one per root
# that renders a defect), and the defects they are.
ERROR_COUNT = sum(len(roots) for roots in REACHED_BY.values())
DEFECT_COUNT = len(DEFECTS)

_LINE = re.compile(
    r"^(?P<path>[^\s:]+):(?P<line>\d+):(?P<col>\d+): (?P<severity>error|warning|info): "
    r"(?P<message>.*) \[(?P<validator>[^\]]+)\] \((?P<root>[^)]*)\)$")


class Reported(NamedTuple):
    path: str
    line: int
    col: int
    severity: str
    message: str
    validator: str
    root: str  # as printed: one root, or "2 roots: a, b"

    @property
    def roots(self) -> tuple[str, ...]:
        _, _, names = self.root.rpartition("roots: ")
        return tuple(names.split(", "))


def parse_text(out: str) -> list[Reported]:
    """The finding lines of the text report (not ``via`` or summary lines)."""
    found = []
    for text in out.splitlines():
        m = _LINE.match(text)
        if m:
            found.append(Reported(m["path"], int(m["line"]), int(m["col"]), m["severity"],
                                  m["message"], m["validator"], m["root"]))
    return found


def errors_of(out: str) -> list[Reported]:
    return [r for r in parse_text(out) if r.severity == "error"]


@pytest.fixture(autouse=True)
def outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    # When this suite itself runs on GitHub Actions, the CLI must not write
    # annotations or outputs into the real job.
    for name in ("GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


def copy_fixture(source: Path, tmp_path: Path) -> Path:
    """A copy outside any git work tree, so reported paths are relative to it."""
    target = tmp_path / source.name
    shutil.copytree(source, target)
    return target


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = copy_fixture(DEMO, tmp_path)
    monkeypatch.chdir(repo)
    return repo


@pytest.fixture
def clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = copy_fixture(CLEAN, tmp_path)
    monkeypatch.chdir(repo)
    return repo


def test_defect_table_points_at_the_lines_it_names() -> None:
    # Guards the table against edits of the fixture: each row's line is the
    # one gitops-clean changes.
    for path, line, col, _validator, _fragment in DEFECTS:
        demo_lines = (DEMO / path).read_text().splitlines()
        clean_lines = (CLEAN / path).read_text().splitlines()
        assert demo_lines[line - 1] != clean_lines[line - 1], path
        assert [t for t in demo_lines if t not in clean_lines] == [demo_lines[line - 1]], path
        if col is not None:
            assert demo_lines[line - 1][col - 1] != " " and demo_lines[line - 1][:col - 1].strip() == ""


def test_demo_fails_with_exit_1(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["."]) == 1


def test_demo_reports_each_defect_at_its_line(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["."])
    errors = errors_of(capsys.readouterr().out)
    for path, line, col, validator, fragment in DEFECTS:
        here = [e for e in errors if (e.path, e.line) == (path, line)]
        assert here, f"no error at {path}:{line}"
        for e in here:
            assert e.validator == validator, e
            assert fragment.lower() in e.message.lower(), e
            if col is not None:
                assert e.col == col, e


def test_demo_reports_each_defect_in_every_root_that_renders_it(
        demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["."])
    errors = errors_of(capsys.readouterr().out)
    expected = sorted((path, line, REACHED_BY[path]) for path, line, *_ in DEFECTS)
    assert sorted((e.path, e.line, e.roots) for e in errors) == expected


def test_demo_reports_no_other_error(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["."])
    errors = errors_of(capsys.readouterr().out)
    assert {(e.path, e.line) for e in errors} == {(d[0], d[1]) for d in DEFECTS}
    assert len(errors) == DEFECT_COUNT


def test_demo_json_keeps_each_root_s_finding_and_groups_defects(
        demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([".", "--json", "report.json"]) == 1
    doc = json.loads((demo / "report.json").read_text())
    findings = [f for f in doc["findings"] if f["severity"] == "error"]
    assert sorted((f["path"], f["line"], f["root"]) for f in findings) == sorted(
        (path, line, root) for path, line, *_ in DEFECTS for root in REACHED_BY[path])
    defects = [d for d in doc["defects"] if d["severity"] == "error"]
    assert sorted((d["path"], tuple(d["roots"])) for d in defects) == sorted(
        (path, REACHED_BY[path]) for path, *_ in DEFECTS)
    assert (doc["summary"]["errors"], len(findings)) == (DEFECT_COUNT, ERROR_COUNT)


def test_demo_junit_points_at_each_defect(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([".", "--junit", "report.xml"]) == 1
    tree = ET.parse(demo / "report.xml")
    cases = list(tree.iter("testcase"))
    failing = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    # A test case is one rendered resource; its file/line attributes name the
    # first of its failures, and each failure's text starts with its own location.
    attributes = {(c.get("file"), int(c.get("line") or 0)) for c in failing}
    assert attributes <= {(d[0], d[1]) for d in DEFECTS}
    texts = [(f.text or "") for c in failing for f in c.iter("failure")]
    for path, line, *_ in DEFECTS:
        assert any(t.startswith(f"{path}:{line}:") for t in texts), f"{path}:{line}"
    # Every defect is the first failure of some resource except where a
    # resource has two: the Deployments of the production overlays.
    assert ("apps/api/base/deployment.yaml", 6) in attributes
    assert ("apps/web/overlays/staging/kustomization.yaml", 18) in attributes
    assert ("apps/api/overlays/production/kustomization.yaml", 29) in attributes


def test_demo_sarif_points_at_each_defect(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([".", "--sarif", "report.sarif"]) == 1
    log = json.loads((demo / "report.sarif").read_text())
    errors = [r for run in log["runs"] for r in run["results"] if r["level"] == "error"]
    places = []
    for r in errors:
        physical = r["locations"][0]["physicalLocation"]
        places.append((physical["artifactLocation"]["uri"], physical["region"]["startLine"],
                       r["ruleId"]))
    expected = [(path, line, validator) for path, line, _col, validator, _f in DEFECTS]
    assert sorted(places) == sorted(expected)
    assert sorted(tuple(r["properties"]["roots"]) for r in errors) == sorted(REACHED_BY.values())


def test_clean_passes_with_exit_0(clean: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([".", "--strict"]) == 0
    assert errors_of(capsys.readouterr().out) == []


def test_fail_on_never_exits_0_but_still_reports(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([".", "--fail-on", "never"]) == 0
    assert len(errors_of(capsys.readouterr().out)) == DEFECT_COUNT


def test_one_overlay_reports_only_its_own_defects(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["apps/web/overlays/staging"]) == 1
    errors = errors_of(capsys.readouterr().out)
    assert [(e.path, e.line, e.root) for e in errors] == [
        ("apps/web/overlays/staging/kustomization.yaml", 18, "apps/web/overlays/staging")]


def test_paths_are_relative_to_the_git_top_level(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # Run in place: the project is a git work tree, so paths carry the
    # fixture's own directory, as a pull request would show them.
    if not (PROJECT / ".git").exists():
        pytest.skip("the project is not a git work tree")
    # The text report names files from the current directory (clickable in a
    # terminal); the file reports from the top of the repository.
    monkeypatch.chdir(PROJECT / "fixtures")
    assert main(["gitops-demo", "--json", str(PROJECT / "tmp-report.json")]) == 1
    errors = errors_of(capsys.readouterr().out)
    shown = "gitops-demo/"
    assert {(e.path, e.line) for e in errors} == {(shown + d[0], d[1]) for d in DEFECTS}
    assert {r for e in errors for r in e.roots} == {shown + root for roots in REACHED_BY.values()
                                                   for root in roots}
    report = PROJECT / "tmp-report.json"
    try:
        doc = json.loads(report.read_text())
    finally:
        report.unlink()
    prefix = "fixtures/gitops-demo/"
    assert {(f["path"], f["line"]) for f in doc["findings"] if f["severity"] == "error"} == {
        (prefix + d[0], d[1]) for d in DEFECTS}


needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")


def kubectl_kustomize(directory: Path) -> str:
    done = subprocess.run(["kubectl", "kustomize", str(directory)], capture_output=True,
                          text=True, check=True, timeout=120)
    return done.stdout


@needs_kubectl
@pytest.mark.parametrize("fixture", [DEMO, CLEAN], ids=lambda p: p.name)
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_build_matches_kubectl_kustomize(fixture: Path, overlay: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    expected = kubectl_kustomize(fixture / overlay)
    assert main(["build", str(fixture / overlay)]) == 0
    assert capsys.readouterr().out == expected
