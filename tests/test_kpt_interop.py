"""kpt and krmcheck agree: a built-in validator served as an exec function
under ``kpt fn eval --exec``, and an exec validator function run by kpt and
by krmcheck (from ``.krmcheck.yaml`` and from a Kptfile), report the same
Results; krmcheck then locates them at the source line to edit.

Needs the real kpt (1.0); skipped where it is not installed.
"""

from __future__ import annotations

import json
import tempfile
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from krmcheck.cli import main

PROJECT = Path(__file__).resolve().parent.parent
FIXTURE = PROJECT / "fixtures" / "validator-functions"
CHECK_TEAM = FIXTURE / "functions" / "check-team.py"
KPT = shutil.which("kpt")

pytestmark = pytest.mark.skipif(KPT is None, reason="kpt is not installed")

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: "3"
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:latest
        env:
        - name: WORKERS
          value: 4
"""

# two documents in one file: file.index must name the second
SERVICES = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
---
apiVersion: v1
kind: Service
metadata:
  name: Admin_Port
spec:
  selector: {app: web}
  ports:
  - port: eighty
"""

Key = tuple[str, str, str, str, str, int]


def wrapper(tmp_path: Path, *argv: str) -> Path:
    """kpt's --exec takes one path: a script that runs this checkout's krmcheck."""
    script = tmp_path / f"krmcheck-{'-'.join(argv)}.sh"
    script.write_text(f"#!/bin/sh\nPYTHONPATH='{PROJECT}' exec '{sys.executable}' -m krmcheck {' '.join(argv)}\n")
    script.chmod(0o755)
    return script


def kpt_eval(pkg: Path, executable: Path, out: Path, *config: str) -> tuple[int, list[dict[str, Any]]]:
    """Run ``kpt fn eval`` and read the Results from its results directory."""
    argv = [str(KPT), "fn", "eval", str(pkg), "--exec", str(executable), "--results-dir", str(out)]
    if config:
        argv += ["--", *config]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    listing = yaml.safe_load((out / "results.yaml").read_text())
    assert listing["kind"] == "FunctionResultList", proc.stderr
    [item] = listing["items"]
    return proc.returncode, item.get("results") or []


def kpt_key(result: dict[str, Any]) -> Key:
    ref = result.get("resourceRef") or {}
    file = result.get("file") or {}
    # kpt leaves out a zero index (omitempty)
    return (result["message"], result["severity"], f"{ref.get('kind')}/{ref.get('name')}",
            (result.get("field") or {}).get("path", ""), file.get("path", ""), file.get("index", 0))


def check(repo: Path, target: str, monkeypatch: pytest.MonkeyPatch, *flags: str) -> tuple[int, list[dict[str, Any]]]:
    """krmcheck's own findings, through its JSON report."""
    monkeypatch.chdir(repo)
    with tempfile.TemporaryDirectory() as scratch:  # never beside the fixtures
        report = Path(scratch) / f"{repo.name}-report.json"
        code = main([target, "--github", "off", "--json", str(report), *flags])
        return code, json.loads(report.read_text())["findings"]


def document_index(path: Path, line: int) -> int:
    """Which document of a multi-document file holds ``line``."""
    lines = path.read_text().splitlines()[:line]
    return sum(1 for text in lines if text == "---")


