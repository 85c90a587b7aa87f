"""Go's text/template, the part of it Argo CD ApplicationSet templates use
(``goTemplate: true``; applicationset/utils ``Render.Replace``): actions
``{{ pipeline }}`` with ``{{-``/``-}}`` trimming and ``{{/* comments */}}``;
field chains (``.path.basename``, ``$.name``), string, number and boolean
literals, parenthesised pipelines, ``|``; ``if``/``else if``/``else``/
``with``/``range`` blocks and ``end``; Go's built-in functions and the sprig
functions templates reach for (``default``, ``lower``, ``replace``,
``trunc``, ``join``, ``splitList``...), plus Argo CD's ``normalize`` and
``slugify``.

A missing map key prints ``<no value>``, as Go's default ``missingkey``
option has it; with ``missingkey=error`` (``goTemplateOptions``) it is an
error. Anything else is a ``TemplateError`` naming what is not supported:
the Application is then not made, and one note says why.

The Flux Operator's ResourceSets (``resourceset.py``) use the same engine
with ``<<``/``>>`` as delimiters, the slim-sprig functions and functions of
their own given per call (``functions``): a function called with no
arguments can be an operand (``get inputs "name"``) and the start of a
field chain (``inputs.tenant``), as Go's text/template allows.
``render_mapped`` also says where in the template each piece of the output
came from, so that what the output holds can point at its template line.
"""

from __future__ import annotations

import base64
import hashlib
import json
import posixpath
import re
import zlib
from collections.abc import Callable
from typing import Any, NamedTuple

from krmcheck.tree.emit import emit
from krmcheck.tree.node import from_data
from krmcheck.tree.origin import Origin

NO_VALUE = "<no value>"
DELIMS = ("{{", "}}")
_TOKEN = re.compile(r"""\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<raw>`[^`]*`)|(?P<num>-?\d+(?:\.\d+)?)"""
                    r"""|(?P<field>(?:\$[A-Za-z0-9_]*)?(?:\.[A-Za-z0-9_]+)+|\$[A-Za-z0-9_]*|\.)"""
                    r"""|(?P<chain>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+)"""
                    r"""|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>[|()]|:?=|,))""")
_ACTIONS: dict[tuple[str, str], re.Pattern[str]] = {}


class TemplateError(ValueError):
    pass


class MissingKey(TemplateError):
    """A key the data does not have, with ``missingkey=error``: the template
    itself fails so, whatever krmcheck supports."""


class Failed(TemplateError):
    """The template's own ``fail``."""


class _Missing:
    """A key a map does not have (printed as ``<no value>``)."""


MISSING = _Missing()


class Segment(NamedTuple):
    """Where a piece of the output starts, and where in the template it came
    from: text written as it stands, or the action that printed it."""

    out: int  # offset in the output
    source: int  # offset in the template: the text's own, or the action's start
    literal: bool  # template text (offsets inside it map one to one)


def render(text: str, data: Any, options: tuple[str, ...] = (), delims: tuple[str, str] = DELIMS,
           functions: dict[str, Callable[..., Any]] | None = None) -> str:
    """``text`` executed with ``data`` as the dot; ``functions`` join (and
    win over) the built-in ones."""
    return render_mapped(text, data, options, delims, functions)[0]


def render_mapped(text: str, data: Any, options: tuple[str, ...] = (), delims: tuple[str, str] = DELIMS,
                  functions: dict[str, Callable[..., Any]] | None = None) -> tuple[str, list[Segment]]:
    """The output of :func:`render`, with where each piece of it came from."""
    strict = "missingkey=error" in options
    nodes, rest = _parse(_lex(text, delims), ())
    if rest:
        raise TemplateError(f"unexpected {delims[0]}{rest[0][1]}{delims[1]}")
    out = _Out()
    known = {**FUNCTIONS, **functions} if functions else FUNCTIONS
    _exec(nodes, _Scope(data, {"$": data}, strict, known), out)
    return "".join(out.parts), out.segments


