"""What the API server checks of a CRD's CEL rules (``x-kubernetes-validations``)
before it creates the CRD, with the facts of apiextensions-apiserver
``pkg/apis/apiextensions/validation/validation.go``
``ValidateCustomResourceDefinitionOpenAPISchema`` and
``pkg/apiserver/schema/cel/compilation.go`` ``Compile``:

- a rule is written (not blank); a rule of several lines has a
  ``message``; a ``message`` or ``messageExpression``, when written, is not
  blank and a message is one line; ``reason`` is one of the four the API
  knows; ``fieldPath`` names a field of the schema (``cel.ValidFieldPath``);
- ``rule`` and ``messageExpression`` parse (CEL's grammar; what only the
  type checker refuses is not judged here);
- once the schema is otherwise valid: a rule reading ``oldSelf`` does not
  sit under the items of a list that is not ``x-kubernetes-list-type:
  map``; ``optionalOldSelf`` only with a rule reading ``oldSelf``; a
  regular expression literal given to ``matches`` compiles (Kubernetes
  1.29 and later: ``cel.ValidateRegexLiterals``); and the estimated cost
  of each rule, times how many times it can run (the product of the
  ``maxItems``/``maxProperties`` above it, else as many as fit in a
  request), is within ``StaticEstimatedCostLimit`` (10 million), and all
  rules together within ``StaticEstimatedCRDCostLimit`` (100 million).
  The estimate is :mod:`krmcheck.schemas.cel_cost`'s, never above the API
  server's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from krmcheck import regex
from krmcheck.schemas import cel_ast, cel_cost

Path = tuple[str | int, ...]
Schema = dict[str, Any]
_REASONS = ("FieldValueRequired", "FieldValueForbidden", "FieldValueInvalid", "FieldValueDuplicate")
_NEWLINE = re.compile(r"[\n\r]+")


class Refusal(NamedTuple):
    """One reason the API server refuses a rule; paths relative to the schema's root."""

    path: Path  # the field to edit (the rule, its message...)
    node: Path  # the schema node the rule sits on
    text: str
    rule: str  # the check's id


class _Node(NamedTuple):
    at: Path  # relative to the root schema
    schema: Schema
    resource: bool  # the root, or an embedded resource
    uncorrelatable: Path | None  # the list whose items oldSelf cannot reach, if any
    cardinality: int | None  # how many times the node can occur; None: no bound


def check(schema: Schema, clean: bool, version: str = "") -> list[Refusal]:
    """Why the API server refuses the CEL rules of one version's schema;
    ``clean``: the schema is otherwise valid (the API server compiles rules
    and estimates their cost only then)."""
    found: list[Refusal] = []
    costs: list[tuple[int, Path]] = []
    for node in _nodes(schema, (), True, None, 1):
        rules = node.schema.get("x-kubernetes-validations")
        if not isinstance(rules, list):
            continue
        decl: cel_cost.Decl | None = None
        if clean:
            decl = cel_cost.declare(node.schema, node.resource)
        for i, rule in enumerate(rules):
            if isinstance(rule, dict):
                rule_at = node.at + ("x-kubernetes-validations", i)
                found += [Refusal(path, node.at, text, kind)
                          for path, text, kind in _rule(rule, rule_at, node, clean, decl, version, costs)]
    total = sum(cost for cost, _ in costs)
    if total > cel_cost.PER_CRD_LIMIT:
        cost, costly = max(costs)
        found.append(Refusal(costly, (), f"the estimated cost of all x-kubernetes-validations rules "
                             f"{_exceeds(total, cel_cost.PER_CRD_LIMIT)}; this rule is the most expensive "
                             f"({cost:,})", "crd-cel-cost"))
    return found


def _nodes(schema: Any, at: Path, root: bool, uncorrelatable: Path | None,
           cardinality: int | None) -> Iterator[_Node]:
    """Every node of the structural part of the schema, with what CEL's checks need to know of it."""
    if not isinstance(schema, dict):
        return
    yield _Node(at, schema, root or schema.get("x-kubernetes-embedded-resource") is True, uncorrelatable,
                cardinality)
    factor = _max_elements(schema)
    inner = None if cardinality is None or factor is None else cel_cost.times(cardinality, factor)
    props = schema.get("properties")
    for key, sub in (props.items() if isinstance(props, dict) else ()):
        yield from _nodes(sub, at + ("properties", key), False, uncorrelatable, inner)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        yield from _nodes(extra, at + ("additionalProperties",), False, uncorrelatable, inner)
    items = schema.get("items")
    if isinstance(items, dict):
        # only the items of a map list are matched with their old selves
        apart = uncorrelatable if uncorrelatable is not None or schema.get("x-kubernetes-list-type") == "map" \
            else at
        yield from _nodes(items, at + ("items",), False, apart, inner)


