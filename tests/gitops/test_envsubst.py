"""The envsubst dialect of Flux post-build substitution, one expression at a time."""

from __future__ import annotations

import pytest

from krmcheck.gitops.envsubst import SubstitutionError, Unknown, Variable, expand
from krmcheck.tree.origin import Origin

AT = Origin("vars.yaml", 3, 3)
VARS = {"APP": Variable("podinfo", AT), "EMPTY": Variable("", AT), "N": Variable("3", AT),
        "DOMAIN": Variable("apps.example.com", AT), "DOT": Variable(".", AT), "DASH": Variable("-", AT),
        "FILE": Variable("bash.string.txt", AT), "DIR": Variable("/srv/data/file", AT),
        "HOST": Variable("web-01", AT), "BACKSLASH": Variable("a\\b", AT), "ACCENT": Variable("éa", AT)}


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
    # the fork's default operators are one function (template.go lookupFunc:
    # toDefault): empty or undefined gives the default, whichever is written
    ("${EMPTY=fallback}", "fallback"),
    ("${MISSING=fallback}", "fallback"),
    ("${APP=fallback}", "podinfo"),
    ("${EMPTY:?fallback}", "fallback"),
    ("${MISSING:+fallback}", "fallback"),
    ("${APP:+fallback}", "podinfo"),
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
    ("${APP/pod/cat}", "catinfo"),  # pattern operators are evaluated (below)
])
def test_expressions(text: str, want: str) -> None:
    assert expand(text, lookup).text == want


def test_what_each_expression_used() -> None:
    done = expand("${APP} ${MISSING} ${SECRET} ${N:=7}", lookup)
    assert [name for name, _ in done.used] == ["APP", "N"]
    assert done.undefined == ["MISSING"]
    assert done.unknown == ["SECRET"]
    assert done.unsupported == []


def test_an_unused_default_contributes_nothing() -> None:
    done = expand("${APP:=${N}}", lookup)
    assert [name for name, _ in done.used] == ["APP"]


@pytest.mark.parametrize("text, fragment", [
    ("${APP", "missing closing brace"),
    ("${}", "variable name"),
    ("${-x}", "variable name"),
    ("${MISSING:=x", "missing closing brace"),
    # no operator of the fork: the controller refuses the text
    ("${APP-fallback}", "missing closing brace"),
    ("${APP?x}", "missing closing brace"),
    ("${APP+x}", "missing closing brace"),
    ("${APP@Q}", "missing closing brace"),
])
def test_bad_expressions(text: str, fragment: str) -> None:
    with pytest.raises(SubstitutionError, match=fragment):
        expand(text, lookup)


def test_strict_mode() -> None:
    with pytest.raises(SubstitutionError, match="MISSING"):
        expand("${MISSING}", lookup, strict=True)
    assert expand("${MISSING=d}", lookup, strict=True).text == "d"
    assert expand("${MISSING:?d}", lookup, strict=True).text == "d"
    assert expand("${MISSING:=d}", lookup, strict=True).text == "d"


def test_templates_keep_what_is_undefined() -> None:
    done = expand("${MISSING} ${MISSING:=d} ${APP}", lookup, keep_undefined=True)
    assert done.text == "${MISSING} d podinfo"


# --- pattern operators, as fluxcd/pkg/envsubst (the fork of drone/envsubst) has them ------------

