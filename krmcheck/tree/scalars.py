"""Scalar resolution as kustomize does it.

Input is read like go-yaml v3 (YAML 1.2 core schema plus Go's integer
spellings, and ``0777`` still octal) and then passes through JSON, so
numbers are normalised (``1.0`` -> ``1``, ``0x1F`` -> ``31``) and dates
become RFC 3339 strings. Output is written by go-yaml v2, whose YAML 1.1
resolver decides which strings need quotes (``yes``, ``on``, ``n``, ``1:20``).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from krmcheck.tree.node import Value

_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_GO_INT = re.compile(r"^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$")
_DATE = re.compile(r"^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})$")
_DATETIME = re.compile(
    r"^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:[Tt]([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(\.[0-9]+)?"
    r"(Z|[-+][0-9]{1,2}(?::[0-9]{2})?)|[ ]([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(\.[0-9]+)?)$")
_BASE60 = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")

_V3_NULL = {"", "~", "null", "Null", "NULL"}
_V3_BOOL = {"true": True, "True": True, "TRUE": True,
            "false": False, "False": False, "FALSE": False}
_V3_SPECIAL_FLOAT = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
                     ".nan", ".NaN", ".NAN"}
_V2_NOT_STRING = _V3_NULL | set(_V3_BOOL) | _V3_SPECIAL_FLOAT | {
    "y", "Y", "yes", "Yes", "YES", "on", "On", "ON",
    "n", "N", "no", "No", "NO", "off", "Off", "OFF", "<<"}

INT64_MIN, UINT64_MAX = -(2 ** 63), 2 ** 64 - 1


class UnrepresentableScalar(ValueError):
    """A value kustomize cannot carry through JSON (``.inf``, ``.nan``)."""


def _go_int(text: str) -> int | None:
    plain = text.replace("_", "")
    if not _GO_INT.match(plain):
        return None
    sign = -1 if plain[0] == "-" else 1
    body = plain.lstrip("+-")
    if body[:2] in ("0x", "0X"):
        n = int(body[2:], 16)
    elif body[:2] in ("0o", "0O"):
        n = int(body[2:], 8)
    elif body[:2] in ("0b", "0B"):
        n = int(body[2:], 2)
    elif len(body) > 1 and body[0] == "0":
        n = int(body, 8)
    elif len(body) > len(str(UINT64_MAX)):
        return None  # out of range (and past the digits Python converts to an int)
    else:
        n = int(body)
    n *= sign
    if INT64_MIN <= n <= UINT64_MAX:
        return n
    return None


def _timestamp(text: str) -> str | None:
    m = _DATE.match(text)
    if m:
        y, mo, d = (int(g) for g in m.groups())
        return f"{y:04d}-{mo:02d}-{d:02d}T00:00:00Z"
    m = _DATETIME.match(text)
    if not m:
        return None
    g = m.groups()
    y, mo, d = int(g[0]), int(g[1]), int(g[2])
    if g[3] is not None:
        hh, mm, ss, frac, zone = int(g[3]), int(g[4]), int(g[5]), g[6], g[7]
    else:
        hh, mm, ss, frac, zone = int(g[8]), int(g[9]), int(g[10]), g[11], "Z"
    frac = (frac or "").rstrip("0")
    if frac == ".":
        frac = ""
    if zone not in ("Z",):
        sign, rest = zone[0], zone[1:]
        h, _, mi = rest.partition(":")
        zone = "Z" if int(h) == 0 and int(mi or 0) == 0 else f"{sign}{int(h):02d}:{int(mi or 0):02d}"
    return f"{y:04d}-{mo:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}{frac}{zone}"


def is_timestamp(text: str) -> bool:
    """Whether a plain scalar is a YAML timestamp (``2023-10-15``)."""
    return text[:1].isdigit() and _timestamp(text) is not None


def json_number(f: float) -> int | float:
    """A float as it comes back from Go's JSON encoder and go-yaml v2."""
    if f == int(f) and abs(f) < 1e21:
        return int(f)
    return f


def resolve_plain(text: str) -> Value:
    """The value kustomize gives a plain (unquoted) input scalar."""
    if text in _V3_NULL:
        return None
    b = _V3_BOOL.get(text)
    if b is not None:
        return b
    c = text[:1]
    if c.isdigit() or c in "+-.":
        ts = _timestamp(text) if c.isdigit() else None
        if ts is not None:
            return ts
        return _number(text)
    return text


def _number(text: str) -> Value:
    """A plain scalar that starts like a number, as Go reads it: an integer,
    a float, else the text itself."""
    n = _go_int(text)
    if n is not None:
        return n
    plain = text.replace("_", "")
    if _FLOAT.match(plain):
        f = float(plain)
        # beyond float64, Go's parser reports a range error and go-yaml
        # keeps the scalar as a string
        return text if math.isinf(f) else json_number(f)
    if text in _V3_SPECIAL_FLOAT:
        raise UnrepresentableScalar(text)
    return text


_V2_TRUE = {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"}
_V2_FALSE = {"n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"}


def resolve_plain_v2(text: str) -> Value:
    """The value go-yaml v2 gives a plain scalar decoded into ``interface{}``
    and then passed through JSON, as sigs.k8s.io/yaml's ``YAMLToJSON`` does
    (what Flux's post-build substitution parses its text with): YAML 1.1
    booleans (``yes``, ``on``, ``n``...), Go's integer spellings, and
    timestamps kept as the strings they are."""
    if text in _V3_NULL:
        return None
    if text in _V2_TRUE:
        return True
    if text in _V2_FALSE:
        return False
    c = text[:1]
    if c.isdigit() or c in "+-.":
        return _number(text)
    return text


def needs_quotes(s: str) -> bool:
    """True when go-yaml v2 would read plain ``s`` as something else than a string."""
    if s in _V2_NOT_STRING:
        return True
    c = s[:1]
    if c.isdigit() or c in "+-.":
        if c.isdigit() and _timestamp(s) is not None:
            return True
        plain = s.replace("_", "")
        if _go_int(s) is not None or (_FLOAT.match(plain) and not math.isinf(float(plain))):
            return True
        if _BASE60.match(s):
            return True
    return False


def format_float(f: float) -> str:
    """Go's strconv.FormatFloat(f, 'g', -1, 64), as go-yaml v2 writes floats."""
    if math.isnan(f):
        return ".nan"
    if math.isinf(f):
        return ".inf" if f > 0 else "-.inf"
    sign, digits, exp = Decimal(repr(f)).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    exp = int(exp) + (len(digits) - len("".join(map(str, digits)).rstrip("0") or "0"))
    nd = len(ds)
    dp = nd + exp
    x = dp - 1
    neg = "-" if sign else ""
    if ds == "0":
        return neg + "0"
    if x < -4 or x >= 6:
        mant = ds[0] + ("." + ds[1:] if nd > 1 else "")
        es = "-" if x < 0 else "+"
        return f"{neg}{mant}e{es}{abs(x):02d}"
    if dp <= 0:
        return f"{neg}0.{'0' * (-dp)}{ds}"
    if dp >= nd:
        return neg + ds + "0" * (dp - nd)
    return f"{neg}{ds[:dp]}.{ds[dp:]}"
