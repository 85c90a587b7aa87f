"""Post-build variable substitution over rendered resources, with provenance.

kustomize-controller prints each rendered object as YAML, runs envsubst over
that text and parses it again (fluxcd/pkg kustomize_varsub.go). So keys are
substituted as well as values, and a value is typed again afterwards: a
plain ``replicas: ${N}`` with ``N: "3"`` becomes the integer 3, while a value
the printer quotes (``"true"``) or prints as a block stays a string.

A substituted value's origin is the line that defined the variable; the
``${VAR}`` line it replaced moves to the trail.
"""

from __future__ import annotations

from typing import NamedTuple

from krmcheck.gitops.envsubst import Expansion, Lookup, SubstitutionError, expand
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, Value
from krmcheck.tree.origin import Origin
from krmcheck.tree.scalars import UnrepresentableScalar, needs_quotes, resolve_plain

DISABLE_KEY = "kustomize.toolkit.fluxcd.io/substitute"
DISABLED = "disabled"


class Problem(NamedTuple):
    """Something about substitution worth a finding, at a source line."""

    message: str
    severity: str  # error, warning, info
    origin: Origin
    resource: Resource | None = None
    validator: str = "substitution"  # or "helm": a chart a controller renders


class Outcome(NamedTuple):
    problems: list[Problem]
    placeholders: int  # expressions left as written (their variables are unknown)


def disabled(resource: Resource) -> bool:
    """The opt-out, as a label or an annotation."""
    for meta in (resource.labels(), resource.annotations()):
        if meta is not None and meta.value(DISABLE_KEY) == DISABLED:
            return True
    return False


class _Mode(NamedTuple):
    lookup: Lookup
    strict: bool
    keep_undefined: bool


def substitute(resources: list[Resource], lookup: Lookup, strict: bool = False,
               honour_opt_out: bool = True, keep_undefined: bool = False) -> Outcome:
    """Substitute in place in every resource that has not opted out.
    ``keep_undefined``: see :func:`krmcheck.gitops.envsubst.expand`."""
    problems: list[Problem] = []
    kept = 0
    mode = _Mode(lookup, strict, keep_undefined)
    for res in resources:
        if honour_opt_out and disabled(res):
            continue
        kept += _node(res.node, res, mode, problems)
    return Outcome(problems, kept)


def _node(node: Node, res: Resource, mode: _Mode, problems: list[Problem]) -> int:
    kept = 0
    if isinstance(node, Mapping):
        if any("$" in k for k in node.items):
            node.items = {_key(k, mode): v for k, v in node.items.items()}
        for child in node.items.values():
            kept += _node(child, res, mode, problems)
    elif isinstance(node, Sequence):
        for child in node.items:
            kept += _node(child, res, mode, problems)
    elif isinstance(node, Scalar) and isinstance(node.value, str) and "$" in node.value:
        kept += _scalar(node, res, mode, problems)
    return kept


def _key(key: str, mode: _Mode) -> str:
    if "$" not in key:
        return key
    try:
        return expand(key, *mode).text
    except SubstitutionError:
        return key  # the value's own check reports the expression


def _scalar(node: Scalar, res: Resource, mode: _Mode, problems: list[Problem]) -> int:
    assert isinstance(node.value, str)
    before = node.value
    try:
        done = expand(before, *mode)
    except SubstitutionError as e:
        problems.append(Problem(f"variable substitution failed: {e} in {before!r}", "error",
                                node.origin, res))
        return 0
    for name in dict.fromkeys(done.undefined):
        problems.append(Problem(f"variable {name} is not defined: the controller substitutes an "
                                f"empty string for ${{{name}}}", "warning", node.origin, res))
    for written in done.unsupported:
        problems.append(Problem(f"{written}: pattern operators are not evaluated by krmcheck; "
                                f"the value is checked as written", "info", node.origin, res))
    if done.text != before:
        node.set(_retyped(before, done), _writer(done, node.origin))
    return len(done.unknown)


def _retyped(before: str, done: Expansion) -> Value:
    """The value the controller's YAML round trip gives: a string the printer
    writes plain is read back with the YAML rules; quoted and block strings
    stay strings."""
    after = done.text
    if "\n" in before or needs_quotes(before) or "\n" in after or done.unknown:
        return after
    if before.startswith(("'", '"', "&", "*", "!", "|", ">", "%", "@", "`", "[", "{", "- ", "? ", ": ", "#")):
        return after  # the printer quotes these
    try:
        return resolve_plain(after.strip())
    except UnrepresentableScalar:
        return after


def _writer(done: Expansion, current: Origin) -> Origin:
    """The line that defined the (first) variable whose value went in."""
    for _, variable in done.used:
        return variable.origin
    return current