@pytest.mark.parametrize("text, want", [
    # funcs.go replaceFirst: the first occurrence of a plain string (no glob)
    ("${DOMAIN/./-}", "apps-example.com"),
    ("${APP/*/x}", "podinfo"),  # "*" is a character here, and podinfo has none
    # replaceAll: every occurrence
    ("${DOMAIN//./-}-tls", "apps-example-com-tls"),
    # replacePrefix / replaceSuffix: only where the value starts / ends so
    ("${DOMAIN/#apps./www.}", "www.example.com"),
    ("${DOMAIN/#example/x}", "apps.example.com"),
    ("${DOMAIN/%.com/.org}", "apps.example.org"),
    ("${DOMAIN/%apps/x}", "apps.example.com"),
    # no replacement: the first and every occurrence are deleted (one argument is
    # enough for replaceFirst/replaceAll), a prefix or suffix is not (those need two)
    ("${DOMAIN/./}", "appsexample.com"),
    ("${DOMAIN//./}", "appsexamplecom"),
    ("${DOMAIN/#apps./}", "apps.example.com"),
    ("${DOMAIN/%.com/}", "apps.example.com"),
    # parseReplaceFunc: the separator is a run of "/", so this is "." replaced by nothing
    ("${DOMAIN//.//}", "appsexamplecom"),
    ("${APP/o//0}", "p0dinfo"),
    # an argument may be one ${...} expression
    ("${DOMAIN//${DOT}/${DASH}}", "apps-example-com"),
    ("${APP/${APP}/${N}}", "3"),
    # the replacement runs to "}", a "/" in it is plain
    ("${APP/pod/a/b}", "a/binfo"),
    # scan.go escapes in a replacement's arguments: \\/ is /, \\\\ is \\, $$ is $
    (r"${DIR//\//-}", "-srv-data-file"),
    (r"${DIR/\/srv/\/opt}", "/opt/data/file"),
    (r"${BACKSLASH/\\/\/}", "a/b"),
    ("${APP/pod/$$}", "$info"),
    ("${APP/pod/$$x}", "$xinfo"),
    # escaped, "$${" is no expression: the replacement is the text "${N", up to the first "}"
    ("${APP/pod/$${N}}", "${Ninfo}"),
    (r"${APP/pod/\x}", r"\xinfo"),  # a backslash before anything else is itself
])
def test_replacements(text: str, want: str) -> None:
    done = expand(text, lookup)
    assert done.text == want
    assert not done.unsupported and not done.unknown


@pytest.mark.parametrize("text, want", [
    # funcs.go trimShortestPrefix / trimLongestPrefix, globs as path/match.go reads them
    ("${FILE#*.}", "string.txt"),
    ("${FILE##*.}", "txt"),
    ("${DIR#*/}", "srv/data/file"),  # "*" matches "" before the first "/"
    ("${DIR##*/}", "file"),  # and "/" itself: path.Match's fork drops that rule
    ("${APP#?}", "odinfo"),
    ("${APP##??}", "dinfo"),
    ("${HOST#[a-z]}", "eb-01"),
    ("${HOST##[a-z]*-}", "01"),
    ("${HOST##*[^0-9]}", "01"),  # ^ negates a class
    ("${HOST#[^a-z]}", "web-01"),
    ("${HOST#[0-9]}", "web-01"),  # no prefix matches: the value as it is
    (r"${FILE#bash\.}", "string.txt"),  # \\c is the character c
    ("${DOMAIN#example}", "apps.example.com"),  # the glob must match the prefix whole
    # a "*" ending the glob matches whatever is left, and only a nonempty prefix is cut:
    # the shortest is one byte, the longest all
    ("${APP#*}", "odinfo"),
    ("${APP##*}", ""),
    # trimShortestSuffix / trimLongestSuffix: the reversed glob against the reversed value
    ("${FILE%.*}", "bash.string"),
    ("${FILE%%.*}", "bash"),
    ("${APP%?}", "podinf"),
    ("${APP%%i*}", "pod"),
    ("${HOST%-*}", "web"),
    ("${HOST%[0-9]}", "web-01"),  # reversed, "[0-9]" is "]9-0[": no class, no match
    # a malformed glob (an unclosed class) leaves the value as it is
    ("${APP#[}", "podinfo"),
    ("${APP##p[a-}", "podinfo"),
    # the glob may be one ${...} expression (here a default: MISSING is undefined)
    ("${FILE##${MISSING:=*.}}", "txt"),
    # prefixes are cut at bytes: "?" matches the first byte of "é" alone, the byte
    # left over is no character (U+FFFD here); "##" takes the whole "é"
    ("${ACCENT#?}", "\ufffda"),
    ("${ACCENT##?}", "a"),
    ("${EMPTY#*}", ""),
])
def test_trims(text: str, want: str) -> None:
    done = expand(text, lookup)
    assert done.text == want
    assert not done.unsupported and not done.unknown


