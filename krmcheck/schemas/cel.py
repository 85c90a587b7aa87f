"""CEL validation rules of CRD schemas (``x-kubernetes-validations``),
evaluated on every custom resource as the API server does on create.

For each rule, ``self`` is the value at the schema node that carries it,
after non-nullable nulls have been pruned and the schema's ``default``
values applied (:mod:`krmcheck.schemas.defaults`); property names
are escaped as the API server escapes them (``namespace`` is
``__namespace__``, ``a-b`` is ``a__dash__b``), ``number`` fields are
doubles. A rule that is false is a violation with its ``message`` (or its
``messageExpression``'s value, else ``failed rule: RULE``) at the field its
``fieldPath`` names, else at the node the rule sits on.

A rule whose evaluation fails as cel-go's would on the same value (a key
the object does not hold, an index out of bounds, a division by zero, an
integer overflow) is a violation too: the API server refuses the object
with ``ERROR evaluating rule: RULE`` (apiextensions-apiserver's
schema/cel/validation.go, which adds a field.Invalid for every such
runtime error), the rule written as its ``message`` when it has one, at
the node the rule sits on.

Not judged, and reported once per run and kind: transition rules (they read
``oldSelf``, the live object, and the API server runs them on update only);
rules the library cannot compile (a function it lacks); rules whose
evaluation errs otherwise. Each rule is compiled once per process. Evaluation uses
cel-expr-python (Google's cel-cpp) with the Kubernetes libraries of
:mod:`krmcheck.schemas.cel_library`; without it (Python 3.10) CEL rules are
reported as not judged.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple

Schema = dict[str, Any]
Path = tuple[str | int, ...]

RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else",
                      "for", "function", "if", "import", "let", "loop", "package", "namespace",
                      "return", "var", "void", "while"})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Violation(NamedTuple):
    path: Path  # where the finding points
    message: str
    rule: str


class Unjudged(NamedTuple):
    rule: str
    why: str  # "transition rule", "cannot compile: ...", "evaluation error: ..."


class Outcome(NamedTuple):
    violations: list[Violation]
    unjudged: list[Unjudged]


@functools.cache
def available() -> bool:
    try:
        import cel_expr_python  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def _env() -> Any:
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_bindings, ext_math, ext_optional, ext_strings

    from krmcheck.schemas.cel_library import extension

    return cel.NewEnv(variables={"self": cel.Type.DYN},
                      extensions=[ext_strings.ExtStrings(), ext_optional.ExtOptional(),
                                  ext_bindings.ExtBindings(), ext_math.ExtMath(), extension()])


def environment() -> Any:
    """The CEL environment rules are compiled in (:mod:`krmcheck.schemas.cel_ast` parses in it)."""
    return _env()


class _Compiled(NamedTuple):
    program: Any  # None when it does not compile
    error: str


@functools.lru_cache(maxsize=8192)
def compile_rule(rule: str) -> _Compiled:
    try:
        return _Compiled(_env().compile(rule), "")
    except RuntimeError as e:
        text = str(e).split("\n")[0]
        return _Compiled(None, text.removeprefix("INVALID_ARGUMENT: ").removeprefix("ERROR: "))


def is_transition(rule: dict[str, Any]) -> bool:
    return bool(re.search(r"\boldSelf\b", str(rule.get("rule", "")))) and not rule.get("optionalOldSelf")


def _has_rules(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if isinstance(schema.get("x-kubernetes-validations"), list) and schema["x-kubernetes-validations"]:
        return True
    children = list(_mapping(schema.get("properties")).values())
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            children.append(schema[key])
    return any(_has_rules(c) for c in children)


_RULES_OF: dict[int, tuple[Any, bool]] = {}


def has_rules(schema: Schema) -> bool:
    """Whether any node of a schema carries CEL rules (cached per schema object)."""
    found = _RULES_OF.get(id(schema))
    if found is None or found[0] is not schema:
        found = (schema, _has_rules(schema))
        _RULES_OF[id(schema)] = found
    return found[1]


def evaluate(schema: Schema, data: Any) -> Outcome:
    """Every CEL rule of ``schema`` on ``data`` (a whole custom resource, as
    :func:`krmcheck.schemas.defaults.prepare` made it: nulls pruned, defaults
    applied)."""
    outcome = Outcome([], [])
    if not has_rules(schema):
        return outcome
    _walk(schema, data, (), outcome)
    return outcome


def _walk(schema: Schema, value: Any, at: Path, outcome: Outcome) -> None:
    if value is None or not isinstance(schema, dict):
        return
    for rule in _list(schema.get("x-kubernetes-validations")):
        if isinstance(rule, dict) and isinstance(rule.get("rule"), str):
            _judge(rule, schema, value, at, outcome)
    props = _mapping(schema.get("properties"))
    extra = schema.get("additionalProperties")
    if isinstance(value, dict):
        for key, sub in value.items():
            child = props.get(key) if key in props else (extra if isinstance(extra, dict) else None)
            if child is not None and has_rules(child):
                _walk(child, sub, at + (key,), outcome)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict) and has_rules(schema["items"]):
        for i, item in enumerate(value):
            _walk(schema["items"], item, at + (i,), outcome)


def _mapping(value: Any) -> dict[Any, Any]:
    """A mapping as written; anything else is none."""
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    """A list as written; anything else (a schema no API server would take) is none."""
    return value if isinstance(value, list) else []


def _judge(rule: dict[str, Any], schema: Schema, value: Any, at: Path, outcome: Outcome) -> None:
    text = rule["rule"]
    if is_transition(rule):
        outcome.unjudged.append(Unjudged(text, "a transition rule (it reads oldSelf, the live object)"))
        return
    source = f"cel.bind(oldSelf, optional.none(), {text})" if rule.get("optionalOldSelf") else text
    compiled = compile_rule(source)
    if compiled.program is None:
        outcome.unjudged.append(Unjudged(text, f"cannot compile: {compiled.error}"))
        return
    result = _run(compiled.program, to_cel(schema, value))
    refused = _runtime_error(result) if isinstance(result, str) else None
    if refused is not None:
        written = str(rule.get("message") or "").strip() or text.strip()
        outcome.violations.append(Violation(at, f"{refused} evaluating rule: {written}", text))
    elif isinstance(result, str):
        outcome.unjudged.append(Unjudged(text, f"evaluation error: {result}"))
    elif result is not True:
        outcome.violations.append(Violation(at + field_path_steps(str(rule.get("fieldPath") or "")),
                                            _message(rule, schema, value), text))


# cel-cpp's runtime errors that cel-go raises on the same value, in cel-go's
# words (the API server's message): a missing key, an index out of bounds,
# a division by zero, an integer overflow
_RUNTIME_ERRORS = (
    (re.compile(r'NOT_FOUND: Key not found in map : "?([^"]*)"?'), "no such key: {0}"),
    (re.compile(r"Index error: index=(-?\d+)"), "index out of bounds: {0}"),
    (re.compile(r"divide by zero|division by zero"), "division by zero"),
    (re.compile(r"modulus by zero"), "modulus by zero"),
    (re.compile(r"OUT_OF_RANGE: integer overflow"), "integer overflow"),
)


def _runtime_error(error: str) -> str | None:
    """cel-go's words for an evaluation error the API server would meet on
    the same value too, else None (an error of this library's own)."""
    for pattern, words in _RUNTIME_ERRORS:
        found = pattern.search(error)
        if found is not None:
            return words.format(*found.groups())
    return None


def _run(program: Any, self_value: Any) -> bool | str:
    """True or False, or the text of an evaluation error."""
    from cel_expr_python import cel

    try:
        value = program.eval(data={"self": self_value})
    except RuntimeError as e:
        return str(e).split("\n")[0]
    if value.type() == cel.Type.ERROR:
        return str(value.value()).split("\n")[0]
    result = value.value()
    return result if isinstance(result, bool) else f"the rule gave {result!r}, not a boolean"


def _message(rule: dict[str, Any], schema: Schema, value: Any) -> str:
    expression = rule.get("messageExpression")
    if isinstance(expression, str) and expression:
        compiled = compile_rule(expression)
        if compiled.program is not None:
            try:
                got = compiled.program.eval(data={"self": to_cel(schema, value)}).value()
            except RuntimeError:
                got = None
            if isinstance(got, str) and got.strip():
                return got
    message = rule.get("message")
    if isinstance(message, str) and message:
        return message
    return f"failed rule: {rule['rule']}"


# --- values as the API server gives them to CEL -------------------------------------------

def escape(name: str) -> str | None:
    """A property name as CEL sees it; None when CEL cannot name it."""
    if name in RESERVED:
        return f"__{name}__"
    escaped = (name.replace("__", "__underscores__").replace(".", "__dot__")
               .replace("-", "__dash__").replace("/", "__slash__"))
    return escaped if _IDENTIFIER.fullmatch(escaped) else None


def to_cel(schema: Any, value: Any) -> Any:
    """``value`` with declared property names escaped and numbers typed by the schema."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = _mapping(schema.get("properties"))
        extra = schema.get("additionalProperties")
        out = {}
        for key, sub in value.items():
            if key in props:
                name = escape(key)
                if name is not None:
                    out[name] = to_cel(props[key], sub)
            else:
                out[key] = to_cel(extra, sub) if isinstance(extra, dict) else sub
        return out
    if isinstance(value, list):
        return [to_cel(schema.get("items"), v) for v in value]
    if schema.get("type") == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


# --- fieldPath ---------------------------------------------------------------------------

_FIELD_STEP = re.compile(r"\.([A-Za-z0-9_-]+)|\[['\"]([^'\"]*)['\"]\]|\[(\d+)\]")


def field_path_steps(text: str) -> Path:
    """``.spec.ports['http'][0]`` -> ("spec", "ports", "http", 0); "" for none or an unreadable path."""
    text = text.strip()
    if text and not text.startswith((".", "[")):
        text = "." + text
    steps: list[str | int] = []
    pos = 0
    while pos < len(text):
        m = _FIELD_STEP.match(text, pos)
        if m is None:
            return ()
        steps.append(int(m[3]) if m[3] is not None else (m[1] if m[1] is not None else m[2]))
        pos = m.end()
    return tuple(steps)
