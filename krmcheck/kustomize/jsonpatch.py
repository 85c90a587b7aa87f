"""RFC 6902 JSON patches over provenance trees.

kustomize applies JSON patches with evanphx/json-patch (v4) on the JSON form
of a resource; this module applies the same operations to the tree so that
origins survive. Error wording follows that library ("add operation does not
apply: doc is missing path ...") and every error points at the operation's
own line in the patch.

Provenance: an ``add``/``replace`` value keeps the origin it was loaded with
(the op's ``value:`` line, its children their own lines); a node it replaces
leaves its origin in the new node's trail. A node placed by ``move`` or
``copy`` is recorded as written by the op, its earlier origin kept in the
trail; its children keep theirs.
"""

from __future__ import annotations

from typing import NamedTuple, Union

from krmcheck.resource.errors import BuildError
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Origin

Container = Union[Mapping, Sequence]
_OPS = ("add", "remove", "replace", "move", "copy", "test")


class _Op(NamedTuple):
    """One decoded operation and where it was written."""

    name: str
    path: str
    node: Mapping

    @property
    def origin(self) -> Origin:
        return self.node.origin

    def fail(self, detail: str) -> BuildError:
        return BuildError(f"{self.name} operation does not apply: {detail}: missing value",
                          self.origin)

    def error_in(self, path: str, detail: str) -> BuildError:
        return BuildError(f"error in {self.name} for path: '{path}': {detail}", self.origin)


def apply_json_patch(target: Mapping, ops: Node, where: Origin) -> Mapping:
    """Apply the operations ``ops`` (a list, loaded from JSON or YAML) to
    ``target``, changing it in place; ``where`` locates errors about the
    patch as a whole."""
    if not isinstance(ops, Sequence):
        raise BuildError("a JSON 6902 patch must be a list of operations", where)
    for item in ops:
        _apply(target, _decode(item, where))
    _spell_nulls(target)
    return target


def _spell_nulls(node: Node) -> None:
    """kustomize patches the resource's JSON form and reads the result back,
    so a bare ``key:`` comes back written ``key: null``, a null that later
    strategic merges keep (they drop a bare one)."""
    if isinstance(node, Mapping):
        keys = [key for key, child in node.view().items() if _holds_bare_null(child)]
        for key in keys:
            _spell_null_in(node.items, key)
    elif isinstance(node, Sequence):
        places = [i for i, child in enumerate(node.view()) if _holds_bare_null(child)]
        for i in places:
            _spell_null_in(node.items, i)


def _spell_null_in(items: dict[str, Node] | list[Node], key: str | int) -> None:
    child = items[key]  # type: ignore[index]
    if isinstance(child, Scalar):
        child.text = "null"
    else:
        _spell_nulls(child)


def _holds_bare_null(node: Node) -> bool:
    if isinstance(node, Scalar):
        return node.value is None and not node.text
    children = node.view().values() if isinstance(node, Mapping) else \
        node.view() if isinstance(node, Sequence) else ()
    return any(_holds_bare_null(child) for child in children)


def _decode(item: Node, where: Origin) -> _Op:
    if not isinstance(item, Mapping):
        raise BuildError("a JSON 6902 operation must be a mapping", item.origin or where)
    name = item.value("op")
    if name not in _OPS:
        raise BuildError(f"Unexpected kind: {name if name is not None else ''}", item.origin)
    path = item.value("path")
    if not isinstance(path, str):
        raise BuildError(f"{name} operation has no path", item.origin)
    return _Op(str(name), path, item)


def _apply(target: Mapping, op: _Op) -> None:
    if op.name == "add":
        _add(target, op.path, _value(op), op)
    elif op.name == "remove":
        _remove(target, op.path, op)
    elif op.name == "replace":
        _replace(target, op.path, _value(op), op)
    elif op.name == "test":
        _test(target, op)
    else:
        _move_or_copy(target, op)


def _value(op: _Op) -> Node:
    """The op's value; an ``add`` or ``replace`` without one writes null, as
    kustomize's JSON patch does (kubectl kustomize v5.5.0)."""
    node = op.node.get("value")
    if node is None:
        return Scalar(None, op.origin)
    return node.copy()


# --- pointers ----------------------------------------------------------------------

