"""Hostile repositories: each ends in an error at the line that caused it,
with the other roots still checked; and the limits that keep work bounded
hold without refusing what kubectl renders."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from krmcheck import cli
from krmcheck.tree.load import MAX_DEPTH
from tests.checkrun import check, write

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n"


def _good_root(root: Path) -> None:
    """A root with one finding, to show the run went on past a broken one."""
    write(root, "good/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(root, "good/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n")


def _build_errors(run_report: dict) -> list[tuple[str, int, int, str]]:
    return [(d["path"], d["line"], d["col"], d["message"]) for d in run_report["defects"]
            if d["validator"] == "build"]


def _main(*args: str) -> tuple[int, str, str]:
    """``krmcheck ARGS`` run inside the directory of the last argument's parent."""
    out, err = io.StringIO(), io.StringIO()
    target = Path(args[-1])
    before = Path.cwd()
    os.chdir(target.parent)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = cli.main([*args[:-1], target.name])
    finally:
        os.chdir(before)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("entry, reason", [
    ("loop", "a symbolic link loop"),
    ('"x\\0y"', "a path may not hold a NUL byte"),
    ("x" * 5000, "the name is too long"),
])
def test_unreadable_resource_entries_are_errors_at_their_line(tmp_path: Path, entry: str, reason: str) -> None:
    write(tmp_path, "bad/kustomization.yaml", f"namePrefix: p-\nresources:\n- {entry}\n")
    os.symlink("loop", tmp_path / "bad" / "loop")
    _good_root(tmp_path)
    run = check(tmp_path, ".")
    assert run.code == 2
    [(path, line, col, message)] = _build_errors(run.report)
    assert (path, line, col) == ("bad/kustomization.yaml", 3, 3)
    assert reason in message and str(tmp_path) not in message and len(message) < 600
    assert ("good/cm.yaml", 4, "metadata") in run.located()  # the other root was still checked


@pytest.mark.parametrize("text, line, message", [
    ("patches: 5\n", 1, "patches must be a list, not an integer"),
    ("configMapGenerator: true\n", 1, "configMapGenerator must be a list, not a boolean"),
    ("resources:\n- cm.yaml\nnamePrefix: [a]\n", 3, "namePrefix must be a string, not a list"),
    ("resources:\n- cm.yaml\nimages:\n- name: nginx\n  newTag: 1.28\n", 5,
     "images[0].newTag must be a string, not a number"),
    ("resources:\n- cm.yaml\nreplicas:\n- {name: a, count: '3'}\n", 4,
     "replicas[0].count must be an integer, not a string"),
    ("resources:\n- cm.yaml\ncommonLabels:\n  app: 1\n", 4, "commonLabels.app must be a string, not an integer"),
    ("resources:\n- 5\n", 2, "resources[0] must be a string, not an integer"),
    ("resources:\nnamePrefix:\n", 1, "is empty"),
    ("namespace: ''\nkind: Kustomization\n", 1, "is empty"),
])
def test_wrong_shapes_in_a_kustomization_are_refused_as_kustomize_decodes(
        tmp_path: Path, text: str, line: int, message: str) -> None:
    write(tmp_path, "bad/kustomization.yaml", text)
    write(tmp_path, "bad/cm.yaml", CONFIGMAP.format(name="a"))
    _good_root(tmp_path)
    run = check(tmp_path, ".")
    assert run.code == 2
    [(path, got_line, _, got)] = _build_errors(run.report)
    assert (path, got_line) == ("bad/kustomization.yaml", line)
    assert message in got
    assert ("good/cm.yaml", 4, "metadata") in run.located()


