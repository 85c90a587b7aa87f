"""The Kubernetes CEL libraries that CRD rules call, for cel-expr-python:
regex (``find``, ``findAll``), lists (``isSorted``, ``sum``, ``min``,
``max``, ``indexOf``, ``lastIndexOf``), quantity, url, ip and cidr, semver,
and the sets extension. cel-expr-python brings the standard functions and
the strings, optional, bindings and math extensions itself.

Kubernetes' own types (Quantity, URL, IP, CIDR, Semver) cannot cross into
cel-expr-python as opaque values, so they travel as tagged maps
(``{"@k8s": "Quantity", "v": "1/2"}``). Every function declares concrete
parameter types: a Python function reached through a ``dyn`` parameter
with an optional value crashes cel-expr-python 0.1.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import urllib.parse
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from krmcheck import regex


class CelFunctionError(Exception):
    """An evaluation error of a library function (CEL turns it into an error value)."""


# --- tagged values --------------------------------------------------------------------

def _tag(kind: str, value: str) -> dict[str, str]:
    return {"@k8s": kind, "v": value}


def _untag(value: Any, kind: str) -> str:
    if not isinstance(value, dict) or value.get("@k8s") != kind:
        raise CelFunctionError(f"expected a {kind}")
    return str(value["v"])


# --- regex -------------------------------------------------------------------------------

def find(s: str, pattern: str) -> str:
    """The first match of ``pattern`` (Go's syntax, RE2: linear time), or ""."""
    try:
        m = regex.compile_go(pattern).search(s)
    except regex.RegexError as e:
        raise CelFunctionError(str(e)) from None
    return m.group(0) if m else ""


def find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    """The matches of ``pattern`` as Go's ``FindAllString`` gives them, at
    most ``limit`` of them when it is not negative."""
    if limit == 0:
        return []
    found: list[str] = []
    try:
        for match in regex.find_all(pattern, s):
            found.append(match)
            if len(found) == limit:
                break
    except regex.RegexError as e:
        raise CelFunctionError(str(e)) from None
    return found


# --- lists -------------------------------------------------------------------------------

def is_sorted(items: list[Any]) -> bool:
    return all(a <= b for a, b in zip(items, items[1:]))


def sum_of(items: list[Any]) -> Any:
    total = 0 if not items or not isinstance(items[0], float) else 0.0
    for v in items:
        total += v
    return total


def min_of(items: list[Any]) -> Any:
    if not items:
        raise CelFunctionError("min called on an empty list")
    return min(items)


def max_of(items: list[Any]) -> Any:
    if not items:
        raise CelFunctionError("max called on an empty list")
    return max(items)


def index_of(items: list[Any], x: Any) -> int:
    return next((i for i, v in enumerate(items) if v == x), -1)


def last_index_of(items: list[Any], x: Any) -> int:
    return next((i for i in range(len(items) - 1, -1, -1) if items[i] == x), -1)


def sets_contains(a: list[Any], b: list[Any]) -> bool:
    return all(x in a for x in b)


def sets_equivalent(a: list[Any], b: list[Any]) -> bool:
    return sets_contains(a, b) and sets_contains(b, a)


def sets_intersects(a: list[Any], b: list[Any]) -> bool:
    return any(x in a for x in b)


# --- quantity ----------------------------------------------------------------------------

_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?")
_SUFFIX = {"": Fraction(1), "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
           "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
           "P": Fraction(10**15), "E": Fraction(10**18), "Ki": Fraction(2**10), "Mi": Fraction(2**20),
           "Gi": Fraction(2**30), "Ti": Fraction(2**40), "Pi": Fraction(2**50), "Ei": Fraction(2**60)}


@functools.lru_cache(maxsize=4096)
def _amount(text: str) -> Fraction:
    m = _QUANTITY.fullmatch(text)
    if not m:
        raise CelFunctionError(f"{text!r} is not a quantity")
    number, suffix = m[1], m[2] or ""
    try:
        scale = Fraction(10) ** int(suffix[1:]) if suffix[:1] in ("e", "E") else _SUFFIX[suffix]
        return Fraction(Decimal(number)) * scale
    except (InvalidOperation, OverflowError, ValueError):
        raise CelFunctionError(f"{text!r} is not a quantity") from None


def _q(value: Any) -> Fraction:
    return Fraction(_untag(value, "Quantity"))


def _as_q(f: Fraction) -> dict[str, str]:
    return _tag("Quantity", str(f))


def quantity(text: str) -> dict[str, str]:
    return _as_q(_amount(text))


def is_quantity(text: str) -> bool:
    try:
        _amount(text)
        return True
    except CelFunctionError:
        return False


def q_sign(q: Any) -> int:
    v = _q(q)
    return (v > 0) - (v < 0)


def q_is_integer(q: Any) -> bool:
    v = _q(q)
    return v.denominator == 1 and -(2**63) <= v < 2**63


def q_as_integer(q: Any) -> int:
    if not q_is_integer(q):
        raise CelFunctionError("the quantity is not an integer")
    return int(_q(q))


def q_as_float(q: Any) -> float:
    return float(_q(q))


def q_add(q: Any, other: Any) -> dict[str, str]:
    return _as_q(_q(q) + (Fraction(other) if isinstance(other, int) else _q(other)))


def q_sub(q: Any, other: Any) -> dict[str, str]:
    return _as_q(_q(q) - (Fraction(other) if isinstance(other, int) else _q(other)))


# --- semver ------------------------------------------------------------------------------

_SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?")


def _semver_key(text: str) -> tuple[Any, ...]:
    m = _SEMVER.fullmatch(text)
    if not m:
        raise CelFunctionError(f"{text!r} is not a semantic version")
    pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in m[4].split(".")) if m[4] else ()
    return (int(m[1]), int(m[2]), int(m[3]), not pre, pre)


