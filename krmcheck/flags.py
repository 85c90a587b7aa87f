"""Flags: what a pull request changes that can wedge a rollout or hurt.

``--diff-against REF`` compares each object a root renders in the work tree
with the same object at REF (see :mod:`krmcheck.diff`); the rules below
look at each pair and raise a flag, with a stable id, at the field that
changed, so that the reporters show it at the source line that made the
change. Flags are review information: they fail a run only when
``--fail-on-flag ID`` names them.

Two sections share the mechanism: flags proper (``FLAGS``), and what the
GitOps controller will do with a change of its own object (``CONTROLLER``:
a new ``spec.suspend``, a new source or path). The ids are in
:mod:`krmcheck.flag_ids`, which the command line reads for its help.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from krmcheck import diff as kdiff
from krmcheck.flag_ids import ALL
from krmcheck.gitops.root import ARGOCD, FLUX_HELM, ControllerRoot
from krmcheck.results import Controller, ResourceRef, Result
from krmcheck.schemas.formats import quantity
from krmcheck.tree import fieldpath
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Location

Steps = tuple[fieldpath.Step, ...]


class Raised(NamedTuple):
    """A flag before it is located: the Result names the object and the field."""

    id: str
    result: Result
    old: str = ""
    new: str = ""


class Pair(NamedTuple):
    """An object of the work tree and what it was at REF (None: it is new)."""

    ref: ResourceRef
    before: dict[str, Any] | None
    after: dict[str, Any]


Rule = Callable[[Pair], Iterator[Raised]]


def raised(base: Sequence[kdiff.Rendered], work: Iterable[tuple[ResourceRef, str, dict[str, Any], str, str]],
           secret_key: bytes) -> list[Raised]:
    """The flags of one root: ``work`` is each rendered object as (ref,
    source id, data, the file that wrote it, its rendered text) and ``base``
    the root's objects at REF."""
    old = {r.key: r for r in base}
    items = [(kdiff.Rendered(ref, source_id, text, path), kdiff.hide_secret_values(data, secret_key))
             for ref, source_id, data, path, text in work]
    keys = {r.key for r, _ in items}
    renamed = kdiff.renames([b for b in base if b.key not in keys], [r for r, _ in items if r.key not in old])
    pairs: list[Pair] = []
    out: list[Raised] = []
    for r, data in items:
        before = old.get(r.key)
        was = renamed.get(r.key)
        if was is not None:
            out.append(_renamed(r.ref, was.ref))
            before = was
        if before is not None and before.text == r.text:
            continue
        pairs.append(Pair(r.ref, kdiff.data_of(before) if before is not None else None, data))
    everything = [data for _, data in items]
    for pair in pairs:
        for rule in RULES:
            out.extend(rule(pair))
        out.extend(_pdb(pair, everything))
    return out


# --- showing values -------------------------------------------------------------------

_SHOWN = 60


def show(value: Any) -> str:
    """A value as one short line: ``(unset)``, a scalar as it is, a
    mapping or list as compact JSON, cut at 60 characters."""
    if value is kdiff.MISSING:
        return "unset"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return text if len(text) <= _SHOWN else text[:_SHOWN - 3] + "..."


def _flag(flag: str, ref: ResourceRef, at: Steps, message: str, old: Any, new: Any) -> Raised:
    result = Result(message=message, severity=ALL[flag].severity, resource_ref=ref,
                    field_path=fieldpath.format(at), tags=(("validator", flag),))
    return Raised(flag, result, show(old), show(new))


def _renamed(ref: ResourceRef, was: ResourceRef) -> Raised:
    return _flag("object-renamed", ref, (fieldpath.key("metadata"), fieldpath.key("name")),
                 f"{was} becomes {ref}: the API server cannot rename an object, so this creates {ref} "
                 f"and (where pruning is on) deletes {was}", str(was), str(ref))


def _steps(*path: str | int) -> Steps:
    return tuple(fieldpath.index(p) if isinstance(p, int) else fieldpath.key(p) for p in path)


def _group(ref: ResourceRef) -> str:
    return ref.apiVersion.rpartition("/")[0]


# --- fields the API server does not change in place --------------------------------------

