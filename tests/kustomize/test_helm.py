"""helmCharts through a stand-in helm that prints fixed YAML and records
its arguments. The argv, the values file helm is given and the output were
recorded from ``kubectl kustomize --enable-helm`` with the same stand-in on
PATH (Kustomize v5.5.0)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError, NeedsNetwork
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.emit import emit_all
from tests.gitops.fake_helm import install

FAKE_HELM = """\
#!/usr/bin/env python3
import json, os, sys
log = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.jsonl")
args = sys.argv[1:]
values = [open(args[i + 1]).read() for i, a in enumerate(args)
          if a == "-f" and args[i + 1].endswith("-kustomize-values.yaml")]
with open(log, "a") as f:
    f.write(json.dumps({"argv": args, "values": values,
                        "config_home": os.environ.get("HELM_CONFIG_HOME", "")}) + "\\n")
if args[:1] == ["version"]:
    print("v3.14.0+gabc")
elif args[:1] == ["template"]:
    print('''---
# Source: mychart/templates/svc.yaml
apiVersion: v1
kind: Service
metadata:
  name: release-svc
  labels:
    chart: mychart
spec:
  ports:
  - port: 80
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: release-dep
spec:
  template:
    spec:
      containers:
      - name: c
        image: nginx''')
else:
    sys.exit(3)
"""

KUSTOMIZATION = """\
namespace: ns1
helmGlobals:
  chartHome: charts
helmCharts:
- name: mychart
  releaseName: rel
  namespace: chns
  valuesInline:
    replicas: 3
    image:
      tag: "2.0"
    list: null
  additionalValuesFiles: [extra.yaml]
  includeCRDs: true
  skipTests: true
  apiVersions: [v1, apps/v1]
  kubeVersion: "1.29"
  nameTemplate: foo
"""

EXPECTED = """\
apiVersion: v1
kind: Service
metadata:
  labels:
    chart: mychart
  name: release-svc
  namespace: ns1
spec:
  ports:
  - port: 80
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: release-dep
  namespace: ns1
spec:
  template:
    spec:
      containers:
      - image: nginx
        name: c
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    write(tmp_path, "bin/helm", FAKE_HELM).chmod(0o755)
    write(tmp_path, "app/charts/mychart/Chart.yaml", "apiVersion: v2\nname: mychart\nversion: 0.1.0\n")
    write(tmp_path, "app/charts/mychart/values.yaml",
          'replicas: 1\nimage:\n  repository: nginx\n  tag: "1.0"\nlist: [a, b]\n')
    write(tmp_path, "app/extra.yaml", "extra: 1\n")
    write(tmp_path, "app/kustomization.yaml", KUSTOMIZATION)
    return tmp_path


def build(root: Path, **options: object) -> list[Resource]:
    return Builder(Files(root), BuildOptions(**options)).build(root / "app")  # type: ignore[arg-type]


def calls(root: Path) -> list[dict]:
    lines = (root / "bin/calls.jsonl").read_text().splitlines()
    out = []
    for line in lines:
        call = json.loads(line.replace(str(root), "{root}"))
        call["argv"] = [re.sub(r".*/kustomize-helm-[^/]+", "{tmp}", a) for a in call["argv"]]
        out.append(call)
    return out


def test_template_argv_values_and_output(repo: Path) -> None:
    out = build(repo, enable_helm=True, helm_command=str(repo / "bin/helm"))
    assert emit_all([r.node for r in out]) == EXPECTED
    version, template = calls(repo)
    assert version["argv"] == ["version", "-c", "--short"]
    assert template["argv"] == [
        "template", "rel", "{root}/app/charts/mychart", "--namespace", "chns",
        "--name-template", "foo", "-f", "{tmp}/mychart-kustomize-values.yaml",
        "-f", "{root}/app/extra.yaml", "--api-versions", "v1", "--api-versions", "apps/v1",
        "--kube-version", "1.29", "--include-crds", "--skip-tests"]
    assert template["values"] == ['image:\n  repository: nginx\n  tag: "2.0"\nreplicas: 3\n']
    assert template["config_home"].endswith("/helm")


