"""Hostile input: no Secret value leaves krmcheck, whatever path it takes.

Each repository plants known values in Secret ``data`` (base64),
``stringData`` and ``secretGenerator`` literals, files and env files, then
provokes build errors and findings that quote them: a replacement that
cannot write a Secret's value, a schema error about a Secret's ``data``, a
value that a replacement, a var or a patch copied into another resource.
Every output of the run is searched for every planted value: stdout,
stderr, the GitHub annotations and job summary, the JSON, SARIF, JUnit and
GitLab reports and a written baseline. Masking follows provenance: a
public value that a Secret happens to hold too is shown.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from krmcheck.cli import main

DB_PASSWORD = "hunter2-db-password"
API_TOKEN = "tok-5f3a9c0e7b21"
URL_SECRET = "pg-url-credential"
SCALAR_DATA = "supersecretscalar"
NUMBER_DATA = 734591268
LITERAL = "literal-secret-value"
FILE_LINES = ("first-file-secret", "second-file-secret")
CERT = "\n".join(FILE_LINES) + "\n"
ENV_VALUE = "env-file-secret-value"
LABEL_SECRET = "label secret value!"
LONG_SECRET = "long-secret-" + "x7" * 30  # longer than a schema message quotes

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.25
"""


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _secret(name: str, body: str, labels: str = "") -> str:
    metadata = f"  name: {name}\n" + (f"  labels:\n    {labels}\n" if labels else "")
    return f"apiVersion: v1\nkind: Secret\nmetadata:\n{metadata}{body}"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _copy(source: str, field: str, kind: str, *targets: str, index: int | None = None,
          create: bool = False) -> str:
    """A replacements entry copying ``field`` of Secret ``source`` into ``targets`` of
    ``kind``: with ``index``, the part of the value at ``index`` of its ``|``-separated
    parts; with ``create``, into fields the targets lack."""
    split = f"    options:\n      delimiter: '|'\n      index: {index}\n" if index is not None else ""
    paths = "".join(f"    - {t}\n" for t in targets)
    made = "    options:\n      create: true\n" if create else ""
    return (f"- source:\n    kind: Secret\n    name: {source}\n    fieldPath: {field}\n{split}"
            f"  targets:\n  - select:\n      kind: {kind}\n    fieldPaths:\n{paths}{made}")


# --- the repositories ---------------------------------------------------------------

