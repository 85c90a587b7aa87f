"""Findings about ``${...}`` placeholders that nothing substituted.

A value still written ``${VAR}`` after rendering is not what will be
applied: its variable comes later (a clusterctl or envsubst template) or
from an object the repository cannot show (a Flux ``substituteFrom``
Secret encrypted with SOPS). A finding about such a value is not judged:
it is kept as suppressed (``by: placeholder``), and the run says once how
many there were. In a template (outside a controller root) a value that
only holds a placeholder, ``${CLUSTER_NAME}-md-0``, is not judged either:
what the name will be is not known yet; nor is one that holds a
``{{ ... }}`` expression or is wholly a ``<what to write here>``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from krmcheck.locate import Locator
from krmcheck.results import Finding, Result, RootReport, Suppressed
from krmcheck.tree.node import Scalar

VALIDATOR = "substitution"  # krmcheck.gitops.VALIDATOR
WHOLE = re.compile(r"\$\{[^{}]*(\$\{[^{}]*\}[^{}]*)*\}\Z")
# In a template: ${VAR}, {{ expression }} or an envsubst $VARIABLE anywhere
# in a value, or a value that is wholly <what to write here>.
HELD = re.compile(r"\$\{[^{}]+\}|\{\{.*?\}\}|\A<[^<>\n]+>\Z|\$[A-Z_][A-Z0-9_]{2,}\b")
QUOTED = re.compile(r"""['"]\$\{[^'"]*\}['"]""")
# (a key holding an envsubst pattern may lose its closing brace to YAML:
# ``${ROLE/#arn/eks.amazonaws.com/role-arn: arn}``)
QUOTED_HELD = re.compile(r"""['"]([^'"]*(\$\{[^'"{}]+\}?|\{\{[^'"]*?\}\}|\$[A-Z_][A-Z0-9_]{2,}\b)[^'"]*|<[^<>'"]+>)['"]""")


def is_placeholder(value: object, holding: bool = False) -> bool:
    """Whether ``value`` is wholly a ``${...}`` placeholder (with ``holding``:
    holds one anywhere)."""
    if not isinstance(value, str):
        return False
    return (HELD.search(value) if holding else WHOLE.match(value)) is not None


def split(findings: Sequence[Finding], locator: Locator, holding: bool = False,
          unknown: frozenset[int] = frozenset(), left: bool = False) -> tuple[list[Finding], list[Suppressed]]:
    """(findings to report, findings about a value that is wholly a
    placeholder, or with ``holding`` holds one, or that holds a variable
    whose value the repository cannot show: ``unknown``, the id() of such
    values, as substitution left them; with ``left`` (the controller's
    substitution kept unknown variables as written), any value still
    holding a ``${...}``: the controller replaces every one, so one left
    is a variable whose value is not known here)."""
    kept: list[Finding] = []
    exempt: list[Suppressed] = []
    for f in findings:
        if f.result.validator not in ("build", "substitution") and _about_placeholder(f.result, locator,
                                                                                       holding or left, unknown):
            exempt.append(Suppressed(f, "placeholder", "${...}"))
        else:
            kept.append(f)
    return kept, exempt


def _about_placeholder(result: Result, locator: Locator, holding: bool, unknown: frozenset[int]) -> bool:
    if (QUOTED_HELD if holding else QUOTED).search(result.message):
        return True
    resource = locator.find(result)
    if resource is None or not result.field_path:
        return False
    from krmcheck.tree import fieldpath

    try:
        steps = fieldpath.parse(result.field_path)
    except ValueError:
        return False
    chain = fieldpath.trace(resource.node, steps)
    if len(chain) != len(steps) + 1:
        return False  # the field is missing: not about a value
    node = chain[-1]
    return isinstance(node, Scalar) and (is_placeholder(node.value, holding) or id(node) in unknown)


def summarise(reports: Sequence[RootReport]) -> tuple[RootReport, ...]:
    """One info finding for the run, on the first root with exempt findings."""
    count = sum(1 for r in reports for s in r.suppressed if s.by == "placeholder")
    out = list(reports)
    for i, r in enumerate(out):
        first = next((s for s in r.suppressed if s.by == "placeholder"), None)
        if first is not None:
            plural = "finding" if count == 1 else "findings"
            result = Result(message=f"{count} {plural} about values holding a ${{...}} "
                                    f"placeholder that nothing substituted were not judged",
                            severity="info", tags=(("validator", VALIDATOR),))
            info = Finding(result, r.root, first.finding.location)
            out[i] = dataclasses.replace(r, findings=r.findings + (info,))
            break
    return tuple(out)
