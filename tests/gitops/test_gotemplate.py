"""Go's text/template as krmcheck executes it: other delimiters, functions
given per call, field chains on a function's result, where the output came
from, and the slim-sprig functions the Flux Operator's templates have."""

from __future__ import annotations

from typing import Any

import pytest

from krmcheck.gitops.gotemplate import Failed, MissingKey, TemplateError, render, render_mapped
from krmcheck.gitops.gotemplate import to_yaml
from krmcheck.gitops.resourceset import slugify

ANGLES = ("<<", ">>")
INPUTS = {"tenant": "team1", "app": {"replicas": 2, "version": "6.7.x"}, "tags": ["b", "a"], "empty": ""}


def angles(text: str, data: dict[str, Any] | None = None) -> str:
    given = INPUTS if data is None else data
    return render(text, None, ("missingkey=error",), ANGLES, {"inputs": lambda: given})


@pytest.mark.parametrize("text, want", [
    ("<< inputs.tenant >>", "team1"),
    ("{{ inputs.tenant }}-<< inputs.app.version | quote >>", '{{ inputs.tenant }}-"6.7.x"'),
    ('<< get inputs "name" | default inputs.tenant >>', "team1"),
    ("<<- range $t := inputs.tags >> << $t >><<- end >>", " b a"),
    ('<< if hasKey inputs "app" >>yes<< end >>', "yes"),
    ('<< and (hasKey inputs "nope") inputs.nope >>', "false"),  # Go's and stops at false
    ("a\n  <<- inputs.tenant ->>  \nb", "ateam1b"),
])
def test_angle_delimiters_and_inputs_as_a_function(text: str, want: str) -> None:
    assert angles(text) == want


def test_a_missing_key_is_an_error_of_its_own() -> None:
    with pytest.raises(MissingKey):
        angles("<< inputs.nope >>")
    with pytest.raises(MissingKey):
        angles("<< inputs.tenant >>", {})  # no inputs at all: an empty map


def test_render_mapped_says_where_each_piece_came_from() -> None:
    text = "name: << inputs.tenant >>\nns: x\n"
    out, segments = render_mapped(text, None, (), ANGLES, {"inputs": lambda: INPUTS})
    assert out == "name: team1\nns: x\n"
    assert [(s.out, s.source, s.literal) for s in segments] == [(0, 0, True), (6, 6, False), (11, 25, True)]


@pytest.mark.parametrize("text, want", [
    ("{{ 3 | int }}", "3"),
    ('{{ "42" | int }}', "42"),
    ('{{ "0x1F" | int64 }}', "31"),
    ('{{ "x" | int }}', "0"),
    ('{{ "7" | atoi }}', "7"),
    ("{{ add 1 2 3 }}", "6"),
    ("{{ add1 4 }}", "5"),
    ("{{ sub 1 5 }}", "-4"),
    ("{{ mul 2 3 4 }}", "24"),
    ("{{ div -7 2 }}", "-3"),  # Go truncates toward zero
    ("{{ mod -7 2 }}", "-1"),
    ("{{ max 1 9 3 }}", "9"),
    ("{{ min 4 2 8 }}", "2"),
    ('{{ "a\\nb" | indent 2 }}', "  a\n  b"),
    ('{{ "a\\nb" | nindent 2 }}', "\n  a\n  b"),
    ('{{ substr 1 3 "hello" }}', "el"),
    ('{{ repeat 3 "ab" }}', "ababab"),
    ('{{ nospace " a b\\tc " }}', "abc"),
    ('{{ cat "a" 1 "b" }}', "a 1 b"),
    ('{{ (split "." "a.b.c")._1 }}', "b"),
    ("{{ until 3 }}", "[0 1 2]"),
    ('{{ has "b" (list "a" "b") }}', "true"),
    ('{{ without (list "a" "b" "c") "b" }}', "[a c]"),
    ('{{ uniq (list "a" "b" "a") }}', "[a b]"),
    ('{{ compact (list "a" "" "b") }}', "[a b]"),
    ('{{ append (list "a") "b" }}', "[a b]"),
    ('{{ prepend (list "a") "b" }}', "[b a]"),
    ('{{ concat (list "a") (list "b" "c") }}', "[a b c]"),
    ('{{ sortAlpha (list "b" "c" "a") }}', "[a b c]"),
    ('{{ keys (dict "a" 1 "b" 2) }}', "[a b]"),
    ('{{ pick (dict "a" 1 "b" 2) "b" }}', "map[b:2]"),
    ('{{ omit (dict "a" 1 "b" 2) "b" }}', "map[a:1]"),
    ('{{ dig "a" "b" "none" (dict "a" (dict "b" "deep")) }}', "deep"),
    ('{{ dig "a" "x" "none" (dict "a" (dict "b" "deep")) }}', "none"),
    ('{{ regexFind "[0-9]+" "ab12cd34" }}', "12"),
    ('{{ regexFindAll "[0-9]" "a1b2c3" 2 }}', "[1 2]"),
    ('{{ regexSplit "-" "a-b-c" -1 }}', "[a b c]"),
    ('{{ kindOf (list 1) }}/{{ kindOf "s" }}/{{ kindOf 1 }}', "slice/string/int64"),
    ('{{ kindIs "map" (dict) }}', "true"),
    ('{{ sha1sum "a" }}', "86f7e437faa5a7fce15d1ddcb9eaeaea377667b8"),
    ('{{ adler32sum "a" }}', "6422626"),
    ('{{ base "a/b/c.yaml" }} {{ dir "a/b/c.yaml" }} {{ ext "a/b/c.yaml" }}', "c.yaml a/b .yaml"),
    ('{{ clean "a/../b/./c" }}', "b/c"),
    ('{{ toPrettyJson (dict "a" 1) }}', '{\n  "a": 1\n}'),
    ('{{ quote "say \\"hi\\"\\n" }}', '"say \\"hi\\"\\n"'),
    ('{{ range $k, $v := (dict "b" 2 "a" 1) }}{{ $k }}{{ end }}', "ab"),  # Go ranges over sorted keys
])
def test_sprig_functions(text: str, want: str) -> None:
    assert render(text, {}) == want


def test_fail_fails_the_template() -> None:
    with pytest.raises(Failed):
        render('{{ fail "no" }}', {})


def test_unknown_functions_say_so() -> None:
    with pytest.raises(TemplateError, match="not supported by krmcheck"):
        render("{{ nosuchfunction 1 }}", {})


@pytest.mark.parametrize("text, want", [
    ("Team One", "team-one"),
    ("This & that @home", "this-and-that-athome"),
    ("Hellö Wörld", "hello-world"),
    ("it's--done_", "its-done"),
    ("word " * 20, "word-" * 11 + "word"),  # at most 63 characters, cut after a word
])
def test_the_operators_slugify(text: str, want: str) -> None:
    assert slugify(text) == want


def test_the_operators_to_yaml_sorts_keys_and_ends_in_a_newline() -> None:
    assert to_yaml({"b": [1], "a": "x"}) == "a: x\nb:\n- 1\n"