def test_empty_lists_and_maps_are_not_an_empty_kustomization(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: []\ncommonAnnotations: {}\n")
    assert check(tmp_path, ".").code == 0


def test_invalid_utf8_is_an_error_at_the_byte(tmp_path: Path) -> None:
    write(tmp_path, "bad/kustomization.yaml", "resources:\n- cm.yaml\n")
    (tmp_path / "bad" / "cm.yaml").write_bytes(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\xff\n")
    run = check(tmp_path, ".")
    [(path, line, col, message)] = _build_errors(run.report)
    assert (path, line, col) == ("bad/cm.yaml", 4, 10)
    assert "invalid UTF-8 (byte 0xff)" in message


@pytest.mark.parametrize(("body", "where", "problem"), [
    # a line left unindented ends the block scalar: the scanner reads it as a
    # key and gives up three lines on; the defect is the line itself
    ("data:\n  page: |\n    <p>one</p>\n<p>two</p>\n    <p>three</p>\n    <p>four</p>\n  other: x\n",
     (8, 1), "could not find expected ':'"),
    # a quote never closed: where it opens, not the end of the file
    ("data:\n  a: \"open\n  b: c\n  d: e\n", (6, 6), "found unexpected end of stream"),
    # a key indented less than its mapping: where the parser meets it
    ("data:\n  a: b\n  c: d\n e: f\n", (8, 2), "did not find expected key"),
])
def test_a_yaml_error_is_at_the_line_that_causes_it(tmp_path: Path, body: str, where: tuple[int, int],
                                                   problem: str) -> None:
    write(tmp_path, "bad/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(tmp_path, "bad/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n" + body)
    [(path, line, col, message)] = _build_errors(check(tmp_path, ".").report)
    assert (path, (line, col)) == ("bad/cm.yaml", where)
    assert problem in message


def test_binary_scalars_decode_and_bad_base64_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(tmp_path, "app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
                                   "binaryData:\n  x: !!binary aGVsbG8=\n  y: !!binary |\n    aGVs\n    bG8=\n")
    code, out, _ = _main("build", str(tmp_path / "app"))
    assert code == 0 and "  x: hello\n" in out and '  "y": hello\n' in out
    write(tmp_path, "app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
                                   "binaryData:\n  x: !!binary 'a G V s'\n")
    code, out, err = _main("build", str(tmp_path / "app"))
    assert code == 2 and "app/cm.yaml:6:3: accumulating resources of app/kustomization.yaml: invalid YAML: !!binary value contains invalid base64 data" in err


def _alias_bomb(levels: int = 9, head: str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n") -> str:
    lines = [head.rstrip("\n"), 'b0: &b0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("where", ["resource", "kustomization", "config"])
def test_an_alias_bomb_stops_at_its_line_instead_of_filling_memory(tmp_path: Path, where: str) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(tmp_path, "app/cm.yaml", CONFIGMAP.format(name="a"))
    if where == "resource":
        write(tmp_path, "app/cm.yaml", _alias_bomb())
    elif where == "kustomization":
        write(tmp_path, "app/kustomization.yaml", _alias_bomb(head="resources:\n- cm.yaml\n"))
    else:
        write(tmp_path, ".krmcheck.yaml", _alias_bomb(head="exclude: []\n"))
    started = time.monotonic()
    run = check(tmp_path, ".")
    assert time.monotonic() - started < 60  # unbounded, it would be 10^9 nodes
    assert run.code == 2
    text = run.out + run.err + str(run.report)
    assert "excessive aliasing" in text


def test_aliases_used_in_moderation_still_expand(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(tmp_path, "app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
                                   "  labels: &l {app: web}\n  annotations: *l\n")
    code, out, _ = _main("build", str(tmp_path / "app"))
    assert code == 0 and "annotations:\n    app: web\n" in out


def _nested(depth: int) -> str:
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
            "data:\n  k: v\nx: " + "[" * depth + "]" * depth + "\n")


def test_nesting_deeper_than_libyaml_allows_renders_as_kubectl_does(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(tmp_path, "app/cm.yaml", _nested(1500))
    code, out, err = _main("build", str(tmp_path / "app"))
    assert code == 0, err
    assert out.count("-") >= 1499  # the flow lists come out as block sequences


def test_nesting_deeper_than_go_yaml_allows_is_an_error_at_the_line(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(tmp_path, "app/cm.yaml", _nested(MAX_DEPTH + 1))
    code, _, err = _main("build", str(tmp_path / "app"))
    assert code == 2
    assert f"app/cm.yaml:7:{MAX_DEPTH + 3}: accumulating resources of app/kustomization.yaml: invalid YAML: exceeded max depth of {MAX_DEPTH}" in err


def test_nesting_is_limited_where_libyaml_itself_has_no_limit(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # some libyaml builds compose any depth: the limit must not depend on theirs
    import krmcheck.tree.load as load

    monkeypatch.setattr(load, "_Loader", load._RedefiningLoader)
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(tmp_path, "app/cm.yaml", _nested(MAX_DEPTH + 1))
    code, _, err = _main("build", str(tmp_path / "app"))
    assert code == 2
    assert f"app/cm.yaml:7:{MAX_DEPTH + 3}: accumulating resources of app/kustomization.yaml: invalid YAML: exceeded max depth of {MAX_DEPTH}" in err


def test_bases_nested_two_hundred_deep_render(tmp_path: Path) -> None:
    depth = 200
    for i in range(depth):
        write(tmp_path, f"l{i}/kustomization.yaml", f"resources:\n- ../l{i + 1}\nnamePrefix: p{i}-\n")
    write(tmp_path, f"l{depth}/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(tmp_path, f"l{depth}/cm.yaml", CONFIGMAP.format(name="a"))
    code, out, err = _main("build", str(tmp_path / "l0"))
    assert code == 0, err[-500:]
    assert "  name: p0-p1-p2-" in out


def test_a_target_pattern_is_matched_in_linear_time(tmp_path: Path) -> None:
    name = "a" * 3000 + "b"
    write(tmp_path, "app/kustomization.yaml",
          "resources:\n- cm.yaml\npatches:\n- target:\n    name: '(a+)+$'\n"
          "  patch: '[{op: add, path: /data/x, value: hit}]'\n")
    write(tmp_path, "app/cm.yaml", CONFIGMAP.format(name=name))
    started = time.monotonic()
    code, out, err = _main("build", str(tmp_path / "app"))
    assert time.monotonic() - started < 30  # backtracking would take longer than the universe
    assert code == 0, err
    assert "x: hit" not in out


@pytest.mark.parametrize("pattern, matches", [("(?i)WEB", True), ("\\pL+", True), ("w.b|x", True), ("eb", False)])
def test_target_patterns_use_gos_syntax_and_match_the_whole_name(tmp_path: Path, pattern: str,
                                                                 matches: bool) -> None:
    write(tmp_path, "app/kustomization.yaml",
          f"resources:\n- cm.yaml\npatches:\n- target:\n    name: '{pattern}'\n"
          "  patch: '[{op: add, path: /data/x, value: hit}]'\n")
    write(tmp_path, "app/cm.yaml", CONFIGMAP.format(name="web"))
    code, out, err = _main("build", str(tmp_path / "app"))
    assert code == 0, err
    assert ("x: hit" in out) == matches


@pytest.mark.parametrize("pattern", ["a([", "(?=a)", "a{1001}"])
def test_an_invalid_target_pattern_is_an_error_not_a_literal(tmp_path: Path, pattern: str) -> None:
    write(tmp_path, "app/kustomization.yaml",
          f"resources:\n- cm.yaml\npatches:\n- target:\n    name: '{pattern}'\n"
          "  patch: '[{op: add, path: /data/x, value: hit}]'\n")
    write(tmp_path, "app/cm.yaml", CONFIGMAP.format(name=pattern))
    code, _, err = _main("build", str(tmp_path / "app"))
    assert code == 2
    assert (f'Error: app/kustomization.yaml:5:5: running transformers of app/kustomization.yaml: '
            f'target name: invalid regular expression "{pattern}": ') in err


@pytest.mark.parametrize("args, message", [
    (["--shard", "1/99999999999999999999"], "the shard count N must be at most 10000"),
    (["--shard", "0/4"], "the shard number K must be between 1 and 4"),
    (["--jobs", "1000"], "must be between 0 (one per CPU) and"),
    (["--jobs", "-1"], "must be between 0 (one per CPU) and"),
    (["--fn-timeout", "-5"], "must be more than 0 and at most 3600"),
    (["--fn-timeout", "nan"], "must be more than 0 and at most 3600"),
    (["--fn-timeout", "inf"], "must be more than 0 and at most 3600"),
])
def test_out_of_range_options_are_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(tmp_path, "app/cm.yaml", CONFIGMAP.format(name="a"))
    err = io.StringIO()
    with pytest.raises(SystemExit) as exit_, redirect_stderr(err):
        cli.main([*args, str(tmp_path / "app")])
    assert exit_.value.code == 2
    assert message in err.getvalue()


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from krmcheck.resource import files
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 1000)
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(tmp_path, "app/cm.yaml", CONFIGMAP.format(name="a") + "  pad: " + "x" * 2000 + "\n")
    code, _, err = _main("build", str(tmp_path / "app"))
    assert code == 2
    assert "app/kustomization.yaml:2:3: accumulating resources of app/kustomization.yaml: app/cm.yaml: " \
           "2," in err and "more than the limit of 1,000 for one file" in err


def test_a_fifo_is_refused_rather_than_waited_on(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cm.yaml\n")
    os.mkfifo(tmp_path / "app" / "cm.yaml")
    code, _, err = _main("build", str(tmp_path / "app"))
    assert code == 2 and "app/cm.yaml: not a regular file" in err


def test_documents_past_the_limit_are_an_error_at_the_first_one_over(monkeypatch: pytest.MonkeyPatch) -> None:
    from krmcheck.tree import load
    monkeypatch.setattr(load, "MAX_DOCUMENTS", 3)
    text = "".join(f"---\nkind: K\nmetadata: {{name: n{i}}}\n" for i in range(5))
    with pytest.raises(load.LoadError) as e:
        load.load_documents(text, "many.yaml")
    assert (e.value.line, e.value.message) == (11, "more than 3 documents in one file")


@pytest.mark.parametrize("field", [
    "resources:\n- ../outside.yaml\n",
    "resources:\n- cm.yaml\npatches:\n- path: ../outside.yaml\n",
    "resources:\n- cm.yaml\nconfigMapGenerator:\n- name: g\n  files: [../outside.yaml]\n",
    "resources:\n- cm.yaml\nreplacements:\n- path: ../outside.yaml\n",
    "resources:\n- cm.yaml\nconfigurations:\n- ../outside.yaml\n",
    "resources:\n- cm.yaml\nopenapi:\n  path: ../outside.yaml\n",
    "resources:\n- link.yaml\n",
])
def test_every_file_a_kustomization_names_is_read_under_the_load_restrictor(tmp_path: Path, field: str) -> None:
    write(tmp_path, "outside.yaml", CONFIGMAP.format(name="outside"))
    write(tmp_path, "app/kustomization.yaml", field)
    write(tmp_path, "app/cm.yaml", CONFIGMAP.format(name="a"))
    os.symlink("../outside.yaml", tmp_path / "app" / "link.yaml")
    code, _, err = _main("build", str(tmp_path / "app"))
    assert code == 2 and "security; file '" in err and "is not in or below 'app'" in err, err
    code, _, err = _main("build", "--load-restrictor", "LoadRestrictionsNone", str(tmp_path / "app"))
    assert "security; file" not in err


def _link_and_back(root: Path, field: str) -> Path:
    """``app/link`` leads to a directory outside the repository, whose parent
    holds files of the same names: ``link/..`` is ``app`` as kustomize cleans
    the name, and that parent if the link were followed first."""
    repo = root / "repo"
    for where, name in ((repo / "app", "inside"), (root / "outside", "outside")):
        write(where, "cm.yaml", CONFIGMAP.format(name=name))
        write(where, "patch.yaml", f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  from: {name}\n")
        write(where, "values.env", f"from={name}\n")
    (root / "outside" / "elsewhere").mkdir()
    os.symlink("../../outside/elsewhere", repo / "app" / "link")
    write(repo, "app/kustomization.yaml", field)
    write(repo, "app/a.yaml", CONFIGMAP.format(name="a"))
    return repo / "app"


LINK_AND_BACK = [
    "resources:\n- link/../cm.yaml\n",
    "resources:\n- ./link/./../cm.yaml\n",
    "resources:\n- a.yaml\npatches:\n- path: link/../patch.yaml\n",
    "resources:\n- a.yaml\nconfigMapGenerator:\n- name: g\n  envs: [link/../values.env]\n",
]


@pytest.mark.parametrize("field", LINK_AND_BACK)
def test_a_name_through_a_link_and_back_is_cleaned_before_the_link_is_followed(tmp_path: Path,
                                                                               field: str) -> None:
    app = _link_and_back(tmp_path, field)
    code, out, err = _main("build", str(app))
    assert code == 0, err
    assert "inside" in out and "outside" not in out
    run = check(app.parent, ".")
    assert run.code == 0 and not run.located(), run.out  # no refusal, and cm.yaml is known to be read


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is the oracle; not installed")
@pytest.mark.parametrize("field", LINK_AND_BACK)
def test_a_name_through_a_link_and_back_renders_what_kubectl_renders(tmp_path: Path, field: str) -> None:
    app = _link_and_back(tmp_path, field)
    expected = subprocess.run(["kubectl", "kustomize", str(app)], capture_output=True, text=True,
                              check=True, timeout=120).stdout
    code, out, err = _main("build", str(app))
    assert (code, out) == (0, expected), err


def test_a_link_out_of_the_root_is_still_refused_when_not_cleaned_away(tmp_path: Path) -> None:
    app = _link_and_back(tmp_path, "resources:\n- link/../../../outside/cm.yaml\n")
    code, _, err = _main("build", str(app))
    assert code == 2 and "security; file '../outside/cm.yaml' is not in or below 'app'" in err, err


def test_a_kind_too_long_for_a_file_name_has_no_schema_rather_than_a_crash(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cr.yaml\n")
    # a custom group: in apps/v1 the cluster is known to have no such kind (an unknown-kind error)
    write(tmp_path, "app/cr.yaml", f"apiVersion: example.com/v1\nkind: {'K' * 300}\nmetadata:\n  name: a\n")
    write(tmp_path, "schemas/.keep", "")
    run = check(tmp_path, ".", "--require-schemas", "--schema-location", "schemas")
    assert run.code in (1, 2) and "Traceback" not in run.err
    assert any(d["validator"] == "schema-missing" for d in run.report["defects"])


def test_where_no_large_stack_can_start_the_work_still_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from krmcheck import stack
    sizes: list[int] = []

    def refuse(self: threading.Thread) -> None:
        size = threading.stack_size()  # reading it also resets it: set it back
        threading.stack_size(size)
        sizes.append(size)
        if size > 32 * 1024 * 1024:
            raise RuntimeError("can't start new thread")
        original(self)

    original = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", refuse)
    assert stack.deep(lambda: threading.current_thread().name) == "krmcheck-deep"  # on the smallest stack
    assert sizes == [512 * 1024 * 1024, 128 * 1024 * 1024, 32 * 1024 * 1024]
    monkeypatch.setattr(threading.Thread, "start", lambda self: (_ for _ in ()).throw(RuntimeError("no")))
    assert stack.deep(lambda: 42) == 42  # inline, as a last resort


FLUX_SYNC = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: flux-system, namespace: flux-system}}
spec: {{url: ssh://git@example.com/org/repo}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: app, namespace: flux-system}}
spec:
  path: {path}
  sourceRef: {{kind: GitRepository, name: flux-system}}
"""


@pytest.mark.parametrize("path", ["../../../../app", "/app", "./app"])
def test_a_flux_path_stays_inside_the_repository(tmp_path: Path, path: str) -> None:
    repo = tmp_path / "repo"
    write(repo, "clusters/prod/sync.yaml", FLUX_SYNC.format(path=path))
    write(repo, "app/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(repo, "app/cm.yaml", CONFIGMAP.format(name="Bad_Name"))
    run = check(repo, ".")
    assert ("app/cm.yaml", 4, "metadata") in run.located()  # app/ of the repository, not of /
    assert [d["roots"] for d in run.report["defects"] if d["validator"] == "metadata"] == [["flux:flux-system/app"]]


def test_a_flux_build_reads_no_file_outside_the_repository(tmp_path: Path) -> None:
    write(tmp_path, "outside.yaml", CONFIGMAP.format(name="outside"))
    repo = tmp_path / "repo"
    write(repo, "clusters/prod/sync.yaml", FLUX_SYNC.format(path="./app"))
    write(repo, "app/kustomization.yaml", "resources:\n- ../inside.yaml\n- ../../outside.yaml\n")
    write(repo, "inside.yaml", CONFIGMAP.format(name="inside"))  # beside the directory: the controller reads it
    run = check(repo, ".")
    [(path, line, _, message)] = _build_errors(run.report)
    assert (path, line) == ("app/kustomization.yaml", 3)
    assert "security; file '../outside.yaml' is outside the repository" in message


# --- regular expressions a repository, a catalog or a schema location holds -----------

def _crd(properties: str, rules: str = "") -> str:
    return ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
            "metadata: {name: widgets.example.com}\n"
            "spec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n"
            "  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n"
            "      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n"
            "            type: object\n" + rules + "            properties:\n" + properties)


def _widgets(root: Path, spec: str, count: int = 1) -> None:
    write(root, "app/kustomization.yaml", "resources:\n- widgets.yaml\n")
    write(root, "app/widgets.yaml", "".join(f"---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n"
                                            f"  name: w{i}\nspec:\n{spec}" for i in range(count)))


BACKTRACKS = "a" * 28 + "!"  # '^(a+)+$' against it: 17 s with Python's re; 34 characters: hours


@pytest.mark.parametrize("compiled", [False, True], ids=["jsonschema", "fastjsonschema"])
def test_a_crd_pattern_is_matched_in_linear_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 compiled: bool) -> None:
    from krmcheck.schemas import sources
    if compiled:  # the compiled validator from the first object on
        monkeypatch.setitem(sources.COMPILE_AFTER, sources.REPOSITORY, 0)
    write(tmp_path, "crds/widget.yaml", _crd("              name: {type: string, pattern: '^(a+)+$'}\n"))
    _widgets(tmp_path, f"  name: {BACKTRACKS}\n")
    started = time.monotonic()
    run = check(tmp_path, ".")
    assert time.monotonic() - started < 10  # the run, start-up included; the match itself takes microseconds
    assert [d["message"] for d in run.report["defects"] if d["validator"] == "schema"] == [
        f"spec.name: '{BACKTRACKS}' does not match '^(a+)+$'"]


def test_a_schema_locations_pattern_is_matched_in_linear_time(tmp_path: Path) -> None:
    import json
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "name": {"type": "string", "pattern": "^(a+)+$"}}}}}
    write(tmp_path, "schemas/example.com/widget_v1.json", json.dumps(schema))
    _widgets(tmp_path, f"  name: {BACKTRACKS}\n")
    started = time.monotonic()
    run = check(tmp_path, ".", "--schema-location", "schemas")
    assert time.monotonic() - started < 10
    assert ("app/widgets.yaml", 7, "schema") in run.located()


@pytest.mark.parametrize("pattern, value, matches", [
    (r"^\p{L}+\z", "Grüße", True),  # Python's re has neither: such a pattern was left out before
    (r"^\p{L}+\z", "abc1", False),
    (r"^[a-z]+$", '"abc\\n"', False),  # Go's $ is the end of the text: Python's re would match
])
def test_crd_patterns_are_read_as_go_reads_them(tmp_path: Path, pattern: str, value: str, matches: bool) -> None:
    write(tmp_path, "crds/widget.yaml", _crd(f"              name: {{type: string, pattern: '{pattern}'}}\n"))
    _widgets(tmp_path, f"  name: {value}\n")
    run = check(tmp_path, ".")
    assert (("app/widgets.yaml", 7, "schema") not in run.located()) == matches, run.out


def test_a_pattern_re2_cannot_compile_is_one_info_naming_the_crd_and_field(tmp_path: Path) -> None:
    write(tmp_path, "crds/widget.yaml", _crd("              name: {type: string, pattern: '^(?!x)'}\n"
                                             "              ports:\n                type: array\n"
                                             "                items: {type: string, pattern: '(a)\\1'}\n"))
    _widgets(tmp_path, "  name: xyz\n  ports: [aa]\n", count=3)
    write(tmp_path, "other/kustomization.yaml", "resources:\n- ../app/widgets.yaml\n")
    run = check(tmp_path, ".", "--load-restrictor", "LoadRestrictionsNone")
    [info] = [d for d in run.report["defects"] if d["validator"] == "schema-unjudged"]
    assert info["severity"] == "info" and info["roots"] == ["app", "other"]
    assert info["message"] == (
        "2 patterns of Widget (example.com/v1) not judged in 2 roots: RE2 (Go's syntax, as the API server "
        "reads it) cannot compile spec.name: '^(?!x)' (invalid perl operator: (?!); spec.ports[*]: '(a)\\\\1' "
        "(invalid escape sequence: \\1); the schema is in crds/widget.yaml")
    # neither pattern judged on the widgets; the CRD itself is refused at each
    # pattern, which Go's regexp cannot compile (krmcheck.schemas.structural)
    assert sorted((d["path"], d["field"].rsplit("properties.spec.", 1)[-1]) for d in run.report["defects"]
                  if d["validator"] == "schema") == [("crds/widget.yaml", "properties.name.pattern"),
                                                     ("crds/widget.yaml", "properties.ports.items.pattern")]


@pytest.mark.parametrize("rule", [
    "self.name.matches('^(a+)+$')",
    "self.name.find('^(a+)+$') != ''",
    "self.name.findAll('(a+)+$').size() > 0",
])
def test_a_cel_rules_pattern_is_matched_in_linear_time(tmp_path: Path, rule: str) -> None:
    from krmcheck.schemas import cel
    if not cel.available():
        pytest.skip("CEL needs cel-expr-python (Python 3.11 or newer)")
    rules = f"            x-kubernetes-validations:\n            - rule: \"{rule}\"\n              message: 'no'\n"
    write(tmp_path, "crds/widget.yaml", _crd("              name: {type: string}\n", rules))
    _widgets(tmp_path, f"  name: {BACKTRACKS}\n")
    started = time.monotonic()
    run = check(tmp_path, ".")
    assert time.monotonic() - started < 10
    assert [(d["line"], d["message"]) for d in run.report["defects"] if d["validator"] == "schema"] == [
        (6, "spec: no")]


# --- reads outside the build: the scans of the repository, configuration, baselines --------

def _bounded_check(root: Path, *args: str, seconds: float = 60,
                   memory: int = 1536 * 1024 * 1024) -> tuple[int, str, dict]:
    """``krmcheck ARGS .`` in a child process whose address space and time
    are limited: what would fill memory or wait forever fails instead."""
    import json
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, resource.getrlimit(resource.RLIMIT_AS)[1]))
    (root / ".git").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "KRMCHECK_NETWORK")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    report = root.parent / "report.json"
    try:
        done = subprocess.run([sys.executable, "-m", "krmcheck", *args, "--github", "off", "--json", str(report),
                               "."], cwd=root, env=env, capture_output=True, text=True, timeout=seconds,
                              preexec_fn=limit, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"krmcheck still ran after {seconds:g} s")
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    return done.returncode, done.stdout + done.stderr, json.loads(report.read_text()) if report.exists() else {}


def _special(root: Path, rel: str, what: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if what == "dev-zero":
        os.symlink("/dev/zero", path)  # endless
    elif what == "fifo":
        os.mkfifo(path)  # opening it waits for a writer
    elif what == "sparse-2g":
        with open(path, "wb") as f:  # 2 GB that take no disk space
            f.truncate(2 * 1024 ** 3)
    else:  # a link to a file outside the repository
        write(root.parent, "outside.yaml", CONFIGMAP.format(name="outside"))
        os.symlink(os.path.relpath(root.parent / "outside.yaml", path.parent), path)


REFUSED = {
    "dev-zero": "a symbolic link to a file outside the repository",
    "fifo": "not a regular file (a FIFO)",
    "sparse-2g": "2,147,483,648 bytes, more than the limit of 134,217,728 for one file",
    "link-out": "a symbolic link to a file outside the repository",
}


@pytest.mark.parametrize("what", REFUSED)
def test_a_file_the_scans_cannot_read_is_refused_with_one_warning(tmp_path: Path, what: str) -> None:
    repo = tmp_path / "repo"
    _good_root(repo)
    _special(repo, "crds/thing.yaml", what)  # both the CRD scan and the search for manifests see it
    code, output, report = _bounded_check(repo)
    assert code == 1, output  # good/'s finding; nothing else stopped the run
    [scan] = [d for d in report["defects"] if d["validator"] == "scan"]
    assert (scan["path"], scan["line"], scan["severity"]) == ("crds/thing.yaml", 1, "warning")
    assert scan["message"] == f"not read: {REFUSED[what]}"
    assert ("good/cm.yaml", 4, "metadata") in [(d["path"], d["line"], d["validator"]) for d in report["defects"]]


def test_the_scan_for_crd_files_is_bounded_in_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from krmcheck import discover
    _good_root(tmp_path)
    write(tmp_path, "crds/widget.yaml", _crd("              name: {type: string}\n"))
    monkeypatch.setattr(discover, "SCAN_SECONDS", -1.0)  # out of time from the first file on
    run = check(tmp_path, ".")
    said = sorted((d["path"], d["message"]) for d in run.report["defects"] if d["validator"] == "scan")
    assert said == [
        (".", "the scan for CRD files reached its time limit of -1 s here: what is here and after it "
              "(in path order) was not read"),
        (".", "the scan for plain manifests reached its time limit of -1 s here: what is here and after "
              "it (in path order) was not read")], said
    assert ("good/cm.yaml", 4, "metadata") in run.located()


def _flux_sync_elsewhere(root: Path) -> None:
    """A Flux Kustomization whose GitRepository is in a file no root renders
    for discovery: finding it takes the scan for controller objects."""
    _good_root(root)
    write(root, "clusters/prod/kustomization.yaml", "resources:\n- sync.yaml\n")
    write(root, "clusters/prod/sync.yaml", FLUX_SYNC.format(path="./good").split("---\n")[1])
    write(root, "infra/source.yaml", FLUX_SYNC.format(path="./good").split("---\n")[0])


def test_the_scan_for_controller_objects_is_bounded_in_time(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from krmcheck import discover
    from krmcheck.gitops import objects

    _flux_sync_elsewhere(tmp_path)
    # the other scans keep their time; this one is out of it from the first place it looks
    real = discover.Scan.out_of_time

    def out_of_time(self: discover.Scan, path: Path) -> bool:
        if self.what == objects.SCAN_WHAT and not self.stopped:
            self.started -= discover.SCAN_SECONDS + 1
        return real(self, path)

    monkeypatch.setattr(discover.Scan, "out_of_time", out_of_time)
    run = check(tmp_path, ".")
    said = [(d["path"], d["severity"], d["message"]) for d in run.report["defects"] if d["validator"] == "scan"]
    assert said == [(".", "warning", "the scan for controller objects reached its time limit of 60 s here: what "
                                     "is here and after it (in path order) was not read")], said
    assert ("good/cm.yaml", 4, "metadata") in run.located()  # the run went on


def test_the_scan_for_controller_objects_reads_no_file_outside_the_repository(tmp_path: Path) -> None:
    # a ConfigMap of variables the cluster holds (gitops.cluster-objects), its file a link out of the repository
    repo = tmp_path / "repo"
    write(repo, ".krmcheck.yaml", "gitops:\n  cluster-objects: [infra/]\n")
    write(repo, "clusters/prod/sync.yaml", FLUX_SYNC.format(path="./app") +
          "  postBuild:\n    substituteFrom:\n    - {kind: ConfigMap, name: vars}\n")
    write(repo, "app/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(repo, "app/cm.yaml", CONFIGMAP.format(name="${NAME}"))
    write(tmp_path, "outside/vars.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vars\n"
                                         "  namespace: flux-system\ndata:\n  NAME: Read_From_Outside\n")
    os.makedirs(repo / "infra")
    os.symlink("../../outside/vars.yaml", repo / "infra" / "vars.yaml")
    code, output, report = _bounded_check(repo)
    assert "Read_From_Outside" not in output + json.dumps(report)
    scans = [(d["path"], d["message"]) for d in report["defects"] if d["validator"] == "scan"]
    assert scans == [("infra/vars.yaml", "not read: a symbolic link to a file outside the repository")], scans


@pytest.mark.parametrize("name, what, args, message", [
    (".krmcheck.yaml", "sparse-2g", (), ".krmcheck.yaml:1:1: cannot read: 2,147,483,648 bytes, more than the "
                                        "limit of 134,217,728 for one file"),
    ("baseline.json", "fifo", ("--baseline", "baseline.json"), "baseline.json: cannot read the baseline: "
                                                               "not a regular file (a FIFO)"),
    ("baseline.json", "sparse-2g", ("--baseline", "baseline.json"), "baseline.json: cannot read the baseline: "
                                                                    "2,147,483,648 bytes, more than the limit"),
])
def test_configuration_and_baseline_reads_are_bounded(tmp_path: Path, name: str, what: str,
                                                      args: tuple[str, ...], message: str) -> None:
    _good_root(tmp_path)
    _special(tmp_path, name, what)
    code, output, _ = _bounded_check(tmp_path, *args)
    assert code == 2 and message in output, output


@pytest.mark.parametrize("kustomization", [
    "resources:\n- cm.yaml\nreplicas:\n- name: a\n  count: 1\n  ? {big}\n  : x\n",
    "resources:\n- cm.yaml\n? {big}\n: x\n",
    "resources:\n- cm.yaml\nreplicas:\n- name: a\n  count: {big}\n",
    "resources:\n- cm.yaml\nimages:\n- name: a\n  ? {big}\n  : x\n",
])
def test_an_integer_of_thousands_of_digits_is_an_error_at_its_line(tmp_path: Path, kustomization: str) -> None:
    big = "9" * 5000  # more digits than Python turns into an int without being told to
    write(tmp_path, "bad/kustomization.yaml", kustomization.format(big=big))
    write(tmp_path, "bad/cm.yaml", CONFIGMAP.format(name="a"))
    _good_root(tmp_path)
    run = check(tmp_path, ".")
    assert run.code == 2 and "Traceback" not in run.err
    [(path, _, _, message)] = _build_errors(run.report)
    assert path == "bad/kustomization.yaml"
    assert "unknown field" in message or "replicas[0].count must be an integer, not a string" in message
    assert [r["root"] for r in run.report["roots"]] == ["bad", "good"]  # cm.yaml is still bad/'s


def test_an_integer_of_thousands_of_digits_in_a_resource_stays_a_string(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources:\n- cm.yaml\n")
    write(tmp_path, "app/cm.yaml", CONFIGMAP.format(name="a") + f"  ? {'9' * 5000}\n  : x\n  n: {'8' * 5000}\n")
    code, out, err = _main("build", str(tmp_path / "app"))
    assert code == 0, err
    assert f"  ? {'9' * 5000}\n  : x\n" in out  # as written: no Go integer or float holds them
    assert f"  \"n\": {'8' * 5000}\n" in out


@pytest.mark.parametrize("config, args, message", [
    ('exclude:\n- "\\\\"\n', (), ".krmcheck.yaml:2:3: '\\\\': Invalid git pattern: '\\\\'"),  # one backslash
    ("overrides:\n- paths: ['[[:alpha:]]x']\n  validators: {schema: false}\n", (),
     ".krmcheck.yaml:2:11: '[[:alpha:]]x': RE2 cannot compile the regular expression it makes"),
    ("", ("--exclude", "[[:alpha:]]x"), "--exclude '[[:alpha:]]x': RE2 cannot compile the regular expression it makes"),
])
def test_a_path_pattern_that_cannot_be_compiled_is_an_error_where_it_is_written(
        tmp_path: Path, config: str, args: tuple[str, ...], message: str) -> None:
    _good_root(tmp_path)
    if config:
        write(tmp_path, ".krmcheck.yaml", config)
    run = check(tmp_path, ".", *args)
    assert run.code == 2 and message in run.err and "Traceback" not in run.err, run.err


def test_path_patterns_are_matched_in_linear_time(tmp_path: Path) -> None:
    _good_root(tmp_path)
    write(tmp_path, "a" * 120 + "/cm.yaml", CONFIGMAP.format(name="Bad_Name"))
    write(tmp_path, ".krmcheck.yaml", "exclude:\n- '" + "a*" * 12 + "b'\n")
    started = time.monotonic()
    run = check(tmp_path, ".")
    assert time.monotonic() - started < 30  # Python's re: a[^/]*a[^/]*... against 120 a's takes ages
    assert ("a" * 120 + "/cm.yaml", 4, "metadata") in run.located()


def test_an_integer_of_thousands_of_digits_in_a_json_input_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    big = "9" * 5000
    crd = _crd(f"              n: {{type: integer, maximum: {big}}}\n")
    import json

    import yaml
    write(tmp_path, "crds/widget.json", json.dumps(yaml.safe_load(crd.replace(big, "1"))).replace(": 1}", f": {big}}}"))
    write(tmp_path, "schemas/example.com/widget_v1.json", '{"type": "object", "maximum": ' + big + "}")
    write(tmp_path, "baseline.json", '{"version": ' + big + ', "entries": []}')
    _widgets(tmp_path, "  n: 1\n")
    run = check(tmp_path, ".")  # the JSON CRD is no schema source, as any unreadable file
    assert run.code == 0 and "Traceback" not in run.err
    assert [d["validator"] for d in run.report["defects"]] == ["schema-missing"]
    run = check(tmp_path, ".", "--schema-location", "schemas")
    assert [d["message"].endswith("Exceeds the limit (4300 digits) for integer string conversion: value has "
                                  "5000 digits; use sys.set_int_max_str_digits() to increase the limit")
            for d in run.report["defects"] if d["validator"] == "schema"] == [True]
    run = check(tmp_path, ".", "--baseline", "baseline.json")
    assert run.code == 2 and "baseline.json: not JSON: Exceeds the limit (4300 digits)" in run.err
    code, _, err = _main("merge-reports", "--json", str(tmp_path / "merged.json"), str(tmp_path / "baseline.json"))
    assert code == 2 and "baseline.json: not valid JSON: Exceeds the limit (4300 digits)" in err
