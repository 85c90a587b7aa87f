"""The new validators as a repository configures them in .krmcheck.yaml."""

from __future__ import annotations

from pathlib import Path

from tests.checkrun import DEPLOYMENT, check, write

CRONJOB = """\
apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 1 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: job
            image: busybox:1.36
"""


def _validators(run_report: dict, vid: str) -> list[tuple[str, int, str]]:
    return sorted((d["path"], d["line"], d["severity"]) for d in run_report["defects"] if d["validator"] == vid)


def test_the_workload_pack_runs_only_when_the_configuration_names_it(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- deploy.yaml\n")
    write(tmp_path, "app/deploy.yaml", DEPLOYMENT)
    assert _validators(check(tmp_path, ".").report, "workload") == []
    write(tmp_path, ".krmcheck.yaml", "validators:\n  workload: true\n")
    found = _validators(check(tmp_path, ".").report, "workload")
    assert found and {severity for _, _, severity in found} == {"warning"}
    assert all(path == "app/deploy.yaml" and line >= 14 for path, line, _ in found)


def test_api_version_plans_for_its_own_kubernetes_version(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cron.yaml\n")
    write(tmp_path, "app/cron.yaml", CRONJOB)
    assert _validators(check(tmp_path, ".").report, "api-version") == [("app/cron.yaml", 1, "error")]
    write(tmp_path, ".krmcheck.yaml", "validators:\n  api-version:\n    kubernetes-version: '1.23'\n")
    assert _validators(check(tmp_path, ".").report, "api-version") == [("app/cron.yaml", 1, "warning")]
