"""Which roots a run checks: overlays, include cycles, plain manifests,
paths with nothing to check, and the files a change touches."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

import pytest
from dulwich import porcelain
from dulwich.repo import Repo

from krmcheck import discover
from tests.checkrun import DEPLOYMENT, check, write


def roots_of(tmp_path: Path) -> list[str]:
    infos = discover.graph(discover.find_kustomizations([tmp_path]))
    return [d.relative_to(tmp_path.resolve()).as_posix() for d in discover.default_roots(infos)]


# --- kustomization roots -------------------------------------------------------------

def test_overlays_are_roots_and_their_bases_are_not(tmp_path: Path) -> None:
    write(tmp_path, "base/kustomization.yaml", "resources: []\n")
    write(tmp_path, "overlay/kustomization.yaml", "resources: [../base]\n")
    write(tmp_path, "component/kustomization.yaml", "kind: Component\n")
    assert roots_of(tmp_path) == ["overlay"]


def test_one_root_per_include_cycle(tmp_path: Path) -> None:
    write(tmp_path, "a/kustomization.yaml", "resources: [../b]\n")
    write(tmp_path, "b/kustomization.yaml", "resources: [../a]\n")
    write(tmp_path, "self/kustomization.yaml", "resources:\n- .\n")
    assert roots_of(tmp_path) == ["a", "self"]


def test_an_include_cycle_is_a_build_error_at_the_entry(tmp_path: Path) -> None:
    write(tmp_path, "a/kustomization.yaml", "resources: [../b]\n")
    write(tmp_path, "b/kustomization.yaml", "resources:\n- ../a\n")
    write(tmp_path, "self/kustomization.yaml", "resources:\n- .\n")
    run = check(tmp_path)
    assert run.code == 2
    places = sorted((d["path"], d["line"]) for d in run.report["defects"])
    assert places == [("b/kustomization.yaml", 2), ("self/kustomization.yaml", 2)]
    assert all("cycle detected" in d["message"] for d in run.report["defects"])


# --- plain manifests ----------------------------------------------------------------

def test_manifests_no_kustomization_reads_are_roots_of_their_own(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "plain/service.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: Web_1\n")
    write(tmp_path, "plain/values.yaml", "replicas: 2\n")  # not a Kubernetes object
    write(tmp_path, "chart/Chart.yaml", "name: c\n")
    write(tmp_path, "chart/templates/x.yaml", "apiVersion: v1\nkind: {{ .Values.kind }}\n")
    write(tmp_path, "fn/config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
                                      "  annotations:\n    config.kubernetes.io/local-config: 'true'\n")
    run = check(tmp_path)
    assert [r["root"] for r in run.report["roots"]] == ["app", "plain/service.yaml"]
    assert run.code == 1
    assert ("plain/service.yaml", 4, "metadata") in run.located("error")


def test_the_inputs_a_plugin_configuration_names_are_the_kustomizations(tmp_path: Path) -> None:
    # Open Cluster Management's policy sets: the kustomization lists
    # policyGenerator.yaml, whose manifests name partial objects (a status
    # check with no spec) that the generated policies match. They are the
    # plugin's inputs: a change to one selects the kustomization, and each is
    # still checked as the plugin's input (cluster findings are warnings, a
    # YAML defect an error), since the plugin may not run; a file no
    # configuration names is judged
    partial = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: sensor\nstatus:\n  numberReady: 1\n"
    write(tmp_path, "set/kustomization.yaml", "generators: [policyGenerator.yaml]\n")
    write(tmp_path, "set/policyGenerator.yaml",
          "apiVersion: policy.open-cluster-management.io/v1\nkind: PolicyGenerator\nmetadata:\n  name: set\n"
          "policies:\n- name: sensor-status\n  manifests:\n  - path: input-sensor/status.yaml\n"
          "  - path: input-all\n")
    write(tmp_path, "set/input-sensor/status.yaml", partial)
    write(tmp_path, "set/input-all/status.yaml", partial)
    write(tmp_path, "set/input-other/status.yaml", partial)
    infos = discover.graph(discover.find_kustomizations([tmp_path]))
    named = {f.relative_to(tmp_path.resolve()).as_posix()
             for f in infos[(tmp_path / "set").resolve()].plugin_inputs}
    assert named == {"set/input-sensor/status.yaml", "set/input-all/status.yaml"}
    run = check(tmp_path)
    assert {p for p, _, _ in run.located("error")} == {"set/input-other/status.yaml"}
    assert {"set/input-sensor/status.yaml", "set/input-all/status.yaml"} <= {p for p, _, _ in run.located("warning")}
    assert {r["root"] for r in check(tmp_path, "set/input-sensor/status.yaml").report["roots"]} == \
        {"set", "set/input-sensor/status.yaml"}
    write(tmp_path, "set/input-sensor/status.yaml",
          partial.replace("  name: sensor\n", "  name: sensor\n  name: dup\n"))
    assert {(p, v) for p, _, v in check(tmp_path).located("error")} == {
        ("set/input-other/status.yaml", "schema"), ("set/input-sensor/status.yaml", "build")}


def test_a_directory_of_plain_manifests_is_checked_file_by_file(tmp_path: Path) -> None:
    write(tmp_path, "k8s/a.yaml", DEPLOYMENT)
    write(tmp_path, "k8s/b.yml", DEPLOYMENT.replace("replicas: 1", "replicas: one"))
    run = check(tmp_path, "k8s")
    assert [r["root"] for r in run.report["roots"]] == ["k8s/a.yaml", "k8s/b.yml"]
    assert run.located("error") == [("k8s/b.yml", 6, "schema")]


# --- nothing to check ------------------------------------------------------------------

@pytest.mark.parametrize("layout", [{}, {"docs/x.yaml": "title: not an object\n"}])
def test_a_path_with_nothing_to_check_is_exit_2(tmp_path: Path, layout: dict[str, str]) -> None:
    (tmp_path / "docs").mkdir()
    for rel, text in layout.items():
        write(tmp_path, rel, text)
    run = check(tmp_path, "docs")
    assert run.code == 2
    assert "docs: nothing to check: no kustomization and no Kubernetes manifest" in run.err


def test_a_mistyped_path_is_exit_2(tmp_path: Path) -> None:
    write(tmp_path, "app/a.yaml", DEPLOYMENT)
    run = check(tmp_path, "ap")
    assert run.code == 2 and "ap: no such file or directory" in run.err


# --- changed files ---------------------------------------------------------------------

def commit(repo: Repo, message: str) -> bytes:
    porcelain.add(repo, paths=[str(p) for p in Path(repo.path).rglob("*")
                               if p.is_file() and ".git" not in p.parts])
    return porcelain.commit(repo, message=message.encode(), author=b"a <a@b>", committer=b"a <a@b>")


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """Three commits: the app, a change to its base, a change to the other app."""
    repo = porcelain.init(str(tmp_path))
    for app in ("one", "two"):
        write(tmp_path, f"{app}/base/kustomization.yaml", "resources: [deployment.yaml]\n")
        write(tmp_path, f"{app}/base/deployment.yaml", DEPLOYMENT)
        write(tmp_path, f"{app}/prod/kustomization.yaml", "resources: [../base]\n")
    commit(repo, "first")
    porcelain.tag_create(repo, b"v1")
    time.sleep(0.01)
    write(tmp_path, "one/base/deployment.yaml", DEPLOYMENT.replace("replicas: 1", "replicas: 2"))
    commit(repo, "second")
    write(tmp_path, "two/base/deployment.yaml", DEPLOYMENT.replace("replicas: 1", "replicas: 3"))
    commit(repo, "third")
    return tmp_path


def checked(top: Path, ref: str) -> list[str]:
    run = check(top, "--changed-since", ref)
    assert run.code == 0, run.err
    return [r["root"] for r in run.report["roots"]]


@pytest.mark.parametrize(("ref", "roots"), [
    ("HEAD", []), ("HEAD~1", ["two/prod"]), ("HEAD^", ["two/prod"]), ("HEAD~2", ["one/prod", "two/prod"]),
    ("HEAD^^", ["one/prod", "two/prod"]), ("v1", ["one/prod", "two/prod"]), ("master~1", ["two/prod"]),
])
def test_changed_since_understands_revisions(history: Path, ref: str, roots: list[str]) -> None:
    assert checked(history, ref) == roots


def test_changed_since_an_abbreviated_id(history: Path) -> None:
    repo = Repo(str(history))
    first = repo[repo.head()].parents[0].decode()  # type: ignore[attr-defined]
    assert checked(history, first[:10]) == ["two/prod"]


def test_untracked_and_unstaged_files_count(history: Path) -> None:
    write(history, "one/base/new.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    write(history, "one/base/kustomization.yaml", "resources: [deployment.yaml, new.yaml]\n")
    assert checked(history, "HEAD") == ["one/prod"]


def test_an_unknown_revision_is_a_usage_error(history: Path) -> None:
    run = check(history, "--changed-since", "no-such-branch")
    assert run.code == 2
    assert "--changed-since no-such-branch: no such commit, branch or tag" in run.err


def test_a_changed_plain_manifest_is_its_own_root(history: Path) -> None:
    write(history, "plain/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: P_1\n")
    run = check(history, "plain/pod.yaml")
    assert [r["root"] for r in run.report["roots"]] == ["plain/pod.yaml"]
    assert ("plain/pod.yaml", 4, "metadata") in run.located("error")


# --- the pieces: the repository, kustomizations, what each reads -------------------------------

def rel(top: Path, paths: Iterable[Path]) -> list[str]:
    """Paths relative to ``top``, sorted."""
    return sorted(p.relative_to(top.resolve()).as_posix() for p in paths)


@pytest.mark.parametrize("git", ["directory", "file"])  # a worktree's .git is a file
def test_repo_root_is_the_top_of_the_work_tree(tmp_path: Path, git: str) -> None:
    (tmp_path / "apps" / "web").mkdir(parents=True)
    if git == "directory":
        (tmp_path / ".git").mkdir()
    else:
        (tmp_path / ".git").write_text("gitdir: elsewhere\n")
    assert discover.repo_root(tmp_path / "apps" / "web") == tmp_path.resolve()


def test_find_kustomizations_knows_every_file_name_and_skips_tool_directories(tmp_path: Path) -> None:
    write(tmp_path, "a/kustomization.yaml", "")
    write(tmp_path, "b/kustomization.yml", "")
    write(tmp_path, "c/Kustomization", "")
    write(tmp_path, "d/notes.yaml", "")
    for hidden in ("node_modules/x", ".git/y", ".venv/z", "excluded"):
        write(tmp_path, f"{hidden}/kustomization.yaml", "")
    skip = lambda path, directory: directory and path.name == "excluded"  # noqa: E731
    assert rel(tmp_path, discover.find_kustomizations([tmp_path], skip)) == ["a", "b", "c"]
    # a file given is searched from its directory
    assert rel(tmp_path, discover.find_kustomizations([tmp_path / "a" / "kustomization.yaml"])) == ["a"]


def test_read_info_collects_every_directory_and_file_a_kustomization_names(tmp_path: Path) -> None:
    for d in ("base", "component"):
        write(tmp_path, f"{d}/kustomization.yaml", "")
    write(tmp_path, "app/kustomization.yaml", """\
