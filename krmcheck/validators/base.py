"""What every validator is made of: the ``Validator`` protocol, the options
a run gives it, and the helpers that make its Results (the resourceRef of
an item, field paths, pod spec paths). The registry is the package's
``__init__``."""

from __future__ import annotations

import re

import fnmatch
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from krmcheck.results import ResourceRef, Result
from krmcheck.tree.node import Mapping, Node, Scalar

if TYPE_CHECKING:
    from krmcheck.schemas.sources import SchemaSettings


class Provided(NamedTuple):
    """Objects a root may refer to without defining them (``provided:`` in
    ``.krmcheck.yaml``): made by an operator, another repository or the
    cluster itself. ``name`` and ``namespace`` are shell-style patterns."""

    kind: str
    name: str = "*"
    namespace: str = "*"

    def matches(self, kind: str, name: str, namespace: str) -> bool:
        return (self.kind in (kind, "*") and fnmatch.fnmatchcase(name, self.name)
                and fnmatch.fnmatchcase(namespace, self.namespace))


class ValidatorOptions(NamedTuple):
    """What a run asks of the validators (from the CLI and ``.krmcheck.yaml``)."""

    kubernetes_version: str | None = None  # "1.30", "v1.30" or "1.30.2"; None: newest bundled
    strict: bool = False  # schema: reject fields the Kubernetes schema does not know
    # schema: where schemas come from besides the built-in ones (repository
    # CRDs, schema locations, the cache); None: built-in and the root's own CRDs
    schemas: SchemaSettings | None = None
    provided: tuple[Provided, ...] = ()  # reference: objects made outside the root


class Validator(Protocol):
    id: str
    description: str
    # a module may set ``enabled_by_default = False`` (an opt-in policy pack)

    def validate(self, items: Sequence[Mapping], options: ValidatorOptions) -> list[Result]: ...


def resource_ref(item: Mapping) -> ResourceRef:
    """The resourceRef of a rendered resource (empty strings where a field is
    missing); an object the API server names is named by its ``generateName``."""
    meta = item.mapping("metadata") or Mapping()
    return ResourceRef(_text(item.get("apiVersion")), _text(item.get("kind")),
                       _text(meta.get("name")) or _text(meta.get("generateName")), _text(meta.get("namespace")))


def scalar_text(node: Node | None) -> str:
    """A scalar's value as Kubernetes would see it in a string field; "" otherwise."""
    return _text(node)


def _text(node: Node | None) -> str:
    return node.as_string() if isinstance(node, Scalar) else ""


def field_path(parts: Iterable[str | int]) -> str:
    """The dotted field path of ``parts`` (:func:`krmcheck.tree.fieldpath.dotted`)."""
    from krmcheck.tree import fieldpath  # loaded by the first finding

    return fieldpath.dotted(parts)


# Where the pod spec sits, by kind; every other kind (Deployment, StatefulSet,
# DaemonSet, ReplicaSet, Job, custom resources shaped alike): spec.template.spec.
_POD_SPEC: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "PodTemplate": ("template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
_TEMPLATE_POD_SPEC = ("spec", "template", "spec")


def pod_spec_path(item: Mapping) -> tuple[str, ...]:
    """The path of the pod spec a resource of this kind holds (if it holds one)."""
    return _POD_SPEC.get(str(item.value("kind", "")), _TEMPLATE_POD_SPEC)


def make_result(validator_id: str, item: Mapping, message: str, path: str,
                severity: str = "error", rule: str = "",
                extra_tags: tuple[tuple[str, str], ...] = ()) -> Result:
    """A Result about ``item`` at ``path``, tagged with the validator, rule and ``extra_tags``."""
    tags: tuple[tuple[str, str], ...] = (("validator", validator_id),)
    if rule:
        tags += (("rule", rule),)
    tags += extra_tags
    return Result(message=message, severity=severity, resource_ref=resource_ref(item),
                  field_path=path, tags=tags)


# Annotations with which a widely used controller deletes the object a
# manifest names instead of creating or updating it: the manifest carries
# only the object's identity (a release "tombstone"), and nothing else of it
# reaches the API server. (annotation, value) -> the controller and where it
# documents the convention.
DELETED_BY_CONTROLLER: dict[tuple[str, str], str] = {
    ("release.openshift.io/delete", "true"):
        "OpenShift's Cluster Version Operator deletes the object it names instead of creating it "
        "(openshift/enhancements: Use Manifest Annotation For Object Removal)",
}


def deleted_by_controller(item: Mapping) -> tuple[str, str] | None:
    """(the annotation as written, what it means) when a controller
    deletes the object ``item`` names rather than creating it
    (:data:`DELETED_BY_CONTROLLER`)."""
    meta = item.mapping("metadata")
    annotations = meta.mapping("annotations") if meta is not None else None
    if annotations is None:
        return None
    for (key, value), meaning in DELETED_BY_CONTROLLER.items():
        if _text(annotations.get(key)) == value:
            return f'{key}: "{value}"', meaning
    return None


# SOPS ciphertext, ENC[AES256_GCM,data:...,type:str]: what the decryption
# that comes first (Flux's, the sops CLI, ksops) turns into the value; the
# value itself is not known here, so nothing about it is judged.
CIPHERTEXT = re.compile(r"ENC\[[A-Z0-9_]+,data:")
