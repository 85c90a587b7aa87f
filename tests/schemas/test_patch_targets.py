"""A kustomization that patches every object of a kind it reads (an
image-automation aggregator) completes objects written incomplete for it;
such an object it does not read yet is no defect of the field."""

from __future__ import annotations

from pathlib import Path

from krmcheck.schemas.patch_targets import matches
from tests.checkrun import check, crd, write

REPO_CRD = crd("ImageRepository", """
    type: object
    properties:
      spec:
        type: object
        required: [image, interval]
        properties:
          image: {type: string}
          interval: {type: string}
          provider: {type: string}
    """, group="image.example.com")

AGGREGATOR = """\
resources:
  - ../../apps/web/image-repo.yaml
patches:
  - path: prod-registry.yaml
    target:
      kind: ImageRepository
      annotationSelector: example.com/image-registry == prod
"""

PATCH = """\
apiVersion: image.example.com/v1
kind: ImageRepository
metadata:
  name: default
spec:
  interval: 5m0s
  provider: azure
"""


def repository(registry: str) -> str:
    return (f"apiVersion: image.example.com/v1\nkind: ImageRepository\nmetadata:\n  name: app\n"
            f"  annotations:\n    example.com/image-registry: {registry}\nspec:\n  image: registry.example.com/app\n")


def flux_kustomization(name: str, path: str) -> str:
    return (f"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, "
            f"namespace: flux-system}}\nspec:\n  path: {path}\n  sourceRef: {{kind: GitRepository, "
            f"name: flux-system}}\n  interval: 10m\n  prune: false\n")


def test_an_object_an_aggregator_completes_by_targeted_patch_is_its_input(tmp_path: Path) -> None:
    write(tmp_path, "crds/image-repository.yaml", REPO_CRD)
    write(tmp_path, "platform/automation/kustomization.yaml", AGGREGATOR)
    write(tmp_path, "platform/automation/prod-registry.yaml", PATCH)
    write(tmp_path, "apps/web/image-repo.yaml", repository("prod"))
    # an app the aggregator does not list yet, written the same way
    write(tmp_path, "apps/api/image-repo.yaml", repository("prod"))
    # another registry, which no patch completes: a missing interval
    write(tmp_path, "apps/jobs/image-repo.yaml", repository("staging"))
    run = check(tmp_path)
    errors = [(p, m) for p, m in ((d["path"], d["message"]) for d in run.report["defects"] if d["severity"] == "error")]
    assert errors == [("apps/jobs/image-repo.yaml", "spec: missing required field 'interval'")]
    assert ("apps/api/image-repo.yaml", "spec: missing required field 'interval'") in [
        (d["path"], d["message"]) for d in run.report["defects"] if d["severity"] == "warning"]
    [note] = [n for n in run.report["notes"] if "targeted at every object" in n["message"]]
    assert "platform/automation/kustomization.yaml" in note["message"] and note["message"].startswith("1 error")
    # a Flux Kustomization applying the app as it is: the field is missing there
    write(tmp_path, "clusters/main/flux-system/kustomization.yaml", "resources: [sync.yaml, api.yaml]\n")
    write(tmp_path, "clusters/main/flux-system/sync.yaml", flux_kustomization("flux-system", "./clusters/main"))
    write(tmp_path, "clusters/main/flux-system/api.yaml", flux_kustomization("api", "./apps/api"))
    assert "apps/api/image-repo.yaml" in {d["path"] for d in check(tmp_path).report["defects"]
                                          if d["severity"] == "error"}


def test_selectors_read_as_kustomize_reads_them() -> None:
    registry = {"example.com/image-registry": "prod"}
    assert matches("example.com/image-registry == prod", registry)
    assert matches("example.com/image-registry=prod", registry)
    assert not matches("example.com/image-registry != prod", registry)
    assert matches("example.com/image-registry != public,example.com/image-registry != private", registry)
    assert matches("example.com/image-registry in (prod, staging)", registry)
    assert not matches("example.com/image-registry notin (prod)", registry)
    assert matches("example.com/image-registry", registry) and not matches("!example.com/image-registry", registry)
    assert matches("example.com/prod-automated != disabled", {})
    assert not matches("a == (b", registry)  # unreadable: selects nothing
