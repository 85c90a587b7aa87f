"""Argo CD ApplicationSets (stub)."""

from __future__ import annotations

from pathlib import Path

from krmcheck.gitops.substitute import Problem
from krmcheck.resource.resource import Resource

GROUP = "argoproj.io/"


def is_application_set(res: Resource) -> bool:
    return res.kind == "ApplicationSet" and res.api_version.startswith(GROUP)


def expand(res: Resource, top: Path, urls: frozenset[str]) -> tuple[list[Resource], list[Problem]]:
    return [], []
