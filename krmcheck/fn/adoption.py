"""A plugin's output adopted back into the build.

Output items are matched to input items (by the function id annotation,
else the kustomize id annotation, else the current id) for provenance:
what the function left unchanged keeps its origin, what it added or changed
gets the function config's origin with the old one in the trail. Each item's
build state is read back (:func:`krmcheck.resource.build_state.take_state`); then
the output replaces the resource list as kustomize's ``UpdateResMapValues``
does: matched by current id, missing ones removed, new ones appended,
duplicates refused. A Result a function reports is tied to the output item
it names.
"""

from __future__ import annotations

import dataclasses

import yaml

from krmcheck.resource.build_state import KUSTOMIZE_ID, take_state
from krmcheck.resource.function import FunctionOutput
from krmcheck.resource.lookup import Lookup
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import Gvk, ResId, id_key, same_id
from krmcheck.resource.resource import Resource
from krmcheck.resource.wire import FN_ID, LEGACY_FN_ID
from krmcheck.resource.wire import annotations_of as _annotations
from krmcheck.results import ResourceRef, Result
from krmcheck.tree.load import FAST_LOADER
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, walk
from krmcheck.tree.origin import Origin


# --- matching and provenance -------------------------------------------------------------

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
        data = yaml.load(text, Loader=FAST_LOADER)
    except (yaml.YAMLError, RecursionError):
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


# --- the new resource list ---------------------------------------------------------------

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


# --- the item a Result names -------------------------------------------------------------

def resource_for(result: Result, resources: list[Resource]) -> Resource | None:
    """The output item a Result names, by resourceRef or by ``file.path`` and
    ``file.index`` against the path and index annotations the items carried
    through the function (:class:`krmcheck.resource.lookup.Lookup`)."""
    return Lookup(resources).find(result)


def with_resource(result: Result, res: Resource | None) -> Result:
    """The Result naming ``res`` by resourceRef (so it is located at its
    source), when it named it only by file."""
    if res is None or result.resource_ref is not None:
        return result
    ref = ResourceRef(res.api_version, res.kind, res.name, res.namespace)
    return dataclasses.replace(result, resource_ref=ref, file_path="", file_index=0)
