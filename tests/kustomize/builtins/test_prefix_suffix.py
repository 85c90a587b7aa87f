"""namePrefix / nameSuffix: renamed resources, written by the kustomization's
line, with their old ids and the prefixes and suffixes kept for references."""

from __future__ import annotations

from krmcheck.kustomize.builtins import prefix_suffix
from krmcheck.kustomize.fieldspec import FieldSpec
from krmcheck.kustomize.transformerconfig import TransformerConfig
from krmcheck.resource.resource import Resource
from krmcheck.tree.origin import Origin
from tests.kustomize.builtins.inline import KUSTOMIZATION, RESOURCES, node, rendered, resources

WHERE = Origin(KUSTOMIZATION, 3, 1, "namePrefix")

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
WIDGET = """\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec:
  identity: w
"""


def renamed(text: str, prefix: str = "", suffix: str = "",
            config: TransformerConfig | None = None) -> list[Resource]:
    res = resources(text)
    prefix_suffix.apply(res, prefix, suffix, WHERE, config)
    return res


def test_prefix_and_suffix_are_written_by_the_kustomization_line() -> None:
    [cm] = renamed(CONFIGMAP, "shop-", "-v2")
    name = node(cm, "metadata", "name")
    assert name.to_data() == "shop-settings-v2"
    assert name.origin == WHERE
    assert [(o.path, o.line) for o in name.trail] == [(RESOURCES, 4)]


def test_each_rename_remembers_the_id_before_it() -> None:
    [cm] = renamed(CONFIGMAP, "shop-", "-v2")
    assert [i.name for i in cm.all_ids()] == ["settings", "shop-settings", "shop-settings-v2"]
    assert (cm.prefixes, cm.suffixes) == (["shop-"], ["-v2"])


def test_an_outer_prefix_goes_first() -> None:
    [cm] = renamed(CONFIGMAP, "inner-")
    prefix_suffix.apply([cm], "outer-", "", WHERE)
    assert cm.name == "outer-inner-settings"
    assert cm.prefixes == ["outer-", "inner-"]


def test_kinds_kustomize_never_renames() -> None:
    text = "\n---\n".join(f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: x" for api, kind in [
        ("v1", "Namespace"), ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("apiregistration.k8s.io/v1", "APIService")]) + "\n"
    res = renamed(text, "shop-", "-v2")
    assert [r.name for r in res] == ["x", "x", "x"]
    assert all(r.prev_ids == [] for r in res)


def test_a_resource_without_a_name_is_skipped() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n"
    res = renamed(text, "shop-")
    assert rendered(res) == rendered(resources(text)) and res[0].prefixes == []


def test_no_prefix_and_no_suffix_change_nothing() -> None:
    [cm] = renamed(CONFIGMAP)
    assert rendered([cm]) == CONFIGMAP and cm.prev_ids == []


def test_more_fields_of_the_table_get_the_prefix_for_the_kinds_they_name() -> None:
    config = TransformerConfig(name_prefix=(FieldSpec(("metadata", "name")),
                                            FieldSpec(("spec", "identity"), kind="Widget")))
    widget, cm = renamed(WIDGET + "---\n" + CONFIGMAP + "  labels:\n    identity: x\n", "shop-", config=config)
    assert node(widget, "spec", "identity").to_data() == "shop-w"
    assert node(widget, "spec", "identity").origin == WHERE
    assert widget.name == "shop-w" and cm.name == "shop-settings"
    assert node(cm, "metadata", "labels", "identity").to_data() == "x"


def test_an_empty_table_still_renames() -> None:
    [widget] = renamed(WIDGET, suffix="-v2", config=TransformerConfig())
    assert widget.name == "w-v2"
    assert node(widget, "spec", "identity").to_data() == "w"


def test_a_create_spec_makes_the_missing_field_from_nothing() -> None:
    # kubectl: the field is made "" and then gets the prefix and the suffix (p--s)
    made = FieldSpec(("spec", "made", "here"), create=True)
    config = TransformerConfig(name_prefix=(made,), name_suffix=(made,))
    [cm] = renamed(CONFIGMAP, "p-", "-s", config)
    assert node(cm, "spec", "made", "here").to_data() == "p--s"
    assert node(cm, "spec", "made", "here").origin == WHERE
    assert cm.name == "settings"  # this table has no metadata/name spec
