"""Loading YAML text into provenance trees: where each node points, documents,
anchors, merge keys, duplicate keys, limits and error positions. Scalar
resolution is in test_scalars.py, shares and the parse cache in test_share.py."""

from __future__ import annotations

import pytest

from krmcheck import stack
from krmcheck.tree import load
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, lookup, walk

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [80, 443]
"""


def one(text: str, duplicate_keys: bool = False) -> Mapping:
    docs = load_documents(text, "app/file.yaml", duplicate_keys=duplicate_keys)
    assert len(docs) == 1 and isinstance(docs[0], Mapping)
    return docs[0]


def at(node: Node | None) -> tuple[int, int]:
    assert node is not None
    return node.origin.line, node.origin.col


def error(text: str) -> LoadError:
    with pytest.raises(LoadError) as caught:
        load_documents(text, "app/file.yaml")
    return caught.value


def container(doc: Mapping) -> Mapping:
    containers = lookup(doc, ["spec", "template", "spec", "containers"])
    assert isinstance(containers, Sequence) and isinstance(containers.items[0], Mapping)
    return containers.items[0]


# --- positions ---------------------------------------------------------------------

def test_a_value_in_a_mapping_points_at_its_key() -> None:
    doc = one(DEPLOYMENT)
    assert at(doc) == (1, 1)
    assert at(lookup(doc, ["metadata", "name"])) == (4, 3)
    assert at(container(doc).items["image"]) == (10, 9)


def test_a_sequence_item_points_at_itself() -> None:
    item = container(one(DEPLOYMENT))
    assert at(item) == (9, 9)  # the first key of the item, after "- "
    ports = item.items["ports"]
    assert isinstance(ports, Sequence)
    assert [at(p) for p in ports] == [(11, 17), (11, 21)]


def test_every_node_carries_the_path_and_the_writer() -> None:
    docs = load_documents("a: [1, {b: 2}]\n", "base/cm.yaml", by="patch")
    assert {(n.origin.path, n.origin.by) for n in walk(docs[0])} == {("base/cm.yaml", "patch")}


def test_a_plain_scalar_keeps_its_spelling_and_a_quoted_one_does_not() -> None:
    doc = one('plain: 0777\nquoted: "0777"\n')
    plain, quoted = doc.items["plain"], doc.items["quoted"]
    assert isinstance(plain, Scalar) and (plain.value, plain.text) == (511, "0777")
    assert isinstance(quoted, Scalar) and (quoted.value, quoted.text) == ("0777", None)


def test_a_tagged_int_resolves_like_a_plain_one() -> None:
    value = one("a: !!int 010\n").items["a"]
    assert isinstance(value, Scalar) and value.value == 8


def test_a_binary_scalar_is_its_decoded_text() -> None:
    value = one("a: !!binary |\n  aGVs\n  bG8=\n").items["a"]  # line breaks ignored
    assert isinstance(value, Scalar) and value.value == "hello"


def test_a_folded_block_keeps_go_yamls_line_break_before_a_more_indented_line() -> None:
    value = one("a: >\n  one\n    two\n  three\n").items["a"]
    assert isinstance(value, Scalar) and value.value == "one\n\n  two\nthree\n"


# --- documents --------------------------------------------------------------------------

def test_documents_keep_their_own_lines() -> None:
    docs = load_documents("a: 1\n---\n# note\nb: 2\n---\n- c\n", "app/file.yaml")
    assert [d.to_data() for d in docs] == [{"a": 1}, {"b": 2}, ["c"]]
    assert [at(d) for d in docs] == [(1, 1), (4, 1), (6, 1)]


@pytest.mark.parametrize("text", ["", "# only a comment\n", "\n\n"])
def test_a_text_without_content_has_no_documents(text: str) -> None:
    assert load_documents(text, "app/file.yaml") == []


def test_too_many_documents_is_an_error_at_the_first_one_too_many(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load, "MAX_DOCUMENTS", 2)
    e = error("a: 1\n---\nb: 2\n---\nc: 3\n")
    assert (e.path, e.line, e.col) == ("app/file.yaml", 5, 1)
    assert e.message == "more than 2 documents in one file"


# --- anchors, aliases, merge keys -----------------------------------------------------------

def test_an_alias_is_a_separate_copy_pointing_at_the_anchored_text() -> None:
    doc = one("labels: &l\n  app: web\nselector: *l\n")
    labels, selector = doc.items["labels"], doc.items["selector"]
    assert isinstance(labels, Mapping) and isinstance(selector, Mapping)
    assert selector.to_data() == {"app": "web"}
    assert selector is not labels and selector.items["app"] is not labels.items["app"]
    assert at(selector) == (3, 1)  # the key that holds the alias
    assert at(selector.items["app"]) == (2, 3)  # the anchored text a person edits


def test_a_later_anchor_of_the_same_name_replaces_the_earlier_one() -> None:
    assert one("a: &x 1\nb: &x 2\nc: *x\n").to_data() == {"a": 1, "b": 2, "c": 2}


def test_merge_keys_own_keys_win_and_merged_ones_point_at_their_source() -> None:
    doc = one("base: &b\n  x: 1\n  y: 2\nover:\n  <<: *b\n  y: 3\n")
    over = doc.items["over"]
    assert isinstance(over, Mapping)
    assert over.to_data() == {"x": 1, "y": 3}
    assert list(over.items) == ["x", "y"]
    assert (at(over.items["x"]), at(over.items["y"])) == ((2, 3), (6, 3))


def test_merge_keys_earlier_sources_win_over_later_ones() -> None:
    doc = one("one: &o {a: 1, b: 1}\ntwo: &t {b: 2, c: 2}\nm:\n  <<: [*o, *t]\n")
    assert doc.to_data()["m"] == {"a": 1, "b": 1, "c": 2}  # type: ignore[index]


def test_a_quoted_merge_key_is_an_ordinary_key() -> None:
    doc = one('base: &b {x: 1}\nm:\n  "<<": *b\n')
    assert doc.to_data()["m"] == {"<<": {"x": 1}}  # type: ignore[index]


def test_an_alias_bomb_is_an_error_in_its_file() -> None:
    lines = ['b0: &b0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 10)}]" for i in range(1, 9)]
    e = error("\n".join(lines) + "\n")
    assert e.message == "invalid YAML: excessive aliasing (an alias bomb?)"
    assert e.path == "app/file.yaml" and 1 <= e.line <= 9


def test_aliases_in_moderation_expand() -> None:
    lines = ['b0: &b0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 10)}]" for i in range(1, 3)]
    doc = one("\n".join(lines) + "\n")
    assert len(list(walk(doc))) == 1 + (1 + 10) + (1 + 10 * 11) + (1 + 10 * 111)


# --- duplicate keys ------------------------------------------------------------------------

def test_a_repeated_key_is_an_error_at_the_repetition_naming_the_first_line() -> None:
    e = error("a: 1\nb: 2\na: 3\n")
    assert (e.line, e.col) == (3, 1)
    assert e.message == 'mapping key "a" already defined at line 1'
    assert str(e) == 'app/file.yaml:3:1: mapping key "a" already defined at line 1'


def test_with_duplicate_keys_allowed_the_later_one_wins_and_moves_last() -> None:
    doc = one("a: 1\nb: 2\na: 3\n", duplicate_keys=True)
    assert list(doc.items) == ["b", "a"]
    assert doc.to_data() == {"b": 2, "a": 3}
    assert at(doc.items["a"]) == (3, 1)


def test_a_merged_key_does_not_count_as_a_repetition() -> None:
    assert one("base: &b {a: 1}\nm:\n  <<: *b\n  a: 2\n").to_data()["m"] == {"a": 2}  # type: ignore[index]


# --- depth ----------------------------------------------------------------------------------

def nested(depth: int) -> str:
    return "x: " + "[" * depth + "]" * depth + "\n"


def test_nesting_past_the_limit_is_an_error_at_the_node_that_goes_too_deep(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # past libyaml's 1,000 levels the limit is checked on parser events; a
    # lower limit keeps the pure-Python parse short (test_hostile_input
    # checks the real one). The document's mapping is the first level.
    monkeypatch.setattr(load, "MAX_DEPTH", 1_001)
    # (as krmcheck's entry points do, with room for that much Python recursion)
    e = stack.deep(lambda: error(nested(1_001)))
    assert (e.line, e.col) == (1, len("x: ") + 1_001)
    assert e.message == "invalid YAML: exceeded max depth of 1001"


def test_the_limit_holds_where_libyaml_composes_any_depth(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load, "MAX_DEPTH", 3)
    assert one(nested(2)).to_data() == {"x": [[]]}
    e = error(nested(3))
    assert (e.line, e.col, e.message) == (1, 6, "invalid YAML: exceeded max depth of 3")


def test_nesting_deeper_than_libyaml_allows_but_within_go_yamls_limit_loads() -> None:
    depth = 1_100  # libyaml stops at 1,000, kubectl at 10,000
    doc = stack.deep(lambda: one(nested(depth)))
    node = doc.items["x"]
    levels = 0
    while isinstance(node, Sequence):
        levels += 1
        node = node.items[0] if node.items else None  # type: ignore[assignment]
    assert levels == depth


# --- errors ---------------------------------------------------------------------------------

def test_invalid_yaml_is_an_error_at_the_problem() -> None:
    e = error("a: [1\nb: 2\n")
    assert (e.path, e.line) == ("app/file.yaml", 2)
    assert e.message.startswith("invalid YAML: ")


def test_a_colon_before_a_flow_indicator_stays_in_the_plain_scalar_as_go_yaml_reads_it() -> None:
    # an IPv6 address ending in '::' in a flow sequence: kubectl and kustomize
    # read the string; libyaml refuses the ':' before ']' or ','
    doc = one("spec:\n  addresses: [1.2.3.4, 2001:db8::, fe80::]\n  labels: {zone: a:, 'b': c}\n  n: 2\n")
    assert doc.to_data() == {"spec": {"addresses": ["1.2.3.4", "2001:db8::", "fe80::"],
                                      "labels": {"zone": "a:", "b": "c"}, "n": 2}}
    # the lines are those of the text, and other errors stay where they are
    assert at(lookup(doc, ["spec", "n"])) == (4, 3)
    e = error("a: [x::]\nb: [1\nc: 2\n")
    assert e.line == 3 and e.message.startswith("invalid YAML: ")


def test_indentation_with_no_break_spaces_is_named() -> None:
    # pasted from a web page: U+00A0 reads as text, not indentation
    text = "spec:\n  source:\n    path: app\n\u00a0 \u00a0 kustomize: {}\n  project: default\n"
    e = error(text)
    assert e.message.startswith("invalid YAML: ")
    assert e.message.endswith("(line 4 indents with no-break spaces, U+00A0, which YAML does not read as indentation)")
    assert "no-break" not in error("a: [1\nb: 2\n").message


def test_a_control_character_is_an_error_at_its_position() -> None:
    e = error("a: 1\nb: x\x07\n")
    assert (e.line, e.col) == (2, 5)
    assert e.message == "invalid YAML: unacceptable character #x0007: control characters are not allowed"


def test_a_value_json_cannot_carry_is_an_error_at_its_key() -> None:
    e = error("a: 1\nb: .inf\n")
    assert (e.line, e.col, e.message) == (2, 1, ".inf cannot be represented in JSON")


def test_invalid_base64_in_a_binary_scalar_is_an_error() -> None:
    e = error("a: 1\nb: !!binary '@@@'\n")
    assert (e.line, e.col, e.message) == (2, 1, "invalid YAML: !!binary value contains invalid base64 data")


@pytest.mark.parametrize(("text", "line", "col"), [
    ("a: 1\n? [x]\n: 2\n", 2, 3),
    ("a: 1\n{x: 1}: 2\n", 2, 1),
    ("base: &b {a: 1}\nm:\n  <<: *b\n  ? [x]\n  : 2\n", 4, 5),  # also where merge keys are read
])
def test_a_key_that_is_not_a_scalar_is_an_error_in_its_file(text: str, line: int, col: int) -> None:
    e = error(text)
    assert (e.path, e.line, e.col, e.message) == ("app/file.yaml", line, col, "mapping keys must be scalars")


def test_an_error_is_raised_again_for_the_same_text() -> None:
    # the parse of a text is kept, errors included
    first, second = error("a: [\n"), error("a: [\n")
    assert first is not second
    assert (first.line, first.col, first.message) == (second.line, second.col, second.message)
