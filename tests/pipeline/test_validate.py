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
