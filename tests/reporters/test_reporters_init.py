"""The registry and the shared ordering (krmcheck/reporters/__init__.py)."""

from __future__ import annotations

from reporter_sample import finding

from krmcheck.reporters import REPORTERS, ordered, where
from krmcheck.tree.origin import Location


def test_registry_names_every_format() -> None:
    assert sorted(REPORTERS) == ["github", "gitlab", "json", "junit", "markdown", "sarif", "text"]
    assert all(callable(getattr(r, "write", None)) for r in REPORTERS.values())


def test_order_is_path_line_col_then_most_severe() -> None:
    info = finding("i", "info", "v", "r", Location("a.yaml", 2, 1))
    error = finding("e", "error", "v", "r", Location("a.yaml", 2, 1))
    warning = finding("w", "warning", "v", "r", Location("a.yaml", 2, 1))
    earlier_col = finding("c", "info", "v", "r", Location("a.yaml", 1, 9))
    other_file = finding("o", "error", "v", "r", Location("B.yaml", 99, 1))
    assert ordered([info, warning, other_file, error, earlier_col]) == [
        other_file, earlier_col, error, warning, info]


def test_line_ordering_is_numeric() -> None:
    ten = finding("x", "error", "v", "r", Location("a.yaml", 10, 1))
    nine = finding("x", "error", "v", "r", Location("a.yaml", 9, 1))
    assert ordered([ten, nine]) == [nine, ten]


def test_unknown_positions_print_what_is_known() -> None:
    assert where(Location("a.yaml", 3, 4)) == "a.yaml:3:4"
    assert where(Location("a.yaml", 0, 0)) == "a.yaml"
    assert where(Location("", 0, 0)) == "-"
