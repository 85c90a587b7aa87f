"""The provenance tree: YAML values whose every node knows where it came from.

A rendered resource is a tree of :class:`Mapping`, :class:`Sequence` and
:class:`Scalar` nodes. Each node has an ``origin`` (who wrote it last, and
where) and a ``trail`` of earlier writers, oldest first. Transformers move and
rewrite nodes; the origin travels with the node, so no side table is needed.

For a value inside a mapping, the origin is the position of its key: that is
the line a person edits to change it.

``share()`` is a copy that costs nothing until it is looked into: the
builder hands each overlay shares of a base's cached resources, and a
mapping or sequence copies its children (as shares again) only when its
``items`` are first read. Its source must never change afterwards (the
builder's cached renders never do); ``copy()`` is for sources that may.
"""

from __future__ import annotations

from typing import Iterator, Union

from krmcheck.tree.origin import Origin, UNKNOWN

Value = Union[str, int, float, bool, None]
Data = Union[Value, dict, list]


class Node:
    __slots__ = ("origin", "trail")

    origin: Origin
    trail: tuple[Origin, ...]

    def __init__(self, origin: Origin = UNKNOWN, trail: tuple[Origin, ...] = ()) -> None:
        self.origin = origin
        self.trail = trail

    def rewrite(self, origin: Origin) -> None:
        """Record that ``origin`` wrote this node; the old writer joins the trail."""
        if origin != self.origin:
            self.trail = self.trail + (self.origin,)
            self.origin = origin

    def copy(self) -> "Node":
        raise NotImplementedError

    def share(self) -> "Node":
        """A copy made as it is looked into (see the module's docstring)."""
        raise NotImplementedError

    def to_data(self) -> Data:
        raise NotImplementedError


class Scalar(Node):
    """A scalar with its kustomize-resolved value.

    ``text`` is the source spelling of a plain scalar (None when quoted or
    made by code): kustomize stringifies label and annotation values from it
    (``True`` stays ``"True"``).
    """

    __slots__ = ("value", "text")

    def __init__(self, value: Value, origin: Origin = UNKNOWN,
                 trail: tuple[Origin, ...] = (), text: str | None = None) -> None:
        self.origin = origin
        self.trail = trail
        self.value = value
        self.text = text

    def copy(self) -> "Scalar":
        return Scalar(self.value, self.origin, self.trail, self.text)

    share = copy  # a scalar is as cheap to copy as to share

    def to_data(self) -> Value:
        return self.value

    def as_string(self) -> str:
        """The value as kustomize's map[string]string conversion gives it."""
        if self.text is not None:
            return self.text
        v = self.value
        if v is None:
            return ""
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v)

    def set(self, value: Value, origin: Origin) -> None:
        self.value = value
        self.text = None
        self.rewrite(origin)

    def __repr__(self) -> str:
        return f"Scalar({self.value!r} @ {self.origin})"


