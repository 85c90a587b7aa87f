"""Roots that need the network while it is off (the default): not checked,
with one ``remote`` warning per URL at the entry that needs it, naming the
roots; ``--require-network`` or ``require-network: true`` makes such a root
a build failure instead, and ``krmcheck build`` fails on it as kubectl does
when it cannot fetch."""

from __future__ import annotations

import io
import json
import os
import socket
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from krmcheck import cli
from krmcheck.pipeline import render_cache
from krmcheck.kustomize import remote
from tests.checkrun import DEPLOYMENT, Run, check, write

BASE_URL = "https://github.com/example/platform//base?ref=v1"
DASHBOARD = "https://example.com/grafana/dashboard.json"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(remote.NETWORK_ENV, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # one process: the cache counts are this one's
    monkeypatch.setattr(render_cache, "STATS", render_cache.STATS.__class__())


def remote_base(root: Path) -> Path:
    """Two overlays over a base that lists a remote base, a third overlay
    whose component generates a ConfigMap from a URL, and a clean overlay."""
    write(root, "base/kustomization.yaml", f"resources:\n- deployment.yaml\n- {BASE_URL}\n")
    write(root, "base/deployment.yaml", DEPLOYMENT)
    for env in ("dev", "prod"):
        write(root, f"overlays/{env}/kustomization.yaml", f"resources: [../../base]\nnamePrefix: {env}-\n")
    write(root, "dashboards/kustomization.yaml", "resources: [deployment.yaml]\ncomponents: [../monitoring]\n")
    write(root, "dashboards/deployment.yaml", DEPLOYMENT)
    write(root, "monitoring/kustomization.yaml", f"""\
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
configMapGenerator:
- name: dashboard
  files:
  - {DASHBOARD}
""")
    write(root, "clean/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(root, "clean/deployment.yaml", DEPLOYMENT)
    return root


def warnings(run: Run) -> list[tuple[str, int, str, list[str]]]:
    return [(d["path"], d["line"], d["message"], d["roots"]) for d in run.report["defects"]
            if d["validator"] == "remote"]


def test_a_root_that_needs_the_network_is_not_checked_and_the_run_passes(tmp_path: Path) -> None:
    run = check(remote_base(tmp_path))
    assert run.code == 0, run.out
    assert warnings(run) == [
        ("base/kustomization.yaml", 3, f"not checked: remote resource '{BASE_URL}' needs the network, "
         "which is off by default; pass --network to fetch it (--require-network makes this a build error)",
         ["overlays/dev", "overlays/prod"]),
        ("monitoring/kustomization.yaml", 6, f"not checked: configMapGenerator 'dashboard' file "
         f"'{DASHBOARD}' needs the network, which is off by default; pass --network to fetch it "
         "(--require-network makes this a build error)", ["dashboards"]),
    ]
    assert [d["severity"] for d in run.report["defects"]] == ["warning", "warning"]
    assert {r["root"]: (r["needsNetwork"], r["buildFailed"]) for r in run.report["roots"]} == {
        "clean": (False, False), "dashboards": (True, False),
        "overlays/dev": (True, False), "overlays/prod": (True, False)}
    # one line per URL naming the roots, and the count says what was left out
    lines = run.out.splitlines()
    assert lines[0].startswith("base/kustomization.yaml:3:3: warning: not checked: remote resource")
    assert lines[0].endswith("[remote] (2 roots: overlays/dev, overlays/prod)")
    assert lines[-1] == ("0 errors, 2 warnings, 0 infos in 4 roots (3 findings before grouping by defect); "
                         "3 roots not checked: the network is off")


def test_fail_on_warning_fails_on_it(tmp_path: Path) -> None:
    assert check(remote_base(tmp_path), "--fail-on", "warning").code == 1


@pytest.mark.parametrize("config,code,shown", [
    ("validators:\n  remote: {severity: error}\n", 1, ["error", "error"]),
    ("validators:\n  remote: false\n", 0, []),
])
def test_the_remote_id_is_regraded_or_turned_off(tmp_path: Path, config: str, code: int,
                                                 shown: list[str]) -> None:
    write(remote_base(tmp_path), ".krmcheck.yaml", config)
    run = check(tmp_path)
    assert run.code == code
    assert [d["severity"] for d in run.report["defects"] if d["validator"] == "remote"] == shown
    assert not any(r["buildFailed"] for r in run.report["roots"])


@pytest.mark.parametrize("how", ["flag", "config"])
def test_require_network_makes_it_a_build_failure(tmp_path: Path, how: str) -> None:
    repo = remote_base(tmp_path)
    if how == "config":
        write(repo, ".krmcheck.yaml", "require-network: true\n")
    run = check(repo, *(["--require-network"] if how == "flag" else []))
    assert run.code == 2
    assert warnings(run) == []
    failed = {r["root"] for r in run.report["roots"] if r["buildFailed"]}
    assert failed == {"overlays/dev", "overlays/prod", "dashboards"}
    assert all("needs the network" in d["message"] for d in run.report["defects"] if d["validator"] == "build")


def test_krmcheck_build_still_fails_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(remote_base(tmp_path))
    assert cli.main(["build", "overlays/dev"]) == 2
    err = capsys.readouterr().err
    assert f"remote resource '{BASE_URL}' needs the network" in err and "--network" in err


def test_junit_skips_the_roots_not_checked_and_sarif_describes_the_rule(tmp_path: Path) -> None:
    repo = remote_base(tmp_path)
    junit, sarif = tmp_path.parent / "network.xml", tmp_path.parent / "network.sarif"
    assert check(repo, "--junit", str(junit), "--sarif", str(sarif)).code == 0
    suites = {s.get("name"): s for s in ET.parse(junit).getroot()}
    case = suites["overlays/dev"].find("testcase")
    assert case is not None and case.get("name") == "remote"
    skipped = case.find("skipped")
    assert skipped is not None and "not checked: remote resource" in (skipped.get("message") or "")
    assert suites["clean"].find("testcase/skipped") is None
    log = json.loads(sarif.read_text())["runs"][0]
    assert log["invocations"] == [{"executionSuccessful": True}]
    assert [r["shortDescription"]["text"] for r in log["tool"]["driver"]["rules"] if r["id"] == "remote"] == \
        ["The root needs the network, which is off: it was not checked."]
    assert [(r["ruleId"], r["level"]) for r in log["results"]] == [("remote", "warning")] * 2
    # with --fail-on warning the warning fails the test case instead
    check(repo, "--junit", str(junit), "--fail-on", "warning")
    case = {s.get("name"): s for s in ET.parse(junit).getroot()}["overlays/dev"].find("testcase")
    assert case is not None and case.find("skipped") is None and case.find("failure") is not None


def test_github_annotates_one_warning_per_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(remote_base(tmp_path))
    (tmp_path / ".git").mkdir(exist_ok=True)
    out = io.StringIO()
    from krmcheck.commands import check as check_command

    check_command.run(cli.parse_check([".", "--github", "on"]), out, io.StringIO(), {})
    annotations = [line for line in out.getvalue().splitlines() if line.startswith("::warning ")]
    assert len(annotations) == 2
    assert "title=krmcheck remote (2 roots%3A overlays/dev%2C overlays/prod)" in annotations[0]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_render_cache_keeps_an_offline_report_for_offline_runs_only(tmp_path: Path) -> None:
    # what an offline check found depends on the files alone; with the
    # network (or --require-network) the root is checked again
    url = f"http://127.0.0.1:{_closed_port()}/deployment.yaml"
    write(tmp_path, "app/kustomization.yaml", f"resources:\n- {url}\n")
    first = check(tmp_path)
    assert (first.code, render_cache.STATS["stored"]) == (0, 1)
    again = check(tmp_path)
    assert (again.out, render_cache.STATS["hit"]) == (first.out, 1)
    assert check(tmp_path, "--require-network").code == 2
    online = check(tmp_path, "--network")
    assert online.code == 2 and "Connection refused" in online.out
    assert render_cache.STATS["hit"] == 1 and render_cache.STATS["stored"] == 2  # --require-network's


def test_a_broken_file_beside_a_download_fails_the_build_all_the_same(tmp_path: Path) -> None:
    # the dashboard is not fetched, but the undefined alias in the app's
    # file fails the build whatever the download holds: an error, not
    # hidden behind the root that was not checked
    write(tmp_path, "monitoring/kustomization.yaml", f"configMapGenerator:\n- name: dashboard\n  files:\n"
                                                     f"  - {DASHBOARD}\n")
    write(tmp_path, "cluster/kustomization.yaml", "resources:\n- ../monitoring\n- ../app\n")
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT.replace("replicas: 1", "replicas: *count")
          if "replicas: 1" in DEPLOYMENT else DEPLOYMENT + "  minReadySeconds: *count\n")
    run = check(tmp_path)
    assert run.code == 2, run.out  # a root that does not build
    errors = [(d["path"], d["validator"], d["roots"]) for d in run.report["defects"] if d["severity"] == "error"]
    assert errors == [("app/deployment.yaml", "build", ["cluster"])]
    assert [d["validator"] for d in run.report["defects"] if d["severity"] == "warning"] == ["remote"]
    # a root whose only trouble is the download is still only not checked
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    run = check(tmp_path)
    assert run.code == 0 and [d["validator"] for d in run.report["defects"]] == ["remote"]
