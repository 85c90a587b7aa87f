"""Finding kustomization roots, the graph of what each one reads, and which
roots a set of changed files touches."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml

from krmcheck.kustomize.kustomization import FILENAMES

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__", ".terraform"})


@dataclass
class KustomizationInfo:
    """What a kustomization reads, from a light parse (no build)."""

    directory: Path
    is_component: bool = False
    dirs: set[Path] = field(default_factory=set)  # kustomization directories it includes
    files: set[Path] = field(default_factory=set)  # other files it reads


def repo_root(start: Path) -> Path:
    """The top of the git work tree holding ``start``, else ``start`` itself."""
    cur = start.resolve()
    for d in (cur, *cur.parents):
        if (d / ".git").exists():
            return d
    return start.resolve()


def find_kustomizations(paths: list[Path]) -> list[Path]:
    """Every directory under ``paths`` holding a kustomization file, sorted."""
    found: set[Path] = set()
    for p in paths:
        if p.is_file():
            p = p.parent
        for dirpath, dirnames, filenames in os.walk(p):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            if any(n in filenames for n in FILENAMES):
                found.add(Path(dirpath).resolve())
    return sorted(found)


def read_info(directory: Path) -> KustomizationInfo:
    info = KustomizationInfo(directory)
    for name in FILENAMES:
        path = directory / name
        if path.is_file():
            info.files.add(path.resolve())
            try:
                data = yaml.load(path.read_text(encoding="utf-8", errors="replace"),
                                 Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            except yaml.YAMLError:
                return info
            if isinstance(data, dict):
                _collect(info, data)
            break
    return info


def _entries(value: object) -> list[str]:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _collect(info: KustomizationInfo, data: dict) -> None:
    d = info.directory
    info.is_component = data.get("kind") == "Component"
    for key in ("resources", "bases", "components", "generators", "transformers", "validators"):
        for rel in _entries(data.get(key)):
            if "\n" in rel or "://" in rel:
                continue
            target = (d / rel)
            if target.is_dir():
                info.dirs.add(target.resolve())
            else:
                info.files.add(target.resolve())
    for key in ("patchesStrategicMerge", "crds", "configurations"):
        for rel in _entries(data.get(key)):
            if "\n" not in rel:
                info.files.add((d / rel).resolve())
    for key in ("patches", "patchesJson6902", "replacements"):
        for item in data.get(key) or []:
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                info.files.add((d / item["path"]).resolve())
    for key in ("configMapGenerator", "secretGenerator"):
        for item in data.get(key) or []:
            if not isinstance(item, dict):
                continue
            for rel in _entries(item.get("files")):
                info.files.add((d / rel.split("=", 1)[-1]).resolve())
            for rel in _entries(item.get("envs")) + ([item["env"]] if isinstance(item.get("env"), str) else []):
                info.files.add((d / rel).resolve())


def graph(kdirs: list[Path]) -> dict[Path, KustomizationInfo]:
    return {d: read_info(d) for d in kdirs}


def default_roots(infos: dict[Path, KustomizationInfo]) -> list[Path]:
    """Kustomizations no other one includes; Components are never roots."""
    included = {t for i in infos.values() for t in i.dirs}
    return [d for d, i in sorted(infos.items()) if d not in included and not i.is_component]


def all_roots(infos: dict[Path, KustomizationInfo]) -> list[Path]:
    return [d for d, i in sorted(infos.items()) if not i.is_component]


def reads(root: Path, infos: dict[Path, KustomizationInfo]) -> set[Path]:
    """Every file a root can read, through the kustomizations it includes."""
    seen: set[Path] = set()
    out: set[Path] = set()
    stack = [root]
    while stack:
        d = stack.pop()
        if d in seen:
            continue
        seen.add(d)
        info = infos.get(d) or read_info(d)
        out |= info.files
        for sub in info.dirs:
            out.add(sub)
            stack.append(sub)
        for f in info.files:
            if f.is_dir():
                stack.append(f)
    return out


def touched_roots(roots: list[Path], changed: list[Path],
                  infos: dict[Path, KustomizationInfo]) -> list[Path]:
    """The roots that read any of ``changed`` (a changed kustomization file
    counts as read by every root that includes its directory)."""
    changed_set = {c.resolve() for c in changed}
    return [root for root in roots if reads(root, infos) & changed_set]


def changed_since(ref: str, root: Path) -> list[Path]:
    """Files that differ between commit ``ref`` and the work tree: committed
    since, staged, unstaged or untracked (dulwich; no git binary needed)."""
    from dulwich import porcelain
    from dulwich.diff_tree import tree_changes
    from dulwich.repo import Repo

    repo = Repo(str(root))
    old = porcelain.parse_commit(repo, ref)
    head = cast(Any, repo[repo.head()])  # cast: HEAD names a commit, which has .tree
    paths: set[str] = set()
    for change in tree_changes(repo.object_store, old.tree, head.tree):
        for entry in (change.old, change.new):
            if entry is not None and entry.path is not None:
                paths.add(entry.path.decode())
    status = porcelain.status(repo)
    for kind in ("add", "delete", "modify"):
        paths.update(p.decode() for p in status.staged.get(kind, []))
    paths.update(p.decode() if isinstance(p, bytes) else p for p in status.unstaged)
    paths.update(status.untracked)
    return sorted(root / p for p in paths)
