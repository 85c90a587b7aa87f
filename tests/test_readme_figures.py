"""The figures the README quotes, recounted from what the suites count.

Corpus sizes come from the same readers the corpus tests use
(``tests/conformance.py``, ``tests/realworld.py``); pass counts are derived
from the gap files, since a gap entry is exactly a case that does not pass
yet (the corpus tests fail on any other). So adding a gap entry, fixing one,
or a corpus that grows makes these tests fail until the README says so too.
Limits and table sizes are read from the constants and data files that
enforce them.
"""

from __future__ import annotations

import functools
import os
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests import conformance
from tests.test_conformance import CASES, GAPS as CONFORMANCE_GAPS
from tests.test_realworld import GAPS as REALWORLD_GAPS, ROOTS

README = Path(__file__).resolve().parent.parent / "README.md"
KUSTOMIZE_GROUPS = ("krusty", "examples")  # kustomize's own tests and documentation
MIB = 1024 * 1024

needs_conformance = pytest.mark.skipif(not CASES, reason="../shared/conformance is not present")
needs_realworld = pytest.mark.skipif(not ROOTS, reason="../shared/realworld is not present")


def readme() -> str:
    """The README with every run of white space made one space, so that a
    figure may wrap at any word."""
    return " ".join(README.read_text(encoding="utf-8").split())


def quoted(pattern: str) -> tuple[int, ...]:
    """The numbers the README gives where ``pattern`` matches (``1,227`` is 1227)."""
    found = re.search(pattern, readme())
    assert found is not None, f"the README no longer says /{pattern}/"
    return tuple(int(g.replace(",", "")) for g in found.groups() if g is not None)


def quoted_all(pattern: str) -> list[tuple[int, ...]]:
    found = [tuple(int(g.replace(",", "")) for g in m.groups()) for m in re.finditer(pattern, readme())]
    assert found, f"the README no longer says /{pattern}/"
    return found


def group(name: str) -> str:
    return name.partition("/")[0]


def passing(names: list[str], gaps: dict[str, str]) -> int:
    return sum(1 for n in names if n not in gaps)


# --- conformance -------------------------------------------------------------

@needs_conformance
def test_every_conformance_gap_is_a_case_the_suite_runs() -> None:
    # a stale entry would lower the derived pass counts below the real ones
    assert set(CONFORMANCE_GAPS) <= {c.name for c in CASES}


@needs_conformance
def test_success_cases_of_kustomize_own_tests() -> None:
    success = [c.name for c in CASES if group(c.name) in KUSTOMIZE_GROUPS and not c.expect_error]
    found = re.search(r"(all|([\d,]+) of the) ([\d,]+) success cases of kustomize's own tests", readme())
    assert found is not None
    total = int(found.group(3).replace(",", ""))
    passed = total if found.group(1) == "all" else int(found.group(2).replace(",", ""))
    assert (passed, total) == (passing(success, CONFORMANCE_GAPS), len(success))


@needs_conformance
def test_runnable_conformance_cases_that_pass() -> None:
    names = [c.name for c in CASES]
    assert quoted(r"([\d,]+) of the ([\d,]+) runnable conformance cases pass") == \
        (passing(names, CONFORMANCE_GAPS), len(names))


@needs_conformance
def test_runnable_conformance_cases_by_source_and_outcome() -> None:
    own = [c for c in CASES if group(c.name) in KUSTOMIZE_GROUPS]
    plugins = [c for c in CASES if group(c.name) == "plugins"]
    errors = sum(1 for c in CASES if c.expect_error)
    assert len(own) + len(plugins) == len(CASES)
    assert quoted(r"([\d,]+) runnable cases from kustomize's own tests and documentation examples "
                  r"and ([\d,]+) plugin cases written for the corpus; ([\d,]+) end in output "
                  r"and ([\d,]+) in an error") == (len(own), len(plugins), len(CASES) - errors, errors)


# Why a case is not run, from its ``skip_reason`` (comma-separated): the
# first of these that applies, in the README's order.
SKIP_GROUPS = (
    ("network", {"remote"}),
    ("helm", {"helm"}),
    ("plugins", {"plugin", "krm-function", "exec"}),
    ("documentation", {"example-step-unavailable"}),
)


def skip_group(reason: str) -> str:
    reasons = {r.strip() for r in reason.split(",")}
    return next((name for name, marks in SKIP_GROUPS if reasons & marks), "other")


@functools.cache
def skipped_cases() -> Counter[str]:
    """The cases the corpus readers leave out, by why."""
    out: Counter[str] = Counter()
    for name in ("krusty", "examples", "plugins"):
        for meta_path in sorted((conformance.CORPUS / name).glob("*/case.yaml")):
            reason = (yaml.safe_load(meta_path.read_text()) or {}).get("skip_reason")
            if reason:
                out[skip_group(str(reason))] += 1
    return out


