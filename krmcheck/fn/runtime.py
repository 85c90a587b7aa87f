"""The function runtime: the one place that knows the wire formats.

Going out, each resource is stamped with what kustomize puts on it for a
plugin: its build state as ``internal.config.kubernetes.io/*`` annotations
(prefixes, previous names, hash and generator options) and its current id
as ``kustomize.config.k8s.io/id``; a KRM function additionally gets the
ResourceList v1 wrapping, the function protocol's index and id annotations
and a ``functionConfig`` marked local-config.

Coming back, output items are matched to input items (by the function id
annotation, else the kustomize id annotation, else the current id) for
provenance: what the function left unchanged keeps its origin, what it added
or changed gets the function config's origin with the old one in the trail.
The build annotations become the resource's state again (what a plugin
drops, kustomize forgets); then the output replaces the resource list as
kustomize's ``UpdateResMapValues`` does: matched by current id, missing ones
removed, new ones appended, duplicates refused. Results are checked on the
way in (``result_of``): a function's text reaches the reporters as bounded
strings, with a known severity and no file outside the repository.
"""

from __future__ import annotations

import dataclasses
import json
import os
import posixpath
import re
from dataclasses import dataclass
from typing import Iterable

import yaml

from krmcheck.fn.spec import FunctionOutput
# the function protocol's annotations (kyaml kioutil), legacy spellings too
from krmcheck.locate import Locator
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import inside
from krmcheck.resource.resid import Gvk, ResId
from krmcheck.resource.resid import id_key, same_id
from krmcheck.resource.resid import is_cluster_scoped
from krmcheck.resource.resource import GeneratorInfo, Resource
from krmcheck.resource.wire import FN_ID, INDEX, LEGACY_FN_ID, LEGACY_INDEX, LEGACY_PATH, MIGRATION_ID, PATH
from krmcheck.resource.wire import INTERNAL as _INTERNAL
from krmcheck.resource.wire import PROTOCOL as _PROTOCOL
from krmcheck.resource.wire import annotations_of as _annotations
from krmcheck.resource.wire import drop_if_empty as _drop_if_empty
from krmcheck.results import SEVERITIES, ResourceRef, Result
from krmcheck.tree.emit import emit, emit_all
from krmcheck.tree.load import FAST_LOADER, LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, walk
from krmcheck.tree.origin import Origin
from krmcheck.tree.scalars import needs_quotes

RESOURCE_LIST_API = "config.kubernetes.io/v1"
RESOURCE_LIST_KIND = "ResourceList"
LOCAL_CONFIG = "config.kubernetes.io/local-config"

# kustomize's plugin annotations (api/internal/plugins/utils)
KUSTOMIZE_ID = "kustomize.config.k8s.io/id"
NEEDS_HASH = "kustomize.config.k8s.io/needs-hash"
BEHAVIOR = "kustomize.config.k8s.io/behavior"

# kustomize's build state (api/internal/utils/annotations.go)
PREFIXES = _INTERNAL + "prefixes"
SUFFIXES = _INTERNAL + "suffixes"
PREVIOUS_KINDS = _INTERNAL + "previousKinds"
PREVIOUS_NAMES = _INTERNAL + "previousNames"
PREVIOUS_NAMESPACES = _INTERNAL + "previousNamespaces"
NEEDS_HASH_SUFFIX = _INTERNAL + "needsHashSuffix"
GENERATOR_BEHAVIOR = _INTERNAL + "generatorBehavior"
_OTHER_BUILD = (_INTERNAL + "refBy", _INTERNAL + "allowNameChange", _INTERNAL + "allowKindChange")

# kinds whose hash suffix depends only on their content (krmcheck.kustomize.hashing)
HASHABLE_KINDS = frozenset({"ConfigMap", "Secret"})
NO_NAMESPACE = "_non_namespaceable_"  # kustomize's previous namespace of a cluster-scoped object
DEFAULT_NAMESPACE = "default"
# Bounds on what a function's Results carry into reports (the specification
# sets none); longer text is cut, and a cut message says so.
MAX_MESSAGE = 4096  # characters of a message
MAX_TEXT = 1024  # characters of any other field: names, paths, tags
MAX_TAGS = 32
_DRIVE = re.compile(r"[A-Za-z]:(/|$)")  # C:/... is absolute too, whatever the platform
_STR, _MAP, _SEQ = "tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


