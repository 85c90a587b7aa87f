"""The static cost of a CRD's CEL rule, as the API server estimates it
before it accepts the CRD, computed here as a lower bound of that estimate.

Two halves, each mirroring Kubernetes:

- :func:`declare` gives a schema node's CEL declaration with the sizes the
  estimate reads: how many elements a list, map or string may hold
  (``maxItems``, ``maxProperties``, ``maxLength`` times 4, an enum's
  longest value, else as many as fit in a 3 MiB request) and the smallest
  size a value serializes to (k8s.io/apiserver ``pkg/cel/common/schemas.go``
  ``SchemaDeclType``, ``pkg/cel/types.go``; apiextensions-apiserver
  ``pkg/apiserver/schema/cel/model/schemas.go`` ``WithTypeAndObjectMeta``);
- :func:`estimate` walks the parsed rule (:mod:`krmcheck.schemas.cel_ast`)
  as cel-go's ``checker/cost.go`` ``coster`` does, with the Kubernetes
  library costs of k8s.io/apiserver ``pkg/cel/library/cost.go``
  ``EstimateCallCost`` and the size estimator of apiextensions-apiserver
  ``pkg/apiserver/schema/cel/compilation.go`` (``sizeEstimator``).

The API server type-checks a rule first, and picks each function's
overload by the types. This module infers types from the schema where it
can; where it cannot tell (an unknown function, a value of unknown size),
it takes the cheaper choice, so the result never exceeds the API server's
estimate: a rule reported over the budget is over it on the server too.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from krmcheck.schemas import cel_ast
from krmcheck.schemas.cel import escape

MAX_REQUEST_BYTES = 3 * 1024 * 1024  # k8s.io/apiserver pkg/apis/cel/config.go MaxRequestSizeBytes
PER_RULE_LIMIT = 10_000_000  # apiextensions validation.go StaticEstimatedCostLimit
PER_CRD_LIMIT = 100_000_000  # apiextensions validation.go StaticEstimatedCRDCostLimit
_U64 = (1 << 64) - 1
# cel-go common/cost.go
_STRING_FACTOR = 0.1
_REGEX_FACTOR = 0.25
_LIST_BASE, _MAP_BASE, _STRUCT_BASE = 10, 30, 40
_ACCUMULATORS = ("__result__", "@result")
_SCALARS = frozenset({"bool", "int", "uint", "double", "timestamp", "duration"})


class Decl(NamedTuple):
    """A CEL declaration of a schema node (or of a value a rule computes)."""

    kind: str  # object, list, map, string, bytes, int, uint, double, bool, dyn, timestamp, duration, null...
    max_elements: int = 0
    min_size: int = 1  # the fewest bytes its JSON takes
    fields: dict[str, Decl] | None = None  # an object's properties, by their CEL (escaped) names
    elem: Decl | None = None  # a list's items, a map's values


_STRING = Decl("string", 0, 2)
_BOOL, _INT, _UINT, _DOUBLE = Decl("bool", 0, 4), Decl("int"), Decl("uint"), Decl("double")
_DYN = Decl("dyn")


def _list_of(elem: Decl | None) -> Decl:
    return Decl("list", 0, 2, None, elem)


# --- declarations --------------------------------------------------------------------------

def declare(schema: object, resource_root: bool) -> Decl | None:
    """The declaration of a schema node; None where CEL cannot see it (no type,
    an array without items...). ``resource_root``: the root of the resource or
    of an embedded resource, where ``apiVersion``, ``kind`` and
    ``metadata.name``/``generateName`` are always declared."""
    if not isinstance(schema, dict):
        return None
    if schema.get("x-kubernetes-int-or-string") is True:
        return Decl("dyn", _max_length(schema) if _has_max_length(schema) else MAX_REQUEST_BYTES - 2, 1)
    if resource_root:
        schema = _with_type_meta(schema)
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        elem = declare(items, isinstance(items, dict) and items.get("x-kubernetes-embedded-resource") is True)
        if elem is None:
            return None
        most = _bound(schema, "maxItems")
        return Decl("list", most if most is not None else (MAX_REQUEST_BYTES - 2) // (elem.min_size + 1), 2,
                    None, elem)
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            values = declare(extra, extra.get("x-kubernetes-embedded-resource") is True)
            if values is None:
                return None
            most = _bound(schema, "maxProperties")
            return Decl("map", most if most is not None else (MAX_REQUEST_BYTES - 2) // (values.min_size + 6), 2,
                        None, values)
        return _object(schema)
    if kind == "string":
        return _string(schema)
    return {"boolean": _BOOL, "number": _DOUBLE, "integer": _INT}.get(str(kind))


def _object(schema: dict) -> Decl:
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = set(r for r in schema.get("required") or () if isinstance(r, str)) \
        if isinstance(schema.get("required"), list) else set()
    fields: dict[str, Decl] = {}
    smallest = 2  # "{}"
    for name, prop in props.items():
        found = declare(prop, isinstance(prop, dict) and prop.get("x-kubernetes-embedded-resource") is True)
        if found is None:
            continue
        cel_name = escape(str(name))
        if cel_name is not None:
            fields[cel_name] = found
        # a required field the server does not default is always written
        if name in required and isinstance(prop, dict) and prop.get("default") is None:
            smallest += len(str(name).encode()) + found.min_size + 4
    return Decl("object", 0, smallest, fields)


def _string(schema: dict) -> Decl:
    text_format = schema.get("format")
    if text_format == "byte":
        most = _bound(schema, "maxLength")  # bytes: maxLength as it is
        return Decl("bytes", most if most is not None else MAX_REQUEST_BYTES - 2, 2)
    if text_format == "duration":
        return Decl("duration", 32, 3)
    if text_format == "date":
        return Decl("timestamp", 12, 12)
    if text_format == "date-time":
        return Decl("timestamp", 32, 21)
    if _has_max_length(schema):
        return Decl("string", _max_length(schema), 2)
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return Decl("string", max((len(v.encode()) for v in enum if isinstance(v, str)), default=0), 2)
    return Decl("string", MAX_REQUEST_BYTES - 2, 2)


def _has_max_length(schema: dict) -> bool:
    return _bound(schema, "maxLength") is not None


def _max_length(schema: dict) -> int:
    """maxLength counts runes, up to 4 bytes each."""
    return (_bound(schema, "maxLength") or 0) * 4


def _bound(schema: dict, key: str) -> int | None:
    value = schema.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return max(int(value), 0)


def _with_type_meta(schema: dict) -> dict:
    """A resource's root: apiVersion, kind and metadata (name, generateName) declared."""
    props = _mapping(schema.get("properties"))
    meta = _mapping(props.get("metadata"))
    meta_props = _mapping(meta.get("properties"))

    def typed(node: object, kind: str) -> bool:
        return isinstance(node, dict) and node.get("type") == kind
    if (typed(props.get("kind"), "string") and typed(props.get("apiVersion"), "string") and typed(meta, "object")
            and meta_props and typed(meta_props.get("name"), "string")
            and typed(meta_props.get("generateName"), "string")):
        return schema

    def capped(existing: object, most: int) -> dict:
        if isinstance(existing, dict):
            own = _bound(existing, "maxLength")
            if own is not None and own < most:
                most = own
        return {"type": "string", "maxLength": most}
    meta_schema = {"type": "object", "properties": {"name": capped(meta_props.get("name"), 253),
                                                   "generateName": capped(meta_props.get("generateName"), 252)}}
    return {**schema, "properties": {**props, "kind": {"type": "string"}, "apiVersion": {"type": "string"},
                                     "metadata": meta_schema}}


