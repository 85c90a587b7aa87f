"""The pull-request view's flags (krmcheck.flags, krmcheck.impact): one pull
request per flag, built as two commits in a repository of its own, and each
flag shown once, at the line that made it, in the text report, the job
summary (and a GitHub annotation), the --markdown file and the JSON report."""

from __future__ import annotations

import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from dulwich import porcelain

from krmcheck import cli
from krmcheck.commands import check as check_command
from krmcheck.flag_ids import ALL, FLAGS

WORKLOAD = """\
apiVersion: apps/v1
kind: {kind}
metadata:
  name: web
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.27
"""

DEPLOYMENT = WORKLOAD.format(kind="Deployment", replicas=2)


@dataclass(frozen=True)
class PullRequest:
    """Files at the base commit, then the files the pull request writes
    (None: deletes), and where the flag must point."""

    flag: str
    base: dict[str, str]
    change: dict[str, str | None]
    path: str
    line: int


def kustomization(*resources: str, more: str = "") -> str:
    return "resources:\n" + "".join(f"- {r}\n" for r in resources) + more


def one(name: str, text: str) -> dict[str, str]:
    return {"app/kustomization.yaml": kustomization(name), f"app/{name}": text}


STATEFULSET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: {service}
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: db
        image: postgres:16
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: {size}
"""

PVC = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  storageClassName: {cls}
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: {size}
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: {type}
  clusterIP: {ip}
  selector:
    app: web
  ports:
  - port: 80
"""

BINDING = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: readers
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {role}
subjects:
- kind: Group
  name: readers
  apiGroup: rbac.authorization.k8s.io
"""

ROLE = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list]
"""

PDB = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  maxUnavailable: {n}
  selector:
    matchLabels:
      app: web
