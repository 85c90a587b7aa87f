"""Strategic-merge patches over provenance trees, as kustomize v5.5 applies them.

kustomize does not use Kubernetes' own strategic merge code: it walks the
target and the patch side by side with kyaml's merge walker. That walker has
its own rules, which this module follows (each checked with ``kubectl
kustomize``):

- Map keys merge recursively; a ``null`` in the patch deletes the key, and
  ``$patch: delete`` / ``replace`` / ``merge`` act on the map they are in.
- A list merges element by element only when the kind's schema gives it the
  ``merge`` strategy (see :mod:`krmcheck.kustomize.openapi`); otherwise, and
  for every list of a kind with no schema (CRDs), the patch's list replaces it.
- Merged lists put the patch's elements first, in patch order, then the
  target's other elements (kustomize asks for the "prepend" direction).
- Lists keyed by several fields (ports: ``containerPort`` + ``protocol``)
  are matched with kyaml's partial-key rules, quirks included.
- ``$setElementOrder/...``, ``$retainKeys`` and ``$deleteFromPrimitiveList/...``
  are not understood by kyaml: kubectl kustomize copies them into the output
  as ordinary fields, and so do we (fidelity over tidiness).

Provenance: a node taken from the patch keeps its own origin (the patch
file's line); when it replaces a node of the target, the replaced node's
trail and origin are put in front of its own trail. Merged maps and lists
keep the target's origin; untouched values keep theirs.
"""

from __future__ import annotations

from typing import NamedTuple

from krmcheck.kustomize.openapi import NO_META, PatchMeta, has_schema, patch_meta
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import Gvk
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.scalars import resolve_plain

_DIRECTIVE = "$patch"
_DIRECTIVES = ("delete", "replace", "merge")


class _Cursor(NamedTuple):
    """Where we are in the schema: a kind and a field path, or nowhere."""

    gvk: Gvk | None
    path: tuple[str, ...]

    @property
    def meta(self) -> PatchMeta:
        return patch_meta(self.gvk, self.path) if self.gvk is not None else NO_META

    def child(self, key: str) -> "_Cursor":
        if self.gvk is None:
            return _NOWHERE
        path = self.path + (key,)
        return _Cursor(self.gvk, path) if has_schema(self.gvk, path) else _NOWHERE


_NOWHERE = _Cursor(None, ())


def strategic_merge(target: Mapping, patch: Mapping, gvk: Gvk) -> Mapping | None:
    """Apply ``patch`` to ``target`` (which may be changed in place).

    Returns the merged resource, or None when the patch deletes it
    (``$patch: delete`` at the top).
    """
    # The same patch may be applied to many resources: work on a copy.
    result = _walk(target, patch.copy(), _root_cursor(gvk), ())
    return result if isinstance(result, Mapping) else None


def _root_cursor(gvk: Gvk) -> _Cursor:
    return _Cursor(gvk, ()) if has_schema(gvk, ()) else _NOWHERE


# --- the walk ------------------------------------------------------------------

def _walk(dest: Node | None, patch: Node | None, cur: _Cursor,
          path: tuple[str, ...]) -> Node | None:
    """Merge ``patch`` into ``dest``; None means "remove this value"."""
    kind = _kind(dest, patch, path)
    if cur.gvk is None:
        cur = _embedded_cursor(dest, patch)
    if kind is Sequence:
        if cur.meta.merges:
            return _walk_associative(dest, patch, cur, path)
        return _replace(dest, patch) if patch is not None else dest
    if kind is Scalar:
        return _replace(dest, patch) if patch is not None else dest
    return _walk_map(dest, patch, cur, path)


def _kind(dest: Node | None, patch: Node | None, path: tuple[str, ...]) -> type | None:
    """The node type of the first non-null source; both must agree."""
    kinds = [(type(n), n) for n in (dest, patch) if not _is_null(n)]
    if not kinds:
        return None
    first = kinds[0][0]
    for other, node in kinds[1:]:
        if other is not first:
            raise BuildError(
                f"wrong node kind at {'.'.join(path) or 'top level'}: expected "
                f"{_kind_name(first)} but got {_kind_name(other)}",
                node.origin if node is not None else None)
    return first


