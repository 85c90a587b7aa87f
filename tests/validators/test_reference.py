from __future__ import annotations

import pytest

from krmcheck.locate import locate
from krmcheck.resource.resource import Resource
from krmcheck.results import ResourceRef, Result
from krmcheck.tree.load import load_documents
from krmcheck.validators import Provided, ValidatorOptions, reference

# One object of each kind a pod refers to, so that the root "defines objects of
# the kind" and a missing one is reported (a root with none relies on others).
DEFINED = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: shop}
data: {LOG_LEVEL: info, app.yaml: "a: 1"}
---
apiVersion: v1
kind: Secret
metadata: {name: app-secret, namespace: shop}
stringData: {password: x}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: app, namespace: shop}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: shop}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


def run(text: str, provided: tuple[Provided, ...] = ()) -> list[Result]:
    items = load_documents(text, "app/resources.yaml")
    return reference.validate(items, ValidatorOptions(provided=provided))  # type: ignore[arg-type]


def rules(text: str, provided: tuple[Provided, ...] = ()) -> list[tuple[str, str, str]]:
    return [(dict(r.tags)["rule"], r.severity, r.field_path) for r in run(text, provided)]


def deployment(pod_spec: str, name: str = "web", namespace: str = "shop") -> str:
    """A Deployment whose pod spec is ``pod_spec`` (YAML indented by 6)."""
    return f"""\
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
{pod_spec}"""


CONTAINER = "      containers:\n      - name: web\n        image: nginx:1.27\n"


def container(lines: str) -> str:
    """The one container, with ``lines`` (indented by 8) added."""
    return CONTAINER + lines


def test_id() -> None:
    assert reference.id == "reference"


def test_references_to_defined_objects_pass() -> None:
    pod = container("""\
        envFrom: [{configMapRef: {name: app-config}}, {secretRef: {name: app-secret}}]
        env:
        - {name: A, valueFrom: {configMapKeyRef: {name: app-config, key: LOG_LEVEL}}}
        - {name: B, valueFrom: {secretKeyRef: {name: app-secret, key: password}}}
""") + """\
      serviceAccountName: app
      priorityClassName: high
      volumes:
      - {name: a, configMap: {name: app-config, items: [{key: app.yaml, path: app.yaml}]}}
      - {name: b, secret: {secretName: app-secret}}
      - {name: c, persistentVolumeClaim: {claimName: data}}
      - name: d
        projected:
          sources: [{configMap: {name: app-config}}, {secret: {name: app-secret}}, {serviceAccountToken: {path: t}}]
"""
    assert run(DEFINED + deployment(pod)) == []


@pytest.mark.parametrize(("pod", "kind", "name", "path", "rule"), [
    (CONTAINER + "      volumes: [{name: a, configMap: {name: app-cfg}}]\n",
     "ConfigMap", "app-cfg", "volumes[0].configMap.name", "configmap"),
    (CONTAINER + "      volumes: [{name: a, secret: {secretName: tls}}]\n",
     "Secret", "tls", "volumes[0].secret.secretName", "secret"),
    (CONTAINER + "      volumes: [{name: a, persistentVolumeClaim: {claimName: cache}}]\n",
     "PersistentVolumeClaim", "cache", "volumes[0].persistentVolumeClaim.claimName", "persistent-volume-claim"),
    (CONTAINER + "      volumes: [{name: a, projected: {sources: [{secret: {name: app-secret}}, {configMap: {name: ca}}]}}]\n",
     "ConfigMap", "ca", "volumes[0].projected.sources[1].configMap.name", "configmap"),
    (CONTAINER + "      volumes: [{name: a, projected: {sources: [{secret: {name: token}}]}}]\n",
     "Secret", "token", "volumes[0].projected.sources[0].secret.name", "secret"),
    (container("        envFrom: [{configMapRef: {name: env}}]\n"),
     "ConfigMap", "env", "containers[0].envFrom[0].configMapRef.name", "configmap"),
    (container("        envFrom: [{secretRef: {name: env}}]\n"),
     "Secret", "env", "containers[0].envFrom[0].secretRef.name", "secret"),
    (container("        env: [{name: A, valueFrom: {configMapKeyRef: {name: env, key: a}}}]\n"),
     "ConfigMap", "env", "containers[0].env[0].valueFrom.configMapKeyRef.name", "configmap"),
    (container("        env: [{name: A, valueFrom: {secretKeyRef: {name: db, key: a}}}]\n"),
     "Secret", "db", "containers[0].env[0].valueFrom.secretKeyRef.name", "secret"),
    (CONTAINER + "      initContainers:\n      - name: init\n        image: busybox:1\n"
     "        envFrom: [{secretRef: {name: init-env}}]\n",
     "Secret", "init-env", "initContainers[0].envFrom[0].secretRef.name", "secret"),
    (CONTAINER + "      imagePullSecrets: [{name: registry}]\n",
     "Secret", "registry", "imagePullSecrets[0].name", "secret"),
    (CONTAINER + "      serviceAccountName: web\n", "ServiceAccount", "web", "serviceAccountName", "service-account"),
    (CONTAINER + "      serviceAccount: web\n", "ServiceAccount", "web", "serviceAccount", "service-account"),
])
def test_a_missing_object_is_a_warning_at_the_reference(pod: str, kind: str, name: str, path: str, rule: str) -> None:
    [result] = run(DEFINED + deployment(pod))
    assert (result.severity, result.field_path) == ("warning", f"spec.template.spec.{path}")
    assert result.message == (f"{kind} {name!r} is not defined in this root (namespace 'shop'); if it is made "
                              "elsewhere, declare it under provided: in .krmcheck.yaml")
    assert result.resource_ref == ResourceRef("apps/v1", "Deployment", "web", "shop")
    assert result.tags == (("validator", "reference"), ("rule", rule))


