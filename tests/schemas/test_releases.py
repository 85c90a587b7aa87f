"""A catalog's schema is the newest release of an API's CRDs: a validation
rule that release added judges a repository only where it runs that
release (Crossplane 2's fully qualified package names)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from krmcheck.schemas.releases import _chart_pins, _go_requires
from tests.checkrun import check, write

MESSAGE = "must be a fully qualified image name, including the registry, repository, and tag or digest."
PROVIDER = ("apiVersion: pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-aws\n"
            "spec:\n  package: crossplane/provider-aws:v0.29.0\n")
HELM_RELEASE = ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: crossplane\n"
                "spec:\n  interval: 1h\n  chart:\n    spec:\n      chart: crossplane\n      version: {version}\n"
                "      sourceRef: {{kind: HelmRepository, name: crossplane-stable}}\n")


def catalog(tmp_path: Path) -> Path:
    package = {"type": "string", "x-kubernetes-validations": [
        {"rule": "self.matches('^[^./]+([.][^./]+)+(/[^/:@]+)+(:[^:@]+)$')", "message": MESSAGE}]}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"package": package}}}}
    path = tmp_path / "catalog" / "pkg.crossplane.io" / "provider_v1.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(schema))
    return path.parent.parent


@pytest.mark.parametrize("evidence, severity, why", [
    ({"go.mod": "module example.com/p\n\nrequire github.com/crossplane/crossplane-runtime v0.19.2\n"}, "warning",
     "the repository runs Crossplane 1: go.mod requires github.com/crossplane/crossplane-runtime"),
    ({"infra/crossplane.yaml": HELM_RELEASE.format(version="1.16.0")}, "warning",
     "the repository runs Crossplane 1: infra/crossplane.yaml installs the crossplane chart 1.x"),
    ({"go.mod": "module example.com/p\n\nrequire github.com/crossplane/crossplane-runtime/v2 v2.1.0\n"}, "error", ""),
    ({"infra/crossplane.yaml": HELM_RELEASE.format(version='"2.0.2"')}, "error", ""),
    ({}, "error", ""),  # nothing says which release: the newest, as the catalog
])
def test_a_rule_a_later_release_added_judges_only_a_repository_that_runs_it(
        tmp_path: Path, evidence: dict[str, str], severity: str, why: str) -> None:
    root = tmp_path / "repo"
    write(root, "examples/install.yaml", PROVIDER)
    write(root, "examples/qualified.yaml", PROVIDER.replace("name: provider-aws", "name: other").replace(
        "crossplane/provider-aws", "xpkg.upbound.io/crossplane/provider-aws"))
    for name, text in evidence.items():
        write(root, name, text)
    run = check(root, "--schema-location", str(catalog(tmp_path)))
    found = [d for d in run.report["defects"] if MESSAGE in d["message"]]
    assert [(d["path"], d["severity"]) for d in found] == [("examples/install.yaml", severity)], found
    assert why in found[0]["message"]
    assert any("[owner-release]" in n["message"] for n in run.report["notes"]) == (severity == "warning")


def test_a_repository_that_holds_the_crd_keeps_its_rule(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, "examples/install.yaml", PROVIDER)
    write(root, "go.mod", "module example.com/p\n\nrequire github.com/crossplane/crossplane-runtime v1.20.0\n")
    write(root, "cluster/crds/pkg.crossplane.io_providers.yaml", (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
        "  name: providers.pkg.crossplane.io\nspec:\n  group: pkg.crossplane.io\n  scope: Cluster\n"
        "  names: {kind: Provider, plural: providers, singular: provider, listKind: ProviderList}\n"
        "  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n"
        "        type: object\n        properties:\n          spec:\n            type: object\n"
        "            properties:\n              package:\n                type: string\n"
        "                x-kubernetes-validations:\n                - rule: \"self.matches('^[^/]*[.][^/]*/')\"\n"
        f"                  message: \"{MESSAGE}\"\n"))
    found = [d for d in check(root).report["defects"] if MESSAGE in d["message"]]
    assert [d["severity"] for d in found] == ["error"], found


def test_the_release_a_go_module_or_a_chart_pin_names() -> None:
    runtime = "github.com/crossplane/crossplane-runtime"
    assert _go_requires(f"require (\n\t{runtime} v0.19.2\n)\n", runtime) == 1
    assert _go_requires(f"require {runtime} v1.20.0\n", runtime) == 1
    assert _go_requires(f"require {runtime}/v2 v2.2.2\n", runtime) == 2
    assert _go_requires("require github.com/crossplane/crossplane-tools v0.0.0\n", runtime) is None
    app = ("apiVersion: argoproj.io/v1alpha1\nkind: Application\nspec:\n  source:\n"
           "    repoURL: https://charts.crossplane.io/stable\n    chart: crossplane\n    targetRevision: 1.14.5\n"
           "---\napiVersion: v1\nkind: ConfigMap\ndata:\n  version: 2.0.0\n")
    assert list(_chart_pins(app, "crossplane")) == [1]  # the ConfigMap names no chart
    assert list(_chart_pins("helmCharts:\n- name: crossplane-other\n  version: 2.0.0\n", "crossplane")) == []
