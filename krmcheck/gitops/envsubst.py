"""The envsubst dialect of Flux's post-build substitution, on one string.

kustomize-controller runs fluxcd/pkg/envsubst (a fork of drone/envsubst)
over the YAML text of each rendered object. What it understands:

* ``${var}``; ``$var`` without braces is left alone;
* ``${var:=default}`` / ``${var:-default}`` (default when unset or empty),
  ``${var=default}`` / ``${var-default}`` (default when unset); a default may
  itself hold ``${...}``;
* ``${#var}`` (length), ``${var^}``, ``${var^^}``, ``${var,}``, ``${var,,}``
  (case), ``${var:offset}`` and ``${var:offset:length}`` (substring);
* ``$$`` is an escaped ``$``: ``$${var}`` becomes the literal ``${var}``.

Pattern operators (``${var/a/b}``, ``${var#a}``, ``${var%a}``) are not
evaluated here: the expression is kept as written and reported as such.

A variable's name is letters, digits and ``_`` (the controller rejects
defined names that do not match ``[_a-zA-Z][_a-zA-Z0-9]*``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple, Union

from krmcheck.tree.origin import Variable

NAME = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*\Z")


class Unknown(NamedTuple):
    """A variable whose value the repository cannot tell (it comes from an
    object the repository does not hold, or holds encrypted)."""

    source: str


Lookup = Callable[[str], Union[Variable, Unknown, None]]


class SubstitutionError(ValueError):
    """Text the controller would refuse (a bad expression, strict mode);
    ``position``: where in the text the refused expression starts."""

    position: int = 0


class Span(NamedTuple):
    """One top-level expression of a text: where it was (``start``..``end``
    in the text given) and where its value went (``out_start``..``out_end``
    in the result), and what it used."""

    start: int
    end: int
    out_start: int
    out_end: int
    used: tuple[tuple[str, Variable], ...]
    undefined: tuple[str, ...]
    unknown: tuple[str, ...]
    unsupported: tuple[str, ...]


@dataclass
class Expansion:
    text: str
    used: list[tuple[str, Variable]] = field(default_factory=list)  # variables that gave a value
    undefined: list[str] = field(default_factory=list)  # non-strict: became ""
    unknown: list[str] = field(default_factory=list)  # kept as written
    unsupported: list[str] = field(default_factory=list)  # expressions kept as written
    spans: list[Span] = field(default_factory=list)  # each top-level expression, in order


def expand(text: str, lookup: Lookup, strict: bool = False, keep_undefined: bool = False) -> Expansion:
    """``text`` with every ``${...}`` expression evaluated.

    Non-strict (the controller's default): an undefined variable counts as
    set and empty, so ``${x-default}`` gives "" and ``${x:-default}`` gives
    the default. Strict: an undefined variable without a default is an error.
    ``keep_undefined`` (templates whose values come later): an undefined
    variable takes its default, and without one the expression stays as written."""
    out = Expansion("")
    parser = _Parser(text, lookup, strict or keep_undefined, out)
    parser.keep_undefined = keep_undefined
    try:
        out.text = parser.text_until(None)
    except SubstitutionError as e:
        e.position = parser.started
        raise
    return out


class _Parser:
    def __init__(self, text: str, lookup: Lookup, strict: bool, out: Expansion) -> None:
        self.s = text
        self.i = 0
        self.lookup = lookup
        self.strict = strict
        self.out = out
        self.keep_undefined = False
        self.started = 0  # where the top-level expression being read starts

    def text_until(self, stop: str | None) -> str:
        """Literal text and expressions up to ``stop`` (consumed) or the end."""
        parts: list[str] = []
        s = self.s
        written = 0  # characters in parts (at the top level: the result so far)
        while self.i < len(s):
            c = s[self.i]
            if stop is not None and c == stop:
                self.i += 1
                return "".join(parts)
            if c == "$" and s.startswith("$$", self.i):
                # an escaped dollar: what follows is plain text, so "$${x}" is
                # the literal "${x}"
                parts.append("$")
                self.i += 2
            elif c == "$" and s.startswith("${", self.i):
                if stop is None:
                    parts.append(self.top_level(written))
                else:
                    parts.append(self.expression())
            else:
                # plain text up to the next "$" (or stop) in one piece
                end = self.i + 1
                while end < len(s) and s[end] != "$" and (stop is None or s[end] != stop):
                    end += 1
                parts.append(s[self.i:end])
                self.i = end
            written += len(parts[-1])
        if stop is not None:
            raise SubstitutionError("missing closing brace")
        return "".join(parts)

    def top_level(self, written: int) -> str:
        """An expression of the text itself (not inside a default), its span recorded."""
        out = self.out
        before = len(out.used), len(out.undefined), len(out.unknown), len(out.unsupported)
        self.started = start = self.i
        value = self.expression()
        out.spans.append(Span(start, self.i, written, written + len(value),
                              tuple(out.used[before[0]:]), tuple(out.undefined[before[1]:]),
                              tuple(out.unknown[before[2]:]), tuple(out.unsupported[before[3]:])))
        return value

    def expression(self) -> str:
        start = self.i
        self.i += 2
        s = self.s
        if s.startswith("#", self.i):
            self.i += 1
            name = self.name()
            self.close()
            value = self.resolve(name)
            return s[start:self.i] if value is None else str(len(value))
        name = self.name()
        op = s[self.i:self.i + 2]
        if not op:
            raise SubstitutionError("missing closing brace")
        if op[:1] == "}":
            self.i += 1
            value = self.resolve(name)
            return s[start:self.i] if value is None else value
        if op in (":=", ":-") or op[:1] in ("=", "-"):
            return self.default(name, start, unset_only=op[:1] != ":")
        if op[:1] == ":":
            return self.substring(name, start)
        if op[:1] in "^,":
            return self.casing(name, start)
        self.skip_to_close()
        written = s[start:self.i]
        self.out.unsupported.append(written)
        return written

    def name(self) -> str:
        m = re.compile(r"\w+").match(self.s, self.i)
        if m is None:
            raise SubstitutionError(f"unable to parse variable name in {self.s[self.i - 2:self.i + 8]!r}")
        self.i = m.end()
        return m.group(0)

    def close(self) -> None:
        if not self.s.startswith("}", self.i):
            raise SubstitutionError("missing closing brace")
        self.i += 1

    def skip_to_close(self) -> None:
        depth = 1
        while self.i < len(self.s) and depth:
            if self.s.startswith("${", self.i):
                depth += 1
                self.i += 1
            elif self.s[self.i] == "}":
                depth -= 1
            self.i += 1
        if depth:
            raise SubstitutionError("missing closing brace")

    def resolve(self, name: str) -> str | None:
        """A variable's value; None when unknown (the expression stays as written)."""
        found = self.lookup(name)
        if isinstance(found, Unknown):
            self.out.unknown.append(name)
            return None
        if found is None:
            if self.keep_undefined:
                self.out.unknown.append(name)
                return None
            if self.strict:
                raise SubstitutionError(f"variable not set (strict mode): {name}")
            self.out.undefined.append(name)
            return ""
        self.out.used.append((name, found))
        return found.value

    def default(self, name: str, start: int, unset_only: bool) -> str:
        self.i += 1 if unset_only else 2
        before = len(self.out.used), len(self.out.undefined), len(self.out.unknown)
        fallback = self.text_until("}")
        written = self.s[start:self.i]
        found = self.lookup(name)
        if isinstance(found, Unknown):
            self._forget(before)
            self.out.unknown.append(name)
            return written
        if found is None and (self.strict or not unset_only):
            return fallback  # non-strict, every variable counts as set: "-" and "=" give ""
        self._forget(before)
        if found is None:
            self.out.undefined.append(name)
            return ""
        if found.value == "" and not unset_only:
            return fallback
        self.out.used.append((name, found))
        return found.value

    def _forget(self, before: tuple[int, int, int]) -> None:
        """A default that was not used contributes nothing."""
        del self.out.used[before[0]:]
        del self.out.undefined[before[1]:]
        del self.out.unknown[before[2]:]

    def substring(self, name: str, start: int) -> str:
        m = re.compile(r":\s*(-?\d+)(?::(\d+))?}").match(self.s, self.i)
        if m is None:
            # an offset or length that is no number (``${var:position}`` in a
            # CRD's description) parses all the same, and gives the value
            # unchanged, as bash does
            other = re.compile(r":([^:}]*)(?::([^}]*))?}").match(self.s, self.i)
            if other is None:
                raise SubstitutionError(f"unable to parse default function in {self.s[start:start + 20]!r}")
            self.i = other.end()
            value = self.resolve(name)
            return self.s[start:self.i] if value is None else value
        self.i = m.end()
        value = self.resolve(name)
        if value is None:
            return self.s[start:self.i]
        offset = int(m.group(1))
        offset = max(len(value) + offset, 0) if offset < 0 else min(offset, len(value))
        end = len(value) if m.group(2) is None else offset + int(m.group(2))
        return value[offset:end]

    def casing(self, name: str, start: int) -> str:
        m = re.compile(r"(\^\^|\^|,,|,)}").match(self.s, self.i)
        if m is None:
            raise SubstitutionError(f"bad substitution: {self.s[start:start + 20]!r}")
        self.i = m.end()
        value = self.resolve(name)
        if value is None:
            return self.s[start:self.i]
        op = m.group(1)
        return {"^^": value.upper(), ",,": value.lower(),
                "^": value[:1].upper() + value[1:], ",": value[:1].lower() + value[1:]}[op]
