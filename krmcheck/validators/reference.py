"""Objects a root refers to are defined in the root, or known to be made elsewhere.

Kustomize renames what it builds (``namePrefix``, the hash suffixes of
generated ConfigMaps and Secrets) and rewrites the references it knows; a
reference it does not know, a typo, or an object dropped from a base leaves a
workload pointing at nothing. The API server accepts it; the pods then fail to
start, or an Ingress answers 503. A reference is looked up in the referrer's
namespace (an empty namespace matches an empty one: both are "the namespace
the root is applied to").

Missing objects (warnings, one finding per missing object at its first
reference, naming the other referrers):

- ``configmap``, ``secret``, ``service-account``, ``persistent-volume-claim``:
  named by a pod template (of a Pod, PodTemplate, Deployment, StatefulSet,
  DaemonSet, ReplicaSet, ReplicationController, Job, CronJob, or a custom
  resource with a pod template at ``spec.template``) in ``volumes``
  (``configMap``, ``secret``, ``persistentVolumeClaim``, ``projected``
  sources), ``envFrom``, ``env[].valueFrom`` (``configMapKeyRef``,
  ``secretKeyRef``), ``imagePullSecrets`` or ``serviceAccountName``, and
  the ServiceAccount of a token Secret (type
  ``kubernetes.io/service-account-token``, annotation
  ``kubernetes.io/service-account.name``). References marked
  ``optional: true`` are skipped.
- ``priority-class``: ``priorityClassName``.
- ``service``: an Ingress backend (``defaultBackend``,
  ``rules[].http.paths[].backend``), a Gateway API route's ``backendRefs``
  (HTTPRoute, GRPCRoute, TCPRoute, TLSRoute, UDPRoute; kind Service or
  unset; in the ``namespace`` it names) or an OpenShift Route (``spec.to``,
  ``alternateBackends``).
- ``scale-target``: a HorizontalPodAutoscaler's ``scaleTargetRef``, a
  VerticalPodAutoscaler's ``targetRef``, a KEDA ScaledObject's
  ``scaleTargetRef``.
- ``role``: a RoleBinding's or ClusterRoleBinding's ``roleRef``.

Not reported as missing:

- objects every cluster has: the ServiceAccount ``default``, the ConfigMaps
  ``kube-root-ca.crt``, ``openshift-service-ca.crt`` and (in an Istio mesh)
  ``istio-ca-root-cert``, the PriorityClasses ``system-cluster-critical`` and
  ``system-node-critical``, the Role ``extension-apiserver-authentication-reader``,
  the ClusterRoles ``cluster-admin``, ``admin``, ``edit``, ``view`` and
  OpenShift's default ones, and every role named ``system:*``;
- an object of a kind the root defines none of: a root with no Secret at all
  takes its Secrets from elsewhere (an "infra" root, an operator, a person),
  while a root that defines Secrets but not the one named is likely wrong;
- objects that something in the root makes: the Secret of an ExternalSecret
  (``spec.target.name``, else its name), a ClusterExternalSecret (in any
  namespace), a SealedSecret, a cert-manager Certificate (``spec.secretName``),
  a 1Password OnePasswordItem, a Bitwarden BitwardenSecret, a Doppler
  DopplerSecret, a Vault Secrets Operator VaultStaticSecret,
  VaultDynamicSecret or VaultPKISecret (``spec.destination.name``), a
  SopsSecret (``spec.secretTemplates[].name``), a Crossplane resource's
  ``spec.writeConnectionSecretToRef``, the claims of a StatefulSet's
  ``volumeClaimTemplates`` (``data-db-0``), an OpenShift Service's
  ``service.beta.openshift.io/serving-cert-secret-name`` annotation; the
  Secrets and Services of well-known operators' resources (CloudNativePG,
  Crunchy and Zalando Postgres, RabbitMQ, Strimzi, Dragonfly, Grafana,
  Keycloak, Argo CD, Apicurio Registry, StackRox, the Flux Operator); any
  object in the target namespace of a Flux HelmRelease or Kustomization or an
  Argo CD Application (their content is not rendered here); and any Secret in
  a namespace where a workload of the root may create Secrets (its
  ServiceAccount is bound to a role of the root granting ``create`` on them:
  a controller making its own webhook certificate);
- objects declared under ``provided:`` in ``.krmcheck.yaml`` (``kind``, and
  shell-style ``name`` and ``namespace`` patterns, default ``*``)::

      provided:
      - {kind: Secret, name: registry-credentials}
      - {kind: ConfigMap, name: cluster-settings, namespace: flux-system}
      - {kind: PriorityClass}

What a reference needs of an object the root defines:

- ``key`` (error): ``configMapKeyRef``/``secretKeyRef`` or a volume's
  ``items`` name a key the ConfigMap or Secret does not hold (not judged
  when it holds no data at all, or is a ServiceAccount token).
- ``service-port`` (error): an Ingress backend or route names a port the
  Service does not declare (``port.number``/``port.name``; for an OpenShift
  Route, ``port.targetPort`` by port name or target port number). An Ingress
  backend whose port is ``use-annotation`` names an AWS Load Balancer
  Controller action (annotation ``alb.ingress.kubernetes.io/actions.<service
  name>``, which Argo Rollouts may write at run time), not a Service: it is
  neither a missing port nor a missing Service. Nor is a backend of an
  Ingress whose ingress-nginx ``permanent-redirect`` or
  ``temporal-redirect`` annotation answers every request with a redirect:
  it is never reached. A port number of a Service of type ExternalName is
  not judged: ingress-nginx connects to the external name on the number the
  backend gives, declared or not (a port name must still be declared).
- ``target-port`` (warning): a Service's ``targetPort`` is a port name that
  no container of the pod templates it selects declares (judged when it
  selects some pod template of the root; a warning because a sidecar
  injected at admission may declare it).
"""


