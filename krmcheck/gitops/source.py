"""Which repository a controller object deploys from: is it this one?

This repository's URLs are its ``origin`` remote and those listed under
``gitops: {repo-urls: [...]}``. URLs compare by host and path, whatever
the transport: ``https://github.com/org/repo``, ``https://github.com/org/repo.git``,
``ssh://git@github.com/org/repo`` and ``git@github.com:org/repo.git`` are one
repository.
"""

from __future__ import annotations

import re
from pathlib import Path

from krmcheck.git import origin_url

# the GitRepository that ``flux bootstrap`` makes for the repository it writes to
FLUX_SYSTEM = "flux-system"


def normalise(url: str) -> str:
    u = url.strip().lower()
    m = re.match(r"^[\w.-]+@([\w.-]+):(?!//)(.*)$", u)  # scp-like: git@host:org/repo
    if m:
        u = f"{m.group(1)}/{m.group(2)}"
    else:
        u = re.sub(r"^[a-z+]+://", "", u)
        u = re.sub(r"^[^@/]+@", "", u)  # user@
        u = re.sub(r"^([^/:]+):\d+/", r"\1/", u)  # a port
    u = u.rstrip("/")
    return u[:-4] if u.endswith(".git") else u


def same_repository(url: str, urls: frozenset[str]) -> bool:
    return normalise(url) in urls


def repository_urls(top: Path, listed: tuple[str, ...] = ()) -> frozenset[str]:
    """The origin remote of the git repository at ``top`` (if any) and ``listed``."""
    found = {normalise(u) for u in listed}
    origin = origin_url(top)
    if origin:
        found.add(normalise(origin))
    return frozenset(found)
