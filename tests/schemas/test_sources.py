"""Schemas of custom kinds: CRDs in the repository (files, the root's own
rendered CRDs, another root's), schema locations (directories, templates,
URLs through the cache), and coverage in the JSON report."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from krmcheck import download
from krmcheck.schemas import cel, locations
from tests.checkrun import check, crd, write

CRD = crd("Widget", """
    type: object
    properties:
      spec:
        type: object
        required: [size]
        properties:
          size: {type: integer, minimum: 1}
          mode: {type: string, enum: [fast, slow]}
          port: {x-kubernetes-int-or-string: true}
          note: {type: string, nullable: true}
    """)

WIDGET = """\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec:
  size: {size}
  mode: {mode}
  port: http
  note: null
"""


def widget(size: str = "3", mode: str = "fast") -> str:
    return WIDGET.format(size=size, mode=mode)


def errors(run_report: dict) -> list[tuple[str, int, str]]:
    return [(d["path"], d["line"], d["message"]) for d in run_report["defects"] if d["severity"] == "error"]


def test_a_crd_file_in_the_repository_checks_its_kind(tmp_path: Path) -> None:
    write(tmp_path, "crds/widget.yaml", CRD)
    write(tmp_path, "app/kustomization.yaml", "resources: [widget.yaml]\n")
    write(tmp_path, "app/widget.yaml", widget(size="0", mode="medium"))
    run = check(tmp_path, "app")
    assert run.code == 1
    assert errors(run.report) == [
        ("app/widget.yaml", 6, "spec.size: 0 is less than the minimum of 1"),
        ("app/widget.yaml", 7, "spec.mode: 'medium' is not one of 'fast', 'slow'"),
    ]
    kinds = {k["kind"]: (k["source"], k["where"]) for k in run.report["roots"][0]["schemas"]["kinds"]}
    assert kinds == {"Widget": ("repository", "crds/widget.yaml")}


def test_int_or_string_and_nullable_are_understood(tmp_path: Path) -> None:
    write(tmp_path, "crds/widget.yaml", CRD)
    write(tmp_path, "app/kustomization.yaml", "resources: [widget.yaml]\n")
    write(tmp_path, "app/widget.yaml", widget())
    run = check(tmp_path)
    assert errors(run.report) == []
    assert run.report["roots"][0]["schemas"]["validated"] == 1


def test_a_crd_the_root_renders_checks_its_kind(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: [crd.yaml, widget.yaml]\n")
    write(tmp_path, "app/crd.yaml", CRD)
    write(tmp_path, "app/widget.yaml", widget(size="'three'"))
    run = check(tmp_path, "app")
    assert [(p, line) for p, line, _ in errors(run.report)] == [("app/widget.yaml", 6)]


def test_a_crd_another_root_renders_checks_its_kind(tmp_path: Path) -> None:
    # the CRD's file is not under the checked path; only the rendered root has it
    write(tmp_path, "platform/kustomization.yaml", "resources: [../vendor/crd.yaml]\n")
    write(tmp_path, "vendor/crd.yaml", CRD)
    write(tmp_path, "apps/kustomization.yaml", "resources: [widget.yaml]\n")
    write(tmp_path, "apps/widget.yaml", widget(size="-1"))
    run = check(tmp_path, "platform", "apps", "--load-restrictor", "LoadRestrictionsNone")
    assert [(p, line) for p, line, _ in errors(run.report)] == [("apps/widget.yaml", 6)]
    by_root = {r["root"]: r["schemas"]["bySource"] for r in run.report["roots"]}
    assert by_root["apps"] == {"repository": 1}


def test_of_several_crds_of_a_kind_the_first_file_wins_whatever_was_looked_up_first(tmp_path: Path) -> None:
    # vendor/old-release.yaml also defines Gadget, looked up first: parsing it
    # for Gadget must not make its older Widget win over crds/widget.yaml
    old = CRD.replace("size: {type: integer, minimum: 1}", "size: {type: string}")
    gadget = CRD.replace("widgets", "gadgets").replace("Widget", "Gadget")
    write(tmp_path, "crds/widget.yaml", CRD)
    write(tmp_path, "vendor/old-release.yaml", gadget + "---\n" + old)
    write(tmp_path, "app/kustomization.yaml", "resources: [gadget.yaml, widget.yaml]\n")
    write(tmp_path, "app/gadget.yaml", widget().replace("Widget", "Gadget"))
    write(tmp_path, "app/widget.yaml", widget())
    run = check(tmp_path, "app")
    assert errors(run.report) == []
    kinds = {k["kind"]: k["where"] for k in run.report["roots"][0]["schemas"]["kinds"]}
    assert kinds == {"Gadget": "vendor/old-release.yaml", "Widget": "crds/widget.yaml"}


def test_unknown_fields_of_a_crd_are_warnings(tmp_path: Path) -> None:
    write(tmp_path, "crds/widget.yaml", CRD)
    write(tmp_path, "app/kustomization.yaml", "resources: [widget.yaml]\n")
    write(tmp_path, "app/widget.yaml", widget() + "  colour: blue\n")
    run = check(tmp_path, "app")
    assert run.code == 0
    assert [(d["line"], d["severity"], d["message"]) for d in run.report["defects"]] == [
        (10, "warning", "spec.colour: unknown field")]


def test_without_any_source_the_kind_is_reported_once_and_require_schemas_fails(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: [widget.yaml]\n")
    write(tmp_path, "app/widget.yaml", widget())
    run = check(tmp_path)
    assert run.code == 0
    assert run.report["roots"][0]["schemas"]["missing"] == ["Widget (example.com/v1)"]
    strict = check(tmp_path, "--require-schemas")
    assert strict.code == 1
    assert [d["validator"] for d in strict.report["defects"]] == ["schema-missing"]


# --- schema locations -------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "additionalProperties": False,
                                                    "properties": {"size": {"type": "integer"}}}}}


def repo_with_widget(tmp_path: Path, size: str = "'big'") -> Path:
    write(tmp_path, "app/kustomization.yaml", "resources: [widget.yaml]\n")
    write(tmp_path, "app/widget.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n"
                                       f"spec:\n  size: {size}\n  extra: 1\n")
    return tmp_path


def test_a_directory_in_the_crds_catalog_layout(tmp_path: Path) -> None:
    repo = repo_with_widget(tmp_path / "repo")
    write(tmp_path, "catalog/example.com/widget_v1.json", json.dumps(SCHEMA))
    run = check(repo, "--schema-location", str(tmp_path / "catalog"))
    assert [(p, line) for p, line, _ in errors(run.report)] == [("app/widget.yaml", 6)]
    # a catalog may predate the CRD installed: what it does not know is an info, an error with --strict
    assert [(d["line"], d["severity"]) for d in run.report["defects"] if d["line"] == 7] == [(7, "info")]
    strict = check(repo, "--schema-location", str(tmp_path / "catalog"), "--strict")
    assert sorted(line for _, line, _ in errors(strict.report)) == [6, 7]
    [kind] = run.report["roots"][0]["schemas"]["kinds"]
    assert (kind["source"], kind["where"]) == ("location", str(tmp_path / "catalog/example.com/widget_v1.json"))


def test_what_a_catalog_refuses_of_an_alpha_version_is_a_warning_but_a_null(tmp_path: Path) -> None:
    # an alpha version changes shape between releases under one name: the
    # catalog's release need not be the installed one; a repository CRD is
    write(tmp_path, "repo/app/kustomization.yaml", "resources: [widget.yaml]\n")
    write(tmp_path, "repo/app/widget.yaml",
          "apiVersion: example.com/v1alpha1\nkind: Widget\nmetadata:\n  name: w\n"
          "spec:\n  size: 'big'\n  hosts:\n  - a\n  -\n")
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer"}, "hosts": {"type": "array", "items": {"type": "string"}}}}}}
    write(tmp_path, "catalog/example.com/widget_v1alpha1.json", json.dumps(schema))
    run = check(tmp_path / "repo", "--schema-location", str(tmp_path / "catalog"))
    found = {(d["line"], d["severity"]) for d in run.report["defects"]}
    assert found == {(6, "warning"), (9, "error")}  # the wrong type / the empty list item
    assert run.code == 1
    # the same shape in a beta version stays an error
    write(tmp_path, "repo/app/widget.yaml",
          "apiVersion: example.com/v1beta1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 'big'\n")
    write(tmp_path, "catalog/example.com/widget_v1beta1.json", json.dumps(schema))
    beta = check(tmp_path / "repo", "--schema-location", str(tmp_path / "catalog"))
    assert [(d["line"], d["severity"]) for d in beta.report["defects"]] == [(6, "error")]


def test_what_a_catalog_refuses_of_an_object_written_for_another_release_is_a_warning(tmp_path: Path) -> None:
    # Crossplane 1's Composition (mode Resources, spec.resources) judged by
    # the catalog's Crossplane 2 schema, where Pipeline is the only mode
    schema = {"type": "object", "properties": {"spec": {
        "type": "object",
        "properties": {"mode": {"type": "string", "enum": ["Pipeline"]}, "pipeline": {"type": "array", "items": {"type": "string"}},
                       "replicas": {"type": "integer"}}}}}
    write(tmp_path, "catalog/example.com/composition_v1.json", json.dumps(schema))
    write(tmp_path, "repo/app/kustomization.yaml", "resources: [composition.yaml]\n")

    def run(spec: str, location: bool = True) -> list[tuple[int, str]]:
        write(tmp_path, "repo/app/composition.yaml",
              "apiVersion: example.com/v1\nkind: Composition\nmetadata:\n  name: c\nspec:\n" + spec)
        flags = ("--schema-location", str(tmp_path / "catalog")) if location else ()
        report = check(tmp_path / "repo", *flags).report
        return sorted((d["line"], d["severity"]) for d in report["defects"] if d["severity"] != "info")

    assert run("  mode: Resources\n  resources: []\n") == [(6, "warning")]
    found = check(tmp_path / "repo", "--schema-location", str(tmp_path / "catalog")).report["defects"]
    [warning] = [d for d in found if d["severity"] == "warning"]
    assert "spec.resources" in warning["message"] and "another release" in warning["message"]
    # a near miss of a field the schema knows is a slip, not another release,
    # and so is a scalar the schema does not know (a field misnamed)
    assert run("  mode: Resources\n  pipline: []\n") == [(6, "error")]
    assert run("  mode: Resources\n  resources: []\n  replica: 2\n") == [(6, "error")]
    assert run("  mode: Resources\n  source: claim\n") == [(6, "error")]
    # a field at the object's top level is misplaced content in any release
    assert run("  mode: Resources\nresources: []\n") == [(6, "error")]
    # a wrong type beside an unknown field is a slip in any release
    assert run("  replicas: two\n  resources: []\n") == [(6, "error")]
    if cel.available():  # a CEL rule at the object holding the field
        schema["properties"]["spec"]["x-kubernetes-validations"] = [
            {"rule": "has(self.pipeline)", "message": "an array of pipeline steps is required"}]
        write(tmp_path, "catalog/example.com/composition_v1.json", json.dumps(schema))
        assert run("  resources: []\n") == [(5, "warning")]
        assert run("  pipelin: []\n") == [(5, "error")]
        del schema["properties"]["spec"]["x-kubernetes-validations"]
    # the repository's own CRD is the release installed: its refusal stands
    write(tmp_path, "repo/crds/composition.yaml", crd("Composition", json.dumps(schema)))
    assert run("  mode: Resources\n  resources: []\n", location=False) == [(6, "error"), (7, "warning")]


def test_a_template_with_kubeconform_placeholders(tmp_path: Path) -> None:
    repo = repo_with_widget(tmp_path / "repo")
    write(tmp_path, "schemas/widget-example-v1.json", json.dumps(SCHEMA))
    template = str(tmp_path / "schemas/{{ .ResourceKind }}{{.KindSuffix}}.json")
    run = check(repo, "--schema-location", template)
    assert [(p, line) for p, line, _ in errors(run.report)] == [("app/widget.yaml", 6)]


def test_the_configuration_names_locations_relative_to_itself(tmp_path: Path) -> None:
    repo = repo_with_widget(tmp_path)
    write(tmp_path, "schemas/example.com/widget_v1.json", json.dumps(SCHEMA))
    write(tmp_path, ".krmcheck.yaml", "schema-locations: [schemas]\n")
    assert [(p, line) for p, line, _ in errors(check(repo).report)] == [("app/widget.yaml", 6)]


def test_a_bad_template_is_a_usage_error(tmp_path: Path) -> None:
    repo = repo_with_widget(tmp_path)
    run = check(repo, "--schema-location", "schemas/{{.Kind}}.json")
    assert run.code == 2 and "unknown placeholder {{.Kind}}" in run.err


def test_placeholders_follow_kubeconform() -> None:
    values = locations.placeholders("apps/v1", "Deployment", "1.30", True)
    assert values == {"Group": "apps", "ResourceKind": "deployment", "ResourceAPIVersion": "v1",
                      "KindSuffix": "-apps-v1", "NormalizedKubernetesVersion": "v1.30",
                      "StrictSuffix": "-strict"}
    core = locations.placeholders("v1", "Service", "1.30", False)
    assert core is not None and (core["Group"], core["KindSuffix"]) == ("v1", "-v1")
    assert locations.placeholders("../x/v1", "Widget", "1.30", False) is None


class _Server:
    """A local HTTP server: the first request for each path answers 429."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files, self.seen = files, []  # type: ignore[var-annotated]
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                outer.seen.append(self.path)
                if outer.seen.count(self.path) == 1:
                    self.send_response(429)
                    self.send_header("Retry-After", "0")
                    self.end_headers()
                    return
                body = outer.files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server({"/catalog/example.com/widget_v1.json": json.dumps(SCHEMA).encode()})
    yield srv
    srv.httpd.shutdown()


