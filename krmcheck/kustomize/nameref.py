"""Name references: after renames, point every referring field at the new name.

Mirrors kustomize's nameReference transformer (api/filters/nameref and
api/internal/accumulator/namereferencetransformer.go in Kustomize v5.5.0).
The table of which fields refer to which kinds is data
(``fieldspecs/nameReference.yaml``). For each referrer field whose value is
a *previous* name of some resource, the resource is picked by kustomize's
sieve (kind, roleRef, namespace, then name prefixes/suffixes) and the field
gets its current name, written by whoever wrote that name.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import yaml

from krmcheck.kustomize import order
from krmcheck.kustomize.fieldspec import FieldSpec
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import NO_NAMESPACE, Gvk, ResId, effective_namespace, is_cluster_scoped
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import FAST_LOADER
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Origin

# kustomize's namespace stand-in for cluster-scoped ids (resid.TotallyNotANamespace).

# --- the table ----------------------------------------------------------------

@dataclass(frozen=True)
class NameBackRef:
    """A referral kind and the referrer fields that may hold its name."""

    gvk: Gvk  # selector: empty parts match anything
    referrers: tuple[FieldSpec, ...]

    @staticmethod
    def from_dict(d: dict) -> "NameBackRef":
        gvk = Gvk(str(d.get("group") or ""), str(d.get("version") or ""), str(d.get("kind") or ""))
        return NameBackRef(gvk, tuple(FieldSpec.from_dict(f) for f in d.get("fieldSpecs") or []))


def parse_name_references(items: Iterable[dict]) -> tuple[NameBackRef, ...]:
    """A name-reference table from its YAML form (also kustomize's
    ``configurations:`` ``nameReference`` lists)."""
    return tuple(NameBackRef.from_dict(d) for d in items)


def merge_name_references(base: tuple[NameBackRef, ...], extra: Iterable[NameBackRef]
                          ) -> tuple[NameBackRef, ...]:
    """Add a ``configurations:`` file's entries as kustomize merges them:
    referrers join the entry of the same referral kind, a referrer already
    present is kept once (a different ``create`` is an error), and the
    result is sorted by kind the way kustomize sorts its config."""
    merged = list(base)
    for entry in extra:
        i = next((i for i, b in enumerate(merged) if b.gvk == entry.gvk), None)
        if i is None:
            merged.append(entry)
        else:
            merged[i] = NameBackRef(entry.gvk, _merge_specs(merged[i].referrers, entry.referrers))
    return tuple(sorted(merged, key=lambda b: _gvk_order(b.gvk)))


def _merge_specs(have: tuple[FieldSpec, ...], new: tuple[FieldSpec, ...]) -> tuple[FieldSpec, ...]:
    out = list(have)
    for spec in new:
        same = [s for s in out if s.path == spec.path and spec.matches(Gvk(s.group, s.version, s.kind))]
        if not same:
            out.append(spec)
        elif same[0].create != spec.create:
            raise BuildError(f"conflicting fieldspecs for path '{'/'.join(spec.path)}'")
    return tuple(out)


def _gvk_order(gvk: Gvk) -> tuple[int, str]:
    rank = _KIND_RANK.get(gvk.kind, len(order.FIRST))
    return rank, str(gvk)


_KIND_RANK = {k: i for i, k in enumerate(order.FIRST)}
_KIND_RANK.update({k: len(order.FIRST) + 1 + i for i, k in enumerate(order.LAST)})


@functools.lru_cache(maxsize=None)
def default_name_references() -> tuple[NameBackRef, ...]:
    text = Path(__file__).with_name("fieldspecs").joinpath("nameReference.yaml").read_text()
    return parse_name_references(yaml.load(text, Loader=FAST_LOADER) or [])


# --- ids as kustomize sees them ---------------------------------------------------

def _selected(gvk: Gvk, selector: Gvk) -> bool:
    return ((not selector.group or selector.group == gvk.group)
            and (not selector.version or selector.version == gvk.version)
            and (not selector.kind or selector.kind == gvk.kind))



def _prev_ids(res: Resource) -> list[ResId]:
    # kustomize records only the previous kind; group and version come from
    # the resource's current apiVersion.
    cur = res.gvk
    return [ResId(Gvk(cur.group, cur.version, p.gvk.kind), p.name, p.namespace)
            for p in res.prev_ids]


def _org_id(res: Resource) -> ResId:
    prev = _prev_ids(res)
    return prev[0] if prev else res.id()


def _kustomize_id(rid: ResId) -> str:
    """kustomize's spelling of an id in messages: Kind.version.group/name.ns"""
    g = rid.gvk
    gvk = ".".join([g.kind or "[noKind]", g.version or "[noVer]", g.group or "[noGrp]"])
    return f"{gvk}/{rid.name or '[noName]'}.{rid.namespace or '[noNs]'}"


# --- which resources a referrer may point at ----------------------------------------

