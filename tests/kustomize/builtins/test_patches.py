"""patches, patchesStrategicMerge and patchesJson6902: loading a patch (inline
or from a file, with origins in the text a person edits), selecting targets,
and applying strategic-merge and JSON 6902 patches."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.kustomize.builtins import patches
from krmcheck.kustomize.builtins.patches import PatchOptions, PatchSource, Selector
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import ROOT_ONLY, Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, lookup
from krmcheck.tree.origin import Origin
from tests.kustomize.builtins.inline import KUSTOMIZATION, RESOURCES, at, entry, kustomization, node, resources

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
    tier: front
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: web
        image: nginx
"""
API = WEB.replace("name: web\n  labels:\n    app: web\n    tier: front",
                  "name: api\n  namespace: back\n  labels:\n    app: api")
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  annotations:\n    note: x\n"
WHERE = Origin(KUSTOMIZATION, 2, 3, "kustomization")


def cluster() -> list[Resource]:
    return resources(WEB + "---\n" + API + "---\n" + CONFIGMAP)


def source(tmp_path: Path) -> PatchSource:
    (tmp_path / "overlay").mkdir(exist_ok=True)
    return PatchSource(tmp_path / "overlay", Files(tmp_path), ROOT_ONLY)


def patch_file(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / "overlay").mkdir(exist_ok=True)
    (tmp_path / "overlay" / name).write_text(text)


def loaded(k: str, tmp_path: Path) -> list[Node]:
    return patches.load_patch(entry(kustomization(k), "patches"), source(tmp_path))


def docs(text: str) -> list[Node]:
    """Patch documents as if read from a patch file."""
    from krmcheck.tree.load import load_documents

    return load_documents(text, "overlay/patch.yaml", "patch")


def selector(k: str) -> Selector:
    target = entry(kustomization(k), "patches").mapping("target")
    assert target is not None
    return Selector.from_node(target)


def selected(k: str) -> list[str]:
    sel = selector(k)
    return [r.name for r in cluster() if sel.matches(r)]


# --- selecting targets -------------------------------------------------------------------------

@pytest.mark.parametrize(("target", "names"), [
    ("kind: Deployment", ["web", "api"]),
    ("group: apps", ["web", "api"]),
    ("version: v1", ["web", "api", "web"]),
    ("group: ''\n    version: v1", ["web"]),  # the ConfigMap: the core group
    ("kind: Deploy.*", ["web", "api"]),
    ("kind: Deploy", []),  # patterns match whole
    ("name: web", ["web", "web"]),
    ("name: w.b|api", ["web", "api", "web"]),
    ("namespace: back", ["api"]),
    ("namespace: default", ["web", "web"]),  # no namespace is "default" for selection
])
def test_a_target_selects_by_id_with_whole_patterns(target: str, names: list[str]) -> None:
    assert selected(f"patches:\n- target:\n    {target}\n") == names


@pytest.mark.parametrize(("expression", "names"), [
    ("app=web", ["web"]),
    ("app==web", ["web"]),
    ("app!=web", ["api", "web"]),
    ("tier", ["web"]),
    ("!tier", ["api", "web"]),
    ("app in (web, api)", ["web", "api"]),
    ("app notin (web)", ["api", "web"]),
    ("app=web,tier=front", ["web"]),
    ("app=web,tier=back", []),
])
def test_a_label_selector(expression: str, names: list[str]) -> None:
    assert selected(f"patches:\n- target:\n    labelSelector: \"{expression}\"\n") == names


def test_an_annotation_selector() -> None:
    assert selected("patches:\n- target:\n    annotationSelector: note=x\n") == ["web"]
    assert [r.kind for r in cluster() if selector(
        "patches:\n- target:\n    annotationSelector: note=x\n").matches(r)] == ["ConfigMap"]


def test_a_renamed_resource_is_selected_by_its_original_name_too() -> None:
    res = cluster()
    res[1].remember_id()
    res[1].set_name("shop-api", WHERE)
    sel = selector("patches:\n- target:\n    name: api\n")
    assert sel.matches(res[1])
    assert selector("patches:\n- target:\n    name: shop-api\n").matches(res[1])


def test_an_invalid_pattern_is_an_error_at_its_line() -> None:
    with pytest.raises(BuildError) as e:
        selector("patches:\n- target:\n    kind: Deployment\n    name: 'web('\n")
    assert e.value.message.startswith("target name: ")
    assert e.value.location is not None and tuple(e.value.location) == (KUSTOMIZATION, 4, 5)


