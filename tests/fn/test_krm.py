"""KRM functions named by plugin configs: spec decoding, container and exec runs."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from krmcheck.fn import krm
from krmcheck.fn.loader import PluginLoader
from krmcheck.kustomize.plugins import Config, FunctionOptions
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping, lookup
from krmcheck.tree.origin import Origin

# Stands in for docker: records its arguments, then runs fn.py next to it.
FAKE_DOCKER = """\
#!/bin/sh
dir=$(dirname "$0")
printf '%s\\n' "$@" > "$dir/argv.txt"
exec python3 "$dir/fn.py"
"""

# Annotates every item and reports one result about the Service.
ANNOTATE = """\
import sys
import yaml
rl = yaml.safe_load(sys.stdin)
for item in rl["items"]:
    item["metadata"].setdefault("annotations", {})["seen"] = "yes"
rl["results"] = [{"message": "port 80 is plain http", "severity": "warning",
                  "resourceRef": {"apiVersion": "v1", "kind": "Service", "name": "web"},
                  "field": {"path": "spec.ports[0].port"}}]
print("annotated", file=sys.stderr)
yaml.safe_dump(rl, sys.stdout)
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
"""


def write(root: Path, rel: str, text: str, executable: bool = False) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def fn_config(spec: str, kind: str = "Annotator") -> str:
    body = "".join(f"      {line}\n" for line in spec.splitlines())
    return (f"apiVersion: example.com/v1\nkind: {kind}\nmetadata:\n  name: fn\n  annotations:\n"
            f"    config.kubernetes.io/function: |\n{body}")


def builder(root: Path, **options: object) -> Builder:
    env = {"PATH": f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    functions = FunctionOptions(env=env, **options)  # type: ignore[arg-type]
    return Builder(Files(root), BuildOptions(enable_alpha_plugins=True, functions=functions,
                                                  plugins=PluginLoader()))


@pytest.fixture
def app(tmp_path: Path) -> Path:
    write(tmp_path, "bin/docker", FAKE_DOCKER, executable=True)
    write(tmp_path, "bin/fn.py", ANNOTATE)
    write(tmp_path, "app/service.yaml", SERVICE)
    write(tmp_path, "app/fn.yaml", fn_config("container:\n  image: example.com/annotate:v1"))
    write(tmp_path, "app/kustomization.yaml", "resources:\n- service.yaml\ntransformers:\n- fn.yaml\n")
    return tmp_path


def test_container_transformer(app: Path) -> None:
    b = builder(app)
    [res] = b.build(app / "app")
    ann = res.annotations()
    assert ann is not None and dict((k, v.to_data()) for k, v in ann.items.items()) == {"seen": "yes"}
    argv = (app / "bin/argv.txt").read_text().split("\n")
    assert argv[:14] == ["run", "--rm", "-i", "-a", "STDIN", "-a", "STDOUT", "-a", "STDERR",
                         "--network", "none", "--user", "nobody", "--security-opt=no-new-privileges"]
    assert argv[-2] == "example.com/annotate:v1"


def test_container_provenance(app: Path) -> None:
    [res] = builder(app).build(app / "app")
    port = lookup(res.node, ["spec", "ports"]).items[0].items["port"]  # type: ignore[union-attr]
    assert (port.origin, port.trail) == (Origin("app/service.yaml", 7, 5, "resource"), ())
    seen = lookup(res.node, ["metadata", "annotations", "seen"])
    assert seen is not None and seen.origin == Origin("app/fn.yaml", 1, 1, "function")


def test_results_are_kept_on_the_builder(app: Path) -> None:
    b = builder(app)
    [res] = b.build(app / "app")
    [(result, about)] = b.function_results
    assert (result.message, result.severity, result.field_path) == (
        "port 80 is plain http", "warning", "spec.ports[0].port")
    assert about is not None and about.name == "web"


def test_network_needs_the_flag(app: Path) -> None:
    write(app, "app/fn.yaml", fn_config("container:\n  image: x\n  network: true"))
    with pytest.raises(BuildError, match="network required but not enabled with --network"):
        builder(app).build(app / "app")


def test_exec_function_needs_enable_exec(tmp_path: Path) -> None:
    write(tmp_path, "app/fns/fail.sh", "#!/bin/sh\necho 'it ran' >&2\nexit 1\n", executable=True)
    write(tmp_path, "app/service.yaml", SERVICE)
    write(tmp_path, "app/fn.yaml", fn_config("exec:\n  path: ./fns/fail.sh"))
    write(tmp_path, "app/kustomization.yaml", "resources:\n- service.yaml\ntransformers:\n- fn.yaml\n")
    assert [r.name for r in builder(tmp_path).build(tmp_path / "app")] == ["web"]
    with pytest.raises(BuildError, match="--enable-exec.*exit status 1; its stderr: it ran"):
        builder(tmp_path, enable_exec=True).build(tmp_path / "app")


def _config(text: str) -> Config:
    doc = load_documents(text, "fn.yaml")[0]
    assert isinstance(doc, Mapping)
    return Config(doc, Origin("kustomization.yaml", 3, 3))


@pytest.mark.parametrize("text", [
    fn_config("container:\n  image: img:v1\n  envs: [A=1]"),
    fn_config("container:\n  image: img:v1\n  envs: [A=1]").replace("kubernetes.io/function", "k8s.io/function"),
    "apiVersion: x/v1\nkind: K\nmetadata:\n  name: n\n  configFn:\n    container:\n"
    "      image: img:v1\n      envs: [A=1]\n",
])
def test_spec_spellings(text: str, tmp_path: Path) -> None:
    spec = krm.spec_of(_config(text), tmp_path)
    assert spec is not None and (spec.image, spec.envs) == ("img:v1", ("A=1",))


def test_container_annotation(tmp_path: Path) -> None:
    text = ("apiVersion: x/v1\nkind: K\nmetadata:\n  name: n\n  annotations:\n"
            "    config.kubernetes.io/container: img:v2\n")
    spec = krm.spec_of(_config(text), tmp_path)
    assert spec is not None and spec.image == "img:v2"
    assert krm.spec_of(_config("apiVersion: x/v1\nkind: K\nmetadata:\n  name: n\n"), tmp_path) is None


def test_strict_decoding(tmp_path: Path) -> None:
    config = _config(fn_config("container:\n  image: img\n  imagePullPolicy: Always"))
    with pytest.raises(BuildError, match='unknown field "imagePullPolicy"') as e:
        krm.spec_of(config, tmp_path)
    assert e.value.location is not None and e.value.location.line == 6


@pytest.mark.parametrize("src, why", [("/etc", "relative to"), ("../shared", "under"),
                                      ("a/../../x", "under")])
def test_mounts_stay_below_the_kustomization(src: str, why: str, tmp_path: Path) -> None:
    config = _config(fn_config(f"container:\n  image: img\n  mounts:\n  - type: bind\n"
                               f"    src: {src}\n    dst: /d"))
    with pytest.raises(BuildError, match=f"mount path '{src}' is not permitted; mount paths must be {why}"):
        krm.spec_of(config, tmp_path)


def test_generator_gets_its_own_config(app: Path) -> None:
    write(app, "bin/fn.py", "import sys\nsys.stdout.write(sys.stdin.read())\n")
    write(app, "app/kustomization.yaml", "generators:\n- fn.yaml\n")
    b = builder(app)
    assert b.build(app / "app") == []  # the config came back marked local-config
    argv = json.dumps((app / "bin/argv.txt").read_text().split("\n"))
    assert "LOG_TO_STDERR=true" in argv


def test_stderr_is_kept(app: Path) -> None:
    b = builder(app)
    b.build(app / "app")
    assert b.function_logs == [("function container example.com/annotate:v1", "annotated\n")]