def test_helm_found_on_path(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{repo / 'bin'}:{__import__('os').environ['PATH']}")
    assert len(build(repo, enable_helm=True)) == 2


def test_output_points_at_the_chart_entry(repo: Path) -> None:
    out = build(repo, enable_helm=True, helm_command=str(repo / "bin/helm"))
    svc = next(r for r in out if r.kind == "Service")
    port = svc.node.items["spec"]
    assert (port.origin.path, port.origin.line, port.origin.col) == ("app/kustomization.yaml", 5, 3)
    ns = svc.node.items["metadata"].items["namespace"]  # type: ignore[attr-defined]
    assert (ns.origin.path, ns.origin.line) == ("app/kustomization.yaml", 1)


@pytest.mark.parametrize("merge,values", [
    ("merge", 'image:\n  repository: nginx\n  tag: "1.0"\nlist:\n- a\n- b\nreplicas: 1\n'),
    ("replace", 'image:\n  tag: "3"\n'),
])
def test_values_merge(repo: Path, merge: str, values: str) -> None:
    write(repo, "app/kustomization.yaml", f"""\
helmCharts:
- name: mychart
  releaseName: r2
  valuesInline:
    image: {{tag: "3"}}
  valuesMerge: {merge}
""")
    build(repo, enable_helm=True, helm_command=str(repo / "bin/helm"))
    assert calls(repo)[1]["values"] == [values]


def test_values_file_is_copied_as_is(repo: Path) -> None:
    write(repo, "app/kustomization.yaml", "helmCharts:\n- name: mychart\n")
    build(repo, enable_helm=True, helm_command=str(repo / "bin/helm"))
    template = calls(repo)[1]
    assert template["argv"][:3] == ["template", "--generate-name", "{root}/app/charts/mychart"]
    assert template["values"] == ['replicas: 1\nimage:\n  repository: nginx\n  tag: "1.0"\nlist: [a, b]\n']


def test_legacy_inflation_generator_field(repo: Path) -> None:
    write(repo, "app/kustomization.yaml", """\
helmChartInflationGenerator:
- chartName: mychart
  releaseName: legacy
  chartHome: charts
  valuesLocal: {replicas: 5}
""")
    build(repo, enable_helm=True, helm_command=str(repo / "bin/helm"))
    template = calls(repo)[1]
    assert template["argv"][:3] == ["template", "legacy", "{root}/app/charts/mychart"]
    assert "replicas: 5\n" in template["values"][0]


def test_builtin_config_in_generators(repo: Path) -> None:
    write(repo, "app/kustomization.yaml", """\
generators:
- |-
  apiVersion: builtin
  kind: HelmChartInflationGenerator
  metadata:
    name: chart
  name: mychart
  releaseName: viaconfig
""")
    out = build(repo, enable_helm=True, helm_command=str(repo / "bin/helm"))
    assert [r.name for r in out] == ["release-svc", "release-dep"]
    assert calls(repo)[1]["argv"][1] == "viaconfig"


def test_without_enable_helm_nothing_runs(repo: Path) -> None:
    with pytest.raises(BuildError) as e:
        build(repo, helm_command=str(repo / "bin/helm"))
    assert "--enable-helm" in str(e.value)
    assert e.value.location is not None and tuple(e.value.location) == ("app/kustomization.yaml", 5, 3)
    assert not (repo / "bin/calls.jsonl").exists()


def test_chart_from_a_repo_needs_the_network(repo: Path) -> None:
    write(repo, "app/kustomization.yaml", """\
helmCharts:
- name: other
  version: 1.2.3
  repo: https://example.com/charts
""")
    with pytest.raises(NeedsNetwork, match="needs the network") as e:
        build(repo, enable_helm=True, helm_command=str(repo / "bin/helm"))
    assert (e.value.what, e.value.url) == ("helm chart", "other 1.2.3 from https://example.com/charts")
    assert e.value.location is not None and tuple(e.value.location) == ("app/kustomization.yaml", 2, 3)


@pytest.mark.parametrize("repo_url,pulled", [
    ("https://example.com/charts", ["--repo", "https://example.com/charts", "other"]),
    ("oci://example.com/charts", ["oci://example.com/charts/other"]),
])
def test_chart_from_a_repo_is_pulled_with_the_network(repo: Path, repo_url: str, pulled: list[str]) -> None:
    # as kustomize pulls it (the same argv), but into the temporary directory:
    # the repository's chart home is never written
    helm = install(repo / "fake")
    write(repo, "fake/remote/other/Chart.yaml", "apiVersion: v2\nname: other\nversion: 1.2.3\n")
    write(repo, "fake/remote/other/values.yaml", "size: small\n")
    write(repo, "fake/remote/other/templates/cm.yaml",
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pulled\ndata:\n  size: {{ .Values.size }}\n")
    write(repo, "app/kustomization.yaml", f"helmCharts:\n- name: other\n  version: 1.2.3\n"
                                          f"  repo: {repo_url}\n  releaseName: r\n")
    (cm,) = build(repo, enable_helm=True, helm_command=str(helm), network=True)
    assert (cm.name, cm.node.mapping("data").value("size")) == ("pulled", "small")  # type: ignore[union-attr]
    argv = [json.loads(line)["argv"] for line in (repo / "fake/calls.jsonl").read_text().splitlines()]
    assert argv[1][:3] == ["pull", "--untar", "--untardir"] and argv[1][3].endswith("/charts")
    assert argv[1][4:] == pulled + ["--version", "1.2.3"]
    assert argv[2][:3] == ["template", "r", argv[1][3] + "/other"]
    assert not (repo / "app/charts/other-1.2.3").exists()


def test_unknown_chart_field(repo: Path) -> None:
    write(repo, "app/kustomization.yaml", "helmCharts:\n- name: mychart\n  devel: true\n")
    with pytest.raises(BuildError, match='unknown field "devel"'):
        build(repo, enable_helm=True, helm_command=str(repo / "bin/helm"))


def test_helm_failure_names_the_command(repo: Path) -> None:
    write(repo, "bin/helm", "#!/bin/sh\necho boom >&2\nexit 4\n").chmod(0o755)
    with pytest.raises(BuildError, match="exit code 4: boom"):
        build(repo, enable_helm=True, helm_command=str(repo / "bin/helm"))
