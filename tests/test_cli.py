"""The command line a person expects: version, help, flags that do not
swallow paths, report files, a progress line on terminals only."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from krmcheck import cli
from krmcheck.cli import ProgressLine, main
from tests.checkrun import DEPLOYMENT, check, write


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith("krmcheck 0.")


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("krmcheck build DIR", "krmcheck fn VALIDATOR", "krmcheck catalog view",
                    "krmcheck merge-reports"):
        assert command in out


def test_roots_takes_one_value_and_leaves_the_paths() -> None:
    opts = cli.parse_check(["--roots", "all", "apps", "infra"])
    assert (opts.roots, opts.paths) == (("all",), (Path("apps"), Path("infra")))
    opts = cli.parse_check(["--roots", "a", "--roots", "b", "."])
    assert (opts.roots, opts.paths) == (("a", "b"), (Path("."),))
    assert cli.parse_check(["--roots", "default"]).roots == ()


def test_roots_all_checks_bases_too(tmp_path: Path) -> None:
    write(tmp_path, "base/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "base/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "overlay/kustomization.yaml", "resources: [../base]\n")
    assert [r["root"] for r in check(tmp_path, ".").report["roots"]] == ["overlay"]
    assert [r["root"] for r in check(tmp_path, "--roots", "all", ".").report["roots"]] == ["base", "overlay"]


def demo(tmp_path: Path) -> Path:
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    return tmp_path


def test_report_files_get_their_directory(tmp_path: Path) -> None:
    demo(tmp_path)
    run = check(tmp_path, "--junit", "reports/ci/junit.xml", "--sarif", "reports/out.sarif")
    assert run.code == 0
    assert (tmp_path / "reports/ci/junit.xml").read_text().startswith("<?xml")
    assert (tmp_path / "reports/out.sarif").stat().st_size > 0


@pytest.mark.parametrize(("target", "why"), [
    ("app/deployment.yaml", "is an input of the run"),
    ("app/kustomization.yaml", "is an input of the run"),
    ("app", "is a directory"),
    ("app/deployment.yaml/x.xml", "cannot write"),
])
def test_a_bad_report_path_is_a_usage_error_before_any_build(tmp_path: Path, target: str, why: str) -> None:
    demo(tmp_path)
    before = (tmp_path / "app/deployment.yaml").read_text()
    run = check(tmp_path, "--junit", target)
    assert run.code == 2
    assert f"--junit {target}: {why}" in run.err
    assert run.out == ""  # nothing was checked
    assert (tmp_path / "app/deployment.yaml").read_text() == before


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal_outside_ci() -> None:
    assert ProgressLine.for_stream(io.StringIO(), {}) is None
    assert ProgressLine.for_stream(FakeTerminal(), {"CI": "true"}) is None
    assert ProgressLine.for_stream(FakeTerminal(), {"GITHUB_ACTIONS": "true"}) is None
    assert ProgressLine.for_stream(FakeTerminal(), {}) is not None


def test_progress_starts_after_a_second_and_is_cleared_at_the_end() -> None:
    stream = FakeTerminal()
    line = ProgressLine(stream)
    line(1, 3, "apps/a")
    assert stream.getvalue() == ""  # a quick run prints nothing
    line.start -= 2
    line(2, 3, "apps/b")
    assert stream.getvalue() == "\r\033[K[2/3] apps/b"
    line(3, 3, "apps/c")
    assert stream.getvalue().endswith("\r\033[K")


def test_a_reader_that_goes_away_is_no_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    demo = Path(__file__).resolve().parent.parent / "fixtures" / "gitops-demo"
    script = ("import sys\nfrom krmcheck import cli\nsys.argv = ['krmcheck', sys.argv[1]]\ncli.run()\n")
    reader = subprocess.Popen([sys.executable, "-c", script, str(demo)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.read(10)
    reader.stdout.close()  # as `| head -c 10` does
    err = reader.stderr.read().decode()
    reader.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err
