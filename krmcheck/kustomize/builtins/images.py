"""images: change the name, tag or digest of container images.

Like kustomize, an entry rewrites the ``image`` of every item of any
``containers`` or ``initContainers`` list, wherever it sits in the object,
and also every field of the images field-spec table.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, NamedTuple

from krmcheck.kustomize import fieldspec
from krmcheck.resource.image import split
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Origin
from krmcheck.kustomize.builtins.table import FieldEnv
from krmcheck.kustomize.kustomization import Kustomization

if TYPE_CHECKING:  # the image_tag validator reads image references with split() alone
    from krmcheck.kustomize.fieldspec import FieldSpec
    from krmcheck.kustomize.transformerconfig import TransformerConfig

_TAG_CHARS = r"[a-zA-Z0-9_.{}-]*"
CONTAINER_LISTS = ("containers", "initContainers")


class ImageEntry(NamedTuple):
    name: str
    new_name: str
    new_tag: str
    digest: str
    origin: Origin  # the line that decides the new value

    @staticmethod
    def from_node(entry: Mapping) -> "ImageEntry":
        def text(key: str) -> str:
            n = entry.items.get(key)
            return n.as_string() if isinstance(n, Scalar) and n.value is not None else ""

        origin = entry.origin
        for key in ("newName", "newTag", "digest"):
            n = entry.items.get(key)
            if n is not None:
                origin = n.origin
        return ImageEntry(text("name"), text("newName"), text("newTag"), text("digest"), origin)

    def matches(self, ref: str) -> bool:
        pattern = _pattern(self.name)
        return pattern is not None and pattern.match(ref) is not None

    def rewrite(self, ref: str) -> str:
        name, tag, digest = split(ref)
        if self.new_name:
            name = self.new_name
        if self.new_tag and self.digest:
            tag, digest = self.new_tag, self.digest
        elif self.new_tag:
            tag, digest = self.new_tag, ""
        elif self.digest:
            tag, digest = "", self.digest
        return name + (f":{tag}" if tag else "") + (f"@{digest}" if digest else "")


def _fix(entry: ImageEntry, node: Node | None) -> None:
    if isinstance(node, Scalar) and isinstance(node.value, str) and entry.matches(node.value):
        new = entry.rewrite(node.value)
        if new != node.value:
            node.set(new, entry.origin)
        else:
            node.rewrite(entry.origin)


def _walk_containers(entry: ImageEntry, node: Node) -> None:
    if isinstance(node, Mapping):
        for key, child in node.items.items():
            if key in CONTAINER_LISTS and isinstance(child, Sequence):
                for item in child.items:
                    if isinstance(item, Mapping):
                        _fix(entry, item.items.get("image"))
            _walk_containers(entry, child)
    elif isinstance(node, Sequence):
        for child in node.items:
            _walk_containers(entry, child)


def _names_image(entry: ImageEntry, node: Node) -> bool:
    """Whether a container under ``node`` has an image ``entry`` matches; read
    without copying (a base shared with other overlays stays shared when its
    containers, or a CRD's schema, hold nothing to change)."""
    if isinstance(node, Mapping):
        for key, child in node.view().items():
            if key in CONTAINER_LISTS:
                # a mapping there too: a field spec's walk would enter it
                for item in child.view() if isinstance(child, Sequence) else [child]:
                    image = item.view().get("image") if isinstance(item, Mapping) else None
                    if isinstance(image, Scalar) and isinstance(image.value, str) and entry.matches(image.value):
                        return True
            if _names_image(entry, child):
                return True
    elif isinstance(node, Sequence):
        return any(_names_image(entry, child) for child in node.view())
    return False


@functools.lru_cache(maxsize=256)
def _pattern(name: str) -> re.Pattern[str] | None:
    """The pattern kustomize matches an image against: the entry's name is
    a regular expression, as written (``ngin.`` matches ``nginx``;
    ``$(registry)/$(controller)`` compiles and matches nothing), followed by
    an optional tag and digest; None where it does not compile."""
    if _NOT_RE2.search(name):
        return None
    try:
        return re.compile(f"^{name}(:{_TAG_CHARS})?(@sha256:{_TAG_CHARS})?$")
    except (re.error, RecursionError, OverflowError):
        return None


# What Python's expressions accept and Go's (RE2) refuse: a possessive or
# nested repetition (``c++``), lookaround, an atomic or conditional group,
# a back-reference.
_NOT_RE2 = re.compile(r"(?<!\\)(?:[*+?}]\+|\(\?(?:[=!>(]|<[=!]|P=)|\\[1-9])")


def apply(resources: list[Resource], entry_node: Mapping,
          config: TransformerConfig | None = None) -> None:
    entry = ImageEntry.from_node(entry_node)
    # a name that is no pattern (``[nginx``) makes kustomize crash: an error here
    if _pattern(entry.name) is None:
        name_node = entry_node.items.get("name")
        raise BuildError(f"images: '{entry.name}' is not a valid image name",
                         name_node.origin if name_node is not None else entry_node.origin)
    from krmcheck.kustomize.transformerconfig import default_config

    specs = (config or default_config()).images
    for res in resources:
        named = _names_image(entry, res.node)
        if named:
            _walk_containers(entry, res.node)
        for spec in specs:
            # kustomize walks every spec: a null container list there becomes []
            if named or not _in_container_list(spec) or fieldspec.meets_null_list(res, spec):
                fieldspec.visit(res, spec, lambda parent, key: _fix(entry, parent.items.get(key)))


def _in_container_list(spec: FieldSpec) -> bool:
    """A spec for a container's image (all the defaults are): ``_names_image``
    has already looked there."""
    path = spec.path
    return len(path) >= 2 and path[-1] == "image" and path[-2].removesuffix("[]") in CONTAINER_LISTS


# --- the kustomization's fields (builtins/table.py) --------------------------

def from_kustomization(k: Kustomization, resources: list[Resource], env: FieldEnv) -> None:
    """``images:`` (and the older ``imageTags:``) entries."""
    for entry in k.seq("images") + k.seq("imageTags"):
        if isinstance(entry, Mapping):
            apply(resources, entry, env.tables)