def _mapping(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def unbounded_cardinality(decl: Decl) -> int:
    """How many times a rule may run when a list or map above it has no bound
    (compilation.go maxCardinality)."""
    return MAX_REQUEST_BYTES // (decl.min_size + 1)


# --- the estimate --------------------------------------------------------------------------

class _Entry(NamedTuple):
    """The sizes of a literal list's or map's elements (cel-go entrySizeEstimate)."""

    container: str  # list or map
    key: int | None
    value: int | None


class _Var(NamedTuple):
    path: tuple[str, ...]
    size: int | None
    entry: _Entry | None
    decl: Decl | None


def estimate(expr: cel_ast.Expr, self_decl: Decl) -> int:
    """The largest cost the API server estimates for ``expr`` with ``self``
    declared as ``self_decl`` (a lower bound of it, see the module)."""
    return _Coster(self_decl).cost(expr)


def times(a: int, b: int) -> int:
    """a times b, saturated as cel-go's uint64 arithmetic is."""
    return min(a * b, _U64)


def _add(*values: int) -> int:
    return min(sum(values), _U64)


def _factor(size: int, factor: float) -> int:
    """cel-go multiplyByCostFactor: rounded up, saturated."""
    product = math.ceil(float(size) * factor)
    return _U64 if product >= 2.0 ** 64 else int(product)


class _Coster:
    def __init__(self, root: Decl) -> None:
        self.root = root
        self.paths: dict[int, tuple[str, ...]] = {}
        self.sizes: dict[int, int] = {}
        self.entries: dict[int, _Entry] = {}
        self.decls: dict[int, Decl | None] = {}
        self.scopes: dict[str, list[_Var]] = {}

    # -- scopes
    def _push(self, name: str, var: _Var) -> None:
        self.scopes.setdefault(name, []).append(var)

    def _pop(self, name: str) -> None:
        self.scopes[name].pop()

    def _peek(self, name: str) -> _Var | None:
        found = self.scopes.get(name)
        return found[-1] if found else None

    def _path(self, e: cel_ast.Expr) -> tuple[str, ...]:
        if isinstance(e, cel_ast.Ident):
            var = self._peek(e.name)
            if var is not None:
                return var.path
        return self.paths.get(e.id, ())

    def _decl(self, e: cel_ast.Expr) -> Decl | None:
        return self.decls.get(e.id)

    # -- sizes (cel-go coster.computeSize)
    def size(self, e: cel_ast.Expr) -> int | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        literal = _literal_size(e)
        if literal is not None:
            return literal
        found = self._schema_size(self._path(e))
        if found is not None:
            self.sizes[e.id] = found
            return found
        decl = self._decl(e)
        if decl is not None and decl.kind in _SCALARS:
            return 1
        if isinstance(e, cel_ast.Ident):
            var = self._peek(e.name)
            if var is not None and var.size is not None:
                return var.size
        return None

    def _known(self, e: cel_ast.Expr) -> int:
        """The size where cel-go would know it; 0 (a lower bound) elsewhere."""
        found = self.size(e)
        return found if found is not None else 0

    def _schema_size(self, path: tuple[str, ...]) -> int | None:
        """compilation.go sizeEstimator.EstimateSize: the path's first step is
        the variable, whatever it is; each next step a field, @items, @values
        or @keys."""
        if not path:
            return None
        node: Decl | None = self.root
        for step in path[1:]:
            if node is None:
                return None
            if step in ("@items", "@values"):
                node = node.elem
            elif step == "@keys":
                node = _STRING if node.kind == "map" else None  # apiservercel.StringType: no bound declared
            else:
                node = (node.fields or {}).get(step)
        return node.max_elements if node is not None else None

    def _entry(self, e: cel_ast.Expr) -> _Entry | None:
        if e.id in self.entries:
            return self.entries[e.id]
        if isinstance(e, cel_ast.Ident):
            var = self._peek(e.name)
            if var is not None:
                return var.entry
        return None

    # -- costs
    def cost(self, e: cel_ast.Expr) -> int:
        if isinstance(e, cel_ast.Const):
            self.decls[e.id] = _CONST_DECLS.get(e.kind)
            return 0
        if isinstance(e, cel_ast.Ident):
            return self._ident(e)
        if isinstance(e, cel_ast.Select):
            return self._select(e)
        if isinstance(e, cel_ast.Call):
            return self._call(e)
        if isinstance(e, cel_ast.CreateList):
            return self._list(e)
        if isinstance(e, cel_ast.CreateMap):
            return self._map(e)
        if _is_bind(e):
            return self._bind(e)
        return self._comprehension(e)

    def _ident(self, e: cel_ast.Ident) -> int:
        var = self._peek(e.name)
        self.paths[e.id] = var.path if var is not None else (e.name,)
        if var is not None:
            self.decls[e.id] = var.decl
        elif e.name in ("self", "oldSelf"):
            self.decls[e.id] = self.root
        return 1

    def _select(self, e: cel_ast.Select) -> int:
        total = self.cost(e.operand)  # a presence test costs nothing more (PresenceTestHasCost(false))
        operand = self._decl(e.operand)
        if e.test_only:
            self.decls[e.id] = _BOOL
            return total
        if operand is not None and operand.kind in ("object", "map"):
            total += 1
        self.paths[e.id] = self._path(e.operand) + (e.field,)
        if operand is not None:
            self.decls[e.id] = ((operand.fields or {}).get(e.field) if operand.kind == "object"
                                else operand.elem if operand.kind == "map" else _DYN if operand.kind == "dyn" else None)
        return total

    def _list(self, e: cel_ast.CreateList) -> int:
        total = sum(self.cost(x) for x in e.elements)
        sizes = [self.size(x) for x in e.elements]
        # an element of unknown size makes cel-go's bound the largest; 0 here is below it
        self.entries[e.id] = _Entry("list", 1, max((s or 0 for s in sizes), default=0))
        self.decls[e.id] = _list_of(self._decl(e.elements[0]) if e.elements else None)
        return _add(total, _LIST_BASE)

    def _map(self, e: cel_ast.CreateMap) -> int:
        total = 0
        for entry in e.entries:
            if not isinstance(entry.key, str):
                total += self.cost(entry.key)
            total += self.cost(entry.value)
        if e.message:
            self.decls[e.id] = None
            return _add(total, _STRUCT_BASE)
        keys = [self.size(x.key) for x in e.entries if not isinstance(x.key, str)]
        values = [self.size(x.value) for x in e.entries]
        self.entries[e.id] = _Entry("map", max((s or 0 for s in keys), default=0),
                                    max((s or 0 for s in values), default=0))
        first = e.entries[0].value if e.entries else None
        self.decls[e.id] = Decl("map", 0, 2, None, self._decl(first) if first is not None else None)
        return _add(total, _MAP_BASE)

    def _bind(self, e: cel_ast.Comprehension) -> int:
        total = self.cost(e.iter_range) + self.cost(e.accu_init)
        self._push(e.accu_var, _Var(self._path(e.accu_init), self.size(e.accu_init), self._entry(e.accu_init),
                                    self._decl(e.accu_init)))
        total += self.cost(e.result)
        self._pop(e.accu_var)
        self._copy_sizes(e, e.result)
        self.decls[e.id] = self._decl(e.result)
        return total

    def _comprehension(self, e: cel_ast.Comprehension) -> int:
        total = self.cost(e.iter_range) + self.cost(e.accu_init)
        self._push(e.accu_var, _Var(self._path(e.accu_init), self.size(e.accu_init), self._entry(e.accu_init),
                                    self._decl(e.accu_init)))
        if e.iter_var2:
            return 0  # a two-variable comprehension: not estimated (0 is below any estimate)
        self._push(e.iter_var, self._iteration(e.iter_range))
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self._pop(e.iter_var)
        if isinstance(e.accu_init, cel_ast.CreateList):
            # map() and filter() build a list of what the step appends
            stepped = self._decl(e.loop_step)
            self.scopes[e.accu_var][-1] = self.scopes[e.accu_var][-1]._replace(decl=stepped)
        total += self.cost(e.result)
        self._pop(e.accu_var)
        count = self._known(e.iter_range)  # unknown: cel-go multiplies by the largest size
        total = _add(total, times(count, _add(step, loop)))
        if isinstance(e.accu_init, cel_ast.Const):
            accu = self.size(e.accu_init)
            if accu is not None:
                self.sizes[e.id] = accu
        elif isinstance(e.accu_init, (cel_ast.CreateList, cel_ast.CreateMap)):
            self.sizes[e.id] = count
            stepped_entry = self._entry(e.loop_step)
            if stepped_entry is not None:
                self.entries[e.id] = stepped_entry
        self.decls[e.id] = self._decl(e.result)
        return total

    def _iteration(self, over: cel_ast.Expr) -> _Var:
        """The iteration variable over a list's items or a map's keys (pushIterSingle)."""
        entry = self._entry(over)
        decl = self._decl(over)
        container = entry.container if entry is not None else decl.kind if decl is not None else ""
        path = self._path(over)
        if container == "list":
            return _Var(path + ("@items",), entry.value if entry is not None else None, None,
                        decl.elem if decl is not None and decl.kind == "list" else None)
        key_decl = _STRING if decl is not None and decl.kind == "map" else _DYN if container == "" else None
        return _Var(path + ("@keys",), entry.key if entry is not None else None, None, key_decl)

    def _copy_sizes(self, dst: cel_ast.Expr, src: cel_ast.Expr) -> None:
        found = self.size(src)
        if found is not None:
            self.sizes[dst.id] = found
        entry = self._entry(src)
        if entry is not None:
            self.entries[dst.id] = entry

    # -- calls
    def _call(self, e: cel_ast.Call) -> int:
        if e.function == "dyn" and e.target is None and len(e.args) == 1:
            total = self.cost(e.args[0])
            self._copy_sizes(e, e.args[0])
            self.decls[e.id] = _DYN
            return total + 1
        arg_costs = [self.cost(a) for a in e.args]
        total = 0
        if e.target is not None:
            total += self.cost(e.target)
        self.decls[e.id] = _result_decl(e, self._decl(e.target) if e.target is not None else None,
                                        [self._decl(a) for a in e.args])
        call_cost, result = self._function(e, arg_costs)
        if e.function == "_[_]" and len(e.args) == 2:
            container = self._decl(e.args[0])
            if container is not None and container.kind in ("list", "map"):
                entry = self._entry(e.args[0])
                result = entry.value if entry is not None else None
                self.paths[e.id] = self._path(e.args[0]) + ("@items" if container.kind == "list" else "@values",)
        if result is None:
            result = self.size(e)
        if result is not None:
            self.sizes[e.id] = result
        return _add(total, call_cost)

    def _function(self, e: cel_ast.Call, arg_costs: list[int]) -> tuple[int, int | None]:
        """(cost of the call with its arguments, the size of its result if known)."""
        args = sum(arg_costs)
        library = self._kubernetes(e)
        if library is not None:
            return _add(library[0], args), library[1]
        return self._standard(e, arg_costs)

    def _kubernetes(self, e: cel_ast.Call) -> tuple[int, int | None] | None:
        """k8s.io/apiserver pkg/cel/library/cost.go EstimateCallCost (it is asked first)."""
        name, target, args = e.function, e.target, e.args
        if name in _NOMINAL:
            return 1, None
        if name in _LIST_FUNCTIONS and target is not None:
            target_decl = self._decl(target)
            if target_decl is not None and target_decl.kind in ("list", "map"):
                element = 1
                if target_decl.kind == "list" and target_decl.elem is not None \
                        and target_decl.elem.kind in ("string", "bytes"):
                    path = self._arg_path(target)
                    elem_size = self._schema_size(path + ("@items",)) if path else None
                    element += _factor(elem_size or 0, _STRING_FACTOR)
                return times(self._known(target), element), None
            if target_decl is None:
                return 0, None  # not known to be a list or a string: the cheaper reading
            return (times(self._known(target), 1) if name == "includes"
                    else _factor(self._known(target), _STRING_FACTOR)), None
        if name in ("url", "jsonpatch.escapeKey") and len(args) == 1:
            size = self._known(args[0])
            return _factor(size, _STRING_FACTOR), self.size(args[0])
        if name in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            return _factor(self._known(target), _STRING_FACTOR), self.size(target)
        if name == "replace" and target is not None and len(args) >= 2:
            return _factor(self._known(target), 2 * _STRING_FACTOR), self._replaced(target, args[0], args[1])
        if name == "split" and target is not None:
            most = self.size(target)
            if len(args) > 1 and isinstance(args[1], cel_ast.Const) and args[1].kind == "int":
                most = args[1].value
            return _factor(self._known(target), 2 * _STRING_FACTOR), most
        if name == "join" and target is not None:
            items = self._known(target)
            path = self._arg_path(target)
            target_decl = self._decl(target)
            element = 0
            if target_decl is not None and target_decl.kind == "list":
                element = (self._schema_size(path + ("@items",)) if path else None) or 0
            size = times(items, element)
            if args:
                size = _add(size, times(self._known(args[0]), max(items - 1, 0)))
            return _factor(size, _STRING_FACTOR), size
        if name in ("find", "findAll") and target is not None and args:
            text = _factor(_add(self._known(target), 1), _STRING_FACTOR)
            pattern = _factor(self._known(args[0]), _REGEX_FACTOR)
            return times(text, pattern), self.size(target)
        if name in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver") and args:
            return _factor(self._known(args[0]), _STRING_FACTOR), None
        if name == "ip":
            if target is not None and not args:
                return 1, None  # a CIDR's ip()
            if args:
                return _factor(self._known(args[0]), _STRING_FACTOR), None
        if name == "ip.isCanonical" and args:
            return _factor(self._known(args[0]), 2 * _STRING_FACTOR), None
        if name == "containsIP" and args:
            return _factor(32, _STRING_FACTOR), None  # (4 to 16 bytes) twice; a string argument costs more
        if name == "containsCIDR" and args:
            return _factor(32, _STRING_FACTOR) + _factor(16, _STRING_FACTOR) + 1, None
        if name == "validate" and args:
            return _factor(_factor(self._known(args[0]), _STRING_FACTOR), 128 * _REGEX_FACTOR), None
        return None

    def _replaced(self, text: cel_ast.Expr, old: cel_ast.Expr, new: cel_ast.Expr) -> int | None:
        """The longest result of replace() (cost.go, "replace"): it needs the
        shortest ``old``, known exactly for a literal (its length) or a schema
        field (0)."""
        most, longest_new = self.size(text), self.size(new)
        if isinstance(old, cel_ast.Const) and old.kind == "string":
            shortest_old = len(old.value)
        elif self._schema_size(self._path(old)) is not None:
            shortest_old = 0
        else:
            return None
        if most is None or longest_new is None:
            return None
        if shortest_old == 0:
            return _add(times(_add(most, 1) if most < _U64 else most, longest_new), most)
        if longest_new <= shortest_old:
            return most
        return times(math.ceil(most / shortest_old), longest_new)

    def _arg_path(self, e: cel_ast.Expr) -> tuple[str, ...]:
        """A call argument's path; none for the accumulator (cel-go newAstNode)."""
        path = self._path(e)
        return () if path and path[0] in _ACCUMULATORS else path

    def _standard(self, e: cel_ast.Call, arg_costs: list[int]) -> tuple[int, int | None]:
        """cel-go checker/cost.go functionCost, by the overload the types choose."""
        name, target, args = e.function, e.target, e.args
        total = sum(arg_costs)
        kinds = [self._kind(a) for a in args]
        if name in ("_&&_", "_||_") and len(arg_costs) == 2:
            return total, None
        if name == "_?_:_" and len(arg_costs) == 3:
            left, right = self.size(args[1]), self.size(args[2])
            entries = [self._entry(args[1]), self._entry(args[2])]
            if entries[0] is not None and entries[1] is not None:
                self.entries[e.id] = _Entry(entries[0].container, _max(entries[0].key, entries[1].key),
                                            _max(entries[0].value, entries[1].value))
            size = max(left or 0, right or 0) if left is not None and right is not None else None
            return _add(arg_costs[0], max(arg_costs[1], arg_costs[2])), size
        if name == "matches" and target is not None and len(args) == 1:
            text = _factor(_add(self._known(target), 1), _STRING_FACTOR)
            pattern = _factor(self._known(args[0]), _REGEX_FACTOR)
            return _add(times(text, pattern), total), None
        if name == "contains" and target is not None and len(args) == 1 and self._kind(target) == "string":
            return _add(times(_factor(self._known(target), _STRING_FACTOR),
                             _factor(self._known(args[0]), _STRING_FACTOR)), total), None
        if name in ("startsWith", "endsWith") and target is not None and len(args) == 1:
            return _add(_factor(self._known(args[0]), _STRING_FACTOR), total), None
        if name == "@in" and len(args) == 2 and kinds[1] == "list":
            return _add(self._known(args[1]), total), None
        if name == "@in" and len(args) == 2 and kinds[1] == "map":
            return _add(1, total), None
        if name == "format" and target is not None and self._kind(target) == "string":
            return _add(_factor(self._known(target), _STRING_FACTOR), total), None
        if name == "_+_" and len(args) == 2 and kinds[0] in ("string", "bytes", "list") and kinds[0] == kinds[1]:
            left, right = self.size(args[0]), self.size(args[1])
            size = _add(left, right) if left is not None and right is not None else None
            entries = [self._entry(args[0]), self._entry(args[1])]
            if entries[0] is not None and entries[1] is not None:
                self.entries[e.id] = _Entry(entries[0].container, _max(entries[0].key, entries[1].key),
                                            _max(entries[0].value, entries[1].value))
            if kinds[0] == "list":
                return _add(1, total), size
            return _add(_factor(size or 0, _STRING_FACTOR), total), size
        if name in ("_==_", "_!=_") or (name in ("_<_", "_>_", "_<=_", "_>=_")
                                          and kinds[0] in ("string", "bytes") and kinds[0] == kinds[1]):
            if len(args) == 2:
                left, right = self.size(args[0]), self.size(args[1])
                if left is None or right is None:
                    smallest = min(x for x in (left, right, 0) if x is not None)  # unknown: as small as can be
                else:
                    smallest = min(left, right)
                return _add(_factor(smallest, _STRING_FACTOR), total), None
        if name in ("bytes", "string") and target is None and len(args) == 1 \
                and kinds[0] in ("string", "bytes") and kinds[0] != name:
            return _add(_factor(self._known(args[0]), _STRING_FACTOR), total), None
        if name == "strings.quote" and len(args) == 1:
            return _add(_factor(self._known(args[0]), _STRING_FACTOR), total), None
        if not _is_known_function(e, kinds):
            return total, None  # an overload this module does not know: it costs at least its arguments
        return _add(1, total), None

    def _kind(self, e: cel_ast.Expr) -> str:
        decl = self._decl(e)
        return decl.kind if decl is not None else ""


def _max(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else max(a, b)


def _is_bind(e: cel_ast.Expr) -> bool:
    """cel.bind(): an empty range, a false loop condition, a named accumulator (cel-go coster.isBind)."""
    return (isinstance(e, cel_ast.Comprehension) and isinstance(e.iter_range, cel_ast.CreateList)
            and not e.iter_range.elements and isinstance(e.loop_condition, cel_ast.Const)
            and e.loop_condition.value is False and e.accu_var != "__result__")


def _literal_size(e: cel_ast.Expr) -> int | None:
    """cel-go computeExprSize: a literal's own size."""
    if isinstance(e, cel_ast.Const):
        if e.kind == "string":
            return len(e.value)
        if e.kind == "bytes":
            return len(e.value)
        return 1 if e.kind in ("bool", "double", "int", "uint", "null") else None
    if isinstance(e, cel_ast.CreateList):
        return len(e.elements)
    if isinstance(e, cel_ast.CreateMap) and not e.message:
        return len(e.entries)
    return None


_CONST_DECLS = {"bool": _BOOL, "int": _INT, "uint": _UINT, "double": _DOUBLE, "string": _STRING,
                "bytes": Decl("bytes", 0, 2), "null": Decl("null", 0, 4)}
# functions the Kubernetes estimator prices at 1 whatever their arguments
_NOMINAL = frozenset({"check", "serviceAccount", "path", "group", "resource", "subresource", "namespace", "name",
                      "allowed", "reason", "error", "errored", "format.named", "sign", "asInteger", "isInteger",
                      "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major",
                      "minor", "patch", "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath",
                      "getQuery", "masked", "prefixLength", "family", "isUnspecified", "isLoopback",
                      "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast"})
_LIST_FUNCTIONS = frozenset({"isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes"})
_TIME_PARTS = frozenset({"getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",
                         "getMilliseconds", "getMinutes", "getMonth", "getSeconds"})
# functions whose every overload cel-go prices at 1 plus the arguments (the O(1) default)
_CONSTANT = frozenset({"size", "int", "uint", "double", "string", "bytes", "bool", "type", "duration", "timestamp",
                       "!_", "-_", "_-_", "_*_", "_/_", "_%_", "_<_", "_>_", "_<=_", "_>=_", "@not_strictly_false",
                       "_[_]", "_[?_]", "_?._", "_+_", "optional.of", "optional.none", "matches", "isURL",
                       "optional.ofNonZeroValue", "hasValue", "value", "orValue", "or", "startsWith",
                       "endsWith", "charAt", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear",
                       "getFullYear", "getHours", "getMilliseconds", "getMinutes", "getMonth", "getSeconds"})


def _is_known_function(e: cel_ast.Call, kinds: list[str]) -> bool:
    """Whether cel-go's O(1) default certainly applies to this call."""
    if e.function in ("_+_", "_<_", "_>_", "_<=_", "_>=_"):
        # numbers, timestamps, durations: O(1); strings, bytes and lists were priced above
        return all(k in _SCALARS for k in kinds) and bool(kinds)
    return e.function in _CONSTANT


def _result_decl(e: cel_ast.Call, target: Decl | None, args: list[Decl | None]) -> Decl | None:
    """The declaration of a call's result, where the function says it."""
    name = e.function
    if name in ("_==_", "_!=_", "_<_", "_>_", "_<=_", "_>=_", "_&&_", "_||_", "!_", "@in", "@not_strictly_false",
                "matches", "startsWith", "endsWith", "contains", "isSorted", "hasValue", "isQuantity", "isURL",
                "isIP", "isCIDR", "isSemver", "isInteger", "isGreaterThan", "isLessThan", "sets.contains",
                "sets.equivalent", "sets.intersects", "exists", "all", "exists_one"):
        return _BOOL
    if name in ("size", "indexOf", "lastIndexOf", "int", "sign", "compareTo", "asInteger", "major", "minor",
                "patch", "prefixLength", "family") or name in _TIME_PARTS:
        return _INT
    if name in ("string", "lowerAscii", "upperAscii", "trim", "substring", "replace", "charAt", "format", "join",
                "find", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "strings.quote",
                "reverse"):
        return _STRING
    if name in ("split", "findAll"):
        return _list_of(_STRING)
    if name in ("double", "asApproximateFloat"):
        return _DOUBLE
    if name == "uint":
        return _UINT
    if name == "bool":
        return _BOOL
    if name == "bytes":
        return Decl("bytes", 0, 2)
    if name in ("timestamp", "duration"):
        return Decl(name)
    if name == "dyn":
        return _DYN
    if name == "_?_:_" and len(args) == 3:
        return args[1] if args[1] is not None else args[2]
    if name in ("_[_]",) and len(args) == 2 and args[0] is not None:
        return args[0].elem if args[0].kind in ("list", "map") else _DYN if args[0].kind == "dyn" else None
    if name in ("-_", "_-_", "_*_", "_/_", "_%_") and args and args[0] is not None and args[0].kind in _SCALARS:
        return Decl(args[0].kind)
    if name == "_+_" and len(args) == 2 and args[0] is not None:
        if args[0].kind == "list":
            return _list_of(args[0].elem or (args[1].elem if args[1] is not None else None))
        if args[0].kind in _SCALARS | {"string", "bytes"}:
            return Decl(args[0].kind, 0, args[0].min_size)
    if name in ("sum", "min", "max") and target is not None and target.kind == "list":
        return target.elem
    return None
