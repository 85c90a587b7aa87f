"""``krmcheck blame``: a rendered value and every source line that wrote it,
newest first, with what wrote it; one clear line and exit 2 for anything
that does not exist; never a Secret's data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from krmcheck.cli import main
from tests.checkrun import DEPLOYMENT, write

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

OVERLAY = """\
namePrefix: app-
resources:
- ../base
patches:
- path: replicas.yaml
images:
- name: nginx
  newTag: "1.28"
"""

REPLICAS_PATCH = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: {count}
"""

PROD = """\
resources:
- ../overlay
patches:
- path: replicas.yaml
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """base (the Deployment) <- overlay (namePrefix, a replicas patch, an
    images entry) <- prod (another replicas patch)."""
    (tmp_path / ".git").mkdir()
    write(tmp_path, "base/kustomization.yaml", "resources:\n- deployment.yaml\n")
    write(tmp_path, "base/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "overlay/kustomization.yaml", OVERLAY)
    write(tmp_path, "overlay/replicas.yaml", REPLICAS_PATCH.format(count=3))
    write(tmp_path, "prod/kustomization.yaml", PROD)
    write(tmp_path, "prod/replicas.yaml", REPLICAS_PATCH.format(count=5))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def blame(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["blame", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def blame_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, err = blame(capsys, *args, "--json")
    assert (code, err) == (0, "")
    found: dict[str, Any] = json.loads(out)
    return found


def writers(found: dict[str, Any]) -> list[tuple[str, int, int, str]]:
    return [(w["path"], w["line"], w["col"], w["by"]) for w in found["writers"]]


# --- writers, newest first ----------------------------------------------------------

def test_patches_are_listed_newest_first_down_to_the_resource_file(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = blame_json(capsys, "prod", "Deployment/app-web", "spec.replicas")
    assert found["value"] == 5
    assert writers(found) == [
        ("prod/replicas.yaml", 6, 3, "patch"),
        ("overlay/replicas.yaml", 6, 3, "patch"),
        ("base/deployment.yaml", 6, 3, "resource file"),
    ]
    found = blame_json(capsys, "overlay", "Deployment/app-web", "spec.replicas")
    assert found["value"] == 3
    assert writers(found) == [("overlay/replicas.yaml", 6, 3, "patch"),
                              ("base/deployment.yaml", 6, 3, "resource file")]


def test_the_text_output_has_the_value_inline_and_one_writer_a_line(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = blame(capsys, "prod", "Deployment/app-web", "spec.replicas")
    assert (code, err) == (0, "")
    assert out == ("Deployment/app-web spec.replicas: 5\n"
                   "written by (newest first):\n"
                   "  prod/replicas.yaml:6:3     patch\n"
                   "  overlay/replicas.yaml:6:3  patch\n"
                   "  base/deployment.yaml:6:3   resource file\n")


@pytest.mark.parametrize("field", ["spec.template.spec.containers[0].image",
                                   "spec.template.spec.containers[name=web].image",
                                   "spec.template.spec.containers.[name=web].image",
                                   "/spec/template/spec/containers/0/image"])
def test_an_images_entry_is_named_by_its_kustomization_field(
        repo: Path, capsys: pytest.CaptureFixture[str], field: str) -> None:
    found = blame_json(capsys, "prod", "Deployment/app-web", field)
    assert found["value"] == "nginx:1.28"
    assert writers(found) == [("overlay/kustomization.yaml", 8, 3, "images entry"),
                              ("base/deployment.yaml", 15, 9, "resource file")]


def test_name_prefix_is_a_writer_of_the_name(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = blame_json(capsys, "overlay", "Deployment/app-web", "metadata.name")
    assert found["value"] == "app-web"
    assert writers(found) == [("overlay/kustomization.yaml", 1, 1, "namePrefix"),
                              ("base/deployment.yaml", 4, 3, "resource file")]


def test_the_json_shape(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = blame_json(capsys, "overlay", "Deployment/app-web", "/spec/replicas")
    assert found == {
        "root": "overlay", "resource": "Deployment/app-web", "field": "spec.replicas", "value": 3,
        "writers": [{"path": "overlay/replicas.yaml", "line": 6, "col": 3, "by": "patch"},
                    {"path": "base/deployment.yaml", "line": 6, "col": 3, "by": "resource file"}]}


def test_text_paths_are_relative_to_the_current_directory_json_to_the_repository(
        repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(repo / "prod")
    code, out, _ = blame(capsys, ".", "Deployment/app-web", "spec.replicas")
    assert code == 0
    assert out.splitlines()[2:] == ["  replicas.yaml:6:3             patch",
                                    "  ../overlay/replicas.yaml:6:3  patch",
                                    "  ../base/deployment.yaml:6:3   resource file"]
    found = blame_json(capsys, ".", "Deployment/app-web", "spec.replicas")
    assert found["root"] == "."
    assert [w[0] for w in writers(found)] == ["prod/replicas.yaml", "overlay/replicas.yaml",
                                             "base/deployment.yaml"]


def test_a_string_of_several_lines_prints_as_a_block(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, "cm/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(repo, "cm/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\n"
                              "data:\n  a.conf: |\n    one\n    two\n  n: \"3\"\n")
    code, out, _ = blame(capsys, "cm", "ConfigMap/conf", "data[a.conf]")
    assert code == 0
    assert out == ('ConfigMap/conf data["a.conf"]: |\n'
                   "    one\n"
                   "    two\n"
                   "written by (newest first):\n"
                   "  cm/cm.yaml:6:3  resource file\n")
    code, out, _ = blame(capsys, "cm", "ConfigMap/conf", "data.n")
    assert out.splitlines()[0] == 'ConfigMap/conf data.n: "3"'


def test_a_mapping_prints_as_yaml_below_the_header(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = blame(capsys, "overlay", "Deployment/app-web", "spec.selector")
    assert code == 0
    assert out == ("Deployment/app-web spec.selector:\n"
                   "  matchLabels:\n"
                   "    app: web\n"
                   "written by (newest first):\n"
                   "  base/deployment.yaml:7:3  resource file\n")
    found = blame_json(capsys, "overlay", "Deployment/app-web", "spec.template.spec.containers")
    assert found["value"] == [{"name": "web", "image": "nginx:1.28"}]


def test_the_name_before_the_prefix_and_the_namespace_find_the_resource(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert blame_json(capsys, "overlay", "Deployment/web", "spec.replicas")["resource"] == "Deployment/app-web"
    found = blame_json(capsys, "overlay", "Deployment/default/app-web", "spec.replicas")
    assert found["resource"] == "Deployment/app-web"


# --- errors -------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (("nowhere", "Deployment/app-web", "spec"), "nowhere: no such kustomization directory or manifest"),
    (("base/deployment.yaml", "Deployment/nope", "spec"),
     "base/deployment.yaml renders no Deployment/nope; its Deployment resources: Deployment/web"),
    (("overlay", "Service/web", "spec"), "overlay renders no Service/web; it renders no Service"),
    (("overlay", "Deployment/app-web", "spec.strategy.type"),
     "Deployment/app-web has no field spec.strategy.type (spec.strategy does not exist)"),
    (("overlay", "Deployment/app-web", "spec.template.spec.containers[name=db].image"),
     "has no field spec.template.spec.containers[name=db].image"),
    (("overlay", "Deployment/app-web", "spec[0"), "invalid field path 'spec[0'"),
    (("overlay", "Deployment", "spec"), "name a resource as KIND/NAME or KIND/NAMESPACE/NAME"),
    (("flux:flux-system/apps", "Deployment/web", "spec"),
     "flux:flux-system/apps: no such GitOps controller root under the current directory"),
])
def test_what_does_not_exist_is_one_line_and_exit_2(
        repo: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str) -> None:
    code, out, err = blame(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.startswith("krmcheck blame: error: ") and err.count("\n") == 1
    assert message in err
    assert "Traceback" not in err


def test_a_build_error_is_one_line_and_exit_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, "broken/kustomization.yaml", "resources:\n- missing.yaml\n")
    code, out, err = blame(capsys, "broken", "Deployment/web", "spec")
    assert (code, out) == (2, "")
    assert err.startswith("krmcheck blame: error: broken/kustomization.yaml:2:")
    assert err.count("\n") == 1


def test_the_same_name_in_two_namespaces_needs_the_namespace(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, "two/kustomization.yaml", "resources:\n- a.yaml\n- b.yaml\n")
    write(repo, "two/a.yaml", DEPLOYMENT.replace("  name: web\n", "  name: web\n  namespace: a\n"))
    write(repo, "two/b.yaml", DEPLOYMENT.replace("  name: web\n", "  name: web\n  namespace: b\n"))
    code, _, err = blame(capsys, "two", "Deployment/web", "spec.replicas")
    assert code == 2
    assert ("Deployment/web matches 2 resources of two: Deployment/a/web (apps/v1), "
            "Deployment/b/web (apps/v1); name the namespace") in err
    found = blame_json(capsys, "two", "Deployment/b/web", "spec.replicas")
    assert (found["resource"], writers(found)) == ("Deployment/b/web", [("two/b.yaml", 7, 3, "resource file")])


# --- Secrets ------------------------------------------------------------------------

SECRET = """\
apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: hunter2-very-secret
  pin: "42"