def test_a_missing_priority_class_is_cluster_wide() -> None:
    [result] = run(DEFINED + deployment(CONTAINER + "      priorityClassName: urgent\n"))
    assert (dict(result.tags)["rule"], result.field_path) == ("priority-class", "spec.template.spec.priorityClassName")
    assert result.message.startswith("PriorityClass 'urgent' is not defined in this root; if")


@pytest.mark.parametrize("pod", [
    CONTAINER + "      volumes: [{name: a, configMap: {name: gone, optional: true}}]\n",
    CONTAINER + "      volumes: [{name: a, secret: {secretName: gone, optional: true}}]\n",
    CONTAINER + "      volumes: [{name: a, projected: {sources: [{secret: {name: gone, optional: true}}]}}]\n",
    container("        envFrom: [{configMapRef: {name: gone, optional: true}}]\n"),
    container("        envFrom: [{secretRef: {name: gone, optional: true}}]\n"),
    container("        env: [{name: A, valueFrom: {configMapKeyRef: {name: gone, key: a, optional: true}}}]\n"),
    container("        env: [{name: A, valueFrom: {secretKeyRef: {name: app-secret, key: gone, optional: true}}}]\n"),
])
def test_optional_references_are_skipped(pod: str) -> None:
    assert run(DEFINED + deployment(pod)) == []


def test_objects_every_cluster_has_are_not_missing() -> None:
    pod = CONTAINER + """\
      serviceAccountName: default
      priorityClassName: system-cluster-critical
      volumes:
      - {name: a, configMap: {name: kube-root-ca.crt}}
      - {name: b, configMap: {name: istio-ca-root-cert}}
"""
    assert run(DEFINED + deployment(pod)) == []


def test_a_root_that_defines_no_object_of_the_kind_relies_on_others() -> None:
    pod = CONTAINER + "      serviceAccountName: web\n      volumes: [{name: a, secret: {secretName: db}}]\n"
    assert run(deployment(pod)) == []
    assert [r.message.split(" is ")[0] for r in run(DEFINED + deployment(pod))] == ["Secret 'db'", "ServiceAccount 'web'"]


def test_a_reference_resolves_in_the_referrers_namespace() -> None:
    pod = container("        envFrom: [{configMapRef: {name: app-config}}]\n")
    assert rules(DEFINED + deployment(pod, namespace="other")) == [
        ("configmap", "warning", "spec.template.spec.containers[0].envFrom[0].configMapRef.name")]
    # an empty namespace matches an empty one
    assert run((DEFINED + deployment(pod)).replace("namespace: shop", "namespace: ''")) == []


def test_one_finding_per_missing_object() -> None:
    pod = container("        envFrom: [{secretRef: {name: db}}]\n")
    [result] = run(DEFINED + deployment(pod) + deployment(pod, name="worker") + deployment(pod, name="cron"))
    assert result.resource_ref is not None and result.resource_ref.name == "web"
    assert result.message == ("Secret 'db' is not defined in this root (namespace 'shop') (also named by "
                              "Deployment 'cron', Deployment 'worker'); if it is made elsewhere, declare it under "
                              "provided: in .krmcheck.yaml")


