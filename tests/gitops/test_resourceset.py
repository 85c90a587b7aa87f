"""The Flux Operator's ResourceSets expanded as the operator's builder
expands them (controlplaneio-fluxcd/flux-operator internal/builder
``BuildResourceSet``, internal/inputs ``Combine``): what they make are
controller roots and checked objects, each at its template line."""

from __future__ import annotations

import json
from pathlib import Path

from krmcheck.cli import main
from krmcheck.gitops import resourceset
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping
from tests.checkrun import check, write
from tests.gitops.conftest import Repo, dedent

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"

TEAMS = """\
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: teams
  namespace: flux-system
spec:
  inputs:
    - team: frontend
      replicas: 2
    - team: backend
      replicas: three
  resources:
    - apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata:
        name: << inputs.team >>
        namespace: flux-system
      spec:
        interval: 10m
        prune: true
        path: ./apps/<< inputs.team >>
        sourceRef:
          kind: GitRepository
          name: flux-system
"""


def _expand(text: str, *providers: str) -> resourceset.Expansion:
    [node] = load_documents(dedent(text), "rs.yaml")
    assert isinstance(node, Mapping)
    found = [d for p in providers for d in load_documents(dedent(p), "providers.yaml") if isinstance(d, Mapping)]
    return resourceset.expand(Resource(node), found)


def test_inline_inputs_make_two_flux_kustomizations_that_are_roots(repo: Repo) -> None:
    repo.write("clusters/prod/teams.yaml", TEAMS)
    for team in ("frontend", "backend"):
        repo.write(f"apps/{team}/cm.yaml", CM.format(name=team))
    roots = {r.name: r for r in repo.found().roots}
    assert sorted(roots) == ["flux:flux-system/backend", "flux:flux-system/frontend"]
    assert roots["flux:flux-system/frontend"].directory == repo.top / "apps/frontend"
    assert roots["flux:flux-system/backend"].directory == repo.top / "apps/backend"
    # the object is written where its template is; its name is the input that gave it
    assert roots["flux:flux-system/backend"].origin.path == "clusters/prod/teams.yaml"
    assert roots["flux:flux-system/backend"].origin.line == 10
    path = roots["flux:flux-system/backend"].obj.mapping("spec").items["path"]  # type: ignore[union-attr]
    assert (path.origin.line, path.trail) == (21, ())


def test_findings_on_what_a_resource_set_makes_point_at_its_template(tmp_path: Path) -> None:
    """A value that was one input points at the input's line; one a template
    wrote more of, at the template's line."""
    write(tmp_path, "deploy/teams.yaml", dedent("""
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSet
        metadata:
          name: teams
          namespace: flux-system
        spec:
          inputs:
            - team: frontend
              replicas: 2
            - team: backend
              replicas: three
          resources:
            - apiVersion: apps/v1
              kind: Deployment
              metadata:
                name: << inputs.team >>
                namespace: apps
              spec:
                replicas: << inputs.replicas >>
                selector:
                  matchLabels: {app: << inputs.team >>}
                template:
                  metadata:
                    labels: {app: << inputs.team >>}
                  spec:
                    containers:
                      - name: web
                        image: nginx:1.27
            - apiVersion: v1
              kind: ConfigMap
              metadata:
                name: << inputs.team >>_settings
                namespace: apps
        """))
    run = check(tmp_path, ".")
    errors = sorted(run.located("error"))
    # the backend's replicas (an input that is no integer), at the input;
    # the ConfigMaps' names (not DNS subdomains), at the template's line
    assert ("deploy/teams.yaml", 11, "schema") in errors
    assert ("deploy/teams.yaml", 32, "metadata") in errors or ("deploy/teams.yaml", 32, "schema") in errors
    assert all(line in (11, 32) for _, line, _ in errors), errors


def test_resources_template_lines_map_to_the_template(tmp_path: Path) -> None:
    """``resourcesTemplate``: each line of what it renders is the template
    line that wrote it, inside ``range`` too."""
    write(tmp_path, "deploy/rs.yaml", dedent("""
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSet
        metadata:
          name: bundles
          namespace: apps
        spec:
          inputs:
            - names: [one, two_bad]
          resourcesTemplate: |
            <<- range $n := inputs.names >>
            ---
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: << $n >>
              namespace: apps
            <<- end >>
        """))
    run = check(tmp_path, ".")
    assert [(p, line) for p, line, _ in run.located("error")] == [("deploy/rs.yaml", 15)]


