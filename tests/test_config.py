"""``.krmcheck.yaml``: finding it, checking it with its schema, and its errors
at the file's own line and column."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from krmcheck.pipeline.run import known_validators
from krmcheck import config as cfg
from krmcheck.cli import main
from krmcheck.resource.function import Mount
from krmcheck.tree.origin import Location
from krmcheck.validators import VALIDATORS, ValidatorOptions

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
        image: nginx:latest
        unknownField: 1
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def load(root: Path, text: str) -> cfg.Config:
    return cfg.load(write(root, ".krmcheck.yaml", text), ".krmcheck.yaml", known_validators())


def problems(root: Path, text: str) -> list[tuple[Location, str]]:
    with pytest.raises(cfg.ConfigError) as e:
        load(root, text)
    return list(e.value.problems)


# --- finding the file ------------------------------------------------------------

def test_found_upward_from_the_checked_paths(tmp_path: Path) -> None:
    found = write(tmp_path, "repo/.krmcheck.yaml", "")
    (tmp_path / "repo/.git").mkdir()
    deep = tmp_path / "repo/apps/web/overlays/prod"
    deep.mkdir(parents=True)
    assert cfg.find([deep, tmp_path / "repo/apps/web"], tmp_path / "repo") == found


def test_nearest_file_wins(tmp_path: Path) -> None:
    write(tmp_path, ".krmcheck.yaml", "")
    near = write(tmp_path, "apps/.krmcheck.yml", "")
    assert cfg.find([tmp_path / "apps"], tmp_path) == near


def test_not_looked_for_above_the_repository(tmp_path: Path) -> None:
    write(tmp_path, ".krmcheck.yaml", "")
    (tmp_path / "repo").mkdir()
    assert cfg.find([tmp_path / "repo"], tmp_path / "repo") is None


def test_a_changed_file_searches_from_its_directory(tmp_path: Path) -> None:
    found = write(tmp_path, "apps/.krmcheck.yaml", "")
    changed = write(tmp_path, "apps/web/deploy.yaml", "")
    assert cfg.find([changed], tmp_path) == found


# --- values ----------------------------------------------------------------------

def test_empty_file_is_the_default_config(tmp_path: Path) -> None:
    assert load(tmp_path, "# nothing yet\n") == cfg.Config(path=".krmcheck.yaml", opt_in=frozenset({"workload"}))


def test_top_level_settings(tmp_path: Path) -> None:
    found = load(tmp_path, "fail-on: warning\nkubernetes-version: 1.30\nstrict: true\n"
                           "trusted-catalogs:\n  - catalogs/fns.yaml\nkptfile-validators: true\n")
    assert (found.fail_on, found.kubernetes_version, found.strict) == ("warning", "1.30", True)
    assert found.kptfile_validators is True
    [catalog] = found.trusted_catalogs
    assert (catalog.reference, catalog.directory, catalog.origin[:3]) == ("catalogs/fns.yaml", tmp_path,
                                                                            (".krmcheck.yaml", 5, 5))


def test_validators_disabled_and_their_options(tmp_path: Path) -> None:
    found = load(tmp_path, "strict: false\nvalidators:\n  image-tag: false\n  metadata: {enabled: false}\n"
                           "  schema:\n    strict: true\n    kubernetes-version: '1.29'\n")
    assert not found.enabled("image-tag") and not found.enabled("metadata") and found.enabled("schema")
    assert found.options_for("schema", ValidatorOptions()) == ValidatorOptions("1.29", True)
    assert found.options_for("metadata", ValidatorOptions("1.31")) == ValidatorOptions("1.31", False)
    # the command line wins over the file
    assert found.options_for("schema", ValidatorOptions("1.31")) == ValidatorOptions("1.31", True)


def test_every_validator_id_can_be_configured(tmp_path: Path) -> None:
    ids = sorted(set(VALIDATORS) | {"deprecation", "schema-missing", "unused-ignore"})
    text = "validators:\n" + "".join(f"  {v}: {{severity: warning}}\n" for v in ids)
    found = load(tmp_path, text)
    assert found.severities == {v: "warning" for v in ids}
    text = "overrides:\n- paths: [legacy/]\n  validators:\n" + "".join(f"    {v}: false\n" for v in ids)
    assert not load(tmp_path, text).overrides[0][1]["schema"].enabled


def test_require_network(tmp_path: Path) -> None:
    assert load(tmp_path, "require-network: true\n").require_network
    assert not load(tmp_path, "fail-on: error\n").require_network


def test_load_restrictor_for_every_root_and_per_path(tmp_path: Path) -> None:
    # matched against a root's directory, gitignore-style, relative to the
    # file; the last matching overrides entry wins, then the top level
    write(tmp_path, "deploy/.krmcheck.yaml", """\
load-restrictor: LoadRestrictionsNone
overrides:
- paths: ["apps/**"]
  load-restrictor: LoadRestrictionsRootOnly
- paths: [apps/legacy/]
  load-restrictor: LoadRestrictionsNone
  validators: {metadata: false}
