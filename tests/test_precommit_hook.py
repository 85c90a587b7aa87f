"""The pre-commit hook (.pre-commit-hooks.yaml), run through real pre-commit.

`pre-commit run` with a configuration naming the hook repository installs
it into its own virtualenv, as a user's `pre-commit install` would (what
`pre-commit try-repo` does, but with a store that outlives one call). The
hook repository is a committed snapshot of this working tree (package,
pyproject, hooks file) so the test checks what is on disk now, whatever git
state the project is in. Building the virtualenv takes a while; it is built
once and shared by the module, whose tests run in one worker process.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.test_fixtures import CLEAN, DEFECTS, DEMO

PROJECT = Path(__file__).resolve().parent.parent
HOOKS_FILE = PROJECT / ".pre-commit-hooks.yaml"
# What pip needs to install the package; tests, fixtures and .git stay out.
PACKAGE_PARTS = ("pyproject.toml", "README.md", "LICENSE", "krmcheck", ".pre-commit-hooks.yaml")

pytestmark = [pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("git") is None,
                                 reason="pre-commit and git are needed"),
              pytest.mark.xdist_group("pre-commit")]  # one virtualenv for the module


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=krmcheck tests", "-c", "user.email=tests@example.invalid",
                    "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
                   cwd=cwd, check=True, capture_output=True, timeout=120)


def committed_copy(parts: dict[str, Path], target: Path) -> Path:
    """`target` as a new git repository holding `parts` (name -> source), committed."""
    target.mkdir(parents=True)
    for name, source in parts.items():
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif source.exists():
            shutil.copy2(source, target / name)
    git(target, "init", "-q")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "snapshot")
    return target


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parts = {name: PROJECT / name for name in PACKAGE_PARTS}
    repo = committed_copy(parts, tmp_path_factory.mktemp("hook") / "krmcheck")
    if not (repo / "README.md").exists():
        # pyproject.toml names the readme; a snapshot without one cannot build.
        (repo / "README.md").write_text("krmcheck\n")
        git(repo, "add", "README.md")
        git(repo, "commit", "-q", "-m", "readme")
    return repo


@pytest.fixture(scope="module")
def precommit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def fixture_repo(source: Path, tmp_path: Path) -> Path:
    parts = {p.name: p for p in source.iterdir()}
    return committed_copy(parts, tmp_path / source.name)


def try_repo(repo: Path, hook_repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``pre-commit run ARGS`` in ``repo`` with the krmcheck hook of
    ``hook_repo`` at its HEAD, configured outside ``repo`` as try-repo does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PRE_COMMIT"))}
    env["PRE_COMMIT_HOME"] = str(home)
    env["PRE_COMMIT_COLOR"] = "never"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_repo, capture_output=True, text=True,
                          check=True).stdout.strip()
    config = home.parent / f"{home.name}-config.yaml"
    config.write_text(yaml.safe_dump({"repos": [{"repo": str(hook_repo), "rev": head,
                                                 "hooks": [{"id": "krmcheck"}]}]}))
    # A slow first run builds the hook's virtualenv.
    return subprocess.run(["pre-commit", "run", "--config", str(config), *args],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=900)


def test_hooks_file_is_a_valid_manifest() -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    hooks = clientlib.load_manifest(str(HOOKS_FILE))
    assert [h["id"] for h in hooks] == ["krmcheck"]
    hook = hooks[0]
    assert (hook["entry"], hook["language"], hook["pass_filenames"], hook["require_serial"]) == (
        "krmcheck", "python", True, True)


@pytest.mark.parametrize("name, selected", [
    ("apps/web/base/kustomization.yaml", True),
    ("apps/web/overlays/staging/patches/api-url.yml", True),
    ("clusters/prod/Kustomization", True),
    ("apps/api/overlays/staging/db.env", True),
    ("apps/api/base/application.properties", True),
    ("apps/api/base/openapi.json", True),
    ("README.md", False),
    ("apps/web/base/config/default.conf", False),
    ("kustomization.yaml.orig", False),
])
def test_hook_selects_kustomize_inputs(name: str, selected: bool) -> None:
    (hook,) = yaml.safe_load(HOOKS_FILE.read_text())
    assert bool(re.search(hook["files"], name)) is selected


def test_demo_fails_and_names_each_defect(tmp_path: Path, hook_repo: Path, precommit_home: Path) -> None:
    done = try_repo(fixture_repo(DEMO, tmp_path), hook_repo, precommit_home, "--all-files")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    for path, line, col, *_ in DEFECTS:
        assert f"{path}:{line}:{col}: error:" in output


def test_clean_passes(tmp_path: Path, hook_repo: Path, precommit_home: Path) -> None:
    done = try_repo(fixture_repo(CLEAN, tmp_path), hook_repo, precommit_home, "--all-files")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Passed" in done.stdout


def test_changed_file_checks_only_the_roots_that_read_it(
        tmp_path: Path, hook_repo: Path, precommit_home: Path) -> None:
    # Only web/staging reads its kustomization: the other four defects are
    # in roots this change cannot affect.
    changed = "apps/web/overlays/staging/kustomization.yaml"
    done = try_repo(fixture_repo(DEMO, tmp_path), hook_repo, precommit_home, "--files", changed)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    reported = set(re.findall(r"^(\S+?):(\d+):\d+: error:", output, flags=re.MULTILINE))
    assert reported == {(changed, "18")}


def test_changed_component_checks_every_root_that_uses_it(
        tmp_path: Path, hook_repo: Path, precommit_home: Path) -> None:
    changed = "components/metrics-sidecar/sidecar.yaml"
    done = try_repo(fixture_repo(DEMO, tmp_path), hook_repo, precommit_home, "--files", changed)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    roots = set(re.findall(r"^\S+: error: .* \((\S+)\)$", output, flags=re.MULTILINE))
    assert roots == {"apps/api/overlays/production", "apps/web/overlays/production"}