def test_skip_groups() -> None:
    assert skip_group("absolute-path, env, remote") == "network"
    assert skip_group("example-step-unavailable, plugin") == "plugins"
    assert skip_group("exec, krm-function") == "plugins"
    assert skip_group("example-step-unavailable") == "documentation"
    assert skip_group("option:AddManagedbyLabel") == "other"


@needs_conformance
def test_skipped_conformance_cases_by_reason() -> None:
    skipped = skipped_cases()
    quote = quoted(r"Another ([\d,]+) cases of kustomize's own are not run, .*?: ([\d,]+) need the network "
                   r".*?, ([\d,]+) helm .*?, ([\d,]+) plugins or KRM functions, ([\d,]+) are documentation "
                   r"steps .*?, and ([\d,]+) need the original test machine's paths")
    assert quote == (sum(skipped.values()), skipped["network"], skipped["helm"], skipped["plugins"],
                     skipped["documentation"], skipped["other"])


@needs_conformance
def test_every_case_directory_is_run_or_skipped_with_a_reason() -> None:
    directories = sum(len(list((conformance.CORPUS / g).glob("*/case.yaml")))
                      for g in ("krusty", "examples", "plugins"))
    assert directories == len(CASES) + sum(skipped_cases().values())


# --- real world ----------------------------------------------------------------

@needs_realworld
def test_every_realworld_gap_is_a_root_the_suite_runs() -> None:
    assert set(REALWORLD_GAPS) <= {r.name for r in ROOTS}


@needs_realworld
def test_realworld_roots_that_pass() -> None:
    names = [r.name for r in ROOTS]
    assert quoted(r"([\d,]+) of the ([\d,]+) real-world roots") == (passing(names, REALWORLD_GAPS), len(names))


@needs_realworld
def test_realworld_roots_and_repositories() -> None:
    assert quoted(r"the ([\d,]+) roots of ([\d,]+) public GitOps repositories") == \
        (len(ROOTS), len({r.repo for r in ROOTS}))


# --- limits and tables ------------------------------------------------------------

def test_input_limits_table() -> None:
    from krmcheck.discover import SCAN_SECONDS
    from krmcheck.resource.files import MAX_FILE_BYTES
    from krmcheck.shard import MAX_SHARDS
    from krmcheck.tree.load import MAX_DEPTH, MAX_DOCUMENTS

    assert quoted(r"\| YAML nesting depth \| ([\d,]+) levels") == (MAX_DEPTH,)
    assert quoted(r"\| one file \| ([\d,]+) MiB") == (MAX_FILE_BYTES // MIB,)
    assert quoted(r"\| documents in one file \| ([\d,]+) \|") == (MAX_DOCUMENTS,)
    assert quoted(r"\| a scan of the repository \| ([\d,]+) s each") == (SCAN_SECONDS,)
    assert quoted(r"\| `--shard K/N` \| N at most ([\d,]+) \|") == (MAX_SHARDS,)


def test_jobs_limit() -> None:
    from krmcheck.cli import MAX_JOBS

    floor, per_cpu = quoted(r"\| `--jobs` \| at most max\(([\d,]+), ([\d,]+) x CPUs\)")
    assert MAX_JOBS == max(floor, per_cpu * (os.cpu_count() or 1))


def test_program_limits() -> None:
    from krmcheck.cli import MAX_FN_TIMEOUT
    from krmcheck.kustomize.plugins import DEFAULT_FN_TIMEOUT
    from krmcheck.transports.exec import MAX_STDERR, MAX_STDOUT

    assert quoted(r"at `--fn-timeout` \(default ([\d,]+) s, at most ([\d,]+)\)") == \
        (DEFAULT_FN_TIMEOUT, MAX_FN_TIMEOUT)
    assert quoted(r"more than ([\d,]+) MiB on stdout") == (MAX_STDOUT // MIB,)
    # the head and the tail of stderr, half of what is kept each
    assert quoted(r"of stderr, the first and last ([\d,]+) KiB are kept") == (MAX_STDERR // 2 // 1024,)


def test_kubernetes_versions() -> None:
    from krmcheck.schemas.builtin import versions

    newest, oldest = versions()[-1], versions()[0]
    for low, high in [(f"{a}.{b}", f"{c}.{d}") for a, b, c, d in
                      quoted_all(r"\((\d+)\.(\d+) to (\d+)\.(\d+); default the newest\)")]:
        assert (low, high) == (oldest, newest)


def test_field_rules_count() -> None:
    from krmcheck.schemas import rules

    table = yaml.safe_load(Path(rules.__file__).with_name("field_rules.yaml").read_text(encoding="utf-8"))
    assert quoted(r"field_rules\.yaml`: ([\d,]+) rules") == (len(table["rules"]),)


def test_fuzz_examples_in_ci() -> None:
    source = Path(__file__).with_name("test_fuzz.py").read_text(encoding="utf-8")
    default = re.search(r'"KRMCHECK_FUZZ_EXAMPLES", "(\d+)"', source)
    assert default is not None
    assert quoted(r"CI runs ([\d,]+) fixed examples per property") == (int(default.group(1)),)
