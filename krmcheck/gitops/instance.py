"""The sync objects the Flux Operator generates for a FluxInstance, patched
as the operator patches them.

A FluxInstance's ``spec.sync`` (or the flux-instance chart's
``instance.sync``) makes a source (GitRepository, OCIRepository or
Bucket) and a Kustomization applying ``sync.path`` of it, both in the
instance's namespace. The operator writes them, beside the controllers'
manifests, into one kustomization whose ``patches:`` end with the
instance's ``kustomize.patches`` (controlplaneio-fluxcd/flux-operator
``internal/builder``: the sync template and the kustomization template;
the "Flux Instance Customization" guide patches the sync Kustomization for
SOPS decryption, the source for its ref or verification). So the
instance's patches change those generated objects, never what the sync
applies: a patch for the sync Kustomization (``postBuild``,
``decryption``...) changes the Kustomization krmcheck follows, and a patch
for the controllers (a Deployment, a ServiceAccount) matches nothing
generated here, as it reaches nothing the sync renders.

The source's own fields (ref, verification) are patched for the patches'
sake only: the ``flux-system`` source is this repository as it is checked
out (``controllers._ours``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from krmcheck.gitops.oci import Sync
from krmcheck.gitops.source import FLUX_SYSTEM
from krmcheck.gitops.substitute import Problem
from krmcheck.kustomize.builtins import patches as kpatches
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, from_data
from krmcheck.tree.origin import Origin

_SOURCE_API = "source.toolkit.fluxcd.io/v1"
_KUSTOMIZATION_API = "kustomize.toolkit.fluxcd.io/v1"
BY = "FluxInstance kustomize.patches"


class Made(NamedTuple):
    """The sync Kustomization as the operator makes it (None: a patch
    deleted it), and the patches that could not be applied."""

    kustomization: Mapping | None
    problems: list[Problem]


def sync_kustomization(sync: Sync) -> Made:
    """The Kustomization the operator makes for ``sync``, written where the
    sync is (its lines are the sync's; what a patch wrote, the patch's)."""
    where = sync.origin.origin if isinstance(sync.origin, Node) else None
    assert where is not None
    made = [Resource(_source(sync, where)), Resource(_kustomization(sync, where))]
    problems = _patch(made, sync.patches, where)
    found = next((r.node for r in made if r.kind == "Kustomization"), None)
    return Made(found, problems)


def _source(sync: Sync, where: Origin) -> Mapping:
    spec: dict[str, Any] = {"interval": "1m"}
    if sync.kind == "Bucket":
        spec.update(bucketName=sync.ref, endpoint=sync.url)
    else:
        spec.update(ref={"tag" if sync.kind == "OCIRepository" else "name": sync.ref}, url=sync.url)
    node = from_data({"apiVersion": _SOURCE_API, "kind": sync.kind,
                      "metadata": {"name": sync.name or FLUX_SYSTEM, "namespace": sync.namespace}, "spec": spec},
                     where)
    assert isinstance(node, Mapping)
    return node


def _kustomization(sync: Sync, where: Origin) -> Mapping:
    spec = {"interval": "10m", "prune": True, "path": sync.path or "./",
            "sourceRef": {"kind": sync.kind, "name": sync.name or FLUX_SYSTEM}}
    node = from_data({"apiVersion": _KUSTOMIZATION_API, "kind": "Kustomization",
                      "metadata": {"name": sync.name or FLUX_SYSTEM, "namespace": sync.namespace}, "spec": spec},
                     where)
    assert isinstance(node, Mapping)
    return node


def _patch(made: list[Resource], given: Any, where: Origin) -> list[Problem]:
    """Apply each patch entry as kustomize applies ``patches:``; one that
    fails is a warning at its line (the operator's build of the instance
    would fail with it) and the others still apply."""
    if given is None:
        return []
    entries = given if isinstance(given, Node) else from_data(given, where)
    if not isinstance(entries, Sequence):
        return [_problem("kustomize.patches is not a list", entries.origin)]
    problems = []
    for entry in entries.items:
        try:
            _apply(made, entry)
        except BuildError as e:
            at = e.location
            origin = Origin(at.path, at.line, at.col) if at is not None else entry.origin
            problems.append(_problem(e.message, origin))
    return problems


def _apply(made: list[Resource], entry: Node) -> None:
    inline = entry.get("patch") if isinstance(entry, Mapping) else None
    if not isinstance(inline, Scalar) or not isinstance(inline.value, str) or not inline.value.strip():
        # the operator writes the entries into a kustomization of its own
        # directory: a patch file of the repository is not there
        raise BuildError("a patch of the instance must be written inline (patch:)", entry.origin)
    assert isinstance(entry, Mapping)
    docs = kpatches.inline_docs(inline, BY)
    target = entry.mapping("target")
    selector = kpatches.Selector.from_node(target) if target is not None else None
    if kpatches.is_json_patch(docs):
        if selector is None:
            raise BuildError("a JSON 6902 patch needs a target", entry.origin)
        kpatches.json6902(made, docs[0], selector, entry.origin)
        return
    if selector is None:  # a patch naming its object: one of the controllers' when not one of these
        docs = [d for d in docs if not isinstance(d, Mapping) or _names_one_of(d, made)]
    kpatches.strategic(made, docs, selector, entry.origin, kpatches.PatchOptions.from_node(entry))


def _names_one_of(doc: Mapping, made: list[Resource]) -> bool:
    md = doc.mapping("metadata")
    name = md.value("name") if md is not None else None
    return any(r.kind == doc.value("kind") and r.name == name for r in made)


def _problem(message: str, origin: Origin) -> Problem:
    return Problem(f"{BY}: {message}; the operator cannot build the instance with it, and the sync is "
                   f"followed without it", "warning", origin, validator="flux-instance")
