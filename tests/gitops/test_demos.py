"""End-to-end runs over fixtures/flux-demo and fixtures/argocd-demo: each
deliberate defect is reported at the line a person edits, in the root named
after the controller object, and nothing else is reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from krmcheck.cli import main

PROJECT = Path(__file__).resolve().parent.parent.parent
FLUX_DEMO = PROJECT / "fixtures" / "flux-demo"
ARGOCD_DEMO = PROJECT / "fixtures" / "argocd-demo"

# (file, line, col, severity, validator, root, message fragment, trail files)
FLUX_DEFECTS = {
    # a ConfigMap variable that makes replicas a string: the variable's line,
    # the ${PODINFO_REPLICAS:=2} line in the trail
    ("clusters/production/cluster-vars.yaml", 9, 3, "error", "schema", "flux:flux-system/apps",
     "'three' is not of type 'integer'", ("apps/base/podinfo/deployment.yaml:6",)),
    # the Flux Kustomization's own images: entry
    ("clusters/production/apps.yaml", 22, 5, "warning", "image-tag", "flux:flux-system/apps",
     "uses the 'latest' tag", ("apps/base/podinfo/deployment.yaml:17",)),
    # a variable nobody defines: the controller would substitute ""
    ("apps/base/podinfo/deployment.yaml", 22, 11, "warning", "substitution", "flux:flux-system/apps",
     "LOG_LEVEL is not defined", ()),
    # postBuild.substitute values are strings
    ("clusters/production/infrastructure.yaml", 35, 7, "error", "substitution",
     "flux:flux-system/infra-configs", "must be a string", ()),
    # a manifest of a directory without kustomization.yaml (generated one)
    ("infrastructure/controllers/ingress-nginx.yaml", 23, 11, "error", "schema",
     "flux:flux-system/infra-controllers", "'http' is not of type 'integer'", ()),
}

ARGOCD_DEFECTS = {
    ("argocd/guestbook-prod.yaml", 17, 9, "warning", "image-tag", "argocd:guestbook-prod",
     "uses the 'latest' tag", ("guestbook/base/deployment.yaml:17",)),
    ("guestbook/overlays/prod/resources.yaml", 6, 3, "error", "schema", "argocd:guestbook-prod",
     "'ten' is not of type 'integer'", ()),
    ("plain-manifests/configmap.yaml", 4, 3, "error", "metadata", "argocd:plain",
     "not a valid ConfigMap name", ()),
}


def run(fixture: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *args: str) -> tuple[int, dict]:
    monkeypatch.chdir(fixture)
    out = tmp_path / "report.json"
    code = main([".", "--json", str(out), *args])
    return code, json.loads(out.read_text(encoding="utf-8"))


def defects(report: dict, prefix: str) -> set[tuple]:
    found = set()
    for f in report["findings"]:
        if f["severity"] == "info":
            continue
        path = f["path"].removeprefix(prefix)
        trail = tuple(f"{t['path'].removeprefix(prefix)}:{t['line']}" for t in f.get("trail", ()))
        found.add((path, f["line"], f["col"], f["severity"], f["validator"], f["root"], trail))
    return found


@pytest.mark.parametrize("fixture, expected", [
    (FLUX_DEMO, FLUX_DEFECTS), (ARGOCD_DEMO, ARGOCD_DEFECTS),
], ids=["flux-demo", "argocd-demo"])
def test_each_defect_at_its_line(fixture: Path, expected: set[tuple], monkeypatch: pytest.MonkeyPatch,
                                 tmp_path: Path) -> None:
    code, report = run(fixture, monkeypatch, tmp_path)
    assert code == 1
    prefix = fixture.relative_to(PROJECT).as_posix() + "/"
    got = defects(report, prefix)
    assert got == {(p, line, col, sev, v, root, trail) for p, line, col, sev, v, root, _, trail in expected}
    messages = {(f["path"].removeprefix(prefix), f["line"]): f["message"] for f in report["findings"]}
    for path, line, _, _, _, _, fragment, _ in expected:
        assert fragment in messages[(path, line)]


def test_flux_roots_replace_the_directories_they_render(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    _, report = run(FLUX_DEMO, monkeypatch, tmp_path)
    assert sorted(r["root"] for r in report["roots"]) == [
        "flux-helm:cert-manager/cert-manager", "flux-helm:podinfo/prod-webapp",
        "flux:flux-system/apps", "flux:flux-system/flux-system",
        "flux:flux-system/infra-configs", "flux:flux-system/infra-controllers"]


def test_roots_kustomize_checks_the_plain_directories(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    _, report = run(FLUX_DEMO, monkeypatch, tmp_path, "--roots", "kustomize")
    roots = sorted(r["root"].removeprefix("fixtures/flux-demo/") for r in report["roots"])
    assert not any(r.startswith("flux:") for r in roots)
    assert "apps/production" in roots
    # as plain kustomize sees it, ${PODINFO_REPLICAS:=2} is not an integer
    # yet: outside a controller root nothing substitutes it, so it is not judged
    assert not any("${PODINFO_REPLICAS:=2}" in f["message"] for f in report["findings"])
    assert any(s["validator"] == "schema" and s["by"] == "placeholder" and "${PODINFO_REPLICAS:=2}" in s["message"]
               for s in report["suppressed"])


def test_what_the_demo_renders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The escaped $${POD_NAMESPACE} stays ${POD_NAMESPACE}; the opted-out
    ConfigMap keeps ${HOME}; defaults and prefixes apply."""
    from tests.gitops.conftest import Repo

    monkeypatch.chdir(FLUX_DEMO)
    repo = Repo(FLUX_DEMO)
    [nginx] = [r.node.to_data() for r in repo.render("flux:flux-system/infra-controllers").resources
               if r.kind == "Deployment"]
    args = nginx["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args == ["--publish-status-address=ingress.prod.example.com",
                    "--default-ssl-certificate=${POD_NAMESPACE}/default-tls"]
    apps = {r.name: r.node.to_data() for r in repo.render("flux:flux-system/apps").resources}
    assert sorted(apps) == ["prod-podinfo", "prod-podinfo-script", "prod-webapp"]
    assert apps["prod-podinfo-script"]["data"]["run.sh"].startswith('echo "${HOME}')
    assert apps["prod-podinfo"]["metadata"]["namespace"] == "podinfo"
    assert apps["prod-podinfo"]["metadata"]["labels"] == {"toolkit.fluxcd.io/tenant": "web",
                                                          "kustomize.toolkit.fluxcd.io/name": "apps",
                                                          "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}


def test_build_prints_what_the_controller_applies(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(FLUX_DEMO)
    assert main(["build", "flux:flux-system/infra-configs"]) == 0
    captured = capsys.readouterr()
    assert captured.out == (
        "apiVersion: v1\n"
        "data:\n"
        "  email: ops@example.com\n"
        "  server: https://acme-v02.api.letsencrypt.org/directory\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        "  labels:\n"
        "    kustomize.toolkit.fluxcd.io/name: infra-configs\n"
        "    kustomize.toolkit.fluxcd.io/namespace: flux-system\n"
        "  name: acme-settings\n"
        "  namespace: cert-manager\n")
    assert main(["build", "flux:flux-system/nope"]) == 2
    assert "no such GitOps controller root" in capsys.readouterr().err


# the webapp HelmRelease's chart, rendered with --enable-helm (a stand-in helm)
FLUX_HELM_DEFECTS = {
    # spec.values sets the image tag: the values line, the chart line in the trail
    ("apps/base/webapp/release.yaml", 20, 7, "warning", "image-tag", "flux-helm:podinfo/prod-webapp",
     "uses the 'latest' tag", ("apps/base/webapp/release.yaml:7",)),
    # a valuesFrom ConfigMap's values.yaml: its line inside the block
    ("clusters/production/webapp-values.yaml", 8, 5, "error", "schema", "flux-helm:podinfo/prod-webapp",
     "'two' is not of type 'integer'", ("apps/base/webapp/release.yaml:7",)),
}


def test_helm_release_defects(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tests.gitops.fake_helm import install

    helm = install(tmp_path / "bin")
    code, report = run(FLUX_DEMO, monkeypatch, tmp_path, "--enable-helm", "--helm-command", str(helm))
    assert code == 1
    prefix = "fixtures/flux-demo/"
    expected = FLUX_DEFECTS | FLUX_HELM_DEFECTS
    assert defects(report, prefix) == {(p, line, col, sev, v, root, trail)
                                       for p, line, col, sev, v, root, _, trail in expected}
    messages = {(f["path"].removeprefix(prefix), f["line"]): f["message"] for f in report["findings"]}
    for path, line, _, _, _, _, fragment, _ in FLUX_HELM_DEFECTS:
        assert fragment in messages[(path, line)]


def test_charts_not_rendered_say_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without --enable-helm the local chart is not rendered, nor the remote
    chart (a HelmRepository) whatever the flags: one summary line for the
    run, each notice kept in the JSON report as suppressed by it."""
    _, report = run(FLUX_DEMO, monkeypatch, tmp_path)
    [summary] = [f for f in report["findings"] if f["validator"] == "helm"]
    assert summary["message"].startswith("2 charts of HelmReleases and Argo CD Applications were not rendered: "
                                         "1 needs --enable-helm; 1 needs --enable-helm and --network")
    infos = {(s["path"].removeprefix("fixtures/flux-demo/"), s["line"], s["root"]): s["message"]
             for s in report["suppressed"] if s["validator"] == "helm" and s["by"] == "summary"}
    assert sorted(infos) == [
        ("apps/base/webapp/release.yaml", 7, "flux-helm:podinfo/prod-webapp"),
        ("infrastructure/controllers/cert-manager.yaml", 17, "flux-helm:cert-manager/cert-manager")]
    assert "--enable-helm" in infos[("apps/base/webapp/release.yaml", 7, "flux-helm:podinfo/prod-webapp")]
    assert "HelmRepository cert-manager/jetstack" in infos[
        ("infrastructure/controllers/cert-manager.yaml", 17, "flux-helm:cert-manager/cert-manager")]


def test_argocd_helm_application(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The local chart renders with --enable-helm, a parameter's finding at
    its own line; the chart-repository chart is one info finding either way."""
    from tests.gitops.fake_helm import install

    helm = install(tmp_path / "bin")
    prefix = "fixtures/argocd-demo/"
    code, report = run(ARGOCD_DEMO, monkeypatch, tmp_path, "--enable-helm", "--helm-command", str(helm))
    assert code == 1
    assert defects(report, prefix) - {(p, line, col, sev, v, root, trail)
                                      for p, line, col, sev, v, root, _, trail in ARGOCD_DEFECTS} == {
        ("argocd/guestbook-helm.yaml", 17, 9, "error", "schema", "argocd:guestbook-helm",
         ("argocd/guestbook-helm.yaml:10",))}
    infos = {(f["path"].removeprefix(prefix), f["line"], f["root"]) for f in report["findings"]
             if f["validator"] == "helm"}
    assert infos == {("argocd/guestbook-helm.yaml", 31, "argocd:redis")}
