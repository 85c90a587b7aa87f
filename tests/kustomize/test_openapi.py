from __future__ import annotations

from krmcheck.kustomize.openapi import PatchMeta, has_schema, patch_meta
from krmcheck.resource.resid import Gvk
from krmcheck.schemas import builtin

DEPLOY = Gvk("apps", "v1", "Deployment")
POD_SPEC = ("spec", "template", "spec")


def test_containers_merge_by_name() -> None:
    meta = patch_meta(DEPLOY, POD_SPEC + ("containers",))
    assert meta == PatchMeta("merge", "name", ("name",))
    assert meta.merges


def test_container_ports_are_keyed_by_port_and_protocol() -> None:
    meta = patch_meta(DEPLOY, POD_SPEC + ("containers", "ports"))
    assert meta.merge_key == "containerPort"
    assert meta.list_keys == ("containerPort", "protocol")


def test_env_inside_containers_resolves_refs() -> None:
    assert patch_meta(DEPLOY, POD_SPEC + ("containers", "env")).merge_key == "name"
    assert patch_meta(DEPLOY, POD_SPEC + ("volumes",)).strategy == "merge,retainKeys"


def test_service_ports() -> None:
    meta = patch_meta(Gvk("", "v1", "Service"), ("spec", "ports"))
    assert meta == PatchMeta("merge", "port", ("port", "protocol"))


def test_primitive_merge_list_has_no_key() -> None:
    meta = patch_meta(DEPLOY, ("metadata", "finalizers"))
    assert meta.merges and meta.merge_key == "" and meta.list_keys == ()


def test_retain_keys_on_a_map() -> None:
    meta = patch_meta(DEPLOY, ("spec", "strategy"))
    assert meta.strategy == "retainKeys" and not meta.merges


def test_lists_without_strategy_are_replaced() -> None:
    assert not patch_meta(DEPLOY, POD_SPEC + ("containers", "args")).merges


def test_unknown_kind_and_field_have_no_meta() -> None:
    crd = Gvk("example.com", "v1", "Thing")
    assert patch_meta(crd, ("spec", "containers")) == PatchMeta("", "", ())
    assert not has_schema(crd)
    assert not has_schema(DEPLOY, ("spec", "noSuchField"))


def test_map_values_follow_additional_properties() -> None:
    assert has_schema(DEPLOY, ("metadata", "labels", "any-key"))


def test_bundled_versions_are_listed_oldest_first() -> None:
    versions = builtin.versions()
    numbers = [tuple(int(p) for p in v.split(".")) for v in versions]
    assert numbers and numbers == sorted(numbers) and numbers[0] >= (1, 25)


def test_retired_api_versions_fall_back_to_the_served_kind() -> None:
    for gvk in (Gvk("apps", "v1beta1", "Deployment"), Gvk("extensions", "v1beta1", "Deployment")):
        assert patch_meta(gvk, POD_SPEC + ("containers",)).merge_key == "name"
    assert not has_schema(Gvk("example.com", "v1", "Deployment"))