"""

WITH_SECRET = """\
resources:
- deployment.yaml
- secret.yaml
secretGenerator:
- name: generated
  literals:
  - token=s3cr3t-t0ken-value
replacements:
- source:
    kind: Secret
    name: db
    fieldPath: stringData.password
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.template.spec.containers.[name=web].env.[name=DB_PASSWORD].value
"""

DEPLOYMENT_WITH_ENV = DEPLOYMENT + """\
        env:
        - name: DB_PASSWORD
          value: placeholder
"""


@pytest.fixture
def secrets(repo: Path) -> Path:
    write(repo, "sec/kustomization.yaml", WITH_SECRET)
    write(repo, "sec/secret.yaml", SECRET)
    write(repo, "sec/deployment.yaml", DEPLOYMENT_WITH_ENV)
    return repo


@pytest.mark.parametrize(("resource", "field"), [
    ("Secret/db", "stringData.password"),
    ("Secret/db", "stringData.pin"),
    ("Secret/db", "stringData"),
    ("Secret/db", ""),
    ("Secret/db", "/stringData/password"),
    ("Secret/generated", "data"),
    ("Secret/generated", "data.token"),
    ("Deployment/web", "spec.template.spec.containers[name=web].env[name=DB_PASSWORD].value"),
])
def test_a_secret_value_is_never_printed(secrets: Path, capsys: pytest.CaptureFixture[str],
                                         resource: str, field: str) -> None:
    for args in ((), ("--json",)):
        code, out, err = blame(capsys, "sec", resource, field, *args)
        assert (code, err) == (0, "")
        assert "<redacted>" in out
        for value in ("hunter2", "42", "s3cr3t", "czNjcjN0"):  # czNjcjN0: base64 of s3cr3t
            assert value not in out


def test_a_secret_keeps_its_writers_and_its_other_fields(secrets: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    found = blame_json(capsys, "sec", "Secret/db", "stringData.password")
    assert found["value"] == "<redacted>"
    assert writers(found) == [("sec/secret.yaml", 6, 3, "resource file")]
    found = blame_json(capsys, "sec", "Secret/db", "")
    assert found["value"]["metadata"] == {"name": "db"}
    assert found["value"]["stringData"] == {"password": "<redacted>", "pin": "<redacted>"}
    found = blame_json(capsys, "sec", "Secret/generated", "data.token")
    assert writers(found) == [("sec/kustomization.yaml", 7, 5, "secretGenerator")]  # the literal


def test_a_value_a_replacement_copied_from_a_secret_is_masked_and_blamed(
        secrets: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = blame_json(capsys, "sec", "Deployment/web",
                       "spec.template.spec.containers[name=web].env[name=DB_PASSWORD].value")
    assert found["value"] == "<redacted>"
    assert writers(found) == [("sec/kustomization.yaml", 9, 3, "replacement"),
                              ("sec/secret.yaml", 6, 3, "resource file (source of the replacement)"),
                              ("sec/deployment.yaml", 18, 11, "resource file")]


def test_a_public_value_that_a_secret_also_holds_is_printed(secrets: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # the ConfigMap's own file wrote its user; the Secret holds the same text
    write(secrets, "sec/kustomization.yaml", WITH_SECRET.replace("- secret.yaml\n", "- secret.yaml\n- cm.yaml\n"))
    write(secrets, "sec/secret.yaml", SECRET + "  user: admin-user-name\n")
    write(secrets, "sec/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
                                  "data:\n  user: admin-user-name\n")
    assert blame_json(capsys, "sec", "ConfigMap/settings", "data.user")["value"] == "admin-user-name"
    assert blame_json(capsys, "sec", "ConfigMap/settings", "data")["value"]["user"] == "admin-user-name"
    assert blame_json(capsys, "sec", "Secret/db", "stringData.user")["value"] == "<redacted>"
    code, out, _ = blame(capsys, "sec", "ConfigMap/settings", "data.user")
    assert code == 0 and out.startswith("ConfigMap/settings data.user: admin-user-name\n")


# --- GitOps controller roots ----------------------------------------------------------

def test_a_flux_root_names_its_substitution_variables_and_amendments(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(FIXTURES / "flux-demo")
    code, out, err = blame(capsys, "flux:flux-system/apps", "Deployment/podinfo/prod-podinfo", "spec.replicas")
    assert (code, err) == (0, "")
    assert out == ("Deployment/podinfo/prod-podinfo spec.replicas: three\n"
                   "written by (newest first):\n"
                   "  clusters/production/cluster-vars.yaml:9:3  "
                   "substitution variable PODINFO_REPLICAS (ConfigMap cluster-vars)\n"
                   "  apps/base/podinfo/deployment.yaml:6:3      resource file\n")
    found = blame_json(capsys, "flux:flux-system/apps", "Deployment/prod-podinfo",
                       "spec.template.spec.containers[name=podinfo].image")
    assert found["value"] == "ghcr.io/stefanprodan/podinfo:latest"
    assert [(p.removeprefix("fixtures/flux-demo/"), line, col, by) for p, line, col, by in writers(found)] == [
        ("clusters/production/apps.yaml", 22, 5, "images entry (Flux Kustomization)"),
        ("apps/base/podinfo/deployment.yaml", 17, 9, "resource file")]
    code, out, err = blame(capsys, "flux:flux-system/nope", "Deployment/podinfo", "spec")
    assert code == 2 and out == ""
    assert "no such GitOps controller root" in err and "found: " in err and "flux:flux-system/apps" in err


def test_an_argocd_root_names_the_application_s_kustomize_options(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(FIXTURES / "argocd-demo")
    found = blame_json(capsys, "argocd:guestbook-prod", "Deployment/prod-guestbook-ui", "metadata.name")
    assert [(p.removeprefix("fixtures/argocd-demo/"), line, col, by) for p, line, col, by in writers(found)] == [
        ("argocd/guestbook-prod.yaml", 13, 7, "namePrefix (Argo CD Application)"),
        ("guestbook/base/deployment.yaml", 4, 3, "resource file")]


def test_the_help_lists_blame(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "krmcheck blame ROOT KIND/[NAMESPACE/]NAME FIELD" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["blame", "--help"])
    assert e.value.code == 0
    assert "--json" in capsys.readouterr().out
