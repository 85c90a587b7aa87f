"""The field rules of ``krmcheck/schemas/field_rules.yaml`` beyond allowed
values: required values, ranges, formats, uniqueness, one-of groups,
references, keys, requests within limits. For each family and each group of
kinds, an object the API server accepts (no finding) and one it refuses (a
finding of the rule, at the line of the field, or of the object that lacks
it); versions where a rule changes; values still to be substituted."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.locate import Locator
from krmcheck.resource.resource import Resource
from krmcheck.schemas import formats, rules
from krmcheck.tree.load import load_documents
from krmcheck.validators import ValidatorOptions, schema
from tests.checkrun import check, write

NEWEST = "1.37"


def findings(text: str, version: str = NEWEST) -> list[tuple[str, int, str]]:
    """(rule, line, message) of every field-rule finding of the documents in ``text``."""
    out = []
    for item in load_documents(text, "r.yaml"):
        locator = Locator([Resource(item)], "root")
        for r in schema.validate([item], ValidatorOptions(version)):
            rule = dict(r.tags).get("rule", "")
            if r.severity == "error":
                out.append((rule, locator.locate(r).location.line, r.message))
    return out


def rule_lines(text: str, version: str = NEWEST) -> list[tuple[str, int]]:
    return [(rule, line) for rule, line, _ in findings(text, version)]


def line_of(text: str, needle: str) -> int:
    return next(i for i, t in enumerate(text.splitlines(), 1) if needle in t)


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
{spec}
"""

GOOD_SPEC = """\
      volumes:
      - name: config
        configMap: {name: web-config, defaultMode: 0644}
      containers:
      - name: web
        image: nginx:1.27
        ports: [{name: http, containerPort: 8080}]
        env: [{name: MODE, value: prod}]
        volumeMounts: [{name: config, mountPath: /etc/web}]
        readinessProbe: {httpGet: {path: /, port: http}}
        resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: "1", memory: 128Mi}}
"""


def deployment(spec: str = GOOD_SPEC) -> str:
    return DEPLOYMENT.format(spec=spec.rstrip("\n"))


def test_the_families_are_all_used_and_every_rule_cites_its_source() -> None:
    used = {rule.check for found in rules.every_rule().values() for _, rule in found}
    assert used == {"values", "required", "forbidden", "range", "format", "unique", "exclusive", "refers",
                    "keys", "disjoint", "resources"}
    for found in rules.every_rule().values():
        for _, rule in found:
            assert rule.source and "validation" in rule.source, rule.id


# -- required ---------------------------------------------------------------------

def test_a_container_without_an_image_is_reported_at_the_container() -> None:
    assert findings(deployment()) == []
    text = deployment(GOOD_SPEC.replace("        image: nginx:1.27\n", ""))
    [(rule, line, message)] = findings(text)
    assert (rule, line) == ("container-image-required", line_of(text, "- name: web"))
    assert message == ("spec.template.spec.containers[0]: missing required field 'image': "
                       "the API server refuses a container without an image")


def test_an_empty_image_is_reported_at_its_line() -> None:
    text = deployment(GOOD_SPEC.replace("image: nginx:1.27", 'image: ""'))
    assert rule_lines(text) == [("container-image-required", line_of(text, "image:"))]


@pytest.mark.parametrize("kind_text", [
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a}]\n",
    "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n"
    "    spec:\n      template:\n        spec:\n          restartPolicy: Never\n          containers: [{name: a}]\n",
    "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: r}\nspec:\n  selector: {a: b}\n  template:\n"
    "    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: a}]\n",
])
def test_every_workload_template_needs_images(kind_text: str) -> None:
    assert [r for r, _ in rule_lines(kind_text)] == ["container-image-required"]
    assert rule_lines(kind_text.replace("{name: a}", "{name: a, image: busybox}")) == []


def test_a_role_binding_subject_of_a_cluster_role_binding_needs_a_namespace() -> None:
    text = ("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\n"
            "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\n"
            "subjects:\n- kind: ServiceAccount\n  name: app\n")
    assert rule_lines(text) == [("cluster-role-binding-service-account-namespace", 6)]
    assert rule_lines(text + "  namespace: prod\n") == []
    # a RoleBinding's ServiceAccount defaults to the binding's namespace
    assert rule_lines(text.replace("ClusterRoleBinding", "RoleBinding")) == []


