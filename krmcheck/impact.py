"""What a pull request's merge will do, across its roots: the images it
replaces, what each root's GitOps controller does with the change
(held while suspended, waiting for a sync, removed objects pruned or
orphaned) and the Namespaces it removes with objects still in them.

It reads the two sides' reports of ``--diff-against`` (each root's rendered
resources and its controller object, :mod:`krmcheck.diff`) after the
comparison; the flags of single objects are :mod:`krmcheck.flags`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from krmcheck import diff as kdiff
from krmcheck.flag_ids import ALL
from krmcheck.flags import pod_spec
from krmcheck.results import (Controller, Finding, Flag, ImageChange, ResourceRef, Result, RootDiff,
                              RootReport)
from krmcheck.tree.origin import Location

SHOWN = 5  # objects named in one line before "and N more"


def review(base: Sequence[RootReport], work: Sequence[RootReport], diffs: Sequence[RootDiff], against: str
           ) -> tuple[tuple[RootDiff, ...], tuple[ImageChange, ...]]:
    """``diffs`` with each root's flags (the work tree's, then what its
    controller does, then Namespaces removed), and the images replaced."""
    by_base = {r.root: r for r in base}
    by_work = {r.root: r for r in work}
    removed_ns = namespaces_removed(base, work, diffs, against)
    out = []
    for d in diffs:
        b, w = by_base.get(d.root), by_work.get(d.root)
        if d.fails:
            out.append(d)
            continue
        ctl = (w or b).controller if (w or b) is not None else None  # type: ignore[union-attr]
        flags = (w.flags if w is not None else ()) + controlled(d, ctl)
        flags += tuple(f for f in removed_ns if f.finding.root == d.root and _pruned_by(ctl))
        out.append(dataclasses.replace(d, flags=flags))
    return tuple(out), images((_rendered(by_base.get(d.root)), _rendered(by_work.get(d.root)))
                              for d in diffs if not d.fails)


def _rendered(report: RootReport | None) -> list[kdiff.Rendered]:
    return [kdiff.Rendered(*r) for r in report.rendered] if report is not None else []


# --- images ----------------------------------------------------------------------------

def images(sides: Iterable[tuple[Sequence[kdiff.Rendered], Sequence[kdiff.Rendered]]]) -> tuple[ImageChange, ...]:
    """Every container and init-container image a changed workload replaces
    (old -> new), with the workloads that use it, each workload once."""
    found: dict[tuple[str, str], dict[str, None]] = {}
    for base, work in sides:
        pairs, _ = kdiff.matched(base, work)
        for before, after in pairs:
            if before is None or before.text == after.text:
                continue
            if pod_spec(after.ref, {})[0]:
                old, new = containers(before), containers(after)
            elif after.ref.kind == "HelmRelease" and after.ref.apiVersion.startswith("helm.toolkit.fluxcd.io/"):
                old, new = helm_images(before), helm_images(after)  # (its chart may not be rendered)
            else:
                continue
            for key, image in new.items():
                was = old.get(key)
                if was is not None and was != image:
                    found.setdefault((was, image), {})[str(after.ref)] = None
    return tuple(ImageChange(old, new, tuple(users)) for (old, new), users in sorted(found.items()))


def containers(r: kdiff.Rendered) -> dict[tuple[str, str], str]:
    """(containers or initContainers, name) -> image of a workload."""
    _, spec = pod_spec(r.ref, kdiff.data_of(r))
    out = {}
    for group in ("initContainers", "containers"):
        listed = spec.get(group)
        for c in listed if isinstance(listed, list) else []:
            if isinstance(c, dict) and isinstance(c.get("image"), str):
                out[(group, str(c.get("name", "")))] = c["image"]
    return out


def helm_images(r: kdiff.Rendered) -> dict[tuple[str, str], str]:
    """The images a HelmRelease's values name, by where they are: an
    ``image`` string, or a mapping with ``repository`` and ``tag`` (and
    ``registry``), as most charts spell them."""
    values = kdiff.get(kdiff.data_of(r), ("spec", "values"))
    out: dict[tuple[str, str], str] = {}

    def walk(node: object, at: str) -> None:
        if isinstance(node, dict):
            repository, tag = node.get("repository"), node.get("tag")
            if isinstance(repository, str) and isinstance(tag, (str, int, float)) and not isinstance(tag, bool):
                registry = node.get("registry")
                prefix = f"{registry}/" if isinstance(registry, str) and registry else ""
                out[("values", at)] = f"{prefix}{repository}:{tag}"
                return
            for k, v in node.items():
                if k == "image" and isinstance(v, str) and v:
                    out[("values", f"{at}.{k}")] = v
                else:
                    walk(v, f"{at}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{at}[{i}]")

    walk(values, "")
    return out


# --- what the controller does ----------------------------------------------------------------

def controlled(d: RootDiff, ctl: Controller | None) -> tuple[Flag, ...]:
    """What the controller applying a root does with its changes: nothing
    while it is suspended, nothing until a sync when it does not sync by
    itself; removed objects are deleted under prune, else left running."""
    if ctl is None or not d.changes:
        return ()
    changed = [c.resource for c in d.changes]
    if ctl.suspended:
        return (_outcome("suspended", d.root, ctl, ctl.suspend_at,
                         f"{_count(changed, 'change')} under {ctl.ref} will not roll out while it is suspended "
                         f"(spec.suspend: true); resuming it applies them at once", changed),)
    if not ctl.automated:
        return (_outcome("manual-sync", d.root, ctl, None,
                         f"{_count(changed, 'change')} under {ctl.ref} wait for a sync: it has no automated "
                         f"sync policy", changed),)
    gone = [c.resource if c.status == "removed" else c.was for c in d.changes if c.status in ("removed", "renamed")]
    if not gone:
        return ()
    if ctl.prune:
        return (_outcome("pruned", d.root, ctl, ctl.prune_at,
                         f"{_count(gone, 'removed object')} {'is' if len(gone) == 1 else 'are'} deleted in the "
                         f"cluster: {ctl.ref} prunes what it no longer applies", gone),)
    why = ("its automated sync policy has no prune: true" if ctl.ref.kind == "Application"
           else "spec.prune is not true")
    return (_outcome("orphaned", d.root, ctl, ctl.prune_at,
                     f"{_count(gone, 'removed object')} {'stays' if len(gone) == 1 else 'stay'} running in the "
                     f"cluster, orphaned: {ctl.ref} does not prune ({why})", gone),)


def _outcome(flag: str, root: str, ctl: Controller, at: Location | None, message: str,
             objects: Sequence[str]) -> Flag:
    result = Result(message=message, severity=ALL[flag].severity, resource_ref=ctl.ref,
                    tags=(("validator", flag),))
    return Flag(flag, Finding(result, root, at or ctl.location), section="controller", objects=tuple(objects))


def _count(items: Sequence[str], noun: str) -> str:
    return f"{len(items)} {noun}" + ("" if len(items) == 1 else "s")


def _pruned_by(ctl: Controller | None) -> bool:
    """Whether a removed object is deleted in the cluster: unknown (so
    assumed) for a root no controller applies."""
    return ctl is None or (ctl.prune and ctl.automated and not ctl.suspended)


# --- Namespaces removed ----------------------------------------------------------------------

def namespaces_removed(base: Sequence[RootReport], work: Sequence[RootReport],
                       diffs: Sequence[RootDiff], against: str) -> list[Flag]:
    """A Namespace that a root rendered at REF and no root renders now,
    while objects are in it (at REF or now): deleting it deletes them. At
    the line that wrote it at REF."""
    compared = {d.root for d in diffs if not d.fails}
    now = {ref.name for r in work for ref in r.resources if _is_namespace(ref)}
    inside: dict[str, list[str]] = {}
    for r in list(base) + list(work):
        for ref in r.resources:
            if ref.namespace and not _is_namespace(ref):
                inside.setdefault(ref.namespace, [])
                if str(ref) not in inside[ref.namespace]:
                    inside[ref.namespace].append(str(ref))
    out = []
    for r in base:
        if r.root not in compared:
            continue
        for ref, at, _ in r.places:
            if _is_namespace(ref) and ref.name not in now and inside.get(ref.name):
                objects = inside[ref.name]
                more = f" and {len(objects) - SHOWN} more" if len(objects) > SHOWN else ""
                message = (f"{ref} is removed while {_count(objects, 'object')} "
                           f"{'is' if len(objects) == 1 else 'are'} in it ({', '.join(objects[:SHOWN])}{more}): "
                           f"deleting it deletes them (where it was written at {against})")
                result = Result(message=message, severity=ALL["namespace-removed"].severity, resource_ref=ref,
                                field_path="metadata.name", tags=(("validator", "namespace-removed"),))
                out.append(Flag("namespace-removed", Finding(result, r.root, at), f"{len(objects)} objects",
                                "removed", objects=tuple(objects)))
    return out


def _is_namespace(ref: ResourceRef) -> bool:
    return ref.kind == "Namespace" and ref.apiVersion == "v1"