from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from krmcheck.results import Result
from krmcheck.tree.node import Mapping, Node, Scalar, lookup
from krmcheck.tree.node import Sequence as SequenceNode
from krmcheck.validators.base import Provided, ValidatorOptions, field_path, make_result, scalar_text
from krmcheck.validators.inventory import RBAC, Inventory, Reference, entries
from krmcheck.validators.selector import (
    Path, PodTemplate, Templates, group_kind, map_selector, name_of, namespace_of, pod_templates)

id = "reference"
description = "ConfigMaps, Secrets, Services and other objects a root refers to are defined in it or declared provided"

# Objects every cluster has, by kind.
_BUILT_IN: dict[str, frozenset[str]] = {
    # kube-root-ca.crt: every namespace; openshift-service-ca.crt: every OpenShift
    # namespace; istio-ca-root-cert: every namespace of an Istio mesh (istiod)
    "ConfigMap": frozenset({"kube-root-ca.crt", "openshift-service-ca.crt", "istio-ca-root-cert"}),
    "ServiceAccount": frozenset({"default"}),
    "PriorityClass": frozenset({"system-cluster-critical", "system-node-critical"}),
    "Role": frozenset({"extension-apiserver-authentication-reader"}),  # in kube-system
    "ClusterRole": frozenset({
        "cluster-admin", "admin", "edit", "view",
        # OpenShift's default cluster roles
        "basic-user", "cluster-reader", "cluster-status", "self-provisioner", "cluster-monitoring-view",
        "monitoring-edit", "monitoring-rules-edit", "monitoring-rules-view", "alert-routing-edit",
    }),
}

# Keys a platform writes into an object the repository defines, whatever the
# file gives: (kind, namespace, name) -> {key: the code that writes it}.
_PLATFORM_KEYS: dict[tuple[str, str, str], dict[str, str]] = {
    # k3s's CoreDNS mounts NodeHosts, which k3s's node controller keeps up to
    # date in this ConfigMap with each node's address (k3s, pkg/node/controller.go)
    ("ConfigMap", "kube-system", "coredns"): {"NodeHosts": "k3s, pkg/node/controller.go"},
}

_RULES = {
    "ConfigMap": "configmap", "Secret": "secret", "ServiceAccount": "service-account",
    "PersistentVolumeClaim": "persistent-volume-claim", "PriorityClass": "priority-class",
    "Service": "service", "Role": "role", "ClusterRole": "role",
}

# --- the references of a resource ---------------------------------------------