def test_provided_objects_are_not_missing() -> None:
    pod = container("        envFrom: [{secretRef: {name: db-credentials}}]\n")
    text = DEFINED + deployment(pod)
    assert run(text, (Provided("Secret", "db-*"),)) == []
    assert run(text, (Provided("*", "db-credentials", "shop"),)) == []
    assert len(run(text, (Provided("Secret", "db-*", "prod"),))) == 1
    assert len(run(text, (Provided("ConfigMap", "db-credentials"),))) == 1


@pytest.mark.parametrize("maker", [
    "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: db, namespace: shop}\n"
    "spec: {target: {name: db-credentials}}\n",
    "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata: {name: db-credentials, namespace: shop}\n"
    "spec: {secretStoreRef: {name: vault}}\n",
    "apiVersion: external-secrets.io/v1beta1\nkind: ClusterExternalSecret\nmetadata: {name: shared}\n"
    "spec: {externalSecretSpec: {target: {name: db-credentials}}}\n",
    "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata: {name: db-credentials, namespace: shop}\n"
    "spec: {encryptedData: {password: AgB}}\n",
    "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata: {name: sealed, namespace: shop}\n"
    "spec: {template: {metadata: {name: db-credentials}}}\n",
    "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: web, namespace: shop}\n"
    "spec: {secretName: db-credentials, issuerRef: {name: ca}}\n",
    "apiVersion: onepassword.com/v1\nkind: OnePasswordItem\nmetadata: {name: db-credentials, namespace: shop}\n"
    "spec: {itemPath: vaults/x/items/y}\n",
    "apiVersion: k8s.bitwarden.com/v1\nkind: BitwardenSecret\nmetadata: {name: bw, namespace: shop}\n"
    "spec: {secretName: db-credentials}\n",
    "apiVersion: secrets.hashicorp.com/v1beta1\nkind: VaultStaticSecret\nmetadata: {name: vs, namespace: shop}\n"
    "spec: {destination: {name: db-credentials, create: true}}\n",
    "apiVersion: secrets.doppler.com/v1alpha1\nkind: DopplerSecret\nmetadata: {name: dp, namespace: shop}\n"
    "spec: {managedSecret: {name: db-credentials}}\n",
    "apiVersion: isindir.github.com/v1alpha3\nkind: SopsSecret\nmetadata: {name: sops, namespace: shop}\n"
    "spec: {secretTemplates: [{name: other}, {name: db-credentials}]}\n",
    "apiVersion: database.example.org/v1alpha1\nkind: PostgreSQLInstance\nmetadata: {name: db, namespace: shop}\n"
    "spec: {writeConnectionSecretToRef: {name: db-credentials}}\n",
    "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: shop\n  annotations:\n"
    "    service.beta.openshift.io/serving-cert-secret-name: db-credentials\nspec: {ports: [{port: 443}]}\n",
    "apiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata: {name: db, namespace: shop}\nspec: {instances: 3}\n",
    "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: db, namespace: shop}\n"
    "spec: {chart: {spec: {chart: postgresql}}}\n",
    "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: db, namespace: argocd}\n"
    "spec: {destination: {namespace: shop}}\n",
], ids=["external-secret", "external-secret-name", "cluster-external-secret", "sealed-secret",
        "sealed-secret-template", "certificate", "1password", "bitwarden", "vault", "doppler", "sops",
        "crossplane", "openshift-serving-cert", "cnpg", "helm-release", "argo-application"])
def test_objects_that_the_root_makes_are_not_missing(maker: str) -> None:
    pod = container("        env: [{name: A, valueFrom: {secretKeyRef: {name: db-credentials, key: password}}}]\n")
    text = DEFINED + deployment(pod)
    assert len(run(text)) == 1
    assert run(text + "---\n" + maker) == []


def test_a_stateful_set_makes_the_claims_of_its_pods() -> None:
    pod = CONTAINER + "      volumes: [{name: a, persistentVolumeClaim: {claimName: data-db-0}}]\n"
    db = deployment(CONTAINER, name="db").replace("kind: Deployment", "kind: StatefulSet") + (
        "  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce]}}]\n")
    assert rules(DEFINED + deployment(pod)) == [
        ("persistent-volume-claim", "warning", "spec.template.spec.volumes[0].persistentVolumeClaim.claimName")]
    assert run(DEFINED + deployment(pod) + db) == []


