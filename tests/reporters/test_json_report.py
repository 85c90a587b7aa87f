from __future__ import annotations

import io
import json
from typing import Any

from reporter_sample import sample_run

from krmcheck.reporters.json_report import JsonReporter
from krmcheck.results import RunReport


def document(run: RunReport) -> dict[str, Any]:
    out = io.StringIO()
    JsonReporter().write(run, out)
    return json.loads(out.getvalue())


def test_top_level_shape_and_summary() -> None:
    doc = document(sample_run())
    assert list(doc) == ["roots", "findings", "defects", "suppressed", "notes", "disabled",
                         "baseline", "setAside", "inputs", "summary"]
    assert doc["summary"] == {"errors": 2, "warnings": 1, "infos": 1, "defects": 4,
                              "findings": 5, "roots": 4, "suppressed": 1}
    assert [(r["root"], r["buildFailed"], len(r["resources"])) for r in doc["roots"]] == [
        ("overlays/dev", False, 1), ("overlays/prod", False, 3), ("overlays/prod-eu", False, 1),
        ("overlays/staging", True, 0)]


def test_defects_group_the_findings_of_several_roots() -> None:
    doc = document(sample_run())
    [shared] = [d for d in doc["defects"] if d["validator"] == "resource-limits"]
    assert shared["roots"] == ["overlays/prod", "overlays/prod-eu"]
    assert len(shared["fingerprint"]) == 32
    assert len([f for f in doc["findings"] if f["validator"] == "resource-limits"]) == 2


def test_suppressed_findings_are_listed_with_what_silenced_them() -> None:
    [entry] = document(sample_run())["suppressed"]
    assert (entry["validator"], entry["root"], entry["by"], entry["where"]) == (
        "replicas", "overlays/prod-eu", "comment", "base/deploy, v2.yaml:8:20")


def test_finding_fields() -> None:
    labels = document(sample_run())["findings"][2]
    assert labels == {
        "path": "components/labels/patch.yaml", "line": 5, "col": 5, "severity": "info",
        "message": "label app.kubernetes.io/name is missing (want <name> | *none*)",
        "validator": "labels", "root": "overlays/prod",
        "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "prod-app-config",
                        "namespace": "prod"},
        "resourceId": "ConfigMap/prod/prod-app-config",
        "field": "metadata.labels",
        "trail": [
            {"path": "overlays/prod/kustomization.yaml", "line": 6, "col": 1, "by": "commonLabels"},
            {"path": "base/configmap.yaml", "line": 4, "col": 3, "by": "resource"},
        ],
    }


def test_build_error_has_no_resource_or_field() -> None:
    build = document(sample_run())["findings"][-1]
    assert (build["validator"], build["resourceRef"], build["field"]) == ("build", None, None)
