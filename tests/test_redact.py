"""Secret values never reach a report."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from krmcheck.cli import main
from krmcheck.kustomize.target import Builder
from krmcheck.redact import redact, text
from krmcheck.resource.secrets import generator_inputs, secret_values
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.results import ResourceRef, Result
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping

SECRET = """\
apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: 98765432
  token: hunter2-very-secret
"""


def test_a_schema_message_describes_a_secret_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text("resources:\n- secret.yaml\n")
    (tmp_path / "app" / "secret.yaml").write_text(SECRET.replace("98765432", "12"))
    monkeypatch.chdir(tmp_path)
    assert main([".", "--json", "out.json", "--sarif", "out.sarif", "--junit", "out.xml"]) == 1
    out = capsys.readouterr().out
    # the finding is still there, at its line; a value too short to mask is not quoted either
    assert "app/secret.yaml:6:3: error: stringData.password: a number is not of type 'string'" in out
    for text in (out, *(Path(f).read_text() for f in ("out.json", "out.sarif", "out.xml"))):
        assert "12 is not" not in text and "hunter2" not in text


def _resources(yaml_text: str) -> list[Resource]:
    return [Resource(doc) for doc in load_documents(yaml_text, "s.yaml") if isinstance(doc, Mapping)]


def test_what_counts_as_a_secret_value() -> None:
    wrapped = base64.b64encode(b"x" * 80 + b"\nsecond-line").decode()
    found = secret_values(_resources(
        "kind: Secret\ndata: scalar-instead-of-map\n---\n"
        f"kind: Secret\ndata:\n  b64: {base64.b64encode(b'decoded-value').decode()}\n"
        f"  wrapped: |\n    {wrapped[:70]}\n    {wrapped[70:]}\n  hex: 0x1F\n  nested: [deep-value]\n"
        "stringData:\n  plain: string-data-value\n---\n"
        "kind: ConfigMap\ndata:\n  not: a-secret-at-all\n"))
    assert {"scalar-instead-of-map", "decoded-value", "x" * 80, "second-line", "0x1F", "31",
            "deep-value", "string-data-value", base64.b64encode(b"string-data-value").decode()} <= found
    assert "a-secret-at-all" not in found


def test_secret_generator_literals_count_before_the_secret_exists() -> None:
    entry = load_documents("name: s\nliterals:\n- a=plain-literal\n- b='quoted literal'\n"
                           "- bare-secret-no-key\n", "k.yaml")[0]
    assert generator_inputs(entry) == {"plain-literal", "'quoted literal'", "quoted literal",
                                       "bare-secret-no-key"}


def test_a_build_that_fails_part_way_knows_the_values_it_read(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "kustomization.yaml").write_text(  # values read, then the Secret deleted
        "resources:\n- secret.yaml\npatches:\n- patch: |\n    $patch: delete\n    apiVersion: v1\n"
        "    kind: Secret\n    metadata:\n      name: db\n")
    (tmp_path / "base" / "secret.yaml").write_text(SECRET)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text(
        "resources:\n- ../base\nsecretGenerator:\n- name: gen\n  literals:\n  - k=generated-literal\n"
        "  files:\n  - missing.txt\n")
    builder = Builder(Files(tmp_path))
    for _ in range(2):  # the second time, the base comes from the builder's cache
        with pytest.raises(BuildError):
            builder.build(tmp_path / "app")
        assert {"hunter2-very-secret", "98765432", "generated-literal"} <= builder.secrets
    builder.build(tmp_path / "base")
    assert "generated-literal" not in builder.secrets  # each build knows its own


def test_copies_in_findings_about_other_resources_are_masked_too() -> None:
    # replacements, vars and patches copy Secret values into other resources
    secrets = frozenset({"storefront"})
    label = Result("'storefront backend' is not a valid label value",
                   resource_ref=ResourceRef("apps/v1", "Deployment", "api"))
    assert redact(label, secrets).message == "'<redacted> backend' is not a valid label value"
    secret = Result("'storefront' is wrong", resource_ref=ResourceRef("v1", "Secret", "db"))
    assert redact(secret, secrets).message == "'<redacted>' is wrong"
    assert redact(secret, frozenset()) is secret


def _masked(message: str, *secrets: str) -> str:
    return text(message, frozenset(secrets))


def test_long_values_are_masked_anywhere_even_cut_short() -> None:
    assert _masked("x=abcdefgh123;", "abcdefgh123") == "x=<redacted>;"
    assert _masked("value 'abcdefgh1...' is wrong", "abcdefgh123") == "value '<redacted>...' is wrong"
    assert _masked("value 'abcdefg...' is wrong", "abcdefgh123") == "value 'abcdefg...' is wrong"


def test_values_of_four_to_seven_characters_are_masked_as_words() -> None:
    assert _masked("image 'nginx:s3cr' uses s3cr", "s3cr") == "image 'nginx:<redacted>' uses <redacted>"
    assert _masked("image 'nginx:latest'", "test") == "image 'nginx:latest'"


def test_short_and_common_values_are_masked_only_when_quoted_whole() -> None:
    assert _masked("'ab' is not 'abc', ab is", "ab") == "'<redacted>' is not 'abc', ab is"
    assert _masked("must be true or false, not `true`", "true") == "must be true or false, not `<redacted>`"


def test_escaped_spellings_of_a_value_are_masked() -> None:
    assert _masked("'line-one-secret\\nline-two-secret' is invalid",
                   "line-one-secret\nline-two-secret") == "'<redacted>' is invalid"


def test_validator_ids_in_tags_are_kept() -> None:
    result = Result("the 'metadata' check", tags=(("validator", "metadata"), ("detail", "metadata")))
    masked = redact(result, frozenset({"metadata"}))
    assert masked.tags == (("validator", "metadata"), ("detail", "<redacted>"))
    assert masked.message == "the '<redacted>' check"


def test_a_value_that_is_a_word_of_krmchecks_own_messages_is_masked_only_when_quoted() -> None:
    # kubeflow's MySQL user is "root": "not defined in this root" must stay readable
    assert _masked("ServiceAccount 'sa' is not defined in this root", "root") == \
        "ServiceAccount 'sa' is not defined in this root"
    assert _masked("user 'root' is wrong", "root") == "user '<redacted>' is wrong"


def test_a_node_is_public_when_no_writer_of_it_wrote_secret_data() -> None:
    from krmcheck.redact import Secrets
    from krmcheck.tree.node import Scalar
    from krmcheck.tree.origin import Location, Origin

    data = Origin("s.yaml", 6, 3)  # a Secret's data line
    secrets = Secrets(frozenset({"user0", "tok"}), frozenset({data.location}), unplaced=frozenset({"tok"}))
    assert secrets.public(Scalar("user0", Origin("ns.yaml", 4, 3)))  # a namespace that happens to match
    assert not secrets.public(Scalar("user0", data))  # the Secret's own value
    copied = Scalar("user0", Origin("k.yaml", 9, 3, "replacement"), (data, Origin("d.yaml", 20, 9)))
    assert not secrets.public(copied)  # a copy keeps the Secret's line in its trail
    assert not secrets.public(Scalar("user0", Origin("k.yaml", 12, 3, "function")))  # a program's: unknown
    assert not secrets.public(Scalar("tok", Origin("ns.yaml", 5, 3)))  # a controller's variable from a Secret
    assert Location("s.yaml", 6, 3) in secrets.places
