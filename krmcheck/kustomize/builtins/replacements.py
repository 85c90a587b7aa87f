"""replacements: copy a field of one resource into fields of others.

Mirrors kustomize v5.5's ReplacementTransformer, the last builtin
transformer of a kustomization, so it sees names with prefixes and
suffixes, namespaces, labels and new images (but not hash suffixes).

Field paths are kyaml's: ``.``-separated, ``\\.`` for a literal dot,
``[name=value]`` selects list items (a regular expression, unanchored, in
targets; exact in sources), a number indexes a list and ``*`` means every
item. A scalar target keeps its type (``replicas: 1`` stays an int); a
map or list target, and a created field, takes a copy of the source.

Provenance: a written value is set by the replacement entry, and the
source field's origin joins its trail, so a reader can follow where the
value came from.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from krmcheck.kustomize import regex
from krmcheck.kustomize.builtins.patches import Selector as LabelSelector
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files, join
from krmcheck.resource.resid import Gvk, ResId
from krmcheck.resource.resid import is_cluster_scoped
from krmcheck.resource.resource import Resource
from krmcheck.tree.fieldpath import is_kyaml_index, is_kyaml_selector, kyaml_selector, split_kyaml
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, Value
from krmcheck.tree.origin import Origin
from krmcheck.tree.scalars import format_float, resolve_plain
from krmcheck.kustomize.builtins.table import FieldEnv
from krmcheck.kustomize.kustomization import Kustomization

BY = "replacements"
DEFAULT_FIELD_PATH = "metadata.name"


# --- kyaml field paths (spelled as krmcheck.tree.fieldpath.split_kyaml reads them) ---

def lookup(node: Node, parts: list[str]) -> Node | None:
    """kyaml's PathGetter (a source's or a var's field): exact ``[k=v]``
    matches, numbers and ``-`` (the last item) index lists."""
    for part in (p.strip() for p in parts):
        if not part:
            continue
        if part == "*":
            raise ValueError("wildcard is not supported in PathGetter")
        if is_kyaml_index(part) or part == "-":
            if not isinstance(node, Sequence) or not node.items:
                return None
            idx = -1 if part == "-" else int(part)
            if idx >= len(node.items):
                return None
            node = node.items[idx]
        elif is_kyaml_selector(part):
            field, value = kyaml_selector(part)
            if not isinstance(node, Sequence):
                return None
            found = [i for i in node.items if _text(_select_key(i, field)) == value
                     and _select_key(i, field) is not None]
            if not found:
                return None
            node = found[0]
        else:
            if not isinstance(node, Mapping):
                return None
            child = node.items.get(part)
            if child is None:
                return None
            node = child
    return node


def _select_key(item: Node, field: str) -> Node | None:
    if field == "":
        return item if isinstance(item, Scalar) else None
    return item.items.get(field) if isinstance(item, Mapping) else None


def _text(node: Node | None) -> str:
    """A node's value as kyaml reads it (``YNode().Value``): "" for maps and lists."""
    if not isinstance(node, Scalar):
        return ""
    v = node.value
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, float):
        return format_float(v)
    return str(v)


# --- typed scalar writes ----------------------------------------------------------

def _tag(v: Value) -> str:
    if isinstance(v, bool):
        return "!!bool"
    if isinstance(v, int):
        return "!!int"
    if isinstance(v, float):
        return "!!float"
    if v is None:
        return "!!null"
    return "!!str"


def typed(text: str, like: Value) -> Value:
    """``text`` under the type of ``like``: kustomize writes only a scalar's
    text and keeps its tag, and decoding fails when they disagree."""
    if isinstance(like, str):
        return text
    try:
        v = resolve_plain(text)
    except ValueError:
        v = text
    ok = (_tag(v) == _tag(like) or (isinstance(like, float) and _tag(v) == "!!int"))
    if not ok:
        raise ValueError(f"yaml: cannot decode {_tag(v)} `{text}` as a {_tag(like)}")
    return v


def created(text: str) -> Value:
    """A scalar made by ``create: true`` has no tag: it reads as plain YAML."""
    try:
        return resolve_plain(text)
    except ValueError:
        return text


def write_scalar(node: Scalar, value: Value, writer: Origin, source: Origin | None) -> None:
    """Set ``node``; the old origin and then ``source`` join the trail."""
    node.set(value, writer)
    if source is not None and source != writer:
        node.trail = node.trail + (source,)


# --- the configuration ------------------------------------------------------------

