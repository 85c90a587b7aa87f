from __future__ import annotations

import io
from pathlib import Path

from reporter_sample import BUILD, NO_LIMIT, NO_LIMIT_EU, finding, sample_run

from krmcheck.reporters import most_severe_first
from krmcheck.reporters.github import (GithubReporter, annotation, annotation_lines, escape_data,
                                       escape_property, job_summary)
from krmcheck.results import Defect, Finding, RootReport, RunReport, group
from krmcheck.tree.origin import Location


def one(f: Finding) -> Defect:
    return Defect((f,))


def lines_for(findings: list[Finding]) -> str:
    return annotation_lines(most_severe_first(group(findings)))


def test_message_escaping() -> None:
    assert escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"


def test_property_escaping_also_covers_colon_and_comma() -> None:
    assert escape_property("a:b,c%d\n") == "a%3Ab%2Cc%25d%0A"


def test_annotation_escapes_file_title_and_message() -> None:
    assert annotation(one(NO_LIMIT)) == (
        "::warning file=base/deploy%2C v2.yaml,line=14,col=9,"
        "title=krmcheck resource-limits (overlays/prod)"
        '::container "web" has no memory limit%0Aset resources.limits.memory\n')


def test_a_defect_of_two_roots_is_one_annotation_naming_both() -> None:
    assert lines_for([NO_LIMIT, NO_LIMIT_EU]) == (
        "::warning file=base/deploy%2C v2.yaml,line=14,col=9,"
        "title=krmcheck resource-limits (2 roots%3A overlays/prod%2C overlays/prod-eu)"
        '::container "web" has no memory limit%0Aset resources.limits.memory\n')


def test_repeats_do_not_use_up_the_annotation_budget() -> None:
    repeated = [finding("same", "error", "v", f"r{i}", Location("base.yaml", 1, 1)) for i in range(30)]
    others = [finding(f"other {i}", "error", "v", "r0", Location("o.yaml", i + 1, 1)) for i in range(5)]
    assert commands(lines_for(repeated + others)) == ["::error"] * 6


def test_annotation_without_a_position_names_only_what_is_known() -> None:
    no_line = finding("m", "info", "v", "app", Location("app/kustomization.yaml", 0, 0))
    nowhere = finding("m", "error", "v", "app", Location("", 0, 0))
    assert annotation(one(no_line)) == "::notice file=app/kustomization.yaml,title=krmcheck v (app)::m\n"
    assert annotation(one(nowhere)) == "::error title=krmcheck v (app)::m\n"


def many(severity: str, count: int) -> list[Finding]:
    return [finding(f"{severity} {i}", severity, "v", "app", Location("f.yaml", i + 1, 1))
            for i in range(count)]


def commands(text: str) -> list[str]:
    return [line.split(" ", 1)[0] for line in text.splitlines()]


def test_at_most_ten_errors_and_ten_warnings_most_severe_first() -> None:
    findings = many("info", 3) + many("warning", 12) + many("error", 25)
    text = lines_for(findings)
    assert commands(text) == ["::error"] * 10 + ["::warning"] * 10 + ["::notice"] * 4
    lines = text.splitlines()
    # Within a severity, location order: the first ten errors are lines 1..10.
    assert [line.rsplit("::", 1)[1] for line in lines[:10]] == [f"error {i}" for i in range(10)]
    assert lines[-1] == (
        "::notice title=krmcheck::17 more findings not annotated (GitHub shows at most 10"
        " of each severity per step); all findings are in the job summary")


def test_counting_notice_takes_a_notice_slot() -> None:
    text = lines_for(many("info", 12))
    assert commands(text) == ["::notice"] * 10
    assert text.splitlines()[-1].startswith("::notice title=krmcheck::3 more findings")


def test_nothing_counted_when_all_fit() -> None:
    assert commands(lines_for(many("info", 10))) == ["::notice"] * 10
    assert annotation_lines([]) == ""


def test_summary_and_outputs_are_appended_to_the_named_files(tmp_path: Path) -> None:
    summary, outputs = tmp_path / "summary.md", tmp_path / "output"
    summary.write_text("# earlier step\n")
    outputs.write_text("other=1\n")
    reporter = GithubReporter(env={"GITHUB_STEP_SUMMARY": str(summary),
                                   "GITHUB_OUTPUT": str(outputs)})
    reporter.write(sample_run(), io.StringIO())
    assert outputs.read_text() == "other=1\nerrors=2\nwarnings=1\n"
    text = summary.read_text()
    assert text.startswith("# earlier step\n\n## krmcheck\n")
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(table) == 2 + 4  # header, rule, every defect (the shared one once)
    assert ("| error | `overlays/staging/kustomization.yaml:4:3` | accumulating resources from"
            " ../../base-missing: no such directory | `build` | `overlays/staging` |") in table


def test_summary_lists_findings_past_the_annotation_cap(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    run = RunReport((RootReport("app", (), tuple(many("error", 30))),))
    out = io.StringIO()
    GithubReporter(env={"GITHUB_STEP_SUMMARY": str(summary)}).write(run, out)
    assert commands(out.getvalue()).count("::error") == 10
    assert sum(line.startswith("| error |") for line in summary.read_text().splitlines()) == 30


def test_markdown_cells_escape_table_and_html_syntax(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    odd = finding("a | b <script> *x*\nnext", "error", "v", "r|oot", Location("we`ird.yaml", 1, 2))
    GithubReporter(env={"GITHUB_STEP_SUMMARY": str(summary)}).write(
        RunReport((RootReport("r|oot", (), (odd,)),)), io.StringIO())
    row = summary.read_text().splitlines()[-1]
    assert row == ("| error | ``we`ird.yaml:1:2`` | a \\| b \\<script\\> \\*x\\*<br>next"
                   " | `v` | `r\\|oot` |")


def test_no_files_without_the_variables(tmp_path: Path) -> None:
    out = io.StringIO()
    GithubReporter(env={}).write(RunReport((RootReport("app", (), (BUILD,)),)), out)
    assert out.getvalue().startswith("::error file=overlays/staging/kustomization.yaml,")
    assert list(tmp_path.iterdir()) == []


def test_summary_lists_errors_first_and_stays_under_the_limit() -> None:
    findings = many("info", 50) + many("error", 50)
    run = RunReport((RootReport("app", (), tuple(findings)),))
    defects = most_severe_first(run.defects)
    text = job_summary(run, defects, limit=2000)
    rows = [line for line in text.splitlines() if line.startswith("| error") or line.startswith("| info")]
    assert len(text.encode()) <= 2000
    assert rows and all(r.startswith("| error") for r in rows)
    left = 100 - len(rows)
    assert f"{left} more rows left out: GitHub limits a job summary to 1 MiB" in text
    assert "more rows left out" not in job_summary(run, defects)
