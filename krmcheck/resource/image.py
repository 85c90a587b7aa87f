"""Container image references, as kustomize's images transformer and the
image-tag validator both read them."""

from __future__ import annotations


def split(ref: str) -> tuple[str, str, str]:
    """An image reference as (name, tag, digest); tag and digest may be ""."""
    name, digest = ref, ""
    if "@" in ref:
        name, _, digest = ref.partition("@")
    tag = ""
    colon = name.rfind(":")
    if colon > name.rfind("/"):
        name, tag = name[:colon], name[colon + 1:]
    return name, tag, digest