def references(item: Mapping) -> Iterator[Reference]:
    """Every reference ``item`` makes to another object."""
    for template in pod_templates(item):
        yield from _pod_references(template)
    finder = _REFERENCES.get(group_kind(item))
    if finder is not None:
        yield from finder(item)


def _pod_references(template: PodTemplate) -> Iterator[Reference]:
    spec = template.spec()
    if spec is None:
        return
    namespace = template.namespace
    at: Path = (*template.path, "spec")
    for index, volume in entries(spec, "volumes"):
        yield from _volume_references(volume, namespace, (*at, "volumes", index))
    for list_name in ("initContainers", "containers", "ephemeralContainers"):
        for index, container in entries(spec, list_name):
            yield from _container_references(container, namespace, (*at, list_name, index))
    for index, secret in entries(spec, "imagePullSecrets"):
        yield from _named("Secret", secret, "name", namespace, (*at, "imagePullSecrets", index))
    account = "serviceAccountName" if "serviceAccountName" in spec else "serviceAccount"
    yield from _named("ServiceAccount", spec, account, namespace, at)
    yield from _named("PriorityClass", spec, "priorityClassName", "", at)


def _volume_references(volume: Mapping, namespace: str, at: Path) -> Iterator[Reference]:
    for source, kind, field in (("configMap", "ConfigMap", "name"), ("secret", "Secret", "secretName"),
                                ("persistentVolumeClaim", "PersistentVolumeClaim", "claimName")):
        yield from _with_items(volume.mapping(source), kind, field, namespace, (*at, source))
    projected = lookup(volume, ["projected", "sources"])
    for index, entry in enumerate(projected if isinstance(projected, SequenceNode) else ()):
        if isinstance(entry, Mapping):
            for source, kind in (("configMap", "ConfigMap"), ("secret", "Secret")):
                yield from _with_items(entry.mapping(source), kind, "name", namespace,
                                       (*at, "projected", "sources", index, source))


def _with_items(source: Mapping | None, kind: str, field: str, namespace: str,
                at: Path) -> Iterator[Reference]:
    """A volume source's object, and each key its ``items`` need."""
    if source is None or _optional(source):
        return
    named = list(_named(kind, source, field, namespace, at))
    yield from named
    for reference in named:
        for index, entry in entries(source, "items"):
            key = scalar_text(entry.get("key"))
            if key:
                yield reference._replace(key=key, detail_path=(*at, "items", index, "key"))


def _container_references(container: Mapping, namespace: str, at: Path) -> Iterator[Reference]:
    for index, entry in entries(container, "envFrom"):
        for source, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            source_ref = entry.mapping(source)
            if source_ref is not None and not _optional(source_ref):
                yield from _named(kind, source_ref, "name", namespace, (*at, "envFrom", index, source))
    for index, entry in entries(container, "env"):
        for source, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
            ref = lookup(entry, ["valueFrom", source])
            if isinstance(ref, Mapping) and not _optional(ref):
                where: Path = (*at, "env", index, "valueFrom", source)
                for reference in _named(kind, ref, "name", namespace, where):
                    yield reference._replace(key=scalar_text(ref.get("key")), detail_path=(*where, "key"))


def _named(kind: str, node: Mapping, field: str, namespace: str, at: Path) -> Iterator[Reference]:
    """The reference in ``node[field]``, unless it is empty or names a built-in object."""
    name = scalar_text(node.get(field))
    if name and name not in _BUILT_IN.get(kind, ()):
        yield Reference(kind, name, namespace, (*at, field))


def _optional(node: Mapping) -> bool:
    return node.value("optional") is True


# ingress-nginx answers every request of an Ingress carrying one of these
# annotations with a redirect "instead of sending data to the upstream"
# (https://kubernetes.github.io/ingress-nginx/user-guide/nginx-configuration/annotations/#permanent-redirect):
# the backends, which the API requires, are never reached.
_REDIRECTS = ("nginx.ingress.kubernetes.io/permanent-redirect", "nginx.ingress.kubernetes.io/temporal-redirect")


