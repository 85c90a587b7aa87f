"""CRD schemas the apiextensions API server refuses (:mod:`krmcheck.schemas.structural`):
one small CRD per reason, each refused at the schema node to edit, and CRDs
of the shapes real projects install, which must pass."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from krmcheck.schemas import cel, structural
from krmcheck.tree.load import load_documents
from krmcheck.validators import ValidatorOptions, schema
from krmcheck.validators.base import field_path
from tests.checkrun import check, write

needs_cel = pytest.mark.skipif(not cel.available(), reason="CEL needs cel-expr-python")
SCHEMA_AT = "spec.versions[0].schema.openAPIV3Schema"


def crd(spec_schema: str, root_extra: str = "", version_extra: str = "", api: str = "apiextensions.k8s.io/v1") -> str:
    """A CRD whose ``spec`` has the schema ``spec_schema`` (YAML, indented freely)."""
    body = textwrap.indent(textwrap.dedent(spec_schema).strip("\n"), " " * 14)
    extra = textwrap.indent(textwrap.dedent(root_extra).strip("\n"), " " * 8) + "\n" if root_extra else ""
    return f"""\
apiVersion: {api}
kind: CustomResourceDefinition
metadata: {{name: widgets.example.com}}
spec:
  group: example.com
  names: {{kind: Widget, plural: widgets}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
{version_extra}    schema:
      openAPIV3Schema:
        type: object
{extra}        properties:
          spec:
{body}
"""


def problems(text: str, version: str = "") -> list[tuple[str, str]]:
    """(rule, field path relative to the openAPIV3Schema) of each refusal."""
    [item] = load_documents(text, "crd.yaml")
    return [(p.rule, field_path(p.path).removeprefix(SCHEMA_AT).lstrip(".") or "(root)")
            for p in structural.check(item.to_data(), version)]


def one(text: str, version: str = "") -> tuple[str, str]:
    found = problems(text, version)
    assert len(found) == 1, found
    return found[0]


# --- refused ----------------------------------------------------------------------------

def test_an_unknown_type_is_refused_at_its_type_line() -> None:
    text = crd("""
        type: object
        properties:
          size: {type: strign}
    """)
    assert one(text) == ("crd-type", "properties.spec.properties.size.type")
    [item] = load_documents(text, "crd.yaml")
    [problem] = structural.check(item.to_data())
    assert "'strign'" in problem.message and problem.message.startswith("schema of v1, spec.size: ")


def test_type_null_is_refused() -> None:
    text = crd("type: object\nproperties:\n  a: {type: 'null'}")
    assert one(text) == ("crd-type", "properties.spec.properties.a.type")


def test_an_array_without_items_is_refused() -> None:
    assert one(crd("type: object\nproperties:\n  tags: {type: array}")) == (
        "crd-items", "properties.spec.properties.tags.type")


def test_items_as_a_list_is_refused() -> None:
    assert one(crd("type: object\nproperties:\n  tags:\n    type: array\n    items: [{type: string}]")) == (
        "crd-items", "properties.spec.properties.tags.items")


def test_a_field_without_type_is_refused() -> None:
    assert one(crd("type: object\nproperties:\n  size: {minimum: 1}")) == (
        "crd-type-missing", "properties.spec.properties.size")


def test_items_without_type_are_refused() -> None:
    assert one(crd("type: object\nproperties:\n  tags:\n    type: array\n    items: {maxLength: 3}")) == (
        "crd-type-missing", "properties.spec.properties.tags.items")


def test_the_root_must_be_an_object() -> None:
    text = crd("type: object").replace("      openAPIV3Schema:\n        type: object",
                                       "      openAPIV3Schema:\n        type: string")
    assert one(text) == ("crd-type-missing", "type")


def test_additional_properties_at_the_root_are_refused() -> None:
    assert one(crd("type: object", root_extra="additionalProperties: {type: string}")) == (
        "crd-additional-properties", "additionalProperties")


def test_properties_and_additional_properties_together_are_refused() -> None:
    text = crd("""
        type: object
        properties: {a: {type: string}}
        additionalProperties: {type: string}
    """)
    assert one(text) == ("crd-additional-properties", "properties.spec.additionalProperties")


def test_a_type_inside_any_of_is_refused() -> None:
    text = crd("""
        type: object
        properties:
          port:
            type: string
            anyOf: [{type: string}, {maxLength: 5}]
    """)
    assert one(text) == ("crd-value-validation", "properties.spec.properties.port.anyOf[0].type")


def test_x_kubernetes_validations_inside_all_of_are_refused() -> None:
    text = crd("""
        type: object
        allOf:
        - x-kubernetes-validations: [{rule: "true"}]
    """)
    assert one(text) == ("crd-value-validation", "properties.spec.allOf[0].x-kubernetes-validations")


def test_a_property_only_a_value_validation_names_is_refused() -> None:
    text = crd("type: object").replace("        properties:\n          spec:",
                                       "        anyOf:\n        - properties: {extra: {}}\n"
                                       "        - required: [spec]\n        properties:\n          spec:")
    assert one(text) == ("crd-complete", "anyOf[0].properties.extra")


def test_the_root_metadata_may_only_restrict_name_and_generate_name() -> None:
    text = crd("type: object", root_extra="""
        required: [spec]
    """).replace("        properties:\n          spec:",
                 "        properties:\n          metadata:\n            type: object\n"
                 "            properties:\n              labels: {type: object}\n          spec:")
    assert one(text) == ("crd-metadata", "properties.metadata")


def test_an_embedded_resource_without_type_object_is_refused() -> None:
    text = crd("""
        type: object
        properties:
          template:
            x-kubernetes-embedded-resource: true
            x-kubernetes-preserve-unknown-fields: true
    """)
    assert one(text) == ("crd-embedded", "properties.spec.properties.template")


def test_an_embedded_resource_needs_properties_or_unknown_fields() -> None:
    text = crd("""
        type: object
        properties:
          template: {type: object, x-kubernetes-embedded-resource: true}
    """)
    assert one(text) == ("crd-embedded", "properties.spec.properties.template")


def test_int_or_string_cannot_preserve_unknown_fields() -> None:
    text = crd("""
        type: object
        properties:
          port: {x-kubernetes-int-or-string: true, x-kubernetes-preserve-unknown-fields: true}
    """)
    assert one(text) == ("crd-embedded", "properties.spec.properties.port.x-kubernetes-preserve-unknown-fields")


def test_preserve_unknown_fields_false_is_refused() -> None:
    text = crd("type: object\nx-kubernetes-preserve-unknown-fields: false")
    assert one(text) == ("crd-extension", "properties.spec.x-kubernetes-preserve-unknown-fields")


def test_unique_items_is_refused() -> None:
    text = crd("type: object\nproperties:\n  tags: {type: array, uniqueItems: true, items: {type: string}}")
    assert one(text) == ("crd-unique-items", "properties.spec.properties.tags.uniqueItems")


def test_ref_is_refused() -> None:
    text = crd("type: object\nproperties:\n  a: {$ref: '#/definitions/a'}")
    assert ("crd-keyword", 'properties.spec.properties.a["$ref"]') in problems(text)


def test_a_pattern_go_cannot_compile_is_refused() -> None:
    text = crd("type: object\nproperties:\n  name: {type: string, pattern: '^(?!-)[a-z]+$'}")
    assert one(text) == ("crd-pattern", "properties.spec.properties.name.pattern")


def test_a_list_map_key_neither_required_nor_defaulted_is_refused() -> None:
    text = crd("""
        type: object
        properties:
          ports:
            type: array
            x-kubernetes-list-type: map
            x-kubernetes-list-map-keys: [name]
            items:
              type: object
              properties:
                name: {type: string}
                port: {type: integer}
    """)
    assert one(text) == ("crd-list-map-keys", "properties.spec.properties.ports.items.properties.name")


def test_list_type_map_of_strings_is_refused() -> None:
    text = crd("""
        type: object
        properties:
          names:
            type: array
            x-kubernetes-list-type: map
            x-kubernetes-list-map-keys: [name]
            items: {type: string}
    """)
    assert one(text) == ("crd-list-type", "properties.spec.properties.names.items.type")


def test_a_list_map_key_that_is_no_item_property_is_refused() -> None:
    text = crd("""
        type: object
        properties:
          ports:
            type: array
            x-kubernetes-list-type: map
            x-kubernetes-list-map-keys: [nmae]
            items: {type: object, required: [name], properties: {name: {type: string}}}
    """)
    assert one(text) == ("crd-list-type", "properties.spec.properties.ports.x-kubernetes-list-map-keys")


def test_the_object_items_of_a_set_must_be_atomic() -> None:
    text = crd("""
        type: object
        properties:
          refs:
            type: array
            x-kubernetes-list-type: set
            items: {type: object, properties: {name: {type: string}}}
    """)
    assert one(text) == ("crd-list-type", "properties.spec.properties.refs.items")


def test_a_list_type_on_an_object_is_refused() -> None:
    text = crd("type: object\nx-kubernetes-list-type: atomic")
    assert one(text) == ("crd-list-type", "properties.spec.type")


def test_with_the_status_subresource_the_root_takes_few_keywords() -> None:
    text = crd("type: object", root_extra="anyOf: [{required: [spec]}]",
               version_extra="    subresources: {status: {}}\n")
    assert one(text) == ("crd-root", "anyOf")
    assert problems(text.replace("    subresources: {status: {}}\n", "")) == []


# --- defaults ---------------------------------------------------------------------------

def test_a_default_outside_its_enum_is_refused() -> None:
    text = crd("type: object\nproperties:\n  mode: {type: string, enum: [a, b], default: c}")
    assert one(text) == ("crd-default", "properties.spec.properties.mode.default")


def test_a_default_that_does_not_match_its_pattern_is_refused() -> None:
    text = crd("type: object\nproperties:\n  name: {type: string, pattern: '^[a-z]+$', default: Web}")
    assert one(text) == ("crd-default", "properties.spec.properties.name.default")


def test_a_default_of_the_wrong_type_is_refused() -> None:
    text = crd("type: object\nproperties:\n  replicas: {type: integer, default: '1'}")
    assert one(text) == ("crd-default", "properties.spec.properties.replicas.default")


def test_a_default_with_a_field_pruning_drops_is_refused() -> None:
    text = crd("""
        type: object
        properties:
          resources:
            type: object
            properties:
              cpu: {type: string}
            default: {cpu: 100m, memroy: 1Gi}
    """)
    [item] = load_documents(text, "crd.yaml")
    [problem] = structural.check(item.to_data())
    assert problem.rule == "crd-default"
    assert "memroy" in problem.message and "prune" in problem.message


def test_a_default_missing_a_required_field_is_refused() -> None:
    text = crd("""
        type: object
        properties:
          backoff:
            type: object
            required: [limit]
            properties:
              limit: {type: integer}
              delay: {type: string}
            default: {delay: 1s}
    """)
    assert one(text) == ("crd-default", "properties.spec.properties.backoff.default")


def test_a_default_in_the_root_metadata_is_refused() -> None:
    text = crd("type: object").replace(
        "        properties:\n          spec:",
        "        properties:\n          apiVersion: {type: string, default: example.com/v1}\n          spec:")
    assert one(text) == ("crd-default-forbidden", "properties.apiVersion.default")


@needs_cel
def test_a_default_that_fails_its_cel_rule_is_refused() -> None:
    text = crd("""
        type: object
        properties:
          window:
            type: object
            properties:
              min: {type: integer}
              max: {type: integer}
            x-kubernetes-validations:
            - rule: self.min <= self.max
            default: {min: 5, max: 1}
    """)
    assert one(text) == ("crd-default", "properties.spec.properties.window.default")


# --- CEL rules --------------------------------------------------------------------------

@needs_cel
def test_a_rule_that_does_not_parse_is_refused() -> None:
    text = crd("type: object\nx-kubernetes-validations:\n- rule: self.a == 1 &&")
    assert one(text) == ("crd-cel-syntax", "properties.spec.x-kubernetes-validations[0].rule")


@needs_cel
def test_a_rule_over_an_unbounded_list_of_unbounded_strings_exceeds_the_budget() -> None:
    text = crd("""
        type: object
        properties:
          hosts:
            type: array
            items: {type: string}
            x-kubernetes-validations:
            - rule: self.all(x, x.matches('^[a-z.]+$'))
    """)
    assert one(text) == ("crd-cel-cost", "properties.spec.properties.hosts.x-kubernetes-validations[0].rule")
    [item] = load_documents(text, "crd.yaml")
    [problem] = structural.check(item.to_data())
    assert "exceeds the API server's budget by a factor of more than 100x" in problem.message


@needs_cel
def test_a_cheap_rule_run_once_per_item_of_an_unbounded_list_exceeds_the_budget() -> None:
    # cheap each time, but a rule on the items of a list with no maxItems runs
    # as often as items fit in a request
    text = crd("""
        type: object
        properties:
          hosts:
            type: array
            items:
              type: string
              x-kubernetes-validations:
              - rule: self.matches('^[a-z.]+$')
    """)
    assert one(text) == ("crd-cel-cost", "properties.spec.properties.hosts.items.x-kubernetes-validations[0].rule")


@needs_cel
def test_the_same_rule_with_bounds_is_within_the_budget() -> None:
    text = crd("""
        type: object
        properties:
          hosts:
            type: array
            maxItems: 16
            items: {type: string, maxLength: 253}
            x-kubernetes-validations:
            - rule: self.all(x, x.matches('^[a-z.]+$'))
    """)
    assert problems(text) == []


@needs_cel
def test_many_rules_together_can_exceed_the_budget_of_the_crd() -> None:
    # each rule: 1.9 million items, 5 each: within the budget of a rule, not of 11
    rules = "".join(f"      - rule: self.all(x, x.startsWith('a{i}'))\n" for i in range(11))
    text = crd("type: object\nproperties:\n  names:\n    type: array\n    maxItems: 1900000\n"
               "    items: {type: string, maxLength: 63}\n    x-kubernetes-validations:\n" + rules)
    found = problems(text)
    assert found and all(rule == "crd-cel-cost" for rule, _ in found)
    assert len(found) == 1  # one finding for the total, at the most expensive rule


@needs_cel
def test_a_transition_rule_under_the_items_of_an_atomic_list_is_refused() -> None:
    text = crd("""
        type: object
        properties:
          steps:
            type: array
            maxItems: 10
            items:
              type: object
              properties:
                name: {type: string, maxLength: 10}
              x-kubernetes-validations:
              - rule: self.name == oldSelf.name
    """)
    assert one(text) == ("crd-cel-old-self", "properties.spec.properties.steps.items.x-kubernetes-validations[0].rule")
    as_map = crd("""
        type: object
        properties:
          steps:
            type: array
            maxItems: 10
            x-kubernetes-list-type: map
            x-kubernetes-list-map-keys: [name]
            items:
              type: object
              required: [name]
              properties:
                name: {type: string, maxLength: 10}
              x-kubernetes-validations:
              - rule: self.name == oldSelf.name
    """)
    assert problems(as_map) == []


@needs_cel
def test_optional_old_self_without_old_self_is_refused() -> None:
    text = crd("type: object\nx-kubernetes-validations:\n- {rule: 'true', optionalOldSelf: true}")
    assert one(text) == ("crd-cel-old-self", "properties.spec.x-kubernetes-validations[0].optionalOldSelf")


@needs_cel
def test_a_regex_literal_go_cannot_compile_is_refused_from_1_29() -> None:
    text = crd("""
        type: object
        properties:
          name:
            type: string
            maxLength: 10
            x-kubernetes-validations:
            - rule: self.matches('^(?=a)')
    """)
    assert one(text, "1.29") == ("crd-cel-regex", "properties.spec.properties.name.x-kubernetes-validations[0].rule")
    assert problems(text, "1.28") == []


def test_a_rule_of_several_lines_needs_a_message() -> None:
    text = crd("type: object\nx-kubernetes-validations:\n- rule: |-\n    true &&\n    true")
    assert ("crd-cel-rule", "properties.spec.x-kubernetes-validations[0].rule") in problems(text)


def test_a_field_path_must_name_a_field() -> None:
    text = crd("""
        type: object
        properties:
          a: {type: string}
        x-kubernetes-validations:
        - {rule: 'true', fieldPath: .b}
        - {rule: 'true', fieldPath: .a}
    """)
    assert problems(text) == [("crd-cel-rule", "properties.spec.x-kubernetes-validations[0].fieldPath")]


# --- accepted ---------------------------------------------------------------------------

VALID = """
    type: object
    required: [replicas]
    properties:
      replicas: {type: integer, default: 1, minimum: 0}
      port:
        x-kubernetes-int-or-string: true
        anyOf: [{type: integer}, {type: string}]
        default: http
      maxSurge:
        x-kubernetes-int-or-string: true
        allOf:
        - anyOf: [{type: integer}, {type: string}]
        - pattern: '^[0-9]+%?$'
      config:
        x-kubernetes-preserve-unknown-fields: true
      values:
        type: object
        x-kubernetes-preserve-unknown-fields: true
        default: {anything: [1, 2]}
      labels:
        type: object
        additionalProperties: {type: string}
        default: {team: core}
      template:
        type: object
        x-kubernetes-embedded-resource: true
        x-kubernetes-preserve-unknown-fields: true
      job:
        type: object
        x-kubernetes-embedded-resource: true
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
      ports:
        type: array
        maxItems: 8
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name, protocol]
        items:
          type: object
          required: [name]
          properties:
            name: {type: string, maxLength: 15}
            protocol: {type: string, default: TCP, enum: [TCP, UDP]}
          x-kubernetes-validations:
          - rule: self.name.startsWith('p')
            message: port names start with p
      hosts:
        type: array
        maxItems: 16
        x-kubernetes-list-type: set
        items: {type: string, maxLength: 253, pattern: '^[a-z0-9.-]+$'}
        x-kubernetes-validations:
        - rule: self.all(h, h.matches('^[a-z0-9.-]+$') && size(h) <= 253)
        - rule: oldSelf.all(h, h in self)
          message: hosts cannot be removed
      mode:
        type: string
        enum: [Auto, Manual]
        default: Auto
        x-kubernetes-validations:
        - rule: self == oldSelf || oldSelf == 'Manual'
          messageExpression: "'cannot change mode from ' + oldSelf"
      when: {type: string, format: date-time}
      oneOfThem:
        type: object
        properties:
          a: {type: string}
          b: {type: string}
        oneOf: [{required: [a]}, {required: [b]}]