REPLACEMENT_ERROR = {  # a Secret's value cannot be written into an int field
    "replace-int/kustomization.yaml": "resources:\n- res.yaml\nreplacements:\n"
                                      + _copy("db", "data.password", "Deployment", "spec.replicas"),
    "replace-int/res.yaml": _secret("db", f"data:\n  password: {_b64(DB_PASSWORD)}\n") + "---\n" + DEPLOYMENT,
}
DELIMITER_ERROR = {  # kustomize's message quotes the value it cannot split
    "delimiter/kustomization.yaml": "resources:\n- res.yaml\nreplacements:\n"
                                    + _copy("db", "stringData.url", "ConfigMap", "data.x", index=5),
    "delimiter/res.yaml": _secret("db", f"stringData:\n  url: postgres://admin:{URL_SECRET}@db\n")
                          + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  x: y\n",
}
SCHEMA_ERRORS = {  # data that is not a map of strings
    "schema/kustomization.yaml": "resources:\n- res.yaml\n",
    "schema/res.yaml": _secret("scalar", f"data: {SCALAR_DATA}\n") + "---\n"
                       + _secret("typed", f"data:\n  k: {NUMBER_DATA}\n  b: not-base64 {API_TOKEN}!!\n"
                                          f"stringData:\n  list:\n  - {LONG_SECRET}\n"),
}
COPIED = {  # replacements, a var and a JSON patch carry values out of Secrets
    "copied/kustomization.yaml": (
        "resources:\n- res.yaml\n"
        f"secretGenerator:\n- name: gen\n  literals:\n  - token={LITERAL}\n"
        "replacements:\n"
        + _copy("gen", "data.token", "ConfigMap", "immutable", create=True)
        + _copy("plain", "stringData.label", "Deployment", "metadata.labels.app")
        + _copy("plain", "stringData.long", "Deployment", "spec.minReadySeconds", create=True)
        + "vars:\n- name: PORT\n  objref:\n    apiVersion: v1\n    kind: Secret\n    name: plain\n"
          "  fieldref:\n    fieldpath: stringData.port\n"
        "patches:\n- target:\n    kind: Secret\n    name: plain\n  patch: |\n"
        "    - op: copy\n      from: /stringData/label\n      path: /metadata/labels/copied\n"),
    "copied/res.yaml": _secret("plain", f"stringData:\n  label: {LABEL_SECRET}\n  port: {NUMBER_DATA}\n"
                                        f"  long: {LONG_SECRET}\n", labels="app: plain")
                       + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  copied: x\n"
                       + "---\n" + DEPLOYMENT.replace("image: nginx:1.25", "image: nginx:1.25\n        env:\n"
                                                       "        - name: PORT\n          value: $(PORT)"),
}
GENERATED = {  # secretGenerator files and env files, copied where validators look
    "generated/kustomization.yaml": (
        "resources:\n- deployment.yaml\n"
        "secretGenerator:\n- name: gen\n  files:\n  - cert=cert.txt\n  envs:\n  - app.env\n"
        "replacements:\n"
        + _copy("gen", "data.cert", "Deployment", "metadata.labels.cert", create=True)
        + _copy("gen", "data.VALUE", "Deployment", "spec.template.spec.containers.0.image")),
    "generated/deployment.yaml": DEPLOYMENT,
    "generated/cert.txt": CERT,
    "generated/app.env": f"# settings\nVALUE={ENV_VALUE}\n",
}
DELETED = {  # the Secret is gone from the output; the copy of its value is not
    "deleted/base/kustomization.yaml": "resources:\n- res.yaml\nreplacements:\n"
                                       + _copy("gone", "stringData.label", "Deployment", "metadata.labels.app"),
    "deleted/base/res.yaml": _secret("gone", f"stringData:\n  label: {LABEL_SECRET}\n") + "---\n" + DEPLOYMENT,
    "deleted/overlay/kustomization.yaml": "resources:\n- ../base\npatches:\n- patch: |\n"
                                          "    $patch: delete\n    apiVersion: v1\n    kind: Secret\n"
                                          "    metadata:\n      name: gone\n",
}
NAMED = {  # a JSON patch copies a Secret's values into its own name and namespace
    "named/kustomization.yaml": (
        "resources:\n- res.yaml\npatches:\n- target:\n    kind: Secret\n    name: plain\n  patch: |\n"
        "    - op: copy\n      from: /stringData/label\n      path: /metadata/name\n"
        "    - op: copy\n      from: /stringData/token\n      path: /metadata/namespace\n"),
    "named/res.yaml": _secret("plain", f"stringData:\n  label: {LABEL_SECRET}\n  token: {API_TOKEN}\n"),
}
GENERATED_ERROR = {  # a build that fails after the generator made the Secret
    "generated-error/kustomization.yaml": (
        f"secretGenerator:\n- name: gen\n  literals:\n  - url=a|{LITERAL}\n"
        "resources:\n- cm.yaml\nreplacements:\n"
        + _copy("gen", "data.url", "ConfigMap", "data.x", index=7)),
    "generated-error/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  x: y\n",
}

# each value as planted, and as base64 where a replacement copies it out of a Secret's data
PLANTED = (DB_PASSWORD, _b64(DB_PASSWORD), API_TOKEN, URL_SECRET, SCALAR_DATA, str(NUMBER_DATA),
           LITERAL, _b64(LITERAL), _b64(f"a|{LITERAL}"), *FILE_LINES, _b64(CERT), ENV_VALUE,
           _b64(ENV_VALUE), LABEL_SECRET, LONG_SECRET[:24])
