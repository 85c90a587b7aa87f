"""Which roots a run checks: overlays, include cycles, plain manifests,
paths with nothing to check, and the files a change touches."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from dulwich import porcelain
from dulwich.repo import Repo

from krmcheck import discover
from tests.checkrun import DEPLOYMENT, check, write


def roots_of(tmp_path: Path) -> list[str]:
    infos = discover.graph(discover.find_kustomizations([tmp_path]))
    return [d.relative_to(tmp_path.resolve()).as_posix() for d in discover.default_roots(infos)]


# --- kustomization roots -------------------------------------------------------------

def test_overlays_are_roots_and_their_bases_are_not(tmp_path: Path) -> None:
    write(tmp_path, "base/kustomization.yaml", "resources: []\n")
    write(tmp_path, "overlay/kustomization.yaml", "resources: [../base]\n")
    write(tmp_path, "component/kustomization.yaml", "kind: Component\n")
    assert roots_of(tmp_path) == ["overlay"]


def test_one_root_per_include_cycle(tmp_path: Path) -> None:
    write(tmp_path, "a/kustomization.yaml", "resources: [../b]\n")
    write(tmp_path, "b/kustomization.yaml", "resources: [../a]\n")
    write(tmp_path, "self/kustomization.yaml", "resources:\n- .\n")
    assert roots_of(tmp_path) == ["a", "self"]


def test_an_include_cycle_is_a_build_error_at_the_entry(tmp_path: Path) -> None:
    write(tmp_path, "a/kustomization.yaml", "resources: [../b]\n")
    write(tmp_path, "b/kustomization.yaml", "resources:\n- ../a\n")
    write(tmp_path, "self/kustomization.yaml", "resources:\n- .\n")
    run = check(tmp_path)
    assert run.code == 2
    places = sorted((d["path"], d["line"]) for d in run.report["defects"])
    assert places == [("b/kustomization.yaml", 2), ("self/kustomization.yaml", 2)]
    assert all("cycle detected" in d["message"] for d in run.report["defects"])


# --- plain manifests ----------------------------------------------------------------

def test_manifests_no_kustomization_reads_are_roots_of_their_own(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "plain/service.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: Web_1\n")
    write(tmp_path, "plain/values.yaml", "replicas: 2\n")  # not a Kubernetes object
    write(tmp_path, "chart/Chart.yaml", "name: c\n")
    write(tmp_path, "chart/templates/x.yaml", "apiVersion: v1\nkind: {{ .Values.kind }}\n")
    write(tmp_path, "fn/config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
                                      "  annotations:\n    config.kubernetes.io/local-config: 'true'\n")
    run = check(tmp_path)
    assert [r["root"] for r in run.report["roots"]] == ["app", "plain/service.yaml"]
    assert run.code == 1
    assert ("plain/service.yaml", 4, "metadata") in run.located("error")


def test_a_directory_of_plain_manifests_is_checked_file_by_file(tmp_path: Path) -> None:
    write(tmp_path, "k8s/a.yaml", DEPLOYMENT)
    write(tmp_path, "k8s/b.yml", DEPLOYMENT.replace("replicas: 1", "replicas: one"))
    run = check(tmp_path, "k8s")
    assert [r["root"] for r in run.report["roots"]] == ["k8s/a.yaml", "k8s/b.yml"]
    assert run.located("error") == [("k8s/b.yml", 6, "schema")]


# --- nothing to check ------------------------------------------------------------------

@pytest.mark.parametrize("layout", [{}, {"docs/x.yaml": "title: not an object\n"}])
def test_a_path_with_nothing_to_check_is_exit_2(tmp_path: Path, layout: dict[str, str]) -> None:
    (tmp_path / "docs").mkdir()
    for rel, text in layout.items():
        write(tmp_path, rel, text)
    run = check(tmp_path, "docs")
    assert run.code == 2
    assert "docs: nothing to check: no kustomization and no Kubernetes manifest" in run.err


def test_a_mistyped_path_is_exit_2(tmp_path: Path) -> None:
    write(tmp_path, "app/a.yaml", DEPLOYMENT)
    run = check(tmp_path, "ap")
    assert run.code == 2 and "ap: no such file or directory" in run.err


# --- changed files ---------------------------------------------------------------------

def commit(repo: Repo, message: str) -> bytes:
    porcelain.add(repo, paths=[str(p) for p in Path(repo.path).rglob("*")
                               if p.is_file() and ".git" not in p.parts])
    return porcelain.commit(repo, message=message.encode(), author=b"a <a@b>", committer=b"a <a@b>")


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """Three commits: the app, a change to its base, a change to the other app."""
    repo = porcelain.init(str(tmp_path))
    for app in ("one", "two"):
        write(tmp_path, f"{app}/base/kustomization.yaml", "resources: [deployment.yaml]\n")
        write(tmp_path, f"{app}/base/deployment.yaml", DEPLOYMENT)
        write(tmp_path, f"{app}/prod/kustomization.yaml", "resources: [../base]\n")
    commit(repo, "first")
    porcelain.tag_create(repo, b"v1")
    time.sleep(0.01)
    write(tmp_path, "one/base/deployment.yaml", DEPLOYMENT.replace("replicas: 1", "replicas: 2"))
    commit(repo, "second")
    write(tmp_path, "two/base/deployment.yaml", DEPLOYMENT.replace("replicas: 1", "replicas: 3"))
    commit(repo, "third")
    return tmp_path


def checked(top: Path, ref: str) -> list[str]:
    run = check(top, "--changed-since", ref)
    assert run.code == 0, run.err
    return [r["root"] for r in run.report["roots"]]


@pytest.mark.parametrize(("ref", "roots"), [
    ("HEAD", []), ("HEAD~1", ["two/prod"]), ("HEAD^", ["two/prod"]), ("HEAD~2", ["one/prod", "two/prod"]),
    ("HEAD^^", ["one/prod", "two/prod"]), ("v1", ["one/prod", "two/prod"]), ("master~1", ["two/prod"]),
])
def test_changed_since_understands_revisions(history: Path, ref: str, roots: list[str]) -> None:
    assert checked(history, ref) == roots


def test_changed_since_an_abbreviated_id(history: Path) -> None:
    repo = Repo(str(history))
    first = repo[repo.head()].parents[0].decode()  # type: ignore[attr-defined]
    assert checked(history, first[:10]) == ["two/prod"]


def test_untracked_and_unstaged_files_count(history: Path) -> None:
    write(history, "one/base/new.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    write(history, "one/base/kustomization.yaml", "resources: [deployment.yaml, new.yaml]\n")
    assert checked(history, "HEAD") == ["one/prod"]


def test_an_unknown_revision_is_a_usage_error(history: Path) -> None:
    run = check(history, "--changed-since", "no-such-branch")
    assert run.code == 2
    assert "--changed-since no-such-branch: no such commit, branch or tag" in run.err


def test_a_changed_plain_manifest_is_its_own_root(history: Path) -> None:
    write(history, "plain/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: P_1\n")
    run = check(history, "plain/pod.yaml")
    assert [r["root"] for r in run.report["roots"]] == ["plain/pod.yaml"]
    assert ("plain/pod.yaml", 4, "metadata") in run.located("error")
