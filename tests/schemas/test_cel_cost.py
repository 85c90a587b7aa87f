"""The static cost of CEL rules against the API server's own numbers: the
expected costs of apiextensions-apiserver
``pkg/apiserver/schema/cel/compilation_test.go`` ``TestCostEstimation``
(each schema without bounds, then with ``maxItems``/``maxProperties``/``maxLength``
set), which the estimate must equal, or stay below where it gives a lower
bound."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from krmcheck.schemas import cel, cel_ast, cel_cost

pytestmark = pytest.mark.skipif(not cel.available(), reason="CEL needs cel-expr-python")

Gen = Callable[[Any], dict[str, Any]]


def _bounded(key: str, most: Any) -> dict[str, Any]:
    return {key: most} if most is not None else {}


def _scalar(kind: str) -> dict[str, Any]:
    if kind in ("duration", "date", "date-time"):
        return {"type": "string", "format": kind}
    if kind == "int-or-string":
        return {"x-kubernetes-int-or-string": True}
    return {"type": kind}


def array(kind: str) -> Gen:
    return lambda most: {"type": "array", "items": _scalar(kind), **_bounded("maxItems", most)}


def array_of_arrays(kind: str) -> Gen:
    return lambda most: {"type": "array", "items": {"type": "array", "items": _scalar(kind)},
                         **_bounded("maxItems", most)}


OBJECT = {"type": "object", "required": ["required"],
          "properties": {"required": {"type": "string"}, "optional": {"type": "string"}}}


def array_of_objects() -> Gen:
    return lambda most: {"type": "array", "items": OBJECT, **_bounded("maxItems", most)}


def array_of_maps(kind: str) -> Gen:
    return lambda most: {"type": "array", "items": {"type": "object", "additionalProperties": _scalar(kind)},
                         **_bounded("maxItems", most)}


def map_of(value: dict[str, Any]) -> Gen:
    return lambda most: {"type": "object", "additionalProperties": value, **_bounded("maxProperties", most)}


def string() -> Gen:
    return lambda most: {"type": "string", **_bounded("maxLength", most)}


def nested_maps(one_bound: bool) -> Gen:
    def make(most: Any) -> dict[str, Any]:
        inner = {**OBJECT, **({} if one_bound else _bounded("maxProperties", most))}
        return {"type": "array", "items": {"type": "object", "additionalProperties": inner,
                                           **_bounded("maxProperties", most)},
                **({} if one_bound else _bounded("maxItems", most))}
    return make


def strings_array() -> Gen:
    return lambda most: {"type": "array", "items": {"type": "string", **_bounded("maxLength", most)},
                         **_bounded("maxItems", most)}


EXCEEDS = -1
# (name, schema, rule, cost unbounded, bound, cost bounded)
CASES: list[tuple[str, Gen, str, int, int, int]] = [
    ("number array with all", array("number"), "self.all(x, true)", 4718591, 10, 32),
    ("string array with all", array("string"), "self.all(x, true)", 3145727, 20, 62),
    ("boolean array with all", array("boolean"), "self.all(x, true)", 1887437, 5, 17),
    ("array of number arrays", array_of_arrays("number"), "self.all(x, true)", 3145727, 100, 302),
    ("array of objects", array_of_objects(), "self.all(x, true)", 555128, 50, 152),
    ("map of numbers", map_of({"type": "number"}), "self.all(x, true)", 1348169, 10, 32),
    ("map of strings", map_of({"type": "string"}), "self.all(x, true)", 1179647, 3, 11),
    ("string contains", string(), "self.contains('test')", 314574, 10, 5),
    ("string startsWith", string(), "self.startsWith('test')", 2, 15, 2),
    ("concatenated string", string(), 'size(self + "hello") > size("hello")', 314578, 4, 7),
    ("index of strings", array("string"), "self[1] == self[1]", 314577, 8, 314577),
    ("O(n^2) loop", array("number"), "self.all(x, self.all(y, true))", EXCEEDS, 10, 352),
    ("O(n^3) loop", array("number"), "self.all(x, self.all(y, self.all(z, true)))", EXCEEDS, 10, 3552),
    ("regex", string(), 'self.matches("x")', 314574, 50, 22),
    ("regex on a literal", string(), '"".matches("(((((((((())))))))))[0-9]")', 7, 10, 7),
    ("map values", lambda most: {"type": "object", "additionalProperties": string()(most),
                                 **_bounded("maxProperties", most)},
     "self.all(x, x.contains(self[x]))", 2752507, 10, 72),
    ("bytes", lambda most: {"type": "string", "format": "byte", **_bounded("maxLength", most)},
     'self == b"x"', 2, 0, 1),
    ("all with equality", array("number"), "self.all(x, x == 0.0)", 6291454, 3 * 1024 * 2048, 25165826),
    ("nested maps", nested_maps(False), 'self.all(x, x["y"].required == "z")', 7340027, 10, 72),
    ("nested maps, one bound", nested_maps(True), 'self.all(x, x["y"].required == "z")', 7340027, 10, 7340027),
    ("int-or-string array", array("int-or-string"), "self.all(x, true)", 4718591, 10, 32),
    ("index of int-or-strings", array("int-or-string"), "self[0] == 5", 3, 10, 3),
    ("array of number maps", array_of_maps("number"), "self.all(x, x.y == 25.2)", 6291452, 12, 74),
    ("durations", array("duration"), "self.all(x, true)", 2359295, 5, 17),
    ("duration parts", array("duration"), "self[0].getHours() == 2", 4, 525, 4),
    ("dates", array("date"), "self.all(x, true)", 725936, 15, 47),
    ("date-times", array("date-time"), "self.all(x, true)", 428963, 25, 77),
    ("map of objects", map_of(OBJECT), "self.all(x, true)", 428963, 20, 62),
    ("map of date-times", map_of(_scalar("date-time")), "self.all(x, true)", 349526, 25, 77),
    ("find", string(), "self.find('[0-9]+') == ''", 629147, 10, 11),
    ("join", strings_array(), "self.join(' ') == 'aa bb'", 329853068905, 10, 43),
    ("isSorted", strings_array(), "self.isSorted() == true", 329854432052, 10, 52),
    ("split", lambda most: {"type": "object", "properties": {"str": string()(most), "separator": string()(most)}},
     "self.str.split(self.separator) == []", 629160, 10, 22),
    ("replace", lambda most: {"type": "object", "properties": {
        "str": string()(most), "before": {"type": "string", "maxLength": 2},
        "after": {"type": "string", "maxLength": 4}}},
     "self.str.replace(self.before, self.after) == 'does not matter'", 629154, 4, 12),
    ("lowerAscii", string(), "self.lowerAscii() == 'lower!'", 314575, 10, 6),
    ("size", map_of({"type": "integer"}), "oldSelf.size() == self.size()", 5, 10, 5),
    ("timestamps", map_of(_scalar("date-time")), 'self["a"] == self["b"]', 8, 7, 8),
    ("enum", lambda most: {"type": "string", "enum": ["A", "B", "C", "LongValue"], **_bounded("maxLength", most)},
     "self.contains('A')", 2, 1000, 401),
    ("isQuantity", lambda most: {"x-kubernetes-int-or-string": True, **_bounded("maxLength", most)},
     "isQuantity(self)", 314574, 20, 9),
]


def cost(schema: dict[str, Any], rule: str) -> int:
    decl = cel_cost.declare(schema, False)
    assert decl is not None
    parsed = cel_ast.parse(rule)
    assert not isinstance(parsed, (cel_ast.SyntaxProblem, cel_ast.Unparsed))
    return cel_cost.estimate(parsed, decl)


@pytest.mark.parametrize("name, schema, rule, unbounded, bound, bounded", CASES, ids=[c[0] for c in CASES])
def test_the_estimate_is_the_api_servers(name: str, schema: Gen, rule: str, unbounded: int, bound: int,
                                         bounded: int) -> None:
    if unbounded == EXCEEDS:
        assert cost(schema(None), rule) > cel_cost.PER_RULE_LIMIT
    else:
        assert cost(schema(None), rule) == unbounded
    assert cost(schema(bound), rule) == bounded


def test_a_function_it_does_not_know_costs_only_its_arguments() -> None:
    # two-variable comprehensions (Kubernetes 1.32) are priced far higher by the
    # API server; the estimate stays below it
    assert cost(array("string")(None), "self.all(i, v, v == 'a')") < 10


def test_unbounded_cardinality_counts_the_smallest_serialized_item() -> None:
    decl = cel_cost.declare({"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
                            False)
    assert decl is not None and decl.min_size == 2 + len("name") + 2 + 4
    assert cel_cost.unbounded_cardinality(decl) == 3 * 1024 * 1024 // (decl.min_size + 1)


def test_metadata_name_of_a_resource_is_bounded() -> None:
    decl = cel_cost.declare({"type": "object"}, True)
    assert decl is not None and decl.fields is not None
    assert decl.fields["metadata"].fields is not None
    assert decl.fields["metadata"].fields["name"].max_elements == 253 * 4
