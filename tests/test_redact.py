"""Secret values never reach a report."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.cli import main

SECRET = """\
apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: 98765432
  token: hunter2-very-secret
"""


def test_secret_value_in_a_schema_message_is_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text("resources:\n- secret.yaml\n")
    (tmp_path / "app" / "secret.yaml").write_text(SECRET)
    monkeypatch.chdir(tmp_path)
    assert main([".", "--json", "out.json", "--sarif", "out.sarif", "--junit", "out.xml"]) == 1
    out = capsys.readouterr().out
    assert "app/secret.yaml:6:3: error" in out  # the finding is still there, at its line
    for text in (out, *(Path(f).read_text() for f in ("out.json", "out.sarif", "out.xml"))):
        assert "98765432" not in text
        assert "<redacted>" in text or "&lt;redacted&gt;" in text


def test_findings_about_other_resources_are_left_alone() -> None:
    from krmcheck.redact import redact
    from krmcheck.results import ResourceRef, Result

    secrets = frozenset({"storefront"})
    label = Result("'storefront backend' is not a valid label value",
                   resource_ref=ResourceRef("apps/v1", "Deployment", "api"))
    assert redact(label, secrets) is label
    secret = Result("'storefront' is wrong", resource_ref=ResourceRef("v1", "Secret", "db"))
    assert redact(secret, secrets).message == "'<redacted>' is wrong"
