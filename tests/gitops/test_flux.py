"""Flux Kustomization roots rendered as kustomize-controller renders them:
the generated or amended kustomization, the controller's fields in its
order, substitution, commonMetadata."""

from __future__ import annotations

from krmcheck.gitops.envsubst import Unknown
from tests.checkrun import SERVICE_LOWERCASE_PROTOCOL, WIDGET_CRD
from tests.gitops.conftest import Repo, dedent

SYNC = """
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
    kind: GitRepository
    name: flux-system
"""


# the labels kustomize-controller adds to every object it applies for flux-system/apps
OWNER = {"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}


def ks(name: str, path: str, spec: str = "") -> str:
    """A Flux Kustomization of this repository; ``spec``: more spec fields."""
    more = "".join(f"  {line}\n" for line in dedent(spec).splitlines())
    return dedent(SYNC.format(name=name, path=path)) + more


def test_a_directory_without_kustomization_gets_every_manifest_below_it(repo: Repo) -> None:
    repo.write("clusters/prod/apps.yaml", ks("apps", "./apps"))
    repo.write("apps/web.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: web
        """)
    repo.write("apps/deep/er/api.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: api
        """)
    repo.write("apps/lib/kustomization.yaml", """
        resources:
        - listed.yaml
        """)
    repo.write("apps/lib/listed.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: listed
        """)
    repo.write("apps/lib/not-listed.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: not-listed
        """)
    repo.write("apps/values.yaml", "replicaCount: 2\n")  # not a Kubernetes object
    names = [r.name for r in repo.render("flux:flux-system/apps").resources]
    assert names == ["api", "listed", "web"]


def test_the_controller_fields_amend_the_kustomization_in_place(repo: Repo) -> None:
    repo.write("clusters/prod/apps.yaml", ks("apps", "./app", """
        targetNamespace: shop
        namePrefix: prod-
        images:
        - name: nginx
          newTag: "1.27"
        patches:
        - patch: |
            - op: add
              path: /spec/replicas
              value: 3
          target:
            kind: Deployment
        commonMetadata:
          labels:
            team: web
        """))
    repo.write("app/kustomization.yaml", """
        namePrefix: base-
        images:
        - name: nginx
          newTag: "1.25"
        resources:
        - deployment.yaml
        """)
    repo.write("app/deployment.yaml", """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: web
        spec:
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
                image: nginx
        """)
    # namePrefix replaces the kustomization's own (one layer, not two);
    # images merge by name; commonMetadata labels the object, not its selector
    assert repo.yaml("flux:flux-system/apps") == dedent("""
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          labels:
            kustomize.toolkit.fluxcd.io/name: apps
            kustomize.toolkit.fluxcd.io/namespace: flux-system
            team: web
          name: prod-web
          namespace: shop
        spec:
          replicas: 3
          selector:
            matchLabels:
              app: web
          template:
            metadata:
              labels:
                app: web
            spec:
              containers:
              - image: nginx:1.27
                name: web
        """)


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${REPLICAS}
  template:
    spec:
      containers:
      - name: web
        image: nginx:${TAG:=1.27}
        env:
        - name: QUOTED
          value: "${REPLICAS}"
        - name: ESCAPED
          value: $${HOME}
"""


def test_substitution_types_values_again_and_points_at_the_variable(repo: Repo) -> None:
    repo.write("clusters/prod/apps.yaml", ks("apps", "./app", """
        postBuild:
          substitute:
            REPLICAS: "3"
        """))
    repo.write("app/deployment.yaml", DEPLOYMENT)
    [res] = repo.render("flux:flux-system/apps").resources
    spec = res.node.mapping("spec")
    assert spec is not None
    replicas = spec.items["replicas"]
    # the controller prints, substitutes and parses again: a number, even
    # where the source quoted the placeholder (kustomize prints it plain)
    assert replicas.to_data() == 3
    env = res.node.to_data()["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "QUOTED", "value": 3}, {"name": "ESCAPED", "value": "${HOME}"}]
    image = res.node.to_data()["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "nginx:1.27"
    # provenance: the variable's line, then the ${REPLICAS} line in the trail
    assert (replicas.origin.path, replicas.origin.line) == ("clusters/prod/apps.yaml", 15)
    assert [(o.path, o.line) for o in replicas.trail] == [("app/deployment.yaml", 6)]


def test_values_from_configmaps_and_secrets_in_the_repository(repo: Repo) -> None:
    repo.write("clusters/prod/apps.yaml", ks("apps", "./app", """
        postBuild:
          substitute:
            TAG: "1.29"
          substituteFrom:
          - kind: ConfigMap
            name: vars
          - kind: Secret
            name: secret-vars
          - kind: ConfigMap
            name: absent
            optional: true
        """))
    # the controller reads them from the cluster: what a root of the repository applies
    repo.write("clusters/prod/flux-system/gotk-sync.yaml", ks("flux-system", "./clusters/prod"))
    repo.write("clusters/prod/vars.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: vars
          namespace: flux-system
        data:
          REPLICAS: "2"
          TAG: "1.28"
        """)
    repo.write("clusters/prod/secret-vars.yaml", """
        apiVersion: v1
        kind: Secret
        metadata:
          name: secret-vars
          namespace: flux-system
        data:
          REPLICAS: NQ==
        """)
    repo.write("app/deployment.yaml", DEPLOYMENT)
    rendered = repo.render("flux:flux-system/apps")
    [res] = rendered.resources
    data = res.node.to_data()
    # later sources win; postBuild.substitute wins over all of them
    assert data["spec"]["replicas"] == 5
    assert data["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"
    replicas = res.node.mapping("spec").items["replicas"]  # type: ignore[union-attr]
    assert (replicas.origin.path, replicas.origin.line) == ("clusters/prod/secret-vars.yaml", 7)
    assert rendered.problems == []


def test_a_source_the_repository_cannot_show_leaves_placeholders(repo: Repo) -> None:
    repo.write("clusters/prod/apps.yaml", ks("apps", "./app", """
        postBuild:
          substituteFrom:
          - kind: Secret
            name: sealed
          - kind: ConfigMap
            name: made-by-hand
        """))
    repo.write("clusters/prod/flux-system/gotk-sync.yaml", ks("flux-system", "./clusters/prod"))
    repo.write("clusters/prod/sealed.yaml", """
        apiVersion: v1
        kind: Secret
        metadata:
          name: sealed
          namespace: flux-system
        stringData:
          REPLICAS: ENC[AES256_GCM,data:abc=,type:str]
        sops:
          version: 3.8.1
        """)
    repo.write("app/deployment.yaml", DEPLOYMENT)
    root = repo.root("flux:flux-system/apps")
    assert root.lookup("REPLICAS") == Unknown("Secret/sealed")
    rendered = repo.render("flux:flux-system/apps")
    [res] = rendered.resources
    assert res.node.to_data()["spec"]["replicas"] == "${REPLICAS}"
    assert rendered.placeholders == 3  # ${REPLICAS} twice, ${TAG:=1.27}
    [info] = rendered.problems
    assert info.severity == "info" and "ConfigMap/made-by-hand is not in the repository" in info.message
    assert (info.origin.path, info.origin.line) == ("clusters/prod/apps.yaml", 17)


def test_without_variables_nothing_is_substituted(repo: Repo) -> None:
    # kustomize-controller substitutes only when some variable is defined
    repo.write("clusters/prod/apps.yaml", ks("apps", "./app"))
    repo.write("app/deployment.yaml", DEPLOYMENT)
    [res] = repo.render("flux:flux-system/apps").resources
    assert res.node.to_data()["spec"]["replicas"] == "${REPLICAS}"
    env = res.node.to_data()["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env[1]["value"] == "$${HOME}"


def test_values_written_for_a_substitution_the_object_does_not_ask_for_are_one_warning(repo: Repo) -> None:
    """No postBuild, yet values hold ${VAR}: the object lacks postBuild, or
    something outside it adds one (an admission webhook). One warning at
    the Kustomization, and the values are not judged one by one."""
    from tests.checkrun import check

    repo.write("clusters/prod/apps.yaml", ks("apps", "./app"))
    repo.write("app/deployment.yaml", DEPLOYMENT)
    defects = check(repo.top, ".").report["defects"]
    # what holds no placeholder is judged as before (the fixture has no selector)
    assert [(d["path"], d["message"]) for d in defects if d["severity"] == "error"] == [
        ("app/deployment.yaml", "spec: missing required field 'selector'")]
    [warning] = [d for d in defects if d["severity"] == "warning"]
    assert (warning["path"], warning["line"], warning["validator"]) == ("clusters/prod/apps.yaml", 4, "substitution")
    assert warning["message"].startswith("4 values hold ${HOME}, ${REPLICAS}, ${TAG}, but this Kustomization "
                                         "has no postBuild")
    # a Flux Kustomization it applies keeps its ${VAR}s for its own substitution
    repo.write("app/child.yaml", dedent("""
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: child, namespace: flux-system}
        spec:
          path: ./child
          sourceRef: {kind: GitRepository, name: flux-system}
          postBuild:
            substitute: {CLUSTER: "${CLUSTER}"}
        """))
    repo.write("child/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    # and a CRD's ${var} is its schema's prose (Flux's own CRDs describe ${var:=default})
    repo.write("app/crd.yaml", WIDGET_CRD.replace("        type: object\n", "        type: object\n        description: "
                                                  "supports ${var:=default} and ${var/substring/replacement}\n"))
    [again] = [d for d in check(repo.top, ".").report["defects"] if d["severity"] == "warning"]
    assert again["message"] == warning["message"]


def test_a_substitution_webhook_the_repository_installs_adds_its_sources_to_every_kustomization(
        repo: Repo) -> None:
    """kustomize-mutating-webhook writes the data of the ConfigMaps and
    Secrets its chart values name into every Flux Kustomization's
    substitution, with or without a postBuild of its own."""
    repo.write("clusters/prod/flux-system/gotk-sync.yaml", ks("flux-system", "./clusters/prod"))
    repo.write("clusters/prod/apps.yaml", ks("apps", "./app", """
        postBuild:
          substitute:
            APP: web
        """))
    repo.write("clusters/prod/bare.yaml", ks("bare", "./bare"))
    repo.write("clusters/prod/vars.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: cluster-config, namespace: flux-system}
        data: {REPLICAS: "2"}
        """)
    repo.write("app/deployment.yaml", DEPLOYMENT)
    repo.write("bare/deployment.yaml", DEPLOYMENT)
    before = repo.render("flux:flux-system/apps")
    assert before.resources[0].node.to_data()["spec"]["replicas"] is None  # not defined: empty
    # the chart's values, as a file a configMapGenerator turns into valuesFrom
    repo.write("infra/webhook/values.yaml", """
        image:
          repository: ghcr.io/example/kustomize-mutating-webhook
        configMaps:
        - name: cluster-config
        secrets:
        - name: cluster-secrets
        """)
    for name in ("apps", "bare"):
        rendered = repo.render(f"flux:flux-system/{name}")
        [res] = rendered.resources
        # REPLICAS from the ConfigMap; TAG may come from the Secret nobody can read here
        assert res.node.to_data()["spec"]["replicas"] == 2
        assert res.node.to_data()["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:${TAG:=1.27}"
        [info] = rendered.problems
        assert info.severity == "info" and info.message.startswith(
            "Secret/cluster-secrets, whose data kustomize-mutating-webhook adds")
        assert (info.origin.path, info.origin.line) == ("infra/webhook/values.yaml", 6)
    # values that name no ConfigMap keep the chart's default, cluster-config
    repo.write("infra/webhook/values.yaml", "image:\n  repository: ghcr.io/example/kustomize-mutating-webhook\n")
    rendered = repo.render("flux:flux-system/bare")
    assert rendered.resources[0].node.to_data()["spec"]["replicas"] == 2
    assert rendered.problems == []
    # or a HelmRelease's own values, read in its namespace
    repo.write("infra/webhook/values.yaml", "replicas: 1\n")
    repo.write("infra/webhook/release.yaml", """
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: webhook, namespace: flux-system}
        spec:
          chart: {spec: {chart: kustomize-mutating-webhook}}
          values:
            image: {repository: ghcr.io/example/kustomize-mutating-webhook}
            configMaps: [{name: other-vars}]
        """)
    repo.write("clusters/prod/other.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: other-vars, namespace: flux-system}
        data: {REPLICAS: "4", TAG: "1.30"}
        """)
    rendered = repo.render("flux:flux-system/bare")
    data = rendered.resources[0].node.to_data()
    assert (data["spec"]["replicas"], data["spec"]["template"]["spec"]["containers"][0]["image"]) == (4, "nginx:1.30")


def test_the_opt_out_label_or_annotation(repo: Repo) -> None:
    repo.write("clusters/prod/apps.yaml", ks("apps", "./app", """
        postBuild:
          substitute:
            NAME: web
        """))
    for i, where in enumerate(("labels", "annotations")):
        repo.write(f"app/cm{i}.yaml", f"""
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: cm{i}
              {where}:
                kustomize.toolkit.fluxcd.io/substitute: disabled
            data:
              script: echo ${{NAME}}
            """)
    repo.write("app/cm2.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: cm2
        data:
          script: echo ${NAME}
        """)
    scripts = [r.node.to_data()["data"]["script"] for r in repo.render("flux:flux-system/apps").resources]
    assert scripts == ["echo ${NAME}", "echo ${NAME}", "echo web"]


def test_problems_at_their_lines(repo: Repo) -> None:
    repo.write("clusters/prod/apps.yaml", ks("apps", "./app", """
        postBuild:
          substitute:
            PORT: 8080
            bad-name: x
        """))
    repo.write("app/cm.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: cm
        data:
          a: ${UNDEFINED}
          b: ${BROKEN
        """)
    problems = {(p.origin.path, p.origin.line, p.severity): p.message
                for p in repo.render("flux:flux-system/apps").problems}
    assert set(problems) == {("clusters/prod/apps.yaml", 15, "error"),
                             ("clusters/prod/apps.yaml", 16, "error"),
                             ("app/cm.yaml", 6, "warning"),
                             ("app/cm.yaml", 7, "error")}
    assert "must be a string" in problems[("clusters/prod/apps.yaml", 15, "error")]
    assert "var name is invalid" in problems[("clusters/prod/apps.yaml", 16, "error")]
    assert "UNDEFINED is not defined" in problems[("app/cm.yaml", 6, "warning")]
    assert "missing closing brace" in problems[("app/cm.yaml", 7, "error")]


def test_components_and_a_missing_one_that_may_be_ignored(repo: Repo) -> None:
    repo.write("clusters/prod/apps.yaml", ks("apps", "./app", """
        components:
        - ../labels
        - ../absent
        ignoreMissingComponents: true
        """))
    repo.write("app/kustomization.yaml", "resources:\n- cm.yaml\n")
    repo.write("app/cm.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: cm
        """)
    repo.write("labels/kustomization.yaml", """
        apiVersion: kustomize.config.k8s.io/v1alpha1
        kind: Component
        commonLabels:
          from: component
        """)
    [res] = repo.render("flux:flux-system/apps").resources
    assert res.node.to_data()["metadata"]["labels"] == {"from": "component", **OWNER}


def test_controller_objects_of_a_cluster_directory_that_reads_outside_it_and_needs_the_network(
        tmp_path) -> None:
    # the cluster's kustomization names ../../infra (kustomize builds it with
    # the load restrictor lifted, as Flux does) and a dashboard by URL: the
    # Flux Kustomization it holds is still found, and its path checked
    from tests.checkrun import check, write

    write(tmp_path, "clusters/prod/kustomization.yaml", "resources:\n- apps.yaml\n- ../../infra/monitoring\n")
    write(tmp_path, "clusters/prod/apps.yaml", ks("apps", "./apps"))
    write(tmp_path, "infra/monitoring/kustomization.yaml", "configMapGenerator:\n- name: dashboards\n  files:\n"
                                                           "  - https://example.com/dashboards/cluster.json\n")
    write(tmp_path, "apps/kustomization.yaml", "resources: [web.yaml]\n")
    write(tmp_path, "apps/web.yaml", SERVICE_LOWERCASE_PROTOCOL)
    run = check(tmp_path)
    roots = {r["root"] for r in run.report["roots"]}
    assert "flux:flux-system/apps" in roots, roots
    assert [(d["path"], d["line"], d["roots"]) for d in run.report["defects"] if d["severity"] == "error"] == [
        ("apps/web.yaml", 8, ["flux:flux-system/apps"])]


def test_a_kustomization_no_flux_kustomization_reaches_fails_to_build_as_a_warning(tmp_path) -> None:
    # an app moved aside: its path to the shared template names the old
    # place; the sync does not apply it, so its build error is a warning,
    # while the same error in an app the sync applies stays an error
    from tests.checkrun import check, write

    write(tmp_path, "clusters/prod/apps.yaml", ks("apps", "./apps"))
    write(tmp_path, "apps/kustomization.yaml", "resources: [web]\n")
    write(tmp_path, "apps/web/kustomization.yaml", "resources: [../../templates/volsync]\n")
    write(tmp_path, "archive/apps/old/kustomization.yaml", "resources: [../../templates/volsync]\n")
    run = check(tmp_path)
    assert run.code == 2
    shown = sorted((d["path"], d["severity"]) for d in run.report["defects"] if d["validator"] == "build")
    assert shown == [("apps/web/kustomization.yaml", "error"), ("archive/apps/old/kustomization.yaml", "warning")]
    assert any("[unreached]" in n["message"] for n in run.report["notes"])
    # a YAML-level defect a base of it holds loses content whatever reads the file: an error
    write(tmp_path, "archive/apps/new/kustomization.yaml", "resources: [../../../base]\n")
    write(tmp_path, "base/kustomization.yaml", "resources: [cm.yaml]\n")
    write(tmp_path, "base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n")
    assert ("base/cm.yaml", "error") in [(d["path"], d["severity"]) for d in check(tmp_path).report["defects"]]
    # without a Flux sync nothing says what is applied: an error
    (tmp_path / "clusters/prod/apps.yaml").unlink()
    run = check(tmp_path)
    assert {d["severity"] for d in run.report["defects"] if d["validator"] == "build"} == {"error"}


def test_a_base_no_flux_kustomization_applies_that_its_overlays_complete_has_warnings(tmp_path) -> None:
    # bases/web, a kustomization of its own, leaves the protocol as the
    # overlays must set it; the cluster's overlay lists the base's file and
    # patches it: what the sync applies from that file is valid, so the
    # base's error, built on its own, is a warning
    from tests.checkrun import check, write

    write(tmp_path, "clusters/prod/apps.yaml", ks("apps", "./apps"))
    write(tmp_path, "bases/web/kustomization.yaml", "resources: [web.yaml]\n")
    write(tmp_path, "bases/web/web.yaml", SERVICE_LOWERCASE_PROTOCOL)
    write(tmp_path, "apps/kustomization.yaml", "resources: [../bases/web/web.yaml]\npatches:\n"
                                               "- target: {kind: Service, name: web}\n  patch: |-\n"
                                               "    - op: replace\n      path: /spec/ports/0/protocol\n"
                                               "      value: TCP\n")

    def protocol_errors() -> list[tuple[str, str, list[str]]]:
        run = check(tmp_path)
        return [(d["path"], d["severity"], d["roots"]) for d in run.report["defects"] if "protocol" in (d["field"] or "")]

    assert protocol_errors() == [("bases/web/web.yaml", "warning", ["bases/web"])]
    assert any("overlays complete" in n["message"] for n in check(tmp_path).report["notes"])
    # an overlay that leaves it as it is applies the defect: an error, in both
    write(tmp_path, "apps/kustomization.yaml", "resources: [../bases/web/web.yaml]\n")
    assert protocol_errors() == [("bases/web/web.yaml", "error", ["bases/web", "flux:flux-system/apps"])]
    # a file no root the sync applies reads: an error
    write(tmp_path, "apps/kustomization.yaml", "resources: []\n")
    assert protocol_errors() == [("bases/web/web.yaml", "error", ["bases/web"])]
    # without a Flux sync nothing says what is applied: an error
    write(tmp_path, "apps/kustomization.yaml", "resources: [../bases/web/web.yaml]\npatches:\n"
                                               "- target: {kind: Service, name: web}\n  patch: |-\n"
                                               "    - op: replace\n      path: /spec/ports/0/protocol\n"
                                               "      value: TCP\n")
    (tmp_path / "clusters/prod/apps.yaml").unlink()
    assert ("bases/web/web.yaml", "error", ["bases/web"]) in protocol_errors()


def test_a_pattern_operator_over_a_variable_the_repository_cannot_show_is_a_placeholder(repo: Repo) -> None:
    """``name: ${DOMAIN//./-}-tls`` with DOMAIN from a Secret the repository
    does not hold: the controller makes a valid name of it, so the name is
    not judged as written. Given DOMAIN by a ConfigMap of the repository,
    the name is the value replaceAll computes, and that is what is judged."""
    from tests.checkrun import check

    repo.write("clusters/prod/flux-system/gotk-sync.yaml", ks("flux-system", "./clusters/prod"))
    repo.write("clusters/prod/apps.yaml", ks("apps", "./app", """
        postBuild:
          substituteFrom:
          - kind: Secret
            name: cluster-secrets
        """))
    repo.write("app/secret.yaml", """
        apiVersion: v1
        kind: Secret
        metadata:
          name: ${DOMAIN//./-}-tls
        type: kubernetes.io/tls
        stringData:
          tls.crt: x
          tls.key: y
        """)

    def errors() -> list[tuple[str, int, str]]:
        return [(d["path"], d["line"], d["message"]) for d in check(repo.top, ".").report["defects"]
                if d["severity"] == "error"]

    def settings(domain: str) -> None:
        repo.write("clusters/prod/cluster-settings.yaml", f"""
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: cluster-settings
              namespace: flux-system
            data:
              DOMAIN: {domain}
            """)

    assert errors() == []
    rendered = repo.render("flux:flux-system/apps")
    assert rendered.resources[0].name == "${DOMAIN//./-}-tls"
    assert rendered.placeholders == 1
    # the value known: the name computed from it is judged
    repo.write("clusters/prod/apps.yaml", ks("apps", "./app", """
        postBuild:
          substituteFrom:
          - kind: ConfigMap
            name: cluster-settings
        """))
    settings("example.com")
    assert [r.name for r in repo.render("flux:flux-system/apps").resources] == ["example-com-tls"]
    assert errors() == []
    settings("Example.com")
    [(path, line, message)] = errors()
    assert "Example-com-tls" in message
    assert (path, line) == ("clusters/prod/cluster-settings.yaml", 7)  # where DOMAIN is defined


def test_a_kustomization_without_resources_builds_as_the_controller_rewrites_it(repo: Repo) -> None:
    # kustomize-controller rewrites an existing kustomization through
    # kustomize's type and gives one without resources buildMetadata
    # [originAnnotations]: an empty or comments-only file builds to nothing
    # (kubectl kustomize refuses it), and what a generator makes is
    # annotated with its origin.
    repo.write("clusters/prod/apps.yaml",
               ks("empty", "./empty") + "---\n" + ks("commented", "./commented") + "---\n"
               + ks("generated", "./generated"))
    repo.write("empty/kustomization.yaml", "")
    repo.write("commented/kustomization.yaml", """
        # resources:
        # - demo.yaml
        """)
    repo.write("generated/kustomization.yaml", """
        configMapGenerator:
        - name: settings
          literals: [a=b]
        """)
    assert repo.render("flux:flux-system/empty").resources == []
    assert repo.render("flux:flux-system/commented").resources == []
    [cm] = repo.render("flux:flux-system/generated").resources
    origin = cm.node.to_data()["metadata"]["annotations"]["config.kubernetes.io/origin"]
    assert "configuredIn: kustomization.yaml" in origin and "kind: ConfigMapGenerator" in origin


def test_a_child_path_whose_variable_an_unreadable_source_may_give_is_not_known(tmp_path) -> None:
    # the parent substitutes from a ConfigMap and a Secret the repository
    # does not hold: the child's path variable is not known here, an info
    # (not "not defined", an error)
    from tests.checkrun import check, write

    write(tmp_path, "clusters/prod/flux-system/gotk-sync.yaml", ks("flux-system", "./clusters/prod"))
    write(tmp_path, "clusters/prod/apps.yaml", ks("apps", "./apps", """
        postBuild:
          substituteFrom:
          - kind: ConfigMap
            name: settings
          - kind: Secret
            name: sealed
        """))
    # neither source is in the repository: CLUSTER may come from either
    write(tmp_path, "apps/kustomization.yaml", "resources: [ks.yaml]\n")
    write(tmp_path, "apps/ks.yaml", ks("secret", "./apps/secret/${CLUSTER}"))
    write(tmp_path, "apps/secret/prod/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    run = check(tmp_path)
    assert run.located("error") == [], run.out
    assert any("holds a variable whose value comes from a source the repository cannot show" in d["message"]
               for d in run.report["defects"])
    # with the ConfigMap written and without the Secret, CLUSTER is known and the path is built
    write(tmp_path, "clusters/prod/settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                                   "  name: settings\n  namespace: flux-system\ndata:\n  CLUSTER: prod\n")
    text = (tmp_path / "clusters/prod/apps.yaml").read_text()
    write(tmp_path, "clusters/prod/apps.yaml", text.replace("  - kind: Secret\n    name: sealed\n", ""))
    run = check(tmp_path)
    assert run.located("error") == [] and not any("cannot show" in d["message"] for d in run.report["defects"])
