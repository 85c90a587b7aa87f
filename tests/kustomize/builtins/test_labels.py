"""commonLabels, labels and commonAnnotations: pairs added to metadata and,
per the field-spec tables, to selectors and templates; each value written by
its own line of the kustomization."""

from __future__ import annotations

import pytest

from krmcheck.kustomize.builtins import labels
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping
from tests.kustomize.builtins.inline import KUSTOMIZATION, RESOURCES, at, entry, kustomization, node, rendered, \
    resources

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
"""


def field(k: str, name: str) -> Mapping:
    found = kustomization(k).mapping(name)
    assert found is not None
    return found


def with_labels_entry(text: str, k: str) -> list[Resource]:
    res = resources(text)
    labels.labels_entry(res, entry(kustomization(k), "labels"))
    return res


# --- pairs ---------------------------------------------------------------------------------

def test_pairs_are_kustomize_strings_with_their_lines() -> None:
    found = labels.pairs(field("commonLabels:\n  team: web\n  canary: True\n  code: 010\n  empty:\n",
                               "commonLabels"))
    assert [(k, v, o.line) for k, v, o in found] == [("team", "web", 2), ("canary", "True", 3),
                                                     ("code", "010", 4), ("empty", "", 5)]


# --- commonLabels ------------------------------------------------------------------------------

def test_common_labels_reach_metadata_selectors_and_templates() -> None:
    res = resources(DEPLOYMENT + "---\n" + SERVICE)
    labels.common_labels(res, field("commonLabels:\n  team: shop\n", "commonLabels"))
    deployment, service = res
    for path in (("metadata", "labels"), ("spec", "selector", "matchLabels"),
                 ("spec", "template", "metadata", "labels")):
        assert node(deployment, *path).to_data() == {"app": "web", "team": "shop"}, path
    assert node(service, "spec", "selector").to_data() == {"app": "web", "team": "shop"}
    assert node(service, "metadata", "labels").to_data() == {"team": "shop"}


def test_a_new_label_is_written_by_its_pair_and_a_new_map_by_the_field() -> None:
    res = resources(SERVICE)
    labels.common_labels(res, field("namePrefix: a-\ncommonLabels:\n  team: shop\n", "commonLabels"))
    assert at(node(res[0], "metadata", "labels", "team")) == (KUSTOMIZATION, 3, 3, "kustomization")
    assert at(node(res[0], "metadata", "labels"))[:3] == (KUSTOMIZATION, 2, 1)


def test_an_existing_label_is_rewritten_and_keeps_its_base_line_in_the_trail() -> None:
    res = resources(DEPLOYMENT)
    labels.common_labels(res, field("commonLabels:\n  app: shop\n", "commonLabels"))
    label = node(res[0], "metadata", "labels", "app")
    assert label.to_data() == "shop"
    assert at(label)[:2] == (KUSTOMIZATION, 2)
    assert [(o.path, o.line) for o in label.trail] == [(RESOURCES, 6)]


def test_an_equal_quoted_label_keeps_its_writer() -> None:
    res = resources(SERVICE.replace("app: web", 'app: "web"'))
    labels.common_labels(res, field("commonLabels:\n  app: web\n", "commonLabels"))
    assert at(node(res[0], "spec", "selector", "app"))[:2] == (RESOURCES, 7)


def test_an_equal_plain_label_is_written_again_by_the_pair() -> None:
    # a plain scalar is re-set to kustomize's string (``True`` stays ``"True"``)
    res = resources(SERVICE)
    labels.common_labels(res, field("commonLabels:\n  app: web\n", "commonLabels"))
    selected = node(res[0], "spec", "selector", "app")
    assert at(selected)[:2] == (KUSTOMIZATION, 2) and selected.trail[0].line == 7


def test_a_plain_label_of_another_type_becomes_the_string() -> None:
    res = resources(SERVICE.replace("app: web", "app: 1"))
    labels.common_labels(res, field('commonLabels:\n  app: "1"\n', "commonLabels"))
    assert "    app: \"1\"\n" in rendered(res)


def test_a_scalar_where_the_map_should_be_is_left_alone() -> None:
    res = resources(SERVICE.replace("  selector:\n    app: web\n", "  selector: none\n"))
    labels.common_labels(res, field("commonLabels:\n  team: shop\n", "commonLabels"))
    assert node(res[0], "spec", "selector").to_data() == "none"


def test_no_pairs_add_no_map() -> None:
    res = resources(SERVICE)
    labels.common_labels(res, field("commonLabels: {}\n", "commonLabels"))
    assert "labels" not in node(res[0], "metadata").to_data()  # type: ignore[operator]


# --- commonAnnotations -------------------------------------------------------------------------

def test_common_annotations_reach_metadata_and_templates_not_selectors() -> None:
    res = resources(DEPLOYMENT)
    labels.common_annotations(res, field("commonAnnotations:\n  owner: shop\n", "commonAnnotations"))
    assert node(res[0], "metadata", "annotations").to_data() == {"owner": "shop"}
    assert node(res[0], "spec", "template", "metadata", "annotations").to_data() == {"owner": "shop"}
    assert node(res[0], "spec", "selector", "matchLabels").to_data() == {"app": "web"}


# --- labels entries ------------------------------------------------------------------------------

def test_a_labels_entry_by_default_sets_metadata_labels_only() -> None:
    res = with_labels_entry(DEPLOYMENT, "labels:\n- pairs:\n    team: shop\n")
    assert node(res[0], "metadata", "labels").to_data() == {"app": "web", "team": "shop"}
    assert node(res[0], "spec", "selector", "matchLabels").to_data() == {"app": "web"}
    assert node(res[0], "spec", "template", "metadata", "labels").to_data() == {"app": "web"}


def test_include_templates_adds_template_labels_but_not_selectors() -> None:
    res = with_labels_entry(DEPLOYMENT, "labels:\n- includeTemplates: true\n  pairs:\n    team: shop\n")
    assert node(res[0], "spec", "template", "metadata", "labels").to_data() == {"app": "web", "team": "shop"}
    assert node(res[0], "spec", "selector", "matchLabels").to_data() == {"app": "web"}


def test_include_selectors_is_common_labels() -> None:
    res = with_labels_entry(DEPLOYMENT, "labels:\n- includeSelectors: true\n  pairs:\n    team: shop\n")
    for path in (("metadata", "labels"), ("spec", "selector", "matchLabels"),
                 ("spec", "template", "metadata", "labels")):
        assert node(res[0], *path).to_data() == {"app": "web", "team": "shop"}, path


def test_fields_of_an_entry_are_more_field_specs() -> None:
    widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec: {}\n"
    res = with_labels_entry(widget, "labels:\n- pairs:\n    team: shop\n  fields:\n"
                                    "  - path: spec/podLabels\n    kind: Widget\n    create: true\n")
    assert node(res[0], "spec", "podLabels").to_data() == {"team": "shop"}
    assert node(res[0], "metadata", "labels").to_data() == {"team": "shop"}


def test_an_entry_without_pairs_changes_nothing() -> None:
    res = with_labels_entry(SERVICE, "labels:\n- includeSelectors: true\n")
    assert rendered(res) == rendered(resources(SERVICE))


def test_an_unknown_field_of_an_entry_is_an_error_at_it() -> None:
    with pytest.raises(BuildError) as e:
        with_labels_entry(SERVICE, "labels:\n- pairs:\n    team: shop\n  includeSelector: true\n")
    assert e.value.message == 'invalid Kustomization: unknown field "includeSelector" in a labels entry'
    assert e.value.location is not None and tuple(e.value.location) == (KUSTOMIZATION, 4, 3)
