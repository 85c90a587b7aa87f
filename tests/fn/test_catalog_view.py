"""`krmcheck catalog view LOCATION` and the --trusted-catalog flag of build
and check, through the real command line."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path

import pytest

from krmcheck import cli

DIGEST = "ab" * 32
CATALOG = f"""\
apiVersion: config.kubernetes.io/v1alpha1
kind: Catalog
metadata:
  name: example-co
spec:
  krmFunctions:
  - group: example.com
    names:
      kind: SetNamespace
    description: Sets the namespace.
    publisher: Example Co
    versions:
    - name: v1
      runtime:
        container:
          image: docker.example.co/set-namespace:v1.2.3
          sha256: {DIGEST}
          requireNetwork: true
    - name: v2
      runtime:
        exec:
          platforms:
          - {{os: linux, arch: amd64, bin: set-ns, uri: https://example.co/set-ns.tar.gz, sha256: {DIGEST}}}
"""

EXPECTED = f"""\
Catalog example-co
  location: catalogs/team.yaml
  sha256:   {{sha}}
  trust it: --trusted-catalog catalogs/team.yaml
functions: 1
- SetNamespace (example.com)
    publisher:   Example Co
    description: Sets the namespace.
    version v1 (apiVersion example.com/v1):
      container docker.example.co/set-namespace:v1.2.3  sha256:{DIGEST}  needs network
    version v2 (apiVersion example.com/v2):
      exec linux/amd64  set-ns from https://example.co/set-ns.tar.gz  sha256:{DIGEST}
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "catalogs").mkdir()
    (tmp_path / "catalogs" / "team.yaml").write_text(CATALOG)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_view_prints_publisher_functions_versions_runtimes_and_digests(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import hashlib

    assert cli.main(["catalog", "view", "catalogs/team.yaml"]) == 0
    sha = hashlib.sha256(CATALOG.encode()).hexdigest()
    assert capsys.readouterr().out == EXPECTED.format(sha=sha)


def test_view_from_a_subdirectory_names_the_catalog_from_the_repository_top(
        repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo / "catalogs")
    assert cli.main(["catalog", "view", "team.yaml"]) == 0
    assert "  location: catalogs/team.yaml\n" in capsys.readouterr().out


def test_view_reports_an_invalid_catalog_at_its_line(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "catalogs" / "bad.yaml").write_text(CATALOG.replace("    publisher: Example Co\n", ""))
    assert cli.main(["catalog", "view", "catalogs/bad.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: catalogs/bad.yaml:7:5: invalid catalog catalogs/bad.yaml: "
                          "spec.krmFunctions[0]: 'publisher' is a required property")


def test_view_fetches_the_url_it_is_given(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = CATALOG.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/team.yaml"
        assert cli.main(["catalog", "view", url]) == 0
    finally:
        httpd.shutdown()
        httpd.server_close()
    out = capsys.readouterr().out
    assert f"  location: {url}\n" in out and f"  trust it: --trusted-catalog {url}\n" in out


def test_view_needs_a_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(["catalog"])
    assert e.value.code == 2


def _app(repo: Path) -> None:
    (repo / "app").mkdir()
    (repo / "app" / "kustomization.yaml").write_text(
        "catalogs:\n- ../catalogs/team.yaml\nresources:\n- cm.yaml\n")
    (repo / "app" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")


def test_build_refuses_an_untrusted_catalog(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _app(repo)
    assert cli.main(["build", "app"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: app/kustomization.yaml:2:3: ")
    assert "catalog '../catalogs/team.yaml' is not trusted" in err
    assert "--trusted-catalog catalogs/team.yaml" in err


def test_build_and_check_take_trusted_catalogs(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _app(repo)
    assert cli.main(["build", "app", "--trusted-catalog", "catalogs/team.yaml",
                     "--trusted-catalog", "https://example.co/other.yaml"]) == 0
    assert capsys.readouterr().out == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
    opts = cli.parse_check(["--trusted-catalog", "a.yaml", "--trusted-catalog", "oci://r/c:v1", "."])
    assert opts.trusted_catalogs == ("a.yaml", "oci://r/c:v1")
    assert cli.main(["check", "app", "--trusted-catalog", "catalogs/team.yaml", "--github", "off"]) == 0
