"""kustomize's own cases (../shared/conformance) through krmcheck's engine.

Every case is one test; a case that does not pass yet is listed in
``conformance_gaps.yaml`` with the reason, and runs as a non-strict xfail so a
fix shows up as XPASS. The pass rates are printed at the end of the run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests import conformance

GAPS_FILE = Path(__file__).with_name("conformance_gaps.yaml")
GAPS: dict[str, str] = (yaml.safe_load(GAPS_FILE.read_text()) or {}) if GAPS_FILE.exists() else {}
CASES = conformance.cases("krusty") + conformance.cases("examples") + conformance.cases("plugins")


def _param(case: conformance.Case):  # type: ignore[no-untyped-def]
    reason = GAPS.get(case.name)
    marks = [pytest.mark.xfail(reason=reason, strict=False)] if reason else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.skipif(not CASES, reason="../shared/conformance is not present")
@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_case(case: conformance.Case, conformance_tally: dict) -> None:
    outcome = conformance.run(case)
    tally = conformance_tally
    tally["run"] += 1
    if case.expect_error:
        tally["error_cases"] += 1
        tally["error_pass"] += outcome.passed
    else:
        tally["success_cases"] += 1
        tally["semantic"] += outcome.passed
        tally["bytes"] += outcome.byte_equal
    assert outcome.passed, outcome.detail
    # a success case must match kubectl byte for byte, not only in meaning
    assert case.expect_error or outcome.byte_equal, f"{case.name}: same objects, different bytes"