def _normalized(text: str) -> str:
    text = text[1:] if text.startswith("v") else text
    m = re.fullmatch(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)", text)
    return ".".join(str(int(p or 0)) for p in m.groups()[:3]) + m[4] if m else text


def semver(text: str, normalize: bool = False) -> dict[str, str]:
    text = _normalized(text) if normalize else text
    _semver_key(text)
    return _tag("Semver", text)


def is_semver(text: str, normalize: bool = False) -> bool:
    try:
        semver(text, normalize)
        return True
    except CelFunctionError:
        return False


def _semver_part(index: int) -> Callable[[Any], int]:
    def part(value: Any) -> int:
        key = _semver_key(_untag(value, "Semver"))
        return int(key[index])
    return part


def compare(a: Any, b: Any) -> int:
    """compareTo of two Quantities or two Semvers."""
    if isinstance(a, dict) and a.get("@k8s") == "Semver":
        x, y = _semver_key(_untag(a, "Semver")), _semver_key(_untag(b, "Semver"))
        return (x > y) - (x < y)
    p, q = _q(a), _q(b)
    return (p > q) - (p < q)


# --- url ---------------------------------------------------------------------------------

def _url(value: Any) -> urllib.parse.SplitResult:
    return urllib.parse.urlsplit(_untag(value, "URL"))


def url(text: str) -> dict[str, str]:
    """Go's url.ParseRequestURI: an absolute URL or an absolute path, no fragment."""
    try:
        parts = urllib.parse.urlsplit(text)
        _ = parts.port
    except ValueError as e:
        raise CelFunctionError(f"{text!r} is not a URL: {e}") from None
    if not (parts.scheme or text.startswith("/")) or "#" in text or any(c.isspace() for c in text):
        raise CelFunctionError(f"{text!r} is not a URL")
    return _tag("URL", text)


def is_url(text: str) -> bool:
    try:
        url(text)
        return True
    except CelFunctionError:
        return False


def url_scheme(u: Any) -> str:
    return _url(u).scheme


def url_host(u: Any) -> str:
    return _url(u).netloc.rsplit("@", 1)[-1]


def url_hostname(u: Any) -> str:
    host = url_host(u)
    return host[1:host.index("]")] if host.startswith("[") else host.split(":")[0]


def url_port(u: Any) -> str:
    host = url_host(u)
    rest = host[host.index("]") + 1:] if host.startswith("[") else host
    return rest.rsplit(":", 1)[1] if ":" in rest else ""


def url_path(u: Any) -> str:
    return _url(u).path


