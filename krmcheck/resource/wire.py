"""The function protocol's annotations (kyaml kioutil): the path, index and
id that items carry from one function to the next, legacy spellings too,
and their removal from what a build outputs. Every build strips them,
whether a plugin ran or not, so they live with the resource model that the
build and the function runtime (``krmcheck.fn.resource_list``, which
stamps them and which a build imports only when it runs a plugin) share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from krmcheck.tree.node import Mapping

if TYPE_CHECKING:
    from krmcheck.resource.resource import Resource

INTERNAL = "internal.config.kubernetes.io/"  # kustomize's and kyaml's internal annotations

PATH = INTERNAL + "path"
LEGACY_PATH = "config.kubernetes.io/path"
INDEX = INTERNAL + "index"
LEGACY_INDEX = "config.kubernetes.io/index"
FN_ID = INTERNAL + "id"
LEGACY_FN_ID = "config.k8s.io/id"
MIGRATION_ID = INTERNAL + "annotations-migration-resource-id"
SEQ_INDENT = INTERNAL + "seqindent"
PROTOCOL = (INDEX, LEGACY_INDEX, FN_ID, LEGACY_FN_ID, MIGRATION_ID, SEQ_INDENT)
# kept between functions (the next one sees them), never in the build's output
WIRE_ANNOTATIONS = (PATH, LEGACY_PATH) + PROTOCOL


def annotations_of(node: Mapping) -> Mapping | None:
    md = node.mapping("metadata")
    return md.mapping("annotations") if md is not None else None


def drop_if_empty(node: Mapping) -> None:
    """Remove an annotations map left empty."""
    md = node.mapping("metadata")
    ann = md.mapping("annotations") if md is not None else None
    if md is not None and ann is not None and not ann.items:
        del md.items["annotations"]


def strip_wire_annotations(resources: list[Resource]) -> None:
    """Remove what functions left for each other (paths), for the output."""
    for res in resources:
        ann = annotations_of(res.node)
        if ann is None or not any(k in ann.items for k in WIRE_ANNOTATIONS):
            continue
        for key in WIRE_ANNOTATIONS:
            ann.items.pop(key, None)
        drop_if_empty(res.node)
