"""An object a widely used controller deletes by name, rather than creating
it, is not judged as one to create: OpenShift's release tombstones."""

from __future__ import annotations

from pathlib import Path

from tests.checkrun import check, write

TOMBSTONE = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: old-installer
  annotations:
    release.openshift.io/delete: "true"
    include.release.openshift.io/self-managed-high-availability: "true"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: old-operator
  namespace: openshift-old
  annotations:
    release.openshift.io/delete: "true"
"""


def test_a_release_tombstone_is_not_judged_as_an_object_to_create(tmp_path: Path) -> None:
    write(tmp_path, "manifests/0000_30_tombstones.yaml", TOMBSTONE)
    run = check(tmp_path)
    assert [d for d in run.report["defects"] if d["severity"] != "info"] == []
    [info] = [d for d in run.report["defects"] if d["severity"] == "info"]
    assert info["message"].startswith('2 objects annotated release.openshift.io/delete: "true" not judged')
    assert "Cluster Version Operator" in info["message"]
    # any other value of the annotation is no deletion: both are judged, as
    # objects of nothing but their metadata, which apply merges onto live ones
    write(tmp_path, "manifests/0000_30_tombstones.yaml", TOMBSTONE.replace('delete: "true"', 'delete: "false"'))
    assert sorted(d["message"] for d in check(tmp_path).report["defects"] if d["severity"] == "warning") == [
        "missing required field 'roleRef'", "missing required field 'spec'"]
    # and with a field of their own, they are objects to create: errors
    parts = TOMBSTONE.replace('delete: "true"', 'delete: "false"').split("---\n")
    write(tmp_path, "manifests/0000_30_tombstones.yaml",
          parts[0] + "subjects: []\n---\n" + parts[1] + "spec:\n  replicas: 1\n")
    assert sorted(d["message"] for d in check(tmp_path).report["defects"] if d["severity"] == "error") == [
        "missing required field 'roleRef'", "spec: missing required field 'selector'",
        "spec: missing required field 'template'"]