class Field(NamedTuple):
    flag: str
    group: str
    kinds: tuple[str, ...]
    path: tuple[str, ...]  # from the top of the object
    why: str


# What the API server refuses to change on an existing object (its
# validation of updates): applying the change fails, or a tool deletes and
# creates the object.
FIELDS: tuple[Field, ...] = (
    Field("selector-changed", "apps", ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"),
          ("spec", "selector"), "the label selector of a workload cannot be changed"),
    Field("selector-changed", "batch", ("Job",), ("spec", "selector"), "a Job's selector cannot be changed"),
    Field("statefulset-volumeclaimtemplates", "apps", ("StatefulSet",), ("spec", "volumeClaimTemplates"),
          "a StatefulSet's volumeClaimTemplates cannot be changed"),
    Field("immutable-field", "apps", ("StatefulSet",), ("spec", "serviceName"),
          "a StatefulSet's serviceName cannot be changed"),
    Field("immutable-field", "apps", ("StatefulSet",), ("spec", "podManagementPolicy"),
          "a StatefulSet's podManagementPolicy cannot be changed"),
    Field("immutable-field", "batch", ("Job",), ("spec", "template"), "a Job's pod template cannot be changed"),
    Field("service-clusterip", "", ("Service",), ("spec", "clusterIP"), "a Service's clusterIP cannot be changed"),
    Field("pvc-storage-class", "", ("PersistentVolumeClaim",), ("spec", "storageClassName"),
          "a PersistentVolumeClaim's storageClassName cannot be changed"),
    Field("immutable-field", "", ("PersistentVolumeClaim",), ("spec", "accessModes"),
          "a PersistentVolumeClaim's accessModes cannot be changed"),
    Field("immutable-field", "", ("PersistentVolumeClaim",), ("spec", "volumeName"),
          "a bound PersistentVolumeClaim's volumeName cannot be changed"),
    Field("rbac-roleref", "rbac.authorization.k8s.io", ("RoleBinding", "ClusterRoleBinding"), ("roleRef",),
          "a binding's roleRef cannot be changed"),
)


def _fields(pair: Pair) -> Iterator[Raised]:
    if pair.before is None:
        return
    group = _group(pair.ref)
    for rule in FIELDS:
        if rule.group != group or pair.ref.kind not in rule.kinds:
            continue
        old, new = kdiff.get(pair.before, rule.path), kdiff.get(pair.after, rule.path)
        if rule.flag == "statefulset-volumeclaimtemplates":
            old, new = (v if v is not kdiff.MISSING else [] for v in (old, new))
        if old is kdiff.MISSING or old == new:
            continue  # setting a field that was unset lets the server keep its value
        if rule.path == ("spec", "clusterIP") and (old in ("", None) or new in ("", None, kdiff.MISSING)):
            continue  # an empty or dropped clusterIP keeps the allocated one
        path = ".".join(rule.path)
        where = kdiff.first_difference(old, new, _steps(*rule.path))
        yield _flag(rule.flag, pair.ref, where, f"{path} changes ({rule.why} in place): applying it is "
                                                f"refused, and {pair.ref} has to be deleted and created again",
                    _value(pair.before, where), _value(pair.after, where))
    if group == "" and pair.ref.kind in ("ConfigMap", "Secret") and pair.before.get("immutable") is True:
        for field in ("data", "binaryData", "stringData"):
            old, new = kdiff.get(pair.before, (field,)), kdiff.get(pair.after, (field,))
            if old != new:
                where = kdiff.first_difference(old, new, _steps(field))
                hidden = pair.ref.kind == "Secret"
                yield _flag("immutable-field", pair.ref, where,
                            f"{field} of an immutable {pair.ref.kind} changes: applying it is refused, and "
                            f"{pair.ref} has to be deleted and created again",
                            "hidden" if hidden else old, "hidden" if hidden else new)
                break


# --- storage -----------------------------------------------------------------------------

