"""The wire formats of a plugin's input and output: the YAML stream an exec
plugin reads and prints, and the ResourceList v1 of a KRM function.

Going out, a KRM function gets its items (already stamped with the build
state, :mod:`krmcheck.resource.build_state`) wrapped in a ResourceList, with the
function protocol's index and id annotations and a ``functionConfig``
marked local-config, as kyaml writes them. Coming back, the output is
parsed into items and ``results``; results are checked on the way in
(``result_of``): a function's text reaches the reporters as bounded
strings, with a known severity and no file outside the repository.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from dataclasses import dataclass
from typing import Iterable

import yaml

from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import inside
from krmcheck.resource.wire import FN_ID, INDEX, LEGACY_FN_ID, LEGACY_INDEX, MIGRATION_ID
from krmcheck.results import SEVERITIES, ResourceRef, Result
from krmcheck.tree.emit import emit, emit_all
from krmcheck.tree.load import FAST_LOADER, LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.scalars import needs_quotes

RESOURCE_LIST_API = "config.kubernetes.io/v1"
RESOURCE_LIST_KIND = "ResourceList"
LOCAL_CONFIG = "config.kubernetes.io/local-config"

# Bounds on what a function's Results carry into reports (the specification
# sets none); longer text is cut, and a cut message says so.
MAX_MESSAGE = 4096  # characters of a message
MAX_TEXT = 1024  # characters of any other field: names, paths, tags
MAX_TAGS = 32
_DRIVE = re.compile(r"[A-Za-z]:(/|$)")  # C:/... is absolute too, whatever the platform
_STR, _MAP, _SEQ = "tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


# --- going out ---------------------------------------------------------------------------

def stream(items: list[Mapping]) -> str:
    """The YAML stream an exec plugin reads on stdin."""
    return emit_all(list(items))


class _Dumper(yaml.CDumper if hasattr(yaml, "CDumper") else yaml.Dumper):  # type: ignore[misc]
    """Every scalar is a string whose style is already chosen."""

    def resolve(self, kind, value, implicit):  # type: ignore[no-untyped-def]
        if kind is yaml.ScalarNode:
            return _STR
        return _MAP if kind is yaml.MappingNode else _SEQ


def function_config(config: Mapping) -> Mapping:
    """What a function gets as ``functionConfig``: the config marked local-config."""
    node = config.copy()
    _set_annotation(node, LOCAL_CONFIG, "true")
    return node


def resource_list(items: list[Mapping] | None, config: Mapping) -> str:
    """The ResourceList v1 a KRM function reads, as kyaml writes it: items
    and functionConfig with their keys as kustomize serialised them, the
    protocol annotations appended to each item in kyaml's order, and
    ``config.kubernetes.io/local-config`` appended to the function config.
    A generator (``items`` None) gets its own config as the only item."""
    seq = yaml.SequenceNode(_SEQ, [])
    for index, ynode in enumerate(_item_nodes(items, config)):
        for key, value in _protocol_annotations(index):
            _append_annotation(ynode, key, value)
        seq.value.append(ynode)
    fnconfig = _composed(config)
    _append_annotation(fnconfig, LOCAL_CONFIG, "true")
    if not seq.value:
        seq.flow_style = True
    top = yaml.MappingNode(_MAP, [(_plain("apiVersion"), _plain(RESOURCE_LIST_API)),
                                  (_plain("kind"), _plain(RESOURCE_LIST_KIND)),
                                  (_plain("items"), seq),
                                  (_plain("functionConfig"), fnconfig)])
    return yaml.serialize(top, Dumper=_Dumper, allow_unicode=True, width=1 << 30, indent=2)


def _item_nodes(items: list[Mapping] | None, config: Mapping) -> list[yaml.MappingNode]:
    if items is not None:
        return [_composed(item) for item in items]
    own = _composed(config)
    _append_annotation(own, LOCAL_CONFIG, "true")
    return [own]


def _protocol_annotations(index: int) -> list[tuple[str, str]]:
    return [(LEGACY_INDEX, str(index)), (INDEX, str(index)), (MIGRATION_ID, str(index)),
            (FN_ID, str(index + 1)), (LEGACY_FN_ID, str(index + 1))]


def _composed(node: Mapping) -> yaml.MappingNode:
    """The emitter's text of ``node`` as a PyYAML graph (styles kept)."""
    ynode = yaml.compose(emit(node), Loader=FAST_LOADER)
    assert isinstance(ynode, yaml.MappingNode)
    for n in _ywalk(ynode):
        n.tag = _STR if isinstance(n, yaml.ScalarNode) else (
            _MAP if isinstance(n, yaml.MappingNode) else _SEQ)
    return ynode


