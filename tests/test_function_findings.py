"""Results that KRM functions report during the build become findings at the
source line of the field they name, and catalogs trusted in .krmcheck.yaml
let a build use them."""

from __future__ import annotations

import shutil
import stat
import sys
from pathlib import Path

import pytest

from krmcheck.cli import main

PROJECT = Path(__file__).resolve().parent.parent

# An exec KRM function (transformer): returns the items unchanged and one
# warning about the Deployment's replicas field.
FUNCTION = f"""#!{sys.executable}
import sys, yaml
rl = yaml.safe_load(sys.stdin)
rl["results"] = [{{
    "message": "replicas should be at least 2",
    "severity": "warning",
    "resourceRef": {{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
    "field": {{"path": "spec.replicas"}},
}}]
yaml.safe_dump(rl, sys.stdout)
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
"""

CONFIG = """\
apiVersion: example.com/v1
kind: ReplicaCheck
metadata:
  name: replicas
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ./check.py
"""


def test_function_result_is_a_finding_at_the_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "deployment.yaml").write_text(DEPLOYMENT)
    (app / "check.yaml").write_text(CONFIG)
    (app / "check.py").write_text(FUNCTION)
    (app / "check.py").chmod(0o755)
    (app / "kustomization.yaml").write_text("resources:\n- deployment.yaml\ntransformers:\n- check.yaml\n")
    monkeypatch.chdir(tmp_path)
    code = main([".", "--enable-alpha-plugins", "--enable-exec", "--fail-on", "warning"])
    out = capsys.readouterr().out
    assert "app/deployment.yaml:6:3: warning: replicas should be at least 2" in out
    assert code == 1


def test_catalog_trusted_in_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(PROJECT / "fixtures" / "catalogs", repo / "catalogs")
    for f in (repo / "catalogs" / "functions").rglob("*"):
        if f.is_file() and not f.suffix:
            f.chmod(f.stat().st_mode | stat.S_IEXEC)
    (repo / ".git").mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(repo)
    flags = [".", "--enable-alpha-plugins", "--enable-exec", "--roots", "catalogs/app"]
    assert main(flags) == 2  # not trusted: stopped before anything runs
    assert "catalog" in capsys.readouterr().out
    (repo / ".krmcheck.yaml").write_text("trusted-catalogs:\n- catalogs/catalog.yaml\n")
    assert main(flags) == 0, capsys.readouterr().out
