"""duplicate: an object rendered by two roots of one cluster, at both places."""

from __future__ import annotations

from pathlib import Path

from tests.checkrun import check, write

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: shared\ndata:\n  k: v\n"


def _two_apps(root: Path, clusters: str) -> None:
    write(root, ".krmcheck.yaml", clusters)
    for app in ("a", "b"):
        write(root, f"apps/{app}/kustomization.yaml", "resources:\n- cm.yaml\n- own.yaml\n")
        write(root, f"apps/{app}/cm.yaml", CM.format(name="settings"))
        write(root, f"apps/{app}/own.yaml", CM.format(name=f"only-{app}"))


def _duplicates(run_report: dict) -> list[tuple[str, int, str, tuple[str, ...]]]:
    return sorted((d["path"], d["line"], d["severity"], tuple(d["roots"])) for d in run_report["defects"]
                  if d["validator"] == "duplicate")


def test_an_object_two_roots_of_a_cluster_render_is_an_error_at_both_places(tmp_path: Path) -> None:
    _two_apps(tmp_path, "clusters:\n  prod: [apps/*]\n")
    run = check(tmp_path, ".")
    assert run.code == 1
    assert _duplicates(run.report) == [("apps/a/cm.yaml", 4, "error", ("apps/a",)),
                                       ("apps/b/cm.yaml", 4, "error", ("apps/b",))]
    [message] = {d["message"] for d in run.report["defects"] if d["validator"] == "duplicate"}
    assert message == ("ConfigMap shared/settings is deployed to cluster 'prod' by 2 roots, which will fight "
                       "over it: apps/a (apps/a/cm.yaml:4), apps/b (apps/b/cm.yaml:4)")


def test_roots_in_different_clusters_or_in_none_are_not_compared(tmp_path: Path) -> None:
    _two_apps(tmp_path, "clusters:\n  prod: [apps/a]\n  staging: [apps/b]\n")
    assert _duplicates(check(tmp_path, ".").report) == []
    _two_apps(tmp_path, "fail-on: error\n")
    assert _duplicates(check(tmp_path, ".").report) == []


def test_a_shared_base_is_one_defect_listing_both_roots(tmp_path: Path) -> None:
    write(tmp_path, ".krmcheck.yaml", "clusters:\n  prod: [overlays/*]\n")
    write(tmp_path, "base/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(tmp_path, "base/cm.yaml", CM.format(name="settings"))
    for overlay in ("one", "two"):
        write(tmp_path, f"overlays/{overlay}/kustomization.yaml", "resources:\n- ../../base\n")
    write(tmp_path, "overlays/two/kustomization.yaml", "resources:\n- ../../base\nnamePrefix: two-\n")
    run = check(tmp_path, ".")
    assert _duplicates(run.report) == []  # a prefix makes them two objects
    write(tmp_path, "overlays/two/kustomization.yaml", "resources:\n- ../../base\ncommonLabels: {x: y}\n")
    run = check(tmp_path, ".")
    assert _duplicates(run.report) == [("base/cm.yaml", 4, "error", ("overlays/one", "overlays/two"))]


def test_the_version_does_not_make_two_objects_and_the_check_can_be_turned_off(tmp_path: Path) -> None:
    _two_apps(tmp_path, "clusters:\n  prod: [apps/*]\n")
    write(tmp_path, "apps/b/cm.yaml", CM.format(name="settings").replace("apiVersion: v1", "apiVersion: v2"))
    assert len(_duplicates(check(tmp_path, ".").report)) == 2
    write(tmp_path, ".krmcheck.yaml", "clusters:\n  prod: [apps/*]\nvalidators:\n  duplicate: false\n")
    assert _duplicates(check(tmp_path, ".").report) == []


def test_a_cluster_entry_must_be_a_list_of_patterns(tmp_path: Path) -> None:
    _two_apps(tmp_path, "clusters:\n  prod: apps/*\n")
    run = check(tmp_path, ".")
    assert run.code == 2 and ".krmcheck.yaml:2:3: clusters.prod: 'apps/*' must be a list" in run.err
