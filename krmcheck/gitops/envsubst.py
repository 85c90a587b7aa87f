"""The envsubst dialect of Flux's post-build substitution, on one string.

kustomize-controller runs fluxcd/pkg/envsubst (a fork of drone/envsubst)
over the YAML text of each rendered object. What it understands:

* ``${var}``; ``$var`` without braces is left alone;
* ``${var:=default}``, ``${var:-default}``, ``${var=default}``,
  ``${var:?default}``, ``${var:+default}``: all one function in the fork,
  the default when the value is empty or the variable undefined (strict
  mode too); a default may itself hold ``${...}``. ``${var-default}`` is
  no expression of the fork: it refuses the text ("missing closing brace");
* ``${#var}`` (length), ``${var^}``, ``${var^^}``, ``${var,}``, ``${var,,}``
  (case), ``${var:offset}`` and ``${var:offset:length}`` (substring);
* ``$$`` is an escaped ``$``: ``$${var}`` becomes the literal ``${var}``;
* the pattern operators, as the fork has them (funcs.go, parse/parse.go):

  - ``${var/old/new}``, ``${var//old/new}``, ``${var/#old/new}``,
    ``${var/%old/new}``: replace the first, every, a leading or a trailing
    ``old``. ``old`` is a plain string, no glob. Without ``new``
    (``${var/old/}``) the first and every occurrence are deleted, while the
    leading and trailing forms leave the value unchanged. ``old`` ends at
    the first ``/`` (a run of ``/`` is one separator), ``new`` at ``}``;
    in both, ``\\/`` is a ``/``, ``\\\\`` a ``\\`` and ``$$`` a ``$``;
  - ``${var#glob}``, ``${var##glob}``, ``${var%glob}``, ``${var%%glob}``:
    remove the shortest or longest prefix or suffix that the glob matches
    (path/match.go: ``*``, ``?``, ``[a-z]``, ``[^a-z]``, ``\\c``, where
    ``*`` and ``?`` match a ``/`` too). The glob ends at ``}`` and has no
    escapes of its own. A ``*`` standing last matches whatever is left, so
    ``${var#*}`` removes the first byte; only a nonempty prefix or suffix
    is ever removed; the suffix forms match the reversed glob against the
    reversed value, so a ``[...]`` class there reads backwards (``]...[``)
    and is no class; a malformed glob leaves the value as it is. The fork
    cuts bytes, not characters: where a match ends inside a multi-byte
    character, each byte left over becomes U+FFFD here (the controller
    writes the bytes as they are);
  - each argument is either text or one ``${...}`` expression, not both
    (``${var/a/${x}}`` is allowed, ``${var/a/b${x}}`` is not).

  An undefined variable is "" to them (an error in strict mode); a
  variable whose value is unknown makes the whole expression unknown, and
  so does an argument holding one.

A form the fork refuses to parse is a :class:`SubstitutionError`, as the
controller refuses the text: one that starts as an operator above does
(``${var/a}``, ``${var#}``), and any other character after a name
(``${var-x}``, ``${var?x}``, ``${var+x}``, ``${var@Q}``: "missing closing
brace"). ``Expansion.unsupported`` stays for callers; nothing is listed.

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
        if op[:1] == "-":  # the fork knows no ${var-default}: it refuses the text
            raise SubstitutionError("missing closing brace")
        if op in (":=", ":-", ":?", ":+") or op[:1] == "=":
            return self.default(name, start, 1 if op[:1] == "=" else 2)
        if op[:1] == ":":
            return self.substring(name, start)
        if op[:1] in "^,":
            return self.casing(name, start)
        if op[:1] in ("/", "#", "%"):
            return self.pattern(name, start)
        raise SubstitutionError("missing closing brace")  # ${var?x}, ${var+x}, ${var@Q}: no operator of the fork

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

    def default(self, name: str, start: int, width: int) -> str:
        """Every default operator is one function in the fork: the default
        when the value is empty, an undefined variable's too (strict mode
        exempts them)."""
        self.i += width
        before = len(self.out.used), len(self.out.undefined), len(self.out.unknown)
        fallback = self.text_until("}")
        written = self.s[start:self.i]
        found = self.lookup(name)
        if isinstance(found, Unknown):
            self._forget(before)
            self.out.unknown.append(name)
            return written
        if found is None or found.value == "":
            return fallback
        self._forget(before)
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

    # --- pattern operators ---------------------------------------------------

    def pattern(self, name: str, start: int) -> str:
        """``${var/old/new}`` and its kin, ``${var#glob}`` and its kin."""
        s = self.s
        out = self.out
        before = len(out.used), len(out.undefined), len(out.unknown), len(out.unsupported)
        args: list[str] = []
        if s[self.i] == "/":
            op = s[self.i:self.i + 2] if s[self.i + 1:self.i + 2] in ("/", "#", "%") else "/"
            self.i += len(op)
            args.append(self.argument(ends_at_slash=True))
            if not s.startswith("/", self.i):
                raise SubstitutionError(f"bad substitution: {s[start:self.i + 1]!r}")
            while s.startswith("/", self.i):  # however many: one separator
                self.i += 1
            if not s.startswith("}", self.i):  # "${var/old/}": no replacement
                args.append(self.argument(ends_at_slash=False))
        else:
            op = s[self.i:self.i + 2] if s.startswith(s[self.i] * 2, self.i) else s[self.i]
            self.i += len(op)
            args.append(self.argument(ends_at_slash=False, escapes=False))
        if not s.startswith("}", self.i):
            raise SubstitutionError(f"bad substitution: {s[start:self.i + 1]!r}")
        self.i += 1
        written = s[start:self.i]
        found = self.lookup(name)
        if isinstance(found, Unknown) or (found is None and self.keep_undefined):
            # the value is not known, and neither is what the operator makes of it
            self._forget(before[:3])
            out.unknown.append(name)
            return written
        if len(out.unknown) > before[2] or len(out.unsupported) > before[3]:
            # an argument holds an expression kept as written: so is this one
            del out.used[before[0]:]
            del out.undefined[before[1]:]
            return written
        if found is None:
            if self.strict:
                raise SubstitutionError(f"variable not set (strict mode): {name}")
            out.undefined.insert(before[1], name)
            value = ""
        else:
            out.used.insert(before[0], (name, found))
            value = found.value
        return _OPERATORS[op](value, args)

    def argument(self, ends_at_slash: bool, escapes: bool = True) -> str:
        """One argument of a pattern operator: one ``${...}`` expression, or
        text up to ``}`` (``/`` too for the first argument of a replacement)
        or the next ``${``. The replacements' arguments take ``$$``, ``\\/``
        and ``\\\\`` as escapes; an argument cannot be empty."""
        s = self.s
        if s.startswith("${", self.i):
            return self.expression()
        stop = "/" if ends_at_slash else "}"
        parts: list[str] = []
        while self.i < len(s) and not s.startswith("${", self.i):
            c = s[self.i]
            following = s[self.i + 1:self.i + 2]
            if escapes and ((c == "$" and following == "$") or (c == "\\" and following in ("/", "\\"))):
                parts.append(following)  # the escaped character is taken as it is, even a stop
                self.i += 2
                continue
            if c == stop:
                break
            parts.append(c)
            self.i += 1
        if not parts:
            raise SubstitutionError(f"unable to parse substitution within function: {s[self.i - 2:self.i + 8]!r}")
        return "".join(parts)


def _replace_first(value: str, args: list[str]) -> str:
    # funcs.go replaceFirst: one plain-string occurrence; no replacement deletes it
    return value.replace(args[0], args[1] if len(args) > 1 else "", 1)


def _replace_all(value: str, args: list[str]) -> str:
    # funcs.go replaceAll: every occurrence
    return value.replace(args[0], args[1] if len(args) > 1 else "")


def _replace_prefix(value: str, args: list[str]) -> str:
    # funcs.go replacePrefix: both arguments needed, else the value as it is
    if len(args) != 2 or not value.startswith(args[0]):
        return value
    return args[1] + value[len(args[0]):]


def _replace_suffix(value: str, args: list[str]) -> str:
    # funcs.go replaceSuffix: both arguments needed, else the value as it is
    if len(args) != 2 or not value.endswith(args[0]):
        return value
    return value[:len(value) - len(args[0])] + args[1]


def _prefix_trim(longest: bool) -> Callable[[str, list[str]], str]:
    def trim(value: str, args: list[str]) -> str:
        return _text(_trim(_utf8(value), _utf8(args[0]), longest))
    return trim


def _suffix_trim(longest: bool) -> Callable[[str, list[str]], str]:
    # funcs.go trim*Suffix: the prefix trim of the reversed value by the reversed glob, reversed back
    def trim(value: str, args: list[str]) -> str:
        return _text(_trim(_utf8(value[::-1]), _utf8(args[0][::-1]), longest))[::-1]
    return trim


_OPERATORS: dict[str, Callable[[str, list[str]], str]] = {
    "/": _replace_first, "//": _replace_all, "/#": _replace_prefix, "/%": _replace_suffix,
    "#": _prefix_trim(False), "##": _prefix_trim(True), "%": _suffix_trim(False), "%%": _suffix_trim(True),
}


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _text(data: bytes) -> str:
    """Bytes as Go reads them into characters: each byte that starts no
    valid UTF-8 sequence is one U+FFFD."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        chars: list[str] = []
        i = 0
        while i < len(data):
            rune, width = _rune(data, i)
            chars.append(chr(rune))
            i += width
        return "".join(chars)


def _rune(data: bytes, i: int) -> tuple[int, int]:
    """The character at ``data[i]`` and its width in bytes; (U+FFFD, 1) where
    the bytes there are no UTF-8 (as Go's utf8.DecodeRune)."""
    lead = data[i]
    if lead < 0x80:
        return lead, 1
    width = 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 0
    if width and i + width <= len(data):
        try:
            return ord(data[i:i + width].decode("utf-8")), width
        except UnicodeDecodeError:
            pass
    return 0xFFFD, 1


def _trim(value: bytes, glob: bytes, longest: bool) -> bytes:
    """funcs.go trimShortest / trimLongest: the value without the shortest
    (longest) nonempty prefix, cut at any byte, that ``glob`` matches; a
    malformed glob met on the way leaves the value as it is."""
    cut = 0
    for end in range(len(value), 0, -1):  # the longest prefix first
        try:
            matched = _glob(glob, value[:end])
        except _BadGlob:
            return value
        if matched:
            cut = end
            if longest:
                break
    return value[cut:]


class _BadGlob(Exception):
    pass


def _glob(pattern: bytes, name: bytes) -> bool:
    """Whether ``pattern`` matches all of ``name``, as the fork's
    path/match.go Match decides it: pieces of literal text, ``?`` and
    ``[...]`` after an optional ``*``; each piece after a ``*`` is taken at
    the first place it fits (the last piece: where it reaches the end),
    without trying later places once a following piece fails; a ``*``
    that ends the pattern matches whatever is left, ``/`` included."""
    while pattern:
        star, piece, pattern = _piece(pattern)
        if star and not piece:
            return True
        rest = _match_piece(piece, name)
        if rest is not None and (not rest or pattern):
            name = rest
            continue
        if not star:
            return False
        for skip in range(1, len(name) + 1):
            rest = _match_piece(piece, name[skip:])
            if rest is not None and (pattern or not rest):
                name = rest
                break
        else:
            return False
    return not name


def _piece(pattern: bytes) -> tuple[bool, bytes, bytes]:
    """Leading ``*`` (any number of them), then the text up to the next ``*``
    outside ``[...]``, then the rest."""
    stripped = pattern.lstrip(b"*")
    star = len(stripped) != len(pattern)
    in_class = False
    i = 0
    while i < len(stripped):
        c = stripped[i]
        if c == 0x5C:  # "\": the next byte is taken as it is
            if i + 1 < len(stripped):
                i += 1
        elif c == 0x5B:  # "["
            in_class = True
        elif c == 0x5D:  # "]"
            in_class = False
        elif c == 0x2A and not in_class:  # "*"
            break
        i += 1
    return star, stripped[:i], stripped[i:]


def _match_piece(piece: bytes, name: bytes) -> bytes | None:
    """What is left of ``name`` once ``piece`` (no ``*`` in it) matched its
    start; None if it does not."""
    while piece:
        if not name:
            return None
        c = piece[0]
        if c == 0x5B:  # "[": one character in (or, after "^", not in) the class
            rune, width = _rune(name, 0)
            name = name[width:]
            piece = piece[1:]
            negated = piece[:1] == b"^"
            if negated:
                piece = piece[1:]
            inside = False
            ranges = 0
            while True:
                if piece[:1] == b"]" and ranges:
                    piece = piece[1:]
                    break
                low, piece = _class_char(piece)
                high = low
                if piece[:1] == b"-":
                    high, piece = _class_char(piece[1:])
                inside = inside or low <= rune <= high
                ranges += 1
            if inside == negated:
                return None
        elif c == 0x3F:  # "?": any one character
            name = name[_rune(name, 0)[1]:]
            piece = piece[1:]
        else:
            if c == 0x5C:  # "\": the byte after it, literally
                piece = piece[1:]
                if not piece:
                    raise _BadGlob()
            if piece[0] != name[0]:
                return None
            name = name[1:]
            piece = piece[1:]
    return name


def _class_char(piece: bytes) -> tuple[int, bytes]:
    """One character of a ``[...]`` class (``\\`` escapes it) and the rest,
    which may not be empty (path/match.go getEsc)."""
    if not piece or piece[:1] in (b"-", b"]"):
        raise _BadGlob()
    if piece[:1] == b"\\":
        piece = piece[1:]
        if not piece:
            raise _BadGlob()
    rune, width = _rune(piece, 0)
    if (rune == 0xFFFD and width == 1) or len(piece) == width:
        raise _BadGlob()
    return rune, piece[width:]