- paths: [apps/legacy/strict]
  validators: {schema: false}
""")
    found = cfg.load(tmp_path / "deploy/.krmcheck.yaml", "deploy/.krmcheck.yaml")
    assert found.restrictor_for("deploy/apps/web") == "LoadRestrictionsRootOnly"
    assert found.restrictor_for("deploy/apps/legacy/strict") == "LoadRestrictionsNone"
    assert found.restrictor_for("deploy/infra") == "LoadRestrictionsNone"
    assert found.restrictor_for("elsewhere") == "LoadRestrictionsNone"
    assert len(found.overrides) == 3 and not found.overrides[1][1]["metadata"].enabled
    assert cfg.EMPTY.restrictor_for("deploy/apps/web") is None


def test_an_unknown_validator_id_is_an_error_at_its_line(tmp_path: Path) -> None:
    with pytest.raises(cfg.ConfigError) as e:
        load(tmp_path, "overrides:\n- paths: [a]\n  validators:\n    image_tag: false\n")
    [(where, message)] = e.value.problems
    assert (where.line, where.col) == (4, 5)
    assert message.startswith("overrides[0].validators.image_tag: unknown validator; known: ")


@pytest.mark.parametrize("finding_id", ["resourceset", "load-restrictor", "written", "substitution", "flux-instance",
                                        "plugins"])
def test_the_ids_of_findings_no_validator_makes_can_be_configured(tmp_path: Path, finding_id: str) -> None:
    found = load(tmp_path, f"validators:\n  {finding_id}: {{severity: error}}\n")
    assert found.severities[finding_id] == "error"


def test_external_exec_validator(tmp_path: Path) -> None:
    script = write(tmp_path, "tools/check.py", "#!/usr/bin/env python3\n")
    write(tmp_path, "tools/check-config.yaml", "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n")
    found = load(tmp_path, "external-validators:\n  - exec: tools/check.py\n"
                           "    configPath: tools/check-config.yaml\n")
    [ext] = found.external_validators
    assert ext.name == "check.py"
    assert ext.spec.exec_path == str(script.resolve()) and ext.spec.image is None
    assert ext.spec.origin is not None and ext.spec.origin[:3] == (".krmcheck.yaml", 2, 5)
    assert ext.function_config is not None
    assert ext.function_config.get("data").origin[:3] == ("tools/check-config.yaml", 3, 1)  # type: ignore[union-attr]


def test_external_container_validator_with_inline_config(tmp_path: Path) -> None:
    found = load(tmp_path, """\
external-validators:
  - name: policy
    image: ghcr.io/example/policy:v1
    network: true
    mounts:
      - {type: bind, src: policies, dst: /policies}
    env: [MODE=strict, HOME]
    config:
      apiVersion: example.com/v1
      kind: Policy
      spec: {level: high}