def _ingress_references(item: Mapping) -> Iterator[Reference]:
    annotations = lookup(item, ["metadata", "annotations"])
    if isinstance(annotations, Mapping) and any(scalar_text(annotations.get(a)) for a in _REDIRECTS):
        return
    spec = item.mapping("spec") or Mapping()
    backends: list[tuple[Node | None, Path]] = [
        (spec.get("defaultBackend"), ("spec", "defaultBackend")),
        (spec.get("backend"), ("spec", "backend")),  # extensions/v1beta1
    ]
    for rule_index, rule in entries(spec, "rules"):
        paths = lookup(rule, ["http", "paths"])
        for index, entry in enumerate(paths if isinstance(paths, SequenceNode) else ()):
            if isinstance(entry, Mapping):
                backends.append((entry.get("backend"), ("spec", "rules", rule_index, "http", "paths", index,
                                                        "backend")))
    for backend, at in backends:
        if isinstance(backend, Mapping):
            yield from _ingress_backend(backend, namespace_of(item), at)


# The AWS Load Balancer Controller's documented convention for the annotation
# alb.ingress.kubernetes.io/actions.${action-name}: "The action-name in the annotation must match
# the serviceName in the Ingress rules, and servicePort must be use-annotation"
# (https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/#actions).
# Such a backend names an action, neither a Service nor a port of one; Argo Rollouts writes the
# annotation at run time, so it may be absent from the file too.
_USE_ANNOTATION = "use-annotation"


def _ingress_backend(backend: Mapping, namespace: str, at: Path) -> Iterator[Reference]:
    service = backend.mapping("service")
    if service is not None:  # networking.k8s.io/v1
        port = service.mapping("port") or Mapping()
        wanted: int | str | None = _port_value(port.get("number")) or scalar_text(port.get("name")) or None
        if wanted == _USE_ANNOTATION:
            return
        field = "number" if "number" in port else "name"
        for reference in _named("Service", service, "name", namespace, (*at, "service")):
            yield reference._replace(port=wanted, detail_path=(*at, "service", "port", field))
    else:  # v1beta1: serviceName, servicePort
        service_port = _port_value(backend.get("servicePort"))
        if service_port == _USE_ANNOTATION:
            return
        for reference in _named("Service", backend, "serviceName", namespace, at):
            yield reference._replace(port=service_port, detail_path=(*at, "servicePort"))


def _port_value(node: Node | None) -> int | str | None:
    """A port by number or name; None when unset."""
    if isinstance(node, Scalar) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return scalar_text(node) or None


def _route_references(item: Mapping) -> Iterator[Reference]:
    """backendRefs of Gateway API routes that name Services."""
    for rule_index, rule in entries(item.mapping("spec") or Mapping(), "rules"):
        for index, ref in entries(rule, "backendRefs"):
            if scalar_text(ref.get("kind")) not in ("", "Service") or scalar_text(ref.get("group")):
                continue
            namespace = scalar_text(ref.get("namespace")) or namespace_of(item)
            at: Path = ("spec", "rules", rule_index, "backendRefs", index)
            for reference in _named("Service", ref, "name", namespace, at):
                yield reference._replace(port=_port_value(ref.get("port")), detail_path=(*at, "port"))


def _openshift_route_references(item: Mapping) -> Iterator[Reference]:
    spec = item.mapping("spec") or Mapping()
    port = _port_value(lookup(spec, ["port", "targetPort"]))
    targets: list[tuple[Node | None, Path]] = [(spec.get("to"), ("spec", "to"))]
    targets += [(entry, ("spec", "alternateBackends", index)) for index, entry in entries(spec, "alternateBackends")]
    for target, at in targets:
        if isinstance(target, Mapping) and scalar_text(target.get("kind")) in ("", "Service"):
            for reference in _named("Service", target, "name", namespace_of(item), at):
                yield reference._replace(port=port, detail_path=("spec", "port", "targetPort"),
                                         by_target_port=True)


def _scale_references(item: Mapping) -> Iterator[Reference]:
    """The workload an autoscaler scales."""
    field = "targetRef" if group_kind(item)[1] == "VerticalPodAutoscaler" else "scaleTargetRef"
    target = lookup(item, ["spec", field])
    if not isinstance(target, Mapping):
        return
    kind = scalar_text(target.get("kind")) or "Deployment"  # KEDA's default
    api_version = scalar_text(target.get("apiVersion"))
    name = scalar_text(target.get("name"))
    if name:
        yield Reference(kind, name, namespace_of(item), ("spec", field, "name"), rule="scale-target",
                        group=api_version.rpartition("/")[0] if api_version else None)