def _split(path: str, op: _Op) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise BuildError(f"{op.name} operation: invalid JSON pointer {path!r}", op.origin)
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _container(target: Mapping, parts: list[str]) -> Container | None:
    """The node holding the last step of a pointer, or None if missing."""
    node: Node | None = target
    for part in parts[:-1]:
        node = _child(node, part)
        if node is None:
            return None
    return node if isinstance(node, (Mapping, Sequence)) else None


def _child(node: Node | None, part: str) -> Node | None:
    if isinstance(node, Mapping):
        return node.items.get(part)
    if isinstance(node, Sequence):
        idx = _index(part, len(node.items))
        return node.items[idx] if idx is not None and 0 <= idx < len(node.items) else None
    return None


def _index(part: str, size: int) -> int | None:
    """An array index; negative ones count from the end, as evanphx allows."""
    try:
        idx = int(part)
    except ValueError:
        return None
    return idx + size if idx < 0 else idx


def _resolve(target: Mapping, path: str, op: _Op) -> tuple[Container, str]:
    parts = _split(path, op)
    if not parts:
        raise op.fail("the whole document cannot be the target")
    container = _container(target, parts)
    if container is None:
        # evanphx quotes the path for some ops and not for others.
        shown = path if op.name == "replace" else f'"{path}"'
        raise op.fail(f"doc is missing path: {shown}")
    return container, parts[-1]


# --- operations --------------------------------------------------------------------

def _add(target: Mapping, path: str, value: Node, op: _Op) -> None:
    container, key = _resolve(target, path, op)
    if isinstance(container, Mapping):
        old = container.items.get(key)
        container.items[key] = _took_place_of(old, value)
        return
    size = len(container.items)
    idx = size if key == "-" else _index(key, size + 1)
    if idx is None or idx < 0 or idx > size:
        raise op.error_in(path, f"Unable to access invalid index: {key}: invalid index referenced")
    container.items.insert(idx, value)


def _remove(target: Mapping, path: str, op: _Op) -> Node:
    container, key = _resolve(target, path, op)
    if isinstance(container, Mapping):
        if key not in container.items:
            # evanphx names only the last key for a failed move.
            shown = key if op.name == "move" else path
            raise op.error_in(shown, f"Unable to remove nonexistent key: {key}: missing value")
        return container.items.pop(key)
    idx = _index(key, len(container.items))
    if idx is None or not 0 <= idx < len(container.items):
        raise op.error_in(path, f"Unable to access invalid index: {key}: invalid index referenced")
    return container.items.pop(idx)


def _replace(target: Mapping, path: str, value: Node, op: _Op) -> None:
    container, key = _resolve(target, path, op)
    if isinstance(container, Mapping):
        # kubectl kustomize (evanphx v4) lets replace create a missing key.
        container.items[key] = _took_place_of(container.items.get(key), value)
        return
    idx = _index(key, len(container.items))
    if idx is None or not 0 <= idx < len(container.items):
        raise op.fail(f"doc is missing key: {path}")
    container.items[idx] = _took_place_of(container.items[idx], value)


def _move_or_copy(target: Mapping, op: _Op) -> None:
    source = op.node.value("from")
    if not isinstance(source, str):
        raise BuildError(f"{op.name} operation has no from", op.origin)
    if op.name == "move":
        node = _remove(target, source, op)
    else:
        container, key = _resolve(target, source, op)
        found = _child(container, key)
        # Copying a missing value copies a null, as kubectl kustomize does.
        node = found.copy() if found is not None else Scalar(None, op.origin)
    # The op decided where this value lives now.
    node.rewrite(op.origin)
    _add(target, op.path, node, op)


def _test(target: Mapping, op: _Op) -> None:
    expected = op.node.get("value")
    parts = _split(op.path, op)
    actual: Node | None = target
    for part in parts:
        actual = _child(actual, part)
        if actual is None:
            break
    want = expected.to_data() if expected is not None else None
    got = actual.to_data() if actual is not None else None
    if not _same(got, want):
        raise BuildError(f"testing value {op.path} failed: test failed", op.origin)


def _same(a: object, b: object) -> bool:
    """JSON equality: no bool/number mixing, 1 == 1.0, maps by key."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def _took_place_of(old: Node | None, new: Node) -> Node:
    """``new`` replaces ``old``: the old writer stays in the new trail."""
    if old is not None and old is not new:
        new.trail = old.trail + (old.origin,) + new.trail
    return new

