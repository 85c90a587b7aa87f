"""Roots of public GitOps repositories (../shared/realworld) rendered by
krmcheck and compared with what ``kubectl kustomize`` printed for them.

Every listed root is one test: an expected-ok root must render byte for byte
(semantically equal output is reported as a failure with its reason), an
expected-error root must fail. Roots that do not pass yet are listed in
``realworld_gaps.yaml`` with the reason, as non-strict xfails.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests import realworld

GAPS_FILE = Path(__file__).with_name("realworld_gaps.yaml")
GAPS: dict[str, str] = (yaml.safe_load(GAPS_FILE.read_text()) or {}) if GAPS_FILE.exists() else {}
ROOTS = realworld.roots()


def _param(root: realworld.Root):  # type: ignore[no-untyped-def]
    reason = GAPS.get(root.name)
    marks = [pytest.mark.xfail(reason=reason, strict=False)] if reason else []
    return pytest.param(root, id=root.name, marks=marks)


@pytest.mark.skipif(not ROOTS, reason="../shared/realworld is not present")
@pytest.mark.parametrize("root", [_param(r) for r in ROOTS])
def test_root(root: realworld.Root, realworld_tally: dict) -> None:
    status, detail = realworld.check(root)
    realworld_tally["run"] += 1
    realworld_tally[status] += 1
    assert status in ("byte", "both-error"), f"{status}: {detail}"