REPOSITORIES = {"replacement-error": REPLACEMENT_ERROR, "delimiter-error": DELIMITER_ERROR,
                "schema": SCHEMA_ERRORS, "copied": COPIED, "generated": GENERATED,
                "deleted": DELETED, "generated-error": GENERATED_ERROR, "named": NAMED}


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         *args: str) -> tuple[int, str]:
    """One run with every output on: its exit code and everything it wrote."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    summary = tmp_path / "out" / "summary.md"
    summary.parent.mkdir(exist_ok=True)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code = main([*args, "--json", "out/r.json", "--sarif", "out/r.sarif", "--junit", "out/r.xml",
                 "--gitlab", "out/r.gitlab.json"])
    captured = capsys.readouterr()
    reports = [p.read_text() for p in sorted((tmp_path / "out").iterdir())]
    return code, "\n".join([captured.out, captured.err, *reports])


def _leaked(text: str) -> list[str]:
    return [v for v in PLANTED if v in text]


@pytest.mark.parametrize("files", REPOSITORIES.values(), ids=REPOSITORIES.keys())
def test_no_planted_value_in_any_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    _write(tmp_path, files)
    code, everything = _run(tmp_path, monkeypatch, capsys, ".", "--roots", "all")
    assert code in (1, 2)  # each repository has findings or build errors to report
    assert _leaked(everything) == []


_LABEL = ("is not a valid label value: must be empty or letters, digits, '-', '_' and '.', "
          "starting and ending with a letter or digit")
# (file, line, kind of the resource named, message) of every finding of REPOSITORIES
REPORTED = {
    # build errors that quote the value kustomize could not place
    ("replace-int/kustomization.yaml", 4, "",
     "running transformers of replace-int/kustomization.yaml: yaml: cannot decode !!str `<redacted>` as a !!int"),
    ("delimiter/kustomization.yaml", 4, "",
     "running transformers of delimiter/kustomization.yaml: options.index 5 is out of bounds for value <redacted>"),
    ("generated-error/kustomization.yaml", 8, "", "running transformers of generated-error/kustomization.yaml: "
                                                  "options.index 7 is out of bounds for value <redacted>"),
    # a Secret's own values are described, not quoted
    ("schema/res.yaml", 5, "Secret", "data: a string is not of type 'object'"),
    ("schema/res.yaml", 12, "Secret", "data.k: a number is not of type 'string'"),
    ("schema/res.yaml", 15, "Secret", "stringData.list: a list is not of type 'string'"),
    ("copied/res.yaml", 9, "Secret", "stringData.port: a number is not of type 'string'"),
    # copies: by replacements (a generated literal's base64, a long value the
    # message cuts short), by a var, by a JSON patch inside the Secret
    ("copied/kustomization.yaml", 8, "ConfigMap", "immutable: '<redacted>' is not of type 'boolean'"),
    ("copied/kustomization.yaml", 19, "Deployment", f"metadata.labels.app: '<redacted>' {_LABEL}"),
    ("copied/kustomization.yaml", 28, "Deployment", "spec.minReadySeconds: '<redacted>...' is not of type 'integer'"),
    ("copied/kustomization.yaml", 39, "", "'vars' is deprecated. Please use 'replacements' instead. "
                                          "[EXPERIMENTAL] Run 'kustomize edit fix' to update your Kustomization "
                                          "automatically."),
    ("copied/kustomization.yaml", 40, "Deployment",
     "spec.template.spec.containers[0].env[0].value: <redacted> is not of type 'string'"),
    ("copied/kustomization.yaml", 52, "Secret", f"metadata.labels.copied: '<redacted>' {_LABEL}"),
    # secretGenerator files (two lines, quoted with their line break) and env files
    ("generated/kustomization.yaml", 10, "Deployment", f"metadata.labels.cert: '<redacted>' {_LABEL}"),
    ("generated/kustomization.yaml", 21, "Deployment",
     "container 'web': image '<redacted>' has no tag or digest; pin a version"),
    # a copy out of a Secret that the overlay deletes (base and overlay are both roots)
    ("deleted/base/kustomization.yaml", 4, "Deployment", f"metadata.labels.app: '<redacted>' {_LABEL}"),
    # copies into the Secret's own name (and namespace: not judged), its resource named as masked
    ("named/kustomization.yaml", 8, "Secret", "metadata.name: '<redacted>' is not a valid Secret name: must be "
     "lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (DNS-1123 subdomain)"),
}


def test_the_findings_are_still_reported_where_the_values_were(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for files in REPOSITORIES.values():
        _write(tmp_path, files)
    _run(tmp_path, monkeypatch, capsys, ".", "--roots", "all")
    findings = json.loads((tmp_path / "out" / "r.json").read_text())["findings"]
    assert {(f["path"], f["line"], (f.get("resourceRef") or {}).get("kind", ""), f["message"])
            for f in findings} == REPORTED


def test_a_written_baseline_holds_no_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, {**COPIED, **SCHEMA_ERRORS})
    _run(tmp_path, monkeypatch, capsys, ".", "--write-baseline", "out/baseline.json")
    text = (tmp_path / "out" / "baseline.json").read_text()
    assert "<redacted>" in text and _leaked(text) == []


def test_roots_checked_in_worker_processes_are_masked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, {**REPLACEMENT_ERROR, **COPIED, **DELETED})
    code, everything = _run(tmp_path, monkeypatch, capsys, ".", "--jobs", "3")
    assert code == 2 and "<redacted>" in everything
    assert _leaked(everything) == []


@pytest.mark.parametrize("files,root", [(REPLACEMENT_ERROR, "replace-int"), (DELIMITER_ERROR, "delimiter"),
                                        (GENERATED_ERROR, "generated-error")])
def test_the_build_command_masks_its_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str], files: dict[str, str],
                                           root: str) -> None:
    _write(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    assert main(["build", root]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Error: {root}/kustomization.yaml:") and "<redacted>" in err
    assert _leaked(err) == []


PUBLIC = {  # public names that Secrets of the root happen to hold as values too
    "public/kustomization.yaml": "resources:\n- res.yaml\nreplacements:\n"
                                 + _copy("sso", "stringData.user", "Deployment",
                                         "spec.template.spec.containers.0.image"),
    "public/res.yaml": (
        _secret("sso", "stringData:\n  clientID: argo-server\n  user: user0\n") + "---\n"
        # as argo-workflows' test/e2e/manifests/components/base/argo-server.service-account-token-secret.yaml
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: argo-server.service-account-token\n  annotations:\n"
        "    kubernetes.io/service-account.name: argo-server\ntype: kubernetes.io/service-account-token\n---\n"
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: other\n---\n"
        + DEPLOYMENT.replace("  name: web\n", "  name: web\n  namespace: user0\n", 1)
                    .replace("      containers:", "      serviceAccountName: user0\n      containers:")),
}


def test_a_public_value_that_a_secret_also_holds_is_printed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, PUBLIC)
    _run(tmp_path, monkeypatch, capsys, ".")
    report = json.loads((tmp_path / "out" / "r.json").read_text())
    assert {(f["line"], f["message"]) for f in report["findings"]} == {
        (14, "ServiceAccount 'argo-server' is not defined in this root; if it is made elsewhere, declare it "
             "under provided: in .krmcheck.yaml"),
        (39, "ServiceAccount 'user0' is not defined in this root (namespace 'user0'); if it is made elsewhere, "
             "declare it under provided: in .krmcheck.yaml"),
        # the Secret's own user0, copied into an image, is still masked
        (4, "container 'web': image '<redacted>' has no tag or digest; pin a version"),
    }
    assert {r["namespace"] for r in report["roots"][0]["resources"] if "namespace" in r} == {"user0"}


# --- text a program wrote ---------------------------------------------------------------

SIBLING_SECRET = "sibling-root-secret-7c1d"
SHORT_SECRET = "q9z"  # masked only where quoted whole
# An external validator that has read the other root's Secret file: it names the
# value in a Result's message, tags, field path and resourceRef, or crashes
# printing it on stderr.
LEAKING_VALIDATOR = """\
#!{python}
import sys, yaml
rl = yaml.safe_load(sys.stdin)
first = (rl.get("items") or [{{}}])[0]
if {crash!r}:
    sys.stderr.write("cannot connect with password {secret}\\n")
    sys.exit(3)
