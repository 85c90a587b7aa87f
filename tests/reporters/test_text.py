from __future__ import annotations

import io

from reporter_sample import BUILD, IMAGE_TAG, LABEL, NO_LIMIT, NO_LIMIT_EU, sample_run

from krmcheck.reporters.text import TextReporter, defect_lines
from krmcheck.results import Defect, Finding, RootReport, RunReport, group


def finding_lines(finding: Finding, cwd: str = "") -> str:
    return defect_lines(Defect((finding,)), cwd)


def test_a_finding_is_one_compiler_style_line() -> None:
    assert finding_lines(BUILD) == (
        "overlays/staging/kustomization.yaml:4:3: error: accumulating resources from"
        " ../../base-missing: no such directory [build] (overlays/staging)\n")


def test_earlier_writers_follow_newest_first() -> None:
    assert finding_lines(LABEL).splitlines()[1:] == [
        "  via overlays/prod/kustomization.yaml:6:1 (commonLabels)",
        "  via base/configmap.yaml:4:3 (resource)",
    ]
    assert finding_lines(IMAGE_TAG).splitlines()[1:] == [
        "  via base/deployment.yaml:20:16 (resource)"]


def test_later_lines_of_a_message_are_indented() -> None:
    assert finding_lines(NO_LIMIT) == (
        'base/deploy, v2.yaml:14:9: warning: container "web" has no memory limit\n'
        "    set resources.limits.memory [resource-limits] (overlays/prod)\n")


def test_a_defect_of_several_roots_is_one_line_naming_them() -> None:
    [defect] = group([NO_LIMIT, NO_LIMIT_EU])
    assert finding_lines(NO_LIMIT).endswith("[resource-limits] (overlays/prod)\n")
    assert defect_lines(defect).endswith(
        "[resource-limits] (2 roots: overlays/prod, overlays/prod-eu)\n")


def test_long_root_lists_are_shortened() -> None:
    import dataclasses
    many = [dataclasses.replace(NO_LIMIT, root=f"overlays/r{i}") for i in range(7)]
    [defect] = group(many)
    assert "(7 roots: overlays/r0, overlays/r1, overlays/r2 and 4 more)" in defect_lines(defect)


def test_paths_are_relative_to_the_current_directory() -> None:
    assert finding_lines(IMAGE_TAG, cwd="overlays").splitlines() == [
        "prod/kustomization.yaml:9:13: error: image \"nginx\" uses tag \"latest\"; pin 100% of "
        "images [image-tag] (prod)",
        "  via ../base/deployment.yaml:20:16 (resource)"]


def test_findings_sorted_by_location_then_notes_and_summary() -> None:
    out = io.StringIO()
    TextReporter().write(sample_run(), out)
    heads = [line.split(": ")[0] for line in out.getvalue().splitlines()
             if not line.startswith(" ")]
    assert heads == [
        "base/deploy, v2.yaml:14:9",
        "components/labels/patch.yaml:5:5",
        "overlays/prod/kustomization.yaml:9:13",
        "overlays/staging/kustomization.yaml:4:3",
        "base/api.yaml",
        "2 errors, 1 warning, 1 info in 4 roots (5 findings before grouping by defect); "
        "1 suppressed; 1 root failed to build",
    ]


def test_clean_run_prints_only_the_summary() -> None:
    out = io.StringIO()
    TextReporter().write(RunReport((RootReport("app"),)), out)
    assert out.getvalue() == "0 errors, 0 warnings, 0 infos in 1 root\n"
