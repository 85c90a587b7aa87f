"""Charts a GitOps controller renders: Flux HelmReleases (roots
``flux-helm:NAMESPACE/NAME``) and Argo CD Applications with a helm source,
through the helmCharts runner and a stand-in helm (fake_helm.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from krmcheck.cli import main
from krmcheck.gitops.render import Rendered
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import NONE, ROOT_ONLY
from krmcheck.tree.emit import emit_all
from krmcheck.tree.node import Mapping, Scalar, lookup
from krmcheck.tree.origin import Origin
from tests.gitops.conftest import Repo, dedent
from tests.gitops.fake_helm import install

CHART = {
    "charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    "charts/web/values.yaml": dedent("""
        replicaCount: 1
        image:
          repository: nginx
          tag: "1.0"
        port: 80
        """),
    "charts/web/templates/deployment.yaml": dedent("""
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {{ .Release.Name }}
        spec:
          replicas: {{ .Values.replicaCount }}
          selector:
            matchLabels:
              app: {{ .Release.Name }}
          template:
            metadata:
              labels:
                app: {{ .Release.Name }}
            spec:
              containers:
              - name: web
                image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
                env:
                - name: GREETING
                  value: {{ .Values.greeting | quote }}
        """),
}

RELEASE = """
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web
  namespace: apps
spec:
  interval: 10m
  targetNamespace: prod
  chart:
    spec:
      chart: ./charts/web
      sourceRef:
        kind: GitRepository
        name: flux-system
        namespace: flux-system
  valuesFrom:
  - kind: ConfigMap
    name: web-values
  - kind: ConfigMap
    name: web-values
    valuesKey: greeting
    targetPath: greeting
  values:
    image:
      tag: latest
"""

VALUES = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-values
  namespace: apps
data:
  values.yaml: |
    replicaCount: two
    image:
      tag: "2.0"
  greeting: hello there
"""


@pytest.fixture
def chart_repo(repo: Repo) -> Repo:
    for path, text in CHART.items():
        repo.write(path, text)
    repo.write("apps/release.yaml", RELEASE)
    repo.write("apps/web-values.yaml", VALUES)
    return repo


def with_helm(repo: Repo) -> Path:
    helm = install(repo.top / "bin")
    for key in (NONE, ROOT_ONLY):
        repo._builders[key] = Builder(repo.files, BuildOptions(key, enable_helm=True, helm_command=str(helm)))
    return helm


def calls(helm: Path) -> list[dict]:
    return [json.loads(line) for line in (helm.parent / "calls.jsonl").read_text().splitlines()]


def at(node: object) -> tuple[str, int, int]:
    assert isinstance(node, (Mapping, Scalar))
    return (node.origin.path, node.origin.line, node.origin.col)


def container(rendered: Rendered) -> Mapping:
    [dep] = [r for r in rendered.resources if r.kind == "Deployment"]
    found = lookup(dep.node, ["spec", "template", "spec", "containers"])
    assert found is not None
    first = found.items[0]  # type: ignore[attr-defined]
    assert isinstance(first, Mapping)
    return first


def test_release_is_a_root_of_its_own(chart_repo: Repo) -> None:
    assert [r.name for r in chart_repo.found().roots] == ["flux-helm:apps/web"]


def test_values_in_flux_order_through_the_helm_runner(chart_repo: Repo) -> None:
    helm = with_helm(chart_repo)
    rendered = chart_repo.render("flux-helm:apps/web")
    version, template = calls(helm)
    assert version["argv"] == ["version", "-c", "--short"]
    assert template["argv"][:5] == ["template", "prod-web", str(chart_repo.top / "charts/web"),
                                    "--namespace", "prod"]
    assert "--include-crds" in template["argv"]
    # valuesFrom in order (values.yaml, then greeting at its targetPath), spec.values on top
    assert template["values"] == ['greeting: hello there\nimage:\n  tag: latest\nreplicaCount: two\n']
    assert emit_all([r.node for r in rendered.resources]) == dedent("""
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          labels:
            helm.toolkit.fluxcd.io/name: web
            helm.toolkit.fluxcd.io/namespace: apps
          name: prod-web
        spec:
          replicas: two
          selector:
            matchLabels:
              app: prod-web
          template:
            metadata:
              labels:
                app: prod-web
            spec:
              containers:
              - env:
                - name: GREETING
                  value: hello there
                image: nginx:latest
                name: web
        """)
    assert rendered.problems == []


