"""Regular expressions as kustomize has them: Go's syntax (RE2's), matched in
time linear in the text, so that no pattern in a kustomization can make a
build hang (Python's ``re`` backtracks: ``(a+)+$`` against a long name never
ends). An invalid pattern is an error, never a literal."""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _options() -> Any:
    import re2  # when a pattern is first compiled: most builds have none

    options = re2.Options()
    options.log_errors = False  # the error is raised to the caller, not logged to stderr
    return options


class RegexError(ValueError):
    """A pattern RE2 does not accept; the message names the pattern and why."""


@functools.lru_cache(maxsize=4096)
def compile_go(pattern: str) -> Any:
    import re2

    try:
        return re2.compile(pattern, _options())
    except re2.error as e:
        reason = e.args[0] if e.args else "invalid"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise RegexError(f'invalid regular expression "{pattern}": {reason}') from None


def full_match(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches the whole of ``text`` (kustomize anchors
    selector patterns as ``^(?:pattern)$``)."""
    return compile_go(pattern).fullmatch(text) is not None


def search(pattern: str, text: str) -> bool:
    return compile_go(pattern).search(text) is not None