"""


def test_real_world_shapes_pass() -> None:
    assert problems(crd(VALID)) == []


def test_metadata_restricting_name_passes() -> None:
    text = crd("type: object").replace(
        "        properties:\n          spec:",
        "        properties:\n          metadata:\n            type: object\n            properties:\n"
        "              name: {type: string, maxLength: 63}\n          spec:")
    assert problems(text) == []


def test_properties_under_a_string_are_accepted_as_the_api_server_accepts_them() -> None:
    # nothing in apiextensions-apiserver refuses it; pruning ignores them
    assert problems(crd("type: object\nproperties:\n  name: {type: string, properties: {a: {type: string}}}")) == []


def test_other_documents_and_v1beta1_crds_are_not_judged() -> None:
    assert structural.check({"apiVersion": "v1", "kind": "ConfigMap"}) == []
    assert problems(crd("type: object\nproperties:\n  a: {type: strign}", api="apiextensions.k8s.io/v1beta1")) == []


# --- through the schema validator and the CLI -------------------------------------------

def test_the_schema_validator_reports_a_refused_crd() -> None:
    items = load_documents(crd("type: object\nproperties:\n  a: {type: strign}"), "crd.yaml")
    results = schema.validate(items, ValidatorOptions())
    [result] = [r for r in results if ("rule", "crd-type") in r.tags]
    assert result.severity == "error"
    assert result.field_path == f"{SCHEMA_AT}.properties.spec.properties.a.type"


def test_a_non_structural_crd_as_a_schema_source_does_not_crash() -> None:
    broken = crd("""
        type: [object]
        properties: [a, b]
        required: spec
        items: [{type: string}]
        x-kubernetes-validations: 3
        x-kubernetes-list-map-keys: {a: 1}
        default: {a: 1}
    """, root_extra="additionalProperties: 1")
    widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {a: 1, b: [x]}\n"
    items = load_documents(broken + "---\n" + widget, "crds.yaml")
    results = schema.validate(items, ValidatorOptions())
    assert any(r.resource_ref is not None and r.resource_ref.kind == "CustomResourceDefinition" for r in results)


def test_the_cli_reports_the_refusal_at_the_line_of_the_bad_node(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: [crd.yaml]\n")
    text = crd("""
        type: object
        properties:
          size: {type: integer}
          mode:
            type: strign
    """)
    write(tmp_path, "app/crd.yaml", text)
    run = check(tmp_path, "app")
    assert run.code == 1
    [(line, at)] = [(n, row.index("type") + 1) for n, row in enumerate(text.splitlines(), 1) if "strign" in row]
    assert run.located("error") == [("app/crd.yaml", line, "schema")]
    [defect] = run.report["defects"]
    assert defect["col"] == at
    assert "'strign'" in defect["message"]
