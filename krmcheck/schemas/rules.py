"""The API server's field rules that no published schema carries, as facts
in ``field_rules.yaml``, each with the Kubernetes versions it holds for and
the validation function of the API server it mirrors.

A rule names a *place* (where a kind of object sits in which resources: a
pod spec in a Deployment's ``spec.template.spec``, a container in a pod
spec's ``containers[*]``...) and a field below it, and one check:

- ``values``: if the field is present, its value is one of these (for the
  chosen version); with ``required``, a missing field is reported too;
- ``required``: the field is present and not empty (``""``, ``[]``, null);
- ``forbidden``: the field is absent or empty;
- ``range``: an integer value is within ``min``/``max`` (or above
  ``above``), numbers or other fields of the place;
- ``format``: a string value (or each key or value of a map) has a format
  of :mod:`krmcheck.schemas.formats`;
- ``unique``: no two items of one or more lists share a key;
- ``exclusive``: at most one (with ``one-required``: exactly one) of some
  fields of an object is set;
- ``refers``: a value is one of the values found elsewhere in the place;
- ``keys``: a map (or any of several) holds some keys;
- ``disjoint``: no key of one map is a key of another;
- ``resources``: a container's requests are within its limits.

``when`` and ``unless`` narrow a rule to places whose fields have (or do
not have) some values. A finding points at the field that is wrong, or at
the object that lacks a required one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from krmcheck.schemas import formats
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.load import FAST_LOADER

Step = str  # a field name, or "*" for every item of a list
At = tuple[str | int, ...]  # a path inside the resource
Condition = tuple[tuple[Step, ...], tuple[Any, ...]]  # (path from the place, values; None: absent)


class Rule(NamedTuple):
    id: str
    field: tuple[Step, ...]
    values: tuple[tuple[str, tuple[int, int]], ...]  # (value, first version it is accepted in)
    since: tuple[int, int]
    until: tuple[int, int] | None
    kinds: frozenset[str]  # empty: every kind of the place
    required: str  # why a missing field is refused; "" when it may be absent
    source: str
    check: str = "values"  # which family: see the module's docstring
    params: Any = None  # the check's settings, as the table writes them (a dict)
    when: tuple[Condition, ...] = ()  # all must hold
    unless: tuple[Condition, ...] = ()  # none may hold
    why: str = ""  # what the finding adds: why the API server refuses it

    def holds(self, version: tuple[int, int]) -> bool:
        return self.since <= version and (self.until is None or version <= self.until)

    def allowed(self, version: tuple[int, int]) -> list[str]:
        return [value for value, since in self.values if since <= version]


class Violation(NamedTuple):
    rule: Rule
    path: At  # where the finding points: the field, or the object lacking it
    message: str


def steps(path: str) -> tuple[Step, ...]:
    """``containers[*].ports[*].protocol`` -> ("containers", "*", "ports", "*", "protocol")."""
    out: list[Step] = []
    for part in path.split(".") if path else []:
        name, lists = part, 0
        while name.endswith("[*]"):
            name, lists = name[:-3], lists + 1
        out += ([name] if name else []) + ["*"] * lists
    return tuple(out)


def version_of(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


@functools.cache
def table() -> dict[tuple[str, str], tuple[tuple[tuple[Step, ...], Rule], ...]]:
    """(apiVersion, kind) -> every (path to the place, allowed-values rule) that applies."""
    return {key: found for key, found in ((key, tuple((p, r) for p, r in found if r.check == "values"))
                                          for key, found in every_rule().items()) if found}


@functools.cache
def every_rule() -> dict[tuple[str, str], tuple[tuple[tuple[Step, ...], Rule], ...]]:
    """(apiVersion, kind) -> every (path to the place, rule) that applies, of every family."""
    return {key: tuple((prefix, rule) for prefix, rules in groups for rule in rules)
            for key, groups in _grouped().items()}


@functools.cache
def _grouped() -> dict[tuple[str, str], tuple[tuple[tuple[Step, ...], tuple[Rule, ...]], ...]]:
    """(apiVersion, kind) -> (path to a place, the rules there), each path once."""
    text = Path(__file__).with_name("field_rules.yaml").read_text(encoding="utf-8")
    doc: dict[str, Any] = yaml.load(text, Loader=FAST_LOADER)
    places = {name: _flatten(name, doc["places"]) for name in doc["places"]}
    out: dict[tuple[str, str], dict[tuple[Step, ...], list[Rule]]] = {}
    for entry in doc["rules"]:
        rule = _rule(entry)
        for api_version, kind, prefix in places[entry["place"]]:
            if not rule.kinds or kind in rule.kinds:
                out.setdefault((api_version, kind), {}).setdefault(prefix, []).append(rule)
    return {key: tuple((prefix, tuple(rules)) for prefix, rules in found.items()) for key, found in out.items()}


def _flatten(name: str, places: dict[str, list[dict[str, Any]]]) -> list[tuple[str, str, tuple[Step, ...]]]:
    """A place as (apiVersion, kind, path from the resource's root)."""
    out = []
    for entry in places[name]:
        here = steps(entry.get("path", ""))
        if "within" in entry:
            out += [(a, k, outer + here) for a, k, outer in _flatten(entry["within"], places)]
        else:
            out += [(a, k, here) for a in entry["apiVersions"] for k in entry["kinds"]]
    return out


_FAMILIES = ("values", "required", "forbidden", "range", "format", "unique", "exclusive", "refers", "keys",
             "disjoint", "resources")


def _rule(entry: dict[str, Any]) -> Rule:
    since = version_of(str(entry["since"]))
    until = version_of(str(entry["until"])) if entry.get("until") else None
    family = _family(entry)
    values = tuple((str(v["value"]), version_of(str(v["since"]))) if isinstance(v, dict) else (str(v), since)
                   for v in entry.get("values") or ())
    # a values rule's `required` says why a missing field is refused; a
    # required or forbidden rule's setting is why, the other families' why is their own
    why = entry.get(family) if family in ("required", "forbidden") else entry.get("why")
    return Rule(entry["id"], steps(entry.get("field", "")), values, since, until,
                frozenset(entry.get("kinds") or ()), str(entry.get("required") or "") if family == "values" else "",
                entry["source"], family, _params(entry, family), _conditions(entry.get("when")),
                _conditions(entry.get("unless")), str(why or ""))


def _family(entry: dict[str, Any]) -> str:
    """The family a table entry belongs to: the one key of _FAMILIES it has
    (``values`` wins: a values rule may also say ``required``)."""
    return "values" if "values" in entry else next((f for f in _FAMILIES[1:] if f in entry), "values")


def _params(entry: dict[str, Any], family: str) -> dict[str, Any]:
    if family in ("values", "required", "forbidden"):
        return {k: entry[k] for k in ("empty-only", "zero-unset") if k in entry}
    written = entry[family]
    params = {"name": written} if isinstance(written, str) else written if isinstance(written, dict) else {}
    if family == "format" and params.get("name") not in formats.FORMATS:
        raise ValueError(f"field_rules.yaml: rule {entry['id']}: unknown format {params.get('name')!r}")
    return params


def _conditions(written: dict[str, list[Any]] | None) -> tuple[Condition, ...]:
    return tuple((steps(path), tuple(values)) for path, values in (written or {}).items())


def check(item: Mapping, api_version: str, kind: str, version: str) -> list[Violation]:
    """Every rule of ``version`` that the resource breaks."""
    out: list[Violation] = []
    trie = _trie().get((api_version, kind))
    if trie is not None:
        _visit(item, trie, (), version_of(version), out)
    return out


class _Trie(NamedTuple):
    rules: list[Rule]  # the rules whose place is this path
    children: dict[Step, "_Trie"]


@functools.cache
def _trie() -> dict[tuple[str, str], _Trie]:
    """Each kind's places as a tree of steps, so that a resource is walked
    once, and no further than the fields it has."""
    out: dict[tuple[str, str], _Trie] = {}
    for key, groups in _grouped().items():
        root = out[key] = _Trie([], {})
        for prefix, rules in groups:
            node = root
            for step in prefix:
                node = node.children.setdefault(step, _Trie([], {}))
            node.rules.extend(rules)
    return out


def _visit(node: Node, trie: _Trie, at: At, version: tuple[int, int], out: list[Violation]) -> None:
    for rule in trie.rules:
        if rule.holds(version) and _applies(node, rule):
            out.extend(_JUDGES[rule.check](node, at, rule, version))
    for step, child in trie.children.items():
        if step == "*":
            if isinstance(node, Sequence):
                for i, item in enumerate(node.items):
                    _visit(item, child, at + (i,), version, out)
        elif isinstance(node, Mapping) and step in node.items:
            _visit(node.items[step], child, at + (step,), version, out)


# -- what a place holds ----------------------------------------------------------

def _present(node: Node | None, zero_unset: bool = False) -> bool:
    """Whether a field is set as the API server sees it: null, "" and an empty
    list are its zero values; an object, even empty, is set. A number is set,
    0 too (optional numbers are pointers), unless ``zero_unset`` (a plain
    int32, such as a Service port's ``nodePort``)."""
    if node is None:
        return False
    if isinstance(node, Scalar):
        if zero_unset and node.value == 0 and not isinstance(node.value, bool):
            return False
        return node.value is not None and node.value != ""
    if isinstance(node, Sequence):
        return bool(node.items)
    return True


def _lookup(node: Node, path: tuple[Step, ...]) -> Node | None:
    """The node at ``path`` below ``node`` (no fan-out), or None."""
    for step in path:
        if not isinstance(node, Mapping) or step not in node.items:
            return None
        node = node.items[step]
    return node


def _matches(node: Node | None, values: tuple[Any, ...]) -> bool:
    if not _present(node):
        return None in values
    if "*" in values:
        return True
    return isinstance(node, Scalar) and node.value in values


def _applies(place: Node, rule: Rule) -> bool:
    return (all(_matches(_lookup(place, path), values) for path, values in rule.when)
            and not any(_matches(_lookup(place, path), values) for path, values in rule.unless))


def _walk(node: Node, path: tuple[Step, ...], at: At) -> Iterator[tuple[Node, At]]:
    """Every node at ``path`` below ``node`` (``*`` fans out over list items)."""
    if not path:
        yield node, at
        return
    head, rest = path[0], path[1:]
    if head == "*":
        if isinstance(node, Sequence):
            for i, child in enumerate(node.items):
                yield from _walk(child, rest, at + (i,))
    elif isinstance(node, Mapping) and head in node.items:
        yield from _walk(node.items[head], rest, at + (head,))


def _scalars(place: Node, path: tuple[Step, ...], at: At) -> Iterator[tuple[Scalar, At]]:
    for node, where in _walk(place, path, at):
        if isinstance(node, Scalar):
            yield node, where


def _integer(node: Node | None) -> int | None:
    if isinstance(node, Scalar) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _because(rule: Rule) -> str:
    return f": {rule.why}" if rule.why else ""


# -- the families ------------------------------------------------------------------

Judge = Callable[[Node, At, Rule, tuple[int, int]], Iterator[Violation]]


def _judge_values(place: Node, at: At, rule: Rule, version: tuple[int, int]) -> Iterator[Violation]:
    allowed = rule.allowed(version)
    name = rule.field[-1]
    for parent, where in _walk(place, rule.field[:-1], at):
        values: list[tuple[str | int, Node]]
        if name == "*":  # a list of values (accessModes, policyTypes...)
            values = list(enumerate(parent.items)) if isinstance(parent, Sequence) else []
        elif isinstance(parent, Mapping):
            if name not in parent.items:
                if rule.required:
                    yield Violation(rule, where, f"missing required field {name!r}: must be one of "
                                                 f"{_listed(allowed)}; {rule.required}")
                continue
            values = [(name, parent.items[name])]
        else:
            continue
        for key, node in values:
            if isinstance(node, Scalar) and isinstance(node.value, str) and node.value not in allowed:
                yield Violation(rule, where + (key,), f"{node.value!r} is not one of {_listed(allowed)} "
                                                      f"(the API server refuses it in Kubernetes "
                                                      f"{version[0]}.{version[1]}){_because(rule)}")


def _listed(values: list[str]) -> str:
    # "" (accepted where defaulting fills it in) is no advice to anyone
    return ", ".join(v for v in values if v)


def _judge_required(place: Node, at: At, rule: Rule, version: tuple[int, int]) -> Iterator[Violation]:
    name = rule.field[-1]
    for parent, where in _walk(place, rule.field[:-1], at):
        if not isinstance(parent, Mapping):
            continue
        if name not in parent.items:
            if not rule.params.get("empty-only"):  # the schema reports it missing
                yield Violation(rule, where, f"missing required field {name!r}{_because(rule)}")
        elif not _present(parent.items[name]):
            yield Violation(rule, where + (name,), f"must not be empty{_because(rule)}")


def _judge_forbidden(place: Node, at: At, rule: Rule, version: tuple[int, int]) -> Iterator[Violation]:
    name = rule.field[-1]
    for parent, where in _walk(place, rule.field[:-1], at):
        if isinstance(parent, Mapping) and _present(parent.items.get(name), bool(rule.params.get("zero-unset"))):
            yield Violation(rule, where + (name,), f"must not be set{_because(rule)}")


def _bound(place: Node, written: Any) -> tuple[int, str] | None:
    """A bound as (value, how the message names it): a number, or
    ``{field: path, default: n}``, another field of the place."""
    if isinstance(written, dict):
        value = _integer(_lookup(place, steps(written["field"])))
        if value is None:
            value = written.get("default")
        return None if value is None else (int(value), f"{written['field']} ({value})")
    return None if written is None else (int(written), str(written))


def _judge_range(place: Node, at: At, rule: Rule, version: tuple[int, int]) -> Iterator[Violation]:
    low, high = _bound(place, rule.params.get("min")), _bound(place, rule.params.get("max"))
    above = _bound(place, rule.params.get("above"))
    numbers = isinstance(rule.params.get("min"), int) and isinstance(rule.params.get("max"), int)
    for node, where in _scalars(place, rule.field, at):
        value = _integer(node)
        if value is None:
            continue  # a string (an int-or-string, a ${VAR}) is not judged here
        if above is not None and value <= above[0]:
            problem = f"must be greater than {above[1]}"
        elif (low is not None and value < low[0]) or (high is not None and value > high[0]):
            problem = (f"must be between {low[1]} and {high[1]}" if numbers and low and high
                       else f"must be at least {low[1]}" if low is not None and value < low[0]
                       else f"must be at most {high[1]}" if high is not None else "")
        else:
            continue
        yield Violation(rule, where, f"{value} {problem}{_because(rule)}")


def _judge_format(place: Node, at: At, rule: Rule, version: tuple[int, int]) -> Iterator[Violation]:
    name = rule.params["name"]
    problem_of = formats.FORMATS[name]
    what = rule.params.get("what") or name.replace("-", " ")
    allow_empty = bool(rule.params.get("allow-empty"))
    of = rule.params.get("of", "value")
    for node, where in _walk(place, rule.field, at):
        texts: list[tuple[At, Any]]
        if of == "value":
            texts = [(where, node.value)] if isinstance(node, Scalar) else []
        elif isinstance(node, Mapping):
            texts = [(where + (key,), key if of == "keys" else _string(child)) for key, child in node.items.items()]
        else:
            continue
        for path, text in texts:
            if not isinstance(text, str) or (allow_empty and text == "") or formats.to_be_replaced(text):
                continue
            problem = problem_of(text)
            if problem:
                yield Violation(rule, path, f"{text!r} is not a valid {what}: {problem}{_because(rule)}")


def _string(node: Node) -> str | None:
    return node.value if isinstance(node, Scalar) and isinstance(node.value, str) else None


def _judge_unique(place: Node, at: At, rule: Rule, version: tuple[int, int]) -> Iterator[Violation]:
    keys = [steps(k) for k in _as_list(rule.params.get("key"))]  # none: the item itself
    defaults = {k: v for k, v in (rule.params.get("defaults") or {}).items()}
    what = rule.params.get("what", "entry")
    lists = [rule.field] + [steps(p) for p in _as_list(rule.params.get("also"))]
    several = rule.params.get("required-if-many")
    seen: dict[tuple[Any, ...], At] = {}
    for path in lists:
        for node, where in _walk(place, path, at):
            if not isinstance(node, Sequence):
                continue
            for i, item in enumerate(node.items):
                key = _key_of(item, keys, defaults)
                if key is None:
                    if several and len(node.items) > 1 and isinstance(item, Mapping) and \
                            not _present(_lookup(item, keys[0])):
                        yield Violation(rule, where + (i,), f"missing required field {'.'.join(keys[0])!r}: "
                                                            f"{several}")
                    continue
                if key in seen:
                    first = seen[key]
                    shown = key[0] if len(key) == 1 else "/".join(str(k) for k in key)
                    point = where + (i,) + (tuple(keys[0]) if len(keys) == 1 else ())
                    yield Violation(rule, point, f"duplicate {what} {shown!r}: {_spelled(first, at)} has it "
                                                 f"too{_because(rule)}")
                else:
                    seen[key] = where + (i,)


def _key_of(item: Node, keys: list[tuple[Step, ...]], defaults: dict[str, Any]) -> tuple[Any, ...] | None:
    if not keys:  # a list of plain values
        return (item.value,) if isinstance(item, Scalar) and _present(item) else None
    out = []
    for key in keys:
        node = _lookup(item, key)
        if _present(node) and isinstance(node, Scalar):
            if isinstance(node.value, str) and formats.to_be_replaced(node.value):
                return None  # what it will be is not known yet
            out.append(node.value)
        elif not _present(node) and ".".join(key) in defaults:
            out.append(defaults[".".join(key)])
        else:
            return None  # a missing or empty key is another rule's business
    return tuple(out)


def _spelled(path: At, within: At) -> str:
    from krmcheck.tree import fieldpath  # loaded by the first finding

    return fieldpath.dotted(path[len(within):]) or "the same place"


def _as_list(value: Any) -> list[Any]:
    return [] if value is None else list(value) if isinstance(value, (list, tuple)) else [value]


def _judge_exclusive(place: Node, at: At, rule: Rule, version: tuple[int, int]) -> Iterator[Violation]:
    members = _as_list(rule.params.get("of"))
    needed = rule.params.get("one-required")
    zero_unset = bool(rule.params.get("zero-unset"))
    for node, where in _walk(place, rule.field, at):
        if not isinstance(node, Mapping):
            continue
        present = [m for m in members if _present(node.items.get(m), zero_unset)]
        for other in present[1:] if not rule.params.get("allow-many") else ():
            yield Violation(rule, where + (other,), f"may not be set together with {present[0]!r}"
                                                    f"{_because(rule)}")
        if not present and needed:
            yield Violation(rule, where, f"must set one of {', '.join(members)}: {needed}")


def _judge_refers(place: Node, at: At, rule: Rule, version: tuple[int, int]) -> Iterator[Violation]:
    names: set[Any] = set()
    for path in _as_list(rule.params.get("in")):
        names.update(node.value for node, _ in _scalars(place, steps(path), at))
    if any(isinstance(n, str) and formats.to_be_replaced(n) for n in names):
        return  # a name still to be substituted may be the one referred to
    what = rule.params.get("what", "entry")
    for path in [rule.field] + [steps(p) for p in _as_list(rule.params.get("also"))]:
        for node, where in _scalars(place, path, at):
            value = node.value
            if isinstance(value, str) and value and value not in names and not formats.to_be_replaced(value):
                yield Violation(rule, where, f"{value!r} names no {what}{_because(rule)}")


def _judge_keys(place: Node, at: At, rule: Rule, version: tuple[int, int]) -> Iterator[Violation]:
    maps = _as_list(rule.params.get("in"))
    wanted = _as_list(rule.params.get("keys"))
    found: set[str] = set()
    for name in maps:  # "metrics[*]": the maps of every item of a list
        for node, _ in _walk(place, steps(name), at):
            if isinstance(node, Mapping):
                found.update(node.items)
    missing = [k for k in wanted if k not in found]
    if missing and (not rule.params.get("any") or len(missing) == len(wanted)):
        # at the first of the maps that is there (for a[*], the list a), else at the place
        heads = [path[:path.index("*")] if "*" in path else path for path in map(steps, maps)]
        where = next((at + head for head in heads if head and isinstance(_lookup(place, head), (Mapping, Sequence))),
                     at)
        listed = " or ".join(repr(k) for k in missing) if rule.params.get("any") else \
            ", ".join(repr(k) for k in missing)
        yield Violation(rule, where, f"missing key {listed} in {' or '.join(maps)}{_because(rule)}")


def _judge_disjoint(place: Node, at: At, rule: Rule, version: tuple[int, int]) -> Iterator[Violation]:
    other = _lookup(place, steps(rule.params["with"]))
    if not isinstance(other, Mapping):
        return
    for node, where in _walk(place, rule.field, at):
        if isinstance(node, Mapping):
            for key in node.items:
                if key in other.items:
                    yield Violation(rule, where + (key,), f"key {key!r} is also in {rule.params['with']}"
                                                          f"{_because(rule)}")


def _judge_resources(place: Node, at: At, rule: Rule, version: tuple[int, int]) -> Iterator[Violation]:
    for node, where in _walk(place, rule.field, at):
        requests = node.items.get("requests") if isinstance(node, Mapping) else None
        limits = node.items.get("limits") if isinstance(node, Mapping) else None
        if not isinstance(requests, Mapping):
            continue
        for name, value in requests.items.items():
            request = formats.quantity(value.value) if isinstance(value, Scalar) else None
            if request is None or not isinstance(value, Scalar):
                continue
            limit_node = limits.items.get(name) if isinstance(limits, Mapping) else None
            limit = formats.quantity(limit_node.value) if isinstance(limit_node, Scalar) else None
            shown = _shown(limit_node) if isinstance(limit_node, Scalar) else ""
            problem = _request_problem(name, request, limit, shown, limit_node is not None)
            if problem:
                yield Violation(rule, where + ("requests", name), f"{_shown(value)} {problem}")


def _request_problem(name: str, request: Decimal, limit: Decimal | None, shown: str, limited: bool) -> str | None:
    # IsOvercommitAllowed: native resources (no domain, or *kubernetes.io/)
    # except hugepages may ask for less than their limit; the others
    # (hugepages, extended resources such as nvidia.com/gpu) may not
    overcommit = ("/" not in name or "kubernetes.io/" in name) and not name.startswith("hugepages-")
    if limit is not None:
        if not overcommit and request != limit:
            return f"must equal the {name} limit ({shown}): {name} cannot be overcommitted"
        if request > limit:
            return f"must be less than or equal to the {name} limit ({shown})"
    elif not overcommit and not limited:
        return (f"needs a limit of {name} too: {name} cannot be overcommitted, so the API server refuses "
                "a request without a limit")
    return None


def _shown(node: Scalar) -> str:
    return repr(node.value) if isinstance(node.value, str) else str(node.value)


_JUDGES: dict[str, Judge] = {
    "values": _judge_values,
    "required": _judge_required,
    "forbidden": _judge_forbidden,
    "range": _judge_range,
    "format": _judge_format,
    "unique": _judge_unique,
    "exclusive": _judge_exclusive,
    "refers": _judge_refers,
    "keys": _judge_keys,
    "disjoint": _judge_disjoint,
    "resources": _judge_resources,
}
