"""patches, patchesStrategicMerge and patchesJson6902: find targets, apply."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from krmcheck.kustomize import regex
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files, join
from krmcheck.resource.resid import Gvk, ResId, effective_namespace
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Origin
from krmcheck.kustomize.builtins.table import FieldEnv
from krmcheck.kustomize.kustomization import Kustomization


@dataclass(frozen=True)
class PatchSource:
    """Where a patch's text lives, to load it with the right origins."""

    kdir: Path
    files: Files
    restrictor: str


@dataclass(frozen=True)
class Selector:
    group: str | None = None
    version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    label_selector: str | None = None
    annotation_selector: str | None = None

    @staticmethod
    def from_node(node: Mapping) -> "Selector":
        def text(key: str) -> str | None:
            n = node.items.get(key)
            return n.as_string() if isinstance(n, Scalar) and n.value is not None else None

        for key in ("kind", "name", "namespace"):  # the fields kustomize matches as patterns
            value, n = text(key), node.items.get(key)
            if value is not None and n is not None:
                try:
                    regex.compile_go(value)
                except regex.RegexError as e:
                    raise BuildError(f"target {key}: {e}", n.origin) from None
        return Selector(text("group"), text("version"), text("kind"), text("name"),
                        text("namespace"), text("labelSelector"), text("annotationSelector"))

    def matches(self, res: Resource) -> bool:
        gvk = res.gvk
        if self.group is not None and self.group != gvk.group:
            return False
        if self.version is not None and self.version != gvk.version:
            return False
        if self.kind is not None and not _full(self.kind, gvk.kind):
            return False
        if self.name is not None and not any(_full(self.name, i.name) for i in (res.id(), res.orig_id())):
            return False
        # a resource without a namespace is in "default" for selection
        if self.namespace is not None and not (_full(self.namespace, res.namespace)
                                               or (not res.namespace and _full(self.namespace, "default"))):
            return False
        if self.label_selector and not _selects(self.label_selector, res.labels()):
            return False
        if self.annotation_selector and not _selects(self.annotation_selector, res.annotations()):
            return False
        return True


def _full(pattern: str, value: str) -> bool:
    return regex.full_match(pattern, value)


def _selects(selector: str, labels: Mapping | None) -> bool:
    """Kubernetes label-selector syntax: a=b, a!=b, a, !a, a in (x,y), a notin (x)."""
    have = {k: v.as_string() for k, v in (labels.items.items() if labels else []) if isinstance(v, Scalar)}
    for term in _split_terms(selector):
        term = term.strip()
        m = re.fullmatch(r"([^\s!=]+)\s+(in|notin)\s+\((.*)\)", term)
        if m:
            values = {v.strip() for v in m.group(3).split(",")}
            inside = m.group(1) in have and have[m.group(1)] in values
            if inside != (m.group(2) == "in"):
                return False
        elif "!=" in term:
            k, v = (s.strip() for s in term.split("!=", 1))
            if have.get(k) == v:
                return False
        elif "=" in term:
            k, v = (s.strip() for s in term.replace("==", "=").split("=", 1))
            if have.get(k) != v:
                return False
        elif term.startswith("!"):
            if term[1:] in have:
                return False
        elif term and term not in have:
            return False
    return True


def _split_terms(selector: str) -> list[str]:
    terms, depth, cur = [], 0, ""
    for c in selector:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += c
    terms.append(cur)
    return terms


# --- loading patch text -------------------------------------------------------

def inline_docs(node: Scalar, by: str) -> list[Node]:
    """Load a patch written inline; origins point into the kustomization file."""
    text = node.value if isinstance(node.value, str) else ""
    o = node.origin
    try:
        docs = load_documents(text, o.path, by)
    except LoadError as e:
        raise BuildError(f"patch: {e.message}", Origin(o.path, o.line + e.line, o.col + e.col + 1)) from None
    for doc in docs:
        _shift(doc, o)
    return docs


def _shift(doc: Node, base: Origin) -> None:
    from krmcheck.tree.node import walk

    for n in walk(doc):
        n.origin = Origin(base.path, base.line + n.origin.line, base.col + 1 + n.origin.col, n.origin.by)


def _file_docs(path_node: Scalar, src: PatchSource, by: str, comments: bool = False) -> list[Node]:
    rel = path_node.as_string()
    path = join(src.kdir, rel)
    text = src.files.read_text(path, path_node.origin, within=(src.restrictor, src.kdir))
    try:
        docs = load_documents(text, src.files.display(path), by)
    except LoadError as e:
        raise BuildError(e.message, Origin(e.path, e.line, e.col)) from None
    # kustomize skips a blank patch file, but one holding only comments
    # parses as both kinds of patch and is refused (``comments``: not among
    # a strategic-merge transformer's paths, which are only parsed as such).
    if not docs and text.strip() and not comments:
        raise BuildError(f"patch file '{rel}' holds no patch, only comments", path_node.origin)
    return docs


