"""The wire formats: the ResourceList a KRM function reads, and a
function's or exec plugin's output parsed back."""

from __future__ import annotations

import pytest

from krmcheck.fn import resource_list
from krmcheck.resource import build_state
from krmcheck.resource.errors import BuildError
from tests.fn.runtime_items import resource


def test_resource_list_text() -> None:
    config = resource("apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\nspec:\n  x: 1\n", "fn.yaml")
    item = resource("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: \"1\"\n")
    text = resource_list.resource_list([build_state.stamped(item)], config.node)
    assert text == """\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  data:
    k: "1"
  kind: ConfigMap
  metadata:
    annotations:
      kustomize.config.k8s.io/id: |
        kind: ConfigMap
        name: c
        version: v1
      config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/annotations-migration-resource-id: '0'
      internal.config.kubernetes.io/id: '1'
      config.k8s.io/id: '1'
    name: c
functionConfig:
  apiVersion: example.com/v1
  kind: Fn
  metadata:
    name: fn
    annotations:
      config.kubernetes.io/local-config: 'true'
  spec:
    x: 1
"""


def test_generator_resource_list_has_empty_items_marker() -> None:
    config = resource("apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n", "fn.yaml")
    assert "items: []\n" in resource_list.resource_list([], config.node)


def test_parse_answer_resource_list_and_stream() -> None:
    answer = resource_list.parse_answer(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
        "results:\n- message: too few\n  severity: warning\n"
        "  resourceRef: {apiVersion: v1, kind: ConfigMap, name: a}\n"
        "  field: {path: data.x}\n  tags: {rule: r1}\n", "fn")
    assert [i.value("kind") for i in answer.items] == ["ConfigMap"]
    result = resource_list.result_of(answer.results[0])
    assert (result.message, result.severity, str(result.resource_ref), result.field_path,
            result.tags) == ("too few", "warning", "ConfigMap/a", "data.x", (("rule", "r1"),))
    plain = resource_list.parse_answer("kind: A\n---\nkind: B\n", "fn")
    assert [i.value("kind") for i in plain.items] == ["A", "B"]
    assert resource_list.parse_answer("", "fn").items == []


def test_malformed_output_is_a_build_error() -> None:
    with pytest.raises(BuildError, match="MalformedYAMLError"):
        resource_list.parse_stream("a: [1, 2\n", "plugin x")
