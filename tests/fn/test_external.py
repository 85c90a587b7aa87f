"""External validator functions run over a root's rendered output."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from krmcheck.resource.function import ExternalValidator
from krmcheck.fn import external
from krmcheck.resource.function import FunctionSpec
from krmcheck.kustomize.target import Builder
from krmcheck.locate import locate_all
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.results import ResourceRef
from krmcheck.tree.origin import Origin

DECLARED = Origin(".krmcheck.yaml", 4, 5, "krmcheck config")

# A validator that reports what REPORT says about every item, echoing the
# path and index annotations it was given.
SCRIPT = """\
#!{python}
import os, sys, yaml
rl = yaml.safe_load(sys.stdin)
mode = {mode!r}
results = []
for item in rl.get("items") or []:
    notes = item["metadata"].get("annotations") or {{}}
    file = {{"path": notes.get("internal.config.kubernetes.io/path", ""),
             "index": int(notes.get("config.kubernetes.io/index", 0))}}
    if mode == "per-file":  # kpt's index: the document's place in its own file
        file["index"] = 0
    if mode in ("file-only", "per-file"):
        results.append({{"message": "seen", "severity": "warning", "file": file,
                        "field": {{"path": "spec.replicas"}}}})
    elif mode == "errors":
        results.append({{"message": "bad", "severity": "error", "field": {{"path": "spec.replicas"}},
                        "resourceRef": {{"apiVersion": item["apiVersion"], "kind": item["kind"],
                                        "name": item["metadata"]["name"]}}}})
if mode == "crash":
    sys.stderr.write("boom\\n")
    sys.exit(3)
if mode == "garbage":
    print("not: [yaml")
    sys.exit(0)
rl["results"] = results
yaml.safe_dump(rl, sys.stdout)
sys.exit(1 if mode == "errors" else 0)
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def validator(tmp_path: Path, mode: str) -> ExternalValidator:
    script = write(tmp_path, f"fn-{mode}.py", SCRIPT.format(python=sys.executable, mode=mode))
    script.chmod(0o755)
    return ExternalValidator("my-check", FunctionSpec(exec_path=str(script), origin=DECLARED))


def rendered(tmp_path: Path) -> list[Resource]:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- web.yaml\n- api.yaml\n")
    write(tmp_path, "app/web.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
                                    "spec:\n  replicas: 1\n")
    write(tmp_path, "app/api.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n"
                                    "spec:\n  replicas: 2\n")
    return Builder(Files(tmp_path)).build(tmp_path / "app")


def where(tmp_path: Path) -> external.Environment:
    return external.Environment(tmp_path, dict(os.environ))


def test_error_results_with_exit_1_are_an_answer(tmp_path: Path) -> None:
    resources = rendered(tmp_path)
    results = external.validate(validator(tmp_path, "errors"), resources, where(tmp_path))
    assert [(r.resource_ref, r.severity) for r in results] == [
        (ResourceRef("apps/v1", "Deployment", "api"), "error"),
        (ResourceRef("apps/v1", "Deployment", "web"), "error")]
    # untagged results are named after the function
    assert {r.validator for r in results} == {"my-check"}
    findings = locate_all(results, resources, "app")
    assert sorted(f.location[:] for f in findings) == [("app/api.yaml", 6, 3), ("app/web.yaml", 6, 3)]


def test_results_naming_only_a_file_get_their_resource(tmp_path: Path) -> None:
    resources = rendered(tmp_path)
    results = external.validate(validator(tmp_path, "file-only"), resources, where(tmp_path))
    assert sorted((r.resource_ref.name if r.resource_ref else "", r.file_path) for r in results) == [
        ("api", "app/api.yaml"), ("web", "app/web.yaml")]
    findings = locate_all(results, resources, "app")
    assert sorted(f.location[:] for f in findings) == [("app/api.yaml", 6, 3), ("app/web.yaml", 6, 3)]


def test_a_file_index_counting_documents_in_the_file_names_them_too(tmp_path: Path) -> None:
    resources = rendered(tmp_path)
    results = external.validate(validator(tmp_path, "per-file"), resources, where(tmp_path))
    assert sorted((r.resource_ref.name if r.resource_ref else "", r.file_path) for r in results) == [
        ("api", "app/api.yaml"), ("web", "app/web.yaml")]
    findings = locate_all(results, resources, "app")
    assert sorted(f.location[:] for f in findings) == [("app/api.yaml", 6, 3), ("app/web.yaml", 6, 3)]


def test_nothing_to_say(tmp_path: Path) -> None:
    assert external.validate(validator(tmp_path, "quiet"), rendered(tmp_path), where(tmp_path)) == []


@pytest.mark.parametrize("mode, fragment", [
    ("crash", "failed with exit status 3 and reported no error; its stderr: boom"),
    ("garbage", "printed invalid YAML"),
])
def test_a_broken_function_is_an_error_at_its_declaration(tmp_path: Path, mode: str, fragment: str) -> None:
    with pytest.raises(BuildError) as e:
        external.validate(validator(tmp_path, mode), rendered(tmp_path), where(tmp_path))
    assert fragment in e.value.message and "validator my-check" in e.value.message
    assert e.value.location is not None and e.value.location[:] == (".krmcheck.yaml", 4, 5)


def test_missing_executable(tmp_path: Path) -> None:
    missing = ExternalValidator("gone", FunctionSpec(exec_path=str(tmp_path / "gone.py"), origin=DECLARED))
    with pytest.raises(BuildError) as e:
        external.validate(missing, rendered(tmp_path), where(tmp_path))
    assert "couldn't run validator gone" in e.value.message
    assert e.value.location is not None and e.value.location.line == 4


def test_container_validator_without_docker(tmp_path: Path) -> None:
    image = ExternalValidator("policy", FunctionSpec(image="example/policy:v1", origin=DECLARED))
    with pytest.raises(BuildError) as e:
        external.validate(image, rendered(tmp_path), external.Environment(tmp_path, {"PATH": str(tmp_path)}))
    assert "docker" in e.value.message and e.value.location is not None
