"""Builtin plugin configs (``apiVersion: builtin``) under generators:,
transformers: and validators:.

Expected texts were printed by ``kubectl kustomize`` (Kustomize v5.5.0) for
the same files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.kustomize.builtins.kinds import BUILTIN_KINDS, insert_path_part
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.emit import emit_all
from krmcheck.tree.node import Node, Scalar, lookup

DEPLOYMENT_AND_SERVICE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.0
---
apiVersion: v1
kind: Service
metadata:
  name: svc
  namespace: keep
"""

TRANSFORMERS = """\
apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: img
imageTag:
  name: nginx
  newTag: "2.0"
fieldSpecs:
- path: spec/template/spec/containers[]/image
---
apiVersion: builtin
kind: ReplicaCountTransformer
metadata:
  name: rc
replica:
  name: web
  count: 5
fieldSpecs:
- path: spec/replicas
  kind: Deployment
---
apiVersion: builtin
kind: NamespaceTransformer
metadata:
  name: ns
  namespace: prod
unsetOnly: true
fieldSpecs:
- path: metadata/namespace
  create: true
---
apiVersion: builtin
kind: PatchTransformer
metadata:
  name: p1
patch: |-
  - op: add
    path: /metadata/annotations
    value: {patched: "yes"}
target:
  kind: Deployment
---
apiVersion: builtin
kind: PatchStrategicMergeTransformer
metadata:
  name: p2
patches: |-
  apiVersion: v1
  kind: Service
  metadata:
    name: svc
    namespace: keep
  spec:
    type: NodePort
---
apiVersion: builtin
kind: PatchJson6902Transformer
metadata:
  name: p3
target:
  kind: Service
  name: svc
jsonOp: '[{"op": "add", "path": "/spec/ports", "value": [{"port": 80}]}]'
"""

# The inline HashTransformer runs before the file's configs (inline entries
# come first) and kustomize leaves the hash mark on: the name gets two suffixes.
TRANSFORMERS_EXPECTED = """\
apiVersion: v1
data:
  password: c2VjcmV0
kind: Secret
metadata:
  name: creds-m4d885dchh-m4d885dchh
  namespace: prod
type: Opaque
---
apiVersion: v1
kind: Service
metadata:
  name: svc
  namespace: keep
spec:
  ports:
  - port: 80
  type: NodePort
---
apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    patched: "yes"
  name: web
  namespace: prod
spec:
  replicas: 5
  template:
    spec:
      containers:
      - image: nginx:2.0
        name: web
"""

LABELS_CONFIGS = """\
apiVersion: builtin
kind: LabelTransformer
metadata:
  name: labels
labels:
  team: blue
fieldSpecs:
- path: metadata/labels
  create: true
- path: spec/selector/matchLabels
  kind: Deployment
  create: true
---
apiVersion: builtin
kind: AnnotationsTransformer
metadata:
  name: notes
annotations:
  owner: ops
fieldSpecs:
- path: metadata/annotations
  create: true
"""

OVERLAY = """\
resources: [base]
generators:
- |-
  apiVersion: builtin
  kind: IAMPolicyGenerator
  metadata:
    name: gke
  cloud: gke
  kubernetesService:
    namespace: apps
    name: app-sa
  serviceAccount:
    name: app-gsa
    projectId: my-project
transformers:
- conf
- |-
  apiVersion: builtin
  kind: PrefixSuffixTransformer
  metadata:
    name: prefixer
  prefix: x-
  fieldSpecs:
  - kind: Deployment
    path: metadata/name
- |-
  apiVersion: builtin
  kind: ValueAddTransformer
  metadata:
    name: va
  value: zone1
  targets:
  - selector:
      kind: ConfigMap
    fieldPath: metadata/annotations/path
    filePathPosition: 2
validators:
- |-
  apiVersion: builtin
  kind: LabelTransformer
  metadata:
    name: check
  labels: {}
"""

OVERLAY_EXPECTED = """\
apiVersion: v1
kind: ServiceAccount
metadata:
  annotations:
    iam.gke.io/gcp-service-account: app-gsa@my-project.iam.gserviceaccount.com
    owner: ops
  labels:
    team: blue
  name: app-sa
  namespace: apps
---
apiVersion: v1
kind: ConfigMap
metadata:
  annotations:
    owner: ops
    path: data/zone1/cfg
  labels:
    team: blue
  name: cfg
---
apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    owner: ops
  labels:
    team: blue
  name: x-web
spec:
  selector:
    matchLabels:
      app: web
      team: blue
  template:
    metadata:
      labels:
        app: web
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def build(root: Path, rel: str = ".", **options: object) -> list[Resource]:
    return Builder(Files(root), BuildOptions(**options)).build(root / rel)  # type: ignore[arg-type]


def find(resources: list[Resource], kind: str) -> Resource:
    return next(r for r in resources if r.kind == kind)


def at(node: Node | None) -> tuple[str, int, int]:
    assert node is not None
    return node.origin.path, node.origin.line, node.origin.col


@pytest.fixture
def transformers_case(tmp_path: Path) -> Path:
    write(tmp_path, "dep.yaml", DEPLOYMENT_AND_SERVICE)
    write(tmp_path, "transformers.yaml", TRANSFORMERS)
    write(tmp_path, "kustomization.yaml", """\
