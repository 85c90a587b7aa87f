"""What a Flux controller really reads: the source at its ref, the
ConfigMaps and Secrets in the cluster, and one root per tree that applies
an object."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.gitops.semver import latest
from tests.checkrun import check, write
from tests.gitops.conftest import Repo, dedent

URL = "https://github.com/example/fleet"

KS = """
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: {name}
  namespace: {namespace}
spec:
  interval: 10m
  path: {path}
  prune: true
  sourceRef:
    kind: GitRepository
    name: {source}
"""


def ks(name: str, path: str, source: str = "flux-system", namespace: str = "flux-system",
       spec: str = "") -> str:
    more = "".join(f"  {line}\n" for line in dedent(spec).splitlines())
    return dedent(KS.format(name=name, path=path, source=source, namespace=namespace)) + more


def git_repository(name: str, namespace: str, ref: str) -> str:
    return dedent(f"""
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: GitRepository
        metadata:
          name: {name}
          namespace: {namespace}
        spec:
          interval: 1m
          url: {URL}
          ref:
            {ref}
        """)


def commit(top: Path, message: str) -> str:
    """Every file committed on the checked-out branch; the new commit's id."""
    from dulwich import porcelain

    with porcelain.open_repo_closing(str(top)) as r:
        porcelain.add(r, paths=[str(p) for p in top.rglob("*")
                                if p.is_file() and ".git" not in p.relative_to(top).parts])
        return porcelain.commit(r, message=message.encode(), author=b"t <t@example.com>",
                                committer=b"t <t@example.com>").decode()


def tag(top: Path, name: str, target: str, annotated: bool = False) -> None:
    from dulwich import porcelain

    porcelain.tag_create(str(top), name.encode(), objectish=target.encode(), annotated=annotated,
                         message=b"release" if annotated else None, author=b"t <t@example.com>")


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """flux2-multi-tenancy's shape: the platform repository, checked out at
    main, and a tenant GitRepository of the same repository at branch dev-team."""
    top = tmp_path / "fleet"
    write(top, "clusters/staging/flux-system/gotk-sync.yaml",
          git_repository("flux-system", "flux-system", "branch: main") + "---\n"
          + ks("flux-system", "./clusters/staging"))
    write(top, "clusters/staging/tenants.yaml", ks("tenants", "./tenants/staging"))
    write(top, "tenants/staging/kustomization.yaml", "resources:\n- dev-team.yaml\n")
    # on branch dev-team, ./staging exists; on main it does not
    write(top, "tenants/staging/dev-team.yaml", git_repository("dev-team", "apps", "branch: dev-team")
          + "---\n" + ks("dev-team", "./staging", source="dev-team", namespace="apps"))
    from dulwich import porcelain

    with porcelain.init(str(top)) as r:
        r.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
        config = r.get_config()
        config.set((b"remote", b"origin"), b"url", (URL + ".git").encode())
        config.write_to_path()
    commit(top, "fleet")
    return top


def test_a_git_repository_at_another_branch_is_not_this_checkout(fleet: Path) -> None:
    """source-controller checks out ``spec.ref`` (fluxcd/pkg git/gogit
    ``Client.clone``: commit, name, tag, semver, then branch): the
    tenant's branch dev-team is not this checkout of main, so its path is not
    looked for here; an info says why it is not rendered."""
    run = check(fleet, ".")
    assert run.code == 0, run.out
    assert "flux:apps/dev-team" in [r["root"] for r in run.report["roots"]]
    [info] = [d for d in run.report["defects"] if d["validator"] == "source"]
    assert (info["path"], info["line"], info["severity"]) == ("tenants/staging/dev-team.yaml", 21, "info")
    assert "branch dev-team" in info["message"] and "branch main" in info["message"]


