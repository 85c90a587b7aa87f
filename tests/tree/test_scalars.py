"""kustomize's scalar rules, one case per row of the table measured with kubectl."""

from __future__ import annotations

import pytest

from krmcheck.tree.emit import emit
from krmcheck.tree.load import LoadError, load_documents

ROWS = [
    ("yes", '"yes"'), ("on", '"on"'), ("y", '"y"'), ("n", '"n"'),
    ("True", "true"), ("FALSE", "false"),
    ("0777", "511"), ("010", "8"), ("0o17", "15"), ("0x1F", "31"), ("1_000", "1000"),
    ("1e3", "1000"), ("+1", "1"), ("-0", "0"), ("1.0", "1"), (".5", "0.5"),
    ("1:20", '"1:20"'), ("=", "="), ("2001-12-14", '"2001-12-14T00:00:00Z"'),
    ("Null", "null"), ("~", "null"), ("12345678901234567890", "12345678901234567890"),
    ("1.5e-7", "1.5e-07"), ("1234567.5", "1.2345675e+06"), ("1e21", "1e+21"),
    ("08", "8"), ("'it''s \"q\"'", "it's \"q\""), ('"a: b"', "'a: b'"), ('"-"', "'-'"),
    ('"*a"', "'*a'"), ('"123"', '"123"'), ('""', '""'), ('"   lead"', "'   lead'"),
    ('"tab\\there"', '"tab\\there"'), ("2001-12-14 21:59:43.10", '"2001-12-14T21:59:43.1Z"'),
]


@pytest.mark.parametrize("written,printed", ROWS, ids=[r[0] for r in ROWS])
def test_scalar_round_trip(written: str, printed: str) -> None:
    doc = load_documents(f"v: {written}\n", "x.yaml")[0]
    assert emit(doc) == f"v: {printed}\n"


@pytest.mark.parametrize("written", [".inf", "-.Inf", ".NaN"])
def test_values_json_cannot_carry_are_errors(written: str) -> None:
    with pytest.raises(LoadError) as e:
        load_documents(f"a: 1\nv: {written}\n", "x.yaml")
    assert (e.value.line, e.value.col) == (2, 1)  # the field's key


def test_keys_quoted_like_values() -> None:
    doc = load_documents("n: 1\ny: 2\non: 3\nb: 4\n", "x.yaml")[0]
    assert emit(doc) == 'b: 4\n"n": 1\n"on": 3\n"y": 2\n'


def test_key_order_is_go_yaml_v2() -> None:
    doc = load_documents("a10: x\na9: y\nB: z\n_u: q\n'1': one\na: w\n", "x.yaml")[0]
    assert list(emit(doc).splitlines()) == ["_u: q", '"1": one', "B: z", "a: w", 'a9: "y"', "a10: x"]


def test_long_plain_text_folds_at_80_columns() -> None:
    # as kubectl printed it for an annotation
    text = ("a:\n  b:\n    long: this is a very long string that goes on and on and on and on past the eighty\n"
            "      column limit for sure yes\n")
    assert emit(load_documents(text, "x.yaml")[0]) == text


def test_multi_line_strings_are_literal_blocks() -> None:
    assert emit(load_documents('k: "a\\nb\\n"\n', "x.yaml")[0]) == "k: |\n  a\n  b\n"


def test_folded_block_keeps_go_yaml_extra_break_before_more_indented_line() -> None:
    doc = load_documents("d: >\n  x\n   y\n   z\n  w\n", "x.yaml")[0]
    assert doc.items["d"].value == "x\n\n y\n z\nw\n"  # type: ignore[attr-defined]


def test_duplicate_key_is_an_error_at_the_second_one() -> None:
    with pytest.raises(LoadError) as e:
        load_documents("a: 1\nb: 2\na: 3\n", "x.yaml")
    assert (e.value.line, e.value.col) == (3, 1)
    assert load_documents("a: 1\na: 3\n", "k.yaml", duplicate_keys=True)[0].items["a"].value == 3  # type: ignore[attr-defined]


def test_no_document_end_marker_after_keep_chomped_block() -> None:
    text = "a:\n  b: |+\n    kept\n\n"
    assert emit(load_documents(text, "x.yaml")[0]) == text


def test_an_anchor_may_be_defined_again_as_in_go_yaml() -> None:
    doc = load_documents("a: &x 1\nb: *x\nc: &x 2\nd: *x\n", "x.yaml")[0]
    assert emit(doc) == "a: 1\nb: 1\nc: 2\nd: 2\n"


def test_a_control_character_is_an_error_at_its_position() -> None:
    with pytest.raises(LoadError) as e:
        load_documents("a: 1\nb: x\x1by\n", "x.yaml")
    assert (e.value.line, e.value.col) == (2, 5)
    assert "#x001b" in e.value.message and "<unicode string>" not in e.value.message