def test_a_claim_needs_access_modes_and_a_storage_request() -> None:
    good = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec:\n"
            "  accessModes: [ReadWriteOnce]\n  resources:\n    requests: {storage: 1Gi}\n")
    assert rule_lines(good) == []
    bad = good.replace("  accessModes: [ReadWriteOnce]\n", "").replace("{storage: 1Gi}", "{cpu: '1'}")
    assert rule_lines(bad) == [("pvc-access-modes-required", 4), ("pvc-storage-request-required", 6)]


def test_a_role_rule_for_resources_needs_api_groups() -> None:
    text = ("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\nrules:\n"
            "- resources: [pods]\n  verbs: [get]\n")
    assert rule_lines(text) == [("policy-rule-api-groups-required", 5)]
    assert rule_lines(text.replace("- resources", "- apiGroups: ['']\n  resources")) == []


# -- forbidden --------------------------------------------------------------------

def test_a_namespaced_role_cannot_grant_non_resource_urls() -> None:
    text = ("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\nrules:\n"
            "- nonResourceURLs: [/metrics]\n  verbs: [get]\n")
    assert rule_lines(text) == [("role-non-resource-urls-forbidden", 5)]
    assert rule_lines(text.replace("kind: Role", "kind: ClusterRole")) == []


def test_a_node_port_needs_a_type_that_opens_node_ports() -> None:
    text = ("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  selector: {app: web}\n"
            "  ports:\n  - port: 80\n    nodePort: 30080\n")
    assert rule_lines(text) == [("service-cluster-ip-node-port", 8)]
    assert rule_lines(text.replace("spec:\n", "spec:\n  type: NodePort\n")) == []


def test_init_containers_take_probes_only_as_sidecars_from_1_29() -> None:
    spec = GOOD_SPEC + ("      initContainers:\n      - name: init\n        image: busybox\n"
                        "        readinessProbe: {exec: {command: [sh]}}\n")
    text = deployment(spec)
    line = line_of(text, "readinessProbe: {exec")
    assert rule_lines(text) == [("non-sidecar-init-container-readiness-probe-forbidden", line)]
    sidecar = deployment(spec.replace("image: busybox\n", "image: busybox\n        restartPolicy: Always\n"))
    assert rule_lines(sidecar) == []
    assert rule_lines(sidecar, "1.28") == [("init-container-readiness-probe-forbidden", line + 1)]


# -- range ------------------------------------------------------------------------

def test_ports_are_port_numbers() -> None:
    text = deployment(GOOD_SPEC.replace("containerPort: 8080", "containerPort: 80800"))
    [(rule, line, message)] = findings(text)
    assert (rule, line) == ("container-port-number", line_of(text, "80800"))
    assert message.endswith("containerPort: 80800 must be between 1 and 65535: not a port number")


def test_a_decimal_file_mode_above_0777_is_refused() -> None:
    text = deployment(GOOD_SPEC.replace("defaultMode: 0644", "defaultMode: 644"))
    assert rule_lines(text) == [("volume-file-mode", line_of(text, "defaultMode"))]


def test_replicas_and_job_counts_are_not_negative() -> None:
    assert rule_lines(deployment().replace("spec:\n  selector", "spec:\n  replicas: -1\n  selector")) == [
        ("workload-replicas-not-negative", 5)]
    job = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  backoffLimit: -1\n  template:\n"
           "    spec:\n      restartPolicy: Never\n      containers: [{name: a, image: busybox}]\n")
    assert rule_lines(job) == [("job-backoff-limit-not-negative", 5)]
    assert rule_lines(job.replace("-1", "0")) == []


def test_an_autoscaler_scales_between_its_bounds() -> None:
    hpa = ("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec:\n"
           "  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"
           "  minReplicas: LOW\n  maxReplicas: HIGH\n")

    def bounds(low: int, high: int) -> str:
        return hpa.replace("LOW", str(low)).replace("HIGH", str(high))

    assert rule_lines(bounds(2, 5)) == []
    assert rule_lines(bounds(5, 2)) == [("hpa-max-replicas-at-least-min", 7)]
    # scaling to zero: refused until HPAScaleToZero is on by default (1.37),
    # and then only on an Object or External metric (the default is CPU)
    assert rule_lines(bounds(0, 2), "1.36") == [("hpa-min-replicas", 6)]
    assert rule_lines(bounds(0, 2), "1.37") == [("hpa-scale-to-zero-needs-object-or-external-metric", 4)]
    queue = ("  metrics:\n  - type: External\n    external:\n      metric: {name: queue_depth}\n"
             "      target: {type: AverageValue, averageValue: '30'}\n")
    assert rule_lines(bounds(0, 2) + queue, "1.37") == []