# --- loading patch text ------------------------------------------------------------------------

def test_an_inline_patch_points_into_the_kustomization(tmp_path: Path) -> None:
    [doc] = loaded("patches:\n- patch: |-\n    kind: Deployment\n    metadata:\n      name: web\n", tmp_path)
    assert isinstance(doc, Mapping)
    assert doc.to_data() == {"kind": "Deployment", "metadata": {"name": "web"}}
    name = lookup(doc, ["metadata", "name"])
    assert name is not None
    assert at(name) == (KUSTOMIZATION, 5, 7, "patch")


def test_a_patch_file_points_into_the_file(tmp_path: Path) -> None:
    patch_file(tmp_path, "replicas.yaml", "kind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n")
    [doc] = loaded("patches:\n- path: replicas.yaml\n", tmp_path)
    replicas = lookup(doc, ["spec", "replicas"])
    assert replicas is not None
    assert at(replicas) == ("overlay/replicas.yaml", 5, 3, "patch")


def test_a_plain_file_name_entry_is_read_from_the_file(tmp_path: Path) -> None:
    patch_file(tmp_path, "p.yaml", "kind: ConfigMap\nmetadata:\n  name: web\n")
    k = kustomization("patchesStrategicMerge:\n- p.yaml\n")
    listed = k.sequence("patchesStrategicMerge")
    assert listed is not None
    [doc] = patches.load_patch(listed.items[0], source(tmp_path))
    assert doc.origin.path == "overlay/p.yaml"


def test_a_blank_patch_file_holds_no_documents(tmp_path: Path) -> None:
    patch_file(tmp_path, "blank.yaml", "\n")
    assert loaded("patches:\n- path: blank.yaml\n", tmp_path) == []


@pytest.mark.parametrize(("k", "files", "message", "line"), [
    ("patches:\n- path: p.yaml\n  patch: 'kind: A'\n", {"p.yaml": "kind: A\n"},
     "patch and path can't be set at the same time", 2),
    ("patches:\n- target:\n    kind: A\n", {}, "patch entry needs either a path or an inline patch", 2),
    ("patches:\n- path: notes.yaml\n", {"notes.yaml": "# nothing yet\n"},
     "patch file 'notes.yaml' holds no patch, only comments", 2),
    ("patches:\n- path: missing.yaml\n", {}, "overlay/missing.yaml: no such file", 2),
])
def test_patch_entry_errors(tmp_path: Path, k: str, files: dict[str, str], message: str, line: int) -> None:
    for name, text in files.items():
        patch_file(tmp_path, name, text)
    with pytest.raises(BuildError) as e:
        loaded(k, tmp_path)
    assert e.value.message == message
    assert e.value.location is not None and e.value.location.line == line


def test_a_patch_that_is_a_list_is_an_error(tmp_path: Path) -> None:
    k = kustomization("patches:\n- [a, b]\n")
    listed = k.sequence("patches")
    assert listed is not None
    with pytest.raises(BuildError) as e:
        patches.load_patch(listed.items[0], source(tmp_path))
    assert e.value.message == "a patch must be a file name or a map"


def test_invalid_yaml_in_an_inline_patch_is_an_error_in_the_kustomization(tmp_path: Path) -> None:
    with pytest.raises(BuildError) as e:
        loaded("patches:\n- patch: |-\n    kind: [Deployment\n", tmp_path)
    assert e.value.message.startswith("patch: invalid YAML")
    assert e.value.location is not None and e.value.location.path == KUSTOMIZATION


def test_invalid_yaml_in_a_patch_file_is_an_error_in_the_file(tmp_path: Path) -> None:
    patch_file(tmp_path, "bad.yaml", "kind: Deployment\nmetadata: [\n")
    with pytest.raises(BuildError) as e:
        loaded("patches:\n- path: bad.yaml\n", tmp_path)
    assert e.value.message.startswith("invalid YAML")
    assert e.value.location is not None and e.value.location.path == "overlay/bad.yaml"


def test_is_json_patch() -> None:
    assert patches.is_json_patch(docs("- op: remove\n  path: /spec\n"))
    assert not patches.is_json_patch(docs("kind: Deployment\n"))
    assert not patches.is_json_patch(docs("- a\n---\n- b\n"))


