"""Selection is complete, proved by mutation: break a YAML file, see which
roots' reports change in a full run, and require that pre-commit's file
argument and ``--diff-against HEAD`` each select every one of them, with
the render cache on and off. A miss is a bug, never an expected failure.

The repositories: every fixture, and (when ../shared/realworld is present)
five repositories of the real-world corpus, the Flux ones among them, on a
sample of their files."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from dulwich import porcelain

from krmcheck.gitops import HELM
from krmcheck.pipeline import policy
from tests.checkrun import Run, check

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "realworld" / "corpus"
REALWORLD = ("fluxcd+flux2-kustomize-helm-example", "fluxcd+flux2-multi-tenancy", "onedr0p+home-ops",
             "stefanprodan+podinfo", "kubernetes-sigs+metrics-server")
SAMPLE = 6  # files per real-world repository (all of a fixture's)
BROKEN = "\nkrmcheck-selection-test: [unclosed\n"  # not YAML any more


def repository(source: Path, tmp_path: Path) -> Path:
    """A copy of ``source`` as a git repository with one commit."""
    repo = tmp_path / source.name
    shutil.copytree(source, repo, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    porcelain.init(str(repo))
    porcelain.add(str(repo), paths=[str(p) for p in sorted(repo.rglob("*")) if p.is_file() and ".git" not in p.parts])
    porcelain.commit(str(repo), message=b"base", author=b"t <t@example.com>", committer=b"t <t@example.com>")
    return repo


RUN_WIDE = (HELM, policy.LOAD_RESTRICTOR, policy.PLUGINS)


def outcome(run: Run) -> dict[str, tuple[bool, frozenset[tuple[str, int, str, str]]]]:
    """Per root of a full run: whether it failed to build, and its errors and warnings."""
    found: dict[str, set[tuple[str, int, str, str]]] = {r["root"]: set() for r in run.report.get("roots", [])}
    for f in run.report.get("findings", []):
        # a run-wide info's counts change with the roots, and so does the
        # root a policy warning (one for the run, naming every root) is on
        if f["severity"] != "info" and f["validator"] not in RUN_WIDE:
            found.setdefault(f["root"], set()).add((f["path"], f["line"], f["validator"], f["message"]))
    failed = {r["root"] for r in run.report.get("roots", []) if r.get("buildFailed")}
    return {root: (root in failed, frozenset(fs)) for root, fs in found.items()}


def failing_roots(before: Run, after: Run) -> set[str]:
    """The roots of ``after`` that fail where ``before`` did not: their
    report changed and they fail to build or have a finding no root of
    ``before`` had (a root that only appears, because a controller object
    that replaced it broke, with the findings that root had, is not one)."""
    a, b = outcome(before), outcome(after)
    known = {f for _, found in a.values() for f in found}
    return {root for root, (failed, found) in b.items()
            if a.get(root) != (failed, found) and (failed or found - known)}


def selected(run: Run) -> set[str]:
    return {r["root"] for r in run.report.get("roots", [])}


def yaml_files(repo: Path) -> list[str]:
    return sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*")
                  if p.suffix in (".yaml", ".yml") and p.is_file() and not p.is_symlink()
                  and ".git" not in p.parts and p.name not in (".krmcheck.yaml", ".krmcheck.yml"))


def misses(repo: Path, files: list[str], cache: bool) -> list[str]:
    flags = [] if cache else ["--no-cache"]
    before = check(repo, ".", *flags)
    assert before.report, before.err
    found = []
    for rel in files:
        path = repo / rel
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        path.write_text(text + BROKEN, encoding="utf-8", errors="surrogateescape")
        try:
            failing = failing_roots(before, check(repo, ".", *flags))
            if not failing:
                continue
            precommit = selected(check(repo, rel, *flags))
            diff = selected(check(repo, ".", "--diff-against", "HEAD", *flags))
        finally:
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
        for name, chosen in (("file argument", precommit), ("--diff-against", diff)):
            missed = failing - chosen
            if missed:
                found.append(f"{rel}: {name} misses {sorted(missed)}")
    return found


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_every_fixture_file(fixture: str, cache: bool, tmp_path: Path) -> None:
    repo = repository(FIXTURES / fixture, tmp_path)
    assert misses(repo, yaml_files(repo), cache) == []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/realworld is not present")
@pytest.mark.parametrize("name", REALWORLD)
def test_a_sample_of_realworld_files(name: str, tmp_path: Path) -> None:
    repo = repository(CORPUS / name, tmp_path)
    files = yaml_files(repo)
    sample = sorted(random.Random(name).sample(files, min(SAMPLE, len(files))))
    assert misses(repo, sample, cache=True) == []


def test_a_file_read_through_a_flux_component_selects_its_roots(tmp_path: Path) -> None:
    # bjw-s-labs/home-ops: components/ are read only through spec.components
    source = tmp_path / "src"
    (source / "clusters/main").mkdir(parents=True)
    (source / "clusters/main/apps.yaml").write_text(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"
        "metadata: {name: apps, namespace: flux-system}\n"
        "spec:\n  path: ./apps\n  sourceRef: {kind: GitRepository, name: flux-system}\n"
        "  components: [../components/scaler]\n")
    (source / "clusters/main/kustomization.yaml").write_text("resources: [apps.yaml]\n")
    (source / "apps").mkdir()
    (source / "apps/kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (source / "apps/cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    (source / "components/scaler").mkdir(parents=True)
    (source / "components/scaler/kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [hpa.yaml]\n")
    (source / "components/scaler/hpa.yaml").write_text(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: a}\n"
        "spec:\n  maxReplicas: one\n  scaleTargetRef: {kind: Deployment, name: a}\n")
    repo = repository(source, tmp_path / "r")
    run = check(repo, "components/scaler/hpa.yaml")
    assert selected(run) == {"flux:flux-system/apps"}
    assert run.code == 1


def test_a_changed_crd_selects_the_roots_that_use_its_kind(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "crds").mkdir(parents=True)
    (source / "crds/widget.yaml").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: widgets.example.com}\nspec:\n  group: example.com\n  scope: Namespaced\n"
        "  names: {kind: Widget, plural: widgets}\n  versions:\n  - name: v1\n    served: true\n"
        "    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n")
    (source / "app").mkdir()
    (source / "app/kustomization.yaml").write_text("resources: [widget.yaml]\n")
    (source / "app/widget.yaml").write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
    (source / "other").mkdir()
    (source / "other/kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (source / "other/cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    repo = repository(source, tmp_path / "r")
    assert "app" in selected(check(repo, "crds/widget.yaml"))
    assert "other" not in selected(check(repo, "crds/widget.yaml"))


def test_a_changed_configuration_selects_every_root(tmp_path: Path) -> None:
    source = tmp_path / "src"
    for name in ("a", "b"):
        (source / name).mkdir(parents=True)
        (source / name / "cm.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\n")
    (source / ".krmcheck.yaml").write_text("fail-on: warning\n")
    repo = repository(source, tmp_path / "r")
    assert selected(check(repo, ".krmcheck.yaml")) == {"a/cm.yaml", "b/cm.yaml"}


def test_what_the_journal_saw_a_root_read_selects_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a dependency the graph does not know (here: pretended away) is still
    # found through the read journal of the root's last check
    from krmcheck import discover

    source = tmp_path / "src"
    (source / "app").mkdir(parents=True)
    (source / "app/kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (source / "app/cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    repo = repository(source, tmp_path / "r")
    check(repo, ".")  # the cache records what each root read
    real = discover.reads
    monkeypatch.setattr(discover, "reads", lambda root, infos: {p for p in real(root, infos)
                                                               if p.name != "cm.yaml"})
    assert selected(check(repo, "app/cm.yaml")) == {"app"}
    assert selected(check(repo, "app/cm.yaml", "--no-cache")) == {"app"}


def test_a_set_aside_file_that_is_not_yaml_is_selected_alone(tmp_path: Path) -> None:
    # a file only a commented-out entry names, of a kustomization or of the
    # template a Makefile renders one from: set aside, its YAML-level defect
    # is still an error, and a file argument or --diff-against that selects
    # no root but that file reports it
    source = tmp_path / "src"
    (source / "overlays/prod").mkdir(parents=True)
    (source / "overlays/prod/kustomization.yaml").write_text("resources:\n- cm.yaml\n# - ../../base/off/cm.yaml\n")
    (source / "overlays/prod/cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: on}\n")
    (source / "base/off").mkdir(parents=True)
    (source / "base/off/cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: off}\n")
    (source / "config/default").mkdir(parents=True)
    (source / "config/default/kustomization.template.yaml").write_text("resources: []\n#- auth_patch.yaml\n")
    (source / "config/default/auth_patch.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\n"
                                                           "metadata: {name: manager}\nstatus: {}\n")
    repo = repository(source, tmp_path / "r")
    files = ["base/off/cm.yaml", "config/default/auth_patch.yaml"]
    aside = {s["path"]: s["reason"] for s in check(repo, ".").report["setAside"]}
    assert [aside.get(f) for f in files] == ["disabled", "disabled"]
    assert misses(repo, files, cache=True) == []
    (repo / files[0]).write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: off\n  name: twice\n")
    run = check(repo, files[0])
    assert run.code == 1 and [(f["path"], f["severity"]) for f in run.report["findings"]
                              if f["validator"] == "build"] == [(files[0], "error")]
    assert not any("nothing to check" in n["message"] for n in run.report["notes"])