resources:
- ../base
- deployment.yaml
- https://github.com/acme/repo//deploy?ref=v1
components: [../component]
generators: [gen.yaml]
transformers: [tr.yaml]
patchesStrategicMerge: [smp.yaml]
patches:
- path: patch.yaml
- patch: |-
    kind: Deployment
patchesJson6902:
- path: ops.yaml
replacements:
- path: replacement.yaml
configurations: [config.yaml]
crds: [crd.json]
openapi:
  path: schema.json
configMapGenerator:
- name: c
  files: [key=data.txt, plain.txt]
  envs: [c.env]
secretGenerator:
- name: s
  env: s.env
helmCharts:
- name: chart
  valuesFile: values.yaml
  additionalValuesFiles: [more-values.yaml]
""")
    info = discover.read_info((tmp_path / "app").resolve())
    assert not info.is_component
    assert rel(tmp_path, info.dirs) == ["base", "component"]
    assert rel(tmp_path, info.files) == [f"app/{name}" for name in sorted([
        "kustomization.yaml", "deployment.yaml", "gen.yaml", "tr.yaml", "smp.yaml", "patch.yaml", "ops.yaml",
        "replacement.yaml", "config.yaml", "crd.json", "schema.json", "data.txt", "plain.txt", "c.env",
        "s.env", "values.yaml", "more-values.yaml"])]


def test_read_info_of_a_component_and_of_unreadable_yaml(tmp_path: Path) -> None:
    write(tmp_path, "component/kustomization.yaml", "kind: Component\nresources: [x.yaml]\n")
    write(tmp_path, "broken/Kustomization", "resources: [a.yaml\n")
    component = discover.read_info((tmp_path / "component").resolve())
    assert component.is_component and rel(tmp_path, component.files) == [
        "component/kustomization.yaml", "component/x.yaml"]
    broken = discover.read_info((tmp_path / "broken").resolve())
    assert rel(tmp_path, broken.files) == ["broken/Kustomization"] and not broken.dirs


@pytest.fixture
def layered(tmp_path: Path) -> dict[Path, discover.KustomizationInfo]:
    """prod -> base (deployment.yaml) and a component (sidecar.yaml); dev -> base."""
    write(tmp_path, "base/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "base/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "sidecar/kustomization.yaml", "kind: Component\nresources: [sidecar.yaml]\n")
    write(tmp_path, "sidecar/sidecar.yaml", DEPLOYMENT)
    write(tmp_path, "prod/kustomization.yaml", "resources: [../base]\ncomponents: [../sidecar]\n")
    write(tmp_path, "dev/kustomization.yaml", "resources: [../base]\n")
    return discover.graph(discover.find_kustomizations([tmp_path]))


def test_all_roots_are_every_kustomization_but_components(tmp_path: Path,
                                                          layered: dict[Path, discover.KustomizationInfo]) -> None:
    assert rel(tmp_path, discover.all_roots(layered)) == ["base", "dev", "prod"]
    assert rel(tmp_path, discover.default_roots(layered)) == ["dev", "prod"]


def test_reads_follows_included_kustomizations(tmp_path: Path,
                                               layered: dict[Path, discover.KustomizationInfo]) -> None:
    prod = (tmp_path / "prod").resolve()
    assert rel(tmp_path, discover.reads(prod, layered)) == [
        "base", "base/deployment.yaml", "base/kustomization.yaml", "prod/kustomization.yaml",
        "sidecar", "sidecar/kustomization.yaml", "sidecar/sidecar.yaml"]
    manifest = tmp_path / "plain.yaml"
    write(tmp_path, "plain.yaml", DEPLOYMENT)
    assert discover.reads(manifest, layered) == {manifest}


@pytest.mark.parametrize(("changed", "touched"), [
    ("base/deployment.yaml", ["dev", "prod"]),
    ("base/kustomization.yaml", ["dev", "prod"]),
    ("sidecar/sidecar.yaml", ["prod"]),
    ("README.md", []),
])
def test_touched_roots_are_those_that_read_a_changed_file(
        tmp_path: Path, layered: dict[Path, discover.KustomizationInfo], changed: str, touched: list[str]) -> None:
    roots = discover.default_roots(layered)
    assert rel(tmp_path, discover.touched_roots(roots, [tmp_path / changed], layered)) == touched


# --- the pieces: manifests and input files ---------------------------------------------------------

@pytest.mark.parametrize(("text", "manifest"), [
    ("apiVersion: v1\nkind: ConfigMap\n", True),
    ("apiVersion: \"apps/v1\"\nkind: Deployment\n", True),
    ("kind: ConfigMap\n", False),  # no apiVersion
    ("apiVersion: v1\nmetadata: {}\n", False),  # no kind
    ("  apiVersion: v1\n  kind: ConfigMap\n", False),  # not at the top level
    ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n", False),
    ("apiVersion: kpt.dev/v1\nkind: Kptfile\n", False),
    ("apiVersion: builtin\nkind: LabelTransformer\n", False),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n"
     "    config.kubernetes.io/local-config: 'true'\n", False),
    # a function's configuration (kustomize fn run, kpt), in either spelling
    ("apiVersion: example.com/v1\nkind: Kubeval\nmetadata:\n  annotations:\n"
     "    config.kubernetes.io/function: |\n      container: {image: example/kubeval}\n", False),
    ("apiVersion: example.com/v1\nkind: Kubeval\nmetadata:\n  annotations:\n"
     "    config.k8s.io/function: |\n      container: {image: example/kubeval}\n", False),
    # a description that mentions it is no annotation
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  doc: see config.kubernetes.io/function for more\n", True),
])
def test_is_manifest(tmp_path: Path, text: str, manifest: bool) -> None:
    assert discover.is_manifest(write(tmp_path, "file.yaml", text)) is manifest


def test_a_missing_file_is_not_a_manifest(tmp_path: Path) -> None:
    assert not discover.is_manifest(tmp_path / "missing.yaml")


def test_find_manifests_leaves_out_what_something_reads(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "plain/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "plain/fn-config.yaml", DEPLOYMENT)  # a function configuration the run names
    write(tmp_path, "pkg/Kptfile", "apiVersion: kpt.dev/v1\nkind: Kptfile\npipeline:\n  mutators:\n"
                                   "  - image: set-labels\n    configPath: labels.yaml\n")
    write(tmp_path, "pkg/labels.yaml", DEPLOYMENT)
    write(tmp_path, "pkg/service.yaml", DEPLOYMENT)
    write(tmp_path, "chart/Chart.yaml", "name: c\n")
    write(tmp_path, "chart/templates/sub/deployment.yaml", DEPLOYMENT)
    infos = discover.graph(discover.find_kustomizations([tmp_path]))
    found = discover.find_manifests([tmp_path], infos, also_read=[tmp_path / "plain" / "fn-config.yaml"])
    assert rel(tmp_path, found) == ["pkg/service.yaml", "plain/deployment.yaml"]


def test_find_manifests_takes_files_as_given_and_honours_skip(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", DEPLOYMENT)
    write(tmp_path, "b.yaml", DEPLOYMENT)
    write(tmp_path, "notes.txt", DEPLOYMENT)
    skip = lambda path, directory: path.name == "b.yaml"  # noqa: E731
    given = [tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "notes.txt"]
    assert rel(tmp_path, discover.find_manifests(given, {}, skip)) == ["a.yaml"]


def test_find_crd_files_looks_into_yaml_and_json_files_by_content(tmp_path: Path) -> None:
    crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
    write(tmp_path, "crds/widget.yaml", crd)
    write(tmp_path, "chart/crds/gadget.json", '{"kind": "CustomResourceDefinition"}')
    write(tmp_path, "crds/notes.md", crd)
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    assert rel(tmp_path, discover.find_crd_files([tmp_path])) == ["chart/crds/gadget.json", "crds/widget.yaml"]


@pytest.mark.parametrize(("name", "text", "is_input"), [
    ("kustomization.yaml", None, True),
    ("Kustomization", None, True),
    (".krmcheck.yaml", None, True),
    ("deployment.yaml", DEPLOYMENT, True),
    ("values.yaml", "replicas: 2\n", False),
    ("report.yaml", None, False),
    ("report.json", DEPLOYMENT, False),
])
def test_is_input_name(tmp_path: Path, name: str, text: str | None, is_input: bool) -> None:
    if text is not None:
        write(tmp_path, name, text)
    assert discover.is_input_name(tmp_path / name) is is_input


# --- the pieces: selecting roots ---------------------------------------------------------------------

def test_select_all_roots_adds_bases(tmp_path: Path, layered: dict[Path, discover.KustomizationInfo]) -> None:
    default = discover.select((tmp_path,), (), None, tmp_path)
    every = discover.select((tmp_path,), ("all",), None, tmp_path)
    assert rel(tmp_path, default.roots) == ["dev", "prod"] and not default.changed
    assert rel(tmp_path, every.roots) == ["base", "dev", "prod"]


def test_select_explicit_roots(tmp_path: Path, layered: dict[Path, discover.KustomizationInfo]) -> None:
    (tmp_path / "empty").mkdir()
    chosen = discover.select((tmp_path,), (str(tmp_path / "base"), str(tmp_path / "empty")), None, tmp_path)
    assert rel(tmp_path, chosen.roots) == ["base", "empty"]
    assert rel(tmp_path, chosen.infos) == ["base"]  # only kustomizations are read
    with pytest.raises(discover.NothingToCheck, match="--roots .*missing: not a directory"):
        discover.select((tmp_path,), (str(tmp_path / "missing"),), None, tmp_path)


def test_select_changed_files(tmp_path: Path, layered: dict[Path, discover.KustomizationInfo],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "plain/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n")
    chosen = discover.select((Path("sidecar/sidecar.yaml"), Path("plain/pod.yaml")), (), None, tmp_path)
    assert chosen.changed
    assert rel(tmp_path, chosen.roots) == ["plain/pod.yaml", "prod"]


def test_select_an_excluded_path_says_so(tmp_path: Path, layered: dict[Path, discover.KustomizationInfo]) -> None:
    skip = lambda path, directory: path.name == "prod"  # noqa: E731
    with pytest.raises(discover.NothingToCheck, match="prod: nothing to check: the path is excluded"):
        discover.select((tmp_path / "prod",), (), None, tmp_path, skip)
