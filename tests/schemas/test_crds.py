"""A CRD's structural schema as the JSON schema krmcheck checks custom
resources with: the Kubernetes extensions read as the apiextensions API
server reads them, and every object the server prunes closed, so that
what it rejects is an unknown field."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
import yaml

from krmcheck.schemas import builtin, crds, sources

META = sources.object_meta(builtin.versions()[-1])


def problems(schema: dict[str, Any], data: dict[str, Any], crd: bool = True,
             prunes: bool = True) -> list[tuple[str, str]]:
    """(dotted path, jsonschema keyword) of each error; unknown keys by name."""
    document = crds.to_json_schema(schema, META, crd=crd, prunes=prunes)
    found = []
    for error in jsonschema.Draft4Validator(document).iter_errors(data):
        path = ".".join(str(p) for p in error.absolute_path)
        if error.validator == "additionalProperties":
            known = error.schema.get("properties", {})
            found += [(f"{path}.{k}".lstrip("."), "unknown") for k in error.instance if k not in known]
        else:
            found.append((path, str(error.validator)))
    return sorted(found)


def obj(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}


def spec_of(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": properties}}}


# --- x-kubernetes-int-or-string -----------------------------------------------------------

def test_int_or_string_is_typed_whatever_any_of_it_has() -> None:
    # the server sets type [integer, string]; an anyOf without types does not loosen it
    port = {"x-kubernetes-int-or-string": True, "anyOf": [{"minimum": 1}, {"pattern": "^[a-z]+$"}]}
    schema = spec_of(port=port)
    assert problems(schema, obj(port=8080)) == []
    assert problems(schema, obj(port="http")) == []
    assert problems(schema, obj(port=True)) == [("spec.port", "type")]
    assert problems(schema, obj(port=[1])) == [("spec.port", "type")]
    assert problems(schema, obj(port=1.5)) == [("spec.port", "type")]


def test_nullable_int_or_string_takes_null() -> None:
    schema = spec_of(port={"x-kubernetes-int-or-string": True, "nullable": True})
    assert problems(schema, obj(port=None)) == []


# --- x-kubernetes-embedded-resource -------------------------------------------------------

EMBEDDED = spec_of(template={"type": "object", "x-kubernetes-embedded-resource": True,
                             "x-kubernetes-preserve-unknown-fields": True, "required": ["spec"]})


def test_an_embedded_resource_needs_api_version_and_kind_beside_its_own_required() -> None:
    assert problems(EMBEDDED, obj(template={"spec": {}})) == [("spec.template", "required")] * 2


def test_an_embedded_resource_has_a_valid_api_version_and_kind() -> None:
    good = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {}}
    assert problems(EMBEDDED, obj(template=good)) == []
    assert problems(EMBEDDED, obj(template={**good, "apiVersion": "", "kind": ""})) == [
        ("spec.template.apiVersion", "minLength"), ("spec.template.kind", "minLength"),
        ("spec.template.kind", "pattern")]
    assert problems(EMBEDDED, obj(template={**good, "apiVersion": "a/b/v1", "kind": "my_kind"})) == [
        ("spec.template.apiVersion", "pattern"), ("spec.template.kind", "pattern")]
    assert problems(EMBEDDED, obj(template={**good, "apiVersion": 1})) == [("spec.template.apiVersion", "type")]


def test_an_embedded_resource_metadata_is_an_object_meta() -> None:
    template = {"apiVersion": "v1", "kind": "Pod", "spec": {},
                "metadata": {"name": "p", "labels": {"a": 1}, "lables": {}}}
    assert problems(EMBEDDED, obj(template=template)) == [
        ("spec.template.metadata.labels.a", "type"), ("spec.template.metadata.lables", "unknown")]


def test_an_embedded_resource_is_closed_but_for_its_resource_fields() -> None:
    schema = spec_of(template={"type": "object", "x-kubernetes-embedded-resource": True,
                               "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                              "metadata": {"type": "object", "properties": {"name": {"type": "string"}}}}})
    template = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
                "spec": {"anything": 1}, "status": {}}
    assert problems(schema, obj(template=template)) == [("spec.template.status", "unknown")]


# --- the root ----------------------------------------------------------------------------

def test_the_root_metadata_is_an_object_meta_and_the_crds_restrictions() -> None:
    schema = {"type": "object", "properties": {"metadata": {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 5}}}}}
    data = {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "toolong", "namespace": "a", "annotation": {},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c"}]}}
    assert problems(schema, data) == [("metadata.annotation", "unknown"), ("metadata.name", "maxLength"),
                                      ("metadata.ownerReferences.0", "required")]


def test_the_root_knows_api_version_kind_and_metadata_even_if_the_crd_does_not() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object"}}}
    assert problems(schema, obj()) == []
    assert problems(schema, {**obj(), "status": {}}) == [("status", "unknown")]


# --- unknown fields: which objects are closed ----------------------------------------------

def test_objects_with_properties_are_closed() -> None:
    schema = spec_of(size={"type": "integer"})
    assert problems(schema, obj(size=1, colour="blue")) == [("spec.colour", "unknown")]


def test_a_bare_object_is_closed_in_a_crd_and_open_in_a_catalog() -> None:
    schema = spec_of(config={"type": "object"})
    assert problems(schema, obj(config={"a": 1})) == [("spec.config.a", "unknown")]
    assert problems(schema, obj(config={"a": 1}), crd=False) == []


def test_preserve_unknown_fields_keeps_unknown_fields_but_not_inside_known_properties() -> None:
    schema = spec_of(values={"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                             "properties": {"image": {"type": "object", "properties": {"tag": {"type": "string"}}}}})
    assert problems(schema, obj(values={"any": {"thing": 1}, "image": {"tag": "1", "tga": "2"}})) == [
        ("spec.values.image.tga", "unknown")]


def test_the_items_of_a_preserving_list_keep_unknown_fields_too() -> None:
    # pruning's skipPrune: the items schema is not read for unknown fields, its properties are
    schema = spec_of(steps={"type": "array", "x-kubernetes-preserve-unknown-fields": True, "items": {
        "type": "object", "properties": {"run": {"type": "object", "properties": {"cmd": {"type": "string"}}}}}})
    assert problems(schema, obj(steps=[{"extra": 1, "run": {"cmd": "x", "args": []}}])) == [
        ("spec.steps.0.run.args", "unknown")]


def test_maps_and_junctors_are_not_closed() -> None:
    schema = spec_of(labels={"type": "object", "additionalProperties": {"type": "string"}},
                     either={"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                             "oneOf": [{"required": ["a"]}, {"required": ["b"], "properties": {"b": {"minLength": 1}}}]})
    assert problems(schema, obj(labels={"x": "y"}, either={"b": "z"})) == []


def test_a_catalogs_additional_properties_false_is_not_trusted() -> None:
    # the catalog's converter closes every object with properties, preserving ones included
    schema = spec_of(values={"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                             "additionalProperties": False, "properties": {"a": {"type": "string"}}})
    assert problems(schema, obj(values={"a": "x", "b": 1}), crd=False) == []


def test_a_crd_that_keeps_unknown_fields_closes_nothing() -> None:
    schema = spec_of(size={"type": "integer"})
    assert problems(schema, obj(size=1, colour="blue"), prunes=False) == []


@pytest.mark.parametrize(("api_version", "setting", "prunes"), [
    ("apiextensions.k8s.io/v1", None, True),
    ("apiextensions.k8s.io/v1beta1", None, False),
    ("apiextensions.k8s.io/v1beta1", False, True),
    ("apiextensions.k8s.io/v1beta1", True, False),
])
def test_the_crds_preserve_unknown_fields(api_version: str, setting: bool | None, prunes: bool) -> None:
    doc = yaml.safe_load(f"""
apiVersion: {api_version}
kind: CustomResourceDefinition
spec:
  group: example.com
  names: {{kind: Widget}}
  version: v1
  validation: {{openAPIV3Schema: {{type: object}}}}
""")
    if setting is not None:
        doc["spec"]["preserveUnknownFields"] = setting
    [served] = crds.served(doc)
    assert served.prunes is prunes


def test_the_converted_schema_has_no_defaults() -> None:
    # fastjsonschema would fill them into the data it checks
    schema = spec_of(mode={"type": "string", "default": "managed"})
    assert "default" not in str(crds.to_json_schema(schema, META))