class ResSelector(NamedTuple):
    """A ResId with empty fields as wildcards, plus label/annotation selectors."""

    group: str
    version: str
    kind: str
    name: str
    namespace: str
    label_selector: str = ""
    annotation_selector: str = ""

    @staticmethod
    def from_node(node: Node | None) -> "ResSelector":
        if not isinstance(node, Mapping):
            return ResSelector("", "", "", "", "")
        def text(key: str) -> str:
            n = node.items.get(key)  # type: ignore[union-attr]
            return n.as_string() if isinstance(n, Scalar) and n.value is not None else ""
        return ResSelector(text("group"), text("version"), text("kind"), text("name"),
                           text("namespace"), text("labelSelector"), text("annotationSelector"))

    @property
    def has_id(self) -> bool:
        return any((self.group, self.version, self.kind, self.name, self.namespace))

    def selects_id(self, rid: ResId) -> bool:
        gvk = rid.gvk
        return ((not self.name or self.name == rid.name)
                and (not self.namespace or _effective_ns(self.namespace, Gvk(self.group, self.version, self.kind))
                     == _effective_ns(rid.namespace, gvk))
                and (not self.group or self.group == gvk.group)
                and (not self.version or self.version == gvk.version)
                and (not self.kind or self.kind == gvk.kind))

    def selects_meta(self, res: Resource) -> bool:
        if not self.label_selector and not self.annotation_selector:
            return True
        return LabelSelector(label_selector=self.label_selector or None,
                             annotation_selector=self.annotation_selector or None).matches(res)

    def __str__(self) -> str:
        gvk = ".".join((self.kind or "[noKind]", self.version or "[noVer]", self.group or "[noGrp]"))
        return f"{gvk}/{self.name or '[noName]'}.{self.namespace or '[noNs]'}"


def _effective_ns(namespace: str, gvk: Gvk) -> str:
    if is_cluster_scoped(gvk):
        return "_non_namespaceable_"
    return namespace or "default"


class Options(NamedTuple):
    delimiter: str = ""
    position: int = 0
    create: bool = False

    @staticmethod
    def from_node(node: Node | None) -> "Options":
        if not isinstance(node, Mapping):
            return Options()
        index = node.value("index", 0)
        delimiter = node.value("delimiter", "")
        return Options(str(delimiter or ""), index if isinstance(index, int) else 0,
                       node.value("create") is True)


class Target(NamedTuple):
    select: ResSelector
    rejects: tuple[ResSelector, ...]
    field_paths: tuple[str, ...]
    options: Options


class Replacement(NamedTuple):
    source: ResSelector
    field_path: str
    options: Options
    targets: tuple[Target, ...]
    origin: Origin  # the entry: what writes the targets


def _parse(entry: Mapping, origin: Origin) -> Replacement:
    src, targets = entry.items.get("source"), entry.items.get("targets")
    if not isinstance(src, Mapping) or not isinstance(targets, Sequence):
        raise BuildError("replacements must specify a source and at least one target", origin)
    fp = src.value("fieldPath")
    return Replacement(ResSelector.from_node(src), str(fp) if fp else "",
                       Options.from_node(src.items.get("options")),
                       tuple(_parse_target(t) for t in targets.items), origin)


def _parse_target(node: Node) -> Target:
    if not isinstance(node, Mapping) or not isinstance(node.items.get("select"), Mapping):
        raise BuildError("target must specify resources to select", node.origin)
    rejects = node.items.get("reject")
    paths = node.items.get("fieldPaths")
    fps = tuple(_text(p) for p in paths.items) if isinstance(paths, Sequence) else ()
    return Target(ResSelector.from_node(node.items["select"]),
                  tuple(ResSelector.from_node(r) for r in rejects.items) if isinstance(rejects, Sequence) else (),
                  fps or (DEFAULT_FIELD_PATH,), Options.from_node(node.items.get("options")))


class Source(NamedTuple):
    """Where a kustomization's ``path:`` entries are read from."""

    directory: Path
    files: Files
    restrictor: str


def load(entries: list[Node], src: Source) -> list[Replacement]:
    """Every replacement of a kustomization, inline or from ``path:`` files."""
    out: list[Replacement] = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise BuildError("a replacements entry must be a map", entry.origin)
        path = entry.items.get("path")
        if path is None or (isinstance(path, Scalar) and path.value in (None, "")):
            out.append(_parse(entry, entry.origin._replace(by=BY)))
            continue
        targets = entry.items.get("targets")
        if "source" in entry.items or (isinstance(targets, Sequence) and targets.items):
            raise BuildError("cannot specify both path and inline replacement", entry.origin)
        out.extend(_load_file(_text(path), path.origin, src))
    return out


