"""Findings that say the same thing about many roots, said once per run.

A home lab's every application is a HelmRelease of a chart from an OCI or
Helm repository: without ``--enable-helm --network``, each says its chart
was not rendered. Those findings (tagged ``summary`` by the problem that
made them) become one info finding for the run, at the first of them,
counting them by what would bring them in; each is kept as suppressed
(``by: summary``), so the JSON report still lists every one. A single such
finding stays as it is. The ``${...}`` placeholders not judged are counted
the same way (``placeholders.summarise``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

from krmcheck.gitops import HELM, NOT_HELD, SYNC_PATH, placeholders
from krmcheck.results import Finding, Result, RootReport, Suppressed

BY = "summary"


def summarise(reports: Sequence[RootReport]) -> tuple[RootReport, ...]:
    return _charts(_sync_paths(placeholders.summarise(reports)))


def _key(f: Finding) -> str:
    return dict(f.result.tags).get("summary", "")


def _chart_key(f: Finding) -> str:
    key = _key(f)
    return "" if key.startswith(SYNC_PATH) else key


def _sync_paths(reports: tuple[RootReport, ...]) -> tuple[RootReport, ...]:
    """One info per directory taken as a cluster's sync path, however many
    substituteFrom references of its Kustomizations read objects there."""
    by_directory: dict[str, list[Finding]] = {}
    for r in reports:
        for f in r.findings:
            if _key(f).startswith(SYNC_PATH):
                by_directory.setdefault(_key(f)[len(SYNC_PATH):], []).append(f)
    if not by_directory:
        return reports
    infos: dict[int, Finding] = {}  # id() of the first finding of a directory -> the directory's info
    for directory, found in by_directory.items():
        n = len(found)
        message = (f"{directory}/ is taken as the cluster's sync path (what bootstrap or a FluxInstance "
                   f"applies): nothing in the repository applies it, and {n} substituteFrom "
                   f"{'reference' if n == 1 else 'references'} of its Flux Kustomizations read "
                   f"objects written there, whose values are used")
        infos[id(found[0])] = Finding(Result(message=message, severity="info", tags=found[0].result.tags[:1]),
                                      found[0].root, found[0].location)
    out = []
    for r in reports:
        kept: list[Finding] = []
        silenced = list(r.suppressed)
        for f in r.findings:
            if id(f) in infos:
                kept.append(infos[id(f)])
            elif _key(f).startswith(SYNC_PATH):
                silenced.append(Suppressed(f, BY, _key(f)[len(SYNC_PATH):]))
            else:
                kept.append(f)
        out.append(dataclasses.replace(r, findings=tuple(kept), suppressed=tuple(silenced)))
    return tuple(out)


def _charts(reports: tuple[RootReport, ...]) -> tuple[RootReport, ...]:
    notices = [f for r in reports for f in r.findings if _chart_key(f)]
    if len(notices) < 2:
        return reports
    counts = Counter(_chart_key(f) for f in notices)
    parts = [f"{n} {_verb(n, 'need')} {key}" + (" (helm pulls them)" if "--network" in key else "")
             for key, n in sorted(counts.items()) if key != NOT_HELD]
    if counts[NOT_HELD]:
        n = counts[NOT_HELD]
        parts.append(f"{n} {_verb(n, 'come')} from sources the repository does not hold or that need "
                     f"credentials")
    message = (f"{len(notices)} charts of HelmReleases and Argo CD Applications were not rendered: "
               f"{'; '.join(parts)} (`krmcheck roots` lists them; the JSON report has each)")
    first = notices[0]
    info = Finding(Result(message=message, severity="info", tags=(("validator", HELM),)),
                   first.root, first.location)
    where = f"{first.location.path}:{first.location.line}"
    out = []
    for r in reports:
        mine = [f for f in r.findings if _chart_key(f)]
        if not mine:
            out.append(r)
            continue
        kept = tuple(f for f in r.findings if not _chart_key(f)) + ((info,) if r.root == first.root else ())
        out.append(dataclasses.replace(r, findings=kept,
                                       suppressed=r.suppressed + tuple(Suppressed(f, BY, where) for f in mine)))
    return tuple(out)


def _verb(n: int, verb: str) -> str:
    return verb + "s" if n == 1 else verb
