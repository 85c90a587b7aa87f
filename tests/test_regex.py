"""regex: patterns from a repository read as Go reads them, matched by RE2."""

from __future__ import annotations

import time

import pytest

from krmcheck import regex


@pytest.mark.parametrize("pattern, text, found", [
    (r"^\p{L}+\z", "Grüße", True),  # Unicode classes and \z, which Python's re lacks
    (r"^\pL+\z", "abc\n", False),  # \z: the very end, not before a final line break
    (r"^[a-z]+$", "abc\n", False),  # $ without (?m) is the end of the text in Go
    (r"(?i)^WEB$", "web", True),
    (r"^(?P<name>a)b$", "ab", True),
    (r"\Qa.b\E", "xa.by", True),
    (r"a.b", "a.b", True),
])
def test_gos_syntax_and_meaning(pattern: str, text: str, found: bool) -> None:
    assert regex.search(pattern, text) is found


@pytest.mark.parametrize("pattern, reason", [
    ("(?=a)", "invalid perl operator"),  # look-arounds: Go has none
    (r"(a)\1", "invalid escape sequence"),  # back-references: neither
    (r"a\Z", "invalid escape sequence"),
    ("a{1001}", "invalid repetition size"),
    ("a([", "missing ]"),
])
def test_what_go_refuses_is_refused_with_a_reason(pattern: str, reason: str) -> None:
    assert reason in (regex.refusal(pattern) or "")
    with pytest.raises(regex.RegexError, match="invalid regular expression"):
        regex.compile_go(pattern)


def test_a_pattern_that_backtracks_in_python_is_matched_in_linear_time() -> None:
    started = time.monotonic()
    assert not regex.search("^(a+)+$", "a" * 100_000 + "!")  # Python's re: longer than the universe
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("pattern, text, expected", [
    ("a*", "baaa", ["", "aaa"]),  # Go skips the empty match right after "aaa"; Python's finditer keeps it
    ("[0-9]+", "a1b22c333", ["1", "22", "333"]),
    ("", "ab", ["", "", ""]),
    ("x*", "", [""]),
    ("é|b", "aébé", ["é", "b", "é"]),
])
def test_find_all_gives_what_gos_find_all_string_gives(pattern: str, text: str, expected: list[str]) -> None:
    assert list(regex.find_all(pattern, text)) == expected
