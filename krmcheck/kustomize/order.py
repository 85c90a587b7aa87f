"""kubectl's default output order ("legacy"): kinds in dependency order."""

from __future__ import annotations

from krmcheck.kustomize.resource import Resource

FIRST = ("Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition",
         "ServiceAccount", "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding",
         "ClusterRoleBinding", "ConfigMap", "Secret", "Endpoints", "Service", "LimitRange",
         "PriorityClass", "PersistentVolume", "PersistentVolumeClaim", "Deployment",
         "StatefulSet", "CronJob", "PodDisruptionBudget")
LAST = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
_RANK = {k: i for i, k in enumerate(FIRST)}
_RANK.update({k: len(FIRST) + 1 + i for i, k in enumerate(LAST)})
_OTHER = len(FIRST)


def _key(res: Resource) -> tuple:
    gvk = res.gvk
    # kustomize compares "group_version_kind" text, then namespace ("~X" when
    # empty, so it sorts after named namespaces), then name.
    return (_RANK.get(gvk.kind, _OTHER), str(gvk), res.namespace or "~X", res.name)


def legacy(resources: list[Resource]) -> list[Resource]:
    return sorted(resources, key=_key)