def _kind_name(kind: type) -> str:
    return {Mapping: "MappingNode", Sequence: "SequenceNode"}.get(kind, "ScalarNode")


def _embedded_cursor(dest: Node | None, patch: Node | None) -> _Cursor:
    """Outside any schema, a map that names its own kind (an embedded
    object) is merged with that kind's schema, as kyaml does."""
    for node in (dest, patch):
        if isinstance(node, Mapping):
            api, kind = node.value("apiVersion"), node.value("kind")
            if isinstance(api, str) and isinstance(kind, str) and api and kind:
                gvk = Gvk.from_api_version(api, kind)
                if has_schema(gvk, ()):
                    return _Cursor(gvk, ())
    return _NOWHERE


def _walk_map(dest: Node | None, patch: Node | None, cur: _Cursor,
              path: tuple[str, ...]) -> Node | None:
    merged = _visit_map(dest, patch, path)
    if not isinstance(merged, Mapping):
        return merged
    patch_items = patch.items if isinstance(patch, Mapping) else {}
    for key in sorted(set(merged.items) | set(patch_items)):
        old, new = merged.items.get(key), patch_items.get(key)
        if new is None and _is_null(old) and _persistent_null(old):
            continue  # an explicit `key: null` of the target survives
        value = _walk(old, new, cur.child(key), path + (key,))
        if value is None or _is_null(value):
            merged.items.pop(key, None)
        else:
            merged.items[key] = value
    return merged


def _visit_map(dest: Node | None, patch: Node | None, path: tuple[str, ...]) -> Node | None:
    """The map to merge fields into: the target's, the patch's, or none."""
    if _is_null(dest):
        if isinstance(patch, Mapping) and _map_directive(patch, path) == "delete":
            return None
        return patch
    if _is_null(patch) and patch is not None:
        return None
    directive = _map_directive(patch, path) if isinstance(patch, Mapping) else "merge"
    if directive == "delete":
        return None
    if directive == "replace":
        return _replace(dest, patch)
    return dest


def _map_directive(patch: Mapping, path: tuple[str, ...]) -> str:
    """Read and remove the ``$patch`` key of a patch map."""
    node = patch.items.get(_DIRECTIVE)
    if node is None:
        return "merge"
    value = node.value if isinstance(node, Scalar) else None
    if value not in _DIRECTIVES:
        raise BuildError(f"unknown patch strategy '{_text(node)}'", node.origin)
    del patch.items[_DIRECTIVE]
    return str(value)


def _seq_directive(patch: Sequence) -> str:
    """Read and remove a ``- $patch: ...`` element of a patch list; it only
    counts when it is that element's only key."""
    holder = next((e for e in patch.items
                   if isinstance(e, Mapping) and _DIRECTIVE in e.items), None)
    if holder is None or len(holder.items) > 1:
        return "merge"
    node = holder.items[_DIRECTIVE]
    value = _text(node)
    if value not in _DIRECTIVES:
        raise BuildError(f"unknown patch strategy '{value}'", node.origin)
    _set_element(patch.items, None, [_DIRECTIVE], [value])
    return value


# --- associative lists -----------------------------------------------------------

def _walk_associative(dest: Node | None, patch: Node | None, cur: _Cursor,
                      path: tuple[str, ...]) -> Node | None:
    base = _visit_list(dest, patch)
    if not isinstance(base, Sequence):
        return base
    keys = list(cur.meta.list_keys)
    sources = (base, patch if isinstance(patch, Sequence) else None)
    values = _element_values(sources, keys)
    if values or keys:
        return _set_elements(values, keys, sources, cur, path)
    return _set_elements(_primitive_values(sources), [""], sources, cur, path)


