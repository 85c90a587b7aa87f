"""The load restrictor of each kustomization root: ``--load-restrictor``
when given, else ``.krmcheck.yaml``'s per-path ``overrides:`` entries
(later ones win) and top-level ``load-restrictor:``, else
LoadRestrictionsRootOnly; a refused file says what the root needs. A root
given no restrictor that reads outside its directory is checked as it
builds with it lifted, and the run says so once (tests/pipeline/test_policy.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck import cli
from tests.checkrun import DEPLOYMENT, check, write

SHARED = "../shared/deployment.yaml"


def outside_files(root: Path) -> Path:
    """Two overlays that read a file beside them (as repositories built with
    --load-restrictor LoadRestrictionsNone do) and one that reads its own."""
    write(root, "shared/deployment.yaml", DEPLOYMENT)
    for name in ("legacy", "tools"):
        write(root, f"{name}/kustomization.yaml", f"namePrefix: {name}-\nresources:\n- {SHARED}\n")
    write(root, "clean/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(root, "clean/deployment.yaml", DEPLOYMENT)
    return root


def failed(run_report: dict) -> list[str]:
    return sorted(r["root"] for r in run_report["roots"] if r["buildFailed"])


def test_the_refusal_says_which_setting_the_root_needs(tmp_path: Path) -> None:
    run = check(outside_files(tmp_path), "--load-restrictor", "LoadRestrictionsRootOnly")
    assert run.code == 2 and failed(run.report) == ["legacy", "tools"]
    [message] = {d["message"] for d in run.report["defects"] if d["path"] == "legacy/kustomization.yaml"}
    assert message == ("accumulating resources of legacy/kustomization.yaml: security; file "
                       "'shared/deployment.yaml' is not in or below 'legacy'; this root builds only "
                       "with LoadRestrictionsNone: pass --load-restrictor LoadRestrictionsNone or set "
                       "`load-restrictor: LoadRestrictionsNone` for it in .krmcheck.yaml")


def test_krmcheck_build_names_its_flag_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(outside_files(tmp_path))
    write(tmp_path, ".krmcheck.yaml", "load-restrictor: LoadRestrictionsNone\n")  # a check's, not build's
    assert cli.main(["build", "legacy"]) == 2
    err = capsys.readouterr().err
    assert err.rstrip().endswith("this root builds only with LoadRestrictionsNone: "
                                 "pass --load-restrictor LoadRestrictionsNone")
    assert cli.main(["build", "legacy", "--load-restrictor", "LoadRestrictionsNone"]) == 0


@pytest.mark.parametrize("config,args,broken,lifted", [
    ("load-restrictor: LoadRestrictionsNone\n", (), [], []),
    ("load-restrictor: LoadRestrictionsRootOnly\n", (), ["legacy", "tools"], []),
    # a root given none is checked with the restrictor lifted (one warning names them)
    ("overrides:\n- paths: [legacy/]\n  load-restrictor: LoadRestrictionsRootOnly\n", (), ["legacy"], ["tools"]),
    ("overrides:\n- paths: [legacy/]\n  load-restrictor: LoadRestrictionsNone\n", (), [], ["tools"]),
    # later entries win
    ("overrides:\n- paths: ['*']\n  load-restrictor: LoadRestrictionsNone\n"
     "- paths: [tools]\n  load-restrictor: LoadRestrictionsRootOnly\n", (), ["tools"], []),
    # an entry wins over the top level
    ("load-restrictor: LoadRestrictionsNone\noverrides:\n- paths: [legacy]\n"
     "  load-restrictor: LoadRestrictionsRootOnly\n", (), ["legacy"], []),
    # the flag, when given, wins over the file
    ("load-restrictor: LoadRestrictionsNone\n", ("--load-restrictor", "LoadRestrictionsRootOnly"),
     ["legacy", "tools"], []),
    ("overrides:\n- paths: [legacy]\n  load-restrictor: LoadRestrictionsRootOnly\n",
     ("--load-restrictor", "LoadRestrictionsNone"), [], []),
])
def test_the_configuration_sets_it_per_root(tmp_path: Path, config: str, args: tuple[str, ...],
                                            broken: list[str], lifted: list[str]) -> None:
    write(outside_files(tmp_path), ".krmcheck.yaml", config)
    run = check(tmp_path, *args)
    assert failed(run.report) == broken
    assert run.code == (2 if broken else 0), run.out
    assert lifted_roots(run.report) == lifted


def lifted_roots(run_report: dict) -> list[str]:
    """The roots the run's one load-restrictor warning names."""
    found = [d["message"] for d in run_report["defects"] if d["validator"] == "load-restrictor"]
    assert len(found) <= 1
    return found[0].split("LoadRestrictionsNone): ", 1)[1].split("; ", 1)[0].split(", ") if found else []


def test_patterns_are_relative_to_the_configuration_file(tmp_path: Path) -> None:
    outside_files(tmp_path / "deploy")
    write(tmp_path, "deploy/.krmcheck.yaml",
          "overrides:\n- paths: [/legacy]\n  load-restrictor: LoadRestrictionsRootOnly\n")
    run = check(tmp_path, "deploy")
    assert failed(run.report) == ["deploy/legacy"]


def test_blame_builds_the_root_as_a_check_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(outside_files(tmp_path))
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".krmcheck.yaml", "overrides:\n- paths: [legacy]\n  load-restrictor: LoadRestrictionsNone\n")
    assert cli.main(["blame", "legacy", "Deployment/web", "spec.replicas"]) == 0
    assert "shared/deployment.yaml:6:3" in capsys.readouterr().out
