"""Regular expressions that come from a repository, a catalog or a schema
location, compiled with RE2: Go's syntax, matched in time linear in the
text, as the API server and kustomize match them (Go's ``regexp``). Python's
``re`` backtracks: ``(a+)+$`` against a few dozen characters takes seconds,
and a few more never ends. Every such pattern goes through :func:`compile_go`:
kustomize's target patterns and replacement selectors
(:mod:`krmcheck.kustomize.regex`), the ``pattern`` of an OpenAPI schema
(:mod:`krmcheck.schemas.crds`, :mod:`krmcheck.schemas.sources`) and the
patterns of CEL's ``find`` and ``findAll``
(:mod:`krmcheck.schemas.cel_library`; ``matches`` is cel-cpp's own RE2).

RE2 reads what Go reads (``\\z``, ``\\pL`` and ``\\p{Greek}``, ``(?i)``,
``(?P<name>...)``, repetition up to 1000) and refuses what Go refuses
(look-arounds, back-references, ``\\Z``); it compiles a pattern within a
memory budget, so a pattern too large to compile is refused too.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any


class RegexError(ValueError):
    """A pattern RE2 does not accept; the message names the pattern and why
    (``reason`` alone is why)."""

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(f'invalid regular expression "{pattern}": {reason}')
        self.pattern = pattern
        self.reason = reason


@functools.cache
def _options() -> Any:
    import re2  # when a pattern is first compiled: most runs have none

    options = re2.Options()
    options.log_errors = False  # the error is raised to the caller, not logged to stderr
    return options


@functools.lru_cache(maxsize=4096)
def compile_go(pattern: str) -> Any:
    """The pattern compiled by RE2 (``search``, ``fullmatch``, ``finditer``
    as in ``re``); :class:`RegexError` when RE2, like Go, refuses it."""
    import re2

    try:
        return re2.compile(pattern, _options())
    except re2.error as e:
        reason = e.args[0] if e.args else "invalid"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise RegexError(pattern, str(reason)) from None


def refusal(pattern: str) -> str | None:
    """Why RE2 refuses ``pattern``, or None when it compiles."""
    try:
        compile_go(pattern)
    except RegexError as e:
        return e.reason
    return None


# RE2's refusals that Go's regexp shares (a pattern merely too large for RE2's
# memory budget is not among them: Go's limits differ)
_GO_REFUSES_TOO = ("invalid perl operator", "invalid escape sequence", "missing ]", "missing )", "unexpected )",
                   "invalid repetition size", "no argument for repetition operator", "bad repetition operator",
                   "invalid character class range", "invalid character class", "trailing \\",
                   "invalid named capture group")


def go_refusal(pattern: str) -> str | None:
    """Why Go's ``regexp.Compile`` certainly refuses ``pattern`` (as RE2 says
    it), or None when it compiles or only RE2's limits stop it."""
    reason = refusal(pattern)
    return reason if reason is not None and reason.startswith(_GO_REFUSES_TOO) else None


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches anywhere in ``text`` (as Go's ``MatchString``)."""
    return compile_go(pattern).search(text) is not None


def find_all(pattern: str, text: str) -> Iterator[str]:
    """The successive non-overlapping matches, as Go's ``FindAllString``
    gives them: an empty match right after the previous match is skipped
    (Python's ``finditer`` keeps it)."""
    compiled = compile_go(pattern)
    pos, previous_end = 0, -1
    while pos <= len(text):
        m = compiled.search(text, pos)
        if m is None:
            return
        start, end = m.span()
        empty = start == end
        if not empty or start != previous_end:
            yield m.group(0)
        pos = end + 1 if empty else end
        previous_end = end
