"""Reading a kustomization file: which file, which fields, and checks on them."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from krmcheck.resource.errors import BuildError, MissingKustomization
from krmcheck.resource.files import Files
from krmcheck.tree.load import FAST_LOADER, LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Origin

FILENAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# Every field kustomize v5.5 knows, and whether this engine runs it.
SUPPORTED = frozenset({
    "apiVersion", "kind", "metadata", "resources", "bases", "components",
    "namePrefix", "nameSuffix", "namespace", "commonLabels", "labels",
    "commonAnnotations", "images", "imageTags", "replicas", "patches", "patchesStrategicMerge",
    "patchesJson6902", "configMapGenerator", "secretGenerator", "generatorOptions",
    "vars", "replacements",
    "generators", "transformers", "validators", "helmCharts", "helmGlobals",
    "helmChartInflationGenerator", "configurations", "crds", "openapi",
    "catalogs",  # KEP-2906 function catalogs, which kustomize never shipped (krmcheck.fn.catalog)
    "sortOptions", "buildMetadata",
})
KNOWN_UNSUPPORTED = frozenset({
    "inventory",
})
KINDS = ("Kustomization", "Component")
COMPONENT_API_VERSION = "kustomize.config.k8s.io/v1alpha1"


def find_file(directory: Path) -> Path | None:
    """The kustomization file of ``directory``; error if it has more than one."""
    found = [directory / n for n in FILENAMES if (directory / n).is_file()]
    if len(found) > 1:
        raise BuildError(f"found multiple kustomization files under: {directory}: "
                         f"{', '.join(p.name for p in found)}")
    return found[0] if found else None


@dataclass
class Kustomization:
    """A parsed kustomization: the file's tree plus where it lives."""

    path: Path  # the file
    display: str  # repo-relative name of the file
    node: Mapping

    @property
    def directory(self) -> Path:
        return self.path.parent

    @property
    def kind(self) -> str:
        v = self.node.value("kind")
        return v if isinstance(v, str) and v else "Kustomization"

    @property
    def is_component(self) -> bool:
        return self.kind == "Component"

    def field(self, name: str) -> Node | None:
        n = self.node.items.get(name)
        if isinstance(n, Scalar) and n.value is None:
            return None
        return n

    def string(self, name: str) -> tuple[str, Origin] | None:
        n = self.field(name)
        if n is None:
            return None
        if not isinstance(n, Scalar):
            raise BuildError(f"{name} must be a string", n.origin)
        return ("" if n.value is None else str(n.value)), n.origin

    def seq(self, name: str) -> list[Node]:
        n = self.field(name)
        if n is None:
            return []
        if not isinstance(n, Sequence):
            raise BuildError(f"{name} must be a list", n.origin)
        return n.items

    def mapping(self, name: str) -> Mapping | None:
        n = self.field(name)
        if n is None:
            return None
        if not isinstance(n, Mapping):
            raise BuildError(f"{name} must be a map", n.origin)
        return n

    def origin(self, name: str) -> Origin:
        n = self.node.items.get(name)
        return n.origin if n is not None else self.node.origin


def load(directory: Path, files: Files, origin: Origin | None = None,
         empty_ok: bool = False) -> Kustomization:
    """Load and check the kustomization of ``directory``. ``empty_ok``: a
    file with no field (or comments only) is an empty kustomization, not an
    error (what kustomize-controller builds, see gitops.flux)."""
    path = find_file(directory)
    if path is None:
        raise MissingKustomization(
            f"unable to find one of {', '.join(repr(n) for n in FILENAMES)} in directory "
            f"'{files.display(directory)}'", origin, directory / FILENAMES[0])
    display = files.display(path)
    text = files.read_text(path, origin)
    try:
        # kustomize reads kustomization files with go-yaml v2, where a
        # repeated key silently replaces the earlier one.
        docs = load_documents(text, display, by="kustomization", duplicate_keys=True)
    except LoadError as e:
        raise BuildError(e.message, Origin(e.path, e.line, e.col)) from None
    if not docs and empty_ok:
        return Kustomization(path, display, Mapping({}, Origin(display, 1, 1)))
    if not docs:
        raise BuildError(f"kustomization file {display} is empty", Origin(display, 1, 1))
    if len(docs) > 1 or not isinstance(docs[0], Mapping):
        raise BuildError(f"{display} must hold a single kustomization map", docs[0].origin)
    if not empty_ok and all(_is_zero(v) for n, v in docs[0].items.items() if n not in ("apiVersion", "kind")):
        raise BuildError(f"kustomization file {display} is empty: no field besides apiVersion "
                         f"and kind has a value", docs[0].origin)
    k = Kustomization(path, display, docs[0])
    _check_fields(k)
    return k


def _is_zero(node: Node) -> bool:
    """Null or an empty string: what kustomize's decoder leaves as if absent."""
    return isinstance(node, Scalar) and node.value in (None, "")


