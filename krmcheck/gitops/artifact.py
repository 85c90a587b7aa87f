"""Flux ExternalArtifacts made by an ArtifactGenerator (source.extensions.fluxcd.io)
from this repository: where a Kustomization's ``spec.path`` inside the
artifact lies in the repository.

A generator's artifact copies ``from: "@ALIAS/DIR/**"`` to ``to: "@artifact/DEST/"``;
a path under DEST is the same path under DIR of the source ALIAS names (a
GitRepository of this repository, or an OCIRepository whose artifact the
repository pushes from one of its directories). A
path that several copies fill (the artifact's top, with two copies) has no
single directory in the repository and is not followed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from krmcheck.gitops.objects import Objects
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, lookup

# (kind, namespace, source name, the asking file) -> the directory of this
# repository the source holds ("" for its top), None when it is not this repository
Ours = Callable[[str, str, str, str], "str | None"]


def path_in_source(res: Resource, artifact: str, namespace: str, objects: Objects, ours: Ours) -> str | None:
    wanted = _clean(_text(lookup(res.node, ["spec", "path"])))
    for generator in objects.of_kind("ArtifactGenerator", namespace, near=res.node.origin.path):
        aliases = _our_aliases(generator, namespace, lambda k, ns, n: ours(k, ns, n, res.node.origin.path))
        for entry in _items(lookup(generator, ["spec", "artifacts"])):
            if _text(entry.get("name")) == artifact:
                return _map(wanted, entry, aliases)
    return None


def _our_aliases(generator: Mapping, namespace: str,
                 ours: Callable[[str, str, str], str | None]) -> dict[str, str]:
    """Alias -> the directory of this repository its source holds."""
    found = {}
    for source in _items(lookup(generator, ["spec", "sources"])):
        ns = _text(source.get("namespace")) or namespace
        held = ours(_text(source.get("kind")), ns, _text(source.get("name")))
        if held is not None:
            found[_text(source.get("alias"))] = held
    return found


def _map(wanted: str, entry: Mapping, aliases: dict[str, str]) -> str | None:
    matches: list[tuple[int, str]] = []
    for copy in _items(entry.get("copy")):
        src, dst = _text(copy.get("from")), _text(copy.get("to"))
        alias, _, src_path = src.partition("/")
        if alias.lstrip("@") not in aliases or not dst.startswith("@artifact"):
            continue
        src_dir = _clean(posixpath.join(aliases[alias.lstrip("@")], src_path.removesuffix("**").removesuffix("*")))
        dst_dir = _clean(dst.removeprefix("@artifact"))
        if wanted == dst_dir or not dst_dir or wanted.startswith(dst_dir + "/"):
            rest = wanted[len(dst_dir):].lstrip("/")
            matches.append((len(dst_dir), posixpath.join(src_dir, rest) if rest else src_dir))
    if not matches:
        return None
    longest = max(n for n, _ in matches)
    chosen = {p for n, p in matches if n == longest}
    return chosen.pop() if len(chosen) == 1 else None


def _clean(path: str) -> str:
    p = posixpath.normpath("/" + path.strip()).strip("/")
    return "" if p == "." else p


def _text(node: Node | None) -> str:
    return node.value if isinstance(node, Scalar) and isinstance(node.value, str) else ""


def _items(node: Node | None) -> list[Mapping]:
    return [i for i in node.items if isinstance(i, Mapping)] if isinstance(node, Sequence) else []
