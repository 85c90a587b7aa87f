"""kustomize's resource ids (api/resid): group/version/kind, the id that
names a resource in a build, when two ids are the same, and which kinds are
cluster-scoped."""

from __future__ import annotations

import functools
from typing import NamedTuple


class Gvk(NamedTuple):
    group: str
    version: str
    kind: str

    @staticmethod
    def from_api_version(api_version: str, kind: str) -> "Gvk":
        return _gvk(api_version, kind)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return "_".join([self.group or "~G", self.version or "~V", self.kind or "~K"])


@functools.lru_cache(maxsize=4096)
def _gvk(api_version: str, kind: str) -> Gvk:
    # a build asks for the same few kinds hundreds of thousands of times
    group, _, version = api_version.rpartition("/")
    return Gvk(group, version, kind)


class ResId(NamedTuple):
    """kustomize's resource id: group, version, kind, name and namespace."""

    gvk: Gvk
    name: str
    namespace: str

    def __str__(self) -> str:
        ns = self.namespace or "~X"
        return f"{self.gvk}|{ns}|{self.name}"

    def describe(self) -> str:
        ns = f" in namespace {self.namespace}" if self.namespace else ""
        return f"{self.gvk.kind} {self.name}{ns}"


def id_key(rid: ResId) -> tuple[str, str, str, str, str]:
    """What makes two ids the same for kustomize: group, version, kind, name
    and namespace, where "" equals "default"."""
    return (rid.gvk.group, rid.gvk.version, rid.gvk.kind, rid.name, rid.namespace or "default")


def same_id(a: ResId, b: ResId) -> bool:
    return id_key(a) == id_key(b)


# Built-in kinds kustomize knows to be cluster-scoped (kyaml/openapi's
# precomputed scope table, keyed by exact apiVersion and kind). Anything else,
# custom kinds included, is treated as namespaced.
_CLUSTER_SCOPED = frozenset({
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition"),
    ("apiregistration.k8s.io/v1", "APIService"),
    ("apiregistration.k8s.io/v1beta1", "APIService"),
    ("certificates.k8s.io/v1", "CertificateSigningRequest"),
    ("certificates.k8s.io/v1beta1", "CertificateSigningRequest"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "PriorityLevelConfiguration"),
    ("networking.k8s.io/v1", "IngressClass"),
    ("networking.k8s.io/v1beta1", "IngressClass"),
    ("node.k8s.io/v1", "RuntimeClass"),
    ("node.k8s.io/v1beta1", "RuntimeClass"),
    ("policy/v1beta1", "PodSecurityPolicy"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1beta1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("scheduling.k8s.io/v1beta1", "PriorityClass"),
    ("storage.k8s.io/v1", "CSIDriver"),
    ("storage.k8s.io/v1", "CSINode"),
    ("storage.k8s.io/v1", "StorageClass"),
    ("storage.k8s.io/v1", "VolumeAttachment"),
    ("storage.k8s.io/v1beta1", "CSIDriver"),
    ("storage.k8s.io/v1beta1", "CSINode"),
    ("storage.k8s.io/v1beta1", "StorageClass"),
    ("storage.k8s.io/v1beta1", "VolumeAttachment"),
    ("v1", "ComponentStatus"),
    ("v1", "Namespace"),
    ("v1", "Node"),
    ("v1", "NodeProxyOptions"),
    ("v1", "PersistentVolume"),
})


def is_cluster_scoped(gvk: Gvk) -> bool:
    """Whether kustomize knows ``gvk`` to be cluster-scoped."""
    return (gvk.api_version, gvk.kind) in _CLUSTER_SCOPED


NO_NAMESPACE = "_non_namespaceable_"  # kustomize's namespace of a cluster-scoped object
DEFAULT_NAMESPACE = "default"


def effective_namespace(rid: ResId) -> str:
    """The namespace kustomize compares ids by: none at all for a kind it
    knows to be cluster-scoped (whatever the object says), and "default"
    for an object that names none."""
    if is_cluster_scoped(rid.gvk):
        return NO_NAMESPACE
    return rid.namespace or DEFAULT_NAMESPACE
