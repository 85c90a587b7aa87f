"""The ids of the pull-request view's flags, each with its severity and what
raises it (:mod:`krmcheck.flags` raises them): a table light enough for the
command line's help and its check of ``--fail-on-flag ID``."""

from __future__ import annotations

from typing import NamedTuple


class Kind(NamedTuple):
    severity: str  # error: the API server refuses it in place; warning: it applies, and hurts
    what: str  # one line for the README and --help


FLAGS: dict[str, Kind] = {
    "immutable-field": Kind("error", "a field the API server does not change in place (a StatefulSet's "
                                     "serviceName, a Job's template, a PVC's accessModes, an immutable "
                                     "ConfigMap's data...)"),
    "object-renamed": Kind("warning", "a new name or namespace: a new object is created, the old one pruned"),
    "statefulset-volumeclaimtemplates": Kind("error", "a StatefulSet's volumeClaimTemplates change"),
    "pvc-storage-class": Kind("error", "a PersistentVolumeClaim's storageClassName changes"),
    "pvc-shrink": Kind("error", "a PersistentVolumeClaim asks for less storage than before"),
    "selector-changed": Kind("error", "a workload's (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job) "
                                      "label selector changes"),
    "service-type": Kind("warning", "a Service's type changes (an external address is made or released)"),
    "service-clusterip": Kind("error", "a Service's clusterIP changes from one set address to another"),
    "rbac-roleref": Kind("error", "a RoleBinding's or ClusterRoleBinding's roleRef changes"),
    "rbac-wildcard": Kind("warning", "a new Role or ClusterRole rule with '*' in its verbs, resources or "
                                     "apiGroups"),
    "privilege-gained": Kind("warning", "a pod gains privilege: privileged, hostNetwork, hostPID, hostIPC, "
                                        "a hostPath volume, an added capability, runAsUser 0"),
    "replicas-zero": Kind("warning", "a workload's replicas go to 0"),
    "pdb-blocks-eviction": Kind("warning", "a PodDisruptionBudget allows no eviction (maxUnavailable 0, "
                                           "minAvailable 100% or at least the replicas): node drains hang"),
    "namespace-removed": Kind("warning", "a Namespace is removed while objects are in it: deleting it "
                                         "deletes them"),
}

CONTROLLER: dict[str, Kind] = {
    "suspend-changed": Kind("warning", "a controller object's spec.suspend changes: suspending holds every "
                                       "later change back, resuming applies all that was held at once"),
    "source-moved": Kind("warning", "a controller object's path, sourceRef or targetNamespace changes: "
                                    "everything under it moves"),
    "suspended": Kind("warning", "changes under a suspended Flux Kustomization or HelmRelease: they do not "
                                 "roll out"),
    "manual-sync": Kind("info", "changes under an Argo CD Application without automated sync: they wait "
                                "for a sync"),
    "pruned": Kind("info", "removed objects under prune: they are deleted in the cluster"),
    "orphaned": Kind("warning", "removed objects under no prune: they are left running, orphaned"),
}

ALL: dict[str, Kind] = {**FLAGS, **CONTROLLER}
