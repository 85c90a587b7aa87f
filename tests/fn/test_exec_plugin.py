"""Legacy exec plugins: lookup, argv and environment, roles, provenance."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from krmcheck.fn.exec_plugin import plugin_home
from krmcheck.fn.loader import PluginLoader
from krmcheck.kustomize.plugins import FunctionOptions
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.emit import emit_all
from krmcheck.tree.node import lookup
from krmcheck.tree.origin import Origin

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: main
        image: nginx
"""

# A transformer: replicas 3 everywhere, and one new ConfigMap.
SCALER = """\
#!/usr/bin/env python3
import sys
import yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
for d in docs:
    if d["kind"] == "Deployment":
        d["spec"]["replicas"] = 3
docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "added"},
             "data": {"by": "scaler"}})
sys.stdout.write(yaml.safe_dump_all(docs))
"""

# A generator reporting its argv, working directory and environment.
RECORDER = """\
#!/usr/bin/env python3
import json, os, sys
import yaml
data = {"args": json.dumps(sys.argv[2:]), "cwd": os.path.basename(os.getcwd()),
        "config": open(sys.argv[1]).read(), "root": os.environ["KUSTOMIZE_PLUGIN_CONFIG_ROOT"],
        "same": str(open(sys.argv[1]).read() == os.environ["KUSTOMIZE_PLUGIN_CONFIG_STRING"]),
        "stdin": sys.stdin.read()}
print(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "rec", "annotations":
                                   {"kustomize.config.k8s.io/needs-hash": "true"}},
                      "data": data}))
"""


def write(root: Path, rel: str, text: str, executable: bool = False) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def install(root: Path, kind: str, text: str) -> None:
    write(root, f"plugins/example.com/v1/{kind.lower()}/{kind}", text, executable=True)


def build(root: Path, directory: str = "overlay", alpha: bool = True) -> list[Resource]:
    env = {"PATH": os.environ.get("PATH", ""), "KUSTOMIZE_PLUGIN_HOME": str(root / "plugins")}
    options = BuildOptions(enable_alpha_plugins=alpha, functions=FunctionOptions(env=env),
                           plugins=PluginLoader())
    return Builder(Files(root), options).build(root / directory)


def config(kind: str, extra: str = "") -> str:
    return f"apiVersion: example.com/v1\nkind: {kind}\nmetadata:\n  name: cfg\n{extra}"


