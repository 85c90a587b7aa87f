"""What is secret in a build: the values a Secret's ``data`` and
``stringData`` hold (as messages may spell them: decoded, line by line),
where Secret data was written, and a ``secretGenerator``'s literal values.
The build notes them as it reads and makes resources; ``krmcheck.redact``
masks them in what leaves a root's check."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from collections.abc import Iterable

from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, walk
from krmcheck.tree.origin import Location

ANYWHERE = 8  # values this long are masked wherever they occur


def secret_values(resources: Iterable[Resource]) -> frozenset[str]:
    """Every value held in ``data`` or ``stringData`` of the Secrets."""
    found: set[str] = set()
    for res in resources:
        if res.kind != "Secret":
            continue
        for key in ("data", "stringData"):
            held = res.node.items.get(key)
            for node in (walk(held) if held is not None else ()):
                if isinstance(node, Scalar) and node.value not in (None, ""):
                    found.update(spellings(node))
                    if key == "data":
                        found.update(_decoded(node.as_string()))
                    else:  # as a function that moves it to data would write it
                        found.add(base64.b64encode(node.as_string().encode("utf-8")).decode("ascii"))
    return frozenset(v for v in found if v.strip())


def secret_places(resources: Iterable[Resource]) -> frozenset[Location]:
    """Where each value held in ``data`` or ``stringData`` of the Secrets
    was written: the origin of each of its scalars."""
    return frozenset(node.origin.location for res in resources if res.kind == "Secret"
                     for key in ("data", "stringData") if res.node.items.get(key) is not None
                     for node in walk(res.node.items[key]) if isinstance(node, Scalar))


# What a program the build ran wrote (kustomize/fn): where it took a value from is unknown.
PROGRAMS = frozenset({"function", "plugin"})


@dataclasses.dataclass(frozen=True)
class Secrets:
    """What one root's build knew to be secret: the values (as messages may
    spell them), where Secret data was written, and values known without a
    place (the variables a controller took from Secrets)."""

    values: frozenset[str]
    places: frozenset[Location] = frozenset()
    unplaced: frozenset[str] = frozenset()

    def public(self, node: Node) -> bool:
        """Whether ``node`` demonstrably did not come from a Secret."""
        if any(o.location in self.places or o.by in PROGRAMS for o in (node.origin, *node.trail)):
            return False
        return not (isinstance(node, Scalar) and self.unplaced and spellings(node) & self.unplaced)


def generator_inputs(entry: Node) -> frozenset[str]:
    """The values of a ``secretGenerator`` entry's literals (``KEY=VALUE``;
    a literal without ``=`` may be a bare secret, so it counts whole)."""
    literals = entry.items.get("literals") if isinstance(entry, Mapping) else None
    found: set[str] = set()
    for item in (literals.items if isinstance(literals, Sequence) else ()):
        if not isinstance(item, Scalar) or item.value is None:
            continue
        literal = item.as_string()
        _, eq, value = literal.partition("=")
        if not eq:
            found.add(literal)
            continue
        found.add(value)
        if len(value) > 1 and value[0] == value[-1] and value[0] in "\"'":
            found.add(value[1:-1])  # the generator drops one pair of quotes
    return frozenset(v for v in found if v.strip())


def spellings(node: Scalar) -> set[str]:
    """A scalar as written, and as a message prints its value (``0x1F`` is 31)."""
    value = node.value
    if isinstance(value, str):
        return {value, *_lines(value)}
    return {node.as_string(), json.dumps(value)}


def _decoded(text: str) -> list[str]:
    """The text base64 holds (kustomize wraps long values in lines)."""
    try:
        raw = base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return []
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return text.split()
    return [decoded, *_lines(decoded), *text.split()]


def _lines(text: str) -> list[str]:
    """The lines of a value of several lines (a key file, a .env file) that
    are long enough to mask anywhere: a short line ("data:", "}") says nothing."""
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if len(line) >= ANYWHERE] if len(lines) > 1 else []
