"""kustomize's build state across a plugin: stamped on the way out, read
back on the way in, generator options and default paths."""

from __future__ import annotations

import pytest

from krmcheck.resource import build_state
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resource import GeneratorInfo
from krmcheck.resource.wire import strip_wire_annotations
from krmcheck.tree.node import Scalar
from tests.fn.runtime_items import deployment, resource


def test_stamped_carries_build_state_and_id() -> None:
    ann = build_state.stamped(deployment()).mapping("metadata").mapping("annotations")  # type: ignore[union-attr]
    assert ann is not None
    assert {k: v.value for k, v in ann.items.items() if isinstance(v, Scalar)} == {
        "internal.config.kubernetes.io/prefixes": "p-",
        "internal.config.kubernetes.io/previousKinds": "Deployment,Deployment",
        "internal.config.kubernetes.io/previousNames": "web,web",
        "internal.config.kubernetes.io/previousNamespaces": "default,apps",
        "kustomize.config.k8s.io/id":
            "group: apps\nkind: Deployment\nname: p-web\nnamespace: apps\nversion: v1\n"}


def test_generated_resource_annotations() -> None:
    res = resource("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    res.needs_hash = True
    res.generator = GeneratorInfo("create", True)
    assert build_state.build_annotations(res) == {
        "internal.config.kubernetes.io/generatorBehavior": "unspecified",
        "internal.config.kubernetes.io/needsHashSuffix": "enabled"}


def test_generator_options() -> None:
    res = resource("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n"
               "    kustomize.config.k8s.io/needs-hash: 'True'\n"
               "    kustomize.config.k8s.io/behavior: merge\n")
    build_state.generator_options([res])
    assert res.needs_hash and res.generator is not None and res.generator.behavior == "merge"
    assert res.metadata is not None and "annotations" not in res.metadata.items
    bad = resource("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n"
               "    kustomize.config.k8s.io/needs-hash: 'yes'\n")
    with pytest.raises(BuildError, match=r'invalid value \("yes"\)'):
        build_state.generator_options([bad])


def test_default_paths_and_strip() -> None:
    res = resource("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: ns\n")
    build_state.default_paths([res])
    ann = res.annotations()
    assert ann is not None and ann.value("config.kubernetes.io/path") == "ns/service_web.yaml"
    strip_wire_annotations([res])
    assert res.annotations() is None
