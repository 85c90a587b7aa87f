"""The syntax tree of a CEL expression, as the parser gives it: macros
(``all``, ``exists``, ``exists_one``, ``map``, ``filter``, ``has``,
``cel.bind``) already expanded into comprehensions and presence tests, as
cel-go expands them before the API server type-checks a rule and
estimates its cost.

cel-expr-python (cel-cpp, whose parser is generated from the same ANTLR
grammar as cel-go's) parses; the tree crosses over as the serialized
``cel.expr.ParsedExpr`` protocol buffer, read here from its wire format
(no protobuf runtime is needed for six message types). :func:`parse`
returns the tree, or a :class:`SyntaxProblem` for text the grammar refuses.
"""

from __future__ import annotations

import functools
import struct
from typing import Any, NamedTuple, Union


class Const(NamedTuple):
    id: int
    kind: str  # null, bool, int, uint, double, string, bytes
    value: Any


class Ident(NamedTuple):
    id: int
    name: str


class Select(NamedTuple):
    id: int
    operand: Expr
    field: str
    test_only: bool  # has(a.b)


class Call(NamedTuple):
    id: int
    target: Expr | None  # the receiver of a member call (a.f(x)), else None
    function: str  # "_+_", "matches", "@in", "_[_]", "_?._" ...
    args: tuple[Expr, ...]


class CreateList(NamedTuple):
    id: int
    elements: tuple[Expr, ...]


class Entry(NamedTuple):
    key: Expr | str  # a map key expression, or a message field name
    value: Expr


class CreateMap(NamedTuple):
    id: int
    entries: tuple[Entry, ...]
    message: str  # the message name of a struct literal; "" for a map


class Comprehension(NamedTuple):
    id: int
    iter_var: str
    iter_var2: str  # "" unless a two-variable comprehension
    iter_range: Expr
    accu_var: str
    accu_init: Expr
    loop_condition: Expr
    loop_step: Expr
    result: Expr


Expr = Union[Const, Ident, Select, Call, CreateList, CreateMap, Comprehension]


class SyntaxProblem(NamedTuple):
    """Text the CEL grammar refuses, with the parser's first message."""

    message: str


class Unparsed(NamedTuple):
    """Text that could not be judged (no CEL runtime, an unreadable tree)."""

    why: str


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> Expr | SyntaxProblem | Unparsed:
    from krmcheck.schemas import cel

    if not cel.available():
        return Unparsed("CEL needs the cel-expr-python package (Python 3.11 or newer)")
    try:
        compiled = cel.environment().compile(text, disable_check=True)
    except RuntimeError as e:
        first = str(e).split("\n")[0].removeprefix("INVALID_ARGUMENT: ").removeprefix("ERROR: ")
        return SyntaxProblem(first) if _is_syntax(first) else Unparsed(first)
    try:
        return _parsed_expr(compiled.serialize())
    except (ValueError, IndexError, struct.error) as e:
        return Unparsed(f"unreadable syntax tree: {e}")


def _is_syntax(message: str) -> bool:
    """A refusal of the grammar itself (not a parser limit that cel-go
    may set differently: recursion depth, expression size)."""
    lowered = message.lower()
    return (("syntax error" in lowered or "argument must be a simple name" in lowered
             or "invalid argument to has() macro" in lowered)
            and not any(word in lowered for word in ("recursion", "exceed", "limit", "too large")))


# --- the protocol buffer wire format --------------------------------------------------------

Fields = dict[int, list[Any]]


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes) -> Fields:
    """Field number -> the raw values of one message, in order (varints as
    ints, length-delimited fields as bytes, fixed 64-bit as 8 bytes)."""
    out: Fields = {}
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        number, wire = tag >> 3, tag & 7
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.setdefault(number, []).append(value)
    return out


def _one(fields: Fields, number: int, default: Any = None) -> Any:
    found = fields.get(number)
    return found[-1] if found else default


def _text(fields: Fields, number: int) -> str:
    raw = _one(fields, number, b"")
    return raw.decode("utf-8") if isinstance(raw, bytes) else ""


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _parsed_expr(serialized: bytes) -> Expr:
    """The expression of a serialized ``google.protobuf.Any`` holding a
    ``cel.expr.ParsedExpr`` (or ``CheckedExpr``): field 2 of either."""
    message = _one(_fields(serialized), 2, b"")
    expr = _one(_fields(message), 2) or _one(_fields(message), 4)
    if expr is None:
        raise ValueError("no expression")
    return _expr(expr)


def _expr(data: bytes) -> Expr:
    f = _fields(data)
    node_id = _signed(_one(f, 2, 0))
    if 3 in f:
        return _constant(node_id, _fields(_one(f, 3)))
    if 4 in f:
        return Ident(node_id, _text(_fields(_one(f, 4)), 1))
    if 5 in f:
        s = _fields(_one(f, 5))
        return Select(node_id, _expr(_one(s, 1, b"")), _text(s, 2), bool(_one(s, 3, 0)))
    if 6 in f:
        c = _fields(_one(f, 6))
        target = _one(c, 1)
        return Call(node_id, _expr(target) if target is not None else None, _text(c, 2),
                    tuple(_expr(a) for a in c.get(3, [])))
    if 7 in f:
        return CreateList(node_id, tuple(_expr(e) for e in _fields(_one(f, 7)).get(1, [])))
    if 8 in f:
        s = _fields(_one(f, 8))
        return CreateMap(node_id, tuple(_entry(_fields(e)) for e in s.get(2, [])), _text(s, 1))
    if 9 in f:
        c = _fields(_one(f, 9))
        return Comprehension(node_id, _text(c, 1), _text(c, 8), _expr(_one(c, 2, b"")), _text(c, 3),
                             _expr(_one(c, 4, b"")), _expr(_one(c, 5, b"")), _expr(_one(c, 6, b"")),
                             _expr(_one(c, 7, b"")))
    raise ValueError(f"expression {node_id} has no kind")


def _entry(f: Fields) -> Entry:
    key: Expr | str = _expr(_one(f, 3)) if 3 in f else _text(f, 2)
    return Entry(key, _expr(_one(f, 4, b"")))


def _constant(node_id: int, f: Fields) -> Const:
    if 1 in f:
        return Const(node_id, "null", None)
    if 2 in f:
        return Const(node_id, "bool", bool(_one(f, 2)))
    if 3 in f:
        return Const(node_id, "int", _signed(_one(f, 3)))
    if 4 in f:
        return Const(node_id, "uint", _one(f, 4))
    if 5 in f:
        return Const(node_id, "double", struct.unpack("<d", _one(f, 5))[0])
    if 6 in f:
        return Const(node_id, "string", _text(f, 6))
    if 7 in f:
        return Const(node_id, "bytes", bytes(_one(f, 7)))
    return Const(node_id, "other", None)  # the deprecated duration and timestamp constants