def test_a_url_is_fetched_only_with_network_once_and_retried_on_429(
        tmp_path: Path, server: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(download.time, "sleep", lambda seconds: None)
    locations.fetch.cache_clear()
    repo = repo_with_widget(tmp_path / "repo")
    offline = check(repo, "--schema-location", server.url + "/catalog")
    assert server.seen == [] and offline.report["roots"][0]["schemas"]["missing"] == ["Widget (example.com/v1)"]
    online = check(repo, "--schema-location", server.url + "/catalog", "--network")
    assert [(p, line) for p, line, _ in errors(online.report)] == [("app/widget.yaml", 6)]
    assert server.seen == ["/catalog/example.com/widget_v1.json"] * 2  # a 429, then the file
    locations.fetch.cache_clear()
    cached = check(repo, "--schema-location", server.url + "/catalog")  # offline: the cached copy
    assert [(p, line) for p, line, _ in errors(cached.report)] == [("app/widget.yaml", 6)]
    assert len(server.seen) == 2


# --- krmcheck schemas list / pull ----------------------------------------------------------

def test_schemas_list_names_the_source_of_each_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from krmcheck.cli import main
    write(tmp_path, "crds/widget.yaml", CRD)
    write(tmp_path, "app/kustomization.yaml", "resources: [widget.yaml, cm.yaml, gadget.yaml]\n")
    write(tmp_path, "app/widget.yaml", widget())
    write(tmp_path, "app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    write(tmp_path, "app/gadget.yaml", "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n")
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["schemas", "list", "app"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert rows[0] == ["KIND", "SOURCE", "SCHEMA", "RESOURCES", "ROOTS"]
    assert rows[1:] == [["ConfigMap", "(v1)", "built-in", "Kubernetes", builtin_version(), "1", "1"],
                        ["Widget", "(example.com/v1)", "repository", "crds/widget.yaml", "1", "1"],
                        ["Gadget", "(example.com/v1)", "none", "-", "1", "1"]]


def builtin_version() -> str:
    from krmcheck.schemas import builtin
    return builtin.versions()[-1]


def test_schemas_pull_fills_the_cache_for_offline_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from dulwich import porcelain

    from krmcheck.cli import main
    catalog = tmp_path / "catalog-repo"
    write(catalog, "example.com/widget_v1.json", json.dumps(SCHEMA))
    write(catalog, "README.md", "a catalog\n")
    repo = porcelain.init(str(catalog))
    porcelain.add(repo, paths=[str(catalog / "example.com/widget_v1.json"), str(catalog / "README.md")])
    commit = porcelain.commit(repo, message=b"schemas", author=b"a <a@b>", committer=b"a <a@b>").decode()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert main(["schemas", "pull", str(catalog), "--ref", commit, "--name", "team"]) == 0
    assert "pulled 1 schema from" in capsys.readouterr().out
    pulled = tmp_path / "cache/krmcheck/schemas/catalogs/team"
    assert (pulled / "example.com/widget_v1.json").is_file()
    assert json.loads((pulled / ".source").read_text())["commit"] == commit
    run = check(repo_with_widget(tmp_path / "repo"))
    [kind] = run.report["roots"][0]["schemas"]["kinds"]
    assert kind["source"] == "cache"
    assert [(p, line) for p, line, _ in errors(run.report)] == [("app/widget.yaml", 6)]
    assert main(["schemas", "pull", str(tmp_path / "nowhere")]) == 2


@pytest.mark.parametrize("value, valid", [("web-1", True), ("Web", False), (7, True), ("", False)])
def test_both_validators_match_patterns_with_re2_and_agree(value: object, valid: bool) -> None:
    """fastjsonschema (its patterns made RE2 formats) and jsonschema (its
    pattern keyword made RE2's) decide alike; a property named ``pattern``
    or ``format`` is a name, not a keyword."""
    import fastjsonschema

    from krmcheck.schemas import sources
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "name": {"type": ["string", "integer"], "pattern": r"^[a-z]([-a-z0-9]*[a-z0-9])?\z"},
        "pattern": {"type": "string", "format": "date-time"},
        "format": {"anyOf": [{"type": "string", "pattern": "^x"}, {"type": "integer"}]}}}}}
    checker = sources._json_checker(schema, sources.REPOSITORY, "crds/w.yaml", "")
    data = {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"},
            "spec": {"name": value, "pattern": "not a date", "format": 5}}
    assert checker.full.is_valid(data) is valid
    fast = checker.make_fast()
    try:
        fast(data)
        assert valid
    except fastjsonschema.JsonSchemaException:
        assert not valid
    assert checker.full.is_valid({**data, "spec": {"format": "y"}}) is False
    with pytest.raises(fastjsonschema.JsonSchemaException):
        fast({**data, "spec": {"format": "y"}})
