"""``krmcheck fn ID...``: built-in validators served as an exec KRM function.

kpt (``kpt fn eval --exec``), kustomize (``validators:`` with an exec
function annotation) or any other orchestrator sends a ResourceList on
stdin; the chosen validators run over its items exactly as in
``krmcheck check`` and their Results go back in the ResourceList's
``results`` (KRM Functions Specification), each also naming the file and
document index the orchestrator gave the item (``config.kubernetes.io/path``
and ``index``, or their ``internal.`` twins). The exit code is 1 when a
Result is an error, which is how a kpt validator fails its pipeline.

The items go back untouched: when the input is a block-style ResourceList
without ``results``, the Results are appended to its text, so even the
quoting of the orchestrator's own output survives (kpt writes the items back
to the package after a passing function). A plain YAML stream (``kustomize
build . | krmcheck fn schema``) is read as the items of a ResourceList with
no functionConfig; the answer is then a new ResourceList.

The functionConfig may carry options: ``kubernetesVersion`` and ``strict``,
in a ConfigMap's ``data`` (``kpt fn eval ... -- strict=true``) or at the top
level or under ``spec`` of any other kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

import yaml

from krmcheck.results import ResourceRef, Result
from krmcheck.tree.emit import emit
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, from_data
from krmcheck.tree.node import Sequence as SequenceNode
from krmcheck.tree.origin import UNKNOWN
from krmcheck.validators import VALIDATORS
from krmcheck.validators.base import ValidatorOptions, resource_ref

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2

RESOURCE_LIST = "ResourceList"
RESOURCE_LIST_API = "config.kubernetes.io/v1"
# Where orchestrators record an item's file and position in it, newest spelling first.
PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
INDEX_ANNOTATIONS = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")
# Annotations that only carry an item through a function: the validators judge
# the resource as the cluster will get it, so they never see these.
_WIRE_PREFIX = "internal.config.kubernetes.io/"
_WIRE_KEYS = frozenset({"config.kubernetes.io/path", "config.kubernetes.io/index",
                        "config.kubernetes.io/id", "config.k8s.io/id", "kustomize.config.k8s.io/id"})
_OPTION_KEYS = frozenset({"kubernetesVersion", "strict"})


class InputError(Exception):
    """stdin is not a ResourceList or a YAML stream of resources."""


class ConfigError(Exception):
    """The functionConfig asks for something the validators cannot do."""


@dataclass(frozen=True)
class Request:
    """What came in on stdin."""

    items: list[Mapping]
    function_config: Mapping | None = None
    wrapper: Mapping | None = None  # the ResourceList, when the input was one
    text: str = ""


def serve(ids: Sequence[str], stdin: TextIO, stdout: TextIO, stderr: TextIO,
          defaults: ValidatorOptions = ValidatorOptions()) -> int:
    """Run the validators ``ids`` as a KRM function; the process's exit code."""
    try:
        request = read_request(stdin.read())
    except InputError as e:
        stderr.write(f"krmcheck fn: {e}\n")
        return EXIT_BAD_INPUT
    try:
        results = validate(ids, request, options(request.function_config, defaults))
    except ConfigError as e:
        results = [Result(message=f"functionConfig: {e}", severity="error",
                          tags=(("validator", ",".join(ids)),))]
    stdout.write(respond(request, results))
    return EXIT_FAILED if any(r.severity == "error" for r in results) else EXIT_OK


# --- reading -------------------------------------------------------------------

def read_request(text: str) -> Request:
    try:
        docs = load_documents(text, "stdin", by="function input", duplicate_keys=True)
    except LoadError as e:
        raise InputError(str(e)) from None
    if len(docs) == 1 and isinstance(docs[0], Mapping) and docs[0].value("kind") == RESOURCE_LIST:
        return _from_resource_list(docs[0], text)
    return Request(_mappings(docs, "document"))


def _from_resource_list(wrapper: Mapping, text: str) -> Request:
    items = wrapper.get("items")
    if items is not None and not isinstance(items, SequenceNode) and not _is_null(items):
        raise InputError("ResourceList items must be a list")
    config = wrapper.get("functionConfig")
    if config is not None and not isinstance(config, Mapping) and not _is_null(config):
        raise InputError("ResourceList functionConfig must be a map")
    found = _mappings(items.items if isinstance(items, SequenceNode) else [], "item")
    return Request(found, config if isinstance(config, Mapping) else None, wrapper, text)


def _mappings(nodes: Sequence[Node], what: str) -> list[Mapping]:
    for i, node in enumerate(nodes):
        if not isinstance(node, Mapping):
            raise InputError(f"{what} {i} is not a resource (a map)")
    return [n for n in nodes if isinstance(n, Mapping)]


def _is_null(node: Node) -> bool:
    return isinstance(node, Scalar) and node.value is None


# --- options -------------------------------------------------------------------

def options(config: Mapping | None, defaults: ValidatorOptions) -> ValidatorOptions:
    """The validator options a functionConfig asks for, over ``defaults``."""
    fields = _option_fields(config)
    version = fields.get("kubernetesVersion")
    strict = fields.get("strict")
    return ValidatorOptions(
        kubernetes_version=_version(version) if version is not None else defaults.kubernetes_version,
        strict=_flag(strict) if strict is not None else defaults.strict)