def test_a_tag_or_commit_of_this_checkout_is_rendered(fleet: Path) -> None:
    """The same GitRepository at a tag that points at this checkout's
    commit, or at that commit, is this checkout; a semver range is when its
    highest matching tag (``cloneSemVer``) is at this commit."""
    write(fleet, "staging/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tenant\n")
    first = commit(fleet, "tenant")
    head = commit(fleet, "tenant's app")
    tag(fleet, "v1.1.0", first)
    tag(fleet, "v1.2.0", head, annotated=True)
    for ref, rendered in ((f"commit: {head}", True), ("tag: v1.2.0", True), ("tag: v1.1.0", False),
                          ("semver: '>=1.0.0'", True), ("semver: '~1.1.0'", False),
                          ("name: refs/tags/v1.2.0", True), ("branch: main", True)):
        write(fleet, "tenants/staging/dev-team.yaml", git_repository("dev-team", "apps", ref) + "---\n"
              + ks("dev-team", "./staging", source="dev-team", namespace="apps"))
        run = check(fleet, ".")
        assert run.code == 0, (ref, run.out)
        sources = [d for d in run.report["defects"] if d["validator"] == "source"]
        assert (not sources) == rendered, ref


def test_semver_ranges_as_masterminds_reads_them() -> None:
    tags = ["v1.0.0", "v1.2.3", "v1.2.10", "v1.3.0-rc.1", "v2.0.0", "0.2.5"]
    assert latest(">=1.0.0 <2.0.0", tags) == "v1.2.10"
    assert latest("~1.2", tags) == "v1.2.10"
    assert latest("^0.2", tags) == "0.2.5"
    assert latest("1.0 - 1.2", tags) == "v1.2.10"
    assert latest(">=1.3.0-rc.0", tags) == "v2.0.0"  # pre-releases lose to releases
    assert latest("<1.0.0 || 2.x", tags) == "v2.0.0"
    assert latest("3.x", tags) is None


