"""The runner's boundaries: exit codes, and no traceback for any failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.cli import main
from krmcheck.kustomize.target import Builder


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text("resources:\n- cm.yaml\n")
    (tmp_path / "app" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    return tmp_path


def test_a_defect_in_the_engine_is_one_message_not_a_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(_repo(tmp_path))

    def broken(self: Builder, directory: Path) -> list:
        raise KeyError("boom")

    monkeypatch.setattr(Builder, "build", broken)
    assert main(["."]) == 2
    out = capsys.readouterr().out
    assert "internal error in krmcheck while building" in out and "KeyError" in out
    assert main(["build", "app"]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("fail_on,code", [("error", 0), ("info", 1), ("never", 0)])
def test_exit_code_follows_fail_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   fail_on: str, code: int) -> None:
    repo = _repo(tmp_path)
    # a deprecated field is an info finding
    (repo / "app" / "kustomization.yaml").write_text("resources:\n- cm.yaml\ncommonLabels:\n  a: b\n")
    monkeypatch.chdir(repo)
    assert main([".", "--fail-on", fail_on]) == code


def test_missing_path_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["nowhere"]) == 2
    assert "nowhere: no such file or directory" in capsys.readouterr().err
