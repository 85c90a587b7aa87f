"""What a Kyverno policy of the repository adds to an object at admission.

Kyverno runs as a mutating admission webhook, and the API server runs
mutating admission before it checks an object against its schema. A
``ClusterPolicy`` or ``Policy`` whose rule matches a kind and mutates it
with ``patchStrategicMerge`` writes each plain key of its patch, and each
key with the add anchor ``+(key)`` (added where it is not set): a required
field the manifest leaves out is there when the schema is checked
(``+(issuerRef)`` on every Certificate, a default issuer). A key under a
conditional anchor (``(name)``, ``=(name)``, ``<(name)``) is written only
where the condition holds, and is not counted; nor is a policy's other
kind of mutation.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from krmcheck.resource.files import read_text_bounded
from krmcheck.tree.load import FAST_LOADER

_SCAN_SECONDS = 5.0
_SCAN_BYTES = 32 << 20
_SKIP = frozenset({".git", "node_modules", "vendor", "third_party", ".venv"})
_ADDED = re.compile(r"^\+\(([^()]+)\)$")  # the add anchor
_ANCHOR = re.compile(r"^[=<X^]?\(.*\)$")  # a conditional, equality, global or negation anchor


def added_fields(top: Path) -> dict[str, dict[tuple[str, ...], str]]:
    """kind -> {field path a policy's mutation writes on objects of that
    kind -> the policy (``ClusterPolicy/certificate-defaults``)}; ``*`` for
    rules that match every kind."""
    out: dict[str, dict[tuple[str, ...], str]] = {}
    for doc in _policies(top):
        name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), dict) else None
        spec = doc.get("spec")
        for rule in (spec.get("rules") or ()) if isinstance(spec, dict) else ():
            if not isinstance(rule, dict) or not isinstance(rule.get("mutate"), dict):
                continue
            patch = rule["mutate"].get("patchStrategicMerge")
            if not isinstance(patch, dict):
                continue
            paths = list(_written(patch, ()))
            for kind in _kinds(rule.get("match")):
                for path in paths:
                    out.setdefault(kind, {}).setdefault(path, f"{doc['kind']}/{name}")
    return out


def _policies(top: Path) -> Iterator[dict[str, Any]]:
    started, total = time.monotonic(), 0
    for directory, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP)
        if time.monotonic() - started > _SCAN_SECONDS or total > _SCAN_BYTES:
            return
        for name in sorted(names):
            if not name.endswith((".yaml", ".yml")):
                continue
            try:
                text = read_text_bounded(os.path.join(directory, name))
            except (OSError, ValueError):
                continue
            total += len(text)
            if "kyverno.io/" not in text or "patchStrategicMerge" not in text:
                continue
            try:
                docs = list(yaml.load_all(text, Loader=FAST_LOADER))
            except (yaml.YAMLError, RecursionError, ValueError):
                continue
            for doc in docs:
                if isinstance(doc, dict) and doc.get("kind") in ("ClusterPolicy", "Policy") and \
                        str(doc.get("apiVersion", "")).startswith("kyverno.io/"):
                    yield doc


def _kinds(match: Any) -> Iterator[str]:
    """The kinds a rule's ``match`` names (``any``, ``all``, or the older
    bare ``resources``), each as its last segment (``cert-manager.io/v1/Certificate``)."""
    if not isinstance(match, dict):
        return
    blocks = [match] + [b for key in ("any", "all") for b in (match.get(key) or ()) if isinstance(b, dict)]
    for block in blocks:
        resources = block.get("resources")
        for kind in (resources.get("kinds") or ()) if isinstance(resources, dict) else ():
            if isinstance(kind, str):
                yield kind.rsplit("/", 1)[-1]


def _written(patch: dict[str, Any], at: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    for key, value in patch.items():
        if not isinstance(key, str):
            continue
        added = _ADDED.match(key)
        if added is not None:
            key = added.group(1)
        elif _ANCHOR.match(key):
            continue  # written only where its condition holds
        yield (*at, key)
        if isinstance(value, dict):
            yield from _written(value, (*at, key))
