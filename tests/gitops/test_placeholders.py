"""Templates outside Flux: ``substitute:`` and ``placeholders:`` in
``.krmcheck.yaml`` (``templates`` by default)."""

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


def test_placeholders_check_judges_templates_as_written(repo: Repo) -> None:
    repo.write("templates/cluster.yaml", TEMPLATE)
    repo.write(".krmcheck.yaml", "placeholders: check\n")
    found = kept(run(repo))
    assert [(p, line, v) for p, line, v, _ in found] == [
        ("templates/cluster.yaml", 4, "metadata"),
        ("templates/cluster.yaml", 7, "schema")]


def test_by_default_a_template_outside_flux_is_not_judged_where_it_holds_placeholders(repo: Repo) -> None:
    # a clusterctl template: ${CLUSTER_NAME}-controller is no name yet, and
    # ${REPLICAS} no number yet; what holds no placeholder is still judged
    repo.write("templates/cluster.yaml", TEMPLATE.replace("image: registry.example/manager:v1.0.0",
                                                          "image: registry.example/manager:v1.0.0\n"
                                                          "        imagePullPolicy: Sometimes"))
    report = run(repo)
    assert [(line, v) for _, line, v, _ in kept(report)] == [(7, "substitution"), (19, "schema")]
    assert {s["by"] for s in report["suppressed"]} == {"placeholder"}
    assert sorted(s["line"] for s in report["suppressed"]) == [4, 7]


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
                             "1 finding about values holding a ${...} placeholder that "
                             "nothing substituted were not judged")]
    [silenced] = report["suppressed"]
    assert silenced["by"] == "placeholder"


def test_placeholders_skip_covers_values_partly_a_placeholder(repo: Repo) -> None:
    repo.write("templates/cluster.yaml", TEMPLATE)
    repo.write(".krmcheck.yaml", "placeholders: skip\n")
    found = kept(run(repo))
    # "${CLUSTER_NAME}-controller" holds a placeholder: its name is not known yet
    assert [(line, v) for _, line, v, _ in found] == [(7, "substitution")]
