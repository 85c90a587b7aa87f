"""Which repository a controller object deploys from: is it this one, and
is what it follows this checkout?

This repository's URLs are its ``origin`` remote and those listed under
``gitops: {repo-urls: [...]}``. URLs compare by host and path, whatever
the transport: ``https://github.com/org/repo``, ``https://github.com/org/repo.git``,
``ssh://git@github.com/org/repo`` and ``git@github.com:org/repo.git`` are one
repository.
"""

from __future__ import annotations

import re
from pathlib import Path

from krmcheck.git import Checkout, origin_url
from krmcheck.tree.node import Mapping, Scalar

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


def elsewhere(ref: Mapping | None, checkout: Checkout, branches: frozenset[str]) -> str:
    """What a GitRepository of this repository with ``spec.ref`` follows,
    when that is not this checkout ("" when it is).

    The fields count in source-controller's order (fluxcd/pkg git/gogit
    ``Client.clone``): ``commit``, then ``name``, ``tag``, ``semver``, and
    ``branch`` (``master`` when nothing is given). ``branches`` are the
    branches this checkout stands for: the one checked out, the origin
    remote's default branch and the branch each ``flux-system``
    GitRepository follows (what ``flux bootstrap`` syncs is this repository);
    with none known (a detached checkout in CI, no flux-system source), any
    branch is taken to be this checkout."""
    def text(key: str) -> str:
        v = ref.get(key) if ref is not None else None
        return v.as_string().strip() if isinstance(v, Scalar) and v.value is not None else ""

    commit, name, tag, semver_range, branch = (text(k) for k in ("commit", "name", "tag", "semver", "branch"))
    head = checkout.commit
    if commit:
        return "" if head and head.startswith(commit.lower()) else f"commit {commit}"
    if name.startswith("refs/heads/"):
        branch, name = name.removeprefix("refs/heads/"), ""
    elif name.startswith("refs/tags/"):
        tag, name = name.removeprefix("refs/tags/"), ""
    if name:
        return f"ref {name}"
    at_head = {t for t, c in checkout.tags if c == head} if head else set()
    if tag:
        return "" if tag in at_head else f"tag {tag}"
    if semver_range:
        from krmcheck.gitops.semver import latest

        try:
            chosen = latest(semver_range, [t for t, _ in checkout.tags])
        except ValueError:
            return f"semver {semver_range!r} (not a range source-controller reads)"
        return "" if chosen is not None and chosen in at_head else f"semver {semver_range}"
    branch = branch or "master"
    return "" if not branches or branch in branches else f"branch {branch}"


def describe(checkout: Checkout, branches: frozenset[str]) -> str:
    """This checkout in a few words, for a message."""
    if checkout.branch:
        return f"branch {checkout.branch}"
    if branches:
        return "branch " + " or ".join(sorted(branches))
    return f"commit {checkout.commit[:12]}" if checkout.commit else "the files here"