# --- going out: build annotations ----------------------------------------------------------

def stamped(res: Resource) -> Mapping:
    """A copy of ``res`` as kustomize hands it to a plugin: build state and
    current id as annotations (keys sorted on output, as kustomize's are)."""
    node = res.node.copy()
    extra = build_annotations(res)
    extra[KUSTOMIZE_ID] = emit(_id_node(res.id()))
    md = node.setdefault_mapping("metadata", node.origin)
    ann = md.setdefault_mapping("annotations", md.origin)
    for key, value in extra.items():
        ann.items[key] = Scalar(value, ann.origin)
    return node


def build_annotations(res: Resource) -> dict[str, str]:
    """kustomize's ``internal.config.kubernetes.io/*`` spelling of a resource's
    build state. A generated resource without an explicit behavior reads
    ``unspecified`` (krmcheck keeps create and unspecified as one value)."""
    out: dict[str, str] = {}
    if res.generator is not None:
        behavior = res.generator.behavior
        out[GENERATOR_BEHAVIOR] = "unspecified" if behavior == "create" else behavior
    if res.needs_hash:
        out[NEEDS_HASH_SUFFIX] = "enabled"
    if res.prefixes:
        out[PREFIXES] = ",".join(reversed(res.prefixes))  # kustomize appends; krmcheck prepends
    if res.suffixes:
        out[SUFFIXES] = ",".join(res.suffixes)
    if res.prev_ids:
        out[PREVIOUS_KINDS] = ",".join(p.gvk.kind for p in res.prev_ids)
        out[PREVIOUS_NAMES] = ",".join(p.name for p in res.prev_ids)
        out[PREVIOUS_NAMESPACES] = ",".join(_effective_namespace(p) for p in res.prev_ids)
    return out


def _effective_namespace(rid: ResId) -> str:
    if is_cluster_scoped(rid.gvk):
        return NO_NAMESPACE
    return rid.namespace or DEFAULT_NAMESPACE


def _id_node(rid: ResId) -> Mapping:
    """kustomize's ResId as YAML: empty fields left out."""
    fields = (("group", rid.gvk.group), ("version", rid.gvk.version), ("kind", rid.gvk.kind),
              ("name", rid.name), ("namespace", rid.namespace))
    return Mapping({k: Scalar(v) for k, v in fields if v})


def stream(items: list[Mapping]) -> str:
    """The YAML stream an exec plugin reads on stdin."""
    return emit_all(list(items))


# --- going out: the ResourceList ------------------------------------------------------------

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


# --- coming back: parsing -------------------------------------------------------------------

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
        if tags is not None else ())


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


def resource_for(result: Result, resources: list[Resource]) -> Resource | None:
    """The output item a Result names, by resourceRef or by ``file.path`` and
    ``file.index`` against the path and index annotations the items carried
    through the function (:meth:`krmcheck.locate.Locator.find`)."""
    return Locator(resources, "").find(result)


def with_resource(result: Result, res: Resource | None) -> Result:
    """The Result naming ``res`` by resourceRef (so it is located at its
    source), when it named it only by file."""
    if res is None or result.resource_ref is not None:
        return result
    ref = ResourceRef(res.api_version, res.kind, res.name, res.namespace)
    return dataclasses.replace(result, resource_ref=ref, file_path="", file_index=0)


# --- coming back: matching, provenance and state ------------------------------------------

def adopt(outputs: list[Mapping], inputs: list[Resource], origin: Origin) -> list[Resource]:
    """The output objects as resources: provenance merged from the input each
    one derives from, build state read back from the annotations."""
    by_fn_id = {str(i + 1): r for i, r in enumerate(inputs)}
    out = []
    for node in outputs:
        source = _source(node, inputs, by_fn_id)
        merge_origins(node, source.node if source else None, origin)
        res = Resource(node)
        take_state(res)
        if source is not None:
            res.ref_vars = list(source.ref_vars)
        out.append(res)
    return out


