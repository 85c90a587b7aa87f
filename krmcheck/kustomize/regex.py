"""Regular expressions as kustomize has them: Go's syntax (RE2's), matched in
time linear in the text, so that no pattern in a kustomization can make a
build hang (Python's ``re`` backtracks: ``(a+)+$`` against a long name never
ends). An invalid pattern is an error, never a literal. RE2 itself is
:mod:`krmcheck.regex`, shared with the schema patterns and CEL."""

from __future__ import annotations

from krmcheck.regex import RegexError, compile_go, search

__all__ = ["RegexError", "compile_go", "full_match", "search"]


def full_match(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches the whole of ``text`` (kustomize anchors
    selector patterns as ``^(?:pattern)$``)."""
    return compile_go(pattern).fullmatch(text) is not None
