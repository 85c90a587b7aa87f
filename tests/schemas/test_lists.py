"""x-kubernetes-list-type: map: items with the same keys are refused."""

from __future__ import annotations

from pathlib import Path

from krmcheck.schemas import lists
from tests.checkrun import check, write

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - {containerPort: 80, protocol: TCP}
        - {containerPort: 80, protocol: UDP}
        - {containerPort: 80, protocol: TCP}
      - name: web
        image: nginx:1.27
"""


def test_built_in_lists_with_repeated_keys_are_errors_at_the_repeat(tmp_path: Path) -> None:
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    run = check(tmp_path, "app")
    assert sorted((d["line"], d["message"]) for d in run.report["defects"]) == [
        (15, "spec.template.spec.containers[0].ports[2]: duplicate entry (containerPort=80, "
             "protocol='TCP'): item 0 has the same keys"),
        (16, "spec.template.spec.containers[1]: duplicate entry (name='web'): item 0 has the same key"),
    ]


def test_a_missing_key_counts_with_its_default() -> None:
    schema = {"type": "object", "properties": {"ports": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
        "items": {"type": "object", "properties": {"port": {"type": "integer"},
                                                   "protocol": {"type": "string", "default": "TCP"}}}}}}
    data = {"ports": [{"port": 1}, {"port": 1, "protocol": "TCP"}, {"port": 1, "protocol": "UDP"}]}
    assert lists.duplicates(schema, data) == [
        (("ports", 1), "duplicate entry (port=1, protocol='TCP'): item 0 has the same keys")]


ENV_TWICE = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: web
    image: nginx:1.27
    env:
    - {name: MODE, value: fast}
    - {name: MODE, value: safe}
    - {name: PATH_EXTRA, value: /a}
    - {name: PATH_EXTRA, value: "$(PATH_EXTRA):/b"}
"""


def test_an_env_name_twice_is_what_the_api_server_warns_of_and_flux_refuses(tmp_path: Path) -> None:
    # the API server keeps both and warns (the later wins), except where the
    # later builds on the earlier; server-side apply, Flux's, refuses it
    write(tmp_path, "app/pod.yaml", ENV_TWICE)
    run = check(tmp_path, "app")
    assert [(d["line"], d["severity"]) for d in run.report["defects"]] == [(11, "warning")]
    assert "hides previous definition of 'MODE'" in run.report["defects"][0]["message"]
    write(tmp_path, "clusters/prod/app.yaml", """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system}
spec:
  interval: 10m
  path: ./app
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
""")
    run = check(tmp_path)
    assert [(d["path"], d["line"], d["severity"], d["roots"]) for d in run.report["defects"]
            if d["severity"] != "info"] == [("app/pod.yaml", 11, "error", ["flux:flux-system/app"])]