def _ywalk(node: yaml.Node) -> Iterable[yaml.Node]:
    yield node
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            yield k
            yield from _ywalk(v)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            yield from _ywalk(v)


def _plain(text: str) -> yaml.ScalarNode:
    return yaml.ScalarNode(_STR, text, style=None)


def _new_string(text: str) -> yaml.ScalarNode:
    # kyaml writes a new string that would read as another type in single quotes
    return yaml.ScalarNode(_STR, text, style="'" if needs_quotes(text) else None)


def _ychild(node: yaml.MappingNode, key: str) -> yaml.Node | None:
    for k, v in node.value:
        if k.value == key:
            return v
    return None


def _append_annotation(node: yaml.MappingNode, key: str, value: str) -> None:
    """kyaml's SetAnnotation: replace in place, else append (creating
    ``metadata.annotations`` at the end of the map when missing)."""
    md = _ychild(node, "metadata")
    if not isinstance(md, yaml.MappingNode):
        md = yaml.MappingNode(_MAP, [])
        node.value.append((_plain("metadata"), md))
    ann = _ychild(md, "annotations")
    if not isinstance(ann, yaml.MappingNode) or (ann.flow_style and not ann.value):
        ann = yaml.MappingNode(_MAP, [])
        md.value = [(k, v) for k, v in md.value if k.value != "annotations"]
        md.value.append((_plain("annotations"), ann))
    for i, (k, _) in enumerate(ann.value):
        if k.value == key:
            ann.value[i] = (k, _new_string(value))
            return
    ann.value.append((_plain(key), _new_string(value)))


def _set_annotation(node: Mapping, key: str, value: str) -> None:
    md = node.setdefault_mapping("metadata", node.origin)
    ann = md.setdefault_mapping("annotations", md.origin)
    ann.items[key] = Scalar(value, ann.origin)


# --- coming back: parsing ----------------------------------------------------------------

@dataclass(frozen=True)
class Answer:
    """A function's parsed stdout: the items and the ``results`` entries."""

    items: list[Mapping]
    results: list[Mapping]


def parse_stream(text: str, what: str) -> list[Mapping]:
    """A plugin's YAML stream (``kind: *List`` documents expanded)."""
    return [obj for doc in _documents(text, what) for obj in _objects(doc, what)]


def _documents(text: str, what: str) -> list[Node]:
    try:
        return load_documents(text, what, by="plugin output")
    except LoadError as e:
        raise BuildError(f"MalformedYAMLError: {what} printed invalid YAML: line {e.line}: "
                         f"{e.message}") from None


def _objects(doc: Node, what: str) -> list[Mapping]:
    if isinstance(doc, Scalar) and doc.value is None:
        return []
    if not isinstance(doc, Mapping):
        raise BuildError(f"{what} printed a document that is not an object")
    kind = doc.value("kind")
    items = doc.sequence("items")
    if isinstance(kind, str) and kind.endswith("List") and items is not None:
        return [obj for item in items for obj in _objects(item, what)]
    return [doc]


def parse_answer(text: str, what: str) -> Answer:
    """A KRM function's stdout: a ResourceList, or a plain stream of objects."""
    docs = _documents(text, what) if text.strip() else []
    first = docs[0] if docs else None
    if isinstance(first, Mapping) and first.value("kind") == RESOURCE_LIST_KIND:
        items = first.sequence("items")
        results = first.sequence("results")
        return Answer(_mappings(items, what, "items"), _mappings(results, what, "results"))
    return Answer([obj for doc in docs for obj in _objects(doc, what)], [])


