"""The plugin configs a ``generators:``, ``transformers:`` or ``validators:``
field lists.

Like kustomize (``configureExternalTransformers`` in kusttarget.go), an
entry whose text parses as YAML objects is an inline config (several may be
separated by ``---``); any other entry is a file or a kustomization
directory, accumulated like a ``resources:`` entry, whose resources are the
configs. All inline configs come first, in list order, then the configs of
the path entries, in list order (checked with kubectl). Two configs with the
same id are an error, as two resources would be.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from krmcheck.kustomize.accumulator import ResourceList
from krmcheck.kustomize.plugins import Config
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, walk
from krmcheck.tree.origin import Origin

# Accumulates one path entry (file or directory) as a ``resources:`` entry would.
Accumulate = Callable[[str, Origin], list[Resource]]


def load(field: str, entries: list[Node], kfile: Path, files: Files,
         accumulate: Accumulate) -> list[Config]:
    """The configs of one field of the kustomization file ``kfile``."""
    acc = ResourceList()
    listed_at: dict[int, Origin] = {}
    paths: list[Scalar] = []
    lines: list[str] | None = None
    for entry in entries:
        if not isinstance(entry, Scalar) or not isinstance(entry.value, str):
            raise BuildError(f"a {field} entry must be a string: a file, a directory or an "
                             f"inline config", entry.origin)
        docs = _inline_docs(entry, field)
        if docs is None:
            paths.append(entry)
            continue
        if lines is None:
            lines = files.read_text(kfile, entry.origin).splitlines()
        for doc in docs:
            _place(doc, entry, lines)
            _add(acc, listed_at, Resource(doc), entry.origin, field)
    for entry in paths:
        for res in accumulate(str(entry.value), entry.origin):
            _add(acc, listed_at, res, entry.origin, field)
    return [Config(r.node, listed_at[id(r)]) for r in acc]


def _add(acc: ResourceList, listed_at: dict[int, Origin], res: Resource, origin: Origin,
         field: str) -> None:
    if not res.kind:
        raise BuildError(f"a {field} config needs a kind", res.node.origin)
    acc.append(res, origin)
    listed_at[id(res)] = origin


def _inline_docs(entry: Scalar, field: str) -> list[Mapping] | None:
    """The objects written inline in ``entry``, or None when it is a path."""
    text = str(entry.value)
    try:
        docs = load_documents(text, entry.origin.path, by=field)
    except LoadError:
        return None
    if not docs or not all(isinstance(d, Mapping) for d in docs):
        return None
    out = [d for d in docs if isinstance(d, Mapping)]
    for doc in out:
        md = doc.mapping("metadata")
        if md is None or md.value("name") in (None, ""):
            # kustomize cannot read a nameless object as a config and then fails
            # to open the text as a file; say what is really missing
            raise BuildError(f"inline {field} config of kind '{doc.value('kind') or ''}' "
                             f"needs metadata.name", entry.origin)
    return out


def _place(doc: Node, entry: Scalar, lines: list[str]) -> None:
    """Give an inline config's nodes their positions in the kustomization
    file: a block scalar (``- |``) starts on the next line at its own indent;
    any other form of string puts every node at the entry."""
    o = entry.origin
    head = lines[o.line - 1] if 0 < o.line <= len(lines) else ""
    is_block = head[o.col - 1:o.col] in ("|", ">")
    indent = _block_indent(lines, o.line) if is_block else None
    for n in walk(doc):
        if indent is None:
            n.origin = Origin(o.path, o.line, o.col, n.origin.by)
        else:
            n.origin = Origin(o.path, o.line + n.origin.line, indent + n.origin.col, n.origin.by)


def _block_indent(lines: list[str], header_line: int) -> int:
    """Indentation of the first non-blank line after a block header (1-based line)."""
    for text in lines[header_line:]:
        if text.strip():
            return len(text) - len(text.lstrip(" "))
    return 0
