"""TransformerConfig: the default tables, merging, configurations files, crds."""

from __future__ import annotations

import pytest

from krmcheck.kustomize import fieldspec
from krmcheck.kustomize.fieldspec import FieldSpec
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import Gvk
from krmcheck.kustomize.transformerconfig import (
    EMPTY, TransformerConfig, crd_config, default_config, parse_config)
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping


def spec(path: str, kind: str = "", create: bool = False, version: str = "") -> FieldSpec:
    return FieldSpec(fieldspec.split_path(path), "", version, kind, create)


def config_of(text: str) -> TransformerConfig:
    doc = load_documents(text, "config.yaml", "configurations")[0]
    assert isinstance(doc, Mapping)
    return parse_config(doc)


def test_default_config_is_built_once_and_holds_every_table() -> None:
    d = default_config()
    assert d is default_config()
    assert set(d.common_labels) == set(fieldspec.defaults("commonLabels"))
    assert set(d.var_reference) == set(fieldspec.defaults("varReference"))
    assert d.name_prefix == d.name_suffix == (spec("metadata/name"),)
    assert d.labels == ()
    assert d.name_reference


def test_merging_into_empty_and_with_itself_shares_the_value() -> None:
    d = default_config()
    assert EMPTY.merge(d) is d
    assert d.merge(d) is d
    assert d.merge(EMPTY) is d


def test_merge_adds_new_specs_and_keeps_known_ones_once() -> None:
    extra = config_of("commonLabels:\n- path: spec/selector/labels\n  kind: Thing\n  create: true\n"
                      "- path: metadata/labels\n  create: true\n")
    merged = default_config().merge(extra)
    assert spec("spec/selector/labels", "Thing", True) in merged.common_labels
    assert len(merged.common_labels) == len(default_config().common_labels) + 1


def test_conflicting_create_is_an_error() -> None:
    extra = config_of("commonLabels:\n- path: metadata/labels\n  create: false\n")
    with pytest.raises(BuildError, match="conflicting fieldspecs"):
        default_config().merge(extra)


def test_a_kind_specific_spec_sorted_first_hides_the_general_one() -> None:
    # The accumulator re-merges the sorted table into an empty one.
    extra = config_of("namePrefix:\n- path: metadata/name\n  kind: Foo\n")
    merged = EMPTY.merge(default_config().merge(extra))
    assert merged.name_prefix == (spec("metadata/name", "Foo"),)
    by_version = EMPTY.merge(default_config().merge(
        config_of("namePrefix:\n- path: metadata/name\n  version: v1\n")))
    assert by_version.name_prefix == (spec("metadata/name", version="v1"),)


def test_name_references_from_configurations_join_the_kind_entry() -> None:
    extra = config_of("nameReference:\n- kind: Secret\n  version: v1\n  fieldSpecs:\n"
                      "  - path: spec/secretName\n    kind: Thing\n")
    merged = default_config().merge(extra)
    secret = next(b for b in merged.name_reference if b.gvk == Gvk("", "v1", "Secret"))
    assert spec("spec/secretName", "Thing") in secret.referrers
    assert len(merged.name_reference) == len(default_config().name_reference)


def test_unknown_keys_are_errors_at_their_line() -> None:
    with pytest.raises(BuildError) as e:
        config_of("images:\n- path: spec/image\n  kindd: Thing\n")
    assert "kindd" in str(e.value)
    assert e.value.location is not None and (e.value.location.line, e.value.location.col) == (3, 3)


def test_crd_definitions_give_references_labels_annotations_and_identity() -> None:
    api = {
        "a.b/v1.Thing": {"Schema": {"properties": {
            "apiVersion": {}, "kind": {}, "metadata": {},
            "spec": {"$ref": "a.b/v1.ThingSpec"}}}},
        "a.b/v1.ThingSpec": {"Schema": {"properties": {
            "beeRef": {"x-kubernetes-object-ref-api-version": "v1beta1",
                       "x-kubernetes-object-ref-kind": "Bee",
                       "x-kubernetes-object-ref-name-key": "beeName"},
            "selector": {"x-kubernetes-label-selector": ""},
            "notes": {"x-kubernetes-annotation": ""},
            "id": {"x-kubernetes-identity": ""},
            "loop": {"$ref": "a.b/v1.ThingSpec"}}}},
        "a.b/v1.NotAnObject": {"Schema": {"properties": {"kind": {}}}},
    }
    tc = crd_config(api)
    assert tc.common_labels == (spec("spec/selector", "Thing"),)
    assert tc.common_annotations == (spec("spec/notes", "Thing"),)
    assert tc.name_prefix == (spec("spec/id", "Thing"),)
    (bee,) = tc.name_reference
    assert bee.gvk == Gvk("", "v1beta1", "Bee")
    assert bee.referrers == (spec("spec/beeRef/beeName", "Thing"),)
