"""No object is deployed twice to one cluster.

Two roots that deploy to the same cluster and both render the same object
(the same API group, kind, namespace and name) fight over it: each sync of
one undoes the other, and deleting either root deletes the object the other
one still wants. krmcheck cannot know which roots share a cluster, so this
check runs only for the groups ``.krmcheck.yaml`` names:

```yaml
clusters:
  prod: [clusters/prod/*, apps/*/overlays/prod]
  staging: [clusters/staging/*, apps/*/overlays/staging]
```

Each list holds gitignore-style patterns (relative to the configuration
file) of root directories. An object rendered by two or more roots of one
cluster is an error at each place that defines it (the line of its
``metadata.name``, in a base when the base defines it), and the message
lists every root and place, so both ends are in view. A root in no cluster
is never compared; one root rendering the same object twice is the build's
error, not this check's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from krmcheck.results import Finding, Location, ResourceRef, Result, RootReport
from krmcheck.scope import PathPatterns

id = "duplicate"
description = "no object is rendered by two roots that deploy to the same cluster"

# (the object, where its metadata.name is written, its source id)
Place = tuple[ResourceRef, Location, str]


def identity(ref: ResourceRef) -> tuple[str, str, str, str]:
    """What makes two objects one in a cluster: the version does not."""
    return (ref.apiVersion.rpartition("/")[0], ref.kind, ref.namespace, ref.name)


def across_roots(reports: Sequence[RootReport], places: Sequence[Sequence[Place]],
                 clusters: Sequence[tuple[str, PathPatterns]]) -> tuple[RootReport, ...]:
    """``reports`` with a finding added wherever an object of one root is
    also rendered by another root of the same cluster. ``places[i]`` holds
    the objects of ``reports[i]``."""
    added: dict[int, list[Finding]] = {}
    for cluster, patterns in clusters:
        members = [i for i, r in enumerate(reports)
                   if not r.build_failed and patterns.matches(r.root, directory=True)]
        by_object: dict[tuple[str, str, str, str], list[tuple[int, ResourceRef, Location, str]]] = {}
        for i in members:
            for ref, location, source_id in places[i]:
                by_object.setdefault(identity(ref), []).append((i, ref, location, source_id))
        for holders in by_object.values():
            if len({reports[i].root for i, _, _, _ in holders}) < 2:
                continue
            message = _message(holders[0][1], cluster, [(reports[i].root, loc) for i, _, loc, _ in holders])
            for i, ref, location, source_id in holders:
                result = Result(message=message, severity="error", resource_ref=ref, tags=(("validator", id),))
                added.setdefault(i, []).append(Finding(result, reports[i].root, location, source_id=source_id))
    return tuple(dataclasses.replace(r, findings=r.findings + tuple(added[i])) if i in added else r
                 for i, r in enumerate(reports))


def _message(ref: ResourceRef, cluster: str, holders: list[tuple[str, Location]]) -> str:
    shown = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
    places = ", ".join(f"{root} ({loc.path}:{loc.line})" for root, loc in sorted(set(holders)))
    return (f"{ref.kind} {shown} is deployed to cluster {cluster!r} by "
            f"{len({r for r, _ in holders})} roots, which will fight over it: {places}")