def test_a_token_secret_names_its_service_account() -> None:
    token = """\
---
apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: ci-token
  namespace: shop
  annotations: {kubernetes.io/service-account.name: NAME}
"""
    assert run(DEFINED + token.replace("NAME", "app")) == []
    [result] = run(DEFINED + token.replace("NAME", "ci"))
    assert (dict(result.tags)["rule"], result.field_path) == (
        "service-account", 'metadata.annotations["kubernetes.io/service-account.name"]')


def test_a_maker_in_another_namespace_does_not_count() -> None:
    pod = container("        envFrom: [{secretRef: {name: db-credentials}}]\n")
    maker = ("---\napiVersion: external-secrets.io/v1\nkind: ExternalSecret\n"
             "metadata: {name: db-credentials, namespace: other}\n")
    assert len(run(DEFINED + deployment(pod) + maker)) == 1


SECRET_WRITER = """\
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cert-writer, namespace: shop}
rules:
- {apiGroups: [""], resources: [secrets], verbs: [get, create, update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: cert-writer, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cert-writer}
subjects: [{kind: ServiceAccount, name: app}]
"""


def test_a_workload_that_may_create_secrets_may_make_the_missing_one() -> None:
    pod = CONTAINER + "      serviceAccountName: app\n      volumes: [{name: a, secret: {secretName: webhook-cert}}]\n"
    assert run(DEFINED + deployment(pod) + SECRET_WRITER) == []
    # without the permission, or for a ConfigMap, it is missing
    assert len(run(DEFINED + deployment(pod))) == 1
    assert len(run(DEFINED + deployment(pod) + SECRET_WRITER.replace("[get, create, update]", "[get]"))) == 1
    config = CONTAINER + "      serviceAccountName: app\n      volumes: [{name: a, configMap: {name: generated}}]\n"
    assert len(run(DEFINED + deployment(config) + SECRET_WRITER.replace("secrets", "configmaps"))) == 1


# --- key ---------------------------------------------------------------------

def test_a_key_the_object_does_not_hold_is_an_error() -> None:
    pod = container("        env: [{name: A, valueFrom: {configMapKeyRef: {name: app-config, key: LOGLEVEL}}}]\n")
    [result] = run(DEFINED + deployment(pod))
    assert (result.severity, result.field_path) == (
        "error", "spec.template.spec.containers[0].env[0].valueFrom.configMapKeyRef.key")
    assert result.message == "ConfigMap 'app-config' has no key 'LOGLEVEL' (it has LOG_LEVEL, app.yaml)"
    assert dict(result.tags)["rule"] == "key"


def test_volume_items_and_secret_keys() -> None:
    pod = CONTAINER + "      volumes: [{name: a, secret: {secretName: app-secret, items: [{key: passwd, path: p}]}}]\n"
    assert rules(DEFINED + deployment(pod)) == [
        ("key", "error", "spec.template.spec.volumes[0].secret.items[0].key")]


def test_keys_of_objects_without_data_are_not_judged() -> None:
    pod = container("        env: [{name: A, valueFrom: {secretKeyRef: {name: filled-later, key: token}}}]\n")
    empty = "---\napiVersion: v1\nkind: Secret\nmetadata: {name: filled-later, namespace: shop}\n"
    assert run(DEFINED + deployment(pod) + empty) == []
    token = (empty + "type: kubernetes.io/service-account-token\ndata: {other: eA==}\n")
    assert run(DEFINED + deployment(pod) + token) == []


def test_a_key_k3s_writes_into_its_coredns_config_map_is_there() -> None:
    # k3s's CoreDNS mounts NodeHosts, which k3s's node controller writes into
    # kube-system/coredns; another key, or the same ConfigMap elsewhere, is judged
    coredns = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: coredns, namespace: kube-system}\n"
               "data: {Corefile: '.:53 {}'}\n---\n")
    def mounting(key: str, namespace: str = "kube-system") -> str:
        return ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: coredns, namespace: %s}\nspec:\n"
                "  selector: {matchLabels: {k8s-app: kube-dns}}\n  template:\n    metadata: {labels: {k8s-app: kube-dns}}\n"
                "    spec:\n      containers: [{name: coredns, image: 'coredns/coredns:1.12.0'}]\n"
                "      volumes: [{name: c, configMap: {name: coredns, items: [{key: Corefile, path: Corefile}, "
                "{key: %s, path: %s}]}}]\n" % (namespace, key, key))
    assert run(coredns + mounting("NodeHosts")) == []
    assert [r.field_path for r in run(coredns + mounting("Hosts"))] == ["spec.template.spec.volumes[0].configMap.items[1].key"]
    elsewhere = coredns.replace("kube-system", "dns")
    assert len(run(elsewhere + mounting("NodeHosts", "dns"))) == 1


