"""Resources that the tests of the function runtime's modules share."""

from __future__ import annotations

from krmcheck.resource.resid import Gvk, ResId
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: p-web
  namespace: apps
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: main
        image: nginx
"""


def resource(text: str, path: str = "base/deployment.yaml") -> Resource:
    doc = load_documents(text, path)[0]
    assert isinstance(doc, Mapping)
    return Resource(doc)


def deployment() -> Resource:
    """DEPLOYMENT with a prefix and two earlier ids, as a build leaves it."""
    res = resource(DEPLOYMENT)
    res.prefixes = ["p-"]
    res.prev_ids = [ResId(Gvk("apps", "v1", "Deployment"), "web", ""),
                    ResId(Gvk("apps", "v1", "Deployment"), "web", "apps")]
    return res