def _token_references(item: Mapping) -> Iterator[Reference]:
    """The ServiceAccount of a token Secret (the token controller deletes it when the account is gone)."""
    if scalar_text(item.get("type")) == "kubernetes.io/service-account-token":
        annotations = lookup(item, ["metadata", "annotations"])
        if isinstance(annotations, Mapping):
            yield from _named("ServiceAccount", annotations, _TOKEN_ACCOUNT, namespace_of(item),
                              ("metadata", "annotations"))


_TOKEN_ACCOUNT = "kubernetes.io/service-account.name"


def _binding_references(item: Mapping) -> Iterator[Reference]:
    role = lookup(item, ["roleRef"])
    if isinstance(role, Mapping) and scalar_text(role.get("kind")) in ("Role", "ClusterRole"):
        kind = scalar_text(role.get("kind"))
        if not scalar_text(role.get("name")).startswith("system:"):  # bootstrap roles
            namespace = namespace_of(item) if kind == "Role" else ""
            yield from _named(kind, role, "name", namespace, ("roleRef",))


_REFERENCES = {
    ("networking.k8s.io", "Ingress"): _ingress_references,
    ("extensions", "Ingress"): _ingress_references,
    **{("gateway.networking.k8s.io", kind): _route_references
       for kind in ("HTTPRoute", "GRPCRoute", "TCPRoute", "TLSRoute", "UDPRoute")},
    ("route.openshift.io", "Route"): _openshift_route_references,
    ("autoscaling", "HorizontalPodAutoscaler"): _scale_references,
    ("autoscaling.k8s.io", "VerticalPodAutoscaler"): _scale_references,
    ("keda.sh", "ScaledObject"): _scale_references,
    (RBAC, "RoleBinding"): _binding_references,
    (RBAC, "ClusterRoleBinding"): _binding_references,
    ("", "Secret"): _token_references,
}


# --- judging ------------------------------------------------------------------

def validate(items: Sequence[Mapping], options: ValidatorOptions) -> list[Result]:
    inventory = Inventory(items)
    results: list[Result] = []
    missing: dict[tuple[str, str, str], list[tuple[Mapping, Reference]]] = {}
    for item in items:
        for reference in references(item):
            target = inventory.find(reference)
            if target is not None:
                results.extend(_detail_problems(item, reference, target))
            elif not _explained(reference, inventory, options.provided):
                key = (reference.kind, reference.namespace, reference.name)
                missing.setdefault(key, []).append((item, reference))
    # one finding per missing object, at its first reference
    results.extend(_missing(referrers) for referrers in missing.values())
    results.extend(_target_ports(items))
    return results


def _explained(reference: Reference, inventory: Inventory, provided: Sequence[Provided]) -> bool:
    """Whether an object the root does not define is known to exist anyway."""
    if reference.kind not in inventory.kinds:
        return True  # the root relies on others for every object of this kind
    return inventory.is_made(reference) or any(
        p.matches(reference.kind, reference.name, reference.namespace) for p in provided)


def _missing(referrers: Sequence[tuple[Mapping, Reference]]) -> Result:
    item, reference = referrers[0]
    where = f" (namespace {reference.namespace!r})" if reference.namespace else ""
    others = sorted({f"{other.value('kind')} {name_of(other)!r}" for other, _ in referrers if other is not item})
    also = f" (also named by {', '.join(others)})" if others else ""
    message = (f"{reference.kind} {reference.name!r} is not defined in this root{where}{also}; if it is "
               "made elsewhere, declare it under provided: in .krmcheck.yaml")
    return make_result(id, item, message, field_path(reference.path), severity="warning",
                       rule=reference.rule or _RULES.get(reference.kind, "reference"))


