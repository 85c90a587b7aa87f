"""kustomize's build state, carried across a plugin as annotations.

Going out, each resource is stamped with what kustomize puts on it for a
plugin: its build state as ``internal.config.kubernetes.io/*`` annotations
(prefixes, previous names, hash and generator options) and its current id
as ``kustomize.config.k8s.io/id``. Coming back, the build annotations become
the resource's state again (what a plugin drops, kustomize forgets), a
generator's ``needs-hash`` and ``behavior`` requests are read, and returned
items get kyaml's default path annotations. A resource file that holds
such annotations (copied from a build's output) is read the same way.
"""

from __future__ import annotations

from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import NO_NAMESPACE, Gvk, ResId, effective_namespace
from krmcheck.resource.resource import GeneratorInfo, Resource
from krmcheck.resource.wire import LEGACY_PATH, PATH
from krmcheck.resource.wire import INTERNAL as _INTERNAL
from krmcheck.resource.wire import PROTOCOL as _PROTOCOL
from krmcheck.resource.wire import annotations_of as _annotations
from krmcheck.resource.wire import drop_if_empty as _drop_if_empty
from krmcheck.tree.emit import emit
from krmcheck.tree.node import Mapping, Scalar

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
        out[PREVIOUS_NAMESPACES] = ",".join(effective_namespace(p) for p in res.prev_ids)
    return out



def _id_node(rid: ResId) -> Mapping:
    """kustomize's ResId as YAML: empty fields left out."""
    fields = (("group", rid.gvk.group), ("version", rid.gvk.version), ("kind", rid.gvk.kind),
              ("name", rid.name), ("namespace", rid.namespace))
    return Mapping({k: Scalar(v) for k, v in fields if v})


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
