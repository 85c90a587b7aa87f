from __future__ import annotations

import pytest

from krmcheck.tree.fieldpath import (Step, dotted, format, from_parts, index, is_kyaml_index, is_kyaml_selector, key,
                                      kyaml_selector, match, parse, split_kyaml, trace, walk)
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping

IMAGE = (key("spec"), key("template"), key("spec"), key("containers"), index(0), key("image"))
ANNOTATION = (key("metadata"), key("annotations"), key("config.kubernetes.io/path"))


@pytest.mark.parametrize("path", [
    "spec.template.spec.containers[0].image",
    "spec.template.spec.containers.0.image",
    "spec.template.spec.containers.[0].image",
    "/spec/template/spec/containers/0/image",
    "/spec/template/spec/containers/0/image/",  # kyverno
    "#/spec/template/spec/containers/0/image",
    "$.spec.template.spec.containers[0].image",
    ".spec.template.spec.containers[0].image",
    "$['spec']['template'].spec.containers[0].image",
])
def test_index_spellings(path: str) -> None:
    assert parse(path) == IMAGE


@pytest.mark.parametrize("path", [
    'metadata.annotations["config.kubernetes.io/path"]',
    "metadata.annotations['config.kubernetes.io/path']",
    "metadata.annotations[config.kubernetes.io/path]",
    "metadata.annotations.[config.kubernetes.io/path]",
    r"metadata.annotations.config\.kubernetes\.io/path",
    "/metadata/annotations/config.kubernetes.io~1path",
])
def test_dotted_key_spellings(path: str) -> None:
    assert parse(path) == ANNOTATION


@pytest.mark.parametrize("path", [
    "spec.containers[name=web].image",
    "spec.containers.[name=web].image",
    'spec.containers[name="web"].image',
    "spec.containers[?(@.name=='web')].image",
])
def test_selector_spellings(path: str) -> None:
    assert parse(path) == (key("spec"), key("containers"), match("name", "web"), key("image"))


def test_pointer_escapes() -> None:
    assert parse("/a~0b/c~1d/~01") == (key("a~b"), key("c/d"), key("~1"))


def test_scalar_item_selector_and_negative_index() -> None:
    assert parse("spec.finalizers.[=kubernetes]") == (key("spec"), key("finalizers"), match("", "kubernetes"))
    assert parse("a[-1]") == (key("a"), index(-1))


def test_quoted_digits_stay_a_key() -> None:
    assert parse('data["0"]') == (key("data"), key("0"))
    assert parse(r"data.\0") == (key("data"), key("0"))


def test_empty_paths_are_the_resource() -> None:
    assert parse("") == ()
    assert parse("$") == ()
    assert parse("/") == ()


@pytest.mark.parametrize("path, problem", [
    ("a..b", "empty key"),
    ("a.", "empty key"),
    ("a[0", "expected ']'"),
    ("a[]", "empty brackets"),
    ("a[0]b", "expected '.' or '['"),
    ("a]b", "unexpected ']'"),
    ('a["b]', "unterminated quote"),
    ("a[*]", "wildcard"),
    ("/a/~2", "'~' must be followed by 0 or 1"),
    ("a\\", "dangling"),
])
def test_invalid_paths(path: str, problem: str) -> None:
    with pytest.raises(ValueError, match="invalid field path") as e:
        parse(path)
    assert problem in str(e.value)


def test_error_names_position() -> None:
    with pytest.raises(ValueError, match=r"'a\.\.b': empty key at character 3"):
        parse("a..b")


@pytest.mark.parametrize("steps, text", [
    (IMAGE, "spec.template.spec.containers[0].image"),
    (ANNOTATION, 'metadata.annotations["config.kubernetes.io/path"]'),
    ((key("spec"), key("containers"), match("name", "web"), key("image")), "spec.containers[name=web].image"),
    ((key("data"), key("0")), 'data["0"]'),
    ((key("/etc"),), '["/etc"]'),
    ((key("a"), match("name", "x]y")), 'a[name="x]y"]'),
    ((key("a"), match("", "v")), "a[=v]"),
    ((key("a"), key("é\n")), 'a["é\\n"]'),
    ((key("a"), key("é")), "a.é"),
    ((key("a"), key(" b")), 'a[" b"]'),
    ((key("a"), key("x y")), 'a["x y"]'),
    ((key("a"), key("-x")), 'a["-x"]'),
    ((key("a"), key("x/y")), 'a["x/y"]'),
    ((key("a"), key("_x-1")), "a._x-1"),
])
def test_format_is_canonical_and_round_trips(steps: tuple[Step, ...], text: str) -> None:
    assert format(steps) == text
    assert parse(text) == steps