def _detail_problems(item: Mapping, reference: Reference, target: Mapping) -> Iterator[Result]:
    """What the referrer needs of an object the root defines: a data key or a Service port."""
    if reference.key:
        keys = _data_keys(target)
        written = _PLATFORM_KEYS.get((reference.kind, namespace_of(target) or "", reference.name), {})
        if keys and reference.key not in keys and reference.key not in written:
            message = (f"{reference.kind} {reference.name!r} has no key {reference.key!r} "
                       f"(it has {', '.join(sorted(keys))})")
            yield make_result(id, item, message, field_path(reference.detail_path), rule="key")
    elif reference.port is not None:
        ports = _service_ports(target)
        wanted = reference.port
        if isinstance(wanted, int) and _external_name(target):
            return  # a DNS alias: the controller connects to the name on the port it is given
        if ports and not any(_port_matches(port, wanted, reference.by_target_port) for port in ports):
            what = "port" if not reference.by_target_port else "port name or target port"
            shown = ", ".join(p.describe() for p in ports)
            message = f"Service {reference.name!r} has no {what} {wanted!r} (it has {shown})"
            yield make_result(id, item, message, field_path(reference.detail_path), rule="service-port")


def _external_name(target: Mapping) -> bool:
    """Whether the Service is of type ExternalName: a DNS alias whose ports
    nothing programs; ingress-nginx connects to the external name on the
    port number an Ingress backend gives when the Service does not declare it
    (``externalNamePorts``: "ExternalName without port")."""
    return scalar_text(lookup(target, ["spec", "type"])) == "ExternalName"


def _data_keys(target: Mapping) -> set[str]:
    """The keys of a ConfigMap or Secret; empty when they are filled in by someone else
    (a Secret with no data, a ServiceAccount token)."""
    if scalar_text(target.get("type")) == "kubernetes.io/service-account-token":
        return set()
    keys: set[str] = set()
    for field in ("data", "binaryData", "stringData"):
        data = target.mapping(field)
        keys.update(data.items if data else ())
    return keys


class ServicePort(NamedTuple):
    port: int | str | None
    name: str
    target: int | str | None

    def describe(self) -> str:
        return f"{self.port} ({self.name})" if self.name else str(self.port)


def _service_ports(service: Mapping) -> list[ServicePort]:
    return [ServicePort(_port_value(p.get("port")), scalar_text(p.get("name")), _port_value(p.get("targetPort")))
            for _, p in entries(service.mapping("spec") or Mapping(), "ports")]


def _port_matches(port: ServicePort, wanted: int | str, by_target_port: bool) -> bool:
    if isinstance(wanted, str):
        return port.name == wanted
    if not by_target_port:
        return port.port == wanted
    # an OpenShift Route's number is the one pods listen on; a named targetPort
    # is resolved by the pods, so any number may be it
    target = port.target if port.target is not None else port.port
    return isinstance(target, str) or target == wanted


def _target_ports(items: Sequence[Mapping]) -> Iterator[Result]:
    """The target-port rule: a Service's named targetPort is declared by the pods it selects."""
    templates = Templates(t for item in items for t in pod_templates(item))
    for item in items:
        if group_kind(item) != ("", "Service") or scalar_text(lookup(item, ["spec", "type"])) == "ExternalName":
            continue
        terms = map_selector(lookup(item, ["spec", "selector"]), ("spec", "selector"))
        # only labels known here decide: a generated one (pod-template-hash) could select anything
        chosen = templates.selected(terms, namespace_of(item), generated=False) if terms else []
        if not chosen:
            continue
        declared = {name for t in chosen for name in _container_port_names(t)}
        for index, port in entries(item.mapping("spec") or Mapping(), "ports"):
            target = _port_value(port.get("targetPort"))
            if isinstance(target, str) and not target.isdigit() and target not in declared:
                workloads = ", ".join(sorted({f"{t.item.value('kind')} {name_of(t.item)!r}" for t in chosen}))
                message = (f"targetPort {target!r} is not a container port name of the pods this Service "
                           f"selects ({workloads})")
                yield make_result(id, item, message, field_path(("spec", "ports", index, "targetPort")),
                                  severity="warning", rule="target-port")


def _container_port_names(template: PodTemplate) -> Iterator[str]:
    spec = template.spec() or Mapping()
    for list_name in ("initContainers", "containers"):
        for _, container in entries(spec, list_name):
            for _, port in entries(container, "ports"):
                yield scalar_text(port.get("name"))