def load_patch(entry: Node, src: PatchSource, by: str = "patch", comments: bool = False) -> list[Node]:
    """The documents of a patch entry: an inline string, a ``patch:`` field or a ``path:``."""
    if isinstance(entry, Scalar):
        text = entry.as_string()
        if "\n" in text or text.lstrip().startswith(("{", "[")) or ":" in text and not _looks_like_path(text):
            return inline_docs(entry, by)
        return _file_docs(entry, src, by, comments)
    if isinstance(entry, Mapping):
        inline = entry.items.get("patch")
        path = entry.items.get("path")
        if isinstance(inline, Scalar) and inline.value:
            if isinstance(path, Scalar) and path.value:
                raise BuildError("patch and path can't be set at the same time", entry.origin)
            return inline_docs(inline, by)
        if isinstance(path, Scalar) and path.value:
            return _file_docs(path, src, by)
        raise BuildError("patch entry needs either a path or an inline patch", entry.origin)
    raise BuildError("a patch must be a file name or a map", entry.origin)


def _looks_like_path(text: str) -> bool:
    return bool(re.fullmatch(r"[\w./-]+\.(ya?ml|json)", text.strip()))


# --- applying -----------------------------------------------------------------

def _patch_id(doc: Mapping) -> tuple[Gvk, str, str]:
    md = doc.mapping("metadata")
    name = md.value("name") if md else None
    ns = md.value("namespace") if md else None
    api = doc.value("apiVersion")
    return (Gvk.from_api_version(api if isinstance(api, str) else "", str(doc.value("kind") or "")),
            "" if name is None else str(name), "" if ns is None else str(ns))


def _targets_by_id(resources: list[Resource], doc: Mapping) -> list[Resource]:
    """The resources a target-less patch names, by any id they had: the same
    group, version, kind and name, in the same effective namespace (a patch
    naming no namespace names "default"; a kind known to be cluster-scoped
    has none, whatever the patch says), as kustomize's ``GetById``."""
    gvk, name, ns = _patch_id(doc)
    wanted = ResId(gvk, name, ns)
    where = effective_namespace(wanted)
    return [res for res in resources
            if any(rid.gvk == gvk and rid.name == name and effective_namespace(rid) == where
                   for rid in res.all_ids())]


@dataclass(frozen=True)
class PatchOptions:
    allow_name_change: bool = False
    allow_kind_change: bool = False

    @staticmethod
    def from_node(entry: Mapping | None) -> "PatchOptions":
        opts = entry.mapping("options") if entry is not None else None
        if opts is None:
            return PatchOptions()
        return PatchOptions(opts.value("allowNameChange") is True, opts.value("allowKindChange") is True)


def _apply_smp(res: Resource, doc: Mapping, resources: list[Resource], options: PatchOptions) -> None:
    """Merge one patch document into one resource. The patch's own name and
    kind only select the target; they change it only when the options allow."""
    patch = doc.copy()
    md = patch.mapping("metadata")
    if md is not None and not options.allow_name_change:
        md.items.pop("name", None)
        md.items.pop("namespace", None)
    if not options.allow_kind_change:
        patch.items.pop("apiVersion", None)
        patch.items.pop("kind", None)
    if options.allow_name_change or options.allow_kind_change:
        res.remember_id()
    from krmcheck.kustomize.strategic import strategic_merge  # as JSON patches: when one is applied

    result = strategic_merge(res.node, patch, res.gvk)
    if result is None:
        resources.remove(res)
    else:
        res.node = result


def _listed(docs: list[Node]) -> list[Node]:
    """The patch documents, a ``kind: ...List`` with ``items`` expanded to
    its items, as kustomize reads a patch file (and a resource file)."""
    out: list[Node] = []
    for doc in docs:
        kind = doc.value("kind") if isinstance(doc, Mapping) else None
        listed = doc.items.get("items") if isinstance(doc, Mapping) else None
        if isinstance(kind, str) and kind.endswith("List") and isinstance(listed, Sequence):
            out.extend(_listed(list(listed.items)))
        else:
            out.append(doc)
    return out


def _empty(doc: Node) -> bool:
    """A document kustomize drops from a patch file: null (``---`` with
    nothing after it, or only a comment), ``{}`` or ``[]``."""
    return (isinstance(doc, Scalar) and doc.value is None) or \
        (isinstance(doc, (Mapping, Sequence)) and not doc.items)