def test_one_file_applied_by_two_trees_is_two_roots(repo: Repo) -> None:
    """A tenant's Kustomization written once and patched per cluster: each
    cluster's variant is a root (named by the tree it was found in)."""
    repo.write("tenants/base/sync.yaml", ks("dev-team", "./tenants/app", namespace="apps"))
    repo.write("tenants/base/kustomization.yaml", "resources:\n- sync.yaml\n")
    for cluster in ("staging", "production"):
        repo.write(f"tenants/{cluster}/kustomization.yaml", dedent(f"""
            resources:
            - ../base
            patches:
            - target: {{kind: Kustomization}}
              patch: |
                - op: replace
                  path: /spec/path
                  value: ./tenants/app/{cluster}
            """))
        repo.write(f"tenants/app/{cluster}/cm.yaml", f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {cluster}\n")
    roots = {r.name: r for r in repo.found().roots}
    assert sorted(roots) == ["flux:apps/dev-team@tenants/production", "flux:apps/dev-team@tenants/staging"]
    assert roots["flux:apps/dev-team@tenants/staging"].directory == repo.top / "tenants/app/staging"


SETTINGS_USER = """
postBuild:
  substituteFrom:
  - kind: Secret
    name: cluster-secrets
"""


def test_substitute_from_only_what_a_root_applies(tmp_path: Path) -> None:
    """kustomize-controller reads ``substituteFrom`` objects from the cluster
    (fluxcd/pkg kustomize_varsub.go ``LoadVariables``): a Secret written for a
    bootstrap script that no root applies gives no values; findings about
    the values that hold its variables are not judged, and
    ``gitops.cluster-objects`` says it is in the cluster after all."""
    top = tmp_path / "lab"
    write(top, "clusters/main/flux-system/gotk-sync.yaml", ks("flux-system", "./clusters/main"))
    write(top, "clusters/main/apps.yaml", ks("apps", "./apps", spec=SETTINGS_USER))
    write(top, "bootstrap/cluster-secrets.yaml", dedent("""
        apiVersion: v1
        kind: Secret
        metadata:
          name: cluster-secrets
          namespace: flux-system
        stringData:
          REPLICAS: op://vault/cluster/replicas
        """))
    write(top, "apps/deploy.yaml", dedent("""
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: web
        spec:
          replicas: ${REPLICAS}
          selector:
            matchLabels: {app: web}
          template:
            metadata:
              labels: {app: web}
            spec:
              containers:
              - name: web
                image: nginx:1.27
        """))
    run = check(top, ".")
    assert run.code == 0, run.out
    assert [(p, line, v) for p, line, v, by in run.suppressed() if by == "placeholder"] == \
        [("apps/deploy.yaml", 6, "schema")]
    [info] = [d for d in run.report["defects"] if "cluster-secrets" in d["message"]]
    assert (info["path"], info["line"]) == ("clusters/main/apps.yaml", 15)
    assert "no Flux Kustomization or Argo CD Application of the repository applies it" in info["message"]
    # listed as in the cluster: its (template) value is what the Deployment
    # gets, an error at the Secret's line with the ${REPLICAS} line in the trail
    write(top, ".krmcheck.yaml", "gitops:\n  cluster-objects: [bootstrap/]\n")
    run = check(top, ".")
    assert run.code == 1
    [error] = run.report["defects"][:1]
    assert (error["path"], error["line"], error["validator"]) == ("bootstrap/cluster-secrets.yaml", 7, "schema")
    assert [(t["path"], t["line"]) for t in error["trail"]] == [("apps/deploy.yaml", 6)]


def test_a_cluster_directory_nothing_applies_is_the_clusters_sync_path(tmp_path: Path) -> None:
    """A Flux Kustomization whose ``substituteFrom`` ConfigMap lies beside it,
    in a directory no root of the repository applies (bootstrap or a
    FluxInstance applies it from outside): the directory is the cluster's
    sync path, its values are used, and one info says so."""
    top = tmp_path / "lab"
    write(top, "kubernetes/clusters/main/apps.yaml", ks("cluster-apps", "./kubernetes/apps/main", spec="""
        postBuild:
          substituteFrom:
          - kind: ConfigMap
            name: cluster-info
        """))
    write(top, "kubernetes/clusters/main/cluster-info.yaml", dedent("""
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: cluster-info
          namespace: flux-system
        data:
          CLUSTER: main
        """))
    write(top, "kubernetes/apps/main/runner.yaml", dedent("""
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: runner-${CLUSTER}
          namespace: default
        """))
    write(top, "kubernetes/clusters/main/infra.yaml", ks("cluster-infra", "./kubernetes/infra/main", spec="""
        postBuild:
          substituteFrom:
          - kind: ConfigMap
            name: cluster-info
        """))
    write(top, "kubernetes/infra/main/runner.yaml", dedent("""
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: infra-${CLUSTER}
          namespace: default
        """))
    run = check(top, ".")
    assert run.code == 0, run.out
    assert [d for d in run.report["defects"] if d["severity"] != "info"] == []
    # one note for the directory, however many Kustomizations read from it
    [info] = [d for d in run.report["defects"] if "sync path" in d["message"]]
    assert info["message"] == ("kubernetes/clusters/main/ is taken as the cluster's sync path (what bootstrap "
                               "or a FluxInstance applies): nothing in the repository applies it, and 2 "
                               "substituteFrom references of its Flux Kustomizations read objects written "
                               "there, whose values are used")
    # the cluster's value is what the name gets: one that makes it invalid is
    # an error at the value's line
    info_file = top / "kubernetes/clusters/main/cluster-info.yaml"
    write(top, "kubernetes/clusters/main/cluster-info.yaml",
          info_file.read_text().replace("CLUSTER: main", "CLUSTER: Main"))
    run = check(top, ".")
    assert run.code == 1
    assert run.located("error") == [("kubernetes/clusters/main/cluster-info.yaml", 7, "metadata")] * 2
