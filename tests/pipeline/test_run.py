"""Findings do not depend on where the command is started: ``krmcheck repo``
from the directory above a repository gives the report ``cd repo &&
krmcheck .`` gives, on every fixture; paths in two repositories each get
their own top."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.checkrun import DEPLOYMENT, Run, check, write

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NAMES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def copy_of(fixture: str, tmp_path: Path) -> Path:
    """The fixture as a repository of its own (``check`` makes it a git work tree)."""
    repo = tmp_path / "outside" / fixture
    shutil.copytree(FIXTURES / fixture, repo, ignore=shutil.ignore_patterns(".git"))
    return repo


def comparable(run: Run) -> dict:
    """The JSON report: every path in it is relative to the repository's top."""
    return run.report


@pytest.mark.parametrize("fixture", NAMES)
def test_from_above_the_repository_as_from_inside_it(fixture: str, tmp_path: Path) -> None:
    repo = copy_of(fixture, tmp_path)
    inside = check(repo, ".")
    above = check(repo, fixture, cwd=repo.parent)
    assert inside.report, inside.err
    assert (above.code, comparable(above)) == (inside.code, comparable(inside))
    # the text names files from where the command was started
    places = [line.split(": ")[0] for line in inside.out.splitlines()
              if line[:1] not in (" ", "") and ": " in line and ":" in line.split(": ")[0]]
    assert [f"{fixture}/{p}" for p in places] == [line.split(": ")[0] for line in above.out.splitlines()
                                                  if line.startswith(f"{fixture}/") and ": " in line]


@pytest.mark.parametrize("fixture", ["flux-demo", "argocd-demo"])
def test_controller_roots_from_a_subdirectory(fixture: str, tmp_path: Path) -> None:
    # a subdirectory of the repository: the top is still the repository's
    repo = copy_of(fixture, tmp_path)
    whole = check(repo, ".")
    sub = next(p for p in sorted(repo.iterdir()) if p.is_dir() and p.name != ".git")
    below = check(repo, "..", cwd=sub)
    assert below.report == whole.report


def test_paths_in_two_repositories_each_get_their_own_top(tmp_path: Path) -> None:
    for name in ("a", "b"):
        write(tmp_path / name, "apps/prod/kustomization.yaml", "resources: [deployment.yaml]\n")
        write(tmp_path / name, "apps/prod/deployment.yaml", DEPLOYMENT.replace("replicas: 1", "replicas: one"))
        (tmp_path / name / ".git").mkdir()
    run = check(tmp_path / "a", "a", "b", cwd=tmp_path)
    assert sorted(r["root"] for r in run.report["roots"]) == ["a/apps/prod", "b/apps/prod"]
    assert sorted(d["path"] for d in run.report["defects"]) == ["a/apps/prod/deployment.yaml",
                                                                "b/apps/prod/deployment.yaml"]
    assert "a/apps/prod/deployment.yaml:6:3: error:" in run.out
    assert run.code == 1


def test_a_configuration_error_names_the_file_from_where_the_command_started(tmp_path: Path) -> None:
    write(tmp_path / "repo", "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path / "repo", ".krmcheck.yaml", "placeholders: maybe\n")
    above = check(tmp_path / "repo", "repo", cwd=tmp_path)
    inside = check(tmp_path / "repo", ".")
    assert above.code == inside.code == 2
    assert "repo/.krmcheck.yaml:1:1: placeholders:" in above.err
    assert "krmcheck: error: .krmcheck.yaml:1:1: placeholders:" in inside.err
