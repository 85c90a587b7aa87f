"""Kinds the cluster has no API for, and the served kind nearest to one.

The API server (and kubectl before it, through discovery) maps an object's
apiVersion and kind to a resource exactly, case included: ``kind: configmap``
in ``v1`` is refused (``no matches for kind "configmap" in version "v1"``).
Only a group whose kinds are known can tell. A built-in group/version of
the chosen Kubernetes version serves the kinds its packaged definitions
list, and no other. A group the repository's CRDs own has the kinds they
define, but often others defined elsewhere too (a chart's CRDs, Crossplane's
XRDs, another project sharing the group): there only a near miss of one of
its kinds is refused. A group nobody here owns tells nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from krmcheck.schemas import builtin
from krmcheck.schemas.sources import Sources

# Kinds of the definitions that are no object one applies: never suggested.
_NOT_OBJECTS = frozenset({"DeleteOptions", "WatchEvent", "Status", "APIGroup", "APIGroupList",
                          "APIResourceList", "APIVersions"})
NEAR = 2  # the largest edit distance (case ignored) at which a served kind is named
_LISTED = 6  # kinds listed when none is near

# OpenShift 3 served its kinds ungrouped, in "v1" beside the core kinds
# (openshift/api: each group's v1/legacy.go registers them in the legacy
# group version). OpenShift 4's API server serves them only in their own
# groups; oc went on converting the ungrouped form on the client, with a
# deprecation warning ("Using non-groupfied API resources is deprecated"),
# until oc 4.17 stopped loading the legacy scheme (openshift/oc 109236a,
# 2024), so that `oc process` and `oc apply` refuse it. The kinds one writes
# in a manifest -> the group/version that serves them now.
UNGROUPED_OPENSHIFT: dict[str, str] = {
    **dict.fromkeys(("DeploymentConfig",), "apps.openshift.io/v1"),
    **dict.fromkeys(("RoleBindingRestriction",), "authorization.openshift.io/v1"),
    **dict.fromkeys(("Build", "BuildConfig"), "build.openshift.io/v1"),
    **dict.fromkeys(("ImageStream", "ImageStreamTag", "ImageStreamImport", "ImageStreamMapping"),
                    "image.openshift.io/v1"),
    **dict.fromkeys(("ClusterNetwork", "HostSubnet", "NetNamespace", "EgressNetworkPolicy"),
                    "network.openshift.io/v1"),
    **dict.fromkeys(("OAuthClient", "OAuthClientAuthorization"), "oauth.openshift.io/v1"),
    **dict.fromkeys(("Project", "ProjectRequest"), "project.openshift.io/v1"),
    **dict.fromkeys(("ClusterResourceQuota",), "quota.openshift.io/v1"),
    **dict.fromkeys(("Route",), "route.openshift.io/v1"),
    **dict.fromkeys(("SecurityContextConstraints",), "security.openshift.io/v1"),
    **dict.fromkeys(("Template",), "template.openshift.io/v1"),
    **dict.fromkeys(("User", "Identity", "Group", "UserIdentityMapping"), "user.openshift.io/v1"),
}


REFUSED_BY = "refused-by"  # a Result's tag: a tool that refuses the object too (not only the cluster)


def openshift_group(api_version: str, kind: str) -> str | None:
    """The group/version that serves ``kind`` where ``api_version`` is
    OpenShift 3's ungrouped ``v1`` form of it, else None."""
    return UNGROUPED_OPENSHIFT.get(kind) if api_version == "v1" else None