class _Out:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.segments: list[Segment] = []
        self.size = 0

    def add(self, s: str, source: int, literal: bool) -> None:
        if s:
            self.parts.append(s)
            self.segments.append(Segment(self.size, source, literal))
            self.size += len(s)


# --- lexing and parsing -----------------------------------------------------------

Token = tuple[str, str, int]  # ("text", s, offset) or ("action", body, offset)


def _action(delims: tuple[str, str]) -> re.Pattern[str]:
    """An action between the delimiters; ``-`` and a space trim (Go's ``{{- x -}}``)."""
    found = _ACTIONS.get(delims)
    if found is None:
        left, right = (re.escape(d) for d in delims)
        found = _ACTIONS[delims] = re.compile(rf"{left}(-\s)?(.*?)(\s-)?{right}", re.S)
    return found


def _lex(text: str, delims: tuple[str, str] = DELIMS) -> list[Token]:
    out: list[Token] = []
    pos = 0
    for m in _action(delims).finditer(text):
        before, start = text[pos:m.start()], pos
        if m.group(1):
            before = before.rstrip()
        if out and out[-1][0] == "trim":
            out.pop()
            stripped = before.lstrip()
            start += len(before) - len(stripped)
            before = stripped
        out.append(("text", before, start))
        body = m.group(2).strip()
        if not (body.startswith("/*") and body.endswith("*/")):
            out.append(("action", body, m.start()))
        if m.group(3):
            out.append(("trim", "", m.end()))
        pos = m.end()
    tail, start = text[pos:], pos
    if out and out[-1][0] == "trim":
        out.pop()
        stripped = tail.lstrip()
        start += len(tail) - len(stripped)
        tail = stripped
    out.append(("text", tail, start))
    return [t for t in out if t[:2] != ("text", "")]


# ("text", s, offset) | ("out", pipe, offset) | ("if"|"with"|"range", pipe, body, else_body)
Node = tuple


def _parse(tokens: list[Token], stops: tuple[str, ...]) -> tuple[list[Node], list[Token]]:
    nodes: list[Node] = []
    while tokens:
        kind, body, at = tokens[0]
        if kind == "text":
            nodes.append(("text", body, at))
            tokens = tokens[1:]
            continue
        word = body.split(None, 1)[0] if body else ""
        if word in stops or word == "else":
            return nodes, tokens
        tokens = tokens[1:]
        if word in ("if", "with", "range"):
            node, tokens = _block(word, body[len(word):].strip(), tokens)
            nodes.append(node)
        elif word == "end":
            raise TemplateError("unexpected {{end}}")
        elif word in ("define", "template", "block", "break", "continue"):
            raise TemplateError(f"{{{{{word}}}}} is not supported by krmcheck")
        else:
            nodes.append(("out", body, at))
    return nodes, tokens


def _block(word: str, pipe: str, tokens: list[Token]) -> tuple[Node, list[Token]]:
    """A block up to its ``end`` (consumed); ``else if`` chains share it."""
    then, tokens = _parse(tokens, ("end",))
    otherwise: list[Node] = []
    if tokens and tokens[0][1].split(None, 1)[0:1] == ["else"]:
        rest = tokens[0][1][4:].strip()
        tokens = tokens[1:]
        inner = rest.split(None, 1)[0] if rest else ""
        if inner in ("if", "with"):
            node, tokens = _block(inner, rest[len(inner):].strip(), tokens)
            return (word, pipe, then, [node]), tokens
        otherwise, tokens = _parse(tokens, ("end",))
    if not tokens or tokens[0][1] != "end":
        raise TemplateError(f"unexpected EOF: {{{{{word}}}}} without {{{{end}}}}")
    return (word, pipe, then, otherwise), tokens[1:]


# --- executing ----------------------------------------------------------------------

class _Scope:
    def __init__(self, dot: Any, variables: dict[str, Any], strict: bool,
                 functions: dict[str, Callable[..., Any]]) -> None:
        self.dot, self.variables, self.strict, self.functions = dot, variables, strict, functions

    def at(self, dot: Any) -> _Scope:
        return _Scope(dot, self.variables, self.strict, self.functions)