def test_supplied_values_point_at_their_lines(chart_repo: Repo) -> None:
    with_helm(chart_repo)
    rendered = chart_repo.render("flux-helm:apps/web")
    c = container(rendered)
    # the tag came from spec.values: its line, the chart line in the trail
    image = c.items["image"]
    assert at(image) == ("apps/release.yaml", 25, 7)
    assert [(o.path, o.line) for o in image.trail] == [("apps/release.yaml", 9)]
    # a value of the ConfigMap's values.yaml block: its own line in the block
    [dep] = [r for r in rendered.resources if r.kind == "Deployment"]
    assert at(lookup(dep.node, ["spec", "replicas"])) == ("apps/web-values.yaml", 8, 5)
    # a targetPath value: the ConfigMap key's line
    env = c.items["env"].items[0]  # type: ignore[attr-defined]
    assert at(env.items["value"]) == ("apps/web-values.yaml", 11, 3)
    # what no supplied value wrote points at the HelmRelease's chart line
    assert at(c.items["name"]) == ("apps/release.yaml", 9, 3)


def test_findings_at_the_values_lines(chart_repo: Repo, monkeypatch: pytest.MonkeyPatch,
                                      tmp_path: Path) -> None:
    helm = install(chart_repo.top / "bin")
    out = tmp_path / "report.json"
    code = main([".", "--enable-helm", "--helm-command", str(helm), "--json", str(out)])
    assert code == 1
    report = json.loads(out.read_text())
    found = {(f["validator"], f["path"], f["line"], f["root"]) for f in report["findings"]
             if f["severity"] != "info"}
    assert ("image-tag", "apps/release.yaml", 25, "flux-helm:apps/web") in found
    assert ("schema", "apps/web-values.yaml", 8, "flux-helm:apps/web") in found


