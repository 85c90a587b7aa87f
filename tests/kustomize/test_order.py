"""sortOptions: legacy (default, tunable) and fifo output orders, and their errors.

Expected orders were printed by ``kubectl kustomize`` (Kustomize v5.5.0).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files

RESOURCES = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: x, namespace: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: y, namespace: a-b}
---
apiVersion: v1
kind: Service
metadata: {name: s}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
---
apiVersion: v1
kind: Namespace
metadata: {name: n}
"""


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def names(tmp_path: Path, kustomization: str, directory: str = "app") -> list[str]:
    write(tmp_path, f"{directory}/kustomization.yaml", kustomization)
    write(tmp_path, "app/res.yaml", RESOURCES)
    return [r.name for r in Builder(Files(tmp_path), BuildOptions()).build(tmp_path / directory)]


def test_default_is_legacy_and_compares_ids_as_one_string(tmp_path: Path) -> None:
    # "a-b|y" < "a|x" in kustomize's id strings: '-' sorts before '|'
    assert names(tmp_path, "resources: [res.yaml]\n") == ["n", "y", "x", "s", "d", "w"]


def test_fifo_keeps_the_accumulation_order(tmp_path: Path) -> None:
    assert names(tmp_path, "resources: [res.yaml]\nsortOptions:\n  order: fifo\n") == \
        ["x", "y", "s", "d", "w", "n"]


def test_legacy_sort_options_replace_the_default_lists(tmp_path: Path) -> None:
    kustomization = """\
resources: [res.yaml]
sortOptions:
  order: legacy
  legacySortOptions:
    orderFirst: [Deployment]
    orderLast: [Namespace]
"""
    # unlisted kinds rank together, ordered by group_version_kind text
    assert names(tmp_path, kustomization) == ["d", "w", "y", "x", "s", "n"]


def test_only_the_built_kustomization_decides(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml",
          "resources: [res.yaml]\nsortOptions: {order: bogus}\n")  # never read: not the root
    assert names(tmp_path, "resources: [../app]\nsortOptions: {order: fifo}\n", "top") == \
        ["x", "y", "s", "d", "w", "n"]


@pytest.mark.parametrize(("options", "message", "line", "col"), [
    ("sortOptions:\n  legacySortOptions: {}\n",
     "the field 'sortOptions.order' must be one of [fifo, legacy]", 2, 1),
    ("sortOptions:\n  order: random\n", "the field 'sortOptions.order' must be one of [fifo, legacy]", 3, 3),
    ("sortOptions:\n  order: fifo\n  legacySortOptions: {}\n",
     "the field 'sortOptions.legacySortOptions' is set but the selected sort order is 'fifo', not 'legacy'",
     4, 3),
])
def test_invalid_sort_options(tmp_path: Path, options: str, message: str, line: int, col: int) -> None:
    with pytest.raises(BuildError) as e:
        names(tmp_path, "resources: [res.yaml]\n" + options)
    assert e.value.message == message
    assert e.value.location is not None
    assert tuple(e.value.location) == ("app/kustomization.yaml", line, col)