def _reachable(referrer: Resource) -> Sieve:
    """Which resources the referrer could name: same namespace, cluster-scoped,
    or (for a RoleBinding) in a namespace of one of its ServiceAccount subjects."""
    ref_id = referrer.id()
    if is_cluster_scoped(ref_id.gvk):
        return _accept_all
    ref_ns = effective_namespace(ref_id)
    extra = _role_binding_namespaces(referrer)

    def sieve(r: Resource) -> bool:
        rid = r.id()
        return (is_cluster_scoped(rid.gvk) or effective_namespace(rid) == ref_ns
                or rid.namespace in extra)
    return sieve


def _role_binding_namespaces(res: Resource) -> set[str]:
    subjects = res.node.sequence("subjects") if res.kind == "RoleBinding" else None
    found: set[str] = set()
    for s in subjects or ():
        if not isinstance(s, Mapping) or "namespace" not in s or s.value("kind") != "ServiceAccount":
            continue
        ns = s.value("namespace")
        if not isinstance(ns, str):
            raise BuildError(f"invalid input: namespace is blank for resource {_kustomize_id(res.id())}",
                             s.items["namespace"].origin)
        found.add(ns)
    return found


# --- picking the referral --------------------------------------------------------

Sieve = Callable[[Resource], bool]


def _prefixes_suffixes_equal(r: Resource, other: Resource, allow_empty: bool) -> bool:
    # kustomize lists prefixes in the order they were applied (innermost
    # first); Resource.prefixes holds the outermost first.
    rp, op = r.prefixes[::-1], other.prefixes[::-1]
    if allow_empty:
        return ((not rp or not op or _same_ending(rp, op))
                and (not r.suffixes or not other.suffixes or _same_ending(r.suffixes, other.suffixes)))
    return _same_ending(rp, op) and _same_ending(r.suffixes, other.suffixes)


