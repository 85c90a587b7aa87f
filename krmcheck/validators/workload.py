"""Workloads declare their resources and readiness and do not run with root powers.

An opt-in policy pack (``validators: {workload: {enabled: true}}`` in
``.krmcheck.yaml``): every finding is a warning, tagged with its rule.
It looks at the pod spec of Pods, PodTemplates, CronJobs' job templates and
the ``spec.template.spec`` of every other kind (Deployment, StatefulSet,
DaemonSet, ReplicaSet, Job, and custom resources shaped the same way), and
at its ``containers`` and ``initContainers`` (ephemeral containers take no
resources or probes and are left alone):

- ``resources``: a container without a CPU request, a memory request or a
  memory limit. Requests are what the scheduler places pods by; without a
  memory limit one container can exhaust its node's memory. A CPU limit is
  not asked for: CPU is throttled, not exhausted. A limit also counts as
  the request of the same resource (Kubernetes copies it into a missing
  request), and so do the defaults of a ``LimitRange`` of type
  ``Container`` rendered into the same namespace. One finding per
  container, naming everything missing, at ``resources.limits.memory``
  when only that is missing, ``resources.requests`` when only requests
  are, ``resources`` otherwise.
- ``readiness-probe``: a container of a Deployment, StatefulSet, DaemonSet
  or ReplicaSet without a ``readinessProbe``: it receives traffic, and a
  rollout moves on, as soon as it starts. Jobs, CronJobs, bare Pods and init
  containers are not asked for one.
- ``run-as-root``: a container that runs as root, or may. Container
  settings override the pod's ``securityContext``. The effective
  ``runAsUser`` being 0 is reported at that field; with no ``runAsUser``,
  the image's user decides, so the container passes only with an effective
  ``runAsNonRoot: true`` (the kubelet then refuses a root image), and is
  reported at ``securityContext.runAsNonRoot`` otherwise. Windows pods
  (``spec.os.name: windows``) are skipped.
- ``privileged``: ``securityContext.privileged: true``, reported at that field.
- ``privilege-escalation``: a Linux container whose
  ``securityContext.allowPrivilegeEscalation`` is not ``false``. Kubernetes
  lets a process gain more privileges than its parent (setuid binaries)
  unless the field is set to false, so leaving it out is reported too, at
  the field's place. Not repeated for a privileged container.
- ``host-path``: a ``hostPath`` volume, reported at the volume's
  ``hostPath``: the pod reads or writes the node's file system.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from krmcheck.results import Result
from krmcheck.tree.node import Mapping, Node, Scalar, lookup
from krmcheck.tree.node import Sequence as SequenceNode
from krmcheck.validators.base import ValidatorOptions, field_path, make_result, pod_spec_path, scalar_text

id = "workload"
description = ("opt-in policies: containers set requests, a memory limit and (long-running) "
               "a readiness probe, and do not run as root, privileged or with host paths")
enabled_by_default = False

_LONG_RUNNING = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"})

Path = tuple[str | int, ...]


class Container(NamedTuple):
    """A container of a pod spec and where it sits in the resource."""

    path: Path
    node: Mapping
    init: bool

    @property
    def label(self) -> str:
        name = scalar_text(self.node.get("name"))
        what = "init container" if self.init else "container"
        return f"{what} {name!r}" if name else what


class Problem(NamedTuple):
    """One finding before it becomes a Result: its rule, field path and message."""

    rule: str
    path: Path
    message: str


class Defaults(NamedTuple):
    """What LimitRanges of one namespace fill in: resource names with a
    default limit, and with a default request."""

    limits: frozenset[str] = frozenset()
    requests: frozenset[str] = frozenset()


NO_DEFAULTS = Defaults()


def validate(items: Sequence[Mapping], options: ValidatorOptions) -> list[Result]:
    defaults = limit_range_defaults(items)
    results = []
    for item in items:
        namespace_defaults = defaults.get(_namespace(item), NO_DEFAULTS)
        for problem in problems(item, namespace_defaults):
            results.append(make_result(id, item, problem.message, field_path(problem.path),
                                       severity="warning", rule=problem.rule))
    return results


def problems(item: Mapping, defaults: Defaults = NO_DEFAULTS) -> Iterator[Problem]:
    """Every policy problem of one resource, container by container, then its volumes."""
    spec_path = pod_spec_path(item)
    pod = lookup(item, list(spec_path))
    if not isinstance(pod, Mapping):
        return
    long_running = item.value("kind") in _LONG_RUNNING
    windows = scalar_text(lookup(pod, ["os", "name"])) == "windows"
    for container in containers(pod, spec_path):
        yield from _resource_problems(container, defaults)
        if long_running and not container.init and container.node.mapping("readinessProbe") is None:
            yield Problem("readiness-probe", (*container.path, "readinessProbe"),
                          f"{container.label} has no readinessProbe")
        yield from _security_problems(container, pod, spec_path, windows)
    yield from _host_path_problems(pod, spec_path)


def containers(pod: Mapping, spec_path: Path) -> Iterator[Container]:
    """The containers of a pod spec, then its init containers."""
    for list_name in ("containers", "initContainers"):
        entries = pod.get(list_name)
        if not isinstance(entries, SequenceNode):
            continue
        for index, node in enumerate(entries):
            if isinstance(node, Mapping):
                yield Container((*spec_path, list_name, index), node, list_name == "initContainers")


def limit_range_defaults(items: Sequence[Mapping]) -> dict[str, Defaults]:
    """Namespace -> what its LimitRanges of type Container fill in."""
    out: dict[str, Defaults] = {}
    for item in items:
        if item.value("kind") != "LimitRange":
            continue
        limits = lookup(item, ["spec", "limits"])
        for entry in limits if isinstance(limits, SequenceNode) else ():
            if not isinstance(entry, Mapping) or entry.value("type") != "Container":
                continue
            found = out.get(_namespace(item), Defaults())
            out[_namespace(item)] = Defaults(found.limits | _names(entry.get("default")),
                                             found.requests | _names(entry.get("defaultRequest")))
    return out


def _resource_problems(container: Container, defaults: Defaults) -> Iterator[Problem]:
    limits = _names(lookup(container.node, ["resources", "limits"])) | defaults.limits
    requests = _names(lookup(container.node, ["resources", "requests"])) | defaults.requests | limits
    missing = [f"{name} request" for name in ("cpu", "memory") if name not in requests]
    if "memory" not in limits:
        missing.append("memory limit")
    if not missing:
        return
    # One finding per container, at the most precise place that covers what is missing.
    if missing == ["memory limit"]:
        at: Path = ("resources", "limits", "memory")
    elif "memory limit" not in missing:
        at = ("resources", "requests")
    else:
        at = ("resources",)
    listed = ", ".join(missing[:-1]) + " or " + missing[-1] if len(missing) > 1 else missing[0]
    yield Problem("resources", (*container.path, *at), f"{container.label} has no {listed}")


def _security_problems(container: Container, pod: Mapping, spec_path: Path,
                       windows: bool) -> Iterator[Problem]:
    own = container.node.mapping("securityContext") or Mapping()
    own_path = (*container.path, "securityContext")
    if own.value("privileged") is True:
        yield Problem("privileged", (*own_path, "privileged"),
                      f"{container.label} is privileged: it has every capability and all host devices")
    if windows:
        return
    if own.value("allowPrivilegeEscalation") is not False and own.value("privileged") is not True:
        how = "allows" if own.value("allowPrivilegeEscalation") is True else "does not forbid"
        yield Problem("privilege-escalation", (*own_path, "allowPrivilegeEscalation"),
                      f"{container.label} {how} privilege escalation; set "
                      "securityContext.allowPrivilegeEscalation: false")
    yield from _root_problems(container, own, own_path, pod, spec_path)


def _root_problems(container: Container, own: Mapping, own_path: Path,
                   pod: Mapping, spec_path: Path) -> Iterator[Problem]:
    pod_context = pod.mapping("securityContext") or Mapping()
    pod_path = (*spec_path, "securityContext")
    user, user_path = _effective(own, own_path, pod_context, pod_path, "runAsUser")
    if isinstance(user, int) and not isinstance(user, bool):
        if user == 0:
            yield Problem("run-as-root", user_path, f"{container.label} runs as root (runAsUser: 0)")
        return
    non_root, non_root_path = _effective(own, own_path, pod_context, pod_path, "runAsNonRoot")
    if non_root is not True:
        yield Problem("run-as-root", non_root_path,
                      f"{container.label} may run as root: the image's user decides; set "
                      "securityContext.runAsNonRoot: true or a non-zero runAsUser")


def _effective(own: Mapping, own_path: Path, pod_context: Mapping, pod_path: Path,
               field: str) -> tuple[object, Path]:
    """A securityContext field as the kubelet sees it (the container's
    overrides the pod's) and where it is set; unset: the container's place."""
    for context, path in ((own, own_path), (pod_context, pod_path)):
        node = context.get(field)
        if isinstance(node, Scalar) and node.value is not None:
            return node.value, (*path, field)
    return None, (*own_path, field)


def _host_path_problems(pod: Mapping, spec_path: Path) -> Iterator[Problem]:
    volumes = pod.get("volumes")
    for index, volume in enumerate(volumes if isinstance(volumes, SequenceNode) else ()):
        host_path = volume.mapping("hostPath") if isinstance(volume, Mapping) else None
        if host_path is None:
            continue
        name = scalar_text(volume.get("name")) if isinstance(volume, Mapping) else ""
        where = scalar_text(host_path.get("path"))
        yield Problem("host-path", (*spec_path, "volumes", index, "hostPath"),
                      f"volume {name!r} mounts the node's path {where!r} (hostPath)")


def _names(node: Node | None) -> frozenset[str]:
    """The resource names a requests/limits mapping sets (to a non-null value)."""
    if not isinstance(node, Mapping):
        return frozenset()
    return frozenset(k for k, v in node.items.items() if not (isinstance(v, Scalar) and v.value is None))


def _namespace(item: Mapping) -> str:
    return scalar_text(lookup(item, ["metadata", "namespace"]))