def test_a_static_provider_gives_one_input_set() -> None:
    """``inputsFrom`` by name and by selector; a Static provider's set is its
    ``defaultValues`` with ``id`` and ``provider``."""
    expansion = _expand("""
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSet
        metadata: {name: backups, namespace: kube-system}
        spec:
          inputsFrom:
            - kind: ResourceSetInputProvider
              name: apps
            - kind: ResourceSetInputProvider
              selector:
                matchLabels: {tier: extra}
          resourcesTemplate: |
            <<- range $app := inputs.apps >>
            ---
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: << $app.name >>-<< inputs.provider.name >>
              namespace: << get $app "namespace" | default "default" >>
            data:
              size: << get $app "size" | default inputs.defaults.size | quote >>
              id: << inputs.id | quote >>
            <<- end >>
        """, """
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSetInputProvider
        metadata: {name: apps, namespace: kube-system}
        spec:
          type: Static
          defaultValues:
            defaults: {size: 1Gi}
            apps:
              - name: plex
                size: 35Gi
              - name: gatus
                namespace: monitoring
        ---
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSetInputProvider
        metadata: {name: more, namespace: kube-system, labels: {tier: extra}}
        spec:
          type: Static
          defaultValues:
            defaults: {size: 2Gi}
            apps: [{name: kei}]
        ---
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSetInputProvider
        metadata: {name: other, namespace: elsewhere, labels: {tier: extra}}
        spec: {type: Static, defaultValues: {apps: [{name: no}]}}
        """)
    assert expansion.problems == []
    made = [(r.namespace, r.name, r.node.to_data()["data"]) for r in expansion.resources]
    # the operator's ids are of the providers' UIDs; offline, of their names (as flux-operator build rset)
    assert made == [("default", "plex-apps", {"size": "35Gi", "id": "69927349"}),
                    ("monitoring", "gatus-apps", {"size": "1Gi", "id": "69927349"}),
                    ("default", "kei-more", {"size": "2Gi", "id": "72221108"})]
    labels = expansion.resources[0].node.to_data()["metadata"]["labels"]
    assert labels == {"resourceset.fluxcd.controlplane.io/name": "backups",
                      "resourceset.fluxcd.controlplane.io/namespace": "kube-system"}


def test_a_provider_that_asks_an_api_is_one_note(tmp_path: Path) -> None:
    write(tmp_path, "deploy/kustomization.yaml", "resources: [rs.yaml, prs.yaml]\n")
    write(tmp_path, "deploy/prs.yaml", dedent("""
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSetInputProvider
        metadata: {name: pull-requests, namespace: apps}
        spec:
          type: GitHubPullRequest
          url: https://github.com/org/app
        """))
    write(tmp_path, "deploy/rs.yaml", dedent("""
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSet
        metadata: {name: previews, namespace: apps}
        spec:
          inputsFrom:
            - kind: ResourceSetInputProvider
              name: pull-requests
            - kind: ResourceSetInputProvider
              name: branches
          resources:
            - apiVersion: v1
              kind: Namespace
              metadata:
                name: preview_<< inputs.id >>
        """))
    run = check(tmp_path, ".")
    notes = [d for d in run.report["defects"] if d["validator"] == "resourceset"]
    assert len(notes) == 1, notes
    assert (notes[0]["severity"], notes[0]["path"], notes[0]["line"]) == ("info", "deploy/rs.yaml", 5)
    assert "ResourceSetInputProvider pull-requests (type GitHubPullRequest)" in notes[0]["message"]
    assert "ResourceSetInputProvider branches (not applied with it)" in notes[0]["message"]
    assert run.located("error") == []  # nothing is made, so nothing is judged


