"""Validate: CRDs that only a plugin (or a chart, or a remote base) renders
are known before any root is validated, so another root's objects of that
kind are checked against them in the same run."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.checkrun import check, write

# A legacy exec generator that prints a CRD: no file of the repository holds it.
MAKER = """\
#!/bin/sh
cat <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
YAML
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    top = tmp_path / "repo"
    plugin = write(top, "plugins/example.com/v1/crdmaker/CrdMaker", MAKER)
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("KUSTOMIZE_PLUGIN_HOME", str(top / "plugins"))
    write(top, "platform/kustomization.yaml", "generators: [maker.yaml]\n")
    write(top, "platform/maker.yaml", "apiVersion: example.com/v1\nkind: CrdMaker\nmetadata: {name: m}\n")
    write(top, "apps/kustomization.yaml", "resources: [widget.yaml]\n")
    write(top, "apps/widget.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
                                   "spec:\n  size: large\n")
    return top


def test_a_crd_a_plugin_renders_checks_another_roots_objects(repo: Path) -> None:
    run = check(repo, "--enable-alpha-plugins")
    assert ("apps/widget.yaml", 5, "schema") in run.located("error"), run.out
    by_root = {r["root"]: r["schemas"]["bySource"] for r in run.report["roots"]}
    assert by_root["apps"] == {"repository": 1}


def test_without_a_flag_that_runs_something_no_root_is_rendered_twice(repo: Path) -> None:
    # the plugin cannot run: the platform root fails to build, the Widget has no schema
    run = check(repo)
    assert ("apps/widget.yaml", 5, "schema") not in run.located()
    assert any(d["validator"] == "schema-missing" for d in run.report["defects"])


# --- external validators: programs the repository names ----------------------------------

# A validator that leaves a mark when it runs, and reports one warning.
MARKING = """\
#!{python}
import pathlib, sys, yaml
pathlib.Path({mark!r}).write_text("ran")
rl = yaml.safe_load(sys.stdin)
rl["results"] = [{{"message": "looked", "severity": "warning"}}]
yaml.safe_dump(rl, sys.stdout)
"""
KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  validators:\n    - exec: ../check.py\n"


def _validated(tmp_path: Path, config: str, kptfile: bool = False) -> Path:
    import sys

    write(tmp_path, "app/kustomization.yaml", "resources: [cm.yaml]\n")
    write(tmp_path, "app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
    script = write(tmp_path, "check.py", MARKING.format(python=sys.executable, mark=str(tmp_path / "ran")))
    script.chmod(0o755)
    write(tmp_path, ".krmcheck.yaml", config)
    if kptfile:
        write(tmp_path, "app/Kptfile", KPTFILE)
    return tmp_path


@pytest.mark.parametrize("config, kptfile, at", [
    ("external-validators:\n- exec: check.py\n", False, (".krmcheck.yaml", 2, 3)),
    ("kptfile-validators: true\n", True, ("app/Kptfile", 7, 7)),
])
def test_an_executable_validator_runs_only_with_enable_exec(tmp_path: Path, config: str, kptfile: bool,
                                                            at: tuple[str, int, int]) -> None:
    repo = _validated(tmp_path, config, kptfile)
    run = check(repo)
    assert not (repo / "ran").exists()  # nothing the repository names ran
    assert run.code == 0
    named_in = "a Kptfile" if kptfile else ".krmcheck.yaml"
    assert [(d["path"], d["line"], d["col"], d["severity"], d["message"]) for d in run.report["defects"]] == [
        (*at, "warning", f"validator check.py was not run: a program {named_in} names runs only with "
                         f"--enable-exec (give it where {named_in} is trusted: a pull request can change "
                         f"what it runs)")]
    run = check(repo, "--enable-exec")
    assert (repo / "ran").exists()
    assert [d["message"] for d in run.report["defects"]] == ["looked"]


def test_a_container_validator_runs_only_with_the_flags_of_a_container_function(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    repo = _validated(tmp_path, "external-validators:\n- image: example.com/policy:v1\n  network: true\n")
    write(repo, "bin/docker", f"#!/bin/sh\ntouch {repo / 'ran'}\nexit 3\n").chmod(0o755)
    monkeypatch.setenv("PATH", f"{repo / 'bin'}{os.pathsep}{os.environ['PATH']}")
    run = check(repo, "--enable-exec")
    assert not (repo / "ran").exists()
    assert [d["message"] for d in run.report["defects"]] == [
        "validator policy:v1 was not run: a program .krmcheck.yaml names runs only with --enable-alpha-plugins "
        "and --network (give them where .krmcheck.yaml is trusted: a pull request can change what it runs)"]


def test_a_validator_turned_off_is_not_said_to_be_skipped(tmp_path: Path) -> None:
    repo = _validated(tmp_path, "external-validators:\n- exec: check.py\n  name: mine\nvalidators:\n  mine: false\n")
    run = check(repo)
    assert run.code == 0 and run.report["defects"] == [] and not (repo / "ran").exists()