def _load_file(rel: str, origin: Origin, src: Source) -> list[Replacement]:
    file = join(src.directory, rel)
    text = src.files.read_text(file, origin, within=(src.restrictor, src.directory))
    try:
        docs = load_documents(text, src.files.display(file), by=BY)
    except LoadError as e:
        raise BuildError(e.message, Origin(e.path, e.line, e.col)) from None
    doc = docs[0] if docs else None
    if isinstance(doc, Sequence):
        items = doc.items
    elif isinstance(doc, Mapping):
        items = [doc]
    else:
        kind = "string" if isinstance(doc, Scalar) else "nothing"
        raise BuildError(f"unsupported replacement type encountered within replacement path {rel}: "
                         f"{kind}", origin)
    out = []
    for item in items:
        if not isinstance(item, Mapping):
            raise BuildError("a replacement must be a map", item.origin)
        out.append(_parse(item, item.origin._replace(by=BY)))
    return out


# --- running ----------------------------------------------------------------------

def run(resources: list[Resource], entries: list[Node], src: Source) -> None:
    """Apply a kustomization's ``replacements:`` in order."""
    for r in load(entries, src):
        try:
            apply(resources, r)
        except ValueError as e:
            raise BuildError(str(e), r.origin) from None


def apply(resources: list[Resource], r: Replacement) -> None:
    value = _source_value(resources, r)
    for target in r.targets:
        for res in resources:
            if _is_target(res, target):
                for fp in target.field_paths:
                    _write_target(res, fp, value, target.options, r.origin)
                _stringify_annotations(res)


def _stringify_annotations(res: Resource) -> None:
    """kustomize holds a resource's own annotations as strings, whatever was written."""
    for node in (res.annotations() or Mapping()).items.values():
        if isinstance(node, Scalar) and not isinstance(node.value, str):
            node.value, node.text = node.as_string() if node.value is not None else "", None


def _source_value(resources: list[Resource], r: Replacement) -> Node:
    selector = str(r.source) + (f":{r.field_path}" if r.field_path else "")
    matches = [res for res in resources if any(r.source.selects_id(i) for i in res.all_ids())]
    if len(matches) > 1:
        raise ValueError(f"multiple matches for selector {selector}")
    if not matches:
        raise ValueError(f"nothing selected by {selector}")
    fp = r.field_path or DEFAULT_FIELD_PATH
    node = lookup(matches[0].node, split_kyaml(fp))
    if _is_empty(node):
        raise ValueError(f"fieldPath `{fp}` is missing for replacement source {r.source}")
    assert node is not None  # _is_empty is true for None
    return _refined(node, r.options)


def _is_empty(node: Node | None) -> bool:
    """kyaml's IsNilOrEmpty: missing, null, ``{}`` or ``[]`` (but not "")."""
    if isinstance(node, Scalar):
        return node.value is None
    if isinstance(node, (Mapping, Sequence)):
        return not node.items
    return True


def _refined(node: Node, options: Options) -> Node:
    if not options.delimiter:
        return node
    if not isinstance(node, Scalar):
        raise ValueError("delimiter option can only be used with scalar nodes")
    parts = _text(node).split(options.delimiter)
    if not 0 <= options.position < len(parts):
        raise ValueError(f"options.index {options.position} is out of bounds for value {_text(node)}")
    return Scalar(typed(parts[options.position], node.value), node.origin, node.trail)


def _is_target(res: Resource, t: Target) -> bool:
    if not t.select.selects_meta(res):
        return False
    if any((rj.label_selector or rj.annotation_selector) and rj.selects_meta(res) for rj in t.rejects):
        return False
    ids = res.all_ids()
    if any(rj.has_id and any(rj.selects_id(i) for i in ids) for rj in t.rejects):
        return False
    return any(t.select.selects_id(i) for i in ids)


# A slot is where a matched node lives: its container and key (or index).
Slot = tuple[Node, "str | int"]


def _write_target(res: Resource, fp: str, value: Node, options: Options, writer: Origin) -> None:
    create = options.create
    try:
        slots = _match(res.node, split_kyaml(fp), create, value, writer)
    except ValueError as e:
        raise ValueError(f"{_retrieval_error(fp, create)}: {e}") from None
    if not slots:
        raise ValueError(_retrieval_error(fp, create))
    for container, key in slots:
        _set(container, key, value, options, writer)


def _retrieval_error(fp: str, create: bool) -> str:
    what = "find or create" if create else "find"
    return f'unable to {what} field "{fp}" in replacement target'


def _get(container: Node, key: str | int) -> Node:
    return container.items[key]  # type: ignore[attr-defined,index]


def _put(container: Node, key: str | int, node: Node) -> None:
    container.items[key] = node  # type: ignore[attr-defined,index]