# --- service, service-port -------------------------------------------------------

SERVICE = """\
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
"""


def ingress(backend: str) -> str:
    return f"""\
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {{name: web, namespace: shop}}
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: {backend}
"""


@pytest.mark.parametrize("backend", [
    "{service: {name: web, port: {number: 80}}}",
    "{service: {name: web, port: {name: http}}}",
])
def test_an_ingress_backend_that_exists_passes(backend: str) -> None:
    assert run(SERVICE + ingress(backend)) == []


def test_an_ingress_backend_naming_a_missing_service() -> None:
    [result] = run(SERVICE + ingress("{service: {name: api, port: {number: 80}}}"))
    assert (dict(result.tags)["rule"], result.severity) == ("service", "warning")
    assert result.field_path == "spec.rules[0].http.paths[0].backend.service.name"
    assert result.message.startswith("Service 'api' is not defined in this root (namespace 'shop');")


@pytest.mark.parametrize(("backend", "path", "wanted"), [
    ("{service: {name: web, port: {number: 8080}}}", "backend.service.port.number", "8080"),
    ("{service: {name: web, port: {name: https}}}", "backend.service.port.name", "'https'"),
])
def test_an_ingress_backend_naming_a_missing_port_is_an_error(backend: str, path: str, wanted: str) -> None:
    [result] = run(SERVICE + ingress(backend))
    assert (dict(result.tags)["rule"], result.severity) == ("service-port", "error")
    assert result.field_path == f"spec.rules[0].http.paths[0].{path}"
    assert result.message == f"Service 'web' has no port {wanted} (it has 80 (http))"


# The AWS Load Balancer Controller's actions: the backend's service name is the
# action's name (annotation alb.ingress.kubernetes.io/actions.<name>, which Argo
# Rollouts writes at run time), and its port is use-annotation.
ACTION_SERVICE = SERVICE.replace("name: web,", "name: alb-rollout-root,")


@pytest.mark.parametrize("text", [
    # the Service exists and has no port named use-annotation
    ACTION_SERVICE + ingress("{service: {name: alb-rollout-root, port: {name: use-annotation}}}"),
    # no Service of that name: the name is the action's
    SERVICE + ingress("{service: {name: alb-rollout-root, port: {name: use-annotation}}}"),
    (ACTION_SERVICE + ingress("{serviceName: alb-rollout-root, servicePort: use-annotation}")).replace(
        "networking.k8s.io/v1", "extensions/v1beta1"),
    (SERVICE + ingress("{serviceName: redirect, servicePort: use-annotation}")).replace(
        "networking.k8s.io/v1", "networking.k8s.io/v1beta1"),
], ids=["v1", "v1-no-service", "extensions-v1beta1", "v1beta1-no-service"])
def test_an_ingress_backend_using_an_alb_action_annotation_passes(text: str) -> None:
    assert run(text) == []


def test_an_alb_ingress_still_needs_the_ports_it_names() -> None:
    text = (ACTION_SERVICE + ingress("{service: {name: alb-rollout-root, port: {name: https}}}")).replace(
        "metadata: {name: web, namespace: shop}\nspec:\n  rules:",
        "metadata:\n  name: web\n  namespace: shop\n  annotations:\n"
        "    alb.ingress.kubernetes.io/actions.alb-rollout-root: '{}'\nspec:\n  rules:")
    assert "actions.alb-rollout-root" in text
    [result] = run(text)
    assert (dict(result.tags)["rule"], result.severity) == ("service-port", "error")
    assert result.message == "Service 'alb-rollout-root' has no port 'https' (it has 80 (http))"