rl["results"] = [
    {{"message": "found {secret} and '{short}' in the repository", "severity": "warning",
      "resourceRef": {{"apiVersion": first.get("apiVersion", ""), "kind": first.get("kind", ""),
                      "name": first.get("metadata", {{}}).get("name", "")}},
      "field": {{"path": "data.{secret}"}}, "tags": {{"seen": "{secret}"}}}},
    {{"message": "a resource named after it", "severity": "warning",
      "resourceRef": {{"apiVersion": "v1", "kind": "ConfigMap", "name": "{secret}"}}}},
]
yaml.safe_dump(rl, sys.stdout)
"""


def _sibling_roots(root: Path, crash: bool) -> None:
    import sys

    _write(root, {
        "vault/kustomization.yaml": "resources:\n- secret.yaml\n",
        "vault/secret.yaml": _secret("db", f"stringData:\n  password: {SIBLING_SECRET}\n  pin: {SHORT_SECRET}\n"),
        "app/kustomization.yaml": "resources:\n- cm.yaml\n",
        "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n",
        ".krmcheck.yaml": "external-validators:\n- exec: tools/leak.py\n",
        "tools/leak.py": LEAKING_VALIDATOR.format(python=sys.executable, secret=SIBLING_SECRET,
                                                 short=SHORT_SECRET, crash=crash),
    })
    (root / "tools" / "leak.py").chmod(0o755)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_programs_results_are_masked_with_the_values_of_every_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], jobs: str) -> None:
    _sibling_roots(tmp_path, crash=False)
    code, everything = _run(tmp_path, monkeypatch, capsys, ".", "--enable-exec", "--jobs", jobs,
                            "--fail-on", "error")
    assert code == 0, everything
    assert SIBLING_SECRET not in everything and f"'{SHORT_SECRET}'" not in everything
    report = json.loads((tmp_path / "out" / "r.json").read_text())
    by_root = {(f["root"], f["message"]) for f in report["findings"]}
    # the root that holds the Secret and its sibling say the same, masked
    assert {("app", "found <redacted> and '<redacted>' in the repository"),
            ("vault", "found <redacted> and '<redacted>' in the repository")} <= by_root
    assert {(f.get("resourceRef") or {}).get("name") for f in report["findings"]
            if f["message"] == "a resource named after it"} == {"<redacted>"}
    for name in ("r.sarif", "r.xml", "r.gitlab.json", "summary.md"):  # (XML escapes the brackets)
        assert "redacted" in (tmp_path / "out" / name).read_text(), name


def test_a_programs_output_in_a_build_error_is_masked_with_the_values_of_every_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _sibling_roots(tmp_path, crash=True)
    code, everything = _run(tmp_path, monkeypatch, capsys, ".", "--enable-exec")
    assert code == 2
    assert SIBLING_SECRET not in everything
    report = json.loads((tmp_path / "out" / "r.json").read_text())
    assert {f["root"] for f in report["findings"] if "cannot connect with password <redacted>" in f["message"]} \
        == {"app", "vault"}


def test_a_krm_functions_results_are_masked_with_the_values_of_every_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    _write(tmp_path, {
        "vault/kustomization.yaml": "resources:\n- secret.yaml\n",
        "vault/secret.yaml": _secret("db", f"stringData:\n  password: {SIBLING_SECRET}\n"),
        "app/kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- fn.yaml\n",
        "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n",
        "app/fn.yaml": "apiVersion: example.com/v1\nkind: Leak\nmetadata:\n  name: fn\n  annotations:\n"
                       "    config.kubernetes.io/function: |\n      exec:\n        path: ./leak.py\n",
        "app/leak.py": f"#!{sys.executable}\nimport sys, yaml\nrl = yaml.safe_load(sys.stdin)\n"
                       f"rl['results'] = [{{'message': 'password is {SIBLING_SECRET}', 'severity': 'warning'}}]\n"
                       "yaml.safe_dump(rl, sys.stdout)\n",
    })
    (tmp_path / "app" / "leak.py").chmod(0o755)
    code, everything = _run(tmp_path, monkeypatch, capsys, ".", "--enable-alpha-plugins", "--enable-exec")
    assert code == 0, everything
    assert SIBLING_SECRET not in everything
    report = json.loads((tmp_path / "out" / "r.json").read_text())
    assert ("app", "password is <redacted>") in {(f["root"], f["message"]) for f in report["findings"]}
