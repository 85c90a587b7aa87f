"""The API server's field rules that no published schema carries: allowed
values of fields of built-in kinds (``imagePullPolicy``, Service ``type``,
port ``protocol``, strategy types, ``restartPolicy`` per workload...), as
facts in ``field_rules.yaml``, each with the Kubernetes versions it holds
for and where the API server enforces it.

A rule names a *place* (where a kind of object sits in which resources: a
pod spec in a Deployment's ``spec.template.spec``, a container in a pod
spec's ``containers[*]``...) and a field below it; if the field is present,
its value must be one of the rule's values for the chosen Kubernetes
version. A ``required`` rule also reports the field missing, at the object
that lacks it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.load import FAST_LOADER

Step = str  # a field name, or "*" for every item of a list


class Rule(NamedTuple):
    id: str
    field: tuple[Step, ...]
    values: tuple[tuple[str, tuple[int, int]], ...]  # (value, first version it is accepted in)
    since: tuple[int, int]
    until: tuple[int, int] | None
    kinds: frozenset[str]  # empty: every kind of the place
    required: str  # why a missing field is refused; "" when it may be absent
    source: str

    def holds(self, version: tuple[int, int]) -> bool:
        return self.since <= version and (self.until is None or version <= self.until)

    def allowed(self, version: tuple[int, int]) -> list[str]:
        return [value for value, since in self.values if since <= version]


class Violation(NamedTuple):
    rule: Rule
    path: tuple[str | int, ...]  # where the finding points: the field, or the object lacking it
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
    """(apiVersion, kind) -> every (path to the place, rule) that applies."""
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


def _rule(entry: dict[str, Any]) -> Rule:
    since = version_of(str(entry["since"]))
    values = tuple((str(v["value"]), version_of(str(v["since"]))) if isinstance(v, dict) else (str(v), since)
                   for v in entry["values"])
    until = version_of(str(entry["until"])) if entry.get("until") else None
    return Rule(entry["id"], steps(entry["field"]), values, since, until,
                frozenset(entry.get("kinds") or ()), str(entry.get("required") or ""), entry["source"])


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


def _visit(node: Node, trie: _Trie, at: tuple[str | int, ...], version: tuple[int, int],
           out: list[Violation]) -> None:
    for rule in trie.rules:
        if rule.holds(version):
            out.extend(_judge(node, at, rule, version))
    for step, child in trie.children.items():
        if step == "*":
            if isinstance(node, Sequence):
                for i, item in enumerate(node.items):
                    _visit(item, child, at + (i,), version, out)
        elif isinstance(node, Mapping) and step in node.items:
            _visit(node.items[step], child, at + (step,), version, out)


def _judge(place: Node, at: tuple[str | int, ...], rule: Rule, version: tuple[int, int]) -> Iterator[Violation]:
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
                                                      f"{version[0]}.{version[1]})")


def _listed(values: list[str]) -> str:
    # "" (accepted where defaulting fills it in) is no advice to anyone
    return ", ".join(v for v in values if v)


def _walk(node: Node, path: tuple[Step, ...], at: tuple[str | int, ...]) -> Iterator[tuple[Node, tuple[str | int, ...]]]:
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
