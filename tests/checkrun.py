"""A small repository written inline, and one CLI run over it.

``write(root, "app/kustomization.yaml", "...")`` makes the files; ``check``
runs ``krmcheck`` inside ``root`` (a git work tree's top, so paths in
reports are relative to it) and returns the exit code, the text report,
stderr and the JSON report.
"""

from __future__ import annotations

import io
import json
import os
import textwrap
from pathlib import Path
from typing import Any, NamedTuple

from krmcheck import cli
from krmcheck.commands import check as check_command

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
"""

# a Service the API server refuses: protocols are TCP, UDP or SCTP, in capitals (line 8)
SERVICE_LOWERCASE_PROTOCOL = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
    protocol: tcp
"""

def crd(kind: str, schema: str, group: str = "example.com", plural: str | None = None,
        version: str = "v1", scope: str = "Namespaced") -> str:
    """A CustomResourceDefinition of one served, stored version whose
    openAPIV3Schema is ``schema`` (YAML, as written at the schema's own
    indentation); the schema starts at line 15 of the text."""
    plural = plural or kind.lower() + "s"
    body = textwrap.indent(textwrap.dedent(schema).strip("\n"), " " * 8)
    return (f"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
            f"  name: {plural}.{group}\nspec:\n  group: {group}\n  names: {{kind: {kind}, plural: {plural}}}\n"
            f"  scope: {scope}\n  versions:\n  - name: {version}\n    served: true\n    storage: true\n"
            f"    schema:\n      openAPIV3Schema:\n{body}\n")


# a CRD of example.com's Widget that keeps every field
WIDGET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"""


class Run(NamedTuple):
    code: int
    out: str
    err: str
    report: dict[str, Any]

    def located(self, severity: str | None = None) -> list[tuple[str, int, str]]:
        """(path, line, validator) of each reported defect."""
        return [(d["path"], d["line"], d["validator"]) for d in self.report.get("defects", [])
                if severity is None or d["severity"] == severity]

    def suppressed(self) -> list[tuple[str, int, str, str]]:
        return [(s["path"], s["line"], s["validator"], s["by"]) for s in self.report.get("suppressed", [])]


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def check(root: Path, *args: str, cwd: Path | None = None) -> Run:
    """``krmcheck ARGS`` run in ``cwd`` (default ``root``), with a JSON report."""
    (root / ".git").mkdir(exist_ok=True)
    report = root.parent / f"{root.name}-report.json"
    if report.exists():
        report.unlink()
    before = Path.cwd()
    os.chdir(cwd or root)
    try:
        out, err = io.StringIO(), io.StringIO()
        code = check_command.run(cli.parse_check([*args, "--github", "off", "--json", str(report)]),
                                out, err, {})
    finally:
        os.chdir(before)
    doc = json.loads(report.read_text()) if report.exists() and report.stat().st_size else {}
    return Run(code, out.getvalue(), err.getvalue(), doc)