def url_query(u: Any) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(_url(u).query, keep_blank_values=True)


# --- ip and cidr -------------------------------------------------------------------------

def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise CelFunctionError(f"{text!r} is not an IP address") from None
    if address.version == 6 and address.ipv4_mapped is not None:
        raise CelFunctionError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return address


def ip(text: str) -> dict[str, str]:
    return _tag("IP", str(_address(text)))


def is_ip(text: str) -> bool:
    try:
        _address(text)
        return True
    except CelFunctionError:
        return False


def _ip(value: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(_untag(value, "IP"))


def _network(value: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    return ipaddress.ip_network(_untag(value, "CIDR"), strict=False)


def cidr(text: str) -> dict[str, str]:
    address, _, prefix = text.partition("/")
    _address(address)
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise CelFunctionError(f"{text!r} is not a CIDR") from None
    if not prefix:
        raise CelFunctionError(f"{text!r} is not a CIDR")
    return _tag("CIDR", text)


def is_cidr(text: str) -> bool:
    try:
        cidr(text)
        return True
    except CelFunctionError:
        return False


def contains_ip(c: Any, other: Any) -> bool:
    address = _address(other) if isinstance(other, str) else _ip(other)
    network = _network(c)
    return address.version == network.version and address in network


def contains_cidr(c: Any, other: Any) -> bool:
    inner = _network(cidr(other) if isinstance(other, str) else other)
    outer = _network(c)
    return inner.version == outer.version and inner.subnet_of(outer)  # type: ignore[arg-type]


def ip_family(value: Any) -> int:
    return _ip(value).version


def prefix_length(value: Any) -> int:
    return _network(value).prefixlen


def as_string(value: Any) -> str:
    return str(value.get("v", "")) if isinstance(value, dict) else str(value)


# --- the declarations --------------------------------------------------------------------

def extension() -> Any:
    """The Kubernetes functions as a cel-expr-python extension."""
    from cel_expr_python import cel

    return cel.CelExtension("kubernetes", declarations())


def declarations() -> list[Any]:
    from cel_expr_python import cel

    t = cel.Type
    tagged = t.Map(t.STRING, t.STRING)
    lists = (t.List(t.INT), t.List(t.DOUBLE), t.List(t.STRING))
    elements = (t.INT, t.DOUBLE, t.STRING)

    def one(name: str, result: Any, params: list[Any], impl: Callable[..., Any], member: bool = False,
            tag: str = "") -> Any:
        oid = f"k8s_{name}_{tag or len(params)}"
        return cel.Overload(oid, result, params, is_member=member, impl=_guarded(impl))

    def decl(name: str, *overloads: Any) -> Any:
        return cel.FunctionDecl(name, list(overloads))

    # The runtime tells lists apart by nothing but being lists: one overload
    # each, over list(dyn) (a list parameter never receives an optional).
    any_list = t.List(t.DYN)
    list_ext = [
        decl("isSorted", one("isSorted", t.BOOL, [any_list], is_sorted, True)),
        decl("sum", one("sum", t.DYN, [any_list], sum_of, True)),
        decl("min", one("min", t.DYN, [any_list], min_of, True)),
        decl("max", one("max", t.DYN, [any_list], max_of, True)),
        decl("indexOf", *(one("indexOf", t.INT, [lt, e], index_of, True, f"l{i}")
                          for i, (lt, e) in enumerate(zip(lists, elements)))),
        decl("lastIndexOf", *(one("lastIndexOf", t.INT, [lt, e], last_index_of, True, f"l{i}")
                              for i, (lt, e) in enumerate(zip(lists, elements)))),
    ]
    functions = [
        decl("find", one("find", t.STRING, [t.STRING, t.STRING], find, True)),
        decl("findAll", one("findAll", t.List(t.STRING), [t.STRING, t.STRING], find_all, True),
             one("findAll", t.List(t.STRING), [t.STRING, t.STRING, t.INT], find_all, True)),
        decl("sets.contains", one("sets_contains", t.BOOL, [t.List(t.DYN), t.List(t.DYN)], sets_contains)),
        decl("sets.equivalent", one("sets_equivalent", t.BOOL, [t.List(t.DYN), t.List(t.DYN)], sets_equivalent)),
        decl("sets.intersects", one("sets_intersects", t.BOOL, [t.List(t.DYN), t.List(t.DYN)], sets_intersects)),
        decl("quantity", one("quantity", tagged, [t.STRING], quantity)),
        decl("isQuantity", one("isQuantity", t.BOOL, [t.STRING], is_quantity)),
        decl("sign", one("sign", t.INT, [tagged], q_sign, True)),
        decl("isInteger", one("isInteger", t.BOOL, [tagged], q_is_integer, True)),
        decl("asInteger", one("asInteger", t.INT, [tagged], q_as_integer, True)),
        decl("asApproximateFloat", one("asApproximateFloat", t.DOUBLE, [tagged], q_as_float, True)),
        decl("add", one("add", tagged, [tagged, tagged], q_add, True, "q"), one("add", tagged, [tagged, t.INT], q_add, True, "i")),
        decl("sub", one("sub", tagged, [tagged, tagged], q_sub, True, "q"), one("sub", tagged, [tagged, t.INT], q_sub, True, "i")),
        decl("compareTo", one("compareTo", t.INT, [tagged, tagged], compare, True)),
        decl("isGreaterThan", one("isGreaterThan", t.BOOL, [tagged, tagged], lambda a, b: compare(a, b) > 0, True)),
        decl("isLessThan", one("isLessThan", t.BOOL, [tagged, tagged], lambda a, b: compare(a, b) < 0, True)),
        decl("semver", one("semver", tagged, [t.STRING], semver), one("semver", tagged, [t.STRING, t.BOOL], semver)),
        decl("isSemver", one("isSemver", t.BOOL, [t.STRING], is_semver), one("isSemver", t.BOOL, [t.STRING, t.BOOL], is_semver)),
        decl("major", one("major", t.INT, [tagged], _semver_part(0), True)),
        decl("minor", one("minor", t.INT, [tagged], _semver_part(1), True)),
        decl("patch", one("patch", t.INT, [tagged], _semver_part(2), True)),
        decl("url", one("url", tagged, [t.STRING], url)),
        decl("isURL", one("isURL", t.BOOL, [t.STRING], is_url)),
        decl("getScheme", one("getScheme", t.STRING, [tagged], url_scheme, True)),
        decl("getHost", one("getHost", t.STRING, [tagged], url_host, True)),
        decl("getHostname", one("getHostname", t.STRING, [tagged], url_hostname, True)),
        decl("getPort", one("getPort", t.STRING, [tagged], url_port, True)),
        decl("getEscapedPath", one("getEscapedPath", t.STRING, [tagged], url_path, True)),
        decl("getQuery", one("getQuery", t.Map(t.STRING, t.List(t.STRING)), [tagged], url_query, True)),
        decl("ip", one("ip", tagged, [t.STRING], ip)),
        decl("isIP", one("isIP", t.BOOL, [t.STRING], is_ip)),
        decl("family", one("family", t.INT, [tagged], ip_family, True)),
        decl("cidr", one("cidr", tagged, [t.STRING], cidr)),
        decl("isCIDR", one("isCIDR", t.BOOL, [t.STRING], is_cidr)),
        decl("containsIP", one("containsIP", t.BOOL, [tagged, tagged], contains_ip, True, "ip"),
             one("containsIP", t.BOOL, [tagged, t.STRING], contains_ip, True, "s")),
        decl("containsCIDR", one("containsCIDR", t.BOOL, [tagged, tagged], contains_cidr, True, "c"),
             one("containsCIDR", t.BOOL, [tagged, t.STRING], contains_cidr, True, "s")),
        decl("prefixLength", one("prefixLength", t.INT, [tagged], prefix_length, True)),
        decl("string", one("string", t.STRING, [tagged], as_string)),
    ]
    return functions + list_ext


def _guarded(impl: Callable[..., Any]) -> Callable[..., Any]:
    """An implementation whose Python errors become CEL error values, whatever their type."""
    def call(*args: Any) -> Any:
        try:
            return impl(*args)
        except CelFunctionError:
            raise
        except (ArithmeticError, ValueError, TypeError, KeyError, IndexError) as e:
            raise CelFunctionError(str(e)) from None
    return call