def _max_elements(schema: Schema) -> int | None:
    """cel_validation.go extractMaxElements: the factor a node multiplies its children's count by."""
    kind = schema.get("type")
    if kind == "object" and schema.get("additionalProperties") is not None:
        return _bound(schema.get("maxProperties"))
    if kind == "array":
        return _bound(schema.get("maxItems"))
    return 1


def _bound(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return max(int(value), 0)


def _at_least(version: str, minor: int) -> bool:
    """Whether Kubernetes ``version`` ("1.30"; "" for the newest) is 1.minor or later."""
    m = re.match(r"v?1\.(\d+)", version)
    return m is None or int(m[1]) >= minor


_Found = tuple[Path, str, str]  # (path, text, rule id)


def _rule(rule: dict[str, Any], at: Path, node: _Node, clean: bool, decl: cel_cost.Decl | None,
          version: str, costs: list[tuple[int, Path]]) -> list[_Found]:
    found = list(_written(rule, at, node.schema, version))
    text = rule.get("rule")
    parsed = cel_ast.parse(text) if isinstance(text, str) and text.strip() else None
    if isinstance(parsed, cel_ast.SyntaxProblem):
        found.append((at + ("rule",), f"the rule does not compile: {parsed.message}", "crd-cel-syntax"))
    expression = rule.get("messageExpression")
    message_parsed = None
    if isinstance(expression, str) and expression.strip() and _at_least(version, 28):
        message_parsed = cel_ast.parse(expression)
        if isinstance(message_parsed, cel_ast.SyntaxProblem):
            found.append((at + ("messageExpression",),
                          f"the messageExpression does not compile: {message_parsed.message}", "crd-cel-syntax"))
    if not clean or isinstance(parsed, (cel_ast.SyntaxProblem, cel_ast.Unparsed)):
        return found
    uses_old_self = parsed is not None and _reads_old_self(parsed)
    if uses_old_self and node.uncorrelatable is not None:
        found.append((at + ("rule",), "a rule reading oldSelf cannot sit under the items of a list that is not "
                      "x-kubernetes-list-type: map (old and new items cannot be matched)", "crd-cel-old-self"))
    elif not uses_old_self and rule.get("optionalOldSelf") is not None and _at_least(version, 29):
        found.append((at + ("optionalOldSelf",), "optionalOldSelf is set but the rule does not read oldSelf",
                      "crd-cel-old-self"))
    if parsed is not None and _at_least(version, 29):
        found += [(at + ("rule",), f"the regular expression {pattern!r} given to matches() does not compile: {why}",
                   "crd-cel-regex") for pattern, why in _bad_regex_literals(parsed)]
    if decl is None or parsed is None:
        return found
    count = node.cardinality if node.cardinality is not None else cel_cost.unbounded_cardinality(decl)
    cost = cel_cost.times(cel_cost.estimate(parsed, decl), count)
    costs.append((cost, at + ("rule",)))
    if cost > cel_cost.PER_RULE_LIMIT:
        found.append((at + ("rule",), f"the rule's estimated cost {_exceeds(cost, cel_cost.PER_RULE_LIMIT)}",
                      "crd-cel-cost"))
    if message_parsed is not None and not isinstance(message_parsed, (cel_ast.SyntaxProblem, cel_ast.Unparsed)):
        message_cost = cel_cost.estimate(message_parsed, decl)
        costs.append((message_cost, at + ("messageExpression",)))
        if message_cost > cel_cost.PER_RULE_LIMIT:
            found.append((at + ("messageExpression",), "the messageExpression's estimated cost "
                          f"{_exceeds(message_cost, cel_cost.PER_RULE_LIMIT)}", "crd-cel-cost"))
    return found


def _exceeds(cost: int, limit: int) -> str:
    """As validation.go getCostErrorMessage words the factor."""
    factor = cost / limit
    said = "more than 100x" if factor > 100 else f"{factor:f}x" if factor < 1.5 else f"{factor:.1f}x"
    return (f"exceeds the API server's budget by a factor of {said} (bound the lists, maps and strings it reads "
            "with maxItems, maxProperties and maxLength, or simplify it)")


def _written(rule: dict[str, Any], at: Path, schema: Schema, version: str) -> Iterator[_Found]:
    """What validation.go checks of a rule's text fields, before any CEL."""
    text = rule.get("rule")
    message = rule.get("message")
    trimmed_rule = text.strip() if isinstance(text, str) else ""
    trimmed_message = message.strip() if isinstance(message, str) else ""
    if not trimmed_rule:
        yield at + (("rule",) if "rule" in rule else ()), "a validation rule needs a rule", "crd-cel-rule"
    elif isinstance(message, str) and message and not trimmed_message:
        yield at + ("message",), "the message of a rule cannot be blank", "crd-cel-rule"
    elif _NEWLINE.search(trimmed_message):
        yield at + ("message",), "the message of a rule must be one line", "crd-cel-rule"
    elif _NEWLINE.search(trimmed_rule) and not trimmed_message:
        yield at + ("rule",), "a rule of several lines needs a message", "crd-cel-rule"
    expression = rule.get("messageExpression")
    if isinstance(expression, str) and expression and not expression.strip() and _at_least(version, 28):
        yield at + ("messageExpression",), "the messageExpression cannot be blank", "crd-cel-rule"
    if not _at_least(version, 30):
        return
    reason = rule.get("reason")
    if reason is not None and reason not in _REASONS:
        yield at + ("reason",), f"reason {reason!r} is not one of {', '.join(_REASONS)}", "crd-cel-rule"
    field = rule.get("fieldPath")
    if isinstance(field, str) and field:
        if not field.strip():
            yield at + ("fieldPath",), "the fieldPath cannot be blank", "crd-cel-rule"
        elif _NEWLINE.search(field):
            yield at + ("fieldPath",), "the fieldPath must be one line", "crd-cel-rule"
        elif _field_path_invalid(field, schema):
            yield (at + ("fieldPath",), f"fieldPath {field!r} does not name a field of the schema the rule sits on",
                   "crd-cel-rule")


def _field_path_invalid(path: str, schema: Schema) -> bool:
    """cel/validation.go ValidFieldPath: ``.a.b`` and ``['a.b']`` steps through
    properties (or a map's keys). Only a certain refusal counts: a path
    reaching what the server's own walk would trip on is not judged."""
    tokens = _field_path_tokens(path)
    i = 0
    node: Any = schema
    while i < len(tokens):
        token = tokens[i]
        if token == "[":
            if i + 2 >= len(tokens) or tokens[i + 2] != "]":
                return True
            quoted = tokens[i + 1]
            if len(quoted) < 2 or quoted[0] != "'" or quoted[-1] != "'":
                return True
            key = quoted[1:-1].replace("\\'", "'").replace("\\\\", "\\")
            i += 3
        elif token == ".":
            if i + 1 >= len(tokens):
                return True
            key = tokens[i + 1]
            i += 2
        else:
            return True
        if not isinstance(node, dict):
            return False
        props = node.get("properties")
        if isinstance(props, dict) and props:
            if key not in props:
                return True
            node = props[key]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        elif node.get("additionalProperties") is not None:
            return False  # the server's walk has no schema to go on with here
        else:
            return True
    return False


def _field_path_tokens(path: str) -> list[str]:
    """'.', '[', ']' alone, single-quoted strings whole, the text between them."""
    tokens: list[str] = []
    i = 0
    while i < len(path):
        if path[i] == "'":
            j = i + 1
            while j < len(path) and not (path[j] == "'" and path[j - 1] != "\\"):
                j += 1
            tokens.append(path[i:j + 1])
            i = j + 1
        elif path[i] in ".[]":
            tokens.append(path[i])
            i += 1
        else:
            j = i
            while j < len(path) and path[j] not in ".[]":
                j += 1
            tokens.append(path[i:j])
            i = j
    return tokens


def _reads_old_self(expr: cel_ast.Expr) -> bool:
    """Whether the rule names oldSelf (compilation.go looks for it among the references)."""
    return any(isinstance(e, cel_ast.Ident) and e.name == "oldSelf" for e in _descendants(expr))


def _bad_regex_literals(expr: cel_ast.Expr) -> Iterator[tuple[str, str]]:
    """Literal patterns of ``s.matches('...')`` Go's regexp refuses (cel-go ValidateRegexLiterals)."""
    for e in _descendants(expr):
        if isinstance(e, cel_ast.Call) and e.function == "matches" and e.args:
            pattern = e.args[0]
            if isinstance(pattern, cel_ast.Const) and pattern.kind == "string":
                why = regex.go_refusal(pattern.value)
                if why is not None:
                    yield pattern.value, why


def _descendants(expr: cel_ast.Expr) -> Iterator[cel_ast.Expr]:
    stack: list[Any] = [expr]
    while stack:
        e = stack.pop()
        if not isinstance(e, (cel_ast.Const, cel_ast.Ident, cel_ast.Select, cel_ast.Call, cel_ast.CreateList,
                              cel_ast.CreateMap, cel_ast.Comprehension)):
            continue
        yield e
        if isinstance(e, cel_ast.Select):
            stack.append(e.operand)
        elif isinstance(e, cel_ast.Call):
            stack += ([e.target] if e.target is not None else []) + list(e.args)
        elif isinstance(e, cel_ast.CreateList):
            stack += list(e.elements)
        elif isinstance(e, cel_ast.CreateMap):
            for entry in e.entries:
                stack += ([] if isinstance(entry.key, str) else [entry.key]) + [entry.value]
        elif isinstance(e, cel_ast.Comprehension):
            stack += [e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result]