def _pvc_shrink(pair: Pair) -> Iterator[Raised]:
    if pair.before is None or _group(pair.ref) != "" or pair.ref.kind != "PersistentVolumeClaim":
        return
    path = ("spec", "resources", "requests", "storage")
    old, new = kdiff.get(pair.before, path), kdiff.get(pair.after, path)
    a, b = quantity(old), quantity(new)
    if a is not None and b is not None and b < a:
        yield _flag("pvc-shrink", pair.ref, _steps(*path),
                    f"the storage request shrinks from {old} to {new}: a PersistentVolumeClaim cannot "
                    f"shrink, so applying it is refused", old, new)


# --- Services ------------------------------------------------------------------------------

def _service_type(pair: Pair) -> Iterator[Raised]:
    if pair.before is None or _group(pair.ref) != "" or pair.ref.kind != "Service":
        return
    old = kdiff.get(pair.before, ("spec", "type"))
    new = kdiff.get(pair.after, ("spec", "type"))
    old, new = (v if isinstance(v, str) and v else "ClusterIP" for v in (old, new))
    if old != new:
        yield _flag("service-type", pair.ref, _steps("spec", "type"),
                    f"the Service's type changes from {old} to {new}: its addresses change (a load "
                    f"balancer or node ports are made or released)", old, new)


# --- RBAC ----------------------------------------------------------------------------------

_WILDCARD_FIELDS = ("verbs", "resources", "apiGroups", "nonResourceURLs")


def _rbac_wildcard(pair: Pair) -> Iterator[Raised]:
    if _group(pair.ref) != "rbac.authorization.k8s.io" or pair.ref.kind not in ("Role", "ClusterRole"):
        return
    rules = pair.after.get("rules")
    before = pair.before.get("rules") if pair.before is not None else None
    known = before if isinstance(before, list) else []
    for i, rule in enumerate(rules if isinstance(rules, list) else []):
        if not isinstance(rule, dict) or rule in known:
            continue
        for field in _WILDCARD_FIELDS:
            values = rule.get(field)
            if isinstance(values, list) and "*" in values:
                yield _flag("rbac-wildcard", pair.ref, _steps("rules", i, field),
                            f"a new rule grants '*' in {field}: {pair.ref} allows "
                            f"{'every ' + field if field != 'apiGroups' else 'every API group'}",
                            "none", rule)
                break


# --- privilege -----------------------------------------------------------------------------

# Where each workload kind keeps its pod spec.
POD_SPECS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "Pod"): ("spec",),
    ("", "ReplicationController"): ("spec", "template", "spec"),
    ("apps", "Deployment"): ("spec", "template", "spec"),
    ("apps", "StatefulSet"): ("spec", "template", "spec"),
    ("apps", "DaemonSet"): ("spec", "template", "spec"),
    ("apps", "ReplicaSet"): ("spec", "template", "spec"),
    ("batch", "Job"): ("spec", "template", "spec"),
    ("batch", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
}


def pod_spec(ref: ResourceRef, data: dict[str, Any] | None) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The path of a workload's pod spec and the spec ({} when it has none)."""
    path = POD_SPECS.get((_group(ref), ref.kind))
    spec = kdiff.get(data, path) if path is not None and data is not None else None
    return (path or ()), (spec if isinstance(spec, dict) else {})


def privileges(spec: dict[str, Any]) -> dict[tuple[str | int, ...], str]:
    """Every privilege a pod spec holds: its path below the spec -> what it is."""
    out: dict[tuple[str | int, ...], str] = {}
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field) is True:
            out[(field,)] = field
    if _get(spec, "securityContext", "runAsUser") == 0:
        out[("securityContext", "runAsUser")] = "runAsUser 0"
    for i, volume in enumerate(_list(spec.get("volumes"))):
        if isinstance(volume, dict) and "hostPath" in volume:
            out[("volumes", i, "hostPath")] = f"hostPath volume {volume.get('name', i)}"
    for group in ("initContainers", "containers"):
        for i, c in enumerate(_list(spec.get(group))):
            if not isinstance(c, dict):
                continue
            name = c.get("name", i)
            if _get(c, "securityContext", "privileged") is True:
                out[(group, i, "securityContext", "privileged")] = f"privileged {name}"
            if _get(c, "securityContext", "runAsUser") == 0:
                out[(group, i, "securityContext", "runAsUser")] = f"runAsUser 0 in {name}"
            for j, cap in enumerate(_list(_get(c, "securityContext", "capabilities", "add"))):
                out[(group, i, "securityContext", "capabilities", "add", j)] = f"capability {cap} in {name}"
    return out


