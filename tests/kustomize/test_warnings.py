"""kubectl's deprecation warnings: which fields, in which order, how often,
on stderr in ``krmcheck build`` and as info findings in ``krmcheck check``.

Expected texts were printed by ``kubectl kustomize`` (Kustomize v5.5.0).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from krmcheck import cli, discover
from krmcheck.commands import build
from krmcheck.commands import check as check_command
from krmcheck.kustomize import deprecation
from krmcheck.kustomize import kustomization as kfile
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.files import Files
from tests import conformance

FIX = "Run 'kustomize edit fix' to update your Kustomization automatically."
COMMON_LABELS = f"# Warning: 'commonLabels' is deprecated. Please use 'labels' instead. {FIX}"
VARS = f"# Warning: 'vars' is deprecated. Please use 'replacements' instead. [EXPERIMENTAL] {FIX}"
IMAGE_TAGS = f"# Warning: 'imageTags' is deprecated. Please use 'images' instead. {FIX}"
BASES = f"# Warning: 'bases' is deprecated. Please use 'resources' instead. {FIX}"
JSON6902 = f"# Warning: 'patchesJson6902' is deprecated. Please use 'patches' instead. {FIX}"
SMP = f"# Warning: 'patchesStrategicMerge' is deprecated. Please use 'patches' instead. {FIX}"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def diamond(root: Path) -> None:
    """One base under two middles; every file uses deprecated fields."""
    write(root, "base/kustomization.yaml", "commonLabels: {a: b}\nvars: []\nresources: [cm.yaml]\n")
    write(root, "base/cm.yaml", CM)
    write(root, "mid1/kustomization.yaml", "resources: [../base]\nnamePrefix: m1-\nimageTags: []\n")
    write(root, "mid2/kustomization.yaml", "resources: [../base]\nnamePrefix: m2-\nbases: []\n")
    write(root, "top/kustomization.yaml", "resources: [../mid1, ../mid2]\npatchesStrategicMerge: []\n"
                                          "patchesJson6902: []\ncommonLabels: {}\n")


DIAMOND_STDERR = [COMMON_LABELS, JSON6902, SMP,  # top: kubectl's field order, not the file's
                  IMAGE_TAGS, COMMON_LABELS, VARS,  # mid1, then the base it loads
                  BASES, COMMON_LABELS, VARS]  # mid2, and the base again


def test_null_fields_do_not_warn_but_empty_ones_do(tmp_path: Path) -> None:
    write(tmp_path, "kustomization.yaml", "commonLabels:\nvars: ~\nimageTags: []\nresources: []\n")
    k = kfile.load(tmp_path, Files(tmp_path))
    assert [w.line for w in deprecation.warnings_of(k)] == [IMAGE_TAGS]
    assert deprecation.warnings_of(k)[0].origin[:3] == ("kustomization.yaml", 3, 1)


def test_each_load_of_a_kustomization_warns(tmp_path: Path) -> None:
    diamond(tmp_path)
    builder = Builder(Files(tmp_path), BuildOptions())
    builder.build(tmp_path / "top")
    assert [w.line for w in builder.warnings] == DIAMOND_STDERR
    builder.build(tmp_path / "top")  # the second time the bases come from the cache
    assert [w.line for w in builder.warnings] == DIAMOND_STDERR


def test_build_prints_them_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    diamond(tmp_path)
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    assert build.run(Path("top"), "LoadRestrictionsRootOnly", out, err) == 0
    assert err.getvalue().splitlines() == DIAMOND_STDERR
    assert "m1-x" in out.getvalue()


def test_warnings_come_before_a_build_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "app/kustomization.yaml", "commonLabels: {a: b}\nresources: [missing.yaml]\n")
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    assert build.run(Path("app"), "LoadRestrictionsRootOnly", io.StringIO(), err) == 2
    lines = err.getvalue().splitlines()
    assert lines[0] == COMMON_LABELS and lines[1].startswith("Error: ")


def test_check_reports_each_field_once_as_info(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    diamond(tmp_path)
    monkeypatch.chdir(tmp_path)
    report = tmp_path / "report.json"
    code = check_command.run(cli.parse_check(["top", "--github", "off", "--json", str(report)]),
                            io.StringIO(), io.StringIO(), {})
    assert code == 0
    found = [(f["path"], f["line"], f["col"], f["severity"], f["validator"])
             for f in json.loads(report.read_text())["findings"] if f["validator"] == "deprecation"]
    assert sorted(found) == [
        ("base/kustomization.yaml", 1, 1, "info", "deprecation"),
        ("base/kustomization.yaml", 2, 1, "info", "deprecation"),
        ("mid1/kustomization.yaml", 3, 1, "info", "deprecation"),
        ("mid2/kustomization.yaml", 3, 1, "info", "deprecation"),
        ("top/kustomization.yaml", 2, 1, "info", "deprecation"),
        ("top/kustomization.yaml", 3, 1, "info", "deprecation"),
        ("top/kustomization.yaml", 4, 1, "info", "deprecation"),
    ]


STDERR_CASES = ["krusty/diamonds__TestBasicDiamond", "krusty/namereference__TestIssue3489",
                "krusty/customconfig__TestFixedBug605_BaseCustomizationAvailableInOverlay",
                "krusty/multiplepatch__TestNonCommutablePatches"]


@pytest.mark.parametrize("name", STDERR_CASES)
def test_stderr_matches_kubectl(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    case = next((c for c in conformance.cases("krusty") if c.name == name), None)
    if case is None:
        pytest.skip("../shared/conformance is not present")
    monkeypatch.setattr(discover, "repo_root", lambda _: case.directory)
    monkeypatch.chdir(case.directory)
    err = io.StringIO()
    assert build.run(case.build_dir.relative_to(case.directory), case.restrictor,
                            io.StringIO(), err) == 0
    assert err.getvalue() == (case.directory / "expected_stderr.txt").read_text()