def _exec(nodes: list[Node], scope: _Scope, out: _Out) -> None:
    for node in nodes:
        kind = node[0]
        if kind == "text":
            out.add(node[1], node[2], True)
        elif kind == "out":
            value = _pipeline(node[1], scope)
            if not _is_assignment(node[1]):
                out.add(_print(value), node[2], False)
        elif kind in ("if", "with"):
            value = _pipeline(node[1], scope)
            if _truth(value):
                _exec(node[2], scope.at(value) if kind == "with" else scope, out)
            else:
                _exec(node[3], scope, out)
        else:  # range
            _range(node, scope, out)


def _range(node: Node, scope: _Scope, out: _Out) -> None:
    pipe = node[1]
    names: list[str] = []
    m = re.match(r"^(\$\w*)(?:\s*,\s*(\$\w*))?\s*:=\s*(.*)$", pipe, re.S)
    if m:
        names = [n for n in (m.group(1), m.group(2)) if n]
        pipe = m.group(3)
    value = _pipeline(pipe, scope)
    if isinstance(value, dict):  # Go visits a map's keys in sorted order
        items = sorted(value.items(), key=lambda kv: str(kv[0]))
    elif isinstance(value, list):
        items = list(enumerate(value))
    elif value is MISSING or value is None:
        items = []
    else:
        raise TemplateError(f"range can't iterate over {_print(value)}")
    if not items:
        _exec(node[3], scope, out)
        return
    for key, item in items:
        inner = scope.at(item)
        inner.variables = dict(scope.variables)
        if len(names) == 2:
            inner.variables[names[0]], inner.variables[names[1]] = key, item
        elif names:
            inner.variables[names[0]] = item
        _exec(node[2], inner, out)


def _is_assignment(pipe: str) -> bool:
    return re.match(r"^\$\w*\s*:?=", pipe) is not None


def _pipeline(text: str, scope: _Scope) -> Any:
    m = re.match(r"^(\$\w*)\s*:?=\s*(.*)$", text, re.S)
    if m:
        value = _pipeline(m.group(2), scope)
        scope.variables[m.group(1)] = value
        return value
    tokens = _tokens(text)
    value, rest = _pipe(tokens, scope)
    if rest:
        raise TemplateError(f"unexpected {rest[0][1]!r} in {text!r}")
    return value


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise TemplateError(f"cannot read {text[pos:]!r}")
        kind = m.lastgroup or ""
        if kind == "field" and out and out[-1] == ("op", ")") and m.start(kind) == pos:
            kind = "subfield"  # a field of a parenthesised pipeline's value: (split "." .x)._1
        out.append((kind, m.group(kind).strip() if kind != "subfield" else m.group("field").strip()))
        pos = m.end()
    return out


def _pipe(tokens: list[tuple[str, str]], scope: _Scope) -> tuple[Any, list[tuple[str, str]]]:
    value: Any = MISSING
    first = True
    while True:
        args: list[tuple[str, Any]] = []
        while tokens and tokens[0] != ("op", "|") and tokens[0] != ("op", ")"):
            kind, text = tokens[0]
            tokens = tokens[1:]
            if (kind, text) == ("op", "("):
                inner, tokens = _pipe(tokens, scope)
                if not tokens or tokens[0] != ("op", ")"):
                    raise TemplateError("unclosed (")
                tokens = tokens[1:]
                if tokens and tokens[0][0] == "subfield":
                    inner = _walk(inner, tokens[0][1][1:].split("."), scope.strict)
                    tokens = tokens[1:]
                args.append(("value", inner))
            else:
                args.append((kind, text))
        if not args:
            raise TemplateError("missing value in a pipeline")
        value = _command(args, scope, None if first else value, first)
        first = False
        if tokens and tokens[0] == ("op", "|"):
            tokens = tokens[1:]
            continue
        return value, tokens


