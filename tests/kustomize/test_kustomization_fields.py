"""Field names inside kustomization entries, decoded as kustomize does:
unknown fields are errors at their line (kubectl: ``json: unknown field``),
names match case-insensitively, and an exact spelling wins.

Each expectation was checked against ``kubectl kustomize`` (Kustomize v5.5.0).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.kustomize.target import Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.tree.emit import emit_all
from tests.checkrun import DEPLOYMENT, write


def build(root: Path, kustomization: str) -> str:
    write(root, "k/kustomization.yaml", kustomization)
    write(root, "k/deployment.yaml", DEPLOYMENT)
    resources = Builder(Files(root)).build(root / "k")
    return emit_all([r.node for r in resources])


@pytest.mark.parametrize(("text", "line", "col", "field", "where"), [
    ("configMapGenerator:\n- name: cfg\n  literal: [A=b]\n", 3, 3, "literal", "configMapGenerator[0]"),
    ("resources: [deployment.yaml]\nimages:\n- name: nginx\n  newTagg: '1'\n", 4, 3, "newTagg", "images[0]"),
    ("resources: [deployment.yaml]\npatches:\n- patch: '[]'\n  target:\n    kind: Deployment\n    nam: web\n",
     6, 5, "nam", "patches[0].target"),
    ("resources: [deployment.yaml]\nreplicas:\n- name: web\n  count: 2\n  cnt: 3\n", 5, 3, "cnt", "replicas[0]"),
    ("resources: [deployment.yaml]\nlabels:\n- pairs: {a: b}\n  fields:\n  - path: x\n    kindd: D\n",
     6, 5, "kindd", "labels[0].fields[0]"),
    ("resources: [deployment.yaml]\nsortOptions:\n  order: fifo\n  foo: 1\n", 4, 3, "foo", "sortOptions"),
    ("resources: [deployment.yaml]\nreplacements:\n- source: {kind: Deployment, fieldPath: x, bogus: 1}\n"
     "  targets: []\n", 3, 44, "bogus", "replacements[0].source"),
    ("resources: [deployment.yaml]\nmetadata:\n  name: x\n  foo: 1\n", 4, 3, "foo", "metadata"),
])
def test_an_unknown_field_is_an_error_at_its_line(tmp_path: Path, text: str, line: int, col: int,
                                                 field: str, where: str) -> None:
    with pytest.raises(BuildError) as e:
        build(tmp_path, text)
    assert e.value.location is not None
    assert (e.value.location.path, e.value.location.line, e.value.location.col) == (
        "k/kustomization.yaml", line, col)
    assert f'unknown field "{field}" in {where}' in str(e.value)


def test_names_match_without_case_and_the_exact_spelling_wins(tmp_path: Path) -> None:
    out = build(tmp_path, "resources: [deployment.yaml]\n"
                          "images: [{name: nginx, newtag: '1.28', NEWNAME: x}]\n"
                          "Images: [{name: nginx, newTag: '2'}]\n"
                          "replicas: [{NAME: web, Count: 3}]\n")
    assert "image: x:1.28" in out
    assert "replicas: 3" in out


def test_free_form_maps_keep_their_keys(tmp_path: Path) -> None:
    out = build(tmp_path, "resources: [deployment.yaml]\ncommonAnnotations: {Anything-Goes: 'yes'}\n"
                          "patches:\n- patch: '[{\"op\": \"add\", \"path\": \"/spec/paused\", \"value\": true}]'\n"
                          "  target: {kind: Deployment}\n  options: {allowNameChange: true}\n")
    assert "Anything-Goes" in out and "paused: true" in out


def test_an_empty_kind_is_a_kustomization_and_another_kind_is_refused(tmp_path: Path) -> None:
    # kustomize fills a kind left empty (`kind: ""`, `apiversion: ""`) with
    # Kustomization, as it does a kind not written
    out = build(tmp_path, 'kind: ""\napiversion: ""\nresources: [deployment.yaml]\nnamePrefix: p-\n')
    assert "name: p-web" in out
    with pytest.raises(BuildError) as e:
        build(tmp_path, "kind: Deployment\nresources: [deployment.yaml]\n")
    assert "kind 'Deployment' is not Kustomization or Component" in str(e.value)


@pytest.mark.parametrize("entry", ["patchesStrategicMerge: [list.yaml]\n", "patches:\n- path: list.yaml\n"])
def test_a_patch_file_holding_a_list_patches_with_each_item(tmp_path: Path, entry: str) -> None:
    # kustomize reads a patch file as it reads resources: a kind: List is
    # its items, one patch each (a YAML anchor shared between them); kubectl
    # kustomize gives both Deployments the patch's replicas
    write(tmp_path, "k/list.yaml", "apiVersion: v1\nkind: List\nitems:\n"
                                   "- {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: &s {replicas: 3}}\n"
                                   "- {apiVersion: apps/v1, kind: Deployment, metadata: {name: api}, spec: *s}\n")
    write(tmp_path, "k/api.yaml", DEPLOYMENT.replace("name: web", "name: api"))
    out = build(tmp_path, "resources: [deployment.yaml, api.yaml]\n" + entry)
    assert out.count("replicas: 3") == 2, out
