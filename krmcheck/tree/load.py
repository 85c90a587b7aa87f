"""Loading YAML text into provenance trees.

libyaml composes the node graph (fast, with marks); scalars are then
resolved with kustomize's rules (:mod:`krmcheck.tree.scalars`), not PyYAML's.
"""

from __future__ import annotations

import base64
import binascii

from typing import Any, Iterator

import yaml

from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Origin, from_mark
from krmcheck.tree.scalars import UnrepresentableScalar, resolve_plain

_PLAIN = "!krmcheck/plain"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"

_SAFE_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _BoundedIntLoader(_SAFE_LOADER):  # type: ignore[misc, valid-type]
    """PyYAML's safe loader, but an integer of more digits than Python
    converts (4,300) stays the string it is written as, as go-yaml keeps a
    number it cannot hold, instead of raising ValueError from a key or
    value anywhere in a file."""

    def construct_yaml_int(self, node):  # type: ignore[no-untyped-def]
        try:
            return super().construct_yaml_int(node)
        except ValueError:
            return self.construct_scalar(node)


_BoundedIntLoader.add_constructor("tag:yaml.org,2002:int", _BoundedIntLoader.construct_yaml_int)

# PyYAML's safe loader in C (libyaml) where PyYAML has it: the one choice of
# loader for every plain-data read in krmcheck.
FAST_LOADER: type[Any] = _BoundedIntLoader


class _Loader(_SAFE_LOADER):  # type: ignore[misc, valid-type]
    """Composes only; marks plain scalars so they are resolved our way."""

    def resolve(self, kind, value, implicit):  # type: ignore[no-untyped-def]
        if kind is yaml.ScalarNode:
            return _PLAIN if implicit[0] else super().resolve(kind, value, implicit)
        # an untagged collection: what the resolver would say, without asking it
        return _SEQ if kind is yaml.SequenceNode else _MAP


class _RedefiningLoader(yaml.SafeLoader):  # type: ignore[misc]
    """The pure-Python composer, letting a later anchor of the same name
    replace an earlier one, as go-yaml does (libyaml refuses). Only used for
    the rare text that needs it: it is much slower than libyaml."""

    def resolve(self, kind, value, implicit):  # type: ignore[no-untyped-def]
        if kind is yaml.ScalarNode and implicit[0]:
            return _PLAIN
        return super().resolve(kind, value, implicit)

    def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
        event = self.peek_event()
        if not isinstance(event, yaml.AliasEvent) and getattr(event, "anchor", None) is not None:
            self.anchors.pop(event.anchor, None)
        return super().compose_node(parent, index)


class LoadError(Exception):
    """Text that is not valid YAML, with the position of the problem."""

    def __init__(self, path: str, line: int, col: int, message: str) -> None:
        super().__init__(f"{path}:{line}:{col}: {message}")
        self.path, self.line, self.col, self.message = path, line, col, message


def load_documents(text: str, path: str, by: str = "resource",
                   duplicate_keys: bool = False) -> list[Node]:
    """Every non-empty document of ``text`` as a tree; ``path`` is repo-relative.
    A repeated mapping key is an error (as go-yaml v3 has it) unless
    ``duplicate_keys``, where the later one wins (go-yaml v2).

    A text is parsed once per process: the trees are kept, and each call
    gets shares of them (:meth:`Node.share`), copied only where looked into,
    so every root, base and schema lookup that reads a file pays for it once."""
    global _parsed_chars
    key = (path, by, duplicate_keys)
    kept = _PARSED.get(key)
    if kept is None or kept[0] is not text and kept[0] != text:
        try:
            docs: list[Node] | LoadError = list(iter_documents(text, path, by, duplicate_keys))
        except LoadError as e:
            docs = e
        if _parsed_chars > PARSED_LIMIT:
            _PARSED.clear()
            _parsed_chars = 0
        _parsed_chars += len(text)
        kept = _PARSED[key] = (text, docs)
    found = kept[1]
    if isinstance(found, LoadError):
        raise LoadError(found.path, found.line, found.col, found.message)
    return [d.share() for d in found]