@pytest.fixture
def scaled(tmp_path: Path) -> list[Resource]:
    install(tmp_path, "Scaler", SCALER)
    write(tmp_path, "base/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "base/kustomization.yaml", "resources:\n- deployment.yaml\n")
    write(tmp_path, "overlay/scaler.yaml", config("Scaler"))
    write(tmp_path, "overlay/kustomization.yaml", "resources:\n- ../base\ntransformers:\n- scaler.yaml\n")
    return build(tmp_path)


def test_transformer_output(scaled: list[Resource]) -> None:
    assert emit_all([r.node for r in scaled]) == """\
apiVersion: v1
data:
  by: scaler
kind: ConfigMap
metadata:
  name: added
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  template:
    spec:
      containers:
      - image: nginx
        name: main
"""


def test_unchanged_field_keeps_its_base_line(scaled: list[Resource]) -> None:
    deployment = scaled[1]
    image = lookup(deployment.node, ["spec", "template", "spec", "containers"]).items[0].items["image"]  # type: ignore[union-attr]
    assert (image.origin, image.trail) == (Origin("base/deployment.yaml", 11, 9, "resource"), ())


def test_changed_field_gets_the_config_line(scaled: list[Resource]) -> None:
    replicas = lookup(scaled[1].node, ["spec", "replicas"])
    assert replicas is not None
    assert replicas.origin == Origin("overlay/scaler.yaml", 1, 1, "plugin")
    assert replicas.trail == (Origin("base/deployment.yaml", 6, 3, "resource"),)


def test_added_resource_points_at_the_config(scaled: list[Resource]) -> None:
    added = scaled[0]
    assert added.node.origin == Origin("overlay/scaler.yaml", 1, 1, "plugin")
    assert lookup(added.node, ["data", "by"]).origin == Origin("overlay/scaler.yaml", 1, 1, "plugin")  # type: ignore[union-attr]


def test_generator_argv_env_cwd_and_hash(tmp_path: Path) -> None:
    install(tmp_path, "Recorder", RECORDER)
    write(tmp_path, "app/args.txt", "  --b\n\n--c  \n")
    write(tmp_path, "app/rec.yaml", config("Recorder", "argsOneLiner: -a 'x y'\nargsFromFile: args.txt\n"))
    write(tmp_path, "app/kustomization.yaml", "generators:\n- rec.yaml\n")
    [res] = build(tmp_path, "app")
    data = {k: v.value for k, v in res.node.mapping("data").items.items()}  # type: ignore[union-attr]
    assert data["args"] == '["-a", "x y", "--b", "--c  "]'
    assert data["cwd"] == "app" and data["root"] == str(tmp_path / "app")
    assert data["same"] == "True" and data["stdin"] == ""
    assert data["config"] == ("apiVersion: example.com/v1\nargsFromFile: args.txt\n"
                              "argsOneLiner: -a 'x y'\nkind: Recorder\nmetadata:\n  name: cfg\n")
    assert res.name.startswith("rec-") and res.annotations() is None


def test_disabled_without_alpha_plugins(tmp_path: Path) -> None:
    write(tmp_path, "app/x.yaml", config("Scaler"))
    write(tmp_path, "app/kustomization.yaml", "transformers:\n- x.yaml\n")
    with pytest.raises(BuildError, match="external plugins disabled; unable to load external plugin 'Scaler'"):
        build(tmp_path, "app", alpha=False)


def test_missing_plugin_names_the_exec_path_and_go_plugin(tmp_path: Path) -> None:
    install(tmp_path, "Scaler", SCALER)
    write(tmp_path, "app/x.yaml", config("Missing"))
    write(tmp_path, "app/kustomization.yaml", "transformers:\n- x.yaml\n")
    with pytest.raises(BuildError) as e:
        build(tmp_path, "app")
    assert "example.com/v1/missing/Missing" in str(e.value) and "Missing.so" in str(e.value)
    assert e.value.location is not None and e.value.location.path == "app/x.yaml"


def test_failing_plugin_keeps_stderr(tmp_path: Path) -> None:
    install(tmp_path, "Failer", "#!/bin/sh\necho 'policy says no' >&2\nexit 3\n")
    write(tmp_path, "app/x.yaml", config("Failer"))
    write(tmp_path, "app/kustomization.yaml", "generators:\n- x.yaml\n")
    with pytest.raises(BuildError, match="exit status 3; its stderr: policy says no"):
        build(tmp_path, "app")


def test_validator_that_echoes_is_rejected(tmp_path: Path) -> None:
    install(tmp_path, "Echo", "#!/bin/sh\ncat\n")
    install(tmp_path, "Quiet", "#!/bin/sh\ncat >/dev/null\n")
    write(tmp_path, "app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
    write(tmp_path, "app/q.yaml", config("Quiet"))
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cm.yaml\nvalidators:\n- q.yaml\n")
    assert [r.name for r in build(tmp_path, "app")] == ["cm"]
    write(tmp_path, "app/e.yaml", config("Echo"))
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cm.yaml\nvalidators:\n- e.yaml\n")
    with pytest.raises(BuildError, match="validator shouldn't modify the resource map.*ConfigMap cm"):
        build(tmp_path, "app")


def test_plugin_home_order(tmp_path: Path) -> None:
    (tmp_path / "home/.config/kustomize/plugin").mkdir(parents=True)
    (tmp_path / "home/kustomize/plugin").mkdir(parents=True)
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "nope"),
           "KUSTOMIZE_PLUGIN_HOME": ""}
    assert plugin_home(env) == tmp_path / "home/.config/kustomize/plugin"
    with pytest.raises(BuildError, match="unable to find plugin root"):
        plugin_home({"HOME": str(tmp_path / "empty")})