def _source(node: Mapping, inputs: list[Resource], by_fn_id: dict[str, Resource]) -> Resource | None:
    ann = _annotations(node)
    for key in (FN_ID, LEGACY_FN_ID):
        v = ann.value(key) if ann is not None else None
        if v is not None and str(v) in by_fn_id:
            return by_fn_id[str(v)]
    rid = _written_id(ann) if ann is not None else None
    current = Resource(node).id()
    for wanted in ([rid] if rid else []) + [current]:
        for res in inputs:
            if same_id(res.id(), wanted):
                return res
    return None


def _written_id(ann: Mapping) -> ResId | None:
    text = ann.value(KUSTOMIZE_ID)
    if not isinstance(text, str):
        return None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    def field(key: str) -> str:  # scalars only: str() of an aliased tree could expand without bound
        value = data.get(key)
        return str(value) if isinstance(value, (str, int, float)) and value else ""

    return ResId(Gvk(field("group"), field("version"), field("kind")), field("name"), field("namespace"))


def merge_origins(new: Node, old: Node | None, origin: Origin) -> None:
    """Node by node: equal values keep the old origin and trail; changed
    values get ``origin`` with the old origin appended to the trail; nodes
    with no counterpart get ``origin``."""
    if old is None:
        for n in walk(new):
            n.origin, n.trail = origin, ()
        return
    if isinstance(new, Scalar) and isinstance(old, Scalar):
        if new.value == old.value and type(new.value) is type(old.value):
            new.origin, new.trail, new.text = old.origin, old.trail, old.text
        else:
            new.origin, new.trail = origin, old.trail + (old.origin,)
        return
    if isinstance(new, Mapping) and isinstance(old, Mapping):
        new.origin, new.trail = old.origin, old.trail
        for key, child in new.items.items():
            merge_origins(child, old.items.get(key), origin)
        return
    if isinstance(new, Sequence) and isinstance(old, Sequence):
        new.origin, new.trail = old.origin, old.trail
        for i, child in enumerate(new.items):
            merge_origins(child, _counterpart(child, i, old), origin)
        return
    merge_origins(new, None, origin)
    new.trail = old.trail + (old.origin,)


def _counterpart(child: Node, index: int, old: Sequence) -> Node | None:
    """The old element a new one continues: same ``name`` for named
    entries (containers, ports, env), else the same position."""
    if isinstance(child, Mapping) and child.value("name") is not None:
        for item in old.items:
            if isinstance(item, Mapping) and item.value("name") == child.value("name"):
                return item
    return old.items[index] if index < len(old.items) else None


def take_state(res: Resource) -> None:
    """Read kustomize's build annotations into ``res`` and remove them (and
    the protocol's index and id annotations); path annotations stay for the
    next function."""
    ann = _annotations(res.node)
    if ann is None:
        return
    values = {k: (v.as_string() if isinstance(v, Scalar) else "") for k, v in ann.items.items()}
    res.prefixes = list(reversed(_csv(values.get(PREFIXES))))
    res.suffixes = _csv(values.get(SUFFIXES))
    res.prev_ids = _prev_ids(res, values)
    res.needs_hash = values.get(NEEDS_HASH_SUFFIX) == "enabled"
    behavior = values.get(GENERATOR_BEHAVIOR)
    if behavior is not None:
        res.generator = GeneratorInfo(behavior if behavior in ("merge", "replace") else "create",
                                      res.needs_hash, res.node.origin)
    for key in (KUSTOMIZE_ID, PREFIXES, SUFFIXES, PREVIOUS_KINDS, PREVIOUS_NAMES,
                PREVIOUS_NAMESPACES, NEEDS_HASH_SUFFIX, GENERATOR_BEHAVIOR) + _OTHER_BUILD + _PROTOCOL:
        ann.items.pop(key, None)
    _drop_if_empty(res.node)


