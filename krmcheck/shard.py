"""Splitting roots into groups that share work, and groups into shards.

Two roots that include the same kustomization directory (a base, a
component) share its rendering: the Builder renders such a directory once
and reuses it. So the unit of work handed to a CI matrix job (``--shard``)
or to a worker process (``--jobs``) is a *group*: the roots connected
through the kustomization directories they read (union-find). Everything
here is deterministic: the same roots give the same split on every
machine, which is what lets N matrix jobs each pick their own part
without talking to each other.
"""

from __future__ import annotations

import os

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from krmcheck.discover import KustomizationInfo, read_info, reads

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class Shard(NamedTuple):
    """Shard ``number`` (1-based) of ``total``."""

    number: int
    total: int

    def __str__(self) -> str:
        return f"{self.number}/{self.total}"


MAX_SHARDS = 10_000  # more CI jobs than any pipeline runs


def parse_shard(text: str) -> Shard:
    """``K/N`` with 1 <= K <= N; anything else is a ValueError naming why."""
    match = _SPEC.match(text)
    if not match:
        raise ValueError(f"{text!r} is not K/N (e.g. 1/4)")
    if len(match.group(2)) > len(str(MAX_SHARDS)):
        raise ValueError(f"{text!r}: the shard count N must be at most {MAX_SHARDS}")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise ValueError(f"{text!r}: the shard count N must be between 1 and {MAX_SHARDS}")
    if not 1 <= index <= count:
        raise ValueError(f"{text!r}: the shard number K must be between 1 and {count}")
    return Shard(index, count)


class _UnionFind:
    def __init__(self) -> None:
        self._parent: dict[Path, Path] = {}

    def find(self, item: Path) -> Path:
        # Iterative, with path compression: thousands of roots must not
        # meet the recursion limit.
        top = self._parent.setdefault(item, item)
        while self._parent[top] != top:
            top = self._parent[top]
        while item != top:
            parent = self._parent[item]
            self._parent[item] = top
            item = parent
        return top

    def union(self, a: Path, b: Path) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # The smaller path represents the set, so the result does not
            # depend on the order in which unions happen.
            small, large = sorted((ra, rb), key=_name)
            self._parent[large] = small


def _name(path: Path) -> str:
    # Plain string order (not Path's part-wise order), the order a person
    # reading the names expects; all roots share the repository prefix.
    return path.as_posix()


def _graph(roots: Sequence[Path], known: dict[Path, KustomizationInfo] | None
           ) -> dict[Path, KustomizationInfo]:
    """``known`` completed with every kustomization the roots reach, each
    parsed once (``reads`` would parse a shared base again for every root)."""
    infos = dict(known or {})
    stack = list(roots)
    while stack:
        directory = stack.pop()
        if directory not in infos:
            infos[directory] = read_info(directory)
            stack.extend(infos[directory].dirs)
    return infos


def _kustomization_dirs(root: Path, infos: dict[Path, KustomizationInfo]) -> Iterable[Path]:
    """The kustomization directories ``root`` renders: sharing a plain file
    costs nothing, sharing a directory is what the Builder caches."""
    return (p for p in reads(root, infos) if os.path.isdir(p))  # False for a path it cannot look at


def groups(roots: Sequence[Path], known: dict[Path, KustomizationInfo] | None = None
           ) -> list[list[Path]]:
    """Roots connected through shared kustomization directories; each group
    sorted by name, groups ordered by their first root's name."""
    infos = _graph(roots, known)
    uf = _UnionFind()
    for root in roots:
        uf.find(root)
        for directory in _kustomization_dirs(root, infos):
            uf.union(root, directory)
    by_rep: dict[Path, list[Path]] = {}
    for root in roots:
        by_rep.setdefault(uf.find(root), []).append(root)
    found = [sorted(set(members), key=_name) for members in by_rep.values()]
    return sorted(found, key=lambda g: _name(g[0]))


def balance(parts: Sequence[Sequence[Path]], bins: int) -> list[list[Path]]:
    """Greedy longest-first packing of ``parts`` into ``bins`` lists by root
    count: the largest part (ties: by first name) goes to the bin holding
    the fewest roots (ties: the lowest bin). Each bin is sorted by name."""
    order = sorted(parts, key=lambda p: (-len(p), _name(p[0])))
    out: list[list[Path]] = [[] for _ in range(bins)]
    for part in order:
        target = min(range(bins), key=lambda i: (len(out[i]), i))
        out[target].extend(part)
    return [sorted(b, key=_name) for b in out]


def select(roots: Sequence[Path], shard: Shard,
           infos: dict[Path, KustomizationInfo] | None = None) -> list[Path]:
    """The roots shard ``shard`` checks, in the order of ``roots``; groups
    are never split, so a shard may be empty when there are fewer groups
    than shards."""
    chosen = set(balance(groups(roots, infos), shard.total)[shard.number - 1])
    return [r for r in roots if r in chosen]


def worker_batches(roots: Sequence[Path], workers: int,
                   infos: dict[Path, KustomizationInfo] | None = None) -> list[list[Path]]:
    """At most ``workers`` non-empty batches for one machine's processes.

    Groups stay whole unless one holds more than a fair share of the roots
    (one component included by every overlay would otherwise leave all but
    one process idle); such a group is cut into consecutive runs of names,
    and each piece renders the shared directories once in its own worker.
    """
    fair = max(1, -(-len(roots) // max(workers, 1)))
    parts: list[list[Path]] = []
    for group in groups(roots, infos):
        parts.extend(group[i:i + fair] for i in range(0, len(group), fair))
    return [b for b in balance(parts, workers) if b]
