"""What a root holds, and what it makes at run time, for the ``reference``
validator: the objects a reference may name (by kind, name and namespace),
those well-known operators, secret stores and controllers make
(ExternalSecret, SealedSecret, Certificate...), and the shell-style
patterns ``provided:`` gives."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from krmcheck.tree.node import Mapping, lookup
from krmcheck.validators.base import Provided, scalar_text
from krmcheck.validators.selector import Path, group_kind, name_of, namespace_of, pod_templates

RBAC = "rbac.authorization.k8s.io"

# Kinds a reference can name, by the API group that defines them; an object of
# the same kind in another group (a Knative Service) is not one of them.
GROUPS = {
    "ConfigMap": "", "Secret": "", "ServiceAccount": "", "PersistentVolumeClaim": "", "Service": "",
    "PriorityClass": "scheduling.k8s.io", "Role": RBAC, "ClusterRole": RBAC,
}
CLUSTER_SCOPED = frozenset({"PriorityClass", "ClusterRole"})

ANY_NAMESPACE = "*"


class Reference(NamedTuple):
    """One field that names another object, and what the referrer needs of it."""

    kind: str
    name: str
    namespace: str
    path: Path  # the field holding the name
    rule: str = ""  # "" for the kind's own rule (_RULES), else e.g. "scale-target"
    group: str | None = None  # the target's API group, when the reference says it
    key: str = ""  # a data key the referrer needs
    port: int | str | None = None  # a Service port the referrer needs, by number or name
    detail_path: Path = ()  # the field holding the key or port
    by_target_port: bool = False  # an OpenShift Route: a port name, or a target port number


def entries(node: Mapping, field: str) -> Iterator[tuple[int, Mapping]]:
    sequence = node.sequence(field)
    for index, entry in enumerate(sequence or ()):
        if isinstance(entry, Mapping):
            yield index, entry




class Inventory:
    """The objects of a root, and those that objects of the root make."""

    def __init__(self, items: Sequence[Mapping]) -> None:
        self.objects: dict[tuple[str, str, str], list[Mapping]] = {}
        made: list[Provided] = []
        for item in items:
            group, kind = group_kind(item)
            if GROUPS.get(kind, group) == group:
                namespace = "" if kind in CLUSTER_SCOPED else namespace_of(item)
                self.objects.setdefault((kind, namespace, name_of(item)), []).append(item)
            made.extend(_made_by(item, group, kind))
        # the kinds the root defines or has made by name; for other kinds it relies on others
        self.kinds = {key[0] for key in self.objects} | {m.kind for m in made}
        made.extend(_made_at_run_time(items, self))
        # exact names in a set (ExternalSecrets can be many), patterns in a list
        self.made = {(m.kind, m.namespace, m.name) for m in made if not _is_pattern(m)}
        self.made_patterns = sorted({m for m in made if _is_pattern(m)})

    def find(self, reference: Reference) -> Mapping | None:
        """The object a reference names, if the root defines it."""
        namespace = "" if reference.kind in CLUSTER_SCOPED else reference.namespace
        for item in self.objects.get((reference.kind, namespace, reference.name), ()):
            if reference.group is None or group_kind(item)[0] == reference.group:
                return item
        return None

    def is_made(self, reference: Reference) -> bool:
        kind, name, namespace = reference.kind, reference.name, reference.namespace
        return ((kind, namespace, name) in self.made
                or any(m.matches(kind, name, namespace) for m in self.made_patterns))


def _is_pattern(made: Provided) -> bool:
    return any(c in made.kind + made.name + made.namespace for c in "*?[")


def _made_by(item: Mapping, group: str, kind: str) -> Iterator[Provided]:
    """The objects that operators (or a Helm chart, an Argo CD Application) make of ``item``."""
    namespace = namespace_of(item)
    spec = item.mapping("spec") or Mapping()
    if (group, kind) in _SECRET_MAKERS:
        field = _SECRET_MAKERS[(group, kind)]
        yield Provided("Secret", (_text(spec, *field) if field else "") or name_of(item), namespace)
    for made_kind, pattern in _OPERATOR_OBJECTS.get((group, kind), ()):
        yield Provided(made_kind, pattern.format(name=name_of(item)), namespace)
    if (group, kind) == ("external-secrets.io", "ClusterExternalSecret"):
        name = (_text(spec, "externalSecretSpec", "target", "name") or _text(spec, "externalSecretName")
                or name_of(item))
        yield Provided("Secret", name, "*")
    elif (group, kind) == ("bitnami.com", "SealedSecret"):
        yield Provided("Secret", name_of(item), namespace)  # the controller's choice when both are set
    elif (group, kind) == ("isindir.github.com", "SopsSecret"):
        for _, template in entries(spec, "secretTemplates"):
            yield Provided("Secret", scalar_text(template.get("name")), namespace)
    elif (group, kind) == ("", "Service"):
        for annotation in _SERVING_CERT:
            name = _text(item, "metadata", "annotations", annotation)
            if name:
                yield Provided("Secret", name, namespace)
    elif (group, kind) in _OPAQUE:
        # what a chart or another path holds is not visible here: anything in its namespace
        # (an empty namespace is the one the root is applied to: it may be any)
        target = _text(spec, *_OPAQUE[(group, kind)]) or (namespace if kind == "HelmRelease" else "")
        yield Provided("*", "*", target or "*")
    elif (group, kind) == ("apps", "StatefulSet"):
        for _, claim in entries(spec, "volumeClaimTemplates"):  # one claim per pod: data-db-0
            yield Provided("PersistentVolumeClaim", f"{_text(claim, 'metadata', 'name')}-{name_of(item)}-*", namespace)
    connection = spec.mapping("writeConnectionSecretToRef")
    if connection is not None:  # Crossplane managed resources and claims
        yield Provided("Secret", _text(connection, "name"), _text(connection, "namespace") or namespace)


# Secret makers: the field naming the Secret they make; when it is unset (or
# empty here), the maker's own name.
_SECRET_MAKERS: dict[tuple[str, str], tuple[str, ...]] = {
    ("external-secrets.io", "ExternalSecret"): ("target", "name"),
    ("bitnami.com", "SealedSecret"): ("template", "metadata", "name"),
    ("cert-manager.io", "Certificate"): ("secretName",),
    ("certmanager.k8s.io", "Certificate"): ("secretName",),
    ("onepassword.com", "OnePasswordItem"): (),
    ("k8s.bitwarden.com", "BitwardenSecret"): ("secretName",),
    ("secrets.doppler.com", "DopplerSecret"): ("managedSecret", "name"),
    **{("secrets.hashicorp.com", kind): ("destination", "name")
       for kind in ("VaultStaticSecret", "VaultDynamicSecret", "VaultPKISecret", "HCPVaultSecretsApp")},
}

# Objects that operators make of their custom resources, as (kind, name pattern
# with {name} for the resource's name), in the resource's namespace.
_OPERATOR_OBJECTS: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {
    ("postgresql.cnpg.io", "Cluster"): (("Secret", "{name}-*"), ("Service", "{name}-*")),
    ("postgres-operator.crunchydata.com", "PostgresCluster"): (("Secret", "{name}-*"), ("Service", "{name}-*")),
    ("acid.zalan.do", "postgresql"): (("Secret", "*.{name}.credentials.postgresql.acid.zalan.do"),
                                      ("Service", "{name}"), ("Service", "{name}-*")),
    ("rabbitmq.com", "RabbitmqCluster"): (("Secret", "{name}-*"), ("Service", "{name}"), ("Service", "{name}-*")),
    ("kafka.strimzi.io", "Kafka"): (("Secret", "{name}-*"), ("Service", "{name}-*")),
    ("kafka.strimzi.io", "KafkaUser"): (("Secret", "{name}"),),
    ("dragonflydb.io", "Dragonfly"): (("Service", "{name}"),),
    ("registry.apicur.io", "ApicurioRegistry"): (("Service", "{name}-service"),),
    ("platform.stackrox.io", "Central"): (("Secret", "central-htpasswd"), ("Service", "central")),
    ("grafana.integreatly.org", "Grafana"): (("Service", "{name}-service"), ("Secret", "{name}-admin-credentials")),
    ("k8s.keycloak.org", "Keycloak"): (("Service", "{name}-service"), ("Secret", "{name}-initial-admin")),
    ("argoproj.io", "ArgoCD"): (("Secret", "{name}-*"), ("Service", "{name}-*")),
    ("fluxcd.controlplane.io", "FluxInstance"): (("Service", "source-controller"),
                                                 ("Service", "notification-controller"),
                                                 ("Service", "webhook-receiver")),
}

# Objects whose content is rendered elsewhere (a Helm chart, another path), by the
# field that names their target namespace.
_OPAQUE: dict[tuple[str, str], tuple[str, ...]] = {
    ("helm.toolkit.fluxcd.io", "HelmRelease"): ("targetNamespace",),
    ("kustomize.toolkit.fluxcd.io", "Kustomization"): ("targetNamespace",),
    ("argoproj.io", "Application"): ("destination", "namespace"),
}

_SERVING_CERT = ("service.beta.openshift.io/serving-cert-secret-name",
                 "service.alpha.openshift.io/serving-cert-secret-name")


def _made_at_run_time(items: Sequence[Mapping], inventory: Inventory) -> Iterator[Provided]:
    """Secrets a workload of the root may create in its own namespace: its ServiceAccount is
    bound to a Role or ClusterRole of the root that grants ``create`` on Secrets (a
    controller making its webhook certificate, Argo CD its Redis password). ConfigMaps are
    not judged so: leader election has many controllers create them."""
    grants: dict[tuple[str, str], set[str]] = {}  # (namespace, account) -> where it may create Secrets
    for binding in items:
        group, kind = group_kind(binding)
        if group != RBAC or kind not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        namespace = namespace_of(binding) if kind == "RoleBinding" else ""
        role = inventory.find(Reference(_text(binding, "roleRef", "kind"), _text(binding, "roleRef", "name"),
                                        namespace, ()))
        if role is None or not _creates_secrets(role):
            continue
        where = namespace if kind == "RoleBinding" else ANY_NAMESPACE
        for _, subject in entries(binding, "subjects"):
            if scalar_text(subject.get("kind")) == "ServiceAccount":
                subject_account = (_text(subject, "namespace") or namespace, scalar_text(subject.get("name")))
                grants.setdefault(subject_account, set()).add(where)
    for item in items:
        for template in pod_templates(item):
            spec = template.spec() or Mapping()
            account = scalar_text(spec.get("serviceAccountName")) or scalar_text(spec.get("serviceAccount"))
            if grants.get((template.namespace, account or "default"), set()) & {template.namespace, ANY_NAMESPACE}:
                yield Provided("Secret", "*", template.namespace)


def _creates_secrets(role: Mapping) -> bool:
    return any(_strings(rule, "apiGroups") & {"", "*"} and _strings(rule, "verbs") & {"create", "*"}
               and _strings(rule, "resources") & {"secrets", "*"} for _, rule in entries(role, "rules"))


def _strings(node: Mapping, field: str) -> set[str]:
    return {scalar_text(entry) for entry in node.sequence(field) or ()}


def _text(node: Mapping, *path: str) -> str:
    return scalar_text(lookup(node, list(path)))