def _command(args: list[tuple[str, Any]], scope: _Scope, piped: Any, first: bool) -> Any:
    kind, head = args[0]
    if kind == "ident" and head in ("and", "or") and len(args) > 1:
        return _logical(head, args[1:], scope, piped, first)
    if kind == "ident" and head not in ("true", "false", "nil"):
        fn = _function(head, scope)
        values = [_operand(k, t, scope) for k, t in args[1:]]
        if not first:
            values.append(piped)
        return fn(*values)
    if len(args) > 1 or not first:
        raise TemplateError(f"{head!r} is not a function")
    return _operand(kind, head, scope)


def _logical(head: str, args: list[tuple[str, Any]], scope: _Scope, piped: Any, first: bool) -> Any:
    """``and``/``or`` stop at the argument that decides, as Go's do (an
    argument after it is not evaluated: ``and (hasKey . "x") .x``)."""
    value: Any = None
    for k, t in args:
        value = _operand(k, t, scope)
        if _truth(value) != (head == "and"):
            return value
    if not first:
        value = piped
    return value


def _function(name: str, scope: _Scope) -> Callable[..., Any]:
    fn = scope.functions.get(name)
    if fn is None:
        raise TemplateError(f"function {name!r} is not supported by krmcheck")
    return fn


def _operand(kind: str, text: Any, scope: _Scope) -> Any:
    if kind == "value":
        return text
    if kind == "str":
        return json.loads(text)
    if kind == "raw":
        return text[1:-1]
    if kind == "num":
        return float(text) if "." in text else int(text)
    if kind == "ident":
        if text in ("true", "false", "nil"):
            return {"true": True, "false": False, "nil": None}[text]
        return _function(text, scope)()  # a function as an operand is called with no arguments
    if kind == "chain":  # a function's result, then its fields: inputs.tenant
        name, _, chain = text.partition(".")
        return _walk(_function(name, scope)(), chain.split("."), scope.strict)
    if kind == "field":
        return _field(text, scope)
    raise TemplateError(f"unexpected {text!r}")


def _field(text: str, scope: _Scope) -> Any:
    if text == ".":
        return scope.dot
    if text.startswith("$"):
        name, _, chain = text.partition(".")
        if name not in scope.variables:
            raise TemplateError(f"undefined variable {name}")
        value = scope.variables[name]
        parts = chain.split(".") if chain else []
    else:
        value = scope.dot
        parts = text[1:].split(".")
    return _walk(value, parts, scope.strict)


def _walk(value: Any, parts: list[str], strict: bool) -> Any:
    for part in parts:
        if isinstance(value, dict):
            if part not in value:
                if strict:
                    raise MissingKey(f"map has no entry for key {part!r}")
                value = MISSING
            else:
                value = value[part]
        elif value is MISSING or value is None:
            if strict:
                raise MissingKey(f"nil pointer evaluating .{part}")
            value = MISSING
        else:
            raise TemplateError(f"can't evaluate field {part} in {type(value).__name__}")
    return value


def _truth(v: Any) -> bool:
    return not (v is MISSING or v is None or v is False or v == 0 or v == "" or v == [] or v == {})


def _print(v: Any) -> str:
    """Go's fmt %v for the values YAML and JSON give."""
    if v is MISSING:
        return NO_VALUE
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return str(int(v)) if v == int(v) and abs(v) < 1e21 else repr(v)
    if isinstance(v, list):
        return "[" + " ".join(_print(x) for x in v) + "]"
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{_print(v[k])}" for k in sorted(v)) + "]"
    return str(v)


def _text(v: Any) -> str:
    return "" if v is MISSING or v is None else _print(v)


# --- functions ------------------------------------------------------------------------

def to_yaml(value: Any) -> str:
    """A value as sigs.k8s.io/yaml marshals it (keys sorted, a newline at
    the end): the Flux Operator's ``toYaml``; Argo CD's drops the newline."""
    data = None if value is MISSING else value
    return emit(from_data(data, Origin("", 0, 0)))