def _visit_list(dest: Node | None, patch: Node | None) -> Node | None:
    if _is_null(dest):
        if isinstance(patch, Sequence):
            _seq_directive(patch)
        return patch
    if _is_null(patch) and patch is not None:
        return None
    directive = _seq_directive(patch) if isinstance(patch, Sequence) else "merge"
    if directive == "delete":
        return None
    if directive == "replace":
        return _replace(dest, patch)
    return dest


def _ordered(sources: tuple[Sequence, Sequence | None]) -> list[Sequence]:
    """The patch first, then the target: kustomize prepends patch items."""
    base, patch = sources
    return [s for s in (patch, base) if s is not None]


def _element_values(sources: tuple[Sequence, Sequence | None],
                    keys: list[str]) -> list[list[str]]:
    out: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for src in _ordered(sources):
        for elem in src.items:
            vals = [_field_text(elem, k) for k in keys]
            if not vals or tuple(vals) in seen:
                continue
            out.append(vals)
            seen.add(tuple(vals))
    return out


def _primitive_values(sources: tuple[Sequence, Sequence | None]) -> list[list[str]]:
    out: list[list[str]] = []
    seen: set[str] = set()
    for src in _ordered(sources):
        for elem in src.items:
            text = _text(elem)
            if text not in seen:
                out.append([text])
                seen.add(text)
    return out


def _set_elements(values_list: list[list[str]], keys: list[str],
                  sources: tuple[Sequence, Sequence | None], cur: _Cursor,
                  path: tuple[str, ...]) -> Node | None:
    base, patch = sources
    added: list[Node] = []
    if len(keys) > 1:
        _merge_values(values_list)
    valid_keys: list[str] = []
    for values in values_list:
        if not values:
            continue
        valid_keys, valid_values = _validate_keys(values_list, values, keys)
        old, new = _element_sources(sources, valid_keys, valid_values)
        value = _walk(old, new, cur, path)
        if value is None or _is_null(value) or _is_empty_map(value):
            _set_element(base.items, None, valid_keys, valid_values)
            continue
        _ensure_keys(value, valid_keys, valid_values)
        _set_element(added, value, valid_keys, valid_values)
    if not values_list:
        return base
    result = Sequence(added, base.origin, base.trail)
    _append_list(result.items, base.items, valid_keys)
    return result


def _ensure_keys(value: Node, keys: list[str], values: list[str]) -> None:
    if not isinstance(value, Mapping):
        return
    for key, text in zip(keys, values):
        if text and key not in value.items:
            value.items[key] = Scalar(resolve_plain(text), value.origin, (), text)


def _element_sources(sources: tuple[Sequence, Sequence | None], keys: list[str],
                     values: list[str]) -> tuple[Node | None, Node | None]:
    keys, values = _validate_keys([values], values, keys)
    base, patch = sources
    return (_find_element(base, keys, values),
            _find_element(patch, keys, values) if patch is not None else None)


def _find_element(seq: Sequence, keys: list[str], values: list[str]) -> Node | None:
    """The first element whose ``keys`` fields read exactly ``values``."""
    keys = keys or [""]
    values = values or [""]
    if not keys[0]:
        return next((e for e in seq.items if _text(e) == values[0]), None)
    for elem in seq.items:
        if isinstance(elem, Mapping) and all(
                k in elem.items and _text(elem.items[k]) == v for k, v in zip(keys, values)):
            return elem
    return None


def _validate_keys(values_list: list[list[str]], values: list[str],
                   keys: list[str]) -> tuple[list[str], list[str]]:
    """Keep the keys that some element sets; with none, keep them all."""
    used = {keys[i] for vals in values_list for i, v in enumerate(vals) if v}
    if not used:
        return keys, values
    valid_keys = [k for k in keys if k in used]
    valid_values = [v for i, v in enumerate(values) if v or keys[i] in used]
    return valid_keys, valid_values