def test_a_progress_deadline_must_exceed_min_ready_seconds() -> None:
    text = deployment().replace("spec:\n  selector", "spec:\n  minReadySeconds: 60\n  progressDeadlineSeconds: 30\n"
                                                     "  selector")
    assert rule_lines(text) == [("deployment-progress-deadline-after-min-ready", 6)]


# -- format -----------------------------------------------------------------------

def test_container_and_port_names_have_their_formats() -> None:
    text = deployment(GOOD_SPEC.replace("- name: web", "- name: Web_1").replace("name: http,", "name: http-port-too-long,"))
    assert rule_lines(text) == [("container-name-format", line_of(text, "Web_1")),
                                ("container-port-name-format", line_of(text, "http-port-too-long"))]


def test_a_quoted_number_is_no_port_name() -> None:
    text = deployment(GOOD_SPEC.replace("port: http}", 'port: "8080"}'))
    [(rule, line, message)] = findings(text)
    assert (rule, line) == ("handler-port-name-format", line_of(text, '"8080"'))
    assert "must contain at least one letter" in message


def test_environment_variable_names_are_relaxed_from_1_32() -> None:
    text = deployment(GOOD_SPEC.replace("name: MODE", "name: 1-MODE:x"))
    line = line_of(text, "1-MODE")
    assert rule_lines(text, "1.31") == [("container-env-name-format", line)]
    assert rule_lines(text, "1.32") == []
    relaxed = deployment(GOOD_SPEC.replace("name: MODE", "name: A=B"))
    assert rule_lines(relaxed, "1.32") == [("container-env-name-relaxed-format", line)]


def test_a_volume_file_stays_inside_its_volume() -> None:
    items = GOOD_SPEC.replace("defaultMode: 0644}", "defaultMode: 0644, items: [{key: a, path: PATH}]}")
    assert rule_lines(deployment(items.replace("PATH", "conf/a.yaml"))) == []
    text = deployment(items.replace("PATH", "../a.yaml"))
    assert rule_lines(text) == [("volume-item-path-format", line_of(text, "items:"))]
    # a subPath only may not climb out: '..data' is a name (validateLocalDescendingPath)
    mount = GOOD_SPEC.replace("mountPath: /etc/web}", "mountPath: /etc/web, subPath: SUB}")
    assert rule_lines(deployment(mount.replace("SUB", "..data"))) == []
    climbing = deployment(mount.replace("SUB", "a/../../b"))
    assert rule_lines(climbing) == [("container-volume-mount-sub-path-format", line_of(climbing, "subPath"))]


def test_config_map_and_secret_keys() -> None:
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  app.yaml: x\n  conf/app.yaml: y\n"
    [(rule, line, message)] = findings(cm)
    assert (rule, line) == ("config-map-data-key-format", 6)
    assert message == ("data[\"conf/app.yaml\"]: 'conf/app.yaml' is not a valid key: "
                       "must be letters, digits, '-', '_' and '.'")
    secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  ..key: x\n"
    assert rule_lines(secret) == [("secret-string-data-key-format", 5)]


def test_template_labels_and_selectors_are_labels() -> None:
    text = deployment().replace("labels: {app: web}", "labels: {app: web, tier: front end}")
    assert rule_lines(text) == [("label-map-value-format", line_of(text, "front end"))]
    svc = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  selector: {app/x/y: web}\n  ports: [{port: 80}]\n"
    assert rule_lines(svc) == [("label-map-key-format", 5)]


def test_an_ingress_path_of_type_prefix_is_absolute() -> None:
    ing = ("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec:\n  rules:\n"
           "  - host: web.example.com\n    http:\n      paths:\n      - path: PATH\n        pathType: Prefix\n"
           "        backend: {service: {name: web, port: {number: 80}}}\n")
    assert rule_lines(ing.replace("PATH", "/api")) == []
    assert rule_lines(ing.replace("PATH", "api")) == [("ingress-prefix-path-format", 9)]
    assert rule_lines(ing.replace("PATH", "/api//v1")) == [("ingress-prefix-path-format", 9)]
    no_path = ing.replace("      - path: PATH\n        pathType", "      - pathType")
    assert rule_lines(no_path) == [("ingress-prefix-path-required", 9)]


