"""Roots that fail only by policy, not by a defect: one finding for the run.

kustomize refuses some roots by default that the repository's own build
accepts with a flag: a kustomization that reads a file outside its
directory (``--load-restrictor LoadRestrictionsNone``, which Flux always
builds with) and one that inflates Helm charts (``--enable-helm``, which an
Argo CD configuration may set for every application). Such a root is no
defect, and thirty of them are not thirty errors: each root's report marks
what it needs (``RootReport.policies``, set by krmcheck.pipeline.root), and
``with_policy_findings`` gives the run one warning for each setting, naming every root
that needs it, on the first such root's report at the entry that needs it
(as ``triage.with_refused`` gives run-wide findings to the first root).

A root that reads outside its directory was checked as it builds with the
restrictor lifted (krmcheck.pipeline.render.lifted): its findings are
real findings. A root whose Helm charts are not inflated is not checked.
A restrictor that ``--load-restrictor`` or ``.krmcheck.yaml`` gives is
kept, and its refusal stays a build error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from krmcheck import config as krmconfig
from krmcheck.gitops import HELM
from krmcheck.gitops.root import ARGOCD, ControllerRoot, Root
from krmcheck.resource.errors import BuildError
from krmcheck.results import Finding, Result, RootReport
from krmcheck.tree.origin import Location

if TYPE_CHECKING:
    from krmcheck.kustomize.target import Builder

LOAD_RESTRICTOR = "load-restrictor"  # the validator id of the load restrictor's finding
PLUGINS = "plugins"  # the id of the finding about roots that run external plugins
HELM_OFF = "must specify --enable-helm to inflate helm charts"  # kustomize's words (builtins/helm.py)
PLUGINS_OFF = "external plugins disabled"  # krmcheck.kustomize.plugins, as kustomize words it


def helm_off(e: BuildError, builder: Builder, root: Root, name: str) -> tuple[str, Location] | None:
    """``(HELM, the chart's entry)`` when the build failed only because it
    inflates Helm charts and --enable-helm is off, which is policy: kustomize
    inflates them only with the flag, and an Argo CD configuration may give
    it (``kustomize.buildOptions``). A Flux Kustomization's build never
    inflates them (kustomize-controller has no such flag): there it is a
    defect, as any other build error."""
    return _needs_flag(e, root, name, builder.options.enable_helm, HELM_OFF, HELM)


def plugins_off(e: BuildError, builder: Builder, root: Root, name: str) -> tuple[str, Location] | None:
    """``(PLUGINS, the plugin's entry)`` when the build failed only because it
    runs an external plugin (a generator or transformer of the repository's
    own kind, a KRM function) and --enable-alpha-plugins is off: kustomize
    runs them only with the flag, which an Argo CD configuration may give
    (``kustomize.buildOptions``). kustomize-controller runs no external
    plugin: under a Flux Kustomization it is a defect, as any build error."""
    return _needs_flag(e, root, name, builder.options.enable_alpha_plugins, PLUGINS_OFF, PLUGINS)


def _needs_flag(e: BuildError, root: Root, name: str, given: bool, words: str,
                setting: str) -> tuple[str, Location] | None:
    """``(setting, the entry)`` when the build failed, in kustomize's
    ``words``, only for want of a flag that was not ``given`` and that an
    Argo CD configuration may give; under another controller it is a defect."""
    if given or words not in e.message:
        return None
    if isinstance(root, ControllerRoot) and root.controller != ARGOCD:
        return None
    location = e.location if e.location is not None and e.location.path else Location(name, 1, 1)
    return (setting, location)


def with_policy_findings(reports: Sequence[RootReport], config: krmconfig.Config) -> tuple[RootReport, ...]:
    """One warning for each policy some roots need, naming them all, given
    to the first of them."""
    out = tuple(reports)
    for setting, message in ((LOAD_RESTRICTOR, _load_restrictor), (HELM, _helm), (PLUGINS, _plugins)):
        marked = [(i, dict(r.policies)[setting]) for i, r in enumerate(out)
                  if any(s == setting for s, _ in r.policies)]
        if not marked or not config.enabled(setting):
            continue
        first, where = marked[0]
        names = [out[i].root for i, _ in marked]
        finding = Finding(Result(message(names), "warning", tags=(("validator", setting),)), out[first].root, where)
        out = out[:first] + (dataclasses.replace(out[first], findings=out[first].findings + (finding,)),) \
            + out[first + 1:]
    return out


def _roots(names: Sequence[str]) -> str:
    return f"{len(names)} root{'' if len(names) == 1 else 's'}"


def _load_restrictor(names: Sequence[str]) -> str:
    one = len(names) == 1
    return (f"{_roots(names)} {'reads' if one else 'read'} files outside {'its' if one else 'their'} directory, "
            f"which kustomize builds only with the load restrictor lifted (--load-restrictor "
            f"LoadRestrictionsNone): {', '.join(names)}; {'it was' if one else 'they were'} checked as so "
            f"built, within the repository; set `load-restrictor: LoadRestrictionsNone` in .krmcheck.yaml "
            f"to say this is intended (`LoadRestrictionsRootOnly` makes {'it' if one else 'each'} a build error)")


def _helm(names: Sequence[str]) -> str:
    verb = "inflates" if len(names) == 1 else "inflate"
    return (f"{_roots(names)} {verb} Helm charts (helmCharts), which kustomize does only with --enable-helm, "
            f"and {'was' if len(names) == 1 else 'were'} not checked: {', '.join(names)}; "
            f"pass --enable-helm (and --network for a chart pulled from a repository) to check "
            f"{'it' if len(names) == 1 else 'them'}")


def _plugins(names: Sequence[str]) -> str:
    one = len(names) == 1
    return (f"{_roots(names)} {'runs' if one else 'run'} external kustomize plugins (generators or transformers "
            f"of kinds kustomize does not build in, KRM functions), which kustomize runs only with "
            f"--enable-alpha-plugins, and {'was' if one else 'were'} not checked: {', '.join(names)}; pass "
            f"--enable-alpha-plugins (with the plugins installed, or --enable-exec for exec functions) to check "
            f"{'it' if one else 'them'}")