@functools.cache
def _field_table() -> dict[str, dict[str, Any]]:
    """``kustomization_fields.yaml``: each Go type's fields, by JSON name."""
    text = Path(__file__).with_name("kustomization_fields.yaml").read_text()
    table: dict[str, dict[str, Any]] = yaml.load(text, Loader=FAST_LOADER)
    return table


@functools.cache
def _struct_fields() -> dict[str, dict[str, str]]:
    """Each type's fields and the type of their value (a list's element type)."""
    return {name: {f: (t[0] if isinstance(t, list) else t) for f, t in fields.items()}
            for name, fields in _field_table().items()}


@functools.cache
def _list_fields() -> frozenset[tuple[str, str]]:
    """(type, field) pairs whose value is a list of objects."""
    return frozenset((name, f) for name, fields in _field_table().items()
                     for f, t in fields.items() if isinstance(t, list))


def check_field_names(node: Mapping, type_name: str, where: str) -> None:
    """Match field names as kustomize's decoder does (an exact name first,
    else case-insensitively; ``newtag`` is ``newTag``) and refuse, at its
    line, a field the type does not have or a value of the wrong type.
    ``where`` names ``node`` in messages."""
    fields = _struct_fields()[type_name]
    _canonical_keys(node, fields)
    for name, child in node.items.items():
        kind = fields.get(name)
        if kind is None:
            inside = f" in {where}" if where else ""
            raise BuildError(f"invalid Kustomization: unknown field \"{name}\"{inside}; "
                             f"known fields: {', '.join(sorted(fields))}", child.origin)
        path = f"{where}.{name}" if where else name
        if (type_name, name) in _list_fields():
            _expect(child, "list", path)
            if isinstance(child, Sequence):
                for i, entry in enumerate(child.items):
                    _expect(entry, "object", f"{path}[{i}]")
                    if isinstance(entry, Mapping):
                        check_field_names(entry, kind, f"{path}[{i}]")
        elif kind in _DATA_TYPES:
            _check_data(child, kind, path)
        elif kind != "free":
            _expect(child, "object", path)
            if isinstance(child, Mapping):
                check_field_names(child, kind, path)


# what each data type of kustomization_fields.yaml accepts, as Go's JSON
# decoder does: null is always the zero value; nothing is converted
_DATA_TYPES = {"string": "string", "strings": "list", "map": "object", "bool": "bool", "int": "int"}


def _json_type(node: Node) -> str:
    if isinstance(node, Mapping):
        return "object"
    if isinstance(node, Sequence):
        return "list"
    value = node.to_data()
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"
    return "null" if value is None else "string"


def _expect(node: Node, want: str, path: str) -> None:
    got = _json_type(node)
    if got not in (want, "null"):
        article = "an" if want[0] in "aeiou" else "a"
        shown = {"int": "an integer", "number": "a number", "bool": "a boolean", "object": "a map",
                 "list": "a list", "string": "a string"}
        want_text = shown.get(want, f"{article} {want}")
        raise BuildError(f"invalid Kustomization: {path} must be {want_text}, not {shown[got]}",
                         node.origin)


def _check_data(node: Node, kind: str, path: str) -> None:
    _expect(node, _DATA_TYPES[kind], path)
    if kind == "strings" and isinstance(node, Sequence):
        for i, item in enumerate(node.items):
            _expect(item, "string", f"{path}[{i}]")
    elif kind == "map" and isinstance(node, Mapping):
        for key, value in node.items.items():
            _expect(value, "string", f"{path}.{key}")


def _canonical_keys(node: Mapping, fields: dict[str, str]) -> None:
    """kustomize reads kustomizations with Go's JSON decoder, which matches
    field names case-insensitively; a name spelled exactly wins over one
    that only matches without case (as kubectl shows)."""
    if all(k in fields for k in node.items):
        return
    by_lower = {n.lower(): n for n in fields}
    renamed: dict[str, Node] = {}
    for key, value in node.items.items():
        name = key if key in fields else by_lower.get(key.lower(), key)
        if name != key and name in node.items:
            continue  # the exact spelling is also present and wins
        renamed[name] = value
    node.items = renamed


def _check_fields(k: Kustomization) -> None:
    _canonical_keys(k.node, _struct_fields()["Kustomization"])
    kind = k.node.value("kind") or None  # kustomize fills an empty kind as a missing one: Kustomization
    if kind not in (None, *KINDS):
        raise BuildError(f"kind '{kind}' is not Kustomization or Component", k.origin("kind"))
    api = k.node.value("apiVersion")
    if kind == "Component" and api is not None and api != COMPONENT_API_VERSION:
        raise BuildError(f"apiVersion for Component should be {COMPONENT_API_VERSION}",
                         k.origin("apiVersion"))
    for name, node in k.node.items.items():
        if name in SUPPORTED:
            continue
        if name in KNOWN_UNSUPPORTED:
            raise BuildError(f"'{name}' is not supported yet by krmcheck", node.origin)
        raise BuildError(f"invalid Kustomization: unknown field \"{name}\"", node.origin)
    check_field_names(k.node, "Kustomization", "")
