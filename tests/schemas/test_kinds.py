"""Which kinds a group/version serves, and the kind nearest a misspelt one."""

from __future__ import annotations

import pytest

from krmcheck.schemas import builtin, kinds


@pytest.mark.parametrize(("kind", "nearest"), [
    ("configmap", ("ConfigMap",)),  # case first
    ("Deploymnet", ("Deployment",)),  # two neighbours swapped: one edit
    ("Deploymen", ("Deployment",)),
    ("Secrets", ("Secret",)),
    ("Gadget", ()),  # nothing within two edits
])
def test_nearest(kind: str, nearest: tuple[str, ...]) -> None:
    known = ["ConfigMap", "Deployment", "Secret", "Service", "StatefulSet"]
    assert kinds.nearest(kind, known) == nearest


def test_distance_counts_a_swap_as_one_edit() -> None:
    assert kinds.distance("ab", "ba") == 1
    assert kinds.distance("kitten", "sitting") == 3
    assert kinds.distance("", "abc") == 3


def test_a_group_version_no_longer_served_has_no_kinds() -> None:
    newest = builtin.versions()[-1]
    assert "Deployment" in builtin.group_version_kinds(newest, "apps/v1")
    assert "ConfigMap" in builtin.group_version_kinds(newest, "v1")
    # the definitions still list DeleteOptions and WatchEvent for these
    assert builtin.group_version_kinds(newest, "extensions/v1beta1") == frozenset()
    assert builtin.group_version_kinds(newest, "apps/v1beta1") == frozenset()
    assert builtin.group_version_kinds(newest, "cert-manager.io/v1") == frozenset()


def test_the_group_versions_serving_a_kind() -> None:
    newest = builtin.versions()[-1]
    assert builtin.serving(newest, "Pod") == ("v1",)
    assert builtin.serving(newest, "HorizontalPodAutoscaler") == ("autoscaling/v1", "autoscaling/v2")
    assert builtin.serving(newest, "Widget") == ()
