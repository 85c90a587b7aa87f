"""--diff-against REF: the pull-request view (krmcheck.diff)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from dulwich import porcelain
from dulwich.repo import Repo

from krmcheck import diff, flags
from krmcheck.reporters.github import ROOT_DIFF_LIMIT, job_summary, most_severe_first
from krmcheck.results import ResourceRef
from tests.checkrun import Run, check, write

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: {app}
  template:
    metadata:
      labels:
        app: {app}
    spec:
      containers:
      - name: web
        image: {image}
"""


def commit(repo: Repo, message: str = "change") -> bytes:
    top = Path(repo.path)
    porcelain.add(repo, paths=[str(p) for p in top.rglob("*") if ".git" not in p.relative_to(top).parts])
    return porcelain.commit(repo, message=message.encode(), author=b"a <a@b>", committer=b"a <a@b>")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A base rendered by one overlay, committed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    top = tmp_path / "repo"
    top.mkdir()
    r = porcelain.init(str(top))
    write(top, "base/kustomization.yaml", "resources:\n- deployment.yaml\n")
    write(top, "base/deployment.yaml", DEPLOYMENT.format(app="web", image="nginx:1.27"))
    write(top, "prod/kustomization.yaml", "resources:\n- ../base\nnamePrefix: prod-\n")
    write(top, "other/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(top, "other/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n")
    commit(r, "base")
    r.close()
    return top


def diff_roots(run: Run) -> dict[str, dict[str, Any]]:
    return {d["root"]: d for d in run.report["diff"]["roots"]}


def test_a_changed_resource_is_shown_as_a_diff_of_its_rendered_yaml(repo: Path) -> None:
    write(repo, "base/deployment.yaml", DEPLOYMENT.format(app="web", image="nginx:1.28"))
    run = check(repo, "--diff-against", "HEAD")
    assert run.code == 0, run.out + run.err
    roots = diff_roots(run)
    assert list(roots) == ["prod"]  # `other` reads nothing that changed
    [change] = roots["prod"]["changes"]
    assert (change["status"], change["resource"]) == ("changed", "Deployment/prod-web")
    assert "-      - image: nginx:1.27\n+      - image: nginx:1.28\n" in change["diff"]
    assert "changes against HEAD (1 affected root):\n  prod: 1 changed\n    changed Deployment/prod-web\n" in run.out


def test_the_work_tree_and_the_repository_are_not_touched(repo: Path) -> None:
    write(repo, "base/deployment.yaml", DEPLOYMENT.format(app="web", image="nginx:1.28"))
    before = porcelain.status(str(repo), untracked_files="all")
    check(repo, "--diff-against", "HEAD")
    after = porcelain.status(str(repo), untracked_files="all")
    assert (before.staged, before.unstaged, before.untracked) == (after.staged, after.unstaged, after.untracked)
    assert "nginx:1.28" in (repo / "base/deployment.yaml").read_text()


def test_only_new_findings_fail_and_fixed_ones_are_listed(repo: Path) -> None:
    # REF has an image without a tag (a warning) and a schema error
    write(repo, "base/deployment.yaml", DEPLOYMENT.format(app="web", image="nginx") + "  replicas: many\n")
    with Repo(str(repo)) as r:
        commit(r)
    write(repo, "base/deployment.yaml", DEPLOYMENT.format(app="web", image="nginx:1.28") + "  replicas: many\n")
    run = check(repo, "--diff-against", "HEAD", "--fail-on", "warning")
    assert run.code == 0, run.out  # the schema error was there before; the warning is fixed
    assert [s["by"] for s in run.report["suppressed"]] == ["diff-against"]
    [fixed] = diff_roots(run)["prod"]["fixed"]
    assert fixed["validator"] == "image-tag" and fixed["path"] == "base/deployment.yaml"
    assert "fixed: base/deployment.yaml:16:9: warning:" in run.out
    assert "against HEAD: 0 new, 1 fixed" in run.out
    assert check(repo, "--fail-on", "warning").code == 1  # without --diff-against it fails

    write(repo, "prod/kustomization.yaml", "resources:\n- ../base\nnamePrefix: prod-\n"
                                           "images:\n- name: nginx\n  newTag: latest\n")
    run = check(repo, "--diff-against", "HEAD", "--fail-on", "warning")
    assert run.code == 1
    [new] = diff_roots(run)["prod"]["new"]
    assert (new["path"], new["line"], new["validator"]) == ("prod/kustomization.yaml", 6, "image-tag")


def flagged(run: Run) -> list[tuple[str, int, str]]:
    """(path, line, id) of each flag of the pull-request view."""
    return [(f["path"], f["line"], f["id"]) for f in run.report["diff"]["flags"] if f["section"] == "flag"]


def test_a_selector_change_is_flagged_at_the_line_that_made_it(repo: Path) -> None:
    write(repo, "prod/kustomization.yaml",
          "resources:\n- ../base\nnamePrefix: prod-\nlabels:\n- pairs:\n    tier: web\n  includeSelectors: true\n")
    run = check(repo, "--diff-against", "HEAD")
    assert flagged(run) == [("prod/kustomization.yaml", 6, "selector-changed")]  # tier: web
    assert run.located() == []  # a flag is no finding: it fails only when --fail-on-flag names it
    [f] = run.report["diff"]["flags"]
    assert f["severity"] == "error" and f["message"].startswith("spec.selector changes")
    assert "has to be deleted and created again" in f["message"]


def test_a_new_name_prefix_renames_every_object(repo: Path) -> None:
    write(repo, "prod/kustomization.yaml", "resources:\n- ../base\nnamePrefix: production-\n")
    run = check(repo, "--diff-against", "HEAD")
    [change] = diff_roots(run)["prod"]["changes"]
    assert (change["status"], change["was"], change["resource"]) == (
        "renamed", "Deployment/prod-web", "Deployment/production-web")
    assert flagged(run) == [("prod/kustomization.yaml", 3, "object-renamed")]
    assert "renamed Deployment/prod-web -> Deployment/production-web" in run.out


def test_editing_an_objects_own_name_is_a_rename_counted_once(repo: Path) -> None:
    write(repo, "base/deployment.yaml", DEPLOYMENT.format(app="web", image="nginx:1.27").replace(
        "  name: web\n", "  name: frontend\n", 1))
    run = check(repo, "--diff-against", "HEAD")
    [change] = diff_roots(run)["prod"]["changes"]
    assert (change["status"], change["was"], change["resource"]) == (
        "renamed", "Deployment/prod-web", "Deployment/prod-frontend")
    assert flagged(run) == [("prod/kustomization.yaml", 3, "object-renamed")]  # the name's newest writer


def test_a_generators_new_hash_is_not_a_rename(repo: Path) -> None:
    write(repo, "other/kustomization.yaml", "configMapGenerator:\n- name: cfg\n  literals:\n  - A=1\n")
    with Repo(str(repo)) as r:
        commit(r)
    write(repo, "other/kustomization.yaml", "configMapGenerator:\n- name: cfg\n  literals:\n  - A=2\n")
    run = check(repo, "--diff-against", "HEAD")
    statuses = sorted(c["status"] for c in diff_roots(run)["other"]["changes"])
    assert statuses == ["added", "removed"]
    assert flagged(run) == []


def test_roots_that_exist_on_one_side_only(repo: Path) -> None:
    shutil.rmtree(repo / "other")
    write(repo, "new/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(repo, "new/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n")
    run = check(repo, "--diff-against", "HEAD")
    roots = diff_roots(run)
    assert roots["new"]["side"] == "work" and roots["other"]["side"] == "base"
    assert [(c["status"], c["resource"]) for c in roots["new"]["changes"]] == [("added", "ConfigMap/new")]
    assert [(c["status"], c["resource"]) for c in roots["other"]["changes"]] == [("removed", "ConfigMap/other")]
    assert "  new: 1 added (new root)\n" in run.out and "  other: 1 removed (root removed)\n" in run.out


def test_a_deleted_file_selects_the_roots_that_read_it_at_ref(repo: Path) -> None:
    write(repo, "base/kustomization.yaml", "resources:\n- deployment.yaml\n- svc.yaml\n")
    write(repo, "base/svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n")
    with Repo(str(repo)) as r:
        commit(r)
    (repo / "base/svc.yaml").unlink()
    write(repo, "base/kustomization.yaml", "resources:\n- deployment.yaml\n")
    run = check(repo, "--diff-against", "HEAD")
    assert [(c["status"], c["resource"]) for c in diff_roots(run)["prod"]["changes"]] == [
        ("removed", "Service/prod-web")]


def test_a_secrets_values_never_appear_but_their_change_does(repo: Path) -> None:
    write(repo, "base/kustomization.yaml", "resources:\n- deployment.yaml\n- secret.yaml\n")
    write(repo, "base/secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n"
                                    "stringData:\n  password: correct-horse-battery\n  user: admin-user-name\n")
    with Repo(str(repo)) as r:
        commit(r)
    write(repo, "base/secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n"
                                    "stringData:\n  password: staple-horse-battery\n  user: admin-user-name\n")
    run = check(repo, "--diff-against", "HEAD")
    text = run.out + str(run.report)
    for value in ("correct-horse-battery", "staple-horse-battery", "admin-user-name"):
        assert value not in text
    [change] = diff_roots(run)["prod"]["changes"]
    removed = [line for line in change["diff"].splitlines() if line.startswith("-  ")]
    added = [line for line in change["diff"].splitlines() if line.startswith("+  ")]
    assert len(removed) == len(added) == 1  # only the password's digest changed
    assert removed[0].startswith("-  password: (hidden, digest ")


def test_a_public_value_a_secret_also_holds_is_shown_and_a_copy_of_the_secrets_is_masked(repo: Path) -> None:
    # the ConfigMap's region is public (its own file wrote it); its dsn was copied out of the Secret
    write(repo, "base/kustomization.yaml", "resources:\n- deployment.yaml\n- res.yaml\nreplacements:\n"
                                           "- source: {kind: Secret, name: db, fieldPath: stringData.dsn}\n"
                                           "  targets:\n  - select: {kind: ConfigMap, name: settings}\n"
                                           "    fieldPaths: [data.dsn]\n")
    secret = ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  region: eu-central-1a\n"
              "  dsn: {dsn}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
              "data:\n  region: {region}\n  dsn: x\n")
    write(repo, "base/res.yaml", secret.format(dsn="pg://admin-old-dsn", region="eu-central-1a"))
    with Repo(str(repo)) as r:
        commit(r)
    write(repo, "base/res.yaml", secret.format(dsn="pg://admin-new-dsn", region="eu-central-1a\n  zone: b"))
    run = check(repo, "--diff-against", "HEAD")
    changes = {c["resource"]: c["diff"] for c in diff_roots(run)["prod"]["changes"]}
    # the region is public though the Secret's region is the same text; the dsn copied out of it is not
    assert "\n   dsn: <redacted>\n   region: eu-central-1a\n+  zone: b\n" in changes["ConfigMap/prod-settings"]
    assert "admin-old-dsn" not in run.out + str(run.report) and "admin-new-dsn" not in run.out + str(run.report)
    secret = changes["Secret/prod-db"]  # the Secret's own values stay digests
    assert "\n   region: (hidden, digest " in secret and "\n-  dsn: (hidden, digest " in secret


def test_a_programs_text_is_masked_with_the_secret_values_of_both_sides(repo: Path) -> None:
    import sys

    value = "removed-db-password-81f3"
    # a validator that remembers the Secret the change removes (it could read the history)
    write(repo, "tools/leak.py", f"#!{sys.executable}\nimport sys, yaml\nrl = yaml.safe_load(sys.stdin)\n"
                                 f"rl['results'] = [{{'message': 'was {value}', 'severity': 'warning'}}]\n"
                                 "yaml.safe_dump(rl, sys.stdout)\n")
    (repo / "tools" / "leak.py").chmod(0o755)
    write(repo, ".krmcheck.yaml", "external-validators:\n- exec: tools/leak.py\n")
    write(repo, "vault/kustomization.yaml", "resources:\n- secret.yaml\n")
    write(repo, "vault/secret.yaml", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n"
                                     f"stringData:\n  password: {value}\n")
    with Repo(str(repo)) as r:
        commit(r)
    (repo / "vault" / "secret.yaml").unlink()
    write(repo, "vault/kustomization.yaml", "resources: []\n")
    write(repo, "other/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\ndata:\n  k: v\n")
    run = check(repo, "--diff-against", "HEAD", "--enable-exec")
    assert value not in run.out + run.err + str(run.report)
    # masked alike on both sides, it is the finding REF already had
    assert ("other", "was <redacted>", "diff-against") in {(f["root"], f["message"], f["by"])
                                                         for f in run.report["suppressed"]}


def test_an_unknown_revision_is_a_usage_error(repo: Path) -> None:
    run = check(repo, "--diff-against", "no-such-branch")
    assert run.code == 2
    assert "--diff-against no-such-branch: no such commit, branch or tag" in run.err


def test_a_file_the_clone_does_not_hold_is_a_usage_error_naming_it(repo: Path) -> None:
    # a partial or incomplete clone: the base revision's blob is not in the
    # object store, and git cannot fetch it (no remote): a clear error, not a traceback
    with Repo(str(repo)) as r:
        blob = r.object_store[r[r.head()].tree][b"other"]
        sha = r.object_store[blob[1]][b"cm.yaml"][1].decode()
    (repo / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    run = check(repo, "--diff-against", "HEAD")
    assert run.code == 2
    assert f"--diff-against HEAD: other/cm.yaml: its content (object {sha[:12]}) is not in this clone" in run.err
    assert "Traceback" not in run.err


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_partial_clone_fetches_the_base_revisions_files(tmp_path: Path) -> None:
    # `git clone --filter=blob:none` (CI's blobless checkouts) holds no blob
    # of an older revision until git is asked for it: krmcheck asks
    import subprocess

    def git(*args: str, cwd: Path) -> None:
        subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=cwd, check=True,
                       capture_output=True)

    source = tmp_path / "source"
    write(source, "other/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(source, "other/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n")
    git("init", "-q", cwd=source)
    git("add", "-A", cwd=source)
    git("commit", "-qm", "one", cwd=source)
    write(source, "other/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Other\n")
    git("commit", "-qam", "two", cwd=source)
    git("config", "uploadpack.allowFilter", "true", cwd=source)
    git("clone", "-q", "--filter=blob:none", source.as_uri(), "clone", cwd=tmp_path)
    run = check(tmp_path / "clone", "--diff-against", "HEAD~1")
    assert "Traceback" not in run.err and run.code == 1
    assert [(f["path"], f["validator"]) for f in run.report["findings"] if f["severity"] == "error"] == [
        ("other/cm.yaml", "metadata")]


def test_the_base_tree_is_written_once_and_reused(repo: Path, tmp_path: Path) -> None:
    write(repo, "base/deployment.yaml", DEPLOYMENT.format(app="web", image="nginx:1.28"))
    check(repo, "--diff-against", "HEAD")
    [tree] = list((tmp_path / "cache/krmcheck/trees").iterdir())
    assert (tree / "prod/kustomization.yaml").read_text() == "resources:\n- ../base\nnamePrefix: prod-\n"
    (tree / "prod/kustomization.yaml").write_text("resources:\n- ../base\nnamePrefix: cached-\n")
    run = check(repo, "--diff-against", "HEAD")
    [change] = diff_roots(run)["prod"]["changes"]
    assert change["was"] == "Deployment/cached-web"  # the written tree was used again


# --- the comparison and the fields the API server will not change -----------------------------------------

def rendered(kind: str, name: str, text: str, api: str = "v1", source: str = "") -> diff.Rendered:
    return diff.Rendered(ResourceRef(api, kind, name), source or f"{kind}/{name}", text)


@pytest.mark.parametrize("api, kind, before, after, path", [
    ("v1", "Service", {"spec": {"clusterIP": "10.0.0.1"}}, {"spec": {"clusterIP": "10.0.0.2"}}, "spec.clusterIP"),
    ("v1", "PersistentVolumeClaim", {"spec": {"storageClassName": "a"}}, {"spec": {"storageClassName": "b"}},
     "spec.storageClassName"),
    ("v1", "PersistentVolumeClaim", {"spec": {"accessModes": ["ReadWriteOnce"]}},
     {"spec": {"accessModes": ["ReadWriteMany"]}}, "spec.accessModes"),
    ("batch/v1", "Job", {"spec": {"template": {"a": 1}}}, {"spec": {"template": {"a": 2}}}, "spec.template"),
    ("apps/v1", "StatefulSet", {"spec": {"volumeClaimTemplates": [{"a": 1}]}},
     {"spec": {"volumeClaimTemplates": []}}, "spec.volumeClaimTemplates"),
    ("apps/v1", "StatefulSet", {"spec": {"serviceName": "a"}}, {"spec": {"serviceName": "b"}}, "spec.serviceName"),
    ("v1", "ConfigMap", {"immutable": True, "data": {"a": "1"}}, {"immutable": True, "data": {"a": "2"}}, "data"),
])
def test_fields_the_api_server_will_not_change(api: str, kind: str, before: dict[str, Any],
                                                after: dict[str, Any], path: str) -> None:
    [raised] = _raised(api, kind, before, after)
    assert raised.result.severity == "error"
    assert raised.result.field_path.startswith(path) and raised.result.message.startswith(path)


def _raised(api: str, kind: str, before: dict[str, Any], after: dict[str, Any]) -> list[flags.Raised]:
    import yaml

    base = [rendered(kind, "x", yaml.safe_dump(before), api)]
    return flags.raised(base, [(ResourceRef(api, kind, "x"), f"{kind}/x", after, "", "")], b"k")


@pytest.mark.parametrize("before, after", [
    ({"spec": {"clusterIP": "10.0.0.1"}}, {"spec": {}}),  # dropping it keeps the allocated one
    ({"spec": {}}, {"spec": {"clusterIP": "10.0.0.1"}}),  # setting one the server allocated
    ({"spec": {"clusterIP": "10.0.0.1", "ports": [1]}}, {"spec": {"clusterIP": "10.0.0.1", "ports": [2]}}),
])
def test_changes_made_in_place_are_not_warned(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert _raised("v1", "Service", before, after) == []


def test_a_job_summary_folds_each_root_and_cuts_a_long_diff(repo: Path) -> None:
    def big(value: str) -> str:
        return ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n"
                + "".join(f"  k{i}: {value * 60}\n" for i in range(1000)))

    write(repo, "base/big.yaml", big("a"))
    write(repo, "base/kustomization.yaml", "resources:\n- deployment.yaml\n- big.yaml\n")
    with Repo(str(repo)) as r:
        commit(r)
    write(repo, "base/big.yaml", big("b"))
    write(repo, "base/deployment.yaml", DEPLOYMENT.format(app="web", image="nginx:1.28"))
    summary = _summary(repo)
    assert "<details><summary>prod: 2 changed</summary>" in summary
    assert "```diff\n# changed ConfigMap/prod-big\n" in summary
    assert "# ... cut here: the text report shows the whole diff" in summary
    assert len(summary.encode()) < ROOT_DIFF_LIMIT + 4096


def _summary(repo: Path) -> str:
    import os

    from krmcheck import cli
    from krmcheck.commands.check import checked

    before = Path.cwd()
    os.chdir(repo)
    try:
        report = checked(cli.parse_check(["--diff-against", "HEAD"]), lambda *a: None)
    finally:
        os.chdir(before)
    return job_summary(report, most_severe_first(report.defects))


def test_outside_a_git_work_tree_is_a_usage_error_that_says_so(tmp_path: Path) -> None:
    top = tmp_path / "plain"
    write(top, "app/kustomization.yaml", "resources: []\n")
    run = check(top, "--diff-against", "main")  # check() marks the top with an empty .git
    assert run.code == 2
    assert "--diff-against main: . is not in a git work tree; run krmcheck inside a clone" in run.err


# --- a diff you can trust ---------------------------------------------------------------

COLLECTOR = """apiVersion: opentelemetry.io/{version}
kind: OpenTelemetryCollector
metadata:
  name: otel
spec:
  mode: {mode}
"""


def test_two_versions_of_an_object_pair_with_their_own_versions(repo: Path) -> None:
    # a sample root holding otel in v1alpha1 and v1beta1: a comment-only edit changes nothing
    write(repo, "samples/kustomization.yaml", "resources: [alpha.yaml, beta.yaml]\n")
    write(repo, "samples/alpha.yaml", COLLECTOR.format(version="v1alpha1", mode="deployment"))
    write(repo, "samples/beta.yaml", COLLECTOR.format(version="v1beta1", mode="sidecar"))
    with Repo(str(repo)) as r:
        commit(r)
    write(repo, "samples/alpha.yaml", "# a comment\n" + COLLECTOR.format(version="v1alpha1", mode="deployment"))
    roots = diff_roots(check(repo, "--diff-against", "HEAD"))
    assert roots["samples"]["changes"] == []
    assert "samples: rendered output unchanged" in check(repo, "--diff-against", "HEAD").out


def test_a_new_api_version_of_one_object_is_a_change(repo: Path) -> None:
    write(repo, "samples/kustomization.yaml", "resources: [otel.yaml]\n")
    write(repo, "samples/otel.yaml", COLLECTOR.format(version="v1alpha1", mode="deployment"))
    with Repo(str(repo)) as r:
        commit(r)
    write(repo, "samples/otel.yaml", COLLECTOR.format(version="v1beta1", mode="deployment"))
    [change] = diff_roots(check(repo, "--diff-against", "HEAD"))["samples"]["changes"]
    assert (change["status"], change["resource"]) == ("changed", "OpenTelemetryCollector/otel")
    assert "-apiVersion: opentelemetry.io/v1alpha1\n+apiVersion: opentelemetry.io/v1beta1\n" in change["diff"]


def test_a_root_that_fails_to_build_shows_the_error_not_removals(repo: Path) -> None:
    write(repo, "base/deployment.yaml", DEPLOYMENT.format(app="Web Bad", image="nginx:latest"))
    with Repo(str(repo)) as r:
        commit(r)
    write(repo, "base/kustomization.yaml", "resources:\n- deployment.yaml\n- missing.yaml\n")
    run = check(repo, "--diff-against", "HEAD")
    roots = diff_roots(run)
    assert roots["prod"]["failsToBuild"] == "work"
    assert "missing.yaml" in roots["prod"]["error"]
    assert roots["prod"]["changes"] == [] and roots["prod"]["fixed"] == [] and roots["prod"]["new"] == []
    assert "prod: fails to build in the work tree:" in run.out
    assert "removed Deployment" not in run.out
    assert run.code == 2  # the build error itself still fails the run


def test_a_new_root_that_fails_to_build_reports_what_a_full_run_does(repo: Path) -> None:
    # a tool's config that now also holds a ConfigMap becomes a root that
    # fails (its first document has no kind): REF has no such root, so the
    # ConfigMap's own defect is new, as a full run reports it
    write(repo, "base/deployment.yaml", DEPLOYMENT.format(app="web", image="nginx:1.27"))
    write(repo, ".golangci.yaml", 'version: "2"\nlinters:\n  default: none\n')
    with Repo(str(repo)) as r:
        commit(r)
    write(repo, ".golangci.yaml", 'version: "2"\nlinters:\n  default: none\n---\napiVersion: v1\nkind: ConfigMap\n'
                                  "metadata:\n  name: Bad_Name\n")
    full = {(d["path"], d["validator"]) for d in check(repo).report["defects"] if d["severity"] == "error"}
    run = check(repo, "--diff-against", "HEAD")
    assert {(d["path"], d["validator"]) for d in run.report["defects"] if d["severity"] == "error"} == full
    assert (".golangci.yaml", "metadata") in full
    assert sorted(f["validator"] for d in run.report["diff"]["roots"] for f in d["new"]) == ["build", "metadata"]


def test_a_finding_that_moved_to_another_file_is_not_new(repo: Path) -> None:
    # the Deployment (and its floating-tag finding) moves to a file of its own name
    write(repo, "base/deployment.yaml", DEPLOYMENT.format(app="web", image="nginx"))
    with Repo(str(repo)) as r:
        commit(r)
    (repo / "base/deployment.yaml").rename(repo / "base/web.yaml")
    write(repo, "base/kustomization.yaml", "resources:\n- web.yaml\n")
    run = check(repo, "--diff-against", "HEAD")
    assert [d["path"] for d in run.report["findings"] if d["validator"] == "image-tag"] == []
    assert not [f for d in run.report["diff"]["roots"] for f in d["new"]]
    moved = [s for s in run.report["suppressed"] if s["validator"] == "image-tag"]
    assert moved and moved[0]["path"] == "base/web.yaml" and moved[0]["by"] == "diff-against"


def test_a_run_wide_info_whose_counts_changed_is_not_new(repo: Path) -> None:
    write(repo, "x/kustomization.yaml", "resources: [w.yaml]\n")
    write(repo, "x/w.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: a}\n")
    with Repo(str(repo)) as r:
        commit(r)
    write(repo, "x/w.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: a}\n---\n"
                            "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: b}\n")
    run = check(repo, "--diff-against", "HEAD")
    assert [f["validator"] for d in run.report["diff"]["roots"] for f in d["new"]] == []


def test_a_root_whose_chart_was_not_rendered_does_not_say_unchanged(repo: Path) -> None:
    write(repo, "chart/kustomization.yaml", "helmCharts:\n- name: podinfo\n  repo: https://charts.example.com\n"
                                            "  version: 6.0.0\nresources: [cm.yaml]\n")
    write(repo, "chart/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    with Repo(str(repo)) as r:
        commit(r)
    write(repo, "chart/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}  # edited\n")
    run = check(repo, "--diff-against", "HEAD", "--enable-helm")
    heading = [line for line in run.out.splitlines() if line.startswith("  chart:")]
    assert heading and "unchanged" not in heading[0], run.out
    assert diff_roots(run)["chart"]["notCompared"]


def test_a_file_git_ignores_is_named_once(repo: Path) -> None:
    write(repo, ".gitignore", "generated/\n")
    write(repo, "gen/kustomization.yaml", "resources: [../generated/cm.yaml]\n")
    write(repo, "generated/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: g}\n")
    with Repo(str(repo)) as r:
        commit(r)
    write(repo, "gen/kustomization.yaml", "resources: [../generated/cm.yaml]\nnamePrefix: x-\n")
    run = check(repo, "--diff-against", "HEAD", "--load-restrictor", "LoadRestrictionsNone")
    notes = [n["message"] for n in run.report["notes"] if "ignored by git" in n["message"]]
    assert len(notes) == 1 and "generated/cm.yaml" in notes[0]