def sanitize_name(name: str) -> str:
    """Argo CD's ``normalize`` (applicationset/utils ``SanitizeName``)."""
    name = re.sub(r"[^-a-z0-9.]", "-", name.lower())[:253]
    return name.strip("-.")


def _slugify(max_size: int = 50, smart: bool = True, *text: Any) -> str:
    s = re.sub(r"[^a-z0-9-]+", "-", " ".join(_text(t) for t in text).lower()).strip("-")
    s = re.sub(r"-+", "-", s)
    if len(s) > max_size:
        s = s[:max_size]
        if smart and "-" in s:
            s = s[:s.rfind("-")]
    return s.strip("-")


def _go_quote(s: str) -> str:
    """Go's ``%q`` of a string (strconv.Quote): backslash escapes for quotes,
    backslashes and characters that do not print."""
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(ch)])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _default(d: Any, *given: Any) -> Any:
    return given[0] if given and _truth(given[0]) else d


def _eq(a: Any, *others: Any) -> bool:
    return any(_text(a) == _text(b) if isinstance(a, str) or isinstance(b, str) else a == b for b in others)


def _index(v: Any, *keys: Any) -> Any:
    for k in keys:
        if isinstance(v, dict):
            v = v.get(k, MISSING)
        elif isinstance(v, list):
            v = v[int(k)]
        else:
            raise TemplateError("index of a value that is not a map or list")
    return v


def _printf(fmt: str, *args: Any) -> str:
    it = iter(args)

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "%%":
            return "%"
        v = next(it, MISSING)
        return f'"{_text(v)}"' if m.group(1) == "q" else _text(v)

    return re.sub(r"%%|%[-+ #0-9.]*([sdvq])", one, fmt)