def test_builtin_validator_under_kpt_matches_krmcheck(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    pkg = repo / "app"
    pkg.mkdir()
    (pkg / "deployment.yaml").write_text(DEPLOYMENT)
    (pkg / "services.yaml").write_text(SERVICES)

    code, kpt_results = kpt_eval(pkg, wrapper(tmp_path, "fn", "schema", "metadata"), tmp_path / "out")
    assert code == 1
    assert (pkg / "deployment.yaml").read_text() == DEPLOYMENT  # a failing validator changes nothing

    (pkg / "kustomization.yaml").write_text("resources:\n- deployment.yaml\n- services.yaml\n")
    rc, findings = check(repo, "app", monkeypatch, "--fail-on", "error")
    assert rc == 1
    ours = sorted(
        (f["message"], f["severity"], f"{f['resourceRef']['kind']}/{f['resourceRef']['name']}",
         f["field"] or "", f["path"].removeprefix("app/"), document_index(repo / f["path"], f["line"]))
        for f in findings if f["validator"] in ("schema", "metadata"))
    assert sorted(kpt_key(r) for r in kpt_results) == ours
    assert {(k[2], k[3], k[4], k[5]) for k in ours} >= {
        ("Deployment/web", "spec.replicas", "deployment.yaml", 0),
        ("Deployment/web", "spec.template.spec.containers[0].env[0].value", "deployment.yaml", 0),
        ("Service/Admin_Port", "metadata.name", "services.yaml", 1),
        ("Service/Admin_Port", "spec.ports[0].port", "services.yaml", 1),
    }


def test_passing_builtin_validator_leaves_the_package_as_it_was(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    text = DEPLOYMENT.replace('"3"', "3").replace("value: 4", "value: '4'").replace("# x", "")
    text = text.replace("  name: web\n", "  name: web # the storefront\n", 1)
    (pkg / "deployment.yaml").write_text(text)
    code, results = kpt_eval(pkg, wrapper(tmp_path, "fn", "schema"), tmp_path / "out")
    assert (code, results) == (0, [])
    assert (pkg / "deployment.yaml").read_text() == text


def test_function_config_from_kpt_arguments(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    text = DEPLOYMENT.replace('"3"', "3").replace("value: 4", "value: '4'")
    (pkg / "deployment.yaml").write_text(text.replace("  replicas: 3\n", "  replicas: 3\n  colour: blue\n"))
    code, results = kpt_eval(pkg, wrapper(tmp_path, "fn", "schema"), tmp_path / "out", "strict=true")
    assert code == 1
    assert [(r["field"]["path"], r["severity"]) for r in results] == [("spec.colour", "error")]


# --- an exec validator function, under kpt and under krmcheck ----------------------------

FROM_CONFIG = FIXTURE / "from-config"
FROM_KPTFILE = FIXTURE / "from-kptfile"


def rendered_package(tmp_path: Path, root: Path) -> Path:
    """A kpt package holding one root's rendered output (what krmcheck validates)."""
    import io

    from krmcheck.commands import build

    out, err = io.StringIO(), io.StringIO()
    assert build.run(root, "LoadRestrictionsRootOnly", out, err) == 0, err.getvalue()
    pkg = tmp_path / "rendered"
    pkg.mkdir()
    (pkg / "rendered.yaml").write_text(out.getvalue())
    return pkg


def result_key(ref: dict[str, str], message: str, severity: str, field: str) -> tuple[str, ...]:
    return (message, severity, ref["apiVersion"], ref["kind"], ref.get("namespace", ""), ref["name"], field)


def kpt_keys(results: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    return sorted(result_key(r["resourceRef"], r["message"], r["severity"], r["field"]["path"]) for r in results)


def finding_keys(findings: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    return sorted(result_key(f["resourceRef"], f["message"], f["severity"], f["field"])
                  for f in findings if f["validator"] == "check-team")


def located(findings: list[dict[str, Any]], repo: Path) -> set[tuple[str, str, int, int]]:
    prefix = repo.relative_to(PROJECT).as_posix() + "/"
    return {(f["message"], f["path"].removeprefix(prefix), f["line"], f["col"])
            for f in findings if f["validator"] == "check-team"}


def test_exec_validator_from_krmcheck_config_matches_kpt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = FROM_CONFIG / "apps/shop/overlays/production"
    code, kpt_results = kpt_eval(rendered_package(tmp_path, root), CHECK_TEAM, tmp_path / "out",
                                 "allowed-teams=payments,search")  # the data of check-team-config.yaml
    assert code == 1
    rc, findings = check(FROM_CONFIG, ".", monkeypatch, "--enable-exec")
    assert rc == 1
    assert finding_keys(findings) == kpt_keys(kpt_results)
    assert len(kpt_results) == 2
    assert located(findings, FROM_CONFIG) == {
        # the Service's labels, written in the base
        ("missing label 'team'", "apps/shop/base/service.yaml", 5, 3),
        # the team label the production overlay's patch sets
        ("team 'marketing' is not one of: payments, search", "apps/shop/overlays/production/team.yaml", 6, 5),
    }


def test_exec_validator_from_a_kptfile_matches_kpt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = FROM_KPTFILE / "apps/shop/overlays/staging"
    code, kpt_results = kpt_eval(rendered_package(tmp_path, root), CHECK_TEAM, tmp_path / "out",
                                 "allowed-teams=payments")  # the Kptfile's configMap
    assert code == 1
    rc, findings = check(FROM_KPTFILE, ".", monkeypatch, "--enable-exec")
    assert rc == 1
    assert finding_keys(findings) == kpt_keys(kpt_results)
    assert located(findings, FROM_KPTFILE) == {("missing label 'team'", "apps/shop/base/service.yaml", 5, 3)}


def test_kptfile_validators_need_the_config_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FROM_KPTFILE, repo)
    (repo / ".git").mkdir()
    (repo / ".krmcheck.yaml").write_text("kptfile-validators: false\n")
    staging = repo / "apps/shop/overlays/staging/Kptfile"
    staging.write_text(staging.read_text().replace("../../../../../functions", str(CHECK_TEAM.parent)))
    rc, findings = check(repo, ".", monkeypatch, "--enable-exec")
    assert rc == 0 and not [f for f in findings if f["validator"] == "check-team"]


def test_the_fixture_function_runs_as_kpt_documents_it(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "deployment.yaml").write_text(DEPLOYMENT.replace("  name: web\n", "  name: web\n  labels:\n    team: search\n"))
    code, results = kpt_eval(pkg, CHECK_TEAM, tmp_path / "out", "allowed-teams=search")
    assert (code, results) == (0, [])