def test_a_tls_host_may_be_an_address_a_rule_host_may_not() -> None:
    ing = ("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec:\n"
           "  defaultBackend: {service: {name: web, port: {number: 80}}}\n  tls:\n  - hosts: [203.0.113.10]\n")
    assert rule_lines(ing) == []
    assert rule_lines(ing + "  rules:\n  - host: 203.0.113.10\n") == [("ingress-host-format", 9)]


@pytest.mark.parametrize(("schedule", "accepted"), [
    ("*/15 * * * *", True), ("0 3 * * SUN", True), ("@daily", True), ("@every 1h30m", True),
    ("0 9-17/2 * * 1-5", True), ("0 0 * * 7", False), ("*/5 * * * * *", False), ("0 24 * * *", False),
    ("*/0 * * * *", False), ("@fortnightly", False)])
def test_a_cron_job_schedule_is_read_as_the_api_server_reads_it(schedule: str, accepted: bool) -> None:
    text = ("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  schedule: 'SCHEDULE'\n"
            "  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n"
            "          containers: [{name: a, image: busybox}]\n").replace("SCHEDULE", schedule)
    assert rule_lines(text) == ([] if accepted else [("cronjob-schedule-format", 5)])


# -- unique -----------------------------------------------------------------------

def test_container_names_are_unique_across_init_containers() -> None:
    spec = GOOD_SPEC + "      initContainers:\n      - name: web\n        image: busybox\n"
    text = deployment(spec)
    [(rule, line, message)] = findings(text)
    assert (rule, line) == ("container-name-unique", len(text.splitlines()) - 1)
    assert "duplicate container name 'web': containers[0] has it too" in message


def test_a_service_with_several_ports_names_them_and_does_not_repeat_them() -> None:
    svc = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  selector: {app: web}\n  ports:\n"
    assert rule_lines(svc + "  - port: 80\n") == []
    assert rule_lines(svc + "  - port: 80\n  - port: 443\n") == [("service-port-names", 7), ("service-port-names", 8)]
    # protocol defaults to TCP: the same port twice
    same = svc + "  - {name: a, port: 80}\n  - {name: b, port: 80, protocol: TCP}\n"
    assert rule_lines(same) == [("service-port-protocol-unique", 8)]
    assert rule_lines(same.replace("protocol: TCP", "protocol: UDP")) == []


def test_a_session_affinity_config_without_client_ip_affinity_is_dropped_not_refused() -> None:
    # SetDefaults_Service removes sessionAffinityConfig when the affinity is None (the default)
    svc = ("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 80}]\n"
           "  sessionAffinityConfig: {clientIP: {timeoutSeconds: 0}}\n")
    assert rule_lines(svc) == []
    assert rule_lines(svc.replace("spec:\n", "spec:\n  sessionAffinity: ClientIP\n")) == [
        ("service-session-affinity-timeout", 7)]


def test_a_duplicate_that_the_schema_map_list_reports_is_not_repeated() -> None:
    # from 1.30 the schemas make containers a list-map keyed by name
    spec = GOOD_SPEC + "      - name: web\n        image: busybox\n"
    assert [r for r, _ in rule_lines(deployment(spec), "1.37")] == ["list-map-keys"]
    assert [r for r, _ in rule_lines(deployment(spec), "1.29")] == ["container-name-unique"]


# -- exclusive ----------------------------------------------------------------------

def test_a_volume_takes_one_source_and_a_probe_one_handler() -> None:
    text = deployment(GOOD_SPEC.replace("configMap: {name: web-config, defaultMode: 0644}",
                                        "configMap: {name: web-config}\n        emptyDir: {}"))
    # reported at the later source, in the order the API server checks them (emptyDir first)
    assert rule_lines(text) == [("pod-volume-one-source", line_of(text, "configMap:"))]
    no_handler = deployment(GOOD_SPEC.replace("readinessProbe: {httpGet: {path: /, port: http}}",
                                              "readinessProbe: {periodSeconds: 5}"))
    [(rule, line, message)] = findings(no_handler)
    assert (rule, line) == ("probe-one-handler", line_of(no_handler, "readinessProbe"))
    assert "must set one of exec, httpGet, tcpSocket, grpc" in message
    # a volume without a source is defaulted to an emptyDir
    assert rule_lines(deployment(GOOD_SPEC.replace("        configMap: {name: web-config, defaultMode: 0644}\n",
                                                   ""))) == []