"""

NAMESPACED = """\
apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
"""

PULL_REQUESTS = [
    PullRequest("immutable-field", one("db.yaml", STATEFULSET.format(service="db", size="1Gi")),
                {"app/db.yaml": STATEFULSET.format(service="db-headless", size="1Gi")}, "app/db.yaml", 6),
    PullRequest("object-renamed", one("web.yaml", DEPLOYMENT),
                {"app/kustomization.yaml": kustomization("web.yaml", more="namePrefix: shop-\n")},
                "app/kustomization.yaml", 3),
    PullRequest("statefulset-volumeclaimtemplates", one("db.yaml", STATEFULSET.format(service="db", size="1Gi")),
                {"app/db.yaml": STATEFULSET.format(service="db", size="2Gi")}, "app/db.yaml", 25),
    PullRequest("pvc-storage-class", one("pvc.yaml", PVC.format(cls="fast", size="10Gi")),
                {"app/pvc.yaml": PVC.format(cls="slow", size="10Gi")}, "app/pvc.yaml", 6),
    PullRequest("pvc-shrink", one("pvc.yaml", PVC.format(cls="fast", size="10Gi")),
                {"app/pvc.yaml": PVC.format(cls="fast", size="5Gi")}, "app/pvc.yaml", 10),
    PullRequest("selector-changed", one("web.yaml", DEPLOYMENT),
                {"app/web.yaml": DEPLOYMENT.replace("      app: web\n", "      app: web\n      tier: front\n", 1)
                 .replace("        app: web\n", "        app: web\n        tier: front\n")},
                "app/web.yaml", 10),
    PullRequest("service-type", one("svc.yaml", SERVICE.format(type="ClusterIP", ip="10.0.0.10")),
                {"app/svc.yaml": SERVICE.format(type="LoadBalancer", ip="10.0.0.10")}, "app/svc.yaml", 6),
    PullRequest("service-clusterip", one("svc.yaml", SERVICE.format(type="ClusterIP", ip="10.0.0.10")),
                {"app/svc.yaml": SERVICE.format(type="ClusterIP", ip="10.0.0.11")}, "app/svc.yaml", 7),
    PullRequest("rbac-roleref", one("binding.yaml", BINDING.format(role="reader")),
                {"app/binding.yaml": BINDING.format(role="admin")}, "app/binding.yaml", 8),
    PullRequest("rbac-wildcard", one("role.yaml", ROLE),
                {"app/role.yaml": ROLE + "- apiGroups: [apps]\n  resources: [deployments]\n  verbs: ['*']\n"},
                "app/role.yaml", 11),
    PullRequest("privilege-gained", one("web.yaml", DEPLOYMENT),
                {"app/web.yaml": DEPLOYMENT + "        securityContext:\n          privileged: true\n"},
                "app/web.yaml", 19),
    PullRequest("replicas-zero", one("web.yaml", DEPLOYMENT),
                {"app/web.yaml": WORKLOAD.format(kind="Deployment", replicas=0)}, "app/web.yaml", 6),
    PullRequest("pdb-blocks-eviction", one("pdb.yaml", PDB.format(n=1)),
                {"app/pdb.yaml": PDB.format(n=0)}, "app/pdb.yaml", 6),
    PullRequest("namespace-removed",
                {"app/kustomization.yaml": kustomization("ns.yaml", "cm.yaml"),
                 "app/ns.yaml": NAMESPACED.split("---\n")[0], "app/cm.yaml": NAMESPACED.split("---\n")[1]},
                {"app/kustomization.yaml": kustomization("cm.yaml"), "app/ns.yaml": None},
                "app/ns.yaml", 4),
]


# --- the builder: one repository and two commits per pull request -------------------------

def build(top: Path, pr: PullRequest) -> Path:
    repo = porcelain.init(str(top))
    for path, text in pr.base.items():
        _write(top / path, text)
    _commit(repo, top, "base")
    for path, change in pr.change.items():
        if change is None:
            (top / path).unlink()
        else:
            _write(top / path, change)
    _commit(repo, top, pr.flag)
    repo.close()
    return top


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _commit(repo: Any, top: Path, message: str) -> None:
    porcelain.add(repo, paths=[str(p) for p in top.rglob("*") if ".git" not in p.relative_to(top).parts])
    for gone in porcelain.status(repo).unstaged:
        porcelain.remove(repo, paths=[str(top / gone.decode())], cached=True)
    porcelain.commit(repo, message=message.encode(), author=b"a <a@b>", committer=b"a <a@b>")


@dataclass(frozen=True)
class Views:
    code: int
    text: str
    summary: str
    markdown: str
    report: dict[str, Any]

    @property
    def flags(self) -> list[dict[str, Any]]:
        flags: list[dict[str, Any]] = self.report["diff"]["flags"]
        return flags


def views(top: Path, *args: str) -> Views:
    """``krmcheck --diff-against HEAD~1`` in ``top``, with every output of the view."""
    out_dir = top.parent / "out"
    out_dir.mkdir(exist_ok=True)
    summary = out_dir / "summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    before = Path.cwd()
    os.chdir(top)
    os.environ["GITHUB_STEP_SUMMARY"] = str(summary)  # (the reporter reads the process's environment)
    try:
        out, err = io.StringIO(), io.StringIO()
        code = check_command.run(cli.parse_check(
            ["--diff-against", "HEAD~1", "--github", "on", "--json", str(out_dir / "r.json"),
             "--markdown", str(out_dir / "c.md"), *args]), out, err, env)
    finally:
        os.chdir(before)
        del os.environ["GITHUB_STEP_SUMMARY"]
    assert not err.getvalue(), err.getvalue()
    views = Views(code, out.getvalue(), summary.read_text(), (out_dir / "c.md").read_text(),
                  json.loads((out_dir / "r.json").read_text()))
    summary.unlink()  # (appended to by every run)
    return views


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


# --- one pull request per flag -------------------------------------------------------------

def test_every_flag_has_a_pull_request() -> None:
    assert sorted(pr.flag for pr in PULL_REQUESTS) == sorted(FLAGS)


@pytest.mark.parametrize("pr", PULL_REQUESTS, ids=[pr.flag for pr in PULL_REQUESTS])
def test_each_flag_is_shown_once_at_the_line_that_made_it(pr: PullRequest, tmp_path: Path) -> None:
    v = views(build(tmp_path / "repo", pr))
    where = f"{pr.path}:{pr.line}:"
    assert [(f["id"], f["path"], f["line"]) for f in v.flags] == [(pr.flag, pr.path, pr.line)]
    [flag] = v.flags
    assert flag["severity"] == FLAGS[pr.flag].severity and flag["resource"] and flag["message"]
    text = [line.strip() for line in v.text.splitlines() if f"[{pr.flag}]" in line]
    assert len(text) == 1 and text[0].startswith(where), v.text
    annotated = [line for line in v.text.splitlines() if f"title=krmcheck flag {pr.flag} " in line]
    command = "warning" if FLAGS[pr.flag].severity == "error" else "notice"
    assert len(annotated) == 1 and annotated[0].startswith(f"::{command} file={pr.path},line={pr.line},")
    for markdown in (v.summary, v.markdown):
        shown = re.findall(rf"\*\*{re.escape(pr.flag)}\*\* at `([^`]*)`", markdown)
        assert [s.rpartition(":")[0] + ":" for s in shown] == [where], markdown
    assert v.code == 0  # a flag is review information


def test_a_change_without_flags_says_so(tmp_path: Path) -> None:
    pr = PullRequest("", one("web.yaml", DEPLOYMENT),
                     {"app/web.yaml": DEPLOYMENT.replace("nginx:1.27", "nginx:1.28")}, "", 0)
    v = views(build(tmp_path / "repo", pr))
    assert v.flags == []
    assert "  flags: none (nothing in this change is known to wedge a rollout or hurt)\n" in v.text
    assert "**Flags**: none." in v.summary and "**Flags**: none." in v.markdown
    assert "0 new, 0 fixed, 0 flags" in v.text


# --- gating ------------------------------------------------------------------------------------

def test_fail_on_flag_fails_only_on_the_flags_it_names(tmp_path: Path) -> None:
    [pr] = [pr for pr in PULL_REQUESTS if pr.flag == "replicas-zero"]
    top = build(tmp_path / "repo", pr)
    assert views(top, "--fail-on-flag", "replicas-zero").code == 1
    assert views(top, "--fail-on-flag", "any").code == 1
    assert views(top, "--fail-on-flag", "selector-changed").code == 0
    assert views(top, "--fail-on-flag", "selector-changed", "--fail-on-flag", "replicas-zero").code == 1


def test_fail_on_flag_refuses_an_unknown_id_and_a_run_without_the_view(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["--diff-against", "HEAD", "--fail-on-flag", "replica-zero"], ["--fail-on-flag", "replicas-zero"],
                 ["--markdown", "out.md"]):
        with pytest.raises(SystemExit) as exited:
            cli.parse_check(args)
        assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "'replica-zero' is no flag id" in err and "replicas-zero" in err
    assert "--fail-on-flag needs --diff-against REF" in err and "--markdown needs --diff-against REF" in err


def test_every_id_is_in_the_readme_and_the_help() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    helptext = " ".join(cli._check_parser().format_help().split()).replace("- ", "-")  # (wrapped at hyphens)
    for flag in ALL:
        assert f"`{flag}`" in readme, flag
        assert flag in helptext, flag


# --- what the controller will do ---------------------------------------------------------------

FLUX_KUSTOMIZATION = """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  interval: 10m
  path: {path}
  prune: {prune}
  sourceRef:
    kind: GitRepository
    name: flux-system