class Unknown(NamedTuple):
    """A kind its group/version does not serve."""

    api_version: str
    kind: str
    builtin: bool  # a built-in group/version; else a group the repository's CRDs own
    served: tuple[str, ...]  # the kinds it does serve, sorted (for CRDs: those near the kind)
    nearest: tuple[str, ...]  # those nearest the kind (empty: none is near)
    elsewhere: tuple[str, ...] = ()  # built-in group/versions that serve the kind itself

    def message(self, version: str) -> str:
        group = self.api_version.rpartition("/")[0]
        if self.builtin:
            head = (f"no kind \"{self.kind}\" in {self.api_version}: Kubernetes {version} has no such kind "
                    f"(kubectl: no matches for kind \"{self.kind}\" in version \"{self.api_version}\")")
        else:
            head = (f"no kind \"{self.kind}\" in {self.api_version}: the repository holds CRDs of {group} "
                    f"and none defines it")
        grouped = openshift_group(self.api_version, self.kind) if self.builtin else None
        if grouped is not None:
            return (f"{head}; v1 {self.kind} is OpenShift 3's ungrouped form: OpenShift serves {self.kind} "
                    f"only in {grouped}, and oc stopped converting the old form in 4.17; write apiVersion: "
                    f"{grouped}")
        if self.nearest:
            return f"{head}; did you mean {' or '.join(self.nearest)}?"
        if self.elsewhere:
            return f"{head}; {self.kind} is served in {', '.join(self.elsewhere)}"
        more = f" and {len(self.served) - _LISTED} more" if len(self.served) > _LISTED else ""
        return f"{head}; {self.api_version} serves {', '.join(self.served[:_LISTED])}{more}"


def unknown(sources: Sources, api_version: str, kind: str, version: str) -> Unknown | None:
    """Why the cluster has no API for ``kind`` in ``api_version``, or None when
    it may have one (a ``...List``, which kubectl and kustomize expand; a
    group nobody here owns; a kind of a CRD group that is near none of its
    kinds; a built-in group/version no longer served, which the api-version
    validator reports)."""
    if kind.endswith("List"):
        return None
    group = api_version.rpartition("/")[0]
    served = builtin.group_version_kinds(version, api_version)
    if served:
        if kind in served:
            return None
        return _unknown(api_version, kind, True, served)._replace(elsewhere=builtin.serving(version, kind))
    if group:
        # Only a near miss: a group's kinds are often defined apart (a chart's
        # CRDs, Crossplane's XRDs, another project of the group: Argo Events
        # and Argo Workflows share argoproj.io; examples share example.com).
        defined = sources.crd_kinds_near(group, kind, is_near)
        if defined and kind not in defined:
            return _unknown(api_version, kind, False, defined)
    return None


def _unknown(api_version: str, kind: str, in_builtin: bool, served: Iterable[str]) -> Unknown:
    # a built-in group/version's lists and request kinds are no kind to suggest
    objects = sorted(k for k in served if not in_builtin or (k not in _NOT_OBJECTS and not k.endswith("List")))
    return Unknown(api_version, kind, in_builtin, tuple(objects), nearest(kind, objects))


def is_near(kind: str, other: str) -> bool:
    """Whether ``other`` is ``kind`` but for case, or at most :data:`NEAR` edits away."""
    return kind.lower() == other.lower() or distance(kind.lower(), other.lower()) <= NEAR


def nearest(kind: str, known: Iterable[str]) -> tuple[str, ...]:
    """The known kinds equal to ``kind`` but for case, else those at the
    smallest edit distance up to :data:`NEAR` (case ignored; swapping two
    neighbours is one edit: ``Deploymnet`` is ``Deployment``)."""
    known = sorted(set(known))
    same = tuple(k for k in known if k.lower() == kind.lower())
    if same:
        return same
    scored = [(distance(kind.lower(), k.lower()), k) for k in known]
    best = min((d for d, _ in scored), default=NEAR + 1)
    return tuple(k for d, k in scored if d == best) if best <= NEAR else ()


def distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap of neighbours) from ``a`` to ``b``
    (optimal string alignment); past :data:`NEAR`, the difference in length
    may stand for it (a lower bound)."""
    if abs(len(a) - len(b)) > NEAR:
        return abs(len(a) - len(b))
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
    return row[len(b)]