resources: [dep.yaml]
generators:
- |-
  apiVersion: builtin
  kind: SecretGenerator
  metadata:
    name: creds
  literals:
  - password=secret
transformers:
- transformers.yaml
- |-
  apiVersion: builtin
  kind: HashTransformer
  metadata:
    name: hash
""")
    return tmp_path


@pytest.fixture
def overlay_case(tmp_path: Path) -> Path:
    write(tmp_path, "base/dep.yaml", """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  annotations:
    path: data/cfg
""")
    write(tmp_path, "base/kustomization.yaml", "resources: [dep.yaml]\n")
    write(tmp_path, "conf/labels.yaml", LABELS_CONFIGS)
    write(tmp_path, "conf/kustomization.yaml", "resources: [labels.yaml]\n")
    write(tmp_path, "kustomization.yaml", OVERLAY)
    return tmp_path


def test_transformer_kinds_match_kubectl(transformers_case: Path) -> None:
    out = build(transformers_case)
    assert emit_all([r.node for r in out]) == TRANSFORMERS_EXPECTED


def test_generators_transformers_validators_match_kubectl(overlay_case: Path) -> None:
    out = build(overlay_case)
    assert emit_all([r.node for r in out]) == OVERLAY_EXPECTED


def test_transformer_writes_point_at_config_lines(transformers_case: Path) -> None:
    out = build(transformers_case)
    dep = find(out, "Deployment")
    image = lookup(dep.node, ["spec", "template", "spec", "containers"])
    assert image is not None
    assert at(image.items[0].items["image"]) == ("transformers.yaml", 7, 3)  # type: ignore[attr-defined]
    assert at(lookup(dep.node, ["spec", "replicas"])) == ("transformers.yaml", 17, 3)
    assert at(lookup(dep.node, ["metadata", "namespace"])) == ("transformers.yaml", 26, 3)
    svc = find(out, "Service")
    assert at(lookup(svc.node, ["spec", "type"])) == ("transformers.yaml", 54, 5)


def test_inline_generator_points_into_kustomization(transformers_case: Path) -> None:
    secret = find(build(transformers_case), "Secret")
    # the literal line inside the `- |-` block of kustomization.yaml
    assert at(lookup(secret.node, ["data", "password"])) == ("kustomization.yaml", 9, 5)


def test_overlay_provenance(overlay_case: Path) -> None:
    out = build(overlay_case)
    dep = find(out, "Deployment")
    name = lookup(dep.node, ["metadata", "name"])
    assert at(name) == ("kustomization.yaml", 22, 3)  # the prefix: line of the inline config
    assert isinstance(name, Scalar) and name.trail[0][:3] == ("base/dep.yaml", 4, 3)
    assert at(lookup(dep.node, ["metadata", "labels", "team"])) == ("conf/labels.yaml", 6, 3)
    assert at(lookup(dep.node, ["metadata", "annotations", "owner"])) == ("conf/labels.yaml", 19, 3)
    cm = find(out, "ConfigMap")
    assert at(lookup(cm.node, ["metadata", "annotations", "path"])) == ("kustomization.yaml", 31, 3)
    sa = find(out, "ServiceAccount")
    assert at(lookup(sa.node, ["metadata", "name"])) == ("kustomization.yaml", 11, 5)


def test_plugins_disabled_names_kind_at_entry(tmp_path: Path) -> None:
    write(tmp_path, "prefixer.yaml", "apiVersion: someteam.example.com/v1\nkind: StringPrefixer\n"
                                     "metadata:\n  name: apple\n")
    write(tmp_path, "kustomization.yaml", "transformers:\n- prefixer.yaml\n")
    with pytest.raises(BuildError) as e:
        build(tmp_path)
    assert "external plugins disabled" in str(e.value) and "'StringPrefixer'" in str(e.value)
    assert e.value.location is not None and tuple(e.value.location) == ("kustomization.yaml", 2, 3)


def test_sort_order_is_not_a_builtin_plugin(tmp_path: Path) -> None:
    write(tmp_path, "kustomization.yaml", """\