"""

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: default
data:
  host: {host}
"""


def flux(prune: str = "true", path: str = "./apps") -> dict[str, str]:
    return {"clusters/home/apps.yaml": FLUX_KUSTOMIZATION.format(path=path, prune=prune),
            "apps/route.yaml": CONFIGMAP.format(name="route", host="a.example.com"),
            "apps/old.yaml": CONFIGMAP.format(name="old", host="old.example.com")}


def controller(v: Views) -> list[tuple[str, str, int, str]]:
    return [(f["id"], f["path"], f["line"], f["root"]) for f in v.flags if f["section"] == "controller"]


def test_a_suspended_kustomization_holds_the_change_under_it(tmp_path: Path) -> None:
    suspended = FLUX_KUSTOMIZATION.format(path="./apps", prune="true") + "  suspend: true\n"
    v = views(build(tmp_path / "repo", PullRequest("", flux(), {
        "clusters/home/apps.yaml": suspended,
        "apps/route.yaml": CONFIGMAP.format(name="route", host="b.example.com")}, "", 0)))
    assert controller(v) == [
        ("suspend-changed", "clusters/home/apps.yaml", 13, "clusters/home/apps.yaml"),
        ("suspended", "clusters/home/apps.yaml", 13, "flux:flux-system/apps")]
    held = [line for line in v.text.splitlines() if "[suspended]" in line]
    assert held and "1 change under Kustomization/flux-system/apps will not roll out while it is suspended" \
        in held[0]
    assert "**suspended**" in v.summary and "**suspend-changed**" in v.markdown
    assert v.flags[1]["objects"] == ["ConfigMap/default/route"]