def strategic(resources: list[Resource], docs: list[Node], selector: Selector | None,
              where: Origin, options: PatchOptions = PatchOptions()) -> None:
    listed = [doc for doc in _listed(docs) if not _empty(doc)]
    if docs and not listed:
        raise BuildError("patch appears to be empty: it holds only empty documents", docs[0].origin)
    for doc in listed:
        if not isinstance(doc, Mapping):
            raise BuildError("a strategic-merge patch must be a map", doc.origin)
        if selector is None:
            targets = _targets_by_id(resources, doc)
            if not targets:
                gvk, name, ns = _patch_id(doc)
                raise BuildError(f"no resource matches strategic merge patch "
                                 f"\"{gvk.kind} {name}\"" + (f" in namespace {ns}" if ns else ""),
                                 doc.origin)
            if len(targets) > 1:
                gvk, name, _ = _patch_id(doc)
                raise BuildError(f"multiple resources match the strategic merge patch for "
                                 f"{gvk.kind} {name}; failed to find a unique target", doc.origin)
            _apply_smp(targets[0], doc, resources, options)
        else:
            for res in [r for r in resources if selector.matches(r)]:
                _apply_smp(res, doc, resources, options)


def json6902(resources: list[Resource], ops: Node, selector: Selector, where: Origin) -> None:
    from krmcheck.kustomize.jsonpatch import apply_json_patch

    for res in [r for r in resources if selector.matches(r)]:
        # kustomize records the id before every JSON patch: the op may rename.
        res.remember_id()
        added = _build_annotations(res, where)
        res.node = apply_json_patch(res.node, ops, where)
        md = res.node.mapping("metadata")
        ann = md.mapping("annotations") if md is not None else None
        if added and ann is not None and not ann.items:
            del md.items["annotations"]  # type: ignore[union-attr]


def _build_annotations(res: Resource, where: Origin) -> bool:
    """While kustomize builds, every resource carries internal annotations,
    so an op may add to ``/metadata/annotations/...`` of a resource that has
    none: give it the (empty) map for the op; True when one was added."""
    md = res.node.mapping("metadata")
    if md is None or "annotations" in md.items:
        return False
    md.items["annotations"] = Mapping({}, where)
    return True


def is_json_patch(docs: list[Node]) -> bool:
    return len(docs) == 1 and isinstance(docs[0], Sequence)


# --- the kustomization's fields (builtins/table.py) --------------------------

def _source(env: FieldEnv) -> PatchSource:
    return PatchSource(env.directory, env.files, env.load_restrictor)


def strategic_merge_field(k: Kustomization, resources: list[Resource], env: FieldEnv) -> None:
    """``patchesStrategicMerge:`` (files or inline), one
    PatchStrategicMergeTransformer for all: every entry is loaded before any
    is applied, and one that holds nothing (blank, only comments, ``{}``)
    is skipped; unlike ``patches:``, they are refused when none holds a
    patch."""
    loaded = [(entry, load_patch(entry, _source(env), comments=True)) for entry in k.seq("patchesStrategicMerge")]
    if loaded and not any(holds_patch(docs) for _, docs in loaded):
        names = [f"'{e.as_string()}'" if isinstance(e, Scalar) else "entry" for e, _ in loaded]
        held = f"{names[0]} holds" if len(names) == 1 else f"none of {', '.join(names)} holds"
        raise BuildError(f"patchesStrategicMerge: {held} a patch" if len(names) > 1
                         else f"patchesStrategicMerge: {held} no patch", loaded[0][0].origin)
    for entry, docs in loaded:
        if holds_patch(docs):
            strategic(resources, docs, None, entry.origin)


def holds_patch(docs: list[Node]) -> bool:
    return any(not _empty(doc) for doc in _listed(docs))


def patches_field(k: Kustomization, resources: list[Resource], env: FieldEnv) -> None:
    """``patches:`` entries: a strategic-merge or a JSON 6902 patch, with an
    optional target."""
    for entry in k.seq("patches"):
        if not isinstance(entry, Mapping):
            raise BuildError("a patches entry must be a map with path or patch", entry.origin)
        docs = load_patch(entry, _source(env))
        tnode = entry.mapping("target")
        selector = Selector.from_node(tnode) if tnode is not None else None
        if is_json_patch(docs):
            if selector is None:
                raise BuildError("a JSON 6902 patch needs a target", entry.origin)
            json6902(resources, docs[0], selector, entry.origin)
        else:
            strategic(resources, docs, selector, entry.origin, PatchOptions.from_node(entry))


def json6902_field(k: Kustomization, resources: list[Resource], env: FieldEnv) -> None:
    """``patchesJson6902:`` entries, each with a target."""
    for entry in k.seq("patchesJson6902"):
        target = entry.mapping("target") if isinstance(entry, Mapping) else None
        if target is None:
            raise BuildError("a patchesJson6902 entry needs a target", entry.origin)
        docs = load_patch(entry, _source(env))
        if not docs:
            continue
        ops = docs[0]
        if not isinstance(ops, Sequence):
            raise BuildError("a JSON 6902 patch must be a list of operations", ops.origin)
        json6902(resources, ops, Selector.from_node(target), entry.origin)
