"""Templates outside Flux: ``substitute:`` and ``placeholders: skip`` in
``.krmcheck.yaml``."""

from __future__ import annotations

import json

from krmcheck.cli import main
from tests.gitops.conftest import Repo

TEMPLATE = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${CLUSTER_NAME}-controller
  namespace: ${NAMESPACE:=capz-system}
spec:
  replicas: ${REPLICAS}
  selector:
    matchLabels:
      app: controller
  template:
    metadata:
      labels:
        app: controller
    spec:
      containers:
      - name: manager
        image: registry.example/manager:v1.0.0
"""


def run(repo: Repo) -> dict:
    out = repo.top.parent / "report.json"
    main([".", "--json", str(out)])
    return json.loads(out.read_text(encoding="utf-8"))


def kept(report: dict) -> list[tuple[str, int, str, str]]:
    return sorted((f["path"], f["line"], f["validator"], f["message"]) for f in report["findings"]
                  if f["validator"] not in ("schema-missing",))


def test_unsubstituted_templates_are_judged_as_written(repo: Repo) -> None:
    repo.write("templates/cluster.yaml", TEMPLATE)
    found = kept(run(repo))
    assert [(p, line, v) for p, line, v, _ in found] == [
        ("templates/cluster.yaml", 4, "metadata"),
        ("templates/cluster.yaml", 7, "schema")]


def test_substitute_gives_templates_their_values(repo: Repo) -> None:
    repo.write("templates/cluster.yaml", TEMPLATE)
    repo.write(".krmcheck.yaml", """
        substitute:
          templates/**:
            CLUSTER_NAME: demo
            REPLICAS: 2
        """)
    assert kept(run(repo)) == []


def test_placeholders_skip(repo: Repo) -> None:
    repo.write("templates/cluster.yaml", TEMPLATE)
    repo.write(".krmcheck.yaml", """
        substitute:
          templates/**:
            CLUSTER_NAME: demo
        placeholders: skip
        """)
    report = run(repo)
    # replicas: ${REPLICAS} is not judged; one info says so; it is listed
    assert kept(report) == [("templates/cluster.yaml", 7, "substitution",
                             "1 finding about values that are wholly a ${...} placeholder that "
                             "nothing substituted were not judged")]
    [silenced] = report["suppressed"]
    assert silenced["by"] == "placeholder"


def test_a_value_partly_a_placeholder_is_still_judged(repo: Repo) -> None:
    repo.write("templates/cluster.yaml", TEMPLATE)
    repo.write(".krmcheck.yaml", "placeholders: skip\n")
    found = kept(run(repo))
    # "${CLUSTER_NAME}-controller" is not wholly a placeholder
    assert [(line, v) for _, line, v, _ in found] == [(4, "metadata"), (7, "substitution")]
