"""replicas: the replica count of workloads by name, written by the entry's
``count:`` line."""

from __future__ import annotations

import pytest

from krmcheck.kustomize.builtins import prefix_suffix, replicas
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resource import Resource
from krmcheck.tree.origin import Origin
from tests.kustomize.builtins.inline import KUSTOMIZATION, RESOURCES, at, entry, kustomization, node, resources

WORKLOADS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec: {}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
"""


def scaled(k: str, res: list[Resource] | None = None) -> list[Resource]:
    res = resources(WORKLOADS) if res is None else res
    replicas.apply(res, entry(kustomization(k), "replicas"))
    return res


def test_the_count_is_written_by_the_count_line() -> None:
    deployment = scaled("replicas:\n- name: web\n  count: 3\n")[0]
    count = node(deployment, "spec", "replicas")
    assert count.to_data() == 3
    assert at(count) == (KUSTOMIZATION, 3, 3, "kustomization")
    assert [(o.path, o.line) for o in count.trail] == [(RESOURCES, 6)]


def test_a_missing_count_is_added() -> None:
    statefulset = scaled("replicas:\n- name: db\n  count: 2\n")[1]
    assert node(statefulset, "spec").to_data() == {"replicas": 2}
    assert at(node(statefulset, "spec", "replicas"))[:2] == (KUSTOMIZATION, 3)


def test_only_the_named_workload_of_a_kind_in_the_table_changes() -> None:
    deployment, _, configmap = scaled("replicas:\n- name: db\n  count: 2\n")
    assert node(deployment, "spec", "replicas").to_data() == 1
    assert "spec" not in configmap.node  # a ConfigMap named web has no replicas
    deployment, _, configmap = scaled("replicas:\n- name: web\n  count: 0\n")
    assert node(deployment, "spec", "replicas").to_data() == 0
    assert "spec" not in configmap.node


def test_a_renamed_workload_is_found_by_its_original_name() -> None:
    res = resources(WORKLOADS)
    prefix_suffix.apply(res, "shop-", "", Origin(KUSTOMIZATION, 1, 1, "namePrefix"))
    scaled("replicas:\n- name: web\n  count: 5\n", res)
    assert (res[0].name, node(res[0], "spec", "replicas").to_data()) == ("shop-web", 5)


@pytest.mark.parametrize(("k", "line", "col"), [
    ("replicas:\n- name: web\n  count: three\n", 3, 3),
    ("replicas:\n- name: web\n  count: true\n", 3, 3),
    ("replicas:\n- name: web\n  count: \"3\"\n", 3, 3),
    ("replicas:\n- name: web\n", 2, 3),  # no count: the entry
])
def test_a_count_that_is_not_an_integer_is_an_error_at_it(k: str, line: int, col: int) -> None:
    with pytest.raises(BuildError) as e:
        scaled(k)
    assert e.value.message == "replicas entry needs an integer count"
    assert e.value.location is not None and tuple(e.value.location) == (KUSTOMIZATION, line, col)
