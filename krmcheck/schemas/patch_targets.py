"""What a kustomization of the repository writes, by patch, on every object
of a kind it selects.

A kustomization whose ``patches`` entry has a ``target`` (a kind, and
perhaps an ``annotationSelector`` or ``labelSelector``) applies its patch to
every object of that kind it reads: a repository that keeps one such
"aggregator" writes the objects it feeds it incomplete on purpose (an
ImageRepository without ``interval``, which the aggregator's patch for the
registry named by an annotation gives). Each field the patch writes (a key
of a strategic-merge patch, the path of a JSON patch's ``add`` or
``replace``) is recorded against the target, so that an object of the kind
that the selector takes, and that lacks such a field, is known to be one of
those inputs.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from krmcheck.resource.files import read_text_bounded
from krmcheck.tree.load import FAST_LOADER

_SCAN_SECONDS = 5.0
_SKIP = frozenset({".git", "node_modules", "vendor", "third_party", ".venv"})
_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


@dataclass(frozen=True)
class Completion:
    """A field a kustomization's targeted patch writes on the objects it selects."""

    kind: str
    annotations: str  # the target's annotationSelector ("" for none)
    labels: str  # the target's labelSelector ("" for none)
    path: tuple[str, ...]  # the field, from the object's top (``("spec", "interval")``)
    where: str  # the kustomization, repository-relative

    def selects(self, kind: str, annotations: dict[str, str], labels: dict[str, str]) -> bool:
        return kind == self.kind and matches(self.annotations, annotations) and matches(self.labels, labels)


def completions(top: Path) -> list[Completion]:
    """Every field a targeted patch of a kustomization of the repository
    writes (read within a bounded time)."""
    out: list[Completion] = []
    started = time.monotonic()
    for directory, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP)
        if time.monotonic() - started > _SCAN_SECONDS:
            break
        for name in names:
            if name in _NAMES:
                out.extend(_of(Path(directory), name, top))
    return out


def _load(path: Path) -> Any:
    try:
        return yaml.load(read_text_bounded(path), Loader=FAST_LOADER)
    except (OSError, ValueError, yaml.YAMLError, RecursionError):
        return None


def _of(directory: Path, name: str, top: Path) -> list[Completion]:
    doc = _load(directory / name)
    patches = doc.get("patches") if isinstance(doc, dict) else None
    where = os.path.relpath(directory / name, top)
    out: list[Completion] = []
    for entry in patches if isinstance(patches, list) else ():
        target = entry.get("target") if isinstance(entry, dict) else None
        if not isinstance(target, dict) or not isinstance(target.get("kind"), str) or target.get("name"):
            continue  # a patch of named objects completes only those
        if isinstance(entry.get("patch"), str):
            try:
                body = yaml.load(entry["patch"], Loader=FAST_LOADER)
            except (yaml.YAMLError, RecursionError, ValueError):
                continue
        elif isinstance(entry.get("path"), str) and "://" not in entry["path"]:
            body = _load(directory / entry["path"])
        else:
            continue
        for path in _written(body):
            out.append(Completion(target["kind"], str(target.get("annotationSelector") or ""),
                                  str(target.get("labelSelector") or ""), path, where))
    return out


def _written(body: Any) -> list[tuple[str, ...]]:
    """The fields a patch writes: a JSON patch's ``add``/``replace`` paths, or
    each key of a strategic-merge patch below its ``metadata``-less top."""
    if isinstance(body, list):
        return [tuple(p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:])
                for op in body if isinstance(op, dict) and op.get("op") in ("add", "replace")
                and isinstance(op.get("path"), str) and op["path"].startswith("/")]
    if not isinstance(body, dict):
        return []
    out: list[tuple[str, ...]] = []

    def walk(value: Any, at: tuple[str, ...]) -> None:
        for key, child in value.items():
            if not isinstance(key, str) or key.startswith("$"):
                continue
            out.append((*at, key))
            if isinstance(child, dict):
                walk(child, (*at, key))

    walk({k: v for k, v in body.items() if k not in ("apiVersion", "kind", "metadata")}, ())
    return out


_REQUIREMENT = re.compile(r"^\s*(!?)\s*([\w./-]+)\s*(?:(==|=|!=)\s*([\w./-]*)|\s+(in|notin)\s*\(([^)]*)\))?\s*$")


def matches(selector: str, values: dict[str, str]) -> bool:
    """Whether ``values`` (labels or annotations) satisfy a Kubernetes label
    selector as kustomize reads a target's ``labelSelector`` or
    ``annotationSelector`` (``a == b``, ``a != b``, ``a``, ``!a``,
    ``a in (b, c)``, ``a notin (b)``, joined by commas); an unreadable
    selector selects nothing."""
    if not selector.strip():
        return True
    for part in _split(selector):
        found = _REQUIREMENT.match(part)
        if found is None:
            return False
        negated, key, op, value, set_op, listed = found.groups()
        if op in ("=", "=="):
            ok = values.get(key) == value
        elif op == "!=":
            ok = values.get(key) != value
        elif set_op:
            choices = {c.strip() for c in listed.split(",")}
            ok = values.get(key) in choices if set_op == "in" else values.get(key) not in choices
        else:
            ok = key in values
        if ok == bool(negated):
            return False
    return True


def _split(selector: str) -> list[str]:
    """Requirements separated by commas outside ``( )``."""
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]
