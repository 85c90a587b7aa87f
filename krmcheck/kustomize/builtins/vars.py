"""vars: ``$(NAME)`` references replaced by a field of another resource.

Mirrors kustomize v5.5 (deprecated there in favour of replacements, still
widely used):

* each kustomization's ``vars:`` are bound, after its transformers ran, to
  the one resource of its accumulation their ``objref`` names (by any name
  the resource has had); the binding travels with the resource
  (``Resource.ref_vars``), so a var declared twice anywhere in the build
  is an error;
* at the top level, after hash suffixes and name references, every var
  takes the value of its ``fieldref.fieldpath`` (default
  ``metadata.name``), so it sees final names, and ``$(NAME)`` is replaced
  in the fields of the varReference table. A field that is exactly
  ``$(NAME)`` takes the value's type (an int port stays an int);
  ``$$`` is a literal ``$``; unknown references stay as written.

Provenance: a substituted field is set by the var's entry in the
kustomization, and the source field's origin joins its trail.
"""

from __future__ import annotations

import re
from typing import Iterable, NamedTuple

from krmcheck.kustomize import fieldspec
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import Gvk, ResId
from krmcheck.resource.resid import is_cluster_scoped
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, Value
from krmcheck.tree.origin import Origin
from krmcheck.tree.scalars import format_float

BY = "vars"
DEFAULT_FIELD_PATH = "metadata.name"


class Var(NamedTuple):
    name: str
    raw_gvk: Gvk  # as written: group/version fields, apiVersion not yet parsed
    gvk: Gvk  # apiVersion applied, as kustomize's defaulting does
    obj_name: str
    namespace: str
    field_path: str  # as written; "" means metadata.name
    origin: Origin  # the `- name:` entry

    @property
    def path(self) -> str:
        return self.field_path or DEFAULT_FIELD_PATH

    def describe(self, defaulted: bool = True) -> str:
        """Go's ``%v`` of the var, as kustomize's messages print it."""
        gvk = self.gvk if defaulted else self.raw_gvk
        path = self.path if defaulted else self.field_path
        return f"{{{self.name} {_gvk_str(gvk)} {{{path}}}}}"

    def matches(self, rid: ResId) -> bool:
        """kustomize matches the exact group/version/kind and name, and the
        namespace only when the objref gives one (or is cluster-scoped)."""
        if rid.name != self.obj_name or rid.gvk != self.gvk:
            return False
        if self.namespace or is_cluster_scoped(self.gvk):
            return _effective_ns(self.namespace, self.gvk) == _effective_ns(rid.namespace, rid.gvk)
        return True


def _gvk_str(gvk: Gvk) -> str:
    return ".".join((gvk.kind or "[noKind]", gvk.version or "[noVer]", gvk.group or "[noGrp]"))


def _effective_ns(namespace: str, gvk: Gvk) -> str:
    return "_non_namespaceable_" if is_cluster_scoped(gvk) else (namespace or "default")


def _get(node: Mapping, key: str) -> Node | None:
    """Go's JSON decoder matches field names case-insensitively."""
    if key in node.items:
        return node.items[key]
    return next((v for k, v in node.items.items() if k.lower() == key.lower()), None)


def _str(node: Node | None) -> str:
    return node.as_string() if isinstance(node, Scalar) and node.value is not None else ""


def parse(entry: Node) -> Var:
    if not isinstance(entry, Mapping):
        raise BuildError("a vars entry must be a map with name and objref", entry.origin)
    ref = _get(entry, "objref")
    ref = ref if isinstance(ref, Mapping) else Mapping({})
    fref = _get(entry, "fieldref")
    path = _str(_get(fref, "fieldpath")) if isinstance(fref, Mapping) else ""
    raw = Gvk(_str(_get(ref, "group")), _str(_get(ref, "version")), _str(_get(ref, "kind")))
    gvk = raw
    api_version = _str(_get(ref, "apiVersion"))
    if api_version:
        parts = api_version.split("/")
        if len(parts) == 2:
            gvk = Gvk(parts[0], parts[1], raw.kind)
        elif len(parts) == 1:
            gvk = Gvk(raw.group, parts[0], raw.kind)
    return Var(_str(_get(entry, "name")), raw, gvk, _str(_get(ref, "name")),
               _str(_get(ref, "namespace")), path, entry.origin._replace(by=BY))


# --- merging: bind each kustomization's vars to a resource -------------------------

def merge(entries: list[Node], resources: list[Resource]) -> None:
    """Bind a kustomization's ``vars:`` to the resources accumulated so far."""
    declared = [parse(e) for e in entries]
    listing = "[" + " ".join(v.describe(defaulted=False) for v in declared) + "]"
    bound: list[tuple[Var, Resource, Node]] = []
    for var, entry in zip(declared, entries):
        found = [r for r in resources if any(var.matches(i) for i in r.all_ids())]
        if len(found) > 1:
            raise BuildError(f"merging vars {listing}: found {len(found)} resId matches for var "
                             f"{var.describe()} (unable to disambiguate)", var.origin)
        if found:
            bound.append((var, found[0], entry))
    seen = _check_unique(resources)
    for var in declared:
        if var.name in seen:
            raise BuildError(f"merging vars {listing}: var '{var.name}' already encountered", var.origin)
        seen[var.name] = var
    for var in sorted(declared, key=lambda v: v.name):  # kustomize resolves vars by name
        if not any(b[0] is var for b in bound):
            raise BuildError(f"var '{var.describe()}' cannot be mapped to a field "
                             f"in the set of known resources", var.origin)
    for _, res, entry in bound:
        if isinstance(entry, Mapping):
            res.ref_vars.append(entry)


