"""The envsubst dialect of Flux post-build substitution, one expression at a time."""

from __future__ import annotations

import pytest

from krmcheck.gitops.envsubst import SubstitutionError, Unknown, Variable, expand
from krmcheck.tree.origin import Origin

AT = Origin("vars.yaml", 3, 3)
VARS = {"APP": Variable("podinfo", AT), "EMPTY": Variable("", AT), "N": Variable("3", AT)}


def lookup(name: str) -> Variable | Unknown | None:
    if name == "SECRET":
        return Unknown("Secret/cluster-secrets")
    return VARS.get(name)


@pytest.mark.parametrize("text, want", [
    ("${APP}", "podinfo"),
    ("name-${APP}-x", "name-podinfo-x"),
    ("${APP}${N}", "podinfo3"),
    ("$APP", "$APP"),  # no braces: left alone
    ("$${APP}", "${APP}"),  # escaped: the literal text
    ("$$APP", "$APP"),
    ("price: $5", "price: $5"),
    ("${MISSING:=fallback}", "fallback"),
    ("${MISSING:-fallback}", "fallback"),
    ("${EMPTY:=fallback}", "fallback"),
    ("${EMPTY:-fallback}", "fallback"),
    ("${APP:=fallback}", "podinfo"),
    ("${MISSING:=${APP}-x}", "podinfo-x"),  # a default may hold an expression
    ("${EMPTY=fallback}", ""),  # set, if empty: no default
    ("${MISSING-fallback}", ""),  # non-strict: every variable counts as set
    ("${MISSING}", ""),
    ("${#APP}", "7"),
    ("${APP^}", "Podinfo"),
    ("${APP^^}", "PODINFO"),
    ("${APP:3}", "info"),
    # an offset or length that is no number parses, and gives the value (a
    # CRD's description of the functions: "${var:position} and ...")
    ("${APP:position}", "podinfo"),
    ("${APP:1:length}", "podinfo"),
    ("${MISSING:position} and", " and"),
    ("${APP:0:3}", "pod"),
    ("${SECRET}", "${SECRET}"),  # unknown: kept as written
    ("${SECRET:=x}", "${SECRET:=x}"),
    ("${APP/pod/cat}", "${APP/pod/cat}"),  # pattern operators: kept, reported
])
def test_expressions(text: str, want: str) -> None:
    assert expand(text, lookup).text == want


def test_what_each_expression_used() -> None:
    done = expand("${APP} ${MISSING} ${SECRET} ${APP/a/b} ${N:=7}", lookup)
    assert [name for name, _ in done.used] == ["APP", "N"]
    assert done.undefined == ["MISSING"]
    assert done.unknown == ["SECRET"]
    assert done.unsupported == ["${APP/a/b}"]


def test_an_unused_default_contributes_nothing() -> None:
    done = expand("${APP:=${N}}", lookup)
    assert [name for name, _ in done.used] == ["APP"]


@pytest.mark.parametrize("text, fragment", [
    ("${APP", "missing closing brace"),
    ("${}", "variable name"),
    ("${-x}", "variable name"),
    ("${MISSING:=x", "missing closing brace"),
])
def test_bad_expressions(text: str, fragment: str) -> None:
    with pytest.raises(SubstitutionError, match=fragment):
        expand(text, lookup)


def test_strict_mode() -> None:
    with pytest.raises(SubstitutionError, match="MISSING"):
        expand("${MISSING}", lookup, strict=True)
    assert expand("${MISSING-d}", lookup, strict=True).text == "d"
    assert expand("${MISSING:=d}", lookup, strict=True).text == "d"


def test_templates_keep_what_is_undefined() -> None:
    done = expand("${MISSING} ${MISSING:=d} ${APP}", lookup, keep_undefined=True)
    assert done.text == "${MISSING} d podinfo"
