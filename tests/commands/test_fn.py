"""``krmcheck fn ID``: built-in validators as an exec KRM function."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from krmcheck.cli import main
from krmcheck.commands import fn as serve
from krmcheck.tree.load import load_documents
from krmcheck.validators import VALIDATORS, ValidatorOptions

PROJECT = Path(__file__).resolve().parents[2]

# What kpt 1.0 sends (checked with `kpt fn eval --exec`): both spellings of
# the path and index annotations, its ids, and a ConfigMap functionConfig.
KPT_INPUT = """\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'deploy.yaml'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: 'deploy.yaml'
      internal.config.kubernetes.io/seqindent: 'compact'
      internal.config.kubernetes.io/id: '1'
      config.k8s.io/id: '1'
  spec:
    replicas: '3'
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec:
        containers:
        - name: web
          image: nginx:latest
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
    annotations:
      config.kubernetes.io/index: '1'
      config.kubernetes.io/path: 'deploy.yaml'
      internal.config.kubernetes.io/index: '1'
      internal.config.kubernetes.io/path: 'deploy.yaml'
  data:
    mode: fast
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: function-input
  data: {DATA}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: app
    image: nginx
"""


def run(ids: list[str], text: str, defaults: ValidatorOptions = ValidatorOptions()) -> tuple[int, dict, str]:
    out, err = io.StringIO(), io.StringIO()
    code = serve.serve(ids, io.StringIO(text), out, err, defaults)
    return code, (yaml.safe_load(out.getvalue()) if out.getvalue() else {}), err.getvalue()


def kpt_input(data: str = "{}") -> str:
    return KPT_INPUT.replace("{DATA}", data)


def test_results_in_the_krm_functions_format() -> None:
    code, answer, _ = run(["schema"], kpt_input())
    assert code == 1
    [result] = answer["results"]
    assert result["message"] == "spec.replicas: '3' is not of type 'integer'"
    assert result["severity"] == "error"
    assert result["resourceRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    assert result["field"] == {"path": "spec.replicas"}
    assert result["file"] == {"path": "deploy.yaml", "index": 0}
    assert result["tags"]["validator"] == "schema" and result["tags"]["rule"] == "type"


def test_file_index_comes_from_the_items_annotations() -> None:
    text = kpt_input().replace("name: settings", "name: Bad_Name")
    _, answer, _ = run(["metadata"], text)
    assert [(r["resourceRef"]["name"], r["file"]) for r in answer["results"]] == [
        ("Bad_Name", {"path": "deploy.yaml", "index": 1})]


def test_legacy_path_annotation_alone_is_enough() -> None:
    text = POD.replace("  name: p\n", "  name: p\n  annotations:\n    config.kubernetes.io/path: pods/p.yaml\n"
                                      "    config.kubernetes.io/index: '2'\n")
    _, answer, _ = run(["image-tag"], text)
    assert answer["results"][0]["file"] == {"path": "pods/p.yaml", "index": 2}


def test_validators_never_see_the_wire_annotations() -> None:
    # strict schema and the metadata validator would judge them otherwise;
    # the items are the resources as the cluster will get them
    _, answer, _ = run(["metadata", "schema"], kpt_input(), ValidatorOptions(strict=True))
    assert not any("annotations" in r.get("field", {}).get("path", "") for r in answer["results"])


def test_items_go_back_byte_for_byte() -> None:
    text = kpt_input()
    code, _, _ = run(["image-tag"], text)
    out = io.StringIO()
    serve.serve(["image-tag"], io.StringIO(text), out, io.StringIO())
    assert out.getvalue().startswith(text)
    assert out.getvalue()[len(text):].startswith("results:\n- ")
    assert code == 0  # image-tag reports warnings


def test_no_results_leaves_the_input_unchanged_and_exits_0() -> None:
    text = kpt_input().replace("nginx:latest", "nginx:1.27")
    out = io.StringIO()
    assert serve.serve(["image-tag"], io.StringIO(text), out, io.StringIO()) == 0
    assert out.getvalue() == text


def test_warnings_and_infos_do_not_fail() -> None:
    crd = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n"
    code, answer, _ = run(["schema"], crd)
    assert code == 0
    assert [r["severity"] for r in answer["results"]] == ["info"]


def test_plain_yaml_stream_becomes_a_resource_list() -> None:
    code, answer, _ = run(["image-tag"], POD + "---\n" + POD.replace("name: p", "name: q"))
    assert code == 0  # image-tag reports warnings
    assert answer["apiVersion"] == "config.kubernetes.io/v1" and answer["kind"] == "ResourceList"
    assert [i["metadata"]["name"] for i in answer["items"]] == ["p", "q"]
    assert [r["field"]["path"] for r in answer["results"]] == ["spec.containers[0].image"] * 2
    assert "file" not in answer["results"][0]


def test_earlier_results_are_kept() -> None:
    text = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
            + "".join(f"- {line}\n" if i == 0 else f"  {line}\n" for i, line in enumerate(POD.splitlines()))
            + "results:\n- message: from before\n  severity: info\n")
    _, answer, _ = run(["image-tag"], text)
    assert [r["message"] for r in answer["results"]][0] == "from before"
    assert len(answer["results"]) == 2


@pytest.mark.parametrize("data, strict", [("{strict: 'true'}", True), ("{strict: 'false'}", False), ("{}", False)])
def test_strict_from_a_config_map(data: str, strict: bool) -> None:
    text = kpt_input(data).replace("replicas: '3'", "replicas: 3\n    colour: blue")
    _, answer, _ = run(["schema"], text)
    unknown = [r["severity"] for r in answer.get("results", []) if r["field"]["path"] == "spec.colour"]
    assert unknown == ["error" if strict else "warning"]


def test_options_from_a_custom_kind_and_defaults_from_flags() -> None:
    config = load_documents("apiVersion: fn.krmcheck.dev/v1\nkind: SchemaOptions\nspec:\n  strict: true\n", "f")[0]
    assert serve.options(config, ValidatorOptions("1.29")) == ValidatorOptions("1.29", True)
    assert serve.options(None, ValidatorOptions("1.29", True)) == ValidatorOptions("1.29", True)


def test_kubernetes_version_from_the_config_map() -> None:
    config = load_documents("kind: ConfigMap\ndata:\n  kubernetesVersion: v1.29\n", "f")[0]
    assert serve.options(config, ValidatorOptions()).kubernetes_version == "v1.29"


@pytest.mark.parametrize("data, fragment", [
    ("{strict: maybe}", "strict must be true or false"),
    ("{colour: blue}", "unknown option 'colour'"),
    ("{kubernetesVersion: '0.1'}", "unknown Kubernetes version"),
])
def test_bad_function_config_is_an_error_result(data: str, fragment: str) -> None:
    code, answer, _ = run(["schema"], kpt_input(data))
    assert code == 1
    assert len(answer["results"]) == 1
    assert fragment in answer["results"][0]["message"]
    assert answer["items"]  # the items still go back


def test_unparsable_input_exits_2_with_a_located_message() -> None:
    code, answer, err = run(["schema"], "items: [\n")
    assert code == 2 and answer == {}
    assert err.startswith("krmcheck fn: stdin:") and "invalid YAML" in err


def test_item_that_is_not_a_map() -> None:
    code, _, err = run(["schema"], "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- just text\n")
    assert code == 2 and "item 0 is not a resource" in err


def test_cli_rejects_unknown_validators(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["fn", "nope"])
    assert e.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("vid", sorted(VALIDATORS))
def test_every_validator_runs_as_a_process(vid: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "krmcheck", "fn", vid], input=POD, text=True,
                          capture_output=True, cwd=PROJECT, check=False)
    answer = yaml.safe_load(proc.stdout)
    assert answer["kind"] == "ResourceList", proc.stderr
    errors = [r for r in answer.get("results", []) if r["severity"] == "error"]
    assert proc.returncode == (1 if errors else 0)
    assert all(r["tags"]["validator"] == vid for r in answer.get("results", []))
