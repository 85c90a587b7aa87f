"""An inline-file harness for GitOps roots: write a repository, find its
controller roots as a run would, render one, compare the YAML."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from krmcheck import discover
from krmcheck.gitops import controllers
from krmcheck.gitops.render import Rendered, render
from krmcheck.gitops.root import ControllerRoot
from krmcheck.gitops.source import repository_urls
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.files import ROOT_ONLY, Files
from krmcheck.tree.emit import emit_all


class Repo:
    def __init__(self, top: Path) -> None:
        self.top = top
        self.files = Files(top)
        self._builders: dict[str, Builder] = {}

    def write(self, path: str, text: str) -> Path:
        target = self.top / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return target

    def builder(self, restrictor: str) -> Builder:
        key = restrictor or ROOT_ONLY
        if key not in self._builders:
            self._builders[key] = Builder(self.files, BuildOptions(key))
        return self._builders[key]

    def found(self, urls: tuple[str, ...] = ()) -> controllers.Found:
        selection = discover.select((self.top,), (), None, self.top)
        return controllers.find(selection.roots, selection.infos, self.builder, self.files,
                                repository_urls(self.top, urls), self.top)

    def root(self, name: str, urls: tuple[str, ...] = ()) -> ControllerRoot:
        roots = {r.name: r for r in self.found(urls).roots}
        assert name in roots, f"{name} not among {sorted(roots)}"
        return roots[name]

    def render(self, name: str, urls: tuple[str, ...] = ()) -> Rendered:
        root = self.root(name, urls)
        return render(self.builder(root.restrictor), root)

    def yaml(self, name: str, urls: tuple[str, ...] = ()) -> str:
        return emit_all([r.node for r in self.render(name, urls).resources])


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.chdir(tmp_path)
    return Repo(tmp_path.resolve())


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")
