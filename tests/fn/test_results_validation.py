"""Results a function makes up: unknown severities, paths outside the
repository, messages that are not strings or are huge. Each reaches the
reporters as a sane Result that says what was changed."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from krmcheck.resource.function import ExternalValidator
from krmcheck.fn import external, resource_list
from krmcheck.fn.loader import PluginLoader
from krmcheck.resource.function import FunctionSpec
from krmcheck.kustomize.plugins import FunctionOptions
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.locate import locate_all
from krmcheck.resource.files import Files
from krmcheck.results import ResourceRef, Result
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Origin

DEPLOYMENT = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n"

# Prints the ResourceList it was given with RESULTS as its results.
REPORTER = """\
#!{python}
import sys, yaml
rl = yaml.safe_load(sys.stdin)
rl["results"] = yaml.safe_load({results!r})
yaml.safe_dump(rl, sys.stdout)
"""


def result(text: str) -> Result:
    [doc] = load_documents(text, "output of fn")
    assert isinstance(doc, Mapping)
    return resource_list.result_of(doc)


def write(root: Path, rel: str, text: str, executable: bool = False) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# --- severity --------------------------------------------------------------------------------

@pytest.mark.parametrize("given, severity", [
    ("error", "error"), ("warning", "warning"), ("info", "info"),
    ("Warning", "warning"), (" INFO ", "info"), ("''", "error"), ("null", "error")])
def test_known_severities(given: str, severity: str) -> None:
    r = result(f"message: m\nseverity: {given}\n")
    assert (r.severity, r.message) == (severity, "m")


def test_missing_severity_is_an_error() -> None:
    assert result("message: m\n").severity == "error"


@pytest.mark.parametrize("given, shown", [
    ("banana", "severity 'banana'"), ("3", "severity '3'"), ("never", "severity 'never'"),
    ("{level: high}", "severity that is not a string"), ("[warning]", "severity that is not a string")])
def test_unknown_severity_is_an_error_that_says_so(given: str, shown: str) -> None:
    r = result(f"message: m\nseverity: {given}\n")
    assert r.severity == "error"
    assert r.message == f"m [krmcheck: {shown} is none of error, warning, info; reported as error]"


# --- file.path -------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [
    "/etc/passwd", "../../etc/passwd", "app/../../secret.yaml", "..", "C:/Windows/win.ini",
    r"..\\..\\etc\\passwd", "\\\\\\\\server\\\\share", '"app/web.yaml\\nother.yaml"'])
def test_file_path_outside_the_repository_is_dropped(path: str) -> None:
    r = result(f"message: m\nseverity: warning\nfile:\n  path: {path}\n  index: 2\n")
    assert (r.file_path, r.severity) == ("", "warning")
    assert r.message == "m [krmcheck: its file.path names no file inside the repository and was dropped]"


@pytest.mark.parametrize("path", ["app/web.yaml", "./app/web.yaml", "app/../app/web.yaml", "web.yaml"])
def test_file_path_inside_the_repository_is_kept(path: str) -> None:
    r = result(f"message: m\nfile:\n  path: {path}\n  index: 1\n")
    assert (r.file_path, r.file_index, r.message) == (path, 1, "m")


def test_both_notes_at_once() -> None:
    r = result("message: m\nseverity: banana\nfile: {path: /etc/passwd}\n")
    assert r.message.startswith("m [krmcheck: severity 'banana' is none of")
    assert r.message.endswith("reported as error; its file.path names no file inside the "
                              "repository and was dropped]")


# --- types and sizes -------------------------------------------------------------------------

@pytest.mark.parametrize("given, message", [
    ("{code: 7, why: [a, b]}", '{"code": 7, "why": ["a", "b"]}'),
    ("[1, 2]", "[1, 2]"), ("42", "42"), ("true", "true"), ("null", ""), ("0777", "0777")])
def test_message_is_always_text(given: str, message: str) -> None:
    assert result(f"message: {given}\nseverity: info\n").message == message


def test_huge_message_is_cut_and_says_so() -> None:
    r = result(f"message: {'x' * 100_000}\nseverity: info\n")
    assert r.message == "x" * resource_list.MAX_MESSAGE + (
        f" [krmcheck: message cut at {resource_list.MAX_MESSAGE} of 100000 characters]")


def test_other_fields_are_bounded_text() -> None:
    long = "n" * 5000
    r = result(f"message: m\nresourceRef: {{apiVersion: [v1], kind: {{a: b}}, name: {long}}}\n"
               f"field: {{path: [spec]}}\nfile: {{path: {long}, index: [1]}}\n"
               f"tags: {{validator: {long}, nested: {{a: b}}, count: 3}}\n")
    assert r.resource_ref == ResourceRef("", "", "n" * resource_list.MAX_TEXT + "...", "")
    assert (r.field_path, r.file_index) == ("", 0)
    assert r.file_path == "n" * resource_list.MAX_TEXT + "..."
    assert r.tags == (("validator", "n" * resource_list.MAX_TEXT + "..."), ("count", "3"))


def test_tags_are_capped() -> None:
    tags = ", ".join(f"t{i}: v" for i in range(1000))
    assert len(result(f"message: m\ntags: {{{tags}}}\n").tags) == resource_list.MAX_TAGS


# --- through the runtimes, to a location -----------------------------------------------------

HOSTILE = [{"message": "sneaky", "severity": "banana", "file": {"path": "../../etc/passwd"}},
           {"message": "about web", "severity": "warning", "file": {"path": "/etc/passwd"},
            "resourceRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}]


def test_external_validator_results_stay_in_the_repository(tmp_path: Path) -> None:
    import yaml
    write(tmp_path, "app/kustomization.yaml", "resources:\n- web.yaml\n")
    write(tmp_path, "app/web.yaml", DEPLOYMENT)
    resources = Builder(Files(tmp_path)).build(tmp_path / "app")
    script = write(tmp_path, "fn.py", REPORTER.format(python=sys.executable,
                                                      results=yaml.safe_dump(HOSTILE)), executable=True)
    declared = Origin(".krmcheck.yaml", 4, 5, "krmcheck config")
    validator = ExternalValidator("hostile", FunctionSpec(exec_path=str(script), origin=declared))
    results = external.validate(validator, resources, external.Environment(tmp_path, dict(os.environ)))
    assert [(r.severity, r.file_path) for r in results] == [("error", ""), ("warning", "")]
    findings = locate_all(results, resources, "app")
    # no resource: the root's kustomization; a resource: its line
    assert [f.location[:] for f in findings] == [("app/kustomization.yaml", 1, 1), ("app/web.yaml", 4, 3)]


def test_kustomize_function_results_stay_in_the_repository(tmp_path: Path) -> None:
    import yaml
    write(tmp_path, "app/fns/fn.py", REPORTER.format(python=sys.executable,
                                                     results=yaml.safe_dump(HOSTILE)), executable=True)
    write(tmp_path, "app/web.yaml", DEPLOYMENT)
    write(tmp_path, "app/fn.yaml", "apiVersion: example.com/v1\nkind: Hostile\nmetadata:\n  name: fn\n"
                                   "  annotations:\n    config.kubernetes.io/function: |\n"
                                   "      exec:\n        path: ./fns/fn.py\n")
    write(tmp_path, "app/kustomization.yaml", "resources:\n- web.yaml\ntransformers:\n- fn.yaml\n")
    options = BuildOptions(enable_alpha_plugins=True, plugins=PluginLoader(), functions=FunctionOptions(
        env={"PATH": os.environ.get("PATH", "")}, enable_exec=True))
    b = Builder(Files(tmp_path), options)
    resources = b.build(tmp_path / "app")
    results = [r for r, _ in b.function_results]
    assert [(r.severity, r.file_path) for r in results] == [("error", ""), ("warning", "")]
    assert "severity 'banana'" in results[0].message
    findings = locate_all(results, resources, "app")
    assert [f.location.path for f in findings] == ["app/kustomization.yaml", "app/web.yaml"]
