"""A stand-in helm for GitOps chart tests: ``version`` answers v3, and
``template RELEASE CHART [--namespace N] -f VALUES...`` renders the chart's
``templates/*.yaml`` with ``{{ .Values.a.b }}``, ``{{ .Release.Name }}``,
``{{ .Release.Namespace }}`` and ``{{ .Chart.Name }}`` (an optional
``| quote``), values from the chart's values.yaml under the -f files, as
helm coalesces them. ``pull --untar --untardir DIR [--repo URL] REF
[--version V]`` copies ``remote/NAME`` next to it (NAME: the last part of
REF, without an ``@digest``) to ``DIR/NAME``, standing in for a chart
repository; it touches no network. Each call's argv and values files go to
calls.jsonl next to it."""

from __future__ import annotations

import sys
from pathlib import Path

SCRIPT = r'''
import json, os, re, shutil, sys
import yaml

here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
values_files = [args[i + 1] for i, a in enumerate(args) if a == "-f"]
with open(os.path.join(here, "calls.jsonl"), "a") as log:
    log.write(json.dumps({"argv": args, "values": [open(f).read() for f in values_files]}) + "\n")
if args[:1] == ["version"]:
    print("v3.15.0+gfake")
    sys.exit(0)
if args[:1] == ["pull"]:
    takes_value = ("--untardir", "--repo", "--version")
    refs = [a for i, a in enumerate(args[1:], 1) if not a.startswith("--") and args[i - 1] not in takes_value]
    name = refs[0].rstrip("/").rsplit("/", 1)[-1].split("@")[0]
    source = os.path.join(here, "remote", name)
    if len(refs) != 1 or not os.path.isdir(source):
        print(f"Error: chart {refs} not found", file=sys.stderr)
        sys.exit(1)
    shutil.copytree(source, os.path.join(args[args.index("--untardir") + 1], name))
    sys.exit(0)
if args[:1] != ["template"]:
    sys.exit(3)
release, chart = args[1], args[2]
namespace = args[args.index("--namespace") + 1] if "--namespace" in args else "default"


def merge(base, over):
    out = dict(base)
    for k, v in over.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


values = {}
default = os.path.join(chart, "values.yaml")
if os.path.exists(default):
    values = yaml.safe_load(open(default)) or {}
for f in values_files:
    values = merge(values, yaml.safe_load(open(f)) or {})
name = yaml.safe_load(open(os.path.join(chart, "Chart.yaml")))["name"]
scope = {"Values": values, "Release": {"Name": release, "Namespace": namespace}, "Chart": {"Name": name}}


def value(m):
    expr, quote = m.group(1), m.group(2)
    v = scope
    for part in expr.lstrip(".").split("."):
        v = v.get(part) if isinstance(v, dict) else None
    text = "" if v is None else (str(v).lower() if isinstance(v, bool) else str(v))
    return json.dumps(text) if quote else text


templates = os.path.join(chart, "templates")
for t in sorted(os.listdir(templates)):
    if t.endswith(".yaml"):
        text = open(os.path.join(templates, t)).read()
        print(f"---\n# Source: {name}/templates/{t}")
        print(re.sub(r"\{\{-?\s*(\.[\w.]+)\s*(\|\s*quote)?\s*-?\}\}", value, text).rstrip("\n"))
'''


def install(directory: Path) -> Path:
    """Write the stand-in helm into ``directory``; its path."""
    directory.mkdir(parents=True, exist_ok=True)
    helm = directory / "helm"
    helm.write_text(f"#!{sys.executable}\n" + SCRIPT, encoding="utf-8")
    helm.chmod(0o755)
    return helm