class Mapping(Node):
    __slots__ = ("items", "_src")

    def __init__(self, items: dict[str, Node] | None = None, origin: Origin = UNKNOWN,
                 trail: tuple[Origin, ...] = ()) -> None:
        self.origin = origin
        self.trail = trail
        self.items = items if items is not None else {}
        self._src: Mapping | None = None

    def __getattr__(self, name: str) -> dict[str, Node]:
        # Reached only while the ``items`` slot is unset: a share, copied now.
        if name != "items":
            raise AttributeError(name)
        src = self._src
        assert src is not None
        self.items = items = {k: v.share() for k, v in src.items.items()}
        self._src = None
        return items

    def copy(self) -> "Mapping":
        return Mapping({k: v.copy() for k, v in self.items.items()}, self.origin, self.trail)

    def share(self) -> "Mapping":
        shared = Mapping.__new__(Mapping)
        shared.origin, shared.trail = self.origin, self.trail
        # a share not yet looked into has its source's items: share that source
        shared._src = self._src if self._src is not None else self
        return shared

    def to_data(self) -> dict:
        return {k: v.to_data() for k, v in self.view().items()}

    def view(self) -> dict[str, Node]:
        """The items, to read only: a share not yet looked into shows its
        source's (the same values and origins) without copying them."""
        try:
            return _MAPPING_ITEMS.__get__(self, Mapping)  # type: ignore[no-any-return]
        except AttributeError:
            assert self._src is not None
            return self._src.items

    def get(self, key: str) -> Node | None:
        return self.items.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self.items

    def value(self, key: str, default: Value = None) -> Value:
        """The value of a scalar child, or ``default``."""
        n = self.view().get(key)
        return n.value if isinstance(n, Scalar) else default

    def mapping(self, key: str) -> "Mapping | None":
        n = self.items.get(key)
        return n if isinstance(n, Mapping) else None

    def sequence(self, key: str) -> "Sequence | None":
        n = self.items.get(key)
        return n if isinstance(n, Sequence) else None

    def setdefault_mapping(self, key: str, origin: Origin) -> "Mapping":
        n = self.items.get(key)
        if not isinstance(n, Mapping):
            n = Mapping({}, origin)
            self.items[key] = n
        return n

    def __repr__(self) -> str:
        return f"Mapping({list(self.items)} @ {self.origin})"


class Sequence(Node):
    __slots__ = ("items", "_src")

    def __init__(self, items: list[Node] | None = None, origin: Origin = UNKNOWN,
                 trail: tuple[Origin, ...] = ()) -> None:
        self.origin = origin
        self.trail = trail
        self.items = items if items is not None else []
        self._src: Sequence | None = None

    def __getattr__(self, name: str) -> list[Node]:
        # Reached only while the ``items`` slot is unset: a share, copied now.
        if name != "items":
            raise AttributeError(name)
        src = self._src
        assert src is not None
        self.items = items = [v.share() for v in src.items]
        self._src = None
        return items

    def copy(self) -> "Sequence":
        return Sequence([v.copy() for v in self.items], self.origin, self.trail)

    def share(self) -> "Sequence":
        shared = Sequence.__new__(Sequence)
        shared.origin, shared.trail = self.origin, self.trail
        shared._src = self._src if self._src is not None else self
        return shared

    def to_data(self) -> list:
        return [v.to_data() for v in self.view()]

    def view(self) -> list[Node]:
        """The items, to read only (see :meth:`Mapping.view`)."""
        try:
            return _SEQUENCE_ITEMS.__get__(self, Sequence)  # type: ignore[no-any-return]
        except AttributeError:
            assert self._src is not None
            return self._src.items

    def __iter__(self) -> Iterator[Node]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"Sequence({len(self.items)} @ {self.origin})"


_MAPPING_ITEMS = Mapping.__dict__["items"]  # the slot itself: reading it never copies
_SEQUENCE_ITEMS = Sequence.__dict__["items"]


def from_data(data: Data, origin: Origin) -> Node:
    """Build a tree from plain Python data, every node written by ``origin``."""
    if isinstance(data, dict):
        return Mapping({str(k): from_data(v, origin) for k, v in data.items()}, origin)
    if isinstance(data, list):
        return Sequence([from_data(v, origin) for v in data], origin)
    return Scalar(data, origin)


def walk(node: Node) -> Iterator[Node]:
    """Every node of a tree, parents first."""
    yield node
    if isinstance(node, Mapping):
        for child in node.items.values():
            yield from walk(child)
    elif isinstance(node, Sequence):
        for child in node.items:
            yield from walk(child)


def lookup(node: Node, path: list[str]) -> Node | None:
    """Follow mapping keys; None when a step is missing or not a mapping."""
    for key in path:
        if not isinstance(node, Mapping):
            return None
        nxt = node.items.get(key)
        if nxt is None:
            return None
        node = nxt
    return node


def restamp(node: Node, origin: Origin) -> None:
    """Mark a whole subtree as written by ``origin`` (earlier writers kept)."""
    for n in walk(node):
        n.rewrite(origin)