def _int(v: Any) -> int:
    """sprig's ``int`` (cast.ToInt): a number, a numeric string (Go's base
    prefixes too), a boolean; anything else is 0."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v)
    if isinstance(v, str):
        text = re.sub(r"\.0*$", "", v.strip())
        try:
            return int(text, 0)
        except ValueError:
            return 0
    return 0


def _float(v: Any) -> float:
    if isinstance(v, (bool, int, float)):
        return float(v)
    try:
        return float(str(v)) if isinstance(v, str) else 0.0
    except ValueError:
        return 0.0


def _go_div(a: int, b: int) -> int:
    """Go's integer division, which truncates toward zero."""
    if b == 0:
        raise TemplateError("integer divide by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _go_mod(a: int, b: int) -> int:
    if b == 0:
        raise TemplateError("integer divide by zero")
    return a - _go_div(a, b) * b


def _indent(n: int, s: Any) -> str:
    pad = " " * n
    return pad + _text(s).replace("\n", "\n" + pad)


def _substr(start: int, end: int, s: Any) -> str:
    text = _text(s)
    if start < 0:
        return text[:end]
    if end < 0 or end > len(text):
        return text[start:]
    return text[start:end]


def _list_of(v: Any) -> list[Any]:
    if isinstance(v, list):
        return v
    if v is MISSING or v is None:
        return []
    raise TemplateError(f"cannot find a list in {_print(v)}")


def _dig(*args: Any) -> Any:
    """``dig "a" "b" DEFAULT DICT``: the value at the keys, or the default."""
    if len(args) < 3 or not isinstance(args[-1], dict):
        raise TemplateError("dig needs keys, a default and a dict")
    keys, default, value = args[:-2], args[-2], args[-1]
    for k in keys:
        if not isinstance(value, dict) or k not in value:
            return default
        value = value[k]
    return value


def _fail(message: Any) -> Any:
    raise Failed(f"fail: {_text(message)}")


def _kind_of(v: Any) -> str:
    """Go's reflect kind of a value decoded from JSON or YAML."""
    if v is MISSING or v is None:
        return "invalid"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    return "slice" if isinstance(v, list) else "map" if isinstance(v, dict) else type(v).__name__


def _split(sep: str, s: Any) -> dict[str, str]:
    """sprig's ``split``: a dict of ``_0``, ``_1``..."""
    return {f"_{i}": part for i, part in enumerate(_text(s).split(sep))}


def _go_regex(rx: str) -> re.Pattern[str]:
    try:
        return re.compile(rx)
    except re.error as e:
        raise TemplateError(f"regexp {rx!r}: {e}") from None


def _limited(found: list[str], n: int) -> list[str]:
    return found if n < 0 else found[:n]


def _regex_split(rx: str, s: Any, n: int) -> list[str]:
    if n == 0:
        return []
    return _go_regex(rx).split(_text(s), maxsplit=n - 1 if n > 0 else 0)


def _base(p: Any) -> str:
    """Go's path.Base."""
    text = _text(p).rstrip("/")
    if not text:
        return "/" if _text(p) else "."
    return text.rsplit("/", 1)[-1]


def _ext(p: Any) -> str:
    name = _text(p).rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot:] if dot >= 0 else ""


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "and": lambda *a: next((x for x in a if not _truth(x)), a[-1]),
    "or": lambda *a: next((x for x in a if _truth(x)), a[-1]),
    "not": lambda a: not _truth(a),
    "eq": _eq,
    "ne": lambda a, b: not _eq(a, b),
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "len": lambda a: len(a),
    "index": _index,
    "print": lambda *a: "".join(_text(x) for x in a),
    "println": lambda *a: " ".join(_text(x) for x in a) + "\n",
    "printf": _printf,
    "default": _default,
    "empty": lambda a: not _truth(a),
    "coalesce": lambda *a: next((x for x in a if _truth(x)), None),
    "ternary": lambda a, b, c: a if _truth(c) else b,
    "toString": _text,
    "lower": lambda s: _text(s).lower(),
    "upper": lambda s: _text(s).upper(),
    "title": lambda s: re.sub(r"\b[a-z]", lambda m: m.group(0).upper(), _text(s)),
    "trim": lambda s: _text(s).strip(),
    "trimAll": lambda c, s: _text(s).strip(c),
    "trimPrefix": lambda p, s: _text(s).removeprefix(p),
    "trimSuffix": lambda p, s: _text(s).removesuffix(p),
    "replace": lambda old, new, s: _text(s).replace(old, new),
    "quote": lambda *s: " ".join(_go_quote(_text(x)) for x in s if x is not None),
    "squote": lambda *s: " ".join(f"'{_text(x)}'" for x in s),
    "trunc": lambda n, s: _text(s)[:n] if n >= 0 else _text(s)[n:],
    "contains": lambda sub, s: sub in _text(s),
    "hasPrefix": lambda p, s: _text(s).startswith(p),
    "hasSuffix": lambda p, s: _text(s).endswith(p),
    "splitList": lambda sep, s: _text(s).split(sep),
    "join": lambda sep, items: sep.join(_text(x) for x in (items or [])),
    "first": lambda items: items[0] if items else None,
    "last": lambda items: items[-1] if items else None,
    "list": lambda *a: list(a),
    "dict": lambda *a: {str(a[i]): a[i + 1] for i in range(0, len(a) - 1, 2)},
    "get": lambda d, k: d.get(k, "") if isinstance(d, dict) else "",
    "hasKey": lambda d, k: isinstance(d, dict) and k in d,
    "regexMatch": lambda rx, s: re.search(rx, _text(s)) is not None,
    "regexReplaceAll": lambda rx, s, repl: re.sub(rx, re.sub(r"\$\{?(\d+)\}?", r"\\\1", repl), _text(s)),
    "b64enc": lambda s: base64.b64encode(_text(s).encode()).decode(),
    "b64dec": lambda s: base64.b64decode(_text(s)).decode("utf-8", "replace"),
    "sha256sum": lambda s: hashlib.sha256(_text(s).encode()).hexdigest(),
    "toJson": lambda v: json.dumps(None if v is MISSING else v, separators=(",", ":")),
    "normalize": lambda s: sanitize_name(_text(s)),
    "slugify": _slugify,
    "kebabcase": lambda s: re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", _text(s)).replace("_", "-").lower(),
    "snakecase": lambda s: re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", _text(s)).replace("-", "_").lower(),
    # more of slim-sprig (go-task/slim-sprig), which the Flux Operator's templates have
    "indent": _indent,
    "nindent": lambda n, s: "\n" + _indent(n, s),
    "int": _int,
    "int64": _int,
    "atoi": lambda s: _int(s) if isinstance(s, str) and re.fullmatch(r"\s*[-+]?\d+\s*", s) else 0,
    "float64": _float,
    "add": lambda *a: sum(_int(x) for x in a),
    "add1": lambda a: _int(a) + 1,
    "sub": lambda a, b: _int(a) - _int(b),
    "mul": lambda *a: _product([_int(x) for x in a]),
    "div": lambda a, b: _go_div(_int(a), _int(b)),
    "mod": lambda a, b: _go_mod(_int(a), _int(b)),
    "max": lambda a, *more: max([_int(a)] + [_int(x) for x in more]),
    "min": lambda a, *more: min([_int(a)] + [_int(x) for x in more]),
    "substr": _substr,
    "repeat": lambda n, s: _text(s) * max(_int(n), 0),
    "nospace": lambda s: re.sub(r"\s", "", _text(s)),
    "cat": lambda *a: " ".join(_text(x) for x in a if x is not None and x is not MISSING),
    "split": _split,
    "splitn": lambda sep, n, s: {f"_{i}": p for i, p in enumerate(_text(s).split(sep, max(n - 1, 0)))},
    "until": lambda n: list(range(_int(n))),
    "has": lambda needle, items: needle in _list_of(items),
    "without": lambda items, *drop: [x for x in _list_of(items) if x not in drop],
    "uniq": lambda items: [x for i, x in enumerate(_list_of(items)) if x not in _list_of(items)[:i]],
    "compact": lambda items: [x for x in _list_of(items) if _truth(x)],
    "append": lambda items, v: _list_of(items) + [v],
    "push": lambda items, v: _list_of(items) + [v],
    "prepend": lambda items, v: [v] + _list_of(items),
    "concat": lambda *lists: [x for items in lists for x in _list_of(items)],
    "rest": lambda items: _list_of(items)[1:],
    "initial": lambda items: _list_of(items)[:-1],
    "reverse": lambda items: list(reversed(_list_of(items))),
    "sortAlpha": lambda items: sorted(_text(x) for x in _list_of(items)),
    "keys": lambda *ds: [k for d in ds if isinstance(d, dict) for k in d],
    "values": lambda d: list(d.values()) if isinstance(d, dict) else [],
    "pick": lambda d, *ks: {k: v for k, v in d.items() if k in ks} if isinstance(d, dict) else {},
    "omit": lambda d, *ks: {k: v for k, v in d.items() if k not in ks} if isinstance(d, dict) else {},
    "dig": _dig,
    "fail": _fail,
    "toPrettyJson": lambda v: json.dumps(None if v is MISSING else v, indent=2),
    "toRawJson": lambda v: json.dumps(None if v is MISSING else v, separators=(",", ":"), ensure_ascii=False),
    "regexFind": lambda rx, s: (lambda m: m.group(0) if m else "")(_go_regex(rx).search(_text(s))),
    "regexFindAll": lambda rx, s, n: _limited([m.group(0) for m in _go_regex(rx).finditer(_text(s))], _int(n)),
    "regexSplit": lambda rx, s, n: _regex_split(rx, s, _int(n)),
    "kindOf": _kind_of,
    "kindIs": lambda kind, v: _kind_of(v) == kind,
    "sha1sum": lambda s: hashlib.sha1(_text(s).encode()).hexdigest(),
    "adler32sum": lambda s: str(zlib.adler32(_text(s).encode())),
    "base": _base,
    "dir": lambda p: posixpath.dirname(_text(p).rstrip("/")) or ("/" if _text(p).startswith("/") else "."),
    "ext": _ext,
    "clean": lambda p: posixpath.normpath(_text(p)) if _text(p) else ".",
}


def _product(values: list[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out
