"""Which controller objects become roots, and which plain roots they replace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from krmcheck.cli import main
from tests.gitops.conftest import Repo, dedent

FLUX = """
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: {name}
  namespace: flux-system
spec:
  interval: 10m
  path: {path}
  prune: true
  sourceRef:
    kind: {kind}
    name: {source}
"""

APP = """
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
spec:
  project: default
  source:
    repoURL: {url}
    path: {path}
  destination:
    server: https://kubernetes.default.svc
"""

CM = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
"""


def flux(name: str, path: str, source: str = "flux-system", kind: str = "GitRepository") -> str:
    return dedent(FLUX.format(name=name, path=path, source=source, kind=kind))


def test_sources_of_this_repository(repo: Repo) -> None:
    repo.write("clusters/prod/sync.yaml", flux("bootstrap", "./a")
               + "---\n" + flux("by-url", "./b", source="mine")
               + "---\n" + flux("other-repo", "./c", source="theirs")
               + "---\n" + flux("oci", "./d", source="flux-system", kind="OCIRepository"))
    repo.write("clusters/prod/sources.yaml", """
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: GitRepository
        metadata:
          name: mine
          namespace: flux-system
        spec:
          url: ssh://git@github.com/org/repo
        ---
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: GitRepository
        metadata:
          name: theirs
          namespace: flux-system
        spec:
          url: https://github.com/org/theirs
        """)
    for d in "abcd":
        repo.write(f"{d}/cm.yaml", CM.format(name=d))
    names = [r.name for r in repo.found(urls=("https://github.com/org/repo.git",)).roots]
    assert names == ["flux:flux-system/bootstrap", "flux:flux-system/by-url"]


def test_argocd_applications_by_repo_url(repo: Repo) -> None:
    repo.write("argocd/apps.yaml", dedent(APP.format(name="ours", url="git@github.com:org/repo.git", path="a"))
               + "---\n" + dedent(APP.format(name="theirs", url="https://github.com/org/x", path="b")))
    repo.write("a/cm.yaml", CM.format(name="a"))
    repo.write("b/cm.yaml", CM.format(name="b"))
    assert [r.name for r in repo.found(urls=("https://github.com/org/repo",)).roots] == ["argocd:ours"]
    assert repo.found().roots == ()  # no URL known: no Application is ours


def test_controller_roots_found_through_other_controller_roots(repo: Repo) -> None:
    """clusters/prod is applied by the bootstrap Kustomization; what it holds
    (with the namespace its kustomization gives) is applied in turn."""
    repo.write("clusters/prod/flux-system/kustomization.yaml", "resources:\n- sync.yaml\n")
    repo.write("clusters/prod/flux-system/sync.yaml", flux("flux-system", "./clusters/prod").replace(
        "  prune: true\n", "  prune: true\n  postBuild:\n    substitute:\n      CLUSTER: prod\n"))
    repo.write("clusters/prod/apps.yaml", flux("apps", "./apps/${CLUSTER}"))
    repo.write("apps/prod/kustomization.yaml", "resources:\n- cm.yaml\n")
    repo.write("apps/prod/cm.yaml", CM.format(name="app"))
    found = repo.found()
    assert [r.name for r in found.roots] == ["flux:flux-system/apps", "flux:flux-system/flux-system"]
    replaced = {p.relative_to(repo.top).as_posix() for p in found.replaced}
    assert {"apps/prod", "clusters/prod", "clusters/prod/apps.yaml"} <= replaced


def run(top: Path, *args: str) -> dict:
    out = top.parent / "report.json"
    main([".", "--json", str(out), *args])
    return json.loads(out.read_text(encoding="utf-8"))


def test_the_mode_can_be_switched_off(repo: Repo) -> None:
    repo.write("clusters/prod/sync.yaml", flux("apps", "./apps"))
    repo.write("apps/kustomization.yaml", "resources:\n- cm.yaml\n")
    repo.write("apps/cm.yaml", CM.format(name="app"))
    roots = lambda report: sorted(r["root"] for r in report["roots"])  # noqa: E731
    # the file that holds the object is applied by hand (flux bootstrap): still a root
    assert roots(run(repo.top)) == ["clusters/prod/sync.yaml", "flux:flux-system/apps"]
    assert roots(run(repo.top, "--roots", "kustomize")) == ["apps", "clusters/prod/sync.yaml"]
    assert roots(run(repo.top, "--roots", "all")) == ["apps", "clusters/prod/sync.yaml",
                                                      "flux:flux-system/apps"]
    repo.write(".krmcheck.yaml", "gitops:\n  enabled: false\n")
    assert roots(run(repo.top)) == ["apps", "clusters/prod/sync.yaml"]


