"""The plugin examples in fixtures/plugins run as the README says."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from krmcheck.cli import main
from krmcheck.fn.loader import PluginLoader
from krmcheck.kustomize.plugins import FunctionOptions
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.files import Files

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "plugins"
PLUGIN_HOME = FIXTURES / "plugin-home" / "kustomize" / "plugin"


def test_exec_plugin_builds_like_kubectl(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("KUSTOMIZE_PLUGIN_HOME", str(PLUGIN_HOME))
    assert main(["build", str(FIXTURES / "exec-plugin"), "--enable-alpha-plugins"]) == 0
    ours = capsys.readouterr().out
    assert "team: payments" in ours
    kubectl = shutil.which("kubectl")
    if kubectl:
        theirs = subprocess.run([kubectl, "kustomize", str(FIXTURES / "exec-plugin"),
                                 "--enable-alpha-plugins"], capture_output=True, text=True, check=True).stdout
        assert ours == theirs


def test_exec_plugin_needs_the_flag(monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("KUSTOMIZE_PLUGIN_HOME", str(PLUGIN_HOME))
    assert main(["build", str(FIXTURES / "exec-plugin")]) == 2
    err = capsys.readouterr().err
    assert "external plugins disabled" in err and "TeamLabeler" in err
    assert "kustomization.yaml:6:3" in err  # the transformers: entry


def test_label_written_by_the_plugin_points_at_its_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUSTOMIZE_PLUGIN_HOME", str(PLUGIN_HOME))
    options = BuildOptions(enable_alpha_plugins=True, functions=FunctionOptions(), plugins=PluginLoader())
    [svc] = Builder(Files(FIXTURES), options).build(FIXTURES / "exec-plugin")
    label = svc.field("metadata", "labels", "team")
    assert label is not None and label.origin.path == "exec-plugin/team-labeler.yaml"
    port = svc.field("spec", "ports")
    assert port is not None and port.origin.path == "exec-plugin/service.yaml"  # untouched: kept


def test_krm_function_result_is_a_finding(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(FIXTURES)
    code = main(["krm-function", "--enable-alpha-plugins", "--enable-exec", "--fail-on", "warning"])
    out = capsys.readouterr().out
    assert "krm-function/deployment.yaml:16:9: warning: container checkout has no resource limits" in out
    assert code == 1