def _set(container: Node, key: str | int, value: Node, options: Options, writer: Origin) -> None:
    target = _get(container, key)
    if options.delimiter:
        if not isinstance(target, Scalar):
            raise ValueError("delimiter option can only be used with scalar nodes")
        parts = _text(target).split(options.delimiter) if not _is_new(target) else [""]
        v = _text(value)
        if options.position < 0:
            parts.insert(0, v)
        elif options.position >= len(parts):
            parts.append(v)
        else:
            parts[options.position] = v
        value = Scalar(options.delimiter.join(parts), value.origin, value.trail)
    if _is_new(target):
        _put(container, key, Scalar(created(_text(value)), writer, (value.origin,)))
        return
    if isinstance(target, Scalar):
        write_scalar(target, typed(_text(value), target.value), writer, value.origin)
        return
    copy = value.copy()
    for n in _walk(copy):
        n.rewrite(writer)
    if target.origin != writer:  # not a node just made by create: true
        copy.trail = target.trail + (target.origin,) + copy.trail
    _put(container, key, copy)


def _walk(node: Node) -> list[Node]:
    out = [node]
    for child in (node.items.values() if isinstance(node, Mapping)
                  else node.items if isinstance(node, Sequence) else ()):
        out.extend(_walk(child))
    return out


class _New(Scalar):
    """A leaf made by ``create: true``, not yet given its value."""

    __slots__ = ()


def _is_new(node: Node) -> bool:
    return isinstance(node, _New)


def _make(next_part: str, value: Node, writer: Origin) -> Node:
    """An intermediate or leaf node made by ``create: true`` (kyaml's getPathPartKind)."""
    if is_kyaml_selector(next_part) or is_kyaml_index(next_part):
        return Sequence([], writer)
    if next_part == "":
        if isinstance(value, Scalar):
            return _New(None, writer)
        return Mapping({}, writer) if isinstance(value, Mapping) else Sequence([], writer)
    return Mapping({}, writer)


def _match(node: Node, parts: list[str], create: bool, value: Node, writer: Origin,
           slot: Slot | None = None) -> list[Slot]:
    """kyaml's PathMatcher: every slot the path reaches (creating on the way)."""
    if not parts:
        return [slot] if slot is not None else []
    part, rest = parts[0], parts[1:]
    nxt = rest[0] if rest else ""
    if is_kyaml_index(part):
        seq = _need_seq(node)
        idx = int(part)
        if idx == len(seq.items) and create:
            seq.items.append(_make(nxt, value, writer))
        if idx >= len(seq.items):
            raise ValueError(f"index {idx} specified but only {len(seq.items)} elements found")
        return _match(seq.items[idx], rest, create, value, writer, (seq, idx))
    if is_kyaml_selector(part):
        return _match_items(_need_seq(node), part, rest, create, value, writer)
    if part == "*":
        seq = _need_seq(node)
        out: list[Slot] = []
        for i, item in enumerate(seq.items):
            out.extend(_match(item, rest, create, value, writer, (seq, i)))
        return out
    if not isinstance(node, Mapping):
        raise ValueError(f"wrong node kind: expected MappingNode but got {_kind(node)}")
    child = node.items.get(part)
    if child is None:
        if not create:
            return []
        child = _make(nxt, value, writer)
        node.items[part] = child
    return _match(child, rest, create, value, writer, (node, part))


def _match_items(seq: Sequence, part: str, rest: list[str], create: bool, value: Node,
                 writer: Origin) -> list[Slot]:
    field, pattern = kyaml_selector(part)
    pattern_regex = regex.compile_go(pattern)
    out: list[Slot] = []
    found = False
    for i, item in enumerate(seq.items):
        key = _select_key(item, field)
        if key is None or (isinstance(key, Scalar) and key.value is None):
            continue
        if not pattern_regex.search(_text(key).strip()):
            continue
        found = True
        if field == "":  # kyaml stops at a matched scalar item, ignoring the rest of the path
            out.append((seq, i))
        else:
            out.extend(_match(item, rest, create, value, writer, (seq, i)))
    if found or not create:
        return out
    new: Node = Scalar(created(pattern), writer) if field == "" else \
        Mapping({field: Scalar(created(pattern), writer)}, writer)
    seq.items.append(new)
    return _match_items(seq, part, rest, create, value, writer)


def _need_seq(node: Node) -> Sequence:
    if not isinstance(node, Sequence):
        raise ValueError(f"wrong node kind: expected SequenceNode but got {_kind(node)}")
    return node


def _kind(node: Node) -> str:
    return "MappingNode" if isinstance(node, Mapping) else \
        "SequenceNode" if isinstance(node, Sequence) else "ScalarNode"


# --- the kustomization's field (builtins/table.py) ---------------------------

def from_kustomization(k: Kustomization, resources: list[Resource], env: FieldEnv) -> None:
    """``replacements:`` entries, inline or in files."""
    listed = k.seq("replacements")
    if listed:
        run(resources, listed, Source(env.directory, env.files, env.load_restrictor))