def test_roots_kustomize_is_not_combined(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--roots", "kustomize", "--roots", "some/dir"])
    assert "--roots kustomize cannot be combined" in capsys.readouterr().err


def test_a_root_that_cannot_be_rendered_is_a_build_error_at_the_path_line(repo: Repo) -> None:
    repo.write("clusters/prod/sync.yaml", flux("apps", "./nowhere"))
    report = run(repo.top)
    [finding] = [f for f in report["findings"] if f["validator"] == "build"]
    assert (finding["path"], finding["line"], finding["root"]) == ("clusters/prod/sync.yaml", 8,
                                                                  "flux:flux-system/apps")
    assert "kustomization path not found: nowhere" in finding["message"]


def test_changed_files_select_the_controller_roots_that_read_them(repo: Repo) -> None:
    """As pre-commit passes them: a changed manifest, the object's own file or
    a variable's ConfigMap selects the controller root; its plain directory
    is not checked instead."""
    repo.write("clusters/prod/sync.yaml", flux("apps", "./apps").replace(
        "  prune: true\n", "  prune: true\n  postBuild:\n    substituteFrom:\n"
                           "    - kind: ConfigMap\n      name: vars\n"))
    # what flux bootstrap writes: the cluster's directory applied, the variables with it
    repo.write("clusters/prod/flux-system/gotk-sync.yaml", flux("flux-system", "./clusters/prod"))
    repo.write("clusters/prod/vars.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: vars
          namespace: flux-system
        data:
          NAME: app
        """)
    repo.write("other/sync.yaml", flux("other", "./other-app"))
    repo.write("other-app/cm.yaml", CM.format(name="other"))
    repo.write("apps/kustomization.yaml", "resources:\n- cm.yaml\n")
    repo.write("apps/cm.yaml", CM.format(name="${NAME}"))
    for changed in ("apps/cm.yaml", "clusters/prod/sync.yaml", "clusters/prod/vars.yaml"):
        out = repo.top.parent / "report.json"
        main([changed, "--json", str(out)])
        roots = sorted(r["root"] for r in json.loads(out.read_text(encoding="utf-8"))["roots"])
        assert "flux:flux-system/apps" in roots and "apps" not in roots, changed
        assert "flux:flux-system/other" not in roots


def test_external_artifacts_made_from_this_repository_and_one_name_per_cluster(repo: Repo) -> None:
    """flux2-kustomize-helm-example's layout: an ArtifactGenerator per
    cluster copies directories of the flux-system GitRepository; each
    cluster's apps Kustomization reads its artifact."""
    for cluster in ("production", "staging"):
        repo.write(f"clusters/{cluster}/artifacts.yaml", f"""
            apiVersion: source.extensions.fluxcd.io/v1beta1
            kind: ArtifactGenerator
            metadata:
              name: flux-system
              namespace: flux-system
            spec:
              sources:
              - alias: monorepo
                kind: GitRepository
                name: flux-system
              artifacts:
              - name: apps
                copy:
                - from: "@monorepo/apps/base/**"
                  to: "@artifact/base/"
                - from: "@monorepo/apps/{cluster}/**"
                  to: "@artifact/{cluster}/"
            """)
        repo.write(f"clusters/{cluster}/apps.yaml", flux("apps", f"./{cluster}", source="apps",
                                                         kind="ExternalArtifact"))
        repo.write(f"apps/{cluster}/kustomization.yaml", "resources:\n- ../base\n")
    repo.write("apps/base/kustomization.yaml", "resources:\n- cm.yaml\n")
    repo.write("apps/base/cm.yaml", CM.format(name="app"))
    roots = {r.name: r for r in repo.found().roots}
    assert sorted(roots) == ["flux:flux-system/apps@clusters/production",
                             "flux:flux-system/apps@clusters/staging"]
    assert roots["flux:flux-system/apps@clusters/staging"].directory == (repo.top / "apps/staging")


def test_flux_system_is_this_repository_whatever_its_url_and_the_origin_remote(repo: Repo) -> None:
    """A checkout's origin may be a mirror, a fork or a local path (as in CI)."""
    from dulwich.repo import Repo as GitRepo

    with GitRepo.init(str(repo.top)) as git:
        config = git.get_config()
        config.set((b"remote", b"origin"), b"url", b"/somewhere/else")
        config.write_to_path()
    source = dedent("""
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: GitRepository
        metadata:
          name: flux-system
          namespace: flux-system
        spec:
          url: https://github.com/example/upstream
        """)
    repo.write("clusters/prod/sync.yaml", source + "---\n" + flux("bootstrap", "./a"))
    repo.write("a/cm.yaml", CM.format(name="a"))
    assert [r.name for r in repo.found().roots] == ["flux:flux-system/bootstrap"]


def test_strict_substitution_makes_an_undefined_variable_an_error(tmp_path: Path) -> None:
    from tests.checkrun import check, write

    write(tmp_path, "clusters/prod/sync.yaml", dedent("""
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: app, namespace: flux-system}
        spec:
          path: ./app
          sourceRef: {kind: GitRepository, name: flux-system}
          postBuild:
            substitute: {DEFINED: "yes"}
        """))
    write(tmp_path, "app/cm.yaml", CM.format(name="a").rstrip("\n") + "\ndata:\n  level: ${LOG_LEVEL}\n")

    def substitution() -> list[tuple[str, int, str]]:
        return [(d["path"], d["line"], d["severity"]) for d in check(tmp_path, ".").report["defects"]
                if d["validator"] == "substitution"]

    assert [s for _, _, s in substitution()] == ["warning"]
    write(tmp_path, ".krmcheck.yaml", "gitops:\n  strict-substitution: true\n")
    [(path, _, severity)] = substitution()
    assert (path, severity) == ("app/cm.yaml", "error")


# --- OCI artifacts the repository pushes, and the sync a FluxInstance defines -------------------

PUSH_WORKFLOW = """
    name: publish
    on: {push: {branches: [main]}}
    env:
      OCI_REPO: "oci://ghcr.io/example/manifests/${{ github.event.repository.name }}"
    jobs:
      publish:
        runs-on: ubuntu-latest
        steps:
          - run: |
              flux push artifact "$OCI_REPO:$(git rev-parse --short HEAD)" \\
                --path="./deploy" \\
                --source="$(git config --get remote.origin.url)"
    """

CHILD = """
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata: {name: child, namespace: flux-system}
    spec:
      path: ./apps/child
      sourceRef: {kind: OCIRepository, name: flux-system}
    """


def _oci_repository(repo: Repo, instance: str) -> None:
    repo.write(".github/workflows/publish.yaml", PUSH_WORKFLOW)
    repo.write("deploy/clusters/prod/flux-system/instance.yaml", instance)
    repo.write("deploy/clusters/prod/apps.yaml", dedent("""
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: apps, namespace: flux-system}
        spec:
          interval: 10m
          prune: true
          path: ./apps
          sourceRef: {kind: OCIRepository, name: flux-system}
        """))
    repo.write("deploy/apps/kustomization.yaml", "resources:\n- child.yaml\n")
    repo.write("deploy/apps/child.yaml", CHILD)
    repo.write("deploy/apps/child/cm.yaml", CM.format(name="child"))
    repo.write("elsewhere/ks.yaml", CHILD.replace("name: child", "name: outside"))  # not in the artifact


FLUX_INSTANCE = """
    apiVersion: fluxcd.controlplane.io/v1
    kind: FluxInstance
    metadata: {name: flux, namespace: flux-system}
    spec:
      distribution: {version: "2.x", registry: ghcr.io/fluxcd}
      sync:
        kind: OCIRepository
        url: oci://ghcr.io/example/manifests/home-ops
        ref: latest
        path: ./clusters/prod
    """


def test_an_oci_artifact_the_repository_pushes_is_the_directory_it_pushes(repo: Repo) -> None:
    """The flux-system OCIRepository a FluxInstance makes from an artifact a
    workflow pushes (its URL names the repository by a GitHub context, which
    a checkout whose origin is a mirror cannot say: any name)."""
    _oci_repository(repo, FLUX_INSTANCE)
    roots = {r.name: r for r in repo.found().roots}
    assert sorted(roots) == ["flux:flux-system/apps", "flux:flux-system/child", "flux:flux-system/flux-system"]
    # the instance's own sync is a root: the cluster's directory, as the operator applies it
    assert roots["flux:flux-system/flux-system"].directory == repo.top / "deploy/clusters/prod"
    assert roots["flux:flux-system/apps"].directory == repo.top / "deploy/apps"
    assert roots["flux:flux-system/child"].directory == repo.top / "deploy/apps/child"
    assert roots["flux:flux-system/apps"].source == (
        "OCIRepository flux-system/flux-system (pushed from deploy by .github/workflows/publish.yaml)")


def test_an_oci_artifact_no_script_pushes_is_not_this_repository(repo: Repo) -> None:
    _oci_repository(repo, FLUX_INSTANCE.replace("ghcr.io/example/manifests", "ghcr.io/other/manifests"))
    assert repo.found().roots == ()


def test_the_flux_instance_chart_values_define_the_sync(repo: Repo) -> None:
    """The flux-instance Helm chart, released by a HelmRelease inside a
    ResourceSet, with its values in a ConfigMap a kustomization generates."""
    _oci_repository(repo, dedent("""
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSet
        metadata: {name: flux-instance, namespace: flux-system}
        spec:
          resources:
            - apiVersion: source.toolkit.fluxcd.io/v1
              kind: OCIRepository
              metadata: {name: flux-instance, namespace: flux-system}
              spec:
                url: oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance
                ref: {tag: 0.30.0}
            - apiVersion: helm.toolkit.fluxcd.io/v2
              kind: HelmRelease
              metadata: {name: flux-instance, namespace: flux-system}
              spec:
                chartRef: {kind: OCIRepository, name: flux-instance}
                valuesFrom:
                  - kind: ConfigMap
                    name: flux-instance-values
        """))
    repo.write("deploy/clusters/prod/flux-system/kustomization.yaml", dedent("""
        resources: [instance.yaml]
        configMapGenerator:
          - name: flux-instance-values
            namespace: flux-system
            files: [values.yaml]
        generatorOptions: {disableNameSuffixHash: true}
        """))
    repo.write("deploy/clusters/prod/flux-system/values.yaml", dedent("""
        instance:
          sync:
            kind: OCIRepository
            url: oci://ghcr.io/example/manifests/home-ops
            path: ./clusters/prod
        """))
    roots = {r.name: r for r in repo.found().roots}
    # the release the ResourceSet makes is a root of its own (its chart is not here)
    assert sorted(roots) == ["flux-helm:flux-system/flux-instance", "flux:flux-system/apps",
                             "flux:flux-system/child", "flux:flux-system/flux-system"]
    assert roots["flux:flux-system/flux-system"].directory == repo.top / "deploy/clusters/prod"


def test_the_instance_patches_are_not_the_syncs_and_generated_artifacts_follow_the_pushed_directory(
        repo: Repo) -> None:
    """The FluxInstance's kustomize.patches patch the objects the operator
    generates, not what its sync applies: one for a ConfigMap leaves the
    cluster's settings as written. An ArtifactGenerator copying from the
    pushed OCIRepository maps a path of its artifact to the pushed directory."""
    instance = FLUX_INSTANCE.rstrip() + (
        "\n      kustomize:"
        "\n        patches:"
        "\n          - target: {kind: ConfigMap, name: cluster-settings}"
        "\n            patch: |"
        "\n              - {op: add, path: /data/patched, value: by the instance}\n")
    _oci_repository(repo, instance)
    repo.write("deploy/clusters/prod/settings.yaml", CM.format(name="cluster-settings") + "data: {}\n")
    repo.write("deploy/clusters/prod/generator.yaml", dedent("""
        apiVersion: source.extensions.fluxcd.io/v1beta1
        kind: ArtifactGenerator
        metadata: {name: apps, namespace: flux-system}
        spec:
          sources:
            - {alias: repo, kind: OCIRepository, name: flux-system}
          artifacts:
            - name: team
              copy:
                - from: "@repo/teams/one/"
                  to: "@artifact/"
        """))
    repo.write("deploy/clusters/prod/team.yaml", dedent("""
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: team, namespace: flux-system}
        spec:
          path: ./
          sourceRef: {kind: ExternalArtifact, name: team}
        """))
    repo.write("deploy/teams/one/cm.yaml", CM.format(name="team-one"))
    assert repo.root("flux:flux-system/team").directory == repo.top / "deploy/teams/one"
    rendered = repo.render("flux:flux-system/flux-system")
    [settings] = [r for r in rendered.resources if r.name == "cluster-settings"]
    assert settings.node.to_data()["data"] == {}
    assert rendered.problems == []


# the Flux Operator guide's own example: every controller's Deployment, and
# the sync Kustomization given the cluster's settings
INSTANCE_PATCHES = """
    apiVersion: fluxcd.controlplane.io/v1
    kind: FluxInstance
    metadata: {name: flux, namespace: flux-system}
    spec:
      distribution: {version: "2.x", registry: ghcr.io/fluxcd}
      sync:
        kind: GitRepository
        url: https://github.com/example/fleet.git
        ref: refs/heads/main
        path: clusters/prod
      kustomize:
        patches:
          - target: {kind: Deployment}
            patch: |
              - op: add
                path: /spec/template/spec/containers/0/args/-
                value: --concurrent=10
          - target: {kind: Kustomization, name: flux-system}
            patch: |
              - op: add
                path: /spec/postBuild
                value: {substituteFrom: [{kind: ConfigMap, name: cluster-settings}]}
    """

DEPLOYMENT = """
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: default}
    spec:
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers:
            - {name: web, image: "nginx:1.27", args: [--port=80]}
    """

FLEET = ("https://github.com/example/fleet",)


def _cluster_with_instance(repo: Repo, instance: str = INSTANCE_PATCHES) -> None:
    repo.write("clusters/prod/flux-system/instance.yaml", instance)
    repo.write("clusters/prod/settings.yaml", CM.format(name="cluster-settings")
               + "  namespace: flux-system\ndata: {CLUSTER: prod}\n")
    repo.write("clusters/prod/web.yaml", DEPLOYMENT)
    repo.write("clusters/prod/top.yaml", CM.format(name="top-${CLUSTER}") + "  namespace: default\n")


def test_an_instance_patch_for_the_controllers_leaves_the_apps_deployment_as_written(repo: Repo) -> None:
    """``target: {kind: Deployment}`` is for the Flux controllers the operator
    generates; a Deployment the sync applies is not one of them."""
    _cluster_with_instance(repo)
    rendered = repo.render("flux:flux-system/flux-system", FLEET)
    [web] = [r for r in rendered.resources if r.kind == "Deployment"]
    assert web.node.to_data()["spec"]["template"]["spec"]["containers"][0]["args"] == ["--port=80"]
    # nor is the patch the sync Kustomization's own
    assert "patches" not in repo.root("flux:flux-system/flux-system", FLEET).obj.to_data()["spec"]


def test_an_instance_patch_of_the_sync_kustomization_gives_the_cluster_settings(repo: Repo) -> None:
    """A patch giving the sync Kustomization ``postBuild.substituteFrom``: the
    cluster's directory is substituted from its settings, and the value
    points at the patch's line."""
    _cluster_with_instance(repo)
    root = repo.root("flux:flux-system/flux-system", FLEET)
    post = root.obj.to_data()["spec"]["postBuild"]
    assert post == {"substituteFrom": [{"kind": "ConfigMap", "name": "cluster-settings"}]}
    written = root.obj.mapping("spec").items["postBuild"]  # type: ignore[union-attr]
    assert (written.origin.path, written.origin.line) == ("clusters/prod/flux-system/instance.yaml", 22)
    rendered = repo.render("flux:flux-system/flux-system", FLEET)
    assert "top-prod" in [r.name for r in rendered.resources]
    assert rendered.problems == [] and rendered.placeholders == 0


def test_an_instance_patch_that_cannot_apply_is_a_warning_at_its_line(repo: Repo) -> None:
    """The operator's build of the instance fails with it; the sync is
    followed without it."""
    broken = INSTANCE_PATCHES.replace("path: /spec/postBuild", "path: /spec/postBuild/substitute/CLUSTER")
    _cluster_with_instance(repo, broken)
    rendered = repo.render("flux:flux-system/flux-system", FLEET)
    [problem] = [p for p in rendered.problems if p.validator == "flux-instance"]
    assert problem.severity == "warning"
    assert (problem.origin.path, problem.origin.line) == ("clusters/prod/flux-system/instance.yaml", 20)
    assert "top-${CLUSTER}" in [r.name for r in rendered.resources]


# a HelmRelease of the flux-instance chart, up to its sync's path (at the indentation of ``sync:``'s keys)
INSTANCE_RELEASE = dedent("""
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: HelmRepository
        metadata: {name: controlplane, namespace: flux-system}
        spec:
          type: oci
          url: oci://ghcr.io/controlplaneio-fluxcd/charts
        ---
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: flux-instance, namespace: flux-system}
        spec:
          interval: 1h
          chart:
            spec:
              chart: flux-instance
              sourceRef: {kind: HelmRepository, name: controlplane}
          values:
            instance:
              sync:
                kind: GitRepository
                url: https://github.com/example/fleet
                ref: refs/heads/main
        """)


def test_a_flux_instance_chart_release_with_inline_values_defines_the_sync(repo: Repo) -> None:
    """A HelmRelease of the flux-instance chart written as itself (no
    ResourceSet makes it): ``values.instance.sync`` is the sync, and
    ``values.instance.kustomize.patches`` patch its Kustomization."""
    repo.write("clusters/prod/flux-system/flux-instance.yaml", INSTANCE_RELEASE
               + "        path: clusters/prod\n"
               + "      kustomize:\n"
               + "        patches:\n"
               + "          - target: {kind: Kustomization}\n"
               + "            patch: |\n"
               + "              - op: add\n"
               + "                path: /spec/postBuild\n"
               + "                value: {substitute: {CLUSTER: prod}}\n")
    repo.write("clusters/prod/top.yaml", CM.format(name="top-${CLUSTER}") + "  namespace: default\n")
    roots = {r.name: r for r in repo.found(FLEET).roots}
    assert "flux-helm:flux-system/flux-instance" in roots
    sync = roots["flux:flux-system/flux-system"]
    assert sync.directory == repo.top / "clusters/prod"
    assert sync.source.endswith("(the sync of the FluxInstance in clusters/prod/flux-system/flux-instance.yaml)")
    written = sync.obj.mapping("spec").items["postBuild"]  # type: ignore[union-attr]
    assert (written.origin.path, written.origin.line) == ("clusters/prod/flux-system/flux-instance.yaml", 30)
    rendered = repo.render("flux:flux-system/flux-system", FLEET)
    assert "top-prod" in [r.name for r in rendered.resources]


def test_a_flux_instance_release_whose_sync_path_is_a_variable_is_not_followed_as_written(repo: Repo) -> None:
    """aclerici38/home-ops: one flux-instance release shared by the
    clusters, ``path: "${FLUX_PATH}"``, filled by each cluster's
    Kustomization (postBuild) or by the bootstrap's envsubst: read as
    written, it names no directory, and is no sync of its own."""
    release = INSTANCE_RELEASE + "        path: \"${FLUX_PATH}\"\n"
    repo.write("apps/shared/flux-instance/release.yaml", release)
    repo.write("clusters/prod/top.yaml", CM.format(name="top") + "  namespace: default\n")
    roots = {r.name for r in repo.found(FLEET).roots}
    assert "flux-helm:flux-system/flux-instance" in roots
    assert not any(name.startswith("flux:flux-system/flux-system") for name in roots)
    # written with the cluster's own path, the release is the cluster's sync
    repo.write("apps/shared/flux-instance/release.yaml", release.replace('"${FLUX_PATH}"', "clusters/prod"))
    assert "flux:flux-system/flux-system" in {r.name for r in repo.found(FLEET).roots}


def test_a_git_sync_is_this_repository_by_its_url_or_by_holding_its_path(repo: Repo) -> None:
    """A clone of a mirror or a fork has another origin: the directory the
    sync applies being here is the evidence, as for flux-system."""
    instance = FLUX_INSTANCE.replace("kind: OCIRepository", "kind: GitRepository").replace(
        "url: oci://ghcr.io/example/manifests/home-ops", "url: https://github.com/example/home-ops")
    repo.write("clusters/prod/flux-system/instance.yaml", instance)
    repo.write("clusters/prod/cm.yaml", CM.format(name="settings"))
    mine = ("https://github.com/me/a-mirror",)
    assert [r.name for r in repo.found(mine).roots] == ["flux:flux-system/flux-system"]
    repo.write("clusters/prod/flux-system/instance.yaml", instance.replace("./clusters/prod", "./clusters/gone"))
    assert repo.found(mine).roots == ()


def test_a_git_source_naming_a_repository_of_this_ones_owner_is_this_one_where_it_holds_the_path(
        repo: Repo) -> None:
    """Liana64/k8s-gitops, renamed home-infra: the cluster's GitRepository
    names the repository by its other name; the owner is the same, and its
    Kustomization applies the directory that holds the GitRepository: the
    repository's own sync. The Kustomizations it applies follow."""
    source = ("apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\n"
              "metadata: {name: home-infra, namespace: flux-system}\n"
              "spec:\n  url: https://github.com/me/home-infra.git\n  ref: {branch: main}\n")
    repo.write("clusters/prod/config/sync.yaml", source + "---\n" + flux("cluster", "./clusters/prod", "home-infra"))
    repo.write("clusters/prod/apps.yaml", flux("apps", "./apps", "home-infra"))
    repo.write("apps/cm.yaml", CM.format(name="settings"))
    mine = ("https://github.com/me/k8s-gitops",)
    assert {"flux:flux-system/cluster", "flux:flux-system/apps"} <= {r.name for r in repo.found(mine).roots}
    # another owner's repository is another repository
    assert not {r.name for r in repo.found(("https://github.com/you/k8s-gitops",)).roots} & {
        "flux:flux-system/cluster", "flux:flux-system/apps"}
    # a directory that does not hold the GitRepository is no evidence: the
    # owner's other repository may have one of the same name
    repo.write("clusters/prod/config/sync.yaml", source + "---\n" + flux("cluster", "./apps", "home-infra"))
    assert "flux:flux-system/cluster" not in [r.name for r in repo.found(mine).roots]
    # where the bootstrap source names this repository as it is, the other
    # name is the owner's other repository (tyzbit/fleet-infra's private
    # kubernetes-secrets, laid out like it), even over the directory holding it
    repo.write("clusters/prod/config/sync.yaml", source + "---\n" + flux("cluster", "./clusters/prod", "home-infra"))
    repo.write("clusters/prod/flux-system/gotk-sync.yaml",
               source.replace("home-infra", "flux-system").replace("me/flux-system", "me/k8s-gitops") + "---\n"
               + flux("flux-system", "./clusters/prod"))
    found = {r.name for r in repo.found(mine).roots}
    assert "flux:flux-system/flux-system" in found and not found & {"flux:flux-system/cluster", "flux:flux-system/apps"}
    # so does a FluxInstance whose sync names it (the operator makes the
    # bootstrap source; LukeEvansTech/talos-cluster's private shelly-fleet)
    (repo.top / "clusters/prod/flux-system/gotk-sync.yaml").unlink()
    assert {"flux:flux-system/cluster", "flux:flux-system/apps"} <= {r.name for r in repo.found(mine).roots}
    repo.write("clusters/prod/flux-system/instance.yaml", FLUX_INSTANCE.replace(
        "kind: OCIRepository", "kind: GitRepository").replace(
        "url: oci://ghcr.io/example/manifests/home-ops", "url: https://github.com/me/k8s-gitops"))
    found = {r.name for r in repo.found(mine).roots}
    assert "flux:flux-system/flux-system" in found and not found & {"flux:flux-system/cluster", "flux:flux-system/apps"}


def test_kustomization_files_the_sync_does_not_reach_are_not_applied(repo: Repo) -> None:
    """The sync applies Kustomization files by listing them; one no list
    names (an app taken out of its cluster, an archive) is not applied."""
    repo.write("clusters/prod/apps.yaml", flux("apps", "./apps"))
    repo.write("apps/kustomization.yaml", "resources:\n- on/ks.yaml\n")
    repo.write("apps/on/ks.yaml", flux("on", "./apps/on/app"))
    repo.write("apps/on/app/cm.yaml", CM.format(name="on"))
    repo.write("apps/off/ks.yaml", flux("off", "./apps/off/app"))  # listed nowhere
    repo.write("apps/off/app/cm.yaml", CM.format(name="off"))
    found = repo.found()
    assert [r.name for r in found.roots] == ["flux:flux-system/apps", "flux:flux-system/on"]
    assert repo.top / "apps/off/ks.yaml" in found.replaced  # not checked as a manifest either
    [(note, where)] = [n for n in found.notes if "no Kustomization of the repository applies" in n[0]]
    assert note.startswith("1 root holds Flux objects") and where.path == "apps/off/ks.yaml"
    # an archived app: a kustomization of a Namespace and a Kustomization, and
    # a HelmRelease of its own, that no list names; an app the sync lists by
    # its directory is reached
    repo.write("archive/old/kustomization.yaml", "resources: [ns.yaml, ks.yaml]\n")
    repo.write("archive/old/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: old}\n")
    repo.write("archive/old/ks.yaml", flux("old", "./apps/old/app"))
    repo.write("archive/old/app/hr.yaml", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
                                          "metadata: {name: old, namespace: old}\nspec: {}\n")
    repo.write("apps/listed/kustomization.yaml", "resources: [ns.yaml, ks.yaml]\n")
    repo.write("apps/listed/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: listed}\n")
    repo.write("apps/listed/ks.yaml", flux("listed", "./apps/on/app"))
    repo.write("apps/kustomization.yaml", "resources:\n- on/ks.yaml\n- listed\n")
    found = repo.found()
    assert {repo.top / "archive/old", repo.top / "archive/old/app/hr.yaml"} <= found.replaced
    assert repo.top / "apps/listed" in found.replaced  # (read by the sync's root)
    assert "flux:flux-system/listed" in [r.name for r in found.roots]
    # without a sync that reaches a Kustomization, every file is a root of its own
    repo.write("apps/kustomization.yaml", "resources: []\n")
    assert "flux:flux-system/off" in [r.name for r in repo.found().roots]


def test_a_file_beside_where_the_sync_starts_is_applied_with_its_directory(repo: Repo) -> None:
    """flux2-multi-tenancy: the cluster's directory holds tenants.yaml, whose
    Kustomization applies the tenants' ones, and infrastructure.yaml, whose
    Kustomizations apply plain directories; flux bootstrap writes the sync
    of the whole directory. Flux applies a directory, never one file of it:
    where the directory has no kustomization, both files are applied."""
    repo.write("clusters/prod/tenants.yaml", flux("tenants", "./tenants"))
    repo.write("tenants/kustomization.yaml", "resources:\n- team/ks.yaml\n")
    repo.write("tenants/team/ks.yaml", flux("team", "./tenants/team/app"))
    repo.write("tenants/team/app/cm.yaml", CM.format(name="team"))
    repo.write("clusters/prod/infrastructure.yaml", flux("kyverno", "./infra/kyverno"))
    # what it applies holds Flux objects whose source is not here (an OCIRepository)
    repo.write("infra/kyverno/sync.yaml", flux("kyverno-controller", "./", "kyverno", "OCIRepository"))
    found = repo.found()
    assert "flux:flux-system/kyverno" in [r.name for r in found.roots]
    # and what it reads is applied too: no note says it is not
    assert not [n for n in found.notes if "no Kustomization of the repository applies" in n[0]]
    # a kustomization in the directory lists what is applied: a file it leaves out is not
    repo.write("clusters/prod/kustomization.yaml", "resources:\n- tenants.yaml\n")
    found = repo.found()
    assert "flux:flux-system/kyverno" not in [r.name for r in found.roots]
    [(note, where)] = [n for n in found.notes if "no Kustomization of the repository applies" in n[0]]
    assert note.startswith("1 root holds") and where.path == "infra/kyverno/sync.yaml"


def test_argocd_applications_are_not_applied_where_the_flux_sync_applies_no_argocd(repo: Repo) -> None:
    """A repository moved from Argo CD to Flux keeps its Applications in an
    archive, or writes ApplicationSets as examples: where the Flux sync
    applies no Argo CD object and installs no Argo CD, nothing applies them."""
    mine = "https://github.com/me/homeops"
    repo.write("clusters/prod/apps.yaml", flux("apps", "./apps"))
    repo.write("apps/kustomization.yaml", "resources:\n- on/ks.yaml\n")
    repo.write("apps/on/ks.yaml", flux("on", "./apps/on/app"))
    repo.write("apps/on/app/cm.yaml", CM.format(name="on"))
    repo.write("archive/old.yaml", dedent(APP.format(name="old", url=mine, path="apps/default/old")))
    found = repo.found((mine,))
    assert "argocd:old" not in [r.name for r in found.roots]
    assert repo.top / "archive/old.yaml" in found.replaced  # not checked as a manifest either
    [(note, where)] = [n for n in found.notes if "Argo CD Applications that nothing applies" in n[0]]
    assert note.startswith("1 root holds") and where.path == "archive/old.yaml"
    # the sync installs Argo CD (its chart): a root Application applied by
    # hand then applies the rest, so an Application no other reads may be one
    repo.write("apps/on/app/argocd.yaml", """
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: argocd, namespace: argocd}
        spec:
          interval: 1h
          chart:
            spec:
              chart: argo-cd
              sourceRef: {kind: HelmRepository, name: argo, namespace: flux-system}
        """)
    assert "argocd:old" in [r.name for r in repo.found((mine,)).roots]
    # or it applies an Application itself
    (repo.top / "apps/on/app/argocd.yaml").unlink()
    repo.write("apps/on/app/web.yaml", dedent(APP.format(name="web", url=mine, path="apps/on/app")))
    assert {"argocd:old", "argocd:web"} <= {r.name for r in repo.found((mine,)).roots}
    # without a Flux sync, an Application no other reads is a bootstrap, applied by hand
    (repo.top / "apps/on/app/web.yaml").unlink()
    repo.write("apps/kustomization.yaml", "resources: []\n")
    assert "argocd:old" in [r.name for r in repo.found((mine,)).roots]


GOTK_SYNC = """
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec:
  url: {url}
  ref: {branch: main}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec:
  path: ./clusters/home
  sourceRef: {kind: GitRepository, name: flux-system}
"""


def test_a_copy_of_another_bootstrap_repository_is_read_from_where_it_lies(repo: Repo) -> None:
    """A demo holding a copy of another repository's bootstrap: its sync
    names that repository, and its ./clusters/home is the copy's, seen from
    the directory above the path the sync is written in; every path read
    from that source is the copy's."""
    mine = ("https://github.com/me/launchpad",)
    repo.write("demos/fleet/clusters/home/flux-system/gotk-sync.yaml",
               GOTK_SYNC.replace("{url}", "https://github.com/someone/fleet.git"))
    repo.write("demos/fleet/clusters/home/flux-system/kustomization.yaml", "resources: [gotk-sync.yaml]\n")
    repo.write("demos/fleet/clusters/home/apps.yaml", flux("apps", "./apps"))
    repo.write("demos/fleet/apps/cm.yaml", CM.format(name="web"))
    roots = {r.name: r for r in repo.found(mine).roots}
    assert roots["flux:flux-system/flux-system"].directory == repo.top / "demos/fleet/clusters/home"
    assert roots["flux:flux-system/apps"].directory == repo.top / "demos/fleet/apps"
    assert "copied to demos/fleet" in roots["flux:flux-system/apps"].source
    assert [r.node.to_data()["metadata"]["name"] for r in repo.render("flux:flux-system/apps", mine).resources] \
        == ["web"]
    # the sync of this repository itself: its path is not here, a defect
    repo.write("demos/fleet/clusters/home/flux-system/gotk-sync.yaml",
               GOTK_SYNC.replace("{url}", "git@github.com:me/launchpad.git"))
    root = repo.root("flux:flux-system/flux-system", mine)
    assert root.directory == repo.top / "clusters/home"
    # a path this repository holds is read from its top, whatever the URL
    repo.write("demos/fleet/clusters/home/flux-system/gotk-sync.yaml",
               GOTK_SYNC.replace("{url}", "https://github.com/someone/fleet.git"))
    repo.write("clusters/home/cm.yaml", CM.format(name="top"))
    assert repo.root("flux:flux-system/flux-system", mine).directory == repo.top / "clusters/home"


def test_a_bootstrap_source_the_repository_does_not_write_is_read_from_where_its_paths_lie(repo: Repo) -> None:
    """No flux-system GitRepository in the repository (a FluxInstance that
    Terraform applies syncs another repository, to which a program pushes
    gitops/ as its top): a Kustomization of that source whose path is not
    here from the top is read from the nearest directory at or above its
    own file that holds it; a path the repository holds from its top, and
    one held from no directory above, are read from the top as ever."""
    mine = ("https://github.com/me/saas",)
    repo.write("gitops/clusters/production/infra.yaml", flux("infra", "infrastructure/production"))
    repo.write("gitops/infrastructure/production/cm.yaml", CM.format(name="infra"))
    repo.write("gitops/clusters/production/gone.yaml", flux("gone", "removed/production"))
    repo.write("gitops/clusters/production/top.yaml", flux("top", "./apps"))
    repo.write("apps/cm.yaml", CM.format(name="top"))
    repo.write("gitops/apps/cm.yaml", CM.format(name="not-read"))
    roots = {r.name: r for r in repo.found(mine).roots}
    assert roots["flux:flux-system/infra"].directory == repo.top / "gitops/infrastructure/production"
    assert "copied to gitops" in roots["flux:flux-system/infra"].source
    assert [r.node.to_data()["metadata"]["name"] for r in repo.render("flux:flux-system/infra", mine).resources] \
        == ["infra"]
    assert roots["flux:flux-system/gone"].directory == repo.top / "removed/production"
    assert roots["flux:flux-system/top"].directory == repo.top / "apps"


def test_a_source_a_script_applies_naming_another_repository_reads_paths_where_they_lie(repo: Repo) -> None:
    """weave-gitops' playwright/: a script applies a flux-system
    GitRepository naming another repository (no sync beside it), then
    Kustomizations of it whose paths are playwright/'s, a copy of that
    repository; where the URL is this repository's, a missing path is a
    defect read from the top."""
    mine = ("https://github.com/me/console",)
    source = GOTK_SYNC.split("---")[0]
    repo.write("playwright/utils/scripts/resources/gitrepo.yaml", source.replace("{url}", "https://github.com/me/tests"))
    repo.write("playwright/utils/data/sets.yaml", flux("sets", "./gitops-sets"))
    repo.write("playwright/gitops-sets/cm.yaml", CM.format(name="sets"))
    roots = {r.name: r for r in repo.found(mine).roots}
    assert roots["flux:flux-system/sets"].directory == repo.top / "playwright/gitops-sets"
    assert [r.node.to_data()["metadata"]["name"] for r in repo.render("flux:flux-system/sets", mine).resources] \
        == ["sets"]
    repo.write("playwright/utils/scripts/resources/gitrepo.yaml", source.replace("{url}", "https://github.com/me/console"))
    assert repo.root("flux:flux-system/sets", mine).directory == repo.top / "gitops-sets"


ARCHIVED_SYNC = """
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec:
  url: https://github.com/me/home-ops
  ref: {branch: main}
  ignore: |
    /*
    !/k8s
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: cluster, namespace: flux-system}
spec:
  path: ./k8s/{cluster}/flux
  sourceRef: {kind: GitRepository, name: flux-system}
"""


def test_a_kustomization_its_own_source_leaves_out_with_no_path_here_is_a_left_over(repo: Repo) -> None:
    """An archived cluster (archive/k8s/old/...): its GitRepository leaves
    out the very file that writes the Kustomization, and the path it names
    is gone: no sync reads it. One note, no root. A file its source leaves
    out whose path is here (a bootstrap applied by hand) is rendered."""
    mine = ("https://github.com/me/home-ops",)
    repo.write("archive/k8s/old/flux/config/cluster.yaml", ARCHIVED_SYNC.replace("{cluster}", "old"))
    repo.write("archive/k8s/old/flux/config/kustomization.yaml", "resources: [cluster.yaml]\n")
    found = repo.found(mine)
    assert [r.name for r in found.roots] == []
    [note] = [n for n, _ in found.notes if "left-overs" in n]
    assert note.startswith("1 Flux Kustomization is written in files their own GitRepository leaves out "
                           "('/*' (archive/k8s/old/flux/config/cluster.yaml:8): "
                           "archive/k8s/old/flux/config/cluster.yaml)")
    repo.write("bootstrap/cluster.yaml", ARCHIVED_SYNC.replace("{cluster}", "prod"))
    repo.write("bootstrap/kustomization.yaml", "resources: [cluster.yaml]\n")
    repo.write("k8s/prod/flux/cm.yaml", CM.format(name="settings"))
    assert [r.name for r in repo.found(mine).roots] == ["flux:flux-system/cluster"]


def test_a_flux_instance_release_applied_into_a_namespace_syncs_under_that_name(repo: Repo) -> None:
    """The flux-instance chart released with no namespace of its own, by a
    Flux Kustomization whose targetNamespace is gitops-system: the
    FluxInstance lands there, and the operator names its sync's source and
    Kustomization after that namespace (or sync.name); the cluster's
    Kustomizations that name that source, with the defaults the sync's
    patches give them, are this repository's."""
    repo.write("kubernetes/apps/gitops-system/flux-instance/ks.yaml", dedent("""
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: flux-instance}
        spec:
          targetNamespace: gitops-system
          path: ./kubernetes/apps/gitops-system/flux-instance/app
        """))
    repo.write("kubernetes/apps/gitops-system/flux-instance/app/kustomization.yaml",
               "resources: [helmrelease.yaml, ocirepository.yaml]\n")
    repo.write("kubernetes/apps/gitops-system/flux-instance/app/ocirepository.yaml", dedent("""
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: OCIRepository
        metadata: {name: flux-instance}
        spec:
          url: oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance
          ref: {tag: 0.58.1}
        """))
    repo.write("kubernetes/apps/gitops-system/flux-instance/app/helmrelease.yaml", dedent("""
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: flux-instance}
        spec:
          chartRef: {kind: OCIRepository, name: flux-instance}
          values:
            instance:
              sync:
                kind: GitRepository
                url: https://github.com/org/home-ops.git
                ref: refs/heads/main
                path: kubernetes/flux/cluster
        """))
    repo.write("kubernetes/flux/cluster/cluster.yaml", dedent("""
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: cluster-apps, namespace: gitops-system}
        spec:
          interval: 10m
          path: ./kubernetes/apps/web
          prune: true
          sourceRef: {kind: GitRepository, name: gitops-system}
        """))
    repo.write("kubernetes/apps/web/cm.yaml", CM.format(name="web"))
    urls = ("https://github.com/org/home-ops.git",)
    roots = {r.name for r in repo.found(urls).roots}
    assert {"flux:gitops-system/gitops-system", "flux:gitops-system/cluster-apps"} <= roots
    # sync.name names them instead
    text = (repo.top / "kubernetes/apps/gitops-system/flux-instance/app/helmrelease.yaml").read_text()
    repo.write("kubernetes/apps/gitops-system/flux-instance/app/helmrelease.yaml",
               text.replace("        kind: GitRepository\n", "        kind: GitRepository\n        name: cluster\n"))
    repo.write("kubernetes/flux/cluster/cluster.yaml",
               (repo.top / "kubernetes/flux/cluster/cluster.yaml").read_text().replace("name: gitops-system}",
                                                                                        "name: cluster}"))
    roots = {r.name for r in repo.found(urls).roots}
    assert {"flux:gitops-system/cluster", "flux:gitops-system/cluster-apps"} <= roots


def test_a_childs_variable_the_parent_could_not_fill_is_unknown_to_the_child(tmp_path: Path) -> None:
    # the app's Kustomization passes OWNER: ${DATABASE_OWNER:=${APP}} to the
    # database Kustomization it makes; its own substitution also reads
    # cluster-secrets, which the repository does not hold, so DATABASE_OWNER
    # may be defined there: the text left in OWNER is not what the child
    # substitutes, and a name made of it is not judged
    from tests.checkrun import check, write

    sync = ("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: %s\n"
            "  namespace: flux-system\nspec:\n  interval: 1h\n  path: %s\n  prune: true\n"
            "  sourceRef: {kind: GitRepository, name: flux-system}\n")
    write(tmp_path, "clusters/main/apps.yaml", sync % ("shop", "./apps/shop") + (
        "  postBuild:\n    substitute:\n      APP: shop\n"
        "    substituteFrom:\n    - {kind: Secret, name: cluster-secrets}\n"))
    write(tmp_path, "apps/shop/ks.yaml", sync % ("${APP}-db", "./database") + (
        "  postBuild:\n    substitute:\n      OWNER: ${DATABASE_OWNER:=${APP}}\n"))
    write(tmp_path, "database/role.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n"
                                          "  name: postgres-${OWNER}\n  namespace: default\n")
    assert [d for d in check(tmp_path).report["defects"] if d["severity"] == "error"] == []
    # with every variable of the parent known, the child's value is the
    # default it gives, and the name is judged as made of it
    write(tmp_path, "clusters/main/apps.yaml", sync % ("shop", "./apps/shop") + (
        "  postBuild:\n    substitute:\n      APP: Shop\n"))
    errors = [d for d in check(tmp_path).report["defects"] if d["severity"] == "error"]
    assert any("'postgres-Shop'" in d["message"] for d in errors)