def test_patch_options() -> None:
    assert PatchOptions.from_node(None) == PatchOptions()
    k = kustomization("patches:\n- options:\n    allowNameChange: true\n")
    assert PatchOptions.from_node(entry(k, "patches")) == PatchOptions(allow_name_change=True)


# --- strategic merge ---------------------------------------------------------------------------

SCALE_WEB = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n"


def test_a_patch_without_target_applies_to_the_resource_it_names() -> None:
    res = cluster()
    patches.strategic(res, docs(SCALE_WEB), None, WHERE)
    replicas = node(res[0], "spec", "replicas")
    assert replicas.to_data() == 3
    assert at(replicas) == ("overlay/patch.yaml", 6, 3, "patch")
    assert [(o.path, o.line) for o in replicas.trail] == [(RESOURCES, 9)]
    assert node(res[1], "spec", "replicas").to_data() == 1


def test_a_patch_naming_no_resource_is_an_error() -> None:
    with pytest.raises(BuildError) as e:
        patches.strategic(cluster(), docs(SCALE_WEB.replace("name: web", "name: shop")), None, WHERE)
    assert e.value.message == 'no resource matches strategic merge patch "Deployment shop"'
    assert e.value.location is not None and tuple(e.value.location) == ("overlay/patch.yaml", 1, 1)


def test_a_patch_naming_two_resources_is_an_error() -> None:
    res = resources(WEB + "---\n" + WEB.replace("name: web\n", "name: web\n  namespace: default\n", 1))
    with pytest.raises(BuildError) as e:
        patches.strategic(res, docs(SCALE_WEB), None, WHERE)
    assert "multiple resources match the strategic merge patch for Deployment web" in e.value.message


def test_a_patch_naming_no_namespace_names_the_default_one() -> None:
    # kubectl kustomize: web in "other" is left alone, the web with no namespace is patched
    res = resources(WEB.replace("name: web\n", "name: web\n  namespace: other\n", 1) + "---\n" + WEB)
    patches.strategic(res, docs(SCALE_WEB), None, WHERE)
    assert node(res[1], "spec", "replicas").to_data() == 3
    assert node(res[0], "spec", "replicas").to_data() == 1
    with pytest.raises(BuildError, match='"Deployment web" in namespace default'):
        patches.strategic(res[:1], docs(SCALE_WEB.replace("name: web\n", "name: web\n  namespace: default\n")),
                          None, WHERE)


def test_a_patch_names_a_version_too() -> None:
    with pytest.raises(BuildError, match='no resource matches strategic merge patch "Deployment web"'):
        patches.strategic(cluster(), docs(SCALE_WEB.replace("apps/v1", "apps/v1beta1")), None, WHERE)


def test_a_patch_of_a_cluster_scoped_kind_matches_whatever_namespace_it_names() -> None:
    # the namespace of a kind kustomize knows to be cluster-scoped is no part of its id
    hook = ("apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
            "metadata:\n  name: hooks\n")
    res = resources(hook)
    patches.strategic(res, docs(hook.replace("name: hooks\n", "name: hooks\n  namespace: system\n  "
                                             "annotations:\n    a: b\n")), None, WHERE)
    assert node(res[0], "metadata", "annotations", "a").to_data() == "b"


def test_a_patch_with_a_target_applies_to_every_match_without_renaming() -> None:
    res = cluster()
    patches.strategic(res, docs(SCALE_WEB.replace("name: web", "name: anything")),
                      selector("patches:\n- target:\n    kind: Deployment\n"), WHERE)
    assert [(r.name, node(r, "spec", "replicas").to_data()) for r in res[:2]] == [("web", 3), ("api", 3)]


def test_allow_name_change_renames_and_remembers_the_id() -> None:
    res = cluster()
    patches.strategic(res, docs(SCALE_WEB.replace("name: web", "name: shop")),
                      selector("patches:\n- target:\n    name: web\n    kind: Deployment\n"), WHERE,
                      PatchOptions(allow_name_change=True))
    assert res[0].name == "shop"
    assert [i.name for i in res[0].all_ids()] == ["web", "shop"]


def test_a_delete_patch_removes_the_resource() -> None:
    res = cluster()
    patches.strategic(res, docs("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n$patch: delete\n"),
                      None, WHERE)
    assert [r.kind for r in res] == ["Deployment", "Deployment"]