def _same_ending(a: list[str], b: list[str]) -> bool:
    """One list ends with the other (two empty lists are equal; empty and
    non-empty are not)."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    if not short:
        return not long
    return long[len(long) - len(short):] == short


def _names_same(rs: list[Resource]) -> bool:
    return len({r.name for r in rs}) == 1


def _names_and_namespaces_same(rs: list[Resource]) -> bool:
    return len({(r.name, r.namespace) for r in rs}) == 1


@dataclass
class _Fixer:
    """One referrer field spec against one referral kind (kustomize's nameref.Filter)."""

    referrer: Resource
    spec: FieldSpec
    target: Gvk
    by_name: dict[str, list[Resource]]  # every resource, by each of its previous names
    reachable: Sieve

    def candidates(self, old: str) -> list[Resource]:
        """Resources once named ``old`` that the referrer may reach; looked up
        by name first so the fix stays linear in the number of resources."""
        return [r for r in self.by_name.get(old, ()) if self.reachable(r)]

    @property
    def path(self) -> str:
        return "/".join(self.spec.path)

    def run(self) -> None:
        try:
            _walk(self.referrer.node, self.spec.path, self._set)
        except BuildError as e:
            raise e.add_context(f"updating name reference in '{self.path}' field of "
                                f"'{_kustomize_id(self.referrer.id())}'") from None

    def _set(self, node: Node) -> None:
        if isinstance(node, Scalar):
            if node.value is not None:
                self._set_scalar(node)
        elif isinstance(node, Mapping):
            self._set_mapping(node)
        elif isinstance(node, Sequence):
            for item in node.items:
                self._set_item(item)

    def _set_item(self, node: Node) -> None:
        if isinstance(node, Sequence):
            raise BuildError("a list of names must hold strings or mappings", node.origin)
        self._set(node)

    def _set_scalar(self, node: Scalar) -> None:
        old = node.as_string()
        referral = self._select(old, self.candidates(old), _names_same, node.origin)
        if referral is None or referral.name == old:
            return
        node.set(referral.name, _name_origin(referral))

    def _set_mapping(self, node: Mapping) -> None:
        name = node.items.get("name")
        if name is None:
            raise BuildError("path config error; no 'name' field in node", node.origin)
        old = name.as_string() if isinstance(name, Scalar) else ""
        pool = self._by_namespace(node, self.candidates(old))
        referral = self._select(old, pool, _names_and_namespaces_same, name.origin)
        if referral is None or (referral.name == old and not referral.namespace):
            return
        _put(node, "name", referral.name, _name_origin(referral))
        # An empty namespace is a wildcard, not "default": leave the field alone.
        if referral.namespace:
            _put(node, "namespace", referral.namespace, _namespace_origin(referral))

    def _by_namespace(self, node: Mapping, candidates: list[Resource]) -> list[Resource]:
        ns_node = node.items.get("namespace")
        if not isinstance(ns_node, Scalar):
            return candidates
        ns = ns_node.as_string()
        if ns == NO_NAMESPACE:
            return []
        # Prefer the namespace the referral was written with; subjects in a
        # base name the namespace before an overlay moved it.
        by_original = [r for r in candidates if effective_namespace(_org_id(r)) == ns]
        if by_original:
            return by_original
        return [r for r in candidates if effective_namespace(r.id()) == ns]

    def _select(self, old: str, pool: list[Resource],
                identical: Callable[[list[Resource]], bool], where: Origin) -> Resource | None:
        for sieve in (_previous_name(old), _previous_kind(self.target), self._role_ref(),
                      self._same_namespace()):
            pool = [r for r in pool if sieve(r)]
        if len(pool) == 1:
            return pool[0]
        pool = [r for r in pool if _prefixes_suffixes_equal(r, self.referrer, True)]
        if len(pool) > 1:
            pool = [r for r in pool if _prefixes_suffixes_equal(r, self.referrer, False)]
        if not pool:
            return None
        if len(pool) == 1 or identical(pool):
            return pool[0]
        ids = ", ".join(_kustomize_id(r.id()) for r in pool)
        raise BuildError(f"found multiple possible referrals: {ids}", where)

    def _role_ref(self) -> Sieve:
        """A roleRef names a Role or a ClusterRole as its own kind field says."""
        if not self.path.endswith("roleRef/name"):
            return _accept_all
        role_ref = self.referrer.node.mapping("roleRef")
        if role_ref is None or "apiGroup" not in role_ref or "kind" not in role_ref:
            return _accept_all
        gvk = Gvk(str(role_ref.value("apiGroup") or ""), "", str(role_ref.value("kind") or ""))
        return _previous_kind(gvk)

    def _same_namespace(self) -> Sieve:
        ref_id = self.referrer.id()
        if is_cluster_scoped(ref_id.gvk):
            return _accept_all
        ref_ns = effective_namespace(ref_id)

        def sieve(r: Resource) -> bool:
            rid = r.id()
            # ServiceAccounts pass: a RoleBinding may name one in another namespace.
            return (is_cluster_scoped(rid.gvk) or r.kind == "ServiceAccount"
                    or effective_namespace(rid) == ref_ns)
        return sieve


def _accept_all(r: Resource) -> bool:
    return True


def _previous_name(name: str) -> Sieve:
    return lambda r: any(p.name == name for p in _prev_ids(r))


def _previous_kind(gvk: Gvk) -> Sieve:
    return lambda r: any(_selected(p.gvk, gvk) for p in _prev_ids(r))


def _name_origin(res: Resource) -> Origin:
    md = res.metadata
    node = md.items.get("name") if md else None
    return node.origin if node is not None else res.node.origin


def _namespace_origin(res: Resource) -> Origin:
    md = res.metadata
    node = md.items.get("namespace") if md else None
    return node.origin if node is not None else _name_origin(res)


def _put(mapping: Mapping, key: str, value: str, origin: Origin) -> None:
    """Write a string field; an unchanged value keeps its writer."""
    node = mapping.items.get(key)
    if isinstance(node, Scalar):
        if node.value != value:
            node.set(value, origin)
    else:
        mapping.items[key] = Scalar(value, origin)


def _walk(node: Node, path: tuple[str, ...], fn: Callable[[Node], None]) -> None:
    """kustomize's field-spec traversal without the kind check: sequences on
    the way are entered element by element; a missing or null step ends the
    walk quietly; a scalar in the middle of the path is an error."""
    if not path:
        fn(node)
        return
    if isinstance(node, Scalar):
        if node.value is None:
            return
        raise BuildError(f"expected sequence or mapping node at '{'/'.join(path)}'", node.origin)
    if isinstance(node, Sequence):
        for item in node.items:
            _walk(item, path, fn)
        return
    if isinstance(node, Mapping):
        child = node.items.get(path[0].removesuffix("[]"))
        if child is not None:
            _walk(child, path[1:], fn)


# --- the transformer -------------------------------------------------------------

def fix_name_references(resources: list[Resource],
                        table: tuple[NameBackRef, ...] | None = None) -> None:
    """Point every name reference at the current name of what it names.

    ``table`` defaults to kustomize's built-in name references; pass a merged
    table when a kustomization adds ``configurations``.
    """
    backrefs = default_name_references() if table is None else table
    by_name: dict[str, list[Resource]] = {}
    for r in resources:
        for name in dict.fromkeys(p.name for p in r.prev_ids):
            by_name.setdefault(name, []).append(r)
    for referrer, jobs in _plan(resources, backrefs):
        reachable = _reachable(referrer)
        for spec, target in jobs:
            _Fixer(referrer, spec, target, by_name, reachable).run()


def _plan(resources: list[Resource], backrefs: tuple[NameBackRef, ...]
          ) -> list[tuple[Resource, list[tuple[FieldSpec, Gvk]]]]:
    """For each resource, the (referrer field, referral kind) pairs that apply
    to it, in table order. A referrer is chosen by its original kind."""
    by_kind: dict[Gvk, list[tuple[FieldSpec, Gvk]]] = {}
    jobs = []
    for r in resources:
        gvk = _org_id(r).gvk
        if gvk not in by_kind:
            by_kind[gvk] = [(spec, backref.gvk) for backref in backrefs for spec in backref.referrers
                            if _selected(gvk, Gvk(spec.group, spec.version, spec.kind))]
        jobs.append(by_kind[gvk])
    return [(r, j) for r, j in zip(resources, jobs) if j]