def test_a_network_policy_ip_block_stands_alone() -> None:
    np = ("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: n}\nspec:\n  podSelector: {}\n"
          "  ingress:\n  - from:\n    - ipBlock: {cidr: 10.0.0.0/8}\n")
    assert rule_lines(np) == []
    assert rule_lines(np + "      podSelector: {}\n") == [("network-policy-ip-block-alone", 8)]
    assert rule_lines(np.replace("    - ipBlock: {cidr: 10.0.0.0/8}\n", "    - {}\n")) == [
        ("network-policy-peer-required", 8)]


# -- refers, keys, disjoint, resources -------------------------------------------------

def test_a_volume_mount_names_a_volume() -> None:
    text = deployment(GOOD_SPEC.replace("{name: config, mountPath", "{name: configs, mountPath"))
    assert rule_lines(text) == [("pod-volume-mount-refers-to-volume", line_of(text, "configs"))]


def test_a_statefulset_mount_may_name_a_volume_claim_template() -> None:
    sts = ("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  serviceName: db\n"
           "  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n"
           "      containers:\n      - name: db\n        image: postgres\n"
           "        volumeMounts: [{name: data, mountPath: /var/lib/postgresql}]\n"
           "  volumeClaimTemplates:\n  - metadata: {name: data}\n"
           "    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n")
    assert rule_lines(sts) == []
    assert rule_lines(sts.replace("metadata: {name: data}", "metadata: {name: pgdata}")) == [
        ("statefulset-volume-mount-refers-to-volume", 13)]


def test_a_statefulset_mount_a_pod_webhook_of_the_root_may_complete_is_a_warning() -> None:
    # the API server judges a StatefulSet's pods only when they are created,
    # after mutating admission: a webhook the root installs, whose
    # objectSelector takes these pods, may add the volume (Knative's dispatchers)
    sts = ("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: d, namespace: ev}\nspec:\n  serviceName: d\n"
           "  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d, kind: dispatcher}}\n"
           "    spec:\n      containers:\n      - name: d\n        image: dispatcher:1.0\n"
           "        volumeMounts: [{name: contract, mountPath: /etc/contract}]\n")
    hook = ("apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
            "metadata: {name: pods.defaulting}\nwebhooks:\n- name: pods.defaulting.example.dev\n"
            "  admissionReviewVersions: [v1]\n  sideEffects: None\n"
            "  clientConfig: {service: {name: webhook, namespace: ev}}\n"
            "  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ev}}\n"
            "  objectSelector: {matchLabels: {kind: dispatcher}}\n")

    def severities(*texts: str) -> list[tuple[str, str]]:
        items = [i for t in texts for i in load_documents(t, "r.yaml")]
        return [(dict(r.tags).get("rule", ""), r.severity) for r in schema.validate(items, ValidatorOptions(NEWEST))
                if dict(r.tags).get("rule", "") == "statefulset-volume-mount-refers-to-volume"]

    mount = "statefulset-volume-mount-refers-to-volume"
    assert severities(sts) == [(mount, "error")]
    assert severities(sts, hook) == [(mount, "warning")]
    # rules written must take pods on CREATE
    rules = "  rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [pods]}]\n"
    assert severities(sts, hook + rules) == [(mount, "warning")]
    assert severities(sts, hook + rules.replace("pods", "services")) == [(mount, "error")]
    # a webhook that selects other pods, another namespace, or nothing by label says nothing of these
    assert severities(sts, hook.replace("{kind: dispatcher}", "{kind: broker}")) == [(mount, "error")]
    assert severities(sts, hook.replace("metadata.name: ev}", "metadata.name: other}")) == [(mount, "error")]
    assert severities(sts, hook.replace("  objectSelector: {matchLabels: {kind: dispatcher}}\n", "")) == [
        (mount, "error")]
    # a Deployment's template is judged when the Deployment is created, before any pod exists
    deploy = sts.replace("kind: StatefulSet", "kind: Deployment").replace("  serviceName: d\n", "")
    assert [r for r in findings(deploy) if r[0] == "pod-volume-mount-refers-to-volume"]


