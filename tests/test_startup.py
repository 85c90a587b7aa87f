"""A run imports what it uses: start-up is most of a small run, so the
command line, and a check of a plain kustomize repository, must not load
git (dulwich), the function runtime, the GitOps controller rendering, the
reports nobody asked for, merge-reports or blame. Each case runs in a fresh
interpreter and looks at ``sys.modules``; timings are for benchmarks/scale.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent

# Never imported by `import krmcheck.cli`: each is loaded by the command or
# the step that uses it.
NOT_ON_IMPORT = (
    "jsonschema", "fastjsonschema", "referencing", "dulwich", "pathspec", "re2",
    "importlib.metadata", "multiprocessing", "concurrent.futures", "urllib.request",
    "kubernetes_validate",
    "krmcheck.commands.blame", "krmcheck.merge", "krmcheck.diff", "krmcheck.baseline", "krmcheck.git",
    "krmcheck.kptfile",
    "krmcheck.fn.catalog", "krmcheck.fn.resource_list", "krmcheck.resource.build_state", "krmcheck.fn.adoption",
    "krmcheck.kustomize.builtins.kinds", "krmcheck.fn.krm",
    "krmcheck.fn.exec_plugin", "krmcheck.fn.external", "krmcheck.commands.fn", "krmcheck.fn.oci",
    "krmcheck.fn.loader",
    "krmcheck.gitops.controllers", "krmcheck.gitops.render", "krmcheck.gitops.source",
    "krmcheck.kustomize.target", "krmcheck.kustomize.builtins.patches",
    "krmcheck.schemas.catalog",
    "krmcheck.reporters.text", "krmcheck.reporters.github", "krmcheck.reporters.junit",
    "krmcheck.reporters.sarif", "krmcheck.reporters.json_report", "krmcheck.reporters.gitlab",
)

# Never imported by a check of a repository of kustomizations that lists no
# catalog, plugin, chart, patch or Flux/Argo CD object, and asks for the text
# report only.
NOT_IN_PLAIN_RUN = (
    "dulwich", "pathspec", "re2", "fastjsonschema", "importlib.metadata", "multiprocessing",
    "concurrent.futures", "urllib.request", "subprocess",
    "krmcheck.commands.blame", "krmcheck.merge", "krmcheck.diff", "krmcheck.baseline", "krmcheck.git",
    "krmcheck.kptfile",
    "krmcheck.fn.catalog", "krmcheck.fn.resource_list", "krmcheck.resource.build_state", "krmcheck.fn.adoption",
    "krmcheck.kustomize.builtins.kinds", "krmcheck.fn.krm",
    "krmcheck.fn.exec_plugin", "krmcheck.fn.external", "krmcheck.commands.fn", "krmcheck.fn.oci",
    "krmcheck.fn.container", "krmcheck.transports",
    "krmcheck.gitops.controllers", "krmcheck.gitops.render", "krmcheck.gitops.source",
    "krmcheck.gitops.flux", "krmcheck.gitops.argocd", "krmcheck.gitops.helmrelease",
    "krmcheck.kustomize.builtins.helm", "krmcheck.kustomize.builtins.patches",
    "krmcheck.kustomize.builtins.replacements", "krmcheck.kustomize.generators",
    "krmcheck.kustomize.strategic", "krmcheck.kustomize.jsonpatch",
    "krmcheck.schemas.catalog",
    "krmcheck.reporters.github", "krmcheck.reporters.junit", "krmcheck.reporters.sarif",
    "krmcheck.reporters.json_report", "krmcheck.reporters.gitlab",
)

# Runs krmcheck's command line in this interpreter, then lists what it imported.
WRAPPER = """\
import sys
from krmcheck import cli
code = cli.main(sys.argv[1:])
print("--- exit", code)
print("\\n".join(sorted(sys.modules)))
"""

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  LOG_LEVEL: info\n"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "KRMCHECK_NETWORK")}
    env["PYTHONPATH"] = str(PROJECT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return env


def _imported(found: set[str], names: tuple[str, ...]) -> list[str]:
    """The names imported, a package counting when any of its modules is."""
    return [n for n in names if any(m == n or m.startswith(n + ".") for m in found)]


def _run(tmp_path: Path, *args: str) -> tuple[int, str, set[str]]:
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(WRAPPER)
    done = subprocess.run([sys.executable, str(wrapper), *args], cwd=tmp_path / "repo", env=_env(tmp_path),
                          capture_output=True, text=True, timeout=120, check=False)
    assert "--- exit" in done.stdout, done.stdout + done.stderr
    output, _, listing = done.stdout.partition("--- exit ")
    code, _, modules = listing.partition("\n")
    return int(code), output, set(modules.split())


def _repo(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    (top / ".git").mkdir(parents=True)
    for name in ("base", "overlay"):
        (top / name).mkdir()
    (top / "base" / "kustomization.yaml").write_text("resources:\n- configmap.yaml\n")
    (top / "base" / "configmap.yaml").write_text(CONFIGMAP)
    (top / "overlay" / "kustomization.yaml").write_text(
        "resources:\n- ../base\nnamePrefix: prod-\nnamespace: prod\ncommonLabels:\n  env: prod\n"
        "images:\n- name: app\n  newTag: '2'\n")


def test_importing_the_command_line_loads_no_command_or_step(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "import sys, krmcheck.cli; print('\\n'.join(sys.modules))"],
                          cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=120,
                          check=True)
    found = set(done.stdout.split())
    assert "krmcheck.pipeline.run" in found
    assert _imported(found, NOT_ON_IMPORT) == []


def test_a_plain_kustomize_check_imports_what_it_uses(tmp_path: Path) -> None:
    _repo(tmp_path)
    code, output, found = _run(tmp_path, "--no-cache", ".")
    assert code == 0, output
    assert "in 1 root" in output
    assert {"krmcheck.reporters.text", "krmcheck.kustomize.target", "jsonschema"} <= found  # it did check
    assert _imported(found, NOT_IN_PLAIN_RUN) == []


def test_a_check_answered_by_the_render_cache_builds_and_validates_nothing(tmp_path: Path) -> None:
    _repo(tmp_path)
    first = _run(tmp_path, ".")
    code, output, found = _run(tmp_path, ".")
    assert code == first[0] == 0 and output == first[1], output
    assert _imported(found, NOT_IN_PLAIN_RUN + ("krmcheck.kustomize.target", "jsonschema")) == []


def test_the_markers_that_skip_controller_discovery_are_the_controllers_groups() -> None:
    from krmcheck.gitops import argocd, flux, helmrelease, markers, oci

    assert markers.MARKERS == tuple(g.rstrip("/") for g in (flux.GROUP, helmrelease.GROUP, argocd.GROUP,
                                                            oci.OPERATOR_GROUP))
