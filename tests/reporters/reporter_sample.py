"""A hand-built run shared by the reporter tests.

Four roots, given out of order: a production overlay with an error (an
image tag an overlay rewrote, so it has a trail), a warning in a file whose
name holds a comma and a multi-line message, and an info with Markdown/HTML
punctuation that a component patch wrote last (a trail of two); a second
production overlay that renders the same base warning (one defect, two
roots) and has a finding an ignore comment suppressed; a staging overlay
that failed to build (a finding with no resource); and a clean dev overlay.
"""

from __future__ import annotations

import dataclasses

from krmcheck.results import Finding, Note, ResourceRef, Result, RootReport, RunReport, Suppressed
from krmcheck.tree.origin import Location, Origin

WEB = ResourceRef("apps/v1", "Deployment", "prod-web", "prod")
SVC = ResourceRef("v1", "Service", "prod-web", "prod")
CONFIG = ResourceRef("v1", "ConfigMap", "prod-app-config", "prod")
DEV_WEB = ResourceRef("apps/v1", "Deployment", "dev-web")


def finding(message: str, severity: str, validator: str, root: str, location: Location,
            ref: ResourceRef | None = None, field: str = "",
            trail: tuple[Origin, ...] = ()) -> Finding:
    result = Result(message, severity, ref, field, tags=(("validator", validator),))
    return Finding(result, root, location, trail)


IMAGE_TAG = finding(
    'image "nginx" uses tag "latest"; pin 100% of images', "error", "image-tag",
    "overlays/prod", Location("overlays/prod/kustomization.yaml", 9, 13), WEB,
    "spec.template.spec.containers[name=web].image",
    (Origin("base/deployment.yaml", 20, 16, "resource"),))
NO_LIMIT = finding(
    'container "web" has no memory limit\nset resources.limits.memory', "warning",
    "resource-limits", "overlays/prod", Location("base/deploy, v2.yaml", 14, 9), WEB,
    "spec.template.spec.containers[0].resources")
LABEL = finding(
    "label app.kubernetes.io/name is missing (want <name> | *none*)", "info", "labels",
    "overlays/prod", Location("components/labels/patch.yaml", 5, 5), CONFIG, "metadata.labels",
    (Origin("base/configmap.yaml", 4, 3, "resource"),
     Origin("overlays/prod/kustomization.yaml", 6, 1, "commonLabels")))
BUILD = finding(
    "accumulating resources from ../../base-missing: no such directory", "error", "build",
    "overlays/staging", Location("overlays/staging/kustomization.yaml", 4, 3))


EU_WEB = ResourceRef("apps/v1", "Deployment", "eu-web", "eu")
NO_LIMIT_EU = dataclasses.replace(
    NO_LIMIT, root="overlays/prod-eu",
    result=dataclasses.replace(NO_LIMIT.result, resource_ref=EU_WEB))
IGNORED = finding(
    "replicas: 1 is below the minimum of 2", "error", "replicas", "overlays/prod-eu",
    Location("base/deploy, v2.yaml", 8, 13), EU_WEB, "spec.replicas")


def sample_run(fail_on: str = "error") -> RunReport:
    return RunReport((
        RootReport("overlays/staging", (), (BUILD,), build_failed=True),
        RootReport("overlays/prod", (WEB, SVC, CONFIG), (LABEL, IMAGE_TAG, NO_LIMIT),
                   coverage=(("apps/v1", "Deployment", "built-in", "Kubernetes 1.37", 1),
                             ("v1", "Service", "built-in", "Kubernetes 1.37", 1),
                             ("example.com/v1", "Widget", "", "", 2))),
        RootReport("overlays/prod-eu", (EU_WEB,), (NO_LIMIT_EU,),
                   suppressed=(Suppressed(IGNORED, "comment", "base/deploy, v2.yaml:8:20"),)),
        RootReport("overlays/dev", (DEV_WEB,), ()),
    ), fail_on, notes=(Note("baseline b.json: no finding matches the entry [image-tag] "
                            "Deployment/api: old; it can be removed", Location("base/api.yaml", 0, 0)),))
