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
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

NO_VALUE = "<no value>"
_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.S)
_TOKEN = re.compile(r"""\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<raw>`[^`]*`)|(?P<num>-?\d+(?:\.\d+)?)"""
                    r"""|(?P<field>(?:\$[A-Za-z0-9_]*)?(?:\.[A-Za-z0-9_]+)+|\$[A-Za-z0-9_]*|\.)"""
                    r"""|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>[|()]|:?=|,))""")


class TemplateError(ValueError):
    pass


class _Missing:
    """A key a map does not have (printed as ``<no value>``)."""


MISSING = _Missing()


def render(text: str, data: dict[str, Any], options: tuple[str, ...] = ()) -> str:
    """``text`` executed with ``data`` as the dot."""
    strict = "missingkey=error" in options
    nodes, rest = _parse(_lex(text), ())
    if rest:
        raise TemplateError(f"unexpected {{{{{rest[0][1]}}}}}")
    out: list[str] = []
    _exec(nodes, _Scope(data, {"$": data}, strict), out)
    return "".join(out)


# --- lexing and parsing -----------------------------------------------------------

Token = tuple[str, str]  # ("text", s) or ("action", body)


def _lex(text: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    for m in _ACTION.finditer(text):
        before = text[pos:m.start()]
        if m.group(1):
            before = before.rstrip()
        if out and out[-1][0] == "trim":
            out.pop()
            before = before.lstrip()
        out.append(("text", before))
        body = m.group(2).strip()
        if not (body.startswith("/*") and body.endswith("*/")):
            out.append(("action", body))
        if m.group(3):
            out.append(("trim", ""))
        pos = m.end()
    tail = text[pos:]
    if out and out[-1][0] == "trim":
        out.pop()
        tail = tail.lstrip()
    out.append(("text", tail))
    return [t for t in out if t != ("text", "")]


Node = tuple  # ("text", s) | ("out", pipe) | ("if"|"with"|"range", pipe, body, else_body)


def _parse(tokens: list[Token], stops: tuple[str, ...]) -> tuple[list[Node], list[Token]]:
    nodes: list[Node] = []
    while tokens:
        kind, body = tokens[0]
        if kind == "text":
            nodes.append(("text", body))
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
            nodes.append(("out", body))
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
    def __init__(self, dot: Any, variables: dict[str, Any], strict: bool) -> None:
        self.dot, self.variables, self.strict = dot, variables, strict

    def at(self, dot: Any) -> _Scope:
        return _Scope(dot, self.variables, self.strict)


def _exec(nodes: list[Node], scope: _Scope, out: list[str]) -> None:
    for node in nodes:
        kind = node[0]
        if kind == "text":
            out.append(node[1])
        elif kind == "out":
            value = _pipeline(node[1], scope)
            if not _is_assignment(node[1]):
                out.append(_print(value))
        elif kind in ("if", "with"):
            value = _pipeline(node[1], scope)
            if _truth(value):
                _exec(node[2], scope.at(value) if kind == "with" else scope, out)
            else:
                _exec(node[3], scope, out)
        else:  # range
            _range(node, scope, out)


def _range(node: Node, scope: _Scope, out: list[str]) -> None:
    pipe = node[1]
    names: list[str] = []
    m = re.match(r"^(\$\w*)(?:\s*,\s*(\$\w*))?\s*:=\s*(.*)$", pipe, re.S)
    if m:
        names = [n for n in (m.group(1), m.group(2)) if n]
        pipe = m.group(3)
    value = _pipeline(pipe, scope)
    items = list(value.items()) if isinstance(value, dict) else list(enumerate(value or []))
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
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise TemplateError(f"cannot read {text[pos:]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind).strip() if kind else ""))
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
    if kind == "ident" and head not in ("true", "false", "nil"):
        fn = FUNCTIONS.get(head)
        if fn is None:
            raise TemplateError(f"function {head!r} is not supported by krmcheck")
        values = [_operand(k, t, scope) for k, t in args[1:]]
        if not first:
            values.append(piped)
        return fn(*values)
    if len(args) > 1 or not first:
        raise TemplateError(f"{head!r} is not a function")
    return _operand(kind, head, scope)


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
        return {"true": True, "false": False, "nil": None}[text]
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
    for part in parts:
        if isinstance(value, dict):
            if part not in value:
                if scope.strict:
                    raise TemplateError(f"map has no entry for key {part!r}")
                value = MISSING
            else:
                value = value[part]
        elif value is MISSING or value is None:
            if scope.strict:
                raise TemplateError(f"nil pointer evaluating .{part}")
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
    "quote": lambda *s: " ".join(f'"{_text(x)}"' for x in s),
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
}