def test_a_tls_secret_holds_a_certificate_and_a_key() -> None:
    secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: t}\ntype: kubernetes.io/tls\ndata:\n  tls.crt: eA==\n"
    assert rule_lines(secret) == [("secret-tls-keys", 5)]
    assert rule_lines(secret + "stringData:\n  tls.key: x\n") == []


def test_a_config_map_key_is_in_data_or_binary_data() -> None:
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: x\nbinaryData:\n  a: eA==\n"
    assert rule_lines(cm) == [("config-map-key-in-one-map", 5)]


def test_requests_are_within_limits() -> None:
    text = deployment(GOOD_SPEC.replace("requests: {cpu: 100m", "requests: {cpu: 1500m"))
    [(rule, line, message)] = findings(text)
    assert (rule, line) == ("container-resources-requests-within-limits", line_of(text, "1500m"))
    assert message.endswith("requests.cpu: '1500m' must be less than or equal to the cpu limit ('1')")
    gpu = deployment(GOOD_SPEC.replace("memory: 64Mi}", "memory: 64Mi, nvidia.com/gpu: 1}"))
    assert [r for r, _ in rule_lines(gpu)] == ["container-resources-requests-within-limits"]
    assert rule_lines(gpu.replace("memory: 128Mi}", "memory: 128Mi, nvidia.com/gpu: 1}")) == []


@pytest.mark.parametrize(("text", "value"), [("500m", "0.5"), ("1Gi", "1073741824"), ("1e3", "1000"),
                                             ("2", "2"), (".5", "0.5"), ("100k", "100000")])
def test_quantities(text: str, value: str) -> None:
    assert formats.quantity(text) == formats.Decimal(value)


# -- placeholders and versions --------------------------------------------------------

def test_a_value_still_to_be_substituted_is_not_refused(tmp_path: Path) -> None:
    spec = (GOOD_SPEC.replace("ports: [{name: http, containerPort: 8080}]",
                              "ports:\n        - name: ${PORT_NAME}\n          containerPort: ${PORT}\n"
                              "        - name: metrics_port\n          containerPort: 9090")
            .replace("readinessProbe: {httpGet: {path: /, port: http}}",
                     "readinessProbe:\n          httpGet:\n            port: ${PORT_NAME}"))
    write(tmp_path, "app/kustomization.yaml", "resources: [deploy.yaml]\n")
    write(tmp_path, "app/deploy.yaml", deployment(spec))
    run = check(tmp_path, "app")
    # only the literal port name is refused; the ${...} values are not judged
    assert run.located("error") == [("app/deploy.yaml", 18, "schema")]


@pytest.mark.parametrize(("host", "judged"), [("registry.<your domain>", False), ("__INGRESS_HOST__", False),
                                             # SOPS ciphertext (encrypted_regex: ^(host|hosts)$): decryption gives the value
                                             ("ENC[AES256_GCM,data:4nM8qclh/9YAn2Bh6RC0NQ==,iv:7k4F=,tag:0LuS==,type:str]",
                                              False),
                                             ("data:ENC[AES256_GCM,data:4nM8qclh]", True),
                                             ("registry.Example.com", True)])
def test_a_placeholder_for_people_is_not_judged(host: str, judged: bool) -> None:
    ing = ("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec:\n"
           "  defaultBackend: {service: {name: web, port: {number: 80}}}\n  rules:\n  - host: 'HOST'\n"
           ).replace("HOST", host)
    assert rule_lines(ing) == ([("ingress-host-format", 7)] if judged else [])


def test_a_refused_field_is_reported_at_its_source_line(tmp_path: Path) -> None:
    """End to end: the finding points at the overlay's patch that wrote the value."""
    write(tmp_path, "base/kustomization.yaml", "resources: [deploy.yaml]\n")
    write(tmp_path, "base/deploy.yaml", deployment())
    write(tmp_path, "prod/kustomization.yaml", "resources: [../base]\npatches:\n- path: ports.yaml\n")
    write(tmp_path, "prod/ports.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
                                       "  template:\n    spec:\n      containers:\n      - name: web\n"
                                       "        ports:\n        - {name: metrics_port, containerPort: 9090}\n")
    run = check(tmp_path, "prod")
    assert run.code == 1
    assert run.located("error") == [("prod/ports.yaml", 10, "schema")]
    [defect] = run.report["defects"]
    assert "'metrics_port' is not a valid port name" in defect["message"]