def test_a_static_provider_file_feeds_a_resource_set_in_a_cli_run(repo: Repo) -> None:
    """End to end: ``inputsFrom`` names a Static ResourceSetInputProvider
    written in the repository; what the ResourceSet makes from its values is
    checked with its root, and the Flux Kustomization it makes is a root."""
    repo.write("deploy/kustomization.yaml", "resources: [rs.yaml, provider.yaml]\n")
    repo.write("deploy/provider.yaml", """
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSetInputProvider
        metadata: {name: apps, namespace: flux-system}
        spec:
          type: Static
          defaultValues: {app: web, tier: frontend}
        """)
    repo.write("deploy/rs.yaml", """
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSet
        metadata: {name: apps, namespace: flux-system}
        spec:
          inputsFrom:
            - kind: ResourceSetInputProvider
              name: apps
          resources:
            - apiVersion: v1
              kind: ConfigMap
              metadata:
                name: << inputs.app >>-settings
                namespace: flux-system
              data: {tier: << inputs.tier >>}
            - apiVersion: kustomize.toolkit.fluxcd.io/v1
              kind: Kustomization
              metadata:
                name: << inputs.app >>
                namespace: flux-system
              spec:
                interval: 10m
                prune: true
                path: ./apps/<< inputs.app >>
                sourceRef: {kind: GitRepository, name: flux-system}
        """)
    repo.write("apps/web/cm.yaml", CM.format(name="web"))
    out = repo.top.parent / "report.json"
    assert main([".", "--github", "off", "--json", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    made = {r["root"]: [(o["kind"], o["name"]) for o in r["resources"]] for r in report["roots"]}
    assert ("ConfigMap", "web-settings") in made["deploy"]
    assert ("Kustomization", "web") in made["deploy"]
    assert made["flux:flux-system/web"] == [("ConfigMap", "web")]
    assert [f for f in report["findings"] if f["severity"] != "info"] == []


def test_no_inputs_render_once_and_a_missing_input_fails_the_build() -> None:
    """Without inputs the operator renders each resource once, ``inputs``
    empty; a key no input has fails its build (``missingkey=error``)."""
    plain = _expand("""
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSet
        metadata: {name: once, namespace: apps}
        spec:
          resources:
            - {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: apps}}
            - apiVersion: v1
              kind: ConfigMap
              metadata: {name: '<< get inputs "name" | default "b" >>', namespace: apps}
        """)
    assert [r.name for r in plain.resources] == ["a", "b"]
    broken = _expand("""
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSet
        metadata: {name: broken, namespace: apps}
        spec:
          inputs: [{team: a}]
          resources:
            - apiVersion: v1
              kind: ConfigMap
              metadata: {name: << inputs.tenant >>, namespace: apps}
        """)
    assert broken.resources == []
    [problem] = broken.problems
    assert problem.severity == "error" and "map has no entry for key 'tenant'" in problem.message
    assert problem.origin.line == 7


def test_permute_makes_every_combination_with_ids() -> None:
    """``inputStrategy: Permute``: each provider's set under its normalised
    name; ``id`` of the combination (internal/inputs Permuter)."""
    expansion = _expand("""
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSet
        metadata: {name: my-rset, namespace: default}
        spec:
          inputStrategy: {name: Permute}
          inputs: [{env: dev}, {env: prod}]
          inputsFrom: [{name: git-tag}]
          resources:
            - apiVersion: v1
              kind: ConfigMap
              metadata: {name: 'cm-<< inputs.my_rset.env >>-<< inputs.git_tag.tag >>', namespace: default}
              data: {id: '<< inputs.id | quote >>'}
        """, """
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSetInputProvider
        metadata: {name: git-tag, namespace: default}
        spec: {type: Static, defaultValues: {tag: v1}}
        """)
    made = [(r.name, r.node.to_data()["data"]["id"]) for r in expansion.resources]
    ids = [str(__import__("zlib").adler32(f"my_rset={i}/git_tag=0".encode())) for i in (0, 1)]
    assert made == [("cm-dev-v1", ids[0]), ("cm-prod-v1", ids[1])]


def test_deduplication_disabled_objects_and_common_metadata() -> None:
    expansion = _expand("""
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSet
        metadata: {name: shared, namespace: apps}
        spec:
          commonMetadata:
            labels: {team: web}
          inputs: [{t: a}, {t: b}]
          resources:
            - apiVersion: source.toolkit.fluxcd.io/v1
              kind: OCIRepository
              metadata: {name: podinfo, namespace: apps}
              spec: {url: oci://ghcr.io/stefanprodan/charts/podinfo}
            - apiVersion: v1
              kind: ServiceAccount
              metadata:
                name: sa-<< inputs.t >>
                namespace: apps
                annotations:
                  fluxcd.controlplane.io/reconcile: << if eq inputs.t "a" >>enabled<< else >>disabled<< end >>
        """)
    assert [r.name for r in expansion.resources] == ["podinfo", "sa-a"]
    assert expansion.resources[1].node.to_data()["metadata"]["labels"]["team"] == "web"


def test_to_yaml_and_nindent_build_nested_values_at_the_template_line() -> None:
    expansion = _expand("""
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSet
        metadata: {name: oci, namespace: apps}
        spec:
          inputs:
            - tenant: Team One
              layerSelector: {mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip, operation: copy}
              replicas: "3"
          resources:
            - apiVersion: source.toolkit.fluxcd.io/v1
              kind: OCIRepository
              metadata:
                name: << inputs.tenant | slugify >>
                namespace: apps
              spec:
                replicas: << inputs.replicas | int >>
                layerSelector: << inputs.layerSelector | toYaml | nindent 4 >>
        """)
    [oci] = expansion.resources
    data = oci.node.to_data()
    assert data["metadata"]["name"] == "team-one"
    assert data["spec"]["replicas"] == 3
    assert data["spec"]["layerSelector"] == {"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                                             "operation": "copy"}
    layer = oci.node.mapping("spec").mapping("layerSelector")  # type: ignore[union-attr]
    assert layer is not None and layer.items["operation"].origin.line == 17


def test_a_flux_instance_release_a_resource_set_templates_defines_the_sync(repo: Repo) -> None:
    """The flux-instance chart's values written with an input: the sync is
    read from what the ResourceSet makes."""
    repo.write("clusters/prod/flux-system/instance.yaml", dedent("""
        apiVersion: fluxcd.controlplane.io/v1
        kind: ResourceSet
        metadata: {name: flux, namespace: flux-system}
        spec:
          inputs: [{cluster: prod}]
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
                values:
                  instance:
                    sync:
                      kind: GitRepository
                      url: https://github.com/example/fleet
                      path: clusters/<< inputs.cluster >>
        """))
    repo.write("clusters/prod/cm.yaml", CM.format(name="settings"))
    roots = {r.name: r for r in repo.found(("https://github.com/example/fleet",)).roots}
    assert roots["flux:flux-system/flux-system"].directory == repo.top / "clusters/prod"
    assert "flux-helm:flux-system/flux-instance" in roots


HELMFILE = """\
---
releases:
  - name: flux-operator
    namespace: flux-system
    chart: oci://ghcr.io/controlplaneio-fluxcd/charts/flux-operator
  - name: flux-instance
    namespace: flux-system
    chart: oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance
    version: 0.28.0
    values: [{values}]
    needs: [flux-system/flux-operator]
"""

INSTANCE_VALUES = """\
instance:
  sync:
    kind: GitRepository
    url: https://github.com/example/home-ops
    ref: refs/heads/main
    path: kubernetes/flux/cluster
"""


def _cluster(repo: Repo) -> None:
    repo.write("kubernetes/flux/cluster/apps.yaml", dedent("""
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: apps, namespace: flux-system}
        spec:
          interval: 1h
          path: ./kubernetes/apps
          prune: true
          sourceRef: {kind: GitRepository, name: flux-system}
        """))
    repo.write("kubernetes/apps/cm.yaml", CM.format(name="app"))


def test_a_helmfile_release_of_the_flux_instance_chart_defines_the_sync(repo: Repo) -> None:
    """The bootstrap's helmfile: a values file beside it holds
    ``instance.sync``; the operator's flux-system Kustomization is a root."""
    _cluster(repo)
    repo.write("bootstrap/helmfile.d/01-apps.yaml", HELMFILE.format(values="'../values/flux-instance.yaml'"))
    repo.write("bootstrap/values/flux-instance.yaml", INSTANCE_VALUES)
    roots = {r.name: r for r in repo.found(("https://github.com/example/home-ops",)).roots}
    assert sorted(roots) == ["flux:flux-system/apps", "flux:flux-system/flux-system"]
    sync = roots["flux:flux-system/flux-system"]
    assert sync.directory == repo.top / "kubernetes/flux/cluster"
    assert (sync.origin.path, sync.origin.line) == ("bootstrap/values/flux-instance.yaml", 2)
    assert sync.source.endswith("(the sync of the FluxInstance in bootstrap/values/flux-instance.yaml)")


def test_helmfile_values_inline_count_and_templates_reading_files_do_not(repo: Repo) -> None:
    _cluster(repo)
    inline = "{instance: {sync: {kind: GitRepository, url: 'https://github.com/example/home-ops', " \
             "path: kubernetes/flux/cluster}}}"
    repo.write("bootstrap/helmfile.yaml", HELMFILE.format(values=inline))
    urls = ("https://github.com/example/home-ops",)
    assert "flux:flux-system/flux-system" in {r.name for r in repo.found(urls).roots}
    # a values template that reads the repository's HelmRelease is not followed
    repo.write("bootstrap/helmfile.yaml", HELMFILE.format(values="'./values.yaml.gotmpl'"))
    repo.write("bootstrap/values.yaml.gotmpl",
               '{{ (fromYaml (readFile "../kubernetes/flux-instance.yaml")).spec.values | toYaml }}\n')
    assert "flux:flux-system/flux-system" not in {r.name for r in repo.found(urls).roots}


def test_helmfile_values_kustomize_patches_patch_the_sync_kustomization(repo: Repo) -> None:
    """``instance.kustomize.patches`` of the values a helmfile passes patch
    the Kustomization the operator makes, at the values file's lines."""
    _cluster(repo)
    repo.write("bootstrap/helmfile.yaml", HELMFILE.format(values="'./values.yaml'"))
    repo.write("bootstrap/values.yaml", INSTANCE_VALUES + """\
  kustomize:
    patches:
      - target: {kind: Kustomization, name: flux-system}
        patch: |
          apiVersion: kustomize.toolkit.fluxcd.io/v1
          kind: Kustomization
          metadata: {name: flux-system}
          spec:
            decryption: {provider: sops, secretRef: {name: sops-age}}
""")
    sync = repo.root("flux:flux-system/flux-system", ("https://github.com/example/home-ops",))
    spec = sync.obj.mapping("spec")
    assert spec is not None and spec.to_data()["decryption"] == {"provider": "sops", "secretRef": {"name": "sops-age"}}
    assert (spec.items["decryption"].origin.path, spec.items["decryption"].origin.line) == ("bootstrap/values.yaml", 15)
    assert "patches" not in spec.items


STEPS = """
    apiVersion: fluxcd.controlplane.io/v1
    kind: ResourceSet
    metadata: {{name: staged, namespace: apps}}
    spec:
      inputs: [{{version: v1.0.0}}]
      steps:
        - name: migrate
          resources:
            - apiVersion: batch/v1
              kind: Job
              metadata: {{name: migrate, namespace: apps}}
        - name: deploy
          resourcesTemplate: |
            apiVersion: {api}
            kind: {kind}
            metadata:
              name: {name}
              namespace: apps
            data:
              version: << inputs.version >>
    """


def test_steps_are_rendered_in_order_and_one_object_in_two_steps_fails() -> None:
    made = _expand(STEPS.format(api="v1", kind="ConfigMap", name="version"))
    assert [(r.kind, r.name) for r in made.resources] == [("Job", "migrate"), ("ConfigMap", "version")]
    assert made.resources[1].node.mapping("data").items["version"].origin.line == 20  # type: ignore[union-attr]
    twice = _expand(STEPS.format(api="batch/v1", kind="Job", name="migrate"))
    assert twice.resources == []
    [problem] = twice.problems
    assert problem.severity == "error" and "in step 'deploy' and in step 'migrate'" in problem.message