# The trees of the texts parsed so far, by (path, by, duplicate_keys), with
# their text; emptied once they hold more than PARSED_LIMIT characters.
_PARSED: dict[tuple[str, str, bool], tuple[str, "list[Node] | LoadError"]] = {}
_parsed_chars = 0
PARSED_LIMIT = 64 * 1024 * 1024  # characters: the trees take many times as many bytes


def error_mark(e: yaml.MarkedYAMLError) -> yaml.Mark | None:
    """Where a YAML error is: for a token the scanner began and could not
    finish (a key with no ':', a quote never closed), where that token
    begins, as kubectl reports it (``yaml: line 9: could not find expected
    ':'``), not where the scanner gave up, which may be many lines on; for
    any other error, where the parser met what it did not expect."""
    if isinstance(e, yaml.scanner.ScannerError) and e.context_mark is not None and \
            (e.context == "while scanning a simple key" or
             e.context == "while scanning a quoted scalar" and str(e.problem).startswith("found unexpected")):
        return e.context_mark
    return e.problem_mark or e.context_mark


def iter_documents(text: str, path: str, by: str = "resource",
                   duplicate_keys: bool = False) -> Iterator[Node]:
    try:
        try:
            docs = list(yaml.compose_all(text, Loader=_Loader))
        except yaml.composer.ComposerError as e:
            if "found duplicate anchor" not in str(e):
                raise
            docs = list(yaml.compose_all(text, Loader=_RedefiningLoader))
        except yaml.MarkedYAMLError as e:
            quoted = _go_flow_colons(text, e) if isinstance(e, yaml.scanner.ScannerError) else None
            if quoted is not None:
                docs = list(yaml.compose_all(quoted, Loader=_Loader))
            elif "nesting depth" in str(e.problem):
                # libyaml stops at 1,000 levels (a scanner or a parser error,
                # by its version); go-yaml (kubectl) at 10,000
                _check_depth(text, path)
                docs = list(yaml.compose_all(text, Loader=_RedefiningLoader))
            else:
                raise
        counting = "&" in text
        merging = "<<" in text  # merge keys need it: a text without it skips looking for them
        for n, doc in enumerate(d for d in docs if d is not None):
            if n == MAX_DOCUMENTS:
                mark = doc.start_mark
                raise LoadError(path, mark.line + 1, mark.column + 1,
                                f"more than {MAX_DOCUMENTS:,} documents in one file")
            # aliases need anchors: a text with no '&' cannot hold a bomb, and skips the count
            yield _convert(doc, _Text(path, by, duplicate_keys, _Budget(path) if counting else None,
                                      merging), None)
    except yaml.MarkedYAMLError as e:
        mark = error_mark(e)
        line = mark.line + 1 if mark else 1
        col = mark.column + 1 if mark else 1
        raise LoadError(path, line, col, f"invalid YAML: {e.problem or e.context}{_nbsp_hint(text, line)}") from None
    except yaml.reader.ReaderError as e:
        pos = e.position
        line = text.count("\n", 0, pos) + 1
        col = pos - text.rfind("\n", 0, pos)
        what = f"#x{e.character:04x}" if isinstance(e.character, int) else repr(e.character)
        raise LoadError(path, line, col, f"invalid YAML: unacceptable character {what}: {e.reason}") from None
    except yaml.YAMLError as e:
        raise LoadError(path, 1, 1, f"invalid YAML: {e}") from None


_GO_PLAIN_END = frozenset(" \t\r\n,?[]{}")  # what ends a plain scalar in a flow collection (go-yaml)


