"""The build's plugin interface: external configs and catalogs go through
the ``ExternalPlugins`` a build is given, and nothing else.

A build given none runs builtin kinds only; a build given a stand-in runs
whatever the stand-in resolves, with the kustomization and context the
function runtime would get.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pytest

from krmcheck.kustomize.kustomization import Kustomization
from krmcheck.kustomize.plugins import GENERATOR, TRANSFORMER, Config, Context, Plugin
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Scalar
from krmcheck.tree.origin import Location

MAKER = "apiVersion: example.com/v1\nkind: Maker\nmetadata:\n  name: m\n"


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@dataclass(frozen=True)
class MakesOneConfigMap:
    roles: ClassVar[frozenset[str]] = frozenset({GENERATOR, TRANSFORMER})

    def run(self, config: Config, ctx: Context, resources: list[Resource]) -> list[Resource]:
        at = config.at
        node = Mapping({"apiVersion": Scalar("v1", at), "kind": Scalar("ConfigMap", at),
                        "metadata": Mapping({"name": Scalar(f"made-by-{config.name}", at)}, at)}, at)
        return resources + [Resource(node)]


@dataclass
class StandIn:
    """An ExternalPlugins that records what the build asked of it."""

    asked: list[tuple[str, str]] = field(default_factory=list)

    def check_catalogs(self, k: Kustomization, files: Files) -> None:
        self.asked.append(("catalogs", k.display))

    def resolve(self, config: Config, ctx: Context, k: Kustomization) -> Plugin:
        assert ctx.kdir == k.directory
        self.asked.append((config.kind, k.display))
        return MakesOneConfigMap()


def test_an_external_config_runs_what_the_given_plugins_resolve(tmp_path: Path) -> None:
    write(tmp_path, "app/maker.yaml", MAKER)
    write(tmp_path, "app/kustomization.yaml", "generators:\n- maker.yaml\ncatalogs:\n- c.yaml\n")
    stand_in = StandIn()
    options = BuildOptions(enable_alpha_plugins=True, plugins=stand_in)
    [made] = Builder(Files(tmp_path), options).build(tmp_path / "app")
    assert made.name == "made-by-m"
    assert stand_in.asked == [("catalogs", "app/kustomization.yaml"), ("Maker", "app/kustomization.yaml")]


def test_builtin_kinds_never_reach_the_given_plugins(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "generators:\n- |-\n  apiVersion: builtin\n"
          "  kind: ConfigMapGenerator\n  metadata:\n    name: cm\n  literals: [a=b]\n")
    stand_in = StandIn()
    [cm] = Builder(Files(tmp_path), BuildOptions(plugins=stand_in)).build(tmp_path / "app")
    assert cm.kind == "ConfigMap" and stand_in.asked == []


def test_without_alpha_plugins_an_external_config_is_refused_before_resolving(tmp_path: Path) -> None:
    write(tmp_path, "app/maker.yaml", MAKER)
    write(tmp_path, "app/kustomization.yaml", "generators:\n- maker.yaml\n")
    stand_in = StandIn()
    with pytest.raises(BuildError, match="external plugins disabled"):
        Builder(Files(tmp_path), BuildOptions(plugins=stand_in)).build(tmp_path / "app")
    assert stand_in.asked == []


def test_a_build_given_no_plugins_refuses_external_configs_at_their_entry(tmp_path: Path) -> None:
    write(tmp_path, "app/maker.yaml", MAKER)
    write(tmp_path, "app/kustomization.yaml", "generators:\n- maker.yaml\n")
    with pytest.raises(BuildError, match="unable to load external plugin 'Maker': this build runs no") as e:
        Builder(Files(tmp_path), BuildOptions(enable_alpha_plugins=True)).build(tmp_path / "app")
    assert e.value.location == Location("app/kustomization.yaml", 2, 3)


def test_a_build_given_no_plugins_refuses_catalogs_at_the_first(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "catalogs:\n- c.yaml\n- d.yaml\n")
    with pytest.raises(BuildError, match="catalogs list functions, and this build runs none") as e:
        Builder(Files(tmp_path)).build(tmp_path / "app")
    assert e.value.location == Location("app/kustomization.yaml", 2, 3)