def _merge_values(values_list: list[list[str]]) -> None:
    """Complete partial key tuples from compatible ones (port 80 without a
    protocol meets port 80/UDP), in place, as kyaml does."""
    for i in range(len(values_list)):
        first = values_list[i]
        for j in range(len(values_list)):
            merged = _match(first, values_list[j])
            if merged is not None:
                values_list[i] = merged
                values_list[j] = merged


def _match(a: list[str], b: list[str]) -> list[str] | None:
    if len(a) != len(b):
        return None
    common = False
    out: list[str] = []
    for x, y in zip(a, b):
        if x == y:
            common = True
            out.append(x)
        elif x and y:
            return None
        else:
            out.append(x or y)
    return out if common else None


def _set_element(items: list[Node], element: Node | None, keys: list[str],
                 values: list[str]) -> None:
    """Replace (or, with no element, delete) the elements matching
    ``keys``/``values``; append when none matches. Empty elements drop out."""
    keys = keys or [""]
    mapping_setter = bool(keys[0]) and bool(values) and bool(values[0])
    kept: list[Node] = []
    matched = False
    for elem in items:
        if _is_null(elem) or _is_empty_map(elem):
            continue
        if not isinstance(elem, Mapping) and mapping_setter:
            kept.append(elem)
            continue
        if not _matches(elem, keys, values):
            if values:
                kept.append(elem)
            continue
        matched = True
        if element is not None:
            kept.append(element)
    items[:] = kept
    if element is not None and not _is_null(element) and not matched:
        items.append(element)


def _matches(elem: Node, keys: list[str], values: list[str]) -> bool:
    # kyaml re-uses the last lookup for keys past the given values.
    found: object = None
    for j, key in enumerate(keys):
        if j < len(values):
            found = _field_matcher(elem, key, values[j])
        if found is None:
            return False
    return True


def _field_matcher(elem: Node, key: str, value: str) -> object:
    if _is_null(elem):
        return None
    if not key:
        return elem if isinstance(elem, Scalar) and _text(elem) == value else None
    if not isinstance(elem, Mapping) or key not in elem.items:
        return None
    field = elem.items[key]
    return field if not value or _text(field) == value else None


def _append_list(dst: list[Node], src: list[Node], keys: list[str]) -> None:
    """Put the target's elements into the merged list, kyaml's way."""
    for elem in src:
        if not keys or not keys[0]:
            _set_element(dst, elem, [""], [_text(elem)])
            continue
        values: list[str] = []
        for key in keys:
            field = elem.items.get(key) if isinstance(elem, Mapping) else None
            if field is None:
                dst.append(elem)
                continue
            values.append(_text(field))
        if len(keys) > 1:
            _set_element(dst, None, keys, values)
        _set_element(dst, elem, keys, values)


# --- nodes -------------------------------------------------------------------------

def _replace(old: Node | None, new: Node | None) -> Node | None:
    """``new`` takes ``old``'s place: the old writer joins its trail."""
    if old is None or new is None or old is new or _is_null(old):
        return new
    new.trail = old.trail + (old.origin,) + new.trail
    return new


def _is_null(node: Node | None) -> bool:
    return node is None or (isinstance(node, Scalar) and node.value is None)


def _persistent_null(node: Node | None) -> bool:
    """``key: null`` or ``key: ~`` (kept); a bare ``key:`` is dropped."""
    return isinstance(node, Scalar) and bool(node.text)


def _is_empty_map(node: Node | None) -> bool:
    return isinstance(node, Mapping) and not node.items


def _text(node: Node | None) -> str:
    """The YAML text of a scalar, as kyaml compares keys; '' otherwise."""
    if not isinstance(node, Scalar) or node.value is None:
        return ""
    return node.as_string()


def _field_text(elem: Node, key: str) -> str:
    if not isinstance(elem, Mapping):
        return ""
    field = elem.items.get(key)
    if field is None or _is_null(field) or _is_empty_map(field):
        return ""
    if isinstance(field, Sequence) and not field.items:
        return ""
    return _text(field)