def test_resuming_says_everything_held_back_is_applied(tmp_path: Path) -> None:
    base = flux()
    base["clusters/home/apps.yaml"] += "  suspend: true\n"
    v = views(build(tmp_path / "repo", PullRequest("", base, {
        "clusters/home/apps.yaml": FLUX_KUSTOMIZATION.format(path="./apps", prune="true")}, "", 0)))
    [resumed] = v.flags
    assert (resumed["id"], resumed["old"], resumed["new"]) == ("suspend-changed", "true", "false")
    assert "every change held back while it was suspended is applied at once" in resumed["message"]


@pytest.mark.parametrize("prune, outcome", [("true", "pruned"), ("false", "orphaned")])
def test_removed_objects_are_deleted_under_prune_and_orphaned_without(prune: str, outcome: str,
                                                                      tmp_path: Path) -> None:
    v = views(build(tmp_path / "repo", PullRequest("", flux(prune), {"apps/old.yaml": None}, "", 0)))
    assert controller(v) == [(outcome, "clusters/home/apps.yaml", 9, "flux:flux-system/apps")]
    assert v.flags[0]["objects"] == ["ConfigMap/default/old"]
    line = next(line for line in v.text.splitlines() if f"[{outcome}]" in line)
    assert ("deleted in the cluster" if outcome == "pruned" else "orphaned") in line


def test_a_new_path_moves_everything_under_the_kustomization(tmp_path: Path) -> None:
    base = flux()
    base["apps2/route.yaml"] = CONFIGMAP.format(name="route", host="a.example.com")
    v = views(build(tmp_path / "repo", PullRequest("", base, {
        "clusters/home/apps.yaml": FLUX_KUSTOMIZATION.format(path="./apps2", prune="true")}, "", 0)))
    moved = [f for f in v.flags if f["id"] == "source-moved"]
    assert [(f["path"], f["line"], f["old"], f["new"]) for f in moved] == [
        ("clusters/home/apps.yaml", 8, "./apps", "./apps2")]


APPLICATION = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://example.com/home.git
    path: apps
  destination:
    server: https://kubernetes.default.svc
    namespace: default
"""


def test_an_application_without_automated_sync_waits_and_one_without_prune_orphans(tmp_path: Path) -> None:
    files = {".krmcheck.yaml": "gitops:\n  repo-urls: [https://example.com/home.git]\n",
             "argocd/web.yaml": APPLICATION,
             "apps/route.yaml": CONFIGMAP.format(name="route", host="a.example.com"),
             "apps/old.yaml": CONFIGMAP.format(name="old", host="old.example.com")}
    top = build(tmp_path / "repo", PullRequest("", files, {
        "apps/route.yaml": CONFIGMAP.format(name="route", host="b.example.com")}, "", 0))
    v = views(top, "--roots", "all")
    assert [f[0] for f in controller(v)] == ["manual-sync"]

    top = build(tmp_path / "auto", PullRequest("", {**files, "argocd/web.yaml": APPLICATION + (
        "  syncPolicy:\n    automated: {}\n")}, {"apps/old.yaml": None}, "", 0))
    v = views(top, "--roots", "all")
    assert [f[0] for f in controller(v)] == ["orphaned"]
    assert "its automated sync policy has no prune: true" in v.flags[0]["message"]


# --- images --------------------------------------------------------------------------------------

def test_every_changed_image_with_the_workloads_using_it(tmp_path: Path) -> None:
    base = {"app/kustomization.yaml": kustomization("web.yaml", "worker.yaml", "cm.yaml"),
            "app/web.yaml": DEPLOYMENT,
            "app/worker.yaml": DEPLOYMENT.replace("name: web\nspec", "name: worker\nspec"),
            "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"}
    change = {"app/kustomization.yaml": kustomization("web.yaml", "worker.yaml", "cm.yaml", more=(
        "images:\n- name: nginx\n  newTag: '1.28'\n"))}
    v = views(build(tmp_path / "repo", PullRequest("", base, change, "", 0)))
    assert v.report["diff"]["images"] == [
        {"old": "nginx:1.27", "new": "nginx:1.28", "workloads": ["Deployment/web", "Deployment/worker"]}]
    assert "  images:\n    nginx:1.27 -> nginx:1.28 (Deployment/web, Deployment/worker)\n" in v.text
    assert "- `nginx:1.27` → `nginx:1.28`: Deployment/web, Deployment/worker" in v.markdown


# --- the comment's size ----------------------------------------------------------------------------

def test_the_markdown_file_stays_within_a_comment_and_says_what_it_cut(tmp_path: Path) -> None:
    def big(value: str) -> str:
        return ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n"
                + "".join(f"  k{i}: {value * 60}\n" for i in range(400)))

    base = {f"app{i}/kustomization.yaml": kustomization("big.yaml") for i in range(6)}
    base.update({f"app{i}/big.yaml": big("a") for i in range(6)})
    v = views(build(tmp_path / "repo", PullRequest("", base, {f"app{i}/big.yaml": big("b") for i in range(6)},
                                                   "", 0)))
    assert len(v.markdown) <= 65536
    assert "Left out to stay within the comment size the forge allows: the diffs of " in v.markdown
    assert "**Impact** (6 affected roots)" in v.markdown  # the view itself is whole


HELM_RELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: atuin
  namespace: default
spec:
  values:
    controllers:
      atuin:
        containers:
          app:
            image:
              repository: ghcr.io/atuinsh/atuin
              tag: {tag}
    sidecar:
      image: busybox:1.36
"""