def _go_flow_colons(text: str, error: yaml.scanner.ScannerError) -> str | None:
    """The text with each plain scalar of a flow collection that holds a ':'
    right before a flow indicator (``[1.2.3.4, 2001:db8::]``) single-quoted,
    as go-yaml reads it: the ':' ends a plain scalar only before a blank,
    so the scalar runs on to the indicator (kubectl and kustomize read a
    string); libyaml refuses it ("found unexpected ':'"). None where the
    error is another, or the scalar spans lines. Lines keep their numbers."""
    for _ in range(1000):
        start, problem = error.context_mark, error.problem_mark
        if error.context != "while scanning a plain scalar" or error.problem != "found unexpected ':'" or \
                start is None or problem is None or start.line != problem.line:
            return None
        begin = start.index
        end = problem.index
        while end < len(text) and text[end] not in _GO_PLAIN_END and \
                not (text[end] == ":" and text[end + 1:end + 2] in ("", " ", "\t", "\r", "\n")):
            end += 1
        if "\n" in text[begin:end]:
            return None
        text = text[:begin] + "'" + text[begin:end].replace("'", "''") + "'" + text[end:]
        try:
            for _event in yaml.parse(text, Loader=_SAFE_LOADER):
                pass
        except yaml.scanner.ScannerError as again:
            error = again
            continue
        except yaml.YAMLError:
            return text  # another error: the caller's parse says where
        return text
    return None


MAX_DOCUMENTS = 100_000  # in one file; the largest real bundles hold a few thousand
MAX_DEPTH = 10_000  # go-yaml's limit, which kubectl reports as "exceeded max depth of 10000"


def _nbsp_hint(text: str, line: int) -> str:
    """Why a line near a parse error breaks the indentation, where it
    indents with no-break spaces (U+00A0, as text pasted from a web page
    carries them): YAML reads them as text, not as spaces."""
    lines = text.splitlines()
    for n in range(min(line, len(lines)), max(line - 3, 0), -1):
        indent = lines[n - 1][:len(lines[n - 1]) - len(lines[n - 1].lstrip(" \t\u00a0"))]
        if "\u00a0" in indent:
            return f" (line {n} indents with no-break spaces, U+00A0, which YAML does not read as indentation)"
    return ""


def _check_depth(text: str, path: str) -> None:
    """Refuse nesting deeper than go-yaml accepts, at the node that goes too
    deep; PyYAML's parser is a state machine, so this needs no recursion."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
                raise LoadError(path, line, col,
                                f"invalid YAML: exceeded max depth of {MAX_DEPTH}")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


class _Budget:
    """go-yaml's defence against alias bombs ("billion laughs"), which kubectl
    reports as "excessive aliasing": an alias decodes its anchor's whole
    tree again, and once a document has decoded many nodes, only a shrinking
    share of them may come from aliases."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.decoded = 0
        self.aliased = 0
        self.seen: set[int] = set()

    def count(self, node: yaml.Node, inside_alias: bool) -> bool:
        """Count one node; whether it (or an ancestor) is an alias's copy."""
        self.decoded += 1
        again = inside_alias or id(node) in self.seen
        if not again:
            self.seen.add(id(node))
        else:
            self.aliased += 1
            if self.aliased > 100 and self.decoded > 1000 and self.aliased / self.decoded > self.ratio():
                mark = node.start_mark
                raise LoadError(self.path, mark.line + 1, mark.column + 1,
                                "invalid YAML: excessive aliasing (an alias bomb?)")
        return again

    def ratio(self) -> float:
        if self.decoded <= 400_000:
            return 0.99
        if self.decoded >= 4_000_000:
            return 0.10
        return 0.99 - 0.89 * (self.decoded - 400_000) / 3_600_000


class _Text:
    """What converting one text's nodes needs to know of the text."""

    __slots__ = ("path", "by", "duplicate_keys", "budget", "merging")

    def __init__(self, path: str, by: str, duplicate_keys: bool, budget: _Budget | None,
                 merging: bool) -> None:
        self.path, self.by, self.duplicate_keys, self.budget = path, by, duplicate_keys, budget
        self.merging = merging  # the text has "<<": a mapping may hold merge keys