def _option_fields(config: Mapping | None) -> dict[str, Scalar]:
    if config is None:
        return {}
    if config.value("kind") == "ConfigMap":
        data = config.mapping("data") or Mapping()
        unknown = sorted(set(data.items) - _OPTION_KEYS)
        if unknown:
            raise ConfigError(f"unknown option {unknown[0]!r}; known: {', '.join(sorted(_OPTION_KEYS))}")
        return _scalars(data)
    return {**_scalars(config), **_scalars(config.mapping("spec") or Mapping())}


def _scalars(node: Mapping) -> dict[str, Scalar]:
    found: dict[str, Scalar] = {}
    for key in _OPTION_KEYS & set(node.items):
        value = node.items[key]
        if not isinstance(value, Scalar):
            raise ConfigError(f"{key} must be a string or a boolean")
        found[key] = value
    return found


def _version(node: Scalar) -> str | None:
    text = node.as_string().strip()
    return text or None


def _flag(node: Scalar) -> bool:
    if isinstance(node.value, bool):
        return node.value
    text = node.as_string().strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigError(f"strict must be true or false, not {node.as_string()!r}")


# --- validating ----------------------------------------------------------------

def validate(ids: Sequence[str], request: Request, opts: ValidatorOptions) -> list[Result]:
    """The Results of the validators ``ids`` over the request's items, each
    naming the file and index its item came from."""
    judged = [_without_wire_annotations(item) for item in request.items]
    places = _places(request.items, judged)
    results: list[Result] = []
    for validator_id in ids:
        try:
            found = VALIDATORS[validator_id].validate(judged, opts)
        except ValueError as e:  # an option the validator refuses (an unknown version)
            raise ConfigError(str(e)) from None
        results.extend(_placed(r, places) for r in found)
    return results


def _without_wire_annotations(item: Mapping) -> Mapping:
    copy = item.copy()
    meta = copy.mapping("metadata")
    notes = meta.mapping("annotations") if meta is not None else None
    if meta is None or notes is None:
        return copy
    wire = [k for k in notes.items if k in _WIRE_KEYS or k.startswith(_WIRE_PREFIX)]
    for key in wire:
        del notes.items[key]
    if wire and not notes.items:
        del meta.items["annotations"]
    return copy


def _places(items: list[Mapping], judged: list[Mapping]) -> dict[ResourceRef, tuple[str, int]]:
    """(file path, index) by resourceRef; the first item with a ref wins."""
    places: dict[ResourceRef, tuple[str, int]] = {}
    for item, seen in zip(items, judged):
        path = _annotation(item, PATH_ANNOTATIONS)
        if path:
            places.setdefault(resource_ref(seen), (path, _index(_annotation(item, INDEX_ANNOTATIONS))))
    return places


def _annotation(item: Mapping, keys: tuple[str, ...]) -> str:
    meta = item.mapping("metadata")
    notes = meta.mapping("annotations") if meta is not None else None
    for key in keys:
        value = notes.get(key) if notes is not None else None
        if isinstance(value, Scalar) and value.as_string():
            return value.as_string()
    return ""


def _index(text: str) -> int:
    return int(text) if text.isdigit() else 0


def _placed(result: Result, places: dict[ResourceRef, tuple[str, int]]) -> Result:
    place = places.get(result.resource_ref) if result.resource_ref else None
    if place is None or result.file_path:
        return result
    return Result(result.message, result.severity, result.resource_ref, result.field_path,
                  place[0], place[1], result.tags)


# --- answering -----------------------------------------------------------------

def respond(request: Request, results: list[Result]) -> str:
    """The ResourceList to write back: the items as they came, plus ``results``."""
    block = _results_yaml(results)
    if request.wrapper is not None and "results" not in request.wrapper and _block_style(request.text):
        text = request.text if request.text.endswith("\n") else request.text + "\n"
        return text + block if results else text
    wrapper = request.wrapper.copy() if request.wrapper is not None else _new_list(request.items)
    if results:
        old = wrapper.get("results")
        earlier = old.items if isinstance(old, SequenceNode) else []
        wrapper.items["results"] = SequenceNode(earlier + [from_data(r.to_dict(), UNKNOWN) for r in results])
    return emit(wrapper)


def _new_list(items: list[Mapping]) -> Mapping:
    return Mapping({"apiVersion": Scalar(RESOURCE_LIST_API), "kind": Scalar(RESOURCE_LIST),
                    "items": SequenceNode(list(items))})


def _results_yaml(results: list[Result]) -> str:
    return emit(Mapping({"results": SequenceNode([from_data(r.to_dict(), UNKNOWN) for r in results])}))


def _block_style(text: str) -> bool:
    """True when ``text`` is one block mapping at column 0 that a top-level
    key can be appended to (no document end marker, no flow style)."""
    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return False
    if len(nodes) != 1 or not isinstance(nodes[0], yaml.MappingNode) or nodes[0].flow_style \
            or nodes[0].start_mark.column != 0:
        return False
    tail = text[nodes[0].end_mark.index:]
    return not any(line.strip() and not line.lstrip().startswith("#") for line in tail.splitlines())
