"""Semantic version ranges as Flux reads a GitRepository's ``ref.semver``
(Masterminds/semver v3 ``NewConstraint``, through fluxcd/pkg git/gogit
``cloneSemVer``): which tag of a repository the source follows.

Versions are read leniently (``v1.2``, ``1.2.3-rc.1``); a range is
``||``-separated alternatives of comma- or space-separated comparisons:
``=``, ``!=``, ``>``, ``<``, ``>=``, ``<=``, ``~`` (patch-level changes),
``^`` (changes that keep the left-most non-zero part), wildcards
(``1.2.x``, ``*``) and hyphen ranges (``1.2 - 1.4.5``). A pre-release
version only satisfies a comparison whose own version is a pre-release.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_VERSION = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_PART = re.compile(r"^(\d+|[xX*])$")
_OP = re.compile(r"^(!=|>=|=>|<=|=<|~>|[=<>~^])?\s*(.*)$")


class Version(NamedTuple):
    major: int
    minor: int
    patch: int
    pre: tuple[object, ...] = ()  # the pre-release identifiers; () for a release

    def key(self) -> tuple[object, ...]:
        # a release sorts after its pre-releases; numeric identifiers before others
        pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)


def parse_version(text: str) -> Version | None:
    m = _VERSION.match(text.strip())
    if m is None:
        return None
    pre = tuple(int(p) if p.isdigit() else p for p in m.group(4).split(".")) if m.group(4) else ()
    return Version(int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0), pre)


class _Bound(NamedTuple):
    op: str  # =, !=, >, <, >=, <=
    version: Version


class Constraint:
    """A parsed range; ``ValueError`` when it cannot be read."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.alternatives = [self._group(g) for g in text.split("||")]

    def allows(self, v: Version) -> bool:
        return any(self._all(group, v) for group in self.alternatives)

    @staticmethod
    def _all(group: list[list[_Bound]], v: Version) -> bool:
        return all(_holds(b, v) for bounds in group for b in bounds)

    def _group(self, text: str) -> list[list[_Bound]]:
        text = re.sub(r"\s+-\s+", " - ", text.strip())
        text = re.sub(r"(!=|>=|=>|<=|=<|~>|[=<>~^])\s+", r"\1", text)
        words = [w for w in re.split(r"[\s,]+", text) if w]
        out: list[list[_Bound]] = []
        i = 0
        while i < len(words):
            if i + 2 < len(words) and words[i + 1] == "-":
                out.append(self._bounds(">=", words[i]) + self._upper(words[i + 2]))
                i += 3
                continue
            m = _OP.match(words[i])
            assert m is not None
            out.append(self._bounds(m.group(1) or "=", m.group(2)))
            i += 1
        if not out:
            raise ValueError(f"empty semver range {self.text!r}")
        return out

    def _upper(self, text: str) -> list[_Bound]:
        """The upper end of a hyphen range (a wildcard part: below the next)."""
        (major, minor, patch), pre = _parts(text, self.text)
        if major is None:
            return []
        if minor is None:
            return [_Bound("<", Version(major + 1, 0, 0))]
        if patch is None:
            return [_Bound("<", Version(major, minor + 1, 0))]
        return [_Bound("<=", Version(major, minor, patch, pre))]

    def _bounds(self, op: str, text: str) -> list[_Bound]:
        parts, pre = _parts(text, self.text)
        major, minor, patch = parts
        if major is None:  # "*": anything (releases)
            return [_Bound(">=", Version(0, 0, 0))] if op not in ("!=", "<", ">") else \
                [_Bound("<", Version(0, 0, 0))]
        low = Version(major, minor or 0, patch or 0, pre)
        if op in ("=<", "<="):
            op = "<="
        if op == "=>":
            op = ">="
        if op == "~>":
            op = "~"
        if op == "~":
            up = Version(major + 1, 0, 0) if minor is None else Version(major, minor + 1, 0)
            return [_Bound(">=", low), _Bound("<", up)]
        if op == "^":
            if major > 0 or minor is None:
                up = Version(major + 1, 0, 0)
            elif minor > 0 or patch is None:
                up = Version(0, minor + 1, 0)
            else:
                up = Version(0, 0, patch + 1)
            return [_Bound(">=", low), _Bound("<", up)]
        wild = minor is None or patch is None
        if not wild or op in (">=", "<"):
            return [_Bound(op, low)]
        upper = Version(major + 1, 0, 0) if minor is None else Version(major, minor + 1, 0)
        if op == "=":
            return [_Bound(">=", low), _Bound("<", upper)]
        if op == ">":
            return [_Bound(">=", upper)]
        if op == "<=":
            return [_Bound("<", upper)]
        return [_Bound("!=", low)]  # "!=" with a wildcard: not that exact version (as Masterminds)


def _parts(text: str, whole: str) -> tuple[tuple[int | None, int | None, int | None], tuple[object, ...]]:
    core, _, rest = text.lstrip("vV").partition("-")
    core = core.split("+")[0]
    pieces = core.split(".")
    if not core or len(pieces) > 3 or not all(_PART.match(p) for p in pieces):
        raise ValueError(f"{text!r} in semver range {whole!r} is not a version")
    numbers: list[int | None] = []
    for p in pieces:
        numbers.append(int(p) if p.isdigit() and (not numbers or numbers[-1] is not None) else None)
    while len(numbers) < 3:
        numbers.append(None)
    pre = tuple(int(p) if p.isdigit() else p for p in rest.split("+")[0].split(".")) if rest else ()
    return (numbers[0], numbers[1], numbers[2]), pre


def _holds(b: _Bound, v: Version) -> bool:
    if v.pre and not b.version.pre:
        return False  # a pre-release only satisfies a comparison that names one
    a, c = v.key(), b.version.key()
    return {"=": a == c, "!=": a != c, ">": a > c, "<": a < c, ">=": a >= c, "<=": a <= c}[b.op]


def latest(constraint: str, tags: list[str]) -> str | None:
    """The tag source-controller checks out for ``constraint``: the highest
    version among the tags that satisfy it (None: none does).
    ``ValueError`` when the range cannot be read."""
    c = Constraint(constraint)
    found = [(v.key(), t) for t in tags if (v := parse_version(t)) is not None and c.allows(v)]
    return max(found)[1] if found else None
