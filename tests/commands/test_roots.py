"""``krmcheck roots``: every root with its kind, source and path, and
``--build``, what each applies; ``krmcheck build flux:NS/NAME`` with the
labels kustomize-controller adds to every object."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from krmcheck.cli import main
from tests.checkrun import write

SYNC = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  url: https://github.com/example/fleet
  ref:
    branch: main
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  path: ./clusters/prod
  sourceRef:
    kind: GitRepository
    name: flux-system
"""

APPS = """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  path: ./apps
  targetNamespace: shop
  sourceRef:
    kind: GitRepository
    name: flux-system
  commonMetadata:
    labels:
      team: web
"""

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    top = tmp_path / "fleet"
    (top / ".git").mkdir(parents=True)
    write(top, "clusters/prod/flux-system/gotk-sync.yaml", SYNC)
    write(top, "clusters/prod/flux-system/kustomization.yaml", "resources:\n- gotk-sync.yaml\n")
    write(top, "clusters/prod/apps.yaml", APPS)
    write(top, "apps/web.yaml", CM.format(name="web"))
    write(top, "tools/example.yaml", CM.format(name="example"))  # a plain manifest nothing applies
    monkeypatch.chdir(top)
    return top


def test_build_adds_the_labels_flux_adds(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kustomize-controller labels every object it applies with its
    Kustomization's name and namespace (fluxcd/pkg ssa
    ``ResourceManager.SetOwnerLabels``, from the controller's ``reconcile``),
    before ``commonMetadata``."""
    assert main(["build", "flux:flux-system/apps"]) == 0
    assert capsys.readouterr().out == (
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        "  labels:\n"
        "    kustomize.toolkit.fluxcd.io/name: apps\n"
        "    kustomize.toolkit.fluxcd.io/namespace: flux-system\n"
        "    team: web\n"
        "  name: web\n"
        "  namespace: shop\n")


def test_roots_lists_kind_source_and_path(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As flux-local's ``get ks``: each Flux Kustomization with its
    sourceRef and spec.path, then what is checked plainly."""
    assert main(["roots"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ROOT", "KIND", "SOURCE", "PATH"]
    assert [line.split() for line in lines[1:]] == [
        ["flux:flux-system/apps", "Kustomization", "GitRepository", "flux-system/flux-system", "apps"],
        ["flux:flux-system/flux-system", "Kustomization", "GitRepository", "flux-system/flux-system",
         "clusters/prod"],
        ["tools/example.yaml", "manifest", "this", "checkout", "tools/example.yaml"],
    ]
    assert main(["roots", "--json"]) == 0
    [apps] = [r for r in json.loads(capsys.readouterr().out) if r["root"] == "flux:flux-system/apps"]
    assert apps == {"root": "flux:flux-system/apps", "kind": "Kustomization",
                    "source": "GitRepository flux-system/flux-system", "path": "apps",
                    "defined": "clusters/prod/apps.yaml:4", "notRendered": None}


def test_roots_build_renders_them_all(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As flux-local's ``build all``: every root's objects, one root after another."""
    assert main(["roots", "--build"]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("# Root:")] == [
        "# Root: flux:flux-system/apps", "# Root: flux:flux-system/flux-system", "# Root: tools/example.yaml"]
    assert "  name: web\n  namespace: shop\n" in out
    assert out.count("kustomize.toolkit.fluxcd.io/name: flux-system") == 3  # GitRepository, both Kustomizations