def test_without_enable_helm_one_info_finding(chart_repo: Repo, tmp_path: Path) -> None:
    helm = install(chart_repo.top / "bin")
    out = tmp_path / "report.json"
    assert main([".", "--helm-command", str(helm), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    [info] = [f for f in report["findings"] if f["validator"] == "helm"]
    assert (info["severity"], info["path"], info["line"]) == ("info", "apps/release.yaml", 9)
    assert "--enable-helm" in info["message"]
    assert not (helm.parent / "calls.jsonl").exists()


def test_remote_chart_is_not_rendered(repo: Repo) -> None:
    repo.write("infra/cert-manager.yaml", """
        apiVersion: helm.toolkit.fluxcd.io/v2beta2
        kind: HelmRelease
        metadata:
          name: cert-manager
          namespace: cert-manager
        spec:
          chart:
            spec:
              chart: cert-manager
              version: 1.x
              sourceRef:
                kind: HelmRepository
                name: jetstack
        """)
    helm = with_helm(repo)
    rendered = repo.render("flux-helm:cert-manager/cert-manager")
    assert rendered.resources == []
    [p] = rendered.problems
    assert (p.severity, p.validator, p.origin.line) == ("info", "helm", 7)
    assert "HelmRepository cert-manager/jetstack (chart cert-manager)" in p.message
    assert not (helm.parent / "calls.jsonl").exists()


def test_release_applied_by_a_flux_kustomization_is_substituted(chart_repo: Repo) -> None:
    chart_repo.write("clusters/prod/sync.yaml", """
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata:
          name: apps
          namespace: flux-system
        spec:
          path: ./apps
          sourceRef:
            kind: GitRepository
            name: flux-system
          postBuild:
            substitute:
              WEB_TAG: "3.1"
        """)
    chart_repo.write("apps/release.yaml", RELEASE.replace("tag: latest", "tag: ${WEB_TAG}"))
    with_helm(chart_repo)
    assert [r.name for r in chart_repo.found().roots] == ["flux-helm:apps/web", "flux:flux-system/apps"]
    image = container(chart_repo.render("flux-helm:apps/web")).items["image"]
    assert isinstance(image, Scalar) and image.value == "nginx:3.1"
    assert at(image) == ("clusters/prod/sync.yaml", 13, 7)  # where WEB_TAG is defined


def test_missing_values_key_is_an_error(chart_repo: Repo) -> None:
    chart_repo.write("apps/release.yaml", RELEASE.replace("valuesKey: greeting", "valuesKey: nope"))
    with_helm(chart_repo)
    problems = chart_repo.render("flux-helm:apps/web").problems
    assert [(p.severity, p.origin.line) for p in problems] == [("error", 19)]
    assert "no key 'nope'" in problems[0].message


def test_a_values_object_written_with_no_data_is_filled_elsewhere(chart_repo: Repo) -> None:
    """A Secret written with no data at all (an operator writes the token
    into it, a reflector copies it) has keys the repository cannot show: not
    an error, one info at the reference (a key missing beside others is:
    test_missing_values_key_is_an_error)."""
    chart_repo.write("apps/release.yaml", RELEASE.replace("valuesKey: greeting", "valuesKey: token")
                     .replace("    name: web-values\n    valuesKey", "    name: filled\n    valuesKey")
                     .replace("  - kind: ConfigMap\n    name: filled", "  - kind: Secret\n    name: filled"))
    chart_repo.write("apps/filled.yaml", """
        apiVersion: v1
        kind: Secret
        metadata:
          name: filled
          namespace: apps
          annotations:
            reflector.v1.k8s.emberstack.com/reflection-allowed: "true"
        """)
    with_helm(chart_repo)
    problems = chart_repo.render("flux-helm:apps/web").problems
    assert [(p.severity, p.origin.line) for p in problems] == [("info", 19)]
    assert "Secret/filled holds no data in the repository" in problems[0].message


def test_post_renderers_are_not_silently_skipped(chart_repo: Repo) -> None:
    chart_repo.write("apps/release.yaml", RELEASE + "  postRenderers:\n  - kustomize:\n      images: []\n")
    with_helm(chart_repo)
    [p] = chart_repo.render("flux-helm:apps/web").problems
    assert (p.severity, p.origin.line) == ("info", 26)
    assert "postRenderers are not applied" in p.message


def test_chart_path_not_found(chart_repo: Repo) -> None:
    chart_repo.write("apps/release.yaml", RELEASE.replace("./charts/web", "./charts/gone"))
    with_helm(chart_repo)
    with pytest.raises(BuildError, match="not found"):
        chart_repo.render("flux-helm:apps/web")


# --- Argo CD ---------------------------------------------------------------------------

APPLICATION = """
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web
  namespace: argocd
spec:
  destination:
    namespace: web-prod
  source:
    repoURL: https://github.com/example/repo
    path: charts/web
    helm:
      releaseName: site
      valueFiles:
      - values-prod.yaml
      values: |
        image:
          tag: "5.0"
      parameters:
      - name: replicaCount
        value: "4"
      - name: greeting
        value: "10"
        forceString: true
"""


def test_argocd_helm_source(repo: Repo) -> None:
    for path, text in CHART.items():
        repo.write(path, text)
    repo.write("charts/web/values-prod.yaml", "image:\n  tag: \"4.0\"\n  repository: httpd\n")
    repo.write("argocd/web.yaml", APPLICATION)
    helm = with_helm(repo)
    urls = ("https://github.com/example/repo",)
    rendered = repo.render("argocd:web", urls)
    template = calls(helm)[1]
    assert template["argv"][:5] == ["template", "site", str(repo.top / "charts/web"), "--namespace", "web-prod"]
    assert template["values"] == ['greeting: "10"\nimage:\n  repository: httpd\n  tag: "5.0"\nreplicaCount: 4\n']
    c = container(rendered)
    assert at(c.items["image"]) == ("argocd/web.yaml", 18, 11)  # the values block's tag line
    [dep] = [r for r in rendered.resources if r.kind == "Deployment"]
    assert lookup(dep.node, ["spec", "replicas"]).value == 4  # type: ignore[union-attr]


def test_argocd_value_files_climb_out_of_the_chart_but_not_out_of_the_repository(repo: Repo) -> None:
    # Argo CD joins a relative value file to the application's path and
    # lets it climb within the repository; an absolute one starts at the top
    for path, text in CHART.items():
        repo.write(path, text)
    repo.write("envs/prod/values.yaml", "image:\n  tag: \"4.0\"\n")
    repo.write("envs/top.yaml", "fromTop: true\n")
    app = APPLICATION.replace("      - values-prod.yaml\n",
                              "      - ../../envs/prod/values.yaml\n      - /envs/top.yaml\n")
    repo.write("argocd/web.yaml", app.replace('      values: |\n        image:\n          tag: "5.0"\n', ""))
    helm = with_helm(repo)
    rendered = repo.render("argocd:web", ("https://github.com/example/repo",))
    assert not [p for p in rendered.problems if p.severity == "error"], rendered.problems
    assert 'tag: "4.0"' in calls(helm)[1]["values"][0] and "fromTop: true" in calls(helm)[1]["values"][0]
    # out of the repository, Argo CD refuses it
    repo.write("argocd/web.yaml", app.replace("../../envs/prod/values.yaml", "../../../outside.yaml"))
    rendered = repo.render("argocd:web", ("https://github.com/example/repo",))
    assert any("climbs out of the repository" in p.message for p in rendered.problems)


def test_argocd_remote_chart_is_not_rendered(repo: Repo) -> None:
    repo.write("argocd/redis.yaml", """
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata:
          name: redis
        spec:
          source:
            repoURL: https://charts.bitnami.com/bitnami
            chart: redis
            targetRevision: 19.0.0
        """)
    with_helm(repo)
    rendered = repo.render("argocd:redis")
    assert rendered.resources == []
    [p] = rendered.problems
    assert (p.severity, p.origin.line) == ("info", 8)
    assert "https://charts.bitnami.com/bitnami (chart redis)" in p.message
    assert "pass --network to pull it" in p.message


# --- Flux paths ------------------------------------------------------------------------

def test_unsubstituted_path_names_the_variable(repo: Repo) -> None:
    repo.write("clusters/prod/apps.yaml", """
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata:
          name: apps
          namespace: flux-system
        spec:
          path: ./apps/${CLUSTER_NAME}
          sourceRef:
            kind: GitRepository
            name: flux-system
        """)
    with pytest.raises(BuildError) as e:
        repo.render("flux:flux-system/apps")
    assert "CLUSTER_NAME" in e.value.message and "not found" not in e.value.message
    assert e.value.location is not None and tuple(e.value.location) == ("clusters/prod/apps.yaml", 7, 3)


def test_chart_ref_to_a_helm_chart_in_the_repository(chart_repo: Repo) -> None:
    """``spec.chartRef`` to a HelmChart whose source is this repository renders
    its chart; to an OCIRepository, nothing (one info problem)."""
    chart_repo.write("apps/helmchart.yaml", """
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: HelmChart
        metadata:
          name: web
          namespace: apps
        spec:
          chart: ./charts/web
          sourceRef:
            kind: GitRepository
            name: flux-system
            namespace: flux-system
        """)
    chart_repo.write("apps/release.yaml", RELEASE.replace("""  chart:
    spec:
      chart: ./charts/web
      sourceRef:
        kind: GitRepository
        name: flux-system
        namespace: flux-system
""", """  chartRef:
    kind: HelmChart
    name: web
"""))
    with_helm(chart_repo)
    rendered = chart_repo.render("flux-helm:apps/web")
    assert [r.kind for r in rendered.resources] == ["Deployment"]
    chart_repo.write("apps/release.yaml", RELEASE.replace("""  chart:
    spec:
      chart: ./charts/web
      sourceRef:
        kind: GitRepository
        name: flux-system
        namespace: flux-system
""", """  chartRef:
    kind: OCIRepository
    name: web
"""))
    [p] = chart_repo.render("flux-helm:apps/web").problems
    assert "OCIRepository apps/web" in p.message and p.origin.line == 9


# --- charts from chart repositories (pulled with --enable-helm and --network) ---------

HELM_REPOSITORY = """
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: podinfo
  namespace: flux-system
spec:
  interval: 1h
  url: {url}
{extra}"""

OCI_REPOSITORY = """
apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata:
  name: podinfo
  namespace: apps
spec:
  interval: 1h
  url: oci://ghcr.io/stefanprodan/charts/podinfo
  ref:
    {ref}
"""

REMOTE_RELEASE = """
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: apps
spec:
  interval: 10m
{chart}  values:
    image:
      tag: latest
"""

FROM_HELM_REPOSITORY = """  chart:
    spec:
      chart: podinfo
      version: 6.5.x
      sourceRef:
        kind: HelmRepository
        name: podinfo
        namespace: flux-system
"""

FROM_OCI_REPOSITORY = """  chartRef:
    kind: OCIRepository
    name: podinfo
"""


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection attempted in this process fails the test."""
    import socket

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a test tried to use the network: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.delenv("KRMCHECK_NETWORK", raising=False)


def remote_helm(directory: Path, name: str) -> Path:
    """The stand-in helm, with the web chart as ``name`` in its stand-in chart repository."""
    helm = install(directory)
    for path, text in CHART.items():
        target = directory / "remote" / name / path.removeprefix("charts/web/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.replace("name: web", f"name: {name}"))
    return helm


def with_remote_helm(repo: Repo, tmp_path_factory: pytest.TempPathFactory, name: str = "podinfo",
                     network: bool = True) -> Path:
    helm = remote_helm(tmp_path_factory.mktemp("helm"), name)
    for key in (NONE, ROOT_ONLY):
        repo._builders[key] = Builder(repo.files, BuildOptions(key, network=network, enable_helm=True,
                                                               helm_command=str(helm)))
    return helm


def pulled(helm: Path) -> tuple[list[str], list[str], dict]:
    """The pull's argv after ``--untardir DIR``, the template's first five, the template call."""
    version, pull, template = calls(helm)
    assert version["argv"] == ["version", "-c", "--short"]
    assert pull["argv"][:3] == ["pull", "--untar", "--untardir"]
    home = pull["argv"][3]
    assert not Path(home).exists()  # pulled into the run's temporary directory, removed after
    return pull["argv"][4:], template["argv"][:5], template


def test_helm_repository_chart_is_pulled_and_rendered(
        repo: Repo, no_network: None, tmp_path_factory: pytest.TempPathFactory) -> None:
    repo.write("infra/sources.yaml", HELM_REPOSITORY.format(url="https://stefanprodan.github.io/podinfo",
                                                            extra=""))
    repo.write("apps/podinfo.yaml", REMOTE_RELEASE.format(chart=FROM_HELM_REPOSITORY))
    helm = with_remote_helm(repo, tmp_path_factory)
    root = repo.root("flux-helm:apps/podinfo")
    assert repo.top / "infra/sources.yaml" in root.reads
    rendered = repo.render("flux-helm:apps/podinfo")
    pull, template, call = pulled(helm)
    assert pull == ["--repo", "https://stefanprodan.github.io/podinfo", "podinfo", "--version", "6.5.x"]
    assert template[0:2] == ["template", "podinfo"]
    assert template[2].endswith("/charts/podinfo") and template[3:] == ["--namespace", "apps"]
    assert "--include-crds" in call["argv"]
    assert call["values"] == ["image:\n  tag: latest\n"]
    assert rendered.problems == []
    c = container(rendered)
    assert isinstance(c.items["image"], Scalar) and c.items["image"].value == "nginx:latest"
    assert at(c.items["image"]) == ("apps/podinfo.yaml", 18, 7)  # spec.values' tag line
    assert at(c.items["name"]) == ("apps/podinfo.yaml", 8, 3)  # the chart line


@pytest.mark.parametrize("source, chart, expected", [
    (HELM_REPOSITORY.format(url="oci://ghcr.io/stefanprodan/charts", extra="  type: oci\n"),
     FROM_HELM_REPOSITORY.replace("6.5.x", '"6.5.0"'),
     ["oci://ghcr.io/stefanprodan/charts/podinfo", "--version", "6.5.0"]),
    (OCI_REPOSITORY.format(ref="tag: 6.5.0"), FROM_OCI_REPOSITORY,
     ["oci://ghcr.io/stefanprodan/charts/podinfo", "--version", "6.5.0"]),
    (OCI_REPOSITORY.format(ref='semver: ">=6.0.0 <7.0.0"\n    tag: 5.0.0'), FROM_OCI_REPOSITORY,
     ["oci://ghcr.io/stefanprodan/charts/podinfo", "--version", ">=6.0.0 <7.0.0"]),
    (OCI_REPOSITORY.format(ref="digest: sha256:0123abcd\n    tag: 6.5.0"), FROM_OCI_REPOSITORY,
     ["oci://ghcr.io/stefanprodan/charts/podinfo@sha256:0123abcd"]),
], ids=["helmrepository-oci", "ocirepository-tag", "ocirepository-semver", "ocirepository-digest"])
def test_oci_chart_is_pulled_by_its_reference(repo: Repo, no_network: None,
                                              tmp_path_factory: pytest.TempPathFactory,
                                              source: str, chart: str, expected: list[str]) -> None:
    repo.write("infra/sources.yaml", source)
    repo.write("apps/podinfo.yaml", REMOTE_RELEASE.format(chart=chart))
    helm = with_remote_helm(repo, tmp_path_factory)
    rendered = repo.render("flux-helm:apps/podinfo")
    pull, template, _ = pulled(helm)
    assert pull == expected
    assert template[2].endswith("/podinfo")
    assert [r.kind for r in rendered.resources] == ["Deployment"]
    image = container(rendered).items["image"]
    assert isinstance(image, Scalar) and image.value == "nginx:latest"


def test_pulled_chart_is_checked(repo: Repo, no_network: None, tmp_path: Path,
                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    repo.write("infra/sources.yaml", HELM_REPOSITORY.format(url="https://stefanprodan.github.io/podinfo",
                                                            extra=""))
    repo.write("apps/podinfo.yaml", REMOTE_RELEASE.format(chart=FROM_HELM_REPOSITORY))
    helm = remote_helm(tmp_path_factory.mktemp("helm"), "podinfo")
    out = tmp_path / "report.json"
    code = main([".", "--enable-helm", "--network", "--helm-command", str(helm), "--json", str(out)])
    report = json.loads(out.read_text())
    assert code == 0  # image-tag is a warning
    found = {(f["validator"], f["path"], f["line"], f["root"]) for f in report["findings"]
             if f["severity"] != "info"}
    assert ("image-tag", "apps/podinfo.yaml", 18, "flux-helm:apps/podinfo") in found
    assert [c["argv"][0] for c in calls(helm)] == ["version", "pull", "template"]


@pytest.mark.parametrize("flags, says", [
    (["--enable-helm"], "pass --network to pull it"),
    (["--network"], "pass --enable-helm to pull it"),
    ([], "pass --enable-helm and --network to pull it"),
])
def test_remote_chart_needs_enable_helm_and_network(repo: Repo, no_network: None, tmp_path: Path,
                                                    tmp_path_factory: pytest.TempPathFactory,
                                                    flags: list[str], says: str) -> None:
    repo.write("infra/sources.yaml", HELM_REPOSITORY.format(url="https://stefanprodan.github.io/podinfo",
                                                            extra=""))
    repo.write("apps/podinfo.yaml", REMOTE_RELEASE.format(chart=FROM_HELM_REPOSITORY))
    helm = remote_helm(tmp_path_factory.mktemp("helm"), "podinfo")
    out = tmp_path / "report.json"
    assert main([".", *flags, "--helm-command", str(helm), "--json", str(out)]) == 0
    [info] = [f for f in json.loads(out.read_text())["findings"] if f["validator"] == "helm"]
    assert (info["severity"], info["path"], info["line"]) == ("info", "apps/podinfo.yaml", 8)
    assert "HelmRepository flux-system/podinfo (chart podinfo)" in info["message"]
    assert says in info["message"]
    assert not (helm.parent / "calls.jsonl").exists()


@pytest.mark.parametrize("source, chart", [
    ("", FROM_HELM_REPOSITORY),
    (HELM_REPOSITORY.format(url="https://stefanprodan.github.io/podinfo", extra="").replace(
        "namespace: flux-system", "namespace: elsewhere"), FROM_HELM_REPOSITORY),
    ("", FROM_OCI_REPOSITORY),
    (HELM_REPOSITORY.format(url="https://example.com/charts", extra="  secretRef:\n    name: creds\n"),
     FROM_HELM_REPOSITORY),
    (OCI_REPOSITORY.format(ref="tag: 6.5.0") + "  provider: aws\n", FROM_OCI_REPOSITORY),
], ids=["helmrepository-absent", "helmrepository-other-namespace", "ocirepository-absent",
        "helmrepository-secret", "ocirepository-provider"])
def test_source_not_held_or_private_is_not_pulled(repo: Repo, no_network: None,
                                                 tmp_path_factory: pytest.TempPathFactory,
                                                 source: str, chart: str) -> None:
    if source:
        repo.write("infra/sources.yaml", source)
    repo.write("apps/podinfo.yaml", REMOTE_RELEASE.format(chart=chart))
    helm = with_remote_helm(repo, tmp_path_factory)
    rendered = repo.render("flux-helm:apps/podinfo")
    assert rendered.resources == []
    [p] = rendered.problems
    assert (p.severity, p.validator, p.origin.line) == ("info", "helm", 8)
    assert ("which the repository does not hold" in p.message) != ("credentials" in p.message)
    assert not (helm.parent / "calls.jsonl").exists()


def test_values_files_of_a_pulled_chart_are_not_passed(
        repo: Repo, no_network: None, tmp_path_factory: pytest.TempPathFactory) -> None:
    repo.write("infra/sources.yaml", HELM_REPOSITORY.format(url="https://stefanprodan.github.io/podinfo",
                                                            extra=""))
    chart = FROM_HELM_REPOSITORY.replace("      sourceRef:", "      valuesFiles:\n      - values-prod.yaml\n"
                                                             "      sourceRef:")
    repo.write("apps/podinfo.yaml", REMOTE_RELEASE.format(chart=chart))
    with_remote_helm(repo, tmp_path_factory)
    rendered = repo.render("flux-helm:apps/podinfo")
    [p] = rendered.problems
    assert (p.severity, p.origin.line) == ("info", 13)
    assert "values-prod.yaml is a file of the pulled chart" in p.message
    assert [r.kind for r in rendered.resources] == ["Deployment"]


def test_remote_chart_without_network_is_refused_by_the_runner(repo: Repo, no_network: None) -> None:
    from krmcheck.kustomize.builtins import helm as runner
    node = Mapping({"name": Scalar("podinfo", Origin("apps/podinfo.yaml", 8, 3))})
    chart = runner.Chart(node, None, remote=runner.Remote("podinfo", "https://example.com/charts"))
    with pytest.raises(BuildError, match="needs the network"):
        runner.inflate(chart, runner.HelmEnv(repo.top, repo.files, True, "helm-not-run"))


@pytest.mark.parametrize("url, expected", [
    ("https://charts.bitnami.com/bitnami", ["--repo", "https://charts.bitnami.com/bitnami", "redis"]),
    ("oci://registry-1.docker.io/bitnamicharts", ["oci://registry-1.docker.io/bitnamicharts/redis"]),
    ("registry-1.docker.io/bitnamicharts/", ["oci://registry-1.docker.io/bitnamicharts/redis"]),
])
def test_argocd_remote_chart_is_pulled_and_rendered(repo: Repo, no_network: None,
                                                     tmp_path_factory: pytest.TempPathFactory,
                                                     url: str, expected: list[str]) -> None:
    repo.write("argocd/redis.yaml", f"""
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata:
          name: redis
        spec:
          destination:
            namespace: cache
          source:
            repoURL: {url}
            chart: redis
            targetRevision: 19.0.0
            helm:
              valuesObject:
                image:
                  tag: "7.2"
        """)
    helm = with_remote_helm(repo, tmp_path_factory, "redis")
    rendered = repo.render("argocd:redis")
    pull, template, call = pulled(helm)
    assert pull == [*expected, "--version", "19.0.0"]
    assert template[:2] == ["template", "redis"] and template[2].endswith("/redis")
    assert template[3:] == ["--namespace", "cache"]
    assert call["values"] == ['image:\n  tag: "7.2"\n']
    assert rendered.problems == []
    image = container(rendered).items["image"]
    assert isinstance(image, Scalar) and image.value == "nginx:7.2"
    assert at(image) == ("argocd/redis.yaml", 15, 11)  # valuesObject's tag line


ORDERED_RELEASE = """
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: apps
spec:
  interval: 10m
{chart}  valuesFrom:
  - kind: ConfigMap
    name: defaults
  - kind: ConfigMap
    name: overrides
  - kind: ConfigMap
    name: overrides
    valuesKey: replicas
    targetPath: replicaCount
  - kind: ConfigMap
    name: overrides
    valuesKey: tag
    targetPath: image.tag
  - kind: Secret
    name: absent
    optional: true
  values:
    port: 8080
"""

ORDERED_VALUES = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: apps
data:
  values.yaml: |
{values}  replicas: "3"
  tag: '"2.0"'
"""


def test_pulled_chart_gets_helm_controllers_values_order(
        repo: Repo, no_network: None, tmp_path_factory: pytest.TempPathFactory) -> None:
    """fluxcd/pkg chartutil ``ChartValuesFromReferences``, as helm-controller
    calls it: each ``valuesFrom`` in order (a later one wins), ``targetPath``
    set as ``--set`` sets it (``ReplacePathValue``: "3" is the number 3, a
    quoted value the string inside the quotes), an ``optional`` one that is
    absent skipped, ``spec.values`` on top; then ``helm template`` of the
    pulled chart (``--enable-helm --network``)."""
    repo.write("infra/sources.yaml", HELM_REPOSITORY.format(url="https://stefanprodan.github.io/podinfo",
                                                            extra=""))
    repo.write("apps/podinfo.yaml", ORDERED_RELEASE.format(chart=FROM_HELM_REPOSITORY))
    repo.write("apps/defaults.yaml", ORDERED_VALUES.format(
        name="defaults", values="    replicaCount: 1\n    port: 80\n    image:\n      tag: '1.0'\n"))
    repo.write("apps/overrides.yaml", ORDERED_VALUES.format(name="overrides", values="    port: 81\n"))
    helm = with_remote_helm(repo, tmp_path_factory)
    rendered = repo.render("flux-helm:apps/podinfo")
    _, _, call = pulled(helm)
    assert call["values"] == ['image:\n  tag: "2.0"\nport: 8080\nreplicaCount: 3\n']
    assert rendered.problems == []
    [dep] = [r for r in rendered.resources if r.kind == "Deployment"]
    assert dep.node.to_data()["spec"]["replicas"] == 3


def test_charts_not_rendered_are_one_line_per_run(tmp_path: Path) -> None:
    """A home lab whose every release pulls its chart: without --enable-helm
    --network, one info finding for the run, each release's notice kept as
    suppressed by it."""
    from tests.checkrun import check, write

    write(tmp_path, "infra/sources.yaml", dedent(HELM_REPOSITORY.format(
        url="https://stefanprodan.github.io/podinfo", extra="")))
    for name in ("one", "two", "three"):
        write(tmp_path, f"apps/{name}.yaml", dedent(REMOTE_RELEASE.format(chart=FROM_HELM_REPOSITORY))
              .replace("name: podinfo\n  namespace: apps", f"name: {name}\n  namespace: apps"))
    run = check(tmp_path, ".")
    [summary] = [d for d in run.report["defects"] if d["validator"] == "helm"]
    assert summary["message"].startswith("3 charts of HelmReleases and Argo CD Applications were not "
                                         "rendered: 3 need --enable-helm and --network (helm pulls them)")
    assert sorted((s["path"], s["by"]) for s in run.report["suppressed"]) == [
        ("apps/one.yaml", "summary"), ("apps/three.yaml", "summary"), ("apps/two.yaml", "summary")]
    assert run.out.count("[helm]") == 1