def _convert(node: yaml.Node, t: _Text, origin: Origin | None, inside_alias: bool = False,
             depth: int = 1) -> Node:
    if t.budget is not None:
        inside_alias = t.budget.count(node, inside_alias)
    path, by = t.path, t.by
    if origin is None:
        origin = from_mark(path, node.start_mark, by)
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node, path, by, origin)
    if depth > MAX_DEPTH:
        # libyaml builds without a nesting limit of their own compose any depth
        mark = node.start_mark
        raise LoadError(path, mark.line + 1, mark.column + 1, f"invalid YAML: exceeded max depth of {MAX_DEPTH}")
    if isinstance(node, yaml.SequenceNode):
        return Sequence([_convert(item, t, None, inside_alias, depth + 1) for item in node.value], origin)
    assert isinstance(node, yaml.MappingNode)
    items: dict[str, Node] = {}
    for knode, vnode in (_merged_pairs(node, path) if t.merging else node.value):
        key = _key_text(knode, path)
        mark = knode.start_mark
        if key in items:
            if not t.duplicate_keys:
                raise LoadError(path, mark.line + 1, mark.column + 1,
                                f'mapping key "{key}" already defined at line {items[key].origin.line}')
            del items[key]
        items[key] = _convert(vnode, t, from_mark(path, mark, by), inside_alias, depth + 1)
    return Mapping(items, origin)


def _merged_pairs(node: yaml.MappingNode, path: str) -> list[tuple[yaml.Node, yaml.Node]]:
    pairs: list[tuple[yaml.Node, yaml.Node]] = []
    merged: list[tuple[yaml.Node, yaml.Node]] = []
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == "<<" and k.tag in (_PLAIN, "tag:yaml.org,2002:merge"):
            sources = v.value if isinstance(v, yaml.SequenceNode) else [v]
            for src in sources:
                if isinstance(src, yaml.MappingNode):
                    merged.extend(_merged_pairs(src, path))
            continue
        pairs.append((k, v))
    if merged:
        # own keys win over merged ones, and earlier merge sources over later
        seen = {_key_text(k, path) for k, _ in pairs}
        kept = []
        for k, v in merged:
            if _key_text(k, path) not in seen:
                seen.add(_key_text(k, path))
                kept.append((k, v))
        pairs = kept + pairs
    return pairs


def _key_text(knode: yaml.Node, path: str) -> str:
    if isinstance(knode, yaml.ScalarNode):
        return str(knode.value)
    raise LoadError(path, knode.start_mark.line + 1, knode.start_mark.column + 1,
                    "mapping keys must be scalars")


def _scalar(node: yaml.ScalarNode, path: str, by: str, origin: Origin) -> Scalar:
    text = node.value
    tag = node.tag
    if tag == _PLAIN:
        try:
            return Scalar(resolve_plain(text), origin, (), text)
        except UnrepresentableScalar:
            raise LoadError(path, origin.line, origin.col,
                            f"{text} cannot be represented in JSON") from None
    if tag.endswith(":int") or tag.endswith(":float") or tag.endswith(":bool") or tag.endswith(":null"):
        try:
            return Scalar(resolve_plain(text), origin, (), text)
        except UnrepresentableScalar:
            raise LoadError(path, origin.line, origin.col,
                            f"{text} cannot be represented in JSON") from None
    if tag.endswith(":binary"):
        return Scalar(_binary(text, path, origin), origin)
    if node.style == ">":
        text = _go_folded(text)
    return Scalar(text, origin)


def _binary(text: str, path: str, origin: Origin) -> str:
    """A ``!!binary`` scalar decodes to its bytes as a string, as go-yaml
    does; line breaks are ignored, anything else outside base64 is an error."""
    try:
        data = base64.b64decode(text.replace("\n", "").replace("\r", ""), validate=True)
    except (binascii.Error, ValueError):
        raise LoadError(path, origin.line, origin.col,
                        "invalid YAML: !!binary value contains invalid base64 data") from None
    return data.decode("utf-8", "replace")


def _go_folded(text: str) -> str:
    """go-yaml v3 keeps one line break too many before a more-indented line
    of a folded block scalar (``>``); kustomize's output shows it, so the
    value must have it too."""
    lines = text.split("\n")
    out: list[str] = []
    last = None  # the last non-empty line so far
    for line in lines:
        if line and line[0] in " \t" and last is not None and last[0] not in " \t":
            out.append("")
        out.append(line)
        if line:
            last = line
    return "\n".join(out)
