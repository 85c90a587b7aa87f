"""``krmcheck schemas pull``: copy a schema catalog repository, at a pinned
commit, into the cache, so that later runs find custom kinds' schemas
offline (the ``cache`` source, after the schema locations).

A catalog is a git repository in the datreeio CRDs-catalog layout,
``GROUP/KIND_VERSION.json``; its JSON files are copied to
``CACHE/catalogs/NAME/`` with a ``.source`` file saying where they came from.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import NamedTuple

from krmcheck import git
from krmcheck.schemas.locations import PULLED

DEFAULT_SOURCE = "https://github.com/datreeio/CRDs-catalog"
# The commit `schemas pull` takes by default: a catalog that moves under a
# CI run would change its findings from one day to the next.
DEFAULT_REF = "7b1e26ef9deea49293714d204c1a2270aab1178f"
TIMEOUT = 300.0
_SCHEMA_FILE = re.compile(r"[a-z0-9.-]+/[a-z0-9.-]+_[a-z0-9]+\.json")


class Pulled(NamedTuple):
    name: str
    directory: Path
    schemas: int
    commit: str


def default_name(source: str) -> str:
    """``https://github.com/datreeio/CRDs-catalog`` -> ``datreeio-CRDs-catalog``."""
    parts = [p for p in re.split(r"[/:]", source.rstrip("/").removesuffix(".git")) if p]
    name = "-".join(parts[-2:]) if len(parts) >= 2 else (parts[-1] if parts else "catalog")
    return re.sub(r"[^A-Za-z0-9._-]", "-", name)


def pull(source: str, ref: str, name: str, cache: Path) -> Pulled:
    """Clone ``source`` at ``ref`` and replace ``CACHE/catalogs/NAME`` with its schemas."""
    target = cache / PULLED / name
    with tempfile.TemporaryDirectory(prefix="krmcheck-catalog-") as scratch:
        checkout = Path(scratch) / "repo"
        commit = git.clone(source, ref, checkout, TIMEOUT)
        staging = Path(scratch) / "schemas"
        count = 0
        for path in sorted(checkout.rglob("*.json")):
            relative = path.relative_to(checkout).as_posix()
            if _SCHEMA_FILE.fullmatch(relative):
                destination = staging / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, destination)
                count += 1
        if not count:
            raise git.GitError(f"{source} at {ref or 'HEAD'}: no schemas in the GROUP/KIND_VERSION.json layout")
        (staging / ".source").write_text(json.dumps({"source": source, "ref": ref, "commit": commit}) + "\n")
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staging), str(target))
    return Pulled(name, target, count, commit)
