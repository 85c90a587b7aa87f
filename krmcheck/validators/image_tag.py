"""Every container image names a fixed version.

An image without a tag or digest (``nginx``) or with the ``latest`` tag
(``nginx:latest``) can change under a running workload and makes rollbacks
meaningless. Each such image is a warning at its ``image`` field (a policy
the API server does not enforce; ``validators: {image-tag: {severity: error}}``
makes it an error). Checked:
``containers``, ``initContainers`` and ``ephemeralContainers`` of Pods, of
PodTemplates, of CronJobs' job templates, and of the pod template at
``spec.template.spec`` of every other kind (Deployment, StatefulSet,
DaemonSet, ReplicaSet, ReplicationController, Job, and custom resources
shaped the same way). A digest (``nginx@sha256:...``) pins the image even
when a tag is also given. A ``ko://`` reference (``ko://example.com/app/cmd/server``)
names a Go package that ko builds and replaces with a digest-pinned image
at build time, so it is never reported.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from krmcheck.resource.image import split
from krmcheck.results import Result
from krmcheck.tree.node import Mapping, Scalar, lookup
from krmcheck.tree.node import Sequence as SequenceNode
from krmcheck.validators.base import ValidatorOptions, field_path, make_result, pod_spec_path

id = "image-tag"
description = "container images name a tag or digest, and the tag is not 'latest'"

_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")

# ko (https://ko.build) replaces an image reference of the form ko://<Go import path>
# with the image it builds, pinned by digest, before the manifests are applied
_KO_PREFIX = "ko://"


class Image(NamedTuple):
    """One ``image`` field: where it is, the container it belongs to, and its value."""

    path: tuple[str | int, ...]
    container: str
    reference: str


def validate(items: Sequence[Mapping], options: ValidatorOptions) -> list[Result]:
    results = []
    for item in items:
        for image in images(item):
            problem = _problem(image.reference)
            if problem:
                rule, why = problem
                owner = f"container {image.container!r}: " if image.container else ""
                message = f"{owner}image {image.reference!r} {why}"
                results.append(make_result(id, item, message, field_path(image.path),
                                           severity="warning", rule=rule))
    return results


def images(item: Mapping) -> Iterator[Image]:
    """Every container image of a resource, in containers, initContainers, ephemeralContainers order."""
    spec_path = pod_spec_path(item)
    pod_spec = lookup(item, list(spec_path))
    if not isinstance(pod_spec, Mapping):
        return
    for list_name in _CONTAINER_LISTS:
        containers = pod_spec.get(list_name)
        if not isinstance(containers, SequenceNode):
            continue
        for index, container in enumerate(containers):
            image = container.get("image") if isinstance(container, Mapping) else None
            if isinstance(image, Scalar) and isinstance(image.value, str) and image.value:
                name = container.value("name", "") if isinstance(container, Mapping) else ""
                yield Image((*spec_path, list_name, index, "image"), str(name), image.value)


def _problem(reference: str) -> tuple[str, str] | None:
    """(rule, what is wrong) for an unpinned image reference; None when it is pinned."""
    if reference.startswith(_KO_PREFIX):
        return None  # resolved by ko at build time to a digest
    _, tag, digest = split(reference)  # a ':' before the last '/' is a registry port, not a tag
    if digest:
        return None
    if not tag:
        return "no-tag", "has no tag or digest; pin a version"
    if tag == "latest":
        return "latest-tag", "uses the 'latest' tag; pin a version"
    return None
