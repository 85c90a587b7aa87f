"""Reading the shared real-world corpus (``../shared/realworld``) and
rendering its roots with krmcheck's engine in process, one Builder per
repository so shared bases are rendered once."""

from __future__ import annotations

import lzma
from dataclasses import dataclass
from pathlib import Path

import yaml

from krmcheck.fn.loader import PluginLoader
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import NONE, ROOT_ONLY, Files
from krmcheck.tree.emit import emit_all
from tests.conformance import SHARED

CORPUS = SHARED / "realworld"


@dataclass(frozen=True)
class Root:
    repo: str
    path: str
    flags: tuple[str, ...]
    expect: str
    split: str

    @property
    def name(self) -> str:
        flag = " [none]" if self.flags else ""
        return f"{self.repo}:{self.path}{flag}"

    @property
    def repo_dir(self) -> Path:
        return CORPUS / "corpus" / self.repo.replace("/", "+")

    @property
    def directory(self) -> Path:
        return self.repo_dir / self.path

    @property
    def restrictor(self) -> str:
        return NONE if "LoadRestrictionsNone" in self.flags else ROOT_ONLY

    def expected(self) -> str:
        base = CORPUS / "expected" / self.repo.replace("/", "+")
        if self.path not in ("", "."):
            base = base / self.path
        name = "kustomize.yaml.xz"
        if self.flags:
            name = "kustomize." + "_".join(f.lstrip("-") for f in self.flags) + ".yaml.xz"
        with lzma.open(base / name, "rt", encoding="utf-8") as fh:
            return fh.read()


def roots(split: str | None = None) -> list[Root]:
    listing = CORPUS / "realworld.list"
    if not listing.is_file():
        return []
    data = yaml.load(listing.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    out = []
    for repo in data["repos"]:
        if split and repo["split"] != split:
            continue
        for r in repo["roots"]:
            out.append(Root(repo["repo"], r["path"], tuple(r.get("flags") or ()), r["expect"], repo["split"]))
    return out


_BUILDERS: dict[tuple[str, str], Builder] = {}


def render(root: Root) -> tuple[str | None, str | None]:
    """(output, None) or (None, error message)."""
    key = (root.repo, root.restrictor)
    builder = _BUILDERS.get(key)
    if builder is None:
        builder = _BUILDERS[key] = Builder(Files(root.repo_dir), BuildOptions(root.restrictor, plugins=PluginLoader()))
    try:
        return emit_all([r.node for r in builder.build(root.directory)]), None
    except BuildError as e:
        return None, str(e)


def check(root: Root) -> tuple[str, str]:
    """(status, detail): byte | sem | both-error | differ | engine-error | engine-ok-ref-error."""
    out, err = render(root)
    if root.expect == "error":
        return ("both-error", err or "") if out is None else ("engine-ok-ref-error", "")
    if out is None:
        return "engine-error", err or ""
    expected = root.expected()
    if out == expected:
        return "byte", ""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    same = [d for d in yaml.load_all(out, Loader=loader) if d is not None] == \
        [d for d in yaml.load_all(expected, Loader=loader) if d is not None]
    return ("sem", "") if same else ("differ", "")