def _csv(value: str | None) -> list[str]:
    return value.split(",") if value else []


def _prev_ids(res: Resource, values: dict[str, str]) -> list[ResId]:
    names = _csv(values.get(PREVIOUS_NAMES))
    namespaces = _csv(values.get(PREVIOUS_NAMESPACES))
    kinds = _csv(values.get(PREVIOUS_KINDS))
    if not names or not (len(names) == len(namespaces) == len(kinds)):
        return []
    gvk = res.gvk
    return [ResId(Gvk(gvk.group, gvk.version, k), n, "" if ns == NO_NAMESPACE else ns)
            for k, n, ns in zip(kinds, names, namespaces)]


def generator_options(resources: list[Resource]) -> None:
    """What a generator plugin asks for with ``needs-hash`` and ``behavior``
    (kustomize's UpdateResourceOptions): no hash suffix unless asked."""
    for res in resources:
        ann = _annotations(res.node)
        hashed = ann.get(NEEDS_HASH) if ann is not None else None
        behavior = ann.get(BEHAVIOR) if ann is not None else None
        if isinstance(hashed, Scalar):
            res.needs_hash = res.needs_hash or _go_bool(hashed)
            if res.needs_hash and res.kind not in HASHABLE_KINDS:
                raise BuildError(f"{res.kind} {res.name}: krmcheck cannot reproduce the hash suffix "
                                 f"kustomize gives a {res.kind} (it hashes its parsed YAML nodes, "
                                 f"source positions included); only ConfigMaps and Secrets can "
                                 f"ask for one with {NEEDS_HASH}", hashed.origin)
        text = behavior.as_string() if isinstance(behavior, Scalar) else ""
        at = behavior.origin if isinstance(behavior, Scalar) else res.node.origin
        res.generator = GeneratorInfo(text if text in ("merge", "replace") else "create",
                                      res.needs_hash, at)
        if ann is not None:
            ann.items.pop(NEEDS_HASH, None)
            ann.items.pop(BEHAVIOR, None)
            _drop_if_empty(res.node)


def _go_bool(node: Scalar) -> bool:
    """Go's strconv.ParseBool."""
    text = node.as_string()
    if text in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if text in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise BuildError(f'the annotation "{NEEDS_HASH}" contains an invalid value ("{text}")',
                     node.origin)


def default_paths(resources: list[Resource]) -> None:
    """kyaml names every returned item without a path ``<kind>_<name>.yaml``
    (under its namespace); the next function sees it, the output does not."""
    for res in resources:
        ann = _annotations(res.node)
        have = ann.value(PATH) or ann.value(LEGACY_PATH) if ann is not None else None
        path = str(have) if have else "/".join(
            p for p in (res.namespace, f"{res.kind.lower()}_{res.name}.yaml") if p)
        md = res.node.setdefault_mapping("metadata", res.node.origin)
        target = md.setdefault_mapping("annotations", md.origin)
        for key in (PATH, LEGACY_PATH):
            if key not in target.items:
                target.items[key] = Scalar(path, target.origin)


# --- coming back: the new resource list -----------------------------------------------------

def replace_by_id(current: list[Resource], outputs: list[Resource], plugin: str,
                  origin: Origin | None = None) -> list[Resource]:
    """kustomize's UpdateResMapValues: each output replaces the resource with
    its current id or is appended; resources without an output are removed."""
    seen: set[tuple[str, str, str, str, str]] = set()
    for res in outputs:
        key = id_key(res.id())
        if key in seen:
            raise BuildError(f"plugin {plugin} generated duplicate resource: "
                             f"{res.id().describe()}", origin)
        seen.add(key)
    result = [r for r in current if id_key(r.id()) in seen]
    slots = {id_key(r.id()): i for i, r in enumerate(result)}
    for res in outputs:
        i = slots.get(id_key(res.id()))
        if i is None:
            result.append(res)
        else:
            result[i] = res
    return result


def output(items: list[Resource], results: list[Result], stderr: str) -> FunctionOutput:
    return FunctionOutput(items, results, stderr)
