"""Whether a plain root may hold GitOps controller objects: a look at the
text of the files it reads for the API groups of Flux Kustomizations,
HelmReleases and Argo CD Applications. Only roots that mention one are
rendered to find controller roots (``controllers.py``), so a repository
without any costs a read of its files and nothing more.
"""

from __future__ import annotations

import os
from pathlib import Path

from krmcheck import discover
from krmcheck.resource.files import read_text_bounded

# the API groups of the controller objects (flux.GROUP, helmrelease.GROUP, argocd.GROUP, the Flux Operator's)
MARKERS = ("kustomize.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io", "argoproj.io", "fluxcd.controlplane.io")


def mentions_controllers(root: Path, infos: dict[Path, discover.KustomizationInfo]) -> bool:
    return any(has_marker(p) for p in discover.reads(root, infos) if os.path.isfile(p))


def has_marker(path: Path) -> bool:
    if path.suffix not in discover.MANIFEST_SUFFIXES + (".json",):
        return False
    try:
        text = read_text_bounded(path)
    except OSError:
        return False
    return any(m in text for m in MARKERS)