""")
    [ext] = found.external_validators
    assert (ext.name, ext.spec.image, ext.spec.network, ext.spec.envs) == (
        "policy", "ghcr.io/example/policy:v1", True, ("MODE=strict", "HOME"))
    assert ext.spec.mounts == (Mount("bind", str((tmp_path / "policies").resolve()), "/policies"),)
    assert ext.function_config is not None and ext.function_config.value("kind") == "Policy"
    assert ext.function_config.origin[:3] == (".krmcheck.yaml", 8, 5)


def test_config_map_shorthand(tmp_path: Path) -> None:
    found = load(tmp_path, "external-validators:\n  - image: example/fn:v1\n    configMap:\n      level: 3\n")
    fc = found.external_validators[0].function_config
    assert fc is not None and fc.to_data() == {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "function-input"}, "data": {"level": "3"}}
    assert fc.mapping("data").get("level").origin[:3] == (".krmcheck.yaml", 4, 7)  # type: ignore[union-attr]


def test_bare_command_found_on_path(tmp_path: Path) -> None:
    found = load(tmp_path, "external-validators:\n  - exec: python3\n")
    assert Path(found.external_validators[0].spec.exec_path or "").name.startswith("python3")


# --- errors at the file's own lines ---------------------------------------------------

@pytest.mark.parametrize("text, where, fragment", [
    ("fail-on: fatal\n", (1, 1), "fail-on: 'fatal' is not one of: error, warning, info, never"),
    ("strict: yes\n", (1, 1), "strict: 'yes' must be a boolean"),
    ("kubernetes-version: latest\n", (1, 1), "does not match"),
    ("colour: blue\n", (1, 1), "colour: unknown key; known keys: baseline, clusters, exclude, external-validators, fail-on"),
    ("validators:\n  schema:\n    strikt: true\n", (3, 5), "validators.schema.strikt: unknown key"),
    ("validators:\n  image-tag: on\n", (2, 3), "validators.image-tag: 'on' must be a boolean (true or false) or a map"),
    ("validators:\n  lint: true\n", (2, 3), "validators.lint: unknown validator; known: api-version, deprecation, duplicate, encrypted, flux-instance, helm, image-tag, load-restrictor, metadata, plugins, reference, remote, resourceset"),
    ("external-validators:\n  - image: x\n    mounts:\n      - type: bind\n", (4, 9),
     "external-validators[0].mounts[0]: 'dst' is a required property"),
    ("trusted-catalogs: catalogs.yaml\n", (1, 1), "must be a list"),
    ("- a\n- b\n", (1, 1), "the configuration must be a map"),
    ("fail-on: [\n", (2, 1), "invalid YAML"),
    ("a: 1\n---\nb: 2\n", (3, 1), "one YAML document expected"),
    ("require-network: yes\n", (1, 1), "require-network: 'yes' must be a boolean"),
    ("load-restrictor: None\n", (1, 1),
     "load-restrictor: 'None' is not one of: LoadRestrictionsRootOnly, LoadRestrictionsNone"),
    ("overrides:\n- paths: [a]\n  load-restrictor: none\n", (3, 3), "overrides[0].load-restrictor: 'none'"),
    ("overrides:\n- paths: [a]\n", (2, 3), "overrides[0]: needs validators or load-restrictor"),
])
def test_schema_errors_at_their_line_and_column(tmp_path: Path, text: str, where: tuple[int, int],
                                                fragment: str) -> None:
    [(loc, message)] = problems(tmp_path, text)
    assert (loc.path, loc.line, loc.col) == (".krmcheck.yaml", *where)
    assert fragment in message


def test_every_problem_is_reported_in_line_order(tmp_path: Path) -> None:
    found = problems(tmp_path, "strict: 1\nfail-on: sometimes\n")
    assert [(loc.line, msg.split(":")[0]) for loc, msg in found] == [(1, "strict"), (2, "fail-on")]


@pytest.mark.parametrize("entry, where, fragment", [
    ("  - name: nothing\n", (2, 5), "exactly one of exec and image"),
    ("  - exec: a.py\n    image: b\n", (2, 5), "exactly one of exec and image"),
    ("  - exec: ./missing.py\n", (2, 5), "exec: ./missing.py: no such file"),
    ("  - exec: tool.py\n    network: true\n", (3, 5), "network: only a container"),
    ("  - image: fn:v1\n    config: {}\n    configPath: c.yaml\n", (4, 5), "use one of config, configMap and configPath"),
    ("  - image: fn:v1\n    configPath: missing.yaml\n", (3, 5), "configPath: missing.yaml"),
])
def test_function_entry_errors(tmp_path: Path, entry: str, where: tuple[int, int], fragment: str) -> None:
    write(tmp_path, "tool.py", "#!/bin/sh\n")
    [(loc, message)] = problems(tmp_path, "external-validators:\n" + entry)
    assert (loc.line, loc.col) == where
    assert fragment in message


def test_config_path_yaml_error_points_into_that_file(tmp_path: Path) -> None:
    write(tmp_path, "fn/config.yaml", "data: [\n")
    [(loc, message)] = problems(tmp_path, "external-validators:\n  - image: fn:v1\n    configPath: fn/config.yaml\n")
    assert loc.path == "fn/config.yaml" and "invalid YAML" in message


# --- through the command line ---------------------------------------------------------

def test_cli_reports_config_errors_at_their_line_and_exits_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, "app/kustomization.yaml", "resources:\n- deploy.yaml\n")
    write(tmp_path, "app/deploy.yaml", DEPLOYMENT)
    write(tmp_path, ".krmcheck.yaml", "# settings\nvalidators:\n  schema:\n    strikt: true\n")
    monkeypatch.chdir(tmp_path)
    assert main(["app", "--github", "off"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "krmcheck: error: .krmcheck.yaml:4:5: validators.schema.strikt: unknown key; "
        "known keys: enabled, kubernetes-version, severity, strict"]
    assert "Traceback" not in err


def _check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, *args: str) -> tuple[int, str]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    write(tmp_path, "app/kustomization.yaml", "resources:\n- deploy.yaml\n")
    write(tmp_path, "app/deploy.yaml", DEPLOYMENT)
    write(tmp_path, ".krmcheck.yaml", config)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    from krmcheck import cli
    from krmcheck.commands import check as check_command
    code = check_command.run(cli.parse_check(["app", "--github", "off", *args]), out, io.StringIO(), {})
    return code, out.getvalue()


def test_cli_uses_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = _check(tmp_path, monkeypatch, "strict: true\nvalidators:\n  image-tag: false\n")
    assert code == 1
    assert "unknownField" in out and "latest" not in out


def test_flags_override_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = _check(tmp_path, monkeypatch, "fail-on: never\nvalidators:\n  schema: false\n")
    assert code == 0 and "latest" in out
    code, _ = _check(tmp_path, monkeypatch, "fail-on: never\n", "--fail-on", "warning")
    assert code == 1


def test_config_kubernetes_version_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, "app/kustomization.yaml", "resources: []\n")
    write(tmp_path, ".krmcheck.yaml", "kubernetes-version: '0.1'\n")
    monkeypatch.chdir(tmp_path)
    assert main(["app", "--github", "off"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("krmcheck: error: .krmcheck.yaml:1:1: ") and "0.1" in err
