"""``--jobs N``: roots checked in worker processes, reports unchanged."""

from __future__ import annotations

import os
import shutil
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable

import pytest

from krmcheck.pipeline import workers as pool
from krmcheck.cli import main, parse_check

PROJECT = Path(__file__).resolve().parents[2]
DEMO = PROJECT / "fixtures" / "gitops-demo"
REPORTS = ("report.xml", "report.sarif", "report.json")


@pytest.fixture(autouse=True)
def outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    top = tmp_path / "gitops-demo"
    shutil.copytree(DEMO, top)
    monkeypatch.chdir(top)
    return top


class Run:
    def __init__(self, code: int, out: str, files: dict[str, bytes]) -> None:
        self.code, self.out, self.files = code, out, files


def check(jobs: int, out_dir: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> Run:
    out_dir.mkdir(exist_ok=True)
    xml, sarif, js = (str(out_dir / name) for name in REPORTS)
    code = main([".", "-j", str(jobs), "--junit", xml, "--sarif", sarif, "--json", js, *extra])
    files = {name: (out_dir / name).read_bytes() for name in REPORTS}
    return Run(code, capsys.readouterr().out, files)


@pytest.mark.parametrize("jobs", [2, 3, 8])
def test_parallel_reports_are_byte_identical(demo: Path, tmp_path: Path, jobs: int,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    serial = check(1, tmp_path / "serial", capsys)
    parallel = check(jobs, tmp_path / "parallel", capsys)
    assert serial.code == parallel.code == 1
    assert parallel.out == serial.out
    assert parallel.files == serial.files


def test_parallel_reports_with_a_broken_root(demo: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (demo / "apps/broken").mkdir()
    (demo / "apps/broken/kustomization.yaml").write_text("resources:\n- missing.yaml\n")
    serial = check(1, tmp_path / "serial", capsys, "--roots", "all")
    parallel = check(4, tmp_path / "parallel", capsys, "--roots", "all")
    assert serial.code == parallel.code == 2
    assert "apps/broken" in serial.out
    assert (parallel.out, parallel.files) == (serial.out, serial.files)


class Recording(ProcessPoolExecutor):
    """The real pool, noting which roots each task was given."""

    batches: list[list[str]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        Recording.batches.append(sorted(f"{p.parent.name}/{p.name}" for p in args[1]))
        return super().submit(fn, *args, **kwargs)


def test_roots_sharing_bases_go_to_the_same_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    for app in ("a", "b"):
        (tmp_path / app / "base").mkdir(parents=True)
        (tmp_path / app / "base" / "kustomization.yaml").write_text("resources: []\n")
        for env in ("dev", "prod"):
            (tmp_path / app / env).mkdir()
            (tmp_path / app / env / "kustomization.yaml").write_text(
                f"resources:\n- ../base\nnamePrefix: {app}-{env}-\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(pool, "ProcessPoolExecutor", Recording)
    Recording.batches = []
    assert main(["-j", "2", "."]) == 0
    # one batch goes to the worker, the other is checked by this process
    assert Recording.batches in ([["a/dev", "a/prod"]], [["b/dev", "b/prod"]])
    assert "in 4 roots" in capsys.readouterr().out


def test_one_job_or_one_batch_runs_in_process(demo: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("no pool expected")

    monkeypatch.setattr(pool, "ProcessPoolExecutor", refuse)
    assert main(["-j", "1", "."]) == 1
    assert main(["-j", "4", "apps/web/overlays/staging"]) == 1
    capsys.readouterr()


def test_jobs_option() -> None:
    assert parse_check([]).jobs == pool.AUTO_JOBS
    assert parse_check(["--jobs", "3"]).jobs == 3
    assert parse_check(["-j", "0"]).jobs == (os.cpu_count() or 1)


@pytest.mark.parametrize("value", ["-1", "two"])
def test_bad_jobs_is_a_usage_error(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--jobs", value, "."])
    assert exit_info.value.code == 2
    assert "--jobs" in capsys.readouterr().err


def test_by_default_one_worker_per_cpu_when_the_roots_form_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    top = tmp_path / "repo"
    for app in ("one", "two"):
        (top / app / "base").mkdir(parents=True)
        (top / app / "base/kustomization.yaml").write_text("resources:\n- cm.yaml\n")
        (top / app / "base/cm.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {app}\n")
        for env in ("prod", "dev"):
            (top / app / env).mkdir()
            (top / app / env / "kustomization.yaml").write_text(f"resources:\n- ../base\nnamePrefix: {env}-\n")
    (top / ".git").mkdir()
    monkeypatch.chdir(top)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    overlays = sorted(top.glob("*/*[!e]"))  # one/dev, one/prod, two/dev, two/prod
    assert pool.auto_jobs(overlays) == 2  # two groups: one/ and two/ share nothing
    assert pool.auto_jobs([p for p in overlays if p.parent.name == "one"]) == 1  # one group
    workers: list[int] = []
    real = pool.ProcessPoolExecutor

    def counted(max_workers: int) -> Any:
        workers.append(max_workers)
        return real(max_workers=max_workers)

    monkeypatch.setattr(pool, "ProcessPoolExecutor", counted)
    out_dir = tmp_path / "default"
    out_dir.mkdir()
    xml, sarif, js = (str(out_dir / name) for name in REPORTS)
    code = main([".", "--no-cache", "--junit", xml, "--sarif", sarif, "--json", js])
    default = Run(code, capsys.readouterr().out, {n: (out_dir / n).read_bytes() for n in REPORTS})
    assert workers == [1]  # two processes at work: this one checks a batch itself, beside one worker
    serial = check(1, tmp_path / "serial", capsys, "--no-cache")
    assert (default.code, default.out, default.files) == (serial.code, serial.out, serial.files)
    assert "in 4 roots" in default.out


def test_reports_the_render_cache_holds_are_not_sent_to_workers(demo: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    first = check(2, tmp_path / "first", capsys)

    def refuse(max_workers: int) -> Any:
        raise AssertionError("every root was in the render cache: no worker was needed")

    monkeypatch.setattr(pool, "ProcessPoolExecutor", refuse)
    again = check(2, tmp_path / "again", capsys)
    assert (again.code, again.out, again.files) == (first.code, first.out, first.files)