def _privilege(pair: Pair) -> Iterator[Raised]:
    path, after = pod_spec(pair.ref, pair.after)
    if not path:
        return
    had = set(privileges(pod_spec(pair.ref, pair.before)[1]).values())
    gained = [(at, what) for at, what in privileges(after).items() if what not in had]
    if gained:
        what = ", ".join(w for _, w in gained)
        yield _flag("privilege-gained", pair.ref, _steps(*path, *gained[0][0]),
                    f"{pair.ref} {'is new and has' if pair.before is None else 'gains'} {what}",
                    ", ".join(sorted(had)) or "none", what)


# --- availability --------------------------------------------------------------------------

_SCALED = {("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "ReplicaSet"), ("", "ReplicationController")}


def _replicas_zero(pair: Pair) -> Iterator[Raised]:
    if pair.before is None or (_group(pair.ref), pair.ref.kind) not in _SCALED:
        return
    old = kdiff.get(pair.before, ("spec", "replicas"))
    old = 1 if old is kdiff.MISSING else old
    if kdiff.get(pair.after, ("spec", "replicas")) == 0 and old != 0:
        yield _flag("replicas-zero", pair.ref, _steps("spec", "replicas"),
                    f"{pair.ref} scales from {old} replicas to 0: every pod stops", old, 0)


def _pdb(pair: Pair, everything: Sequence[dict[str, Any]]) -> Iterator[Raised]:
    if _group(pair.ref) != "policy" or pair.ref.kind != "PodDisruptionBudget":
        return
    after = _blocking(pair.after, everything)
    if after is None or (pair.before is not None and _blocking(pair.before, everything) is not None):
        return
    field, value, why = after
    yield _flag("pdb-blocks-eviction", pair.ref, _steps("spec", field),
                f"{pair.ref} allows no voluntary eviction ({why}): draining a node hangs on its pods",
                kdiff.get(pair.before, ("spec", field)) if pair.before is not None else "none", value)


def _blocking(pdb: dict[str, Any], everything: Sequence[dict[str, Any]]) -> tuple[str, Any, str] | None:
    """The field that makes a PodDisruptionBudget allow no eviction, its
    value and why; None when it allows some."""
    spec = pdb.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    if "maxUnavailable" in spec:
        value = spec["maxUnavailable"]
        return ("maxUnavailable", value, "maxUnavailable is 0") if value in (0, "0", "0%") else None
    value = spec.get("minAvailable")
    if value == "100%":
        return ("minAvailable", value, "minAvailable is 100%")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        replicas = _selected_replicas(pdb, everything)
        if replicas is not None and value >= replicas:
            return ("minAvailable", value, f"minAvailable {value} of {replicas} replicas")
    return None


def _selected_replicas(pdb: dict[str, Any], everything: Sequence[dict[str, Any]]) -> int | None:
    """The replicas of the workloads a PodDisruptionBudget selects (in its
    namespace, by matchLabels), or None when it selects none."""
    labels = _get(pdb, "spec", "selector", "matchLabels")
    if not isinstance(labels, dict) or not labels:
        return None
    namespace = _get(pdb, "metadata", "namespace") or ""
    total, found = 0, False
    for data in everything:
        ref = ResourceRef(str(data.get("apiVersion", "")), str(data.get("kind", "")), "")
        if (_group(ref), ref.kind) not in _SCALED or (_get(data, "metadata", "namespace") or "") != namespace:
            continue
        pod_labels = _get(data, "spec", "template", "metadata", "labels")
        if isinstance(pod_labels, dict) and all(pod_labels.get(k) == v for k, v in labels.items()):
            replicas = _get(data, "spec", "replicas")
            total += replicas if isinstance(replicas, int) else 1
            found = True
    return total if found else None


# --- controller objects ----------------------------------------------------------------------

# The fields that say what a controller object applies and where: a change
# moves everything under it.
_SOURCES: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {
    ("kustomize.toolkit.fluxcd.io", "Kustomization"): (("spec", "path"), ("spec", "sourceRef"),
                                                       ("spec", "targetNamespace")),
    ("helm.toolkit.fluxcd.io", "HelmRelease"): (("spec", "chart", "spec", "chart"),
                                                ("spec", "chart", "spec", "sourceRef"), ("spec", "chartRef"),
                                                ("spec", "targetNamespace")),
    ("argoproj.io", "Application"): (("spec", "source", "repoURL"), ("spec", "source", "path"),
                                     ("spec", "sources"), ("spec", "destination", "namespace"),
                                     ("spec", "destination", "server"), ("spec", "destination", "name")),
}


def _controller(pair: Pair) -> Iterator[Raised]:
    if pair.before is None:
        return
    kind = (_group(pair.ref), pair.ref.kind)
    if kind not in _SOURCES:
        return
    if kind != ("argoproj.io", "Application"):
        old, new = (bool(kdiff.get(d, ("spec", "suspend")) is True) for d in (pair.before, pair.after))
        if old != new:
            what = ("suspends it: later changes under it do not roll out until it is resumed" if new else
                    "resumes it: every change held back while it was suspended is applied at once")
            yield _flag("suspend-changed", pair.ref, _steps("spec", "suspend"),
                        f"spec.suspend of {pair.ref} changes from {str(old).lower()} to {str(new).lower()}: "
                        f"this {what}", str(old).lower(), str(new).lower())
    for path in _SOURCES[kind]:
        old, new = kdiff.get(pair.before, path), kdiff.get(pair.after, path)
        if old != new:
            field = ".".join(path)
            yield _flag("source-moved", pair.ref, kdiff.first_difference(old, new, _steps(*path)),
                        f"{field} of {pair.ref} changes: everything it applies moves (objects created "
                        f"from the new place, those only in the old one pruned or orphaned)", old, new)


RULES: tuple[Rule, ...] = (_fields, _pvc_shrink, _service_type, _rbac_wildcard, _privilege, _replicas_zero,
                           _controller)


def _value(data: Any, at: Steps) -> Any:
    """The value at a field path (the first that differs), or ``MISSING``."""
    for step in at:
        if step.key is not None and isinstance(data, dict) and step.key in data:
            data = data[step.key]
        elif step.position is not None and isinstance(data, list) and 0 <= step.position < len(data):
            data = data[step.position]
        else:
            return kdiff.MISSING
    return data


def _get(data: Any, *path: str) -> Any:
    value = kdiff.get(data, path)
    return None if value is kdiff.MISSING else value


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# --- the controller object of a root -----------------------------------------------------------

def controller(root: ControllerRoot) -> Controller:
    """What the pull-request view needs of the object that applies ``root``:
    read from the object as the root's discovery rendered it."""
    data = root.obj.to_data()
    data = data if isinstance(data, dict) else {}
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    ref = ResourceRef(str(data.get("apiVersion", "")), str(data.get("kind", "")), str(meta.get("name", "")),
                      str(meta.get("namespace", "") or ""))

    def at(*path: str) -> Location | None:
        return _at(root.obj, path) if kdiff.get(data, path) is not kdiff.MISSING else None

    if root.controller == ARGOCD:
        automated = kdiff.get(data, ("spec", "syncPolicy", "automated"))
        on = isinstance(automated, dict) and automated.get("enabled") is not False
        return Controller(ref, root.origin.location, automated=on,
                          prune=on and isinstance(automated, dict) and automated.get("prune") is True,
                          prune_at=at("spec", "syncPolicy", "automated", "prune") or at("spec", "syncPolicy"))
    suspended = kdiff.get(data, ("spec", "suspend")) is True
    if root.controller == FLUX_HELM:  # an upgrade deletes what the chart no longer renders
        return Controller(ref, root.origin.location, suspended, at("spec", "suspend"), prune=True)
    return Controller(ref, root.origin.location, suspended, at("spec", "suspend"),
                      prune=kdiff.get(data, ("spec", "prune")) is True, prune_at=at("spec", "prune"))


def _at(obj: Mapping, path: tuple[str, ...]) -> Location:
    chain = fieldpath.trace(obj, _steps(*path))
    return next((n.origin.location for n in reversed(chain) if n.origin.line > 0), chain[-1].origin.location)