def test_format_of_any_spelling() -> None:
    assert format(parse("/spec/containers/1/ports/0/containerPort")) == "spec.containers[1].ports[0].containerPort"
    assert str(match("name", "web")) == "[name=web]"


DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  annotations:
    config.kubernetes.io/path: x.yaml
spec:
  template:
    spec:
      containers:
      - name: sidecar
        image: envoy
      - name: web
        image: nginx:1.25
        ports:
        - containerPort: 80
      finalizers: [a, b]
  selector:
    "8080": http
"""


def tree() -> Mapping:
    (doc,) = load_documents(DEPLOY, "base/deploy.yaml")
    assert isinstance(doc, Mapping)
    return doc


def test_walk_to_a_scalar() -> None:
    node, used = walk(tree(), parse("spec.template.spec.containers[1].image"))
    assert used == 6
    assert node.to_data() == "nginx:1.25"
    assert node.origin.location == ("base/deploy.yaml", 14, 9)


def test_walk_by_selector_gives_the_item() -> None:
    node, used = walk(tree(), parse("spec.template.spec.containers[name=web]"))
    assert used == 5
    assert node.origin.location == ("base/deploy.yaml", 13, 9)
    node, _ = walk(tree(), parse("spec.template.spec.containers[name=web].ports[containerPort=80]"))
    assert node.origin.location == ("base/deploy.yaml", 16, 11)


def test_walk_scalar_selector_and_negative_index() -> None:
    node, used = walk(tree(), parse("spec.template.spec.finalizers[=b]"))
    assert (node.to_data(), used) == ("b", 5)
    node, _ = walk(tree(), parse("spec.template.spec.containers[-1].name"))
    assert node.to_data() == "web"


def test_numeric_step_on_a_mapping_is_a_key() -> None:
    node, used = walk(tree(), parse("spec.selector.8080"))
    assert used == 3
    assert node.to_data() == "http"


def test_walk_stops_at_the_deepest_existing_node() -> None:
    node, used = walk(tree(), parse("spec.template.spec.securityContext.runAsNonRoot"))
    assert used == 3
    assert node.origin.location == ("base/deploy.yaml", 9, 5)
    _, used = walk(tree(), parse("spec.template.spec.containers[name=db].image"))
    assert used == 4
    _, used = walk(tree(), parse("spec.template.spec.containers[7]"))
    assert used == 4
    # stepping into a scalar goes nowhere
    _, used = walk(tree(), parse("kind.x"))
    assert used == 1


def test_trace_lists_the_path() -> None:
    chain = trace(tree(), parse("metadata.name"))
    assert [n.origin.line for n in chain] == [1, 3, 4]


# --- kyaml's split paths (replacements, vars) ---------------------------------------

@pytest.mark.parametrize("path, parts", [
    ("a.b.c", ["a", "b", "c"]),
    ("a.[name=x.y].c", ["a", "[name=x.y]", "c"]),
    (r"metadata.annotations.a\.b/c", ["metadata", "annotations", "a.b/c"]),
    ("a.[b.c]", ["a", "b.c"]),
    (".a.b", ["a", "b"]),
    ("spec.containers.*.image", ["spec", "containers", "*", "image"]),
    ("spec.ports.-", ["spec", "ports", "-"]),
])
def test_split_kyaml(path: str, parts: list[str]) -> None:
    assert split_kyaml(path) == parts


def test_kyaml_parts() -> None:
    assert is_kyaml_index("12") and not is_kyaml_index("-1") and not is_kyaml_index("a1")
    assert is_kyaml_selector("[name=web]") and not is_kyaml_selector("name")
    assert kyaml_selector("[name=a=b]") == ("name", "a=b")
    assert kyaml_selector("[=x]") == ("", "x")
    with pytest.raises(ValueError, match="must contain fieldName=fieldValue"):
        kyaml_selector("[name]")


# --- plain parts (jsonschema paths, validators' tuples) ------------------------------

def test_from_parts_and_dotted() -> None:
    parts = ["spec", "containers", 0, "image"]
    assert from_parts(parts) == (key("spec"), key("containers"), index(0), key("image"))
    assert dotted(parts) == "spec.containers[0].image"
    assert dotted(["metadata", "labels", "app.kubernetes.io/name"]) == 'metadata.labels["app.kubernetes.io/name"]'
    assert dotted(["data", "80"]) == 'data["80"]'
    assert dotted([0, "a"]) == "[0].a"
    assert dotted([]) == ""


@pytest.mark.parametrize("parts", [
    ["a", "b c", 3, "x.y", "-z", "0", "é", 'q"uote', "a]b"],
    ["/etc", "#x", "$y", "~"],
])
def test_dotted_reads_back_as_the_same_steps(parts: list[str | int]) -> None:
    assert parse(dotted(parts)) == from_parts(parts)
