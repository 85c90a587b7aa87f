"""Directories that would read themselves: kustomize refuses to enter a
directory that is, or contains, a directory already being built up the
chain of kustomizations (its loader's check against every visited root).

Each expectation was checked against ``kubectl kustomize`` (Kustomize v5.5.0):
the refused ones fail with "cycle detected: candidate root ... contains
visited root ...", the others build.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.kustomize.target import Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from tests.checkrun import write

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
COMPONENT = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"


def names(root: Path, directory: str) -> list[str]:
    return [r.name for r in Builder(Files(root)).build(root / directory)]


def refused(root: Path, directory: str) -> BuildError:
    with pytest.raises(BuildError) as e:
        Builder(Files(root)).build(root / directory)
    return e.value


def test_an_overlay_inside_its_base_is_a_cycle(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- settings.yaml\n")
    write(tmp_path, "app/settings.yaml", CONFIGMAP)
    write(tmp_path, "app/overlays/prod/kustomization.yaml", "namePrefix: prod-\nresources:\n- ../../\n")
    error = refused(tmp_path, "app/overlays/prod")
    assert "cycle detected: app contains app/overlays/prod, which is being built" in str(error)
    assert error.location is not None
    assert (error.location.path, error.location.line) == ("app/overlays/prod/kustomization.yaml", 3)


def test_a_directory_above_the_chain_is_refused_even_when_it_does_not_list_the_overlay(tmp_path: Path) -> None:
    # the parent lists only base/: no file is read twice, and kustomize still refuses it
    write(tmp_path, "app/kustomization.yaml", "resources:\n- base\n")
    write(tmp_path, "app/base/kustomization.yaml", "resources:\n- settings.yaml\n")
    write(tmp_path, "app/base/settings.yaml", CONFIGMAP)
    write(tmp_path, "app/overlays/prod/kustomization.yaml", "resources:\n- ../..\n")
    assert "cycle detected: app contains app/overlays/prod" in str(refused(tmp_path, "app/overlays/prod"))
    assert names(tmp_path, "app") == ["settings"]


def test_a_component_that_includes_its_parent_is_a_cycle(tmp_path: Path) -> None:
    write(tmp_path, "comp/kustomization.yaml", COMPONENT + "namePrefix: c-\n")
    write(tmp_path, "comp/inner/kustomization.yaml", COMPONENT + "components:\n- ..\n")
    write(tmp_path, "app/kustomization.yaml", "resources:\n- settings.yaml\ncomponents:\n- ../comp/inner\n")
    write(tmp_path, "app/settings.yaml", CONFIGMAP)
    error = refused(tmp_path, "app")
    assert "cycle detected: comp contains comp/inner, which is being built" in str(error)
    assert error.location is not None and error.location.path == "comp/inner/kustomization.yaml"


def test_a_directory_listing_itself_is_a_cycle(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- .\n")
    assert "cycle detected: app includes itself" in str(refused(tmp_path, "app"))


def test_siblings_and_subdirectories_are_no_cycle(tmp_path: Path) -> None:
    # a base beside the overlay, and a directory below the one being built
    write(tmp_path, "app/base/kustomization.yaml", "resources:\n- settings.yaml\n")
    write(tmp_path, "app/base/settings.yaml", CONFIGMAP)
    write(tmp_path, "app/overlays/prod/kustomization.yaml", "namePrefix: prod-\nresources:\n- ../../base\n- extra\n")
    write(tmp_path, "app/overlays/prod/extra/kustomization.yaml", "namePrefix: x-\nresources:\n- ../../../base\n")
    assert sorted(names(tmp_path, "app/overlays/prod")) == ["prod-settings", "prod-x-settings"]