def test_an_image_in_a_helm_releases_values_counts_when_its_chart_is_not_rendered() -> None:
    from krmcheck import diff, impact
    from krmcheck.results import ResourceRef

    ref = ResourceRef("helm.toolkit.fluxcd.io/v2", "HelmRelease", "atuin", "default")
    base = [diff.Rendered(ref, str(ref), HELM_RELEASE.format(tag="18.19.0"))]
    work = [diff.Rendered(ref, str(ref), HELM_RELEASE.format(tag="18.20.0"))]
    [change] = impact.images([(base, work)])
    assert (change.old, change.new, change.workloads) == (
        "ghcr.io/atuinsh/atuin:18.19.0", "ghcr.io/atuinsh/atuin:18.20.0", ("HelmRelease/default/atuin",))


# --- what a flag never shows -----------------------------------------------------------------------

IMMUTABLE_SECRET = """\
apiVersion: v1
kind: Secret
metadata:
  name: db
immutable: true
stringData:
  password: {password}
"""


def test_an_immutable_secrets_new_value_is_flagged_without_showing_either_value(tmp_path: Path) -> None:
    v = views(build(tmp_path / "repo", PullRequest(
        "", one("secret.yaml", IMMUTABLE_SECRET.format(password="correct-horse-battery")),
        {"app/secret.yaml": IMMUTABLE_SECRET.format(password="staple-horse-battery")}, "", 0)))
    [flag] = v.flags
    assert (flag["id"], flag["path"], flag["line"], flag["old"], flag["new"]) == (
        "immutable-field", "app/secret.yaml", 7, "hidden", "hidden")
    for value in ("correct-horse-battery", "staple-horse-battery"):
        assert value not in v.text + v.summary + v.markdown + json.dumps(v.report)


def test_a_namespace_removed_under_a_kustomization_that_does_not_prune_is_orphaned_not_flagged(
        tmp_path: Path) -> None:
    base = {"clusters/home/apps.yaml": FLUX_KUSTOMIZATION.format(path="./apps", prune="false"),
            "apps/ns.yaml": NAMESPACED.split("---\n")[0], "apps/cm.yaml": NAMESPACED.split("---\n")[1]}
    v = views(build(tmp_path / "repo", PullRequest("", base, {"apps/ns.yaml": None}, "", 0)))
    assert [f["id"] for f in v.flags] == ["orphaned"]
    assert v.flags[0]["objects"] == ["Namespace/shop"]


def test_the_impact_table_counts_renamed_objects_apart(tmp_path: Path) -> None:
    # the text says "1 renamed"; the Markdown table has a column for it
    [pr] = [pr for pr in PULL_REQUESTS if pr.flag == "object-renamed"]
    v = views(build(tmp_path / "repo", pr))
    assert " 1 renamed (" in v.text
    for markdown in (v.summary, v.markdown):
        assert "| Root | Added | Changed | Renamed | Removed | Objects |" in markdown
        [row] = [line for line in markdown.splitlines() if line.startswith("| `") and "Deployment" in line]
        assert row.split(" | ")[1:5] == ["0", "0", "1", "0"], row