transformers:
- |-
  apiVersion: builtin
  kind: SortOrderTransformer
  metadata:
    name: x
""")
    with pytest.raises(BuildError, match="unable to load builtin SortOrderTransformer"):
        build(tmp_path)


@pytest.mark.parametrize("field,kind,role", [
    ("transformers", "ConfigMapGenerator", "transformer"),
    ("generators", "LabelTransformer", "generator"),
])
def test_builtin_in_the_wrong_field(tmp_path: Path, field: str, kind: str, role: str) -> None:
    write(tmp_path, "kustomization.yaml", f"""\
{field}:
- |-
  apiVersion: builtin
  kind: {kind}
  metadata:
    name: a
""")
    with pytest.raises(BuildError, match=f"{kind} 'a' .* is not a {role}"):
        build(tmp_path)


def test_slash_builtin_is_builtin_too(tmp_path: Path) -> None:
    write(tmp_path, "svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: apple\n")
    write(tmp_path, "kustomization.yaml", """\
resources: [svc.yaml]
transformers:
- |-
  apiVersion: /builtin
  kind: SuffixTransformer
  metadata:
    name: s
  suffix: -pie
  fieldSpecs:
  - path: metadata/name
""")
    assert [r.name for r in build(tmp_path)] == ["apple-pie"]


def test_validator_may_not_change_resources(tmp_path: Path) -> None:
    write(tmp_path, "svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: apple\n")
    write(tmp_path, "kustomization.yaml", """\
resources: [svc.yaml]
validators:
- |-
  apiVersion: builtin
  kind: LabelTransformer
  metadata:
    name: a
  labels: {a: b}
  fieldSpecs: [{path: metadata/labels, create: true}]
""")
    with pytest.raises(BuildError, match="validator shouldn't modify the resource map"):
        build(tmp_path)


PREFIXED = """\
apiVersion: v1
kind: Namespace
metadata:
  labels:
    l: v
  name: ns
spec:
  x: a
---
apiVersion: v1
kind: ConfigMap
metadata:
  labels:
    l: v
  name: cm
spec:
  x: a
"""


def test_prefix_suffix_config_renames_as_the_name_prefix_field_does(tmp_path: Path) -> None:
    """The config's field specs are the table of the namePrefix/nameSuffix
    transformer: a Namespace is left alone whole, each metadata/name spec
    renames once more (kubectl prints p-p-cm-s-s), and a missing field a
    create: true spec names is made."""
    write(tmp_path, "res.yaml", PREFIXED)
    write(tmp_path, "kustomization.yaml", """\
resources:
- res.yaml
transformers:
- |-
  apiVersion: builtin
  kind: PrefixSuffixTransformer
  metadata:
    name: ps
  prefix: p-
  suffix: -s
  fieldSpecs:
  - path: metadata/name
  - path: metadata/name
  - path: spec/x
  - path: spec/made/here
    create: true
  - path: metadata/labels/l
""")
    assert emit_all([r.node for r in build(tmp_path)]) == PREFIXED.replace("l: v\n  name: cm\nspec:\n  x: a", (
        "l: p-v-s\n  name: p-p-cm-s-s\nspec:\n  made:\n    here: p--s\n  x: p-a-s"))


def test_prefix_suffix_config_with_no_field_specs_renames_nothing(tmp_path: Path) -> None:
    write(tmp_path, "res.yaml", PREFIXED)
    write(tmp_path, "kustomization.yaml", "resources:\n- res.yaml\ntransformers:\n- |-\n"
          "  {apiVersion: builtin, kind: PrefixSuffixTransformer, metadata: {name: ps}, prefix: p-, "
          "suffix: -s, fieldSpecs: []}\n")
    assert emit_all([r.node for r in build(tmp_path)]) == PREFIXED


def test_registry_has_v55_kinds() -> None:
    assert "SortOrderTransformer" not in BUILTIN_KINDS
    assert {"PrefixTransformer", "SuffixTransformer", "HelmChartInflationGenerator",
            "ReplacementTransformer", "IAMPolicyGenerator"} <= set(BUILTIN_KINDS)


@pytest.mark.parametrize("path,pos,expected", [
    ("", 0, "PEACH"), ("/", 0, "/PEACH"), ("pie", 0, "PEACH/pie"), ("/pie", 0, "/PEACH/pie"),
    ("raw", 1, "raw/PEACH"), ("/raw", 1, "/raw/PEACH"),
    ("a/nice/warm/pie", 3, "a/nice/warm/PEACH/pie"), ("/a/nice/warm/pie", 3, "/a/nice/warm/PEACH/pie"),
])
def test_insert_path_part(path: str, pos: int, expected: str) -> None:
    assert insert_path_part(path, pos, "PEACH") == expected