def test_a_strategic_patch_must_be_a_map() -> None:
    with pytest.raises(BuildError) as e:
        patches.strategic(cluster(), [Scalar("text", WHERE)], None, WHERE)
    assert e.value.message == "a strategic-merge patch must be a map"



@pytest.mark.parametrize("text", [
    SCALE_WEB + "---",  # a file that ends with a separator (kubectl builds it)
    "---\n# the next patch\n---\n" + SCALE_WEB + "---\n{}\n---\n[]\n---\nnull\n",
])
def test_empty_documents_of_a_patch_file_are_dropped_as_kustomize_drops_them(text: str) -> None:
    res = cluster()
    patches.strategic(res, docs(text), None, WHERE)
    assert node(res[0], "spec", "replicas").to_data() == 3


def test_a_patch_of_only_empty_documents_is_an_error() -> None:
    with pytest.raises(BuildError) as e:
        patches.strategic(cluster(), docs("---\n{}\n---\n"), None, WHERE)
    assert e.value.message == "patch appears to be empty: it holds only empty documents"


# --- JSON 6902 ---------------------------------------------------------------------------------

def ops(text: str) -> Sequence:
    [found] = docs(text)
    assert isinstance(found, Sequence)
    return found


def test_json_ops_apply_to_every_selected_resource_with_the_value_line_as_writer() -> None:
    res = cluster()
    patches.json6902(res, ops("- op: replace\n  path: /spec/replicas\n  value: 4\n"),
                     selector("patches:\n- target:\n    kind: Deployment\n"), WHERE)
    assert [node(r, "spec", "replicas").to_data() for r in res[:2]] == [4, 4]
    assert at(node(res[0], "spec", "replicas"))[:2] == ("overlay/patch.yaml", 3)
    assert [len(r.prev_ids) for r in res] == [1, 1, 0]  # the id is remembered before each patch


def test_json_ops_may_add_to_annotations_a_resource_does_not_have() -> None:
    res = cluster()
    patches.json6902(res, ops("- op: add\n  path: /metadata/annotations/owner\n  value: shop\n"),
                     selector("patches:\n- target:\n    name: api\n"), WHERE)
    assert node(res[1], "metadata", "annotations").to_data() == {"owner": "shop"}


def test_json_ops_leave_no_empty_annotations_behind() -> None:
    res = cluster()
    patches.json6902(res, ops("- op: replace\n  path: /spec/replicas\n  value: 2\n"),
                     selector("patches:\n- target:\n    name: api\n"), WHERE)
    assert "annotations" not in node(res[1], "metadata").to_data()  # type: ignore[operator]


ONE_CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"


@pytest.mark.parametrize("empty", ["# $patch: delete\n# kind: ConfigMap\n", "# a\n---\n# b\n", "{}\n", "\n"])
def test_strategic_merge_entries_that_hold_nothing_are_skipped_beside_one_that_holds_a_patch(
        tmp_path: Path, empty: str) -> None:
    """kustomize loads every patchesStrategicMerge entry into one
    PatchStrategicMergeTransformer and refuses them only when none holds a
    patch (kubectl kustomize v5.5.0: a file of commented-out patches beside
    one that patches builds)."""
    from krmcheck.kustomize.target import Builder
    from tests.checkrun import write

    write(tmp_path, "k/cm.yaml", ONE_CONFIGMAP)
    write(tmp_path, "k/off.yaml", empty)
    write(tmp_path, "k/on.yaml", ONE_CONFIGMAP + "data:\n  x: 'y'\n")
    write(tmp_path, "k/kustomization.yaml", "resources: [cm.yaml]\npatchesStrategicMerge:\n- off.yaml\n- on.yaml\n")
    [cm] = Builder(Files(tmp_path)).build(tmp_path / "k")
    assert lookup(cm.node, ["data", "x"]).value == "y"  # type: ignore[union-attr]
    write(tmp_path, "k/kustomization.yaml", "resources: [cm.yaml]\npatchesStrategicMerge:\n- off.yaml\n")
    with pytest.raises(BuildError, match="'off.yaml' holds no patch"):
        Builder(Files(tmp_path)).build(tmp_path / "k")
    write(tmp_path, "k/kustomization.yaml", "resources: [cm.yaml]\npatchesStrategicMerge:\n- off.yaml\n- off.yaml\n")
    with pytest.raises(BuildError, match="none of 'off.yaml', 'off.yaml' holds a patch"):
        Builder(Files(tmp_path)).build(tmp_path / "k")