def test_what_a_pattern_operator_used() -> None:
    done = expand("${DOMAIN//${DOT}/${DASH}} ${FILE%.*}", lookup)
    # the variable first, then what its arguments used
    assert [name for name, _ in done.used] == ["DOMAIN", "DOT", "DASH", "FILE"]
    assert [[name for name, _ in s.used] for s in done.spans] == [["DOMAIN", "DOT", "DASH"], ["FILE"]]


def test_an_unknown_variable_makes_a_pattern_operator_unknown() -> None:
    """Its value comes from an object the repository does not show: what the
    operator makes of it is not known either; kept as written, as ${SECRET}."""
    done = expand("${SECRET//./-}-tls", lookup)
    assert done.text == "${SECRET//./-}-tls"
    assert done.unknown == ["SECRET"] and not done.unsupported and not done.used
    # an argument that is unknown makes the whole expression unknown too
    done = expand("${APP/pod/${SECRET}}", lookup)
    assert done.text == "${APP/pod/${SECRET}}"
    assert done.unknown == ["SECRET"] and not done.used
    done = expand("${SECRET#${APP}}", lookup)
    assert done.unknown == ["SECRET"] and not done.used


def test_an_undefined_variable_under_a_pattern_operator() -> None:
    # non-strict, the controller's mapping gives "" for it, and the operator applies to ""
    done = expand("${MISSING//a/b}|${MISSING#*}|${MISSING/#${EMPTY}/x}|${MISSING/%${EMPTY}/y}", lookup)
    assert done.text == "||x|y"  # "" starts and ends with "": replacePrefix/replaceSuffix apply
    assert done.undefined == ["MISSING"] * 4
    # strict (eval.go evalFunc): only the default operators tolerate an unset variable
    with pytest.raises(SubstitutionError, match="MISSING"):
        expand("${MISSING//a/b}", lookup, strict=True)
    with pytest.raises(SubstitutionError, match="MISSING"):
        expand("${APP/pod/${MISSING}}", lookup, strict=True)  # the arguments are evaluated too
    # a template's variable still to come: kept as written
    done = expand("${MISSING%.*} ${APP#p}", lookup, keep_undefined=True)
    assert done.text == "${MISSING%.*} odinfo" and done.unknown == ["MISSING"]


@pytest.mark.parametrize("text, fragment", [
    # parse.go: what the controller refuses to parse is an error here too
    ("${APP/pod}", "bad substitution"),  # a replacement needs its second "/"
    ("${APP#}", "unable to parse substitution within function"),  # no glob
    ("${APP%%}", "unable to parse substitution within function"),
    ("${APP///x}", "unable to parse substitution within function"),  # "//" then an empty pattern
    ("${APP/pod/x${N}}", "bad substitution"),  # text and an expression in one argument
    ("${APP#p${N}}", "bad substitution"),
    ("${APP/${N}x/y}", "bad substitution"),
    ("${APP/pod/", "unable to parse substitution within function"),
    ("${APP#p", "bad substitution"),
])
def test_bad_pattern_operators(text: str, fragment: str) -> None:
    with pytest.raises(SubstitutionError, match=fragment):
        expand(text, lookup)


def test_the_first_argument_of_a_replacement_runs_to_a_slash() -> None:
    """parse.go reads the pattern up to a "/" or a "${", over any "}": what
    looks like two expressions is one here, as in the controller."""
    assert expand("${APP/x} and a/b}", lookup).text == "podinfo"  # "x} and a" replaced by "b"