def _mappings(seq: Sequence | None, what: str, field: str) -> list[Mapping]:
    out: list[Mapping] = []
    for item in seq.items if seq is not None else []:
        if not isinstance(item, Mapping):
            raise BuildError(f"{what}: every entry of {field} must be an object", None)
        out.append(item)
    return out


# --- coming back: results ----------------------------------------------------------------

def result_of(node: Mapping) -> Result:
    """One ``results`` entry (KRM functions specification) as a Result, made
    safe to hand to reporters: every field a string of bounded length, the
    severity one of error, warning and info, and ``file.path`` a path inside
    the repository or nothing. What had to change is said in the message,
    so the finding itself tells."""
    ref = node.mapping("resourceRef")
    field = node.mapping("field")
    file = node.mapping("file")
    tags = node.mapping("tags")
    index = file.value("index") if file is not None else 0
    severity, severity_note = _severity(node.get("severity"))
    path, path_note = _file_path(_text(file.value("path")) if file is not None else "")
    notes = [n for n in (severity_note, path_note) if n]
    message = _cut(_message(node.get("message")), MAX_MESSAGE, "message")
    return Result(
        message=message + (f" [krmcheck: {'; '.join(notes)}]" if notes else ""),
        severity=severity,
        resource_ref=ResourceRef(_text(ref.value("apiVersion")), _text(ref.value("kind")),
                                 _text(ref.value("name")), _text(ref.value("namespace")))
        if ref is not None else None,
        field_path=_text(field.value("path")) if field is not None else "",
        file_path=path,
        file_index=index if isinstance(index, int) and not isinstance(index, bool) else 0,
        tags=tuple((_cut(str(k), MAX_TEXT), _cut(v.as_string(), MAX_TEXT))
                   for k, v in list(tags.items.items())[:MAX_TAGS] if isinstance(v, Scalar))
        if tags is not None else (),
        by_program=True)


def _text(v: object) -> str:
    """A scalar field of a Result (``Mapping.value`` gives None for a list or an object)."""
    return "" if v is None else _cut(str(v), MAX_TEXT)


def _message(node: Node | None) -> str:
    """The message as the function spelled it; an object or a list, as JSON."""
    if isinstance(node, Scalar):
        return "" if node.value is None else node.as_string()
    if node is None:
        return ""
    return json.dumps(node.to_data(), default=str, ensure_ascii=False)


def _cut(text: str, limit: int, what: str = "") -> str:
    if len(text) <= limit:
        return text
    note = f" [krmcheck: {what} cut at {limit} of {len(text)} characters]" if what else "..."
    return text[:limit] + note


def _severity(node: Node | None) -> tuple[str, str]:
    """The severity, and a note when the function's was none of the three.

    kpt and kyaml keep any string and count only ``error`` as a failure;
    krmcheck's reporters need one of the three, and a grade nobody knows
    must not slip past ``--fail-on``, so it is reported as an error (a
    missing severity is an error too, as it always was here)."""
    if node is None or (isinstance(node, Scalar) and node.value in (None, "")):
        return "error", ""
    text = node.as_string().strip().lower() if isinstance(node, Scalar) else ""
    if text in SEVERITIES:
        return text, ""
    shown = repr(_cut(node.as_string(), 40)) if isinstance(node, Scalar) else "that is not a string"
    return "error", f"severity {shown} is none of {', '.join(SEVERITIES)}; reported as error"


def _file_path(text: str) -> tuple[str, str]:
    """``file.path`` when it names a file inside the repository; else "" and a note.

    An absolute path, or one that climbs out with ``..``, would point a
    report (and its reader) at a file outside the repository; kpt refuses
    such paths on a function's resources for the same reason. Nor does a
    path with control characters name a file of the repository."""
    clean = posixpath.normpath(text.replace("\\", "/")) if text else "."
    if clean == ".":
        return "", ""
    if not inside(clean, os.curdir, resolve=False) or _DRIVE.match(clean) \
            or any(ord(c) < 32 or ord(c) == 127 for c in text):
        return "", "its file.path names no file inside the repository and was dropped"
    return text, ""