@pytest.mark.parametrize(("annotation", "errors"), [
    ("nginx.ingress.kubernetes.io/permanent-redirect: https://www.example.com", 0),
    ("nginx.ingress.kubernetes.io/temporal-redirect: https://www.example.com", 0),
    # an annotation that does not redirect everything leaves the backend reached
    ("nginx.ingress.kubernetes.io/rewrite-target: /", 1),
])
def test_the_backend_of_an_ingress_nginx_redirects_is_never_reached(annotation: str, errors: int) -> None:
    text = (SERVICE + ingress("{service: {name: web, port: {number: 8080}}}")).replace(
        "metadata: {name: web, namespace: shop}\nspec:",
        f"metadata:\n  name: web\n  namespace: shop\n  annotations:\n    {annotation}\nspec:")
    assert annotation in text
    assert len(run(text)) == errors


def test_a_port_number_of_an_external_name_service_is_not_judged() -> None:
    # a Tailscale egress Service: ingress-nginx connects to the external name
    # on the backend's port; a port name must still be declared
    external = SERVICE.replace("spec:", "spec:\n  type: ExternalName\n  externalName: host.example.ts.net", 1)
    assert "type: ExternalName" in external
    assert run(external + ingress("{service: {name: web, port: {number: 1411}}}")) == []
    assert rules(external + ingress("{service: {name: web, port: {name: https}}}")) == [
        ("service-port", "error", "spec.rules[0].http.paths[0].backend.service.port.name")]
    assert rules(SERVICE + ingress("{service: {name: web, port: {number: 1411}}}")) == [
        ("service-port", "error", "spec.rules[0].http.paths[0].backend.service.port.number")]


def test_the_default_backend_and_the_v1beta1_shape() -> None:
    default = SERVICE + ingress("{service: {name: web, port: {number: 80}}}").replace(
        "  rules:", "  defaultBackend: {service: {name: fallback, port: {number: 80}}}\n  rules:")
    assert rules(default) == [("service", "warning", "spec.defaultBackend.service.name")]
    old = (SERVICE + ingress("{serviceName: web, servicePort: 81}")).replace("networking.k8s.io/v1", "extensions/v1beta1")
    assert rules(old) == [("service-port", "error", "spec.rules[0].http.paths[0].backend.servicePort")]


def http_route(refs: str) -> str:
    return f"""\
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {{name: web, namespace: shop}}
spec:
  parentRefs: [{{name: gateway, namespace: gateway}}]
  rules:
  - backendRefs: {refs}
"""


def test_http_route_backend_refs() -> None:
    assert run(SERVICE + http_route("[{name: web, port: 80}]")) == []
    assert rules(SERVICE + http_route("[{name: web, port: 80}, {name: api, port: 80}]")) == [
        ("service", "warning", "spec.rules[0].backendRefs[1].name")]
    assert rules(SERVICE + http_route("[{name: web, port: 8080}]")) == [
        ("service-port", "error", "spec.rules[0].backendRefs[0].port")]
    # another kind of backend, or a Service of the namespace the reference names
    assert run(SERVICE + http_route("[{group: example.com, kind: Bucket, name: api}]")) == []
    assert rules(SERVICE + http_route("[{name: web, namespace: other, port: 80}]")) == [
        ("service", "warning", "spec.rules[0].backendRefs[0].name")]


def openshift_route(to: str, target_port: str) -> str:
    return f"""\
---
apiVersion: route.openshift.io/v1
kind: Route
metadata: {{name: web, namespace: shop}}
spec:
  to: {{kind: Service, name: {to}}}
  port: {{targetPort: {target_port}}}
"""


def test_openshift_routes() -> None:
    assert run(SERVICE + openshift_route("web", "http")) == []
    assert run(SERVICE + openshift_route("web", "8080")) == []  # the target port number
    assert rules(SERVICE + openshift_route("apicast", "http")) == [("service", "warning", "spec.to.name")]
    assert rules(SERVICE + openshift_route("web", "80")) == [("service-port", "error", "spec.port.targetPort")]
    assert rules(SERVICE + openshift_route("web", "metrics")) == [("service-port", "error", "spec.port.targetPort")]


# --- scale-target ------------------------------------------------------------------

def test_an_autoscaler_naming_a_missing_workload() -> None:
    hpa = """\
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: NAME}
  maxReplicas: 3
"""
    assert run(deployment(CONTAINER) + hpa.replace("NAME", "web")) == []
    [result] = run(deployment(CONTAINER) + hpa.replace("NAME", "webapp"))
    assert (dict(result.tags)["rule"], result.severity, result.field_path) == (
        "scale-target", "warning", "spec.scaleTargetRef.name")
    assert result.message.startswith("Deployment 'webapp' is not defined in this root (namespace 'shop')")
    # a root without Deployments scales workloads that others define
    assert run(hpa.replace("NAME", "webapp")) == []


