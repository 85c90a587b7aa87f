"""buildMetadata: origin and transformer annotations, the managed-by label.

Expected texts were printed by ``kubectl kustomize`` (Kustomize v5.5.0).
"""

from __future__ import annotations

from pathlib import Path

from krmcheck.kustomize.buildmetadata import ORIGIN, Source, Stamper
from krmcheck.kustomize.remote import RemoteFiles
from krmcheck.kustomize.repospec import parse_repo_spec
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.emit import emit_all
from krmcheck.tree.node import Scalar
from krmcheck.tree.origin import Origin

BASE = """\
resources:
- svc.yaml
configMapGenerator:
- name: cfg
  literals: [a=1]
namePrefix: b-
"""
SVC = """\
apiVersion: v1
kind: Service
metadata:
  name: web
"""
OVERLAY = """\
resources:
- ../base
configMapGenerator:
- name: cfg
  behavior: merge
  literals: [b=2]
commonAnnotations:
  team: x
buildMetadata: [originAnnotations, transformerAnnotations, managedByLabel]
"""
EXPECTED = """\
apiVersion: v1
data:
  a: "1"
  b: "2"
kind: ConfigMap
metadata:
  annotations:
    alpha.config.kubernetes.io/transformations: |
      - configuredIn: ../base/kustomization.yaml
        configuredBy:
          apiVersion: builtin
          kind: PrefixTransformer
      - configuredIn: kustomization.yaml
        configuredBy:
          apiVersion: builtin
          kind: AnnotationsTransformer
    config.kubernetes.io/origin: |
      configuredIn: ../base/kustomization.yaml
      configuredBy:
        apiVersion: builtin
        kind: ConfigMapGenerator
    team: x
  labels:
    app.kubernetes.io/managed-by: kustomize-(devel)
  name: b-cfg-7gdc49gk6d
---
apiVersion: v1
kind: Service
metadata:
  annotations:
    alpha.config.kubernetes.io/transformations: |
      - configuredIn: ../base/kustomization.yaml
        configuredBy:
          apiVersion: builtin
          kind: PrefixTransformer
      - configuredIn: kustomization.yaml
        configuredBy:
          apiVersion: builtin
          kind: AnnotationsTransformer
    config.kubernetes.io/origin: |
      path: ../base/svc.yaml
    team: x
  labels:
    app.kubernetes.io/managed-by: kustomize-(devel)
  name: b-web
"""


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def project(tmp_path: Path, overlay: str = OVERLAY) -> Builder:
    write(tmp_path, "base/kustomization.yaml", BASE)
    write(tmp_path, "base/svc.yaml", SVC)
    write(tmp_path, "overlay/kustomization.yaml", overlay)
    return Builder(Files(tmp_path), BuildOptions())


def render(builder: Builder, root: Path) -> str:
    return emit_all([r.node for r in builder.build(root)])


def annotation(res: Resource, key: str) -> Scalar:
    node = res.annotations().items[key]  # type: ignore[union-attr]
    assert isinstance(node, Scalar)
    return node


def test_all_three_options(tmp_path: Path) -> None:
    assert render(project(tmp_path), tmp_path / "overlay") == EXPECTED


def test_written_values_point_at_the_build_metadata_field(tmp_path: Path) -> None:
    resources = project(tmp_path).build(tmp_path / "overlay")
    by = Origin("overlay/kustomization.yaml", 9, 1, "buildMetadata")
    svc = resources[1]
    assert annotation(svc, ORIGIN).origin == by
    label = svc.labels().items["app.kubernetes.io/managed-by"]  # type: ignore[union-attr]
    assert label.origin == by


def test_what_was_not_asked_for_is_removed(tmp_path: Path) -> None:
    overlay = OVERLAY.replace("[originAnnotations, transformerAnnotations, managedByLabel]",
                              "[transformerAnnotations]").replace("commonAnnotations:\n  team: x\n", "")
    assert render(project(tmp_path, overlay), tmp_path / "overlay") == """\
apiVersion: v1
data:
  a: "1"
  b: "2"
kind: ConfigMap
metadata:
  annotations:
    alpha.config.kubernetes.io/transformations: |
      - configuredIn: ../base/kustomization.yaml
        configuredBy:
          apiVersion: builtin
          kind: PrefixTransformer
  name: b-cfg-7gdc49gk6d
---
apiVersion: v1
kind: Service
metadata:
  annotations:
    alpha.config.kubernetes.io/transformations: |
      - configuredIn: ../base/kustomization.yaml
        configuredBy:
          apiVersion: builtin
          kind: PrefixTransformer
  name: b-web
"""


def test_a_replace_takes_the_overlay_origin(tmp_path: Path) -> None:
    builder = project(tmp_path, OVERLAY.replace("behavior: merge", "behavior: replace"))
    cfg = builder.build(tmp_path / "overlay")[0]
    assert annotation(cfg, ORIGIN).value == (
        "configuredIn: kustomization.yaml\nconfiguredBy:\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n")


def test_a_base_built_before_with_annotations_is_not_reused_without(tmp_path: Path) -> None:
    builder = project(tmp_path)
    render(builder, tmp_path / "overlay")
    plain = render(builder, tmp_path / "base")
    assert "annotations" not in plain
    with_metadata = render(builder, tmp_path / "overlay")
    assert with_metadata == EXPECTED


def test_an_inline_transformer_config_is_configured_in_the_kustomization(tmp_path: Path) -> None:
    write(tmp_path, "app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: whatever\n")
    write(tmp_path, "app/kustomization.yaml", """\
resources:
- cm.yaml
transformers:
- |-
  apiVersion: builtin
  kind: NamespaceTransformer
  metadata:
    name: set-ns
    namespace: test
  fieldSpecs:
  - path: metadata/namespace
    create: true
buildMetadata: [transformerAnnotations]
""")
    cm = Builder(Files(tmp_path), BuildOptions()).build(tmp_path / "app")[0]
    assert annotation(cm, "alpha.config.kubernetes.io/transformations").value == """\
- configuredIn: kustomization.yaml
  configuredBy:
    apiVersion: builtin
    kind: NamespaceTransformer
    name: set-ns
    namespace: test
"""


def test_a_remote_file_is_named_by_repo_ref_and_path_in_the_repo(tmp_path: Path) -> None:
    spec = parse_repo_spec("github.com/kubernetes-sigs/kustomize/examples/ldap/base/?ref=v1.0.6")
    files = RemoteFiles(tmp_path, spec)
    stamper = Stamper(tmp_path / "elsewhere", ("originAnnotations",), Origin("k.yaml", 1, 1))
    kfile = tmp_path / "examples/ldap/base/kustomization.yaml"
    source = stamper.builtin(files, kfile, "ConfigMapGenerator")
    assert source.text() == """\
repo: https://github.com/kubernetes-sigs/kustomize
ref: v1.0.6
configuredIn: examples/ldap/base/kustomization.yaml
configuredBy:
  apiVersion: builtin
  kind: ConfigMapGenerator
"""


def test_source_text_quotes_like_kustomize() -> None:
    assert Source(path="10").text() == 'path: "10"\n'
    assert Source(path="a.yaml").list_item() == "- path: a.yaml\n"