def _check_unique(resources: list[Resource]) -> dict[str, Var]:
    """The vars bound so far; a name bound twice (a base reached by two paths,
    or two bases declaring it) is kustomize's "already encountered"."""
    seen: dict[str, Var] = {}
    for res in resources:
        for entry in res.ref_vars:
            var = parse(entry)
            if var.name in seen:
                raise BuildError(f"var '{var.name}' already encountered", var.origin)
            seen[var.name] = var
    return seen


# --- resolving: substitute $(NAME) at the top level ---------------------------------

class Bound(NamedTuple):
    """A var's value and where it came from."""

    var: Var
    value: Value | Node  # a Node (map or list) is never substituted
    source: Origin


def resolve(resources: list[Resource], specs: Iterable[fieldspec.FieldSpec] | None = None) -> None:
    """Replace ``$(NAME)`` in the varReference fields of every resource
    (``specs``: the build's varReference table, default kustomize's)."""
    _check_unique(resources)
    values: dict[str, Bound] = {}
    for res in resources:
        for entry in res.ref_vars:
            var = parse(entry)
            values[var.name] = _value(var, res)
    if not values:
        return
    specs = tuple(fieldspec.defaults("varReference") if specs is None else specs)
    for res in resources:
        for spec in specs:
            try:
                fieldspec.visit(res, spec, lambda parent, key: _substitute(parent, key, values, res))
            except ValueError as e:
                raise BuildError(f"considering field '{'/'.join(spec.path)}' of object "
                                 f"{_id_str(res.id())}: {e}", res.node.origin) from None


def _id_str(rid: ResId) -> str:
    return f"{_gvk_str(rid.gvk)}/{rid.name or '[noName]'}.{rid.namespace or '[noNs]'}"


def _value(var: Var, res: Resource) -> Bound:
    from krmcheck.kustomize.builtins.replacements import lookup  # only where vars are used
    from krmcheck.tree.fieldpath import split_kyaml

    node = lookup(res.node, _slice_indexes(split_kyaml(var.path)))
    if node is None:
        raise BuildError(f"field specified in var '{var.describe()}' not found in corresponding resource",
                         var.origin)
    value: Value | Node = node.value if isinstance(node, Scalar) else node
    return Bound(var, value, node.origin)


_SLICE = re.compile(r"^(.*)\[(\d+)\]$")


def _slice_indexes(parts: list[str]) -> list[str]:
    """``ports[0]`` is ``ports`` then ``0`` in a var's field path."""
    out: list[str] = []
    for p in parts:
        m = _SLICE.match(p) if p.endswith("]") else None
        if m is None:
            out.append(p)
            continue
        if m.group(1):
            out.append(m.group(1))
        out.append(m.group(2))
    return out


def _substitute(parent: Mapping, key: str, values: dict[str, Bound], res: Resource) -> None:
    node = parent.items.get(key)
    stringly = parent is res.metadata and key == "annotations"  # kustomize keeps these strings
    if isinstance(node, Scalar):
        _expand_node(node, values, stringly)
    elif isinstance(node, Mapping):
        for child in node.items.values():
            _expand_node(child, values, stringly)
    elif isinstance(node, Sequence):
        for item in node.items:
            if not isinstance(item, Scalar) or not isinstance(item.value, str):
                raise ValueError(f"visit traversal on path: [{key}]: invalid value type expect a string")
            _expand_node(item, values, stringly)


def _expand_node(node: Node, values: dict[str, Bound], stringly: bool) -> None:
    if not isinstance(node, Scalar) or not isinstance(node.value, str):
        return
    new, used = expand(node.value, values)
    if not used:
        if new != node.value:  # only "$$" unescaped: kustomize rewrites the text
            node.set(new, node.origin)
        return
    if stringly and not isinstance(new, str):
        new = _go_format(new)
    old_origin, old_trail = node.origin, node.trail
    node.value, node.text = new, None
    trail = old_trail + (old_origin,)
    for name in used[:-1]:
        trail += (values[name].source, values[name].var.origin)
    last = values[used[-1]]
    node.trail = trail + (last.source,)
    node.origin = last.var.origin


def expand(text: str, values: dict[str, Bound]) -> tuple[Value, list[str]]:
    """kustomize's refvar expansion; returns the new value and the vars used."""
    out: list[str] = []
    used: list[str] = []
    checkpoint = cursor = 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            read, is_var, advance = _read_name(text[cursor + 1:])
            if is_var:
                bound = values.get(read)
                primitive = bound is not None and not isinstance(bound.value, Node)
                if primitive:
                    used.append(read)
                if text == f"$({read})":
                    return (bound.value if primitive else text), used  # type: ignore[union-attr,return-value]
                out.append(_go_format(bound.value) if primitive else f"$({read})")  # type: ignore[union-attr,arg-type]
            else:
                out.append(read)
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(out) + text[checkpoint:], used


def _read_name(rest: str) -> tuple[str, bool, int]:
    if rest[0] == "$":
        return "$", False, 1
    if rest[0] == "(":
        close = rest.find(")", 1)
        if close != -1:
            return rest[1:close], True, close + 1
        return "$(", False, 1
    return "$" + rest[0], False, 1


def _go_format(v: Value) -> str:
    """Go's ``%v`` of a primitive."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return format_float(v)
    return "" if v is None else str(v)