def test_keda_and_vertical_autoscalers() -> None:
    keda = ("---\napiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: w, namespace: shop}\n"
            "spec: {scaleTargetRef: {name: worker}}\n")  # kind defaults to Deployment
    assert rules(deployment(CONTAINER) + keda) == [("scale-target", "warning", "spec.scaleTargetRef.name")]
    vpa = ("---\napiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\nmetadata: {name: w, namespace: shop}\n"
           "spec: {targetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}}\n")
    assert rules(deployment(CONTAINER) + vpa) == [("scale-target", "warning", "spec.targetRef.name")]


# --- role ------------------------------------------------------------------------

def binding(kind: str, role_kind: str, name: str) -> str:
    namespace = "\n  namespace: shop" if kind == "RoleBinding" else ""
    return f"""\
---
apiVersion: rbac.authorization.k8s.io/v1
kind: {kind}
metadata:
  name: b-{name.replace(':', '-')}{namespace}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: {role_kind}, name: "{name}"}}
subjects: [{{kind: ServiceAccount, name: app, namespace: shop}}]
"""


ROLES = """\
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: shop}
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: operator}
rules: []
"""


def test_bindings_to_defined_and_built_in_roles_pass() -> None:
    text = ROLES + binding("RoleBinding", "Role", "reader") + binding("ClusterRoleBinding", "ClusterRole", "operator")
    for role in ("view", "cluster-admin", "system:auth-delegator", "cluster-monitoring-view"):
        text += binding("ClusterRoleBinding", "ClusterRole", role)
    text += binding("RoleBinding", "Role", "extension-apiserver-authentication-reader")
    assert run(text) == []


def test_a_binding_to_a_missing_role() -> None:
    [result] = run(ROLES + binding("RoleBinding", "Role", "writer"))
    assert (dict(result.tags)["rule"], result.severity, result.field_path) == ("role", "warning", "roleRef.name")
    assert result.message.startswith("Role 'writer' is not defined in this root (namespace 'shop');")
    # a Role of another namespace does not count
    assert len(run(ROLES.replace("namespace: shop", "namespace: other") + binding("RoleBinding", "Role", "reader"))) == 1


def test_cluster_roles_are_judged_when_the_root_defines_some() -> None:
    [result] = run(ROLES + binding("ClusterRoleBinding", "ClusterRole", "operator-role"))
    assert result.message.startswith("ClusterRole 'operator-role' is not defined in this root; if")
    no_cluster_roles = ROLES.split("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole")[0]
    assert run(no_cluster_roles + binding("ClusterRoleBinding", "ClusterRole", "operator-role")) == []


# --- target-port -----------------------------------------------------------------

def test_a_named_target_port_no_selected_container_declares() -> None:
    pod = container("        ports: [{name: web, containerPort: 8080}]\n")
    service = SERVICE.replace("targetPort: 8080", "targetPort: NAME")
    assert run(deployment(pod) + service.replace("NAME", "web")) == []
    assert run(deployment(pod) + service.replace("NAME", "8080")) == []
    [result] = run(deployment(pod) + service.replace("NAME", "http"))
    assert (dict(result.tags)["rule"], result.severity, result.field_path) == (
        "target-port", "warning", "spec.ports[0].targetPort")
    assert result.message == ("targetPort 'http' is not a container port name of the pods this Service selects "
                              "(Deployment 'web')")


def test_a_target_port_is_not_judged_without_selected_templates() -> None:
    service = SERVICE.replace("targetPort: 8080", "targetPort: http")
    assert run(deployment(CONTAINER) + service.replace("{app: web}", "{app: api}")) == []
    assert run(service) == []


def test_the_finding_is_located_at_the_reference() -> None:
    docs = load_documents(DEFINED, "base/defined.yaml")
    pod = container("        envFrom: [{configMapRef: {name: app-cfg}}]\n")
    docs += load_documents(deployment(pod), "base/deployment.yaml")
    [result] = reference.validate(docs, ValidatorOptions())  # type: ignore[arg-type]
    finding = locate(result, [Resource(d) for d in docs], "overlays/prod")  # type: ignore[arg-type]
    assert finding.location == ("base/deployment.yaml", 13, 35)  # the "name:" of configMapRef
