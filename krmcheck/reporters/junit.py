"""JUnit XML: one test suite per root, one test case per rendered resource.

CI systems (GitLab, Jenkins, Azure) show JUnit as pass/fail per test, so:

- a test case is named after the resource (``Kind/namespace/name`` or
  ``Kind/name``) with the root as its classname, in rendered order;
- each finding at or above ``run.fail_on`` adds a ``<failure>`` to its
  resource's test case, whose ``file``/``line`` attributes point at the most
  severe of those findings, the first by location among equals (a test
  case has one such pair; every failure's text starts with its own location);
- findings below ``fail_on`` do not fail the test: they are listed in its
  ``<system-out>``;
- findings about no resource are grouped in a test case named after their
  validator, ``build`` for build errors; a build error is a JUnit
  ``<error>`` (the root could not be checked at all), whatever ``fail_on``;
- a root not checked because it needs the network (``remote``) is a
  ``<skipped>`` test case, unless ``fail_on`` makes its warning fail.

Names, paths and messages may come from whoever opened the pull request:
every string is made ``plain_text`` (or ``one_line`` in an attribute or a
name), which leaves out nothing XML 1.0 forbids, so the report always parses.
"""

from __future__ import annotations

from typing import TextIO

from junit_xml import TestCase, TestSuite, to_xml_report_string

from krmcheck.reporters import ordered, where
from krmcheck.reporters.safe import one_line, plain_text
from krmcheck.results import NOT_CHECKED, SEVERITY_RANK, Finding, ResourceRef, RootReport, RunReport
from krmcheck.tree.origin import Location


class JunitReporter:
    def write(self, run: RunReport, out: TextIO) -> None:
        suites = [suite_for(root, run.fail_on) for root in sorted(run.roots, key=lambda r: r.root)]
        out.write(to_xml_report_string(suites, prettyprint=True))
        out.write("\n")


def suite_for(root: RootReport, fail_on: str) -> TestSuite:
    groups = _groups(root)
    cases = [case_for(name, root.root, findings, fail_on) for name, findings in groups.items()]
    return TestSuite(one_line(root.root), cases)


def _groups(root: RootReport) -> dict[str, list[Finding]]:
    """Test case name -> its findings: every rendered resource (in output
    order), then resources only findings mention, then resource-less ones."""
    groups: dict[str, list[Finding]] = {str(ref): [] for ref in root.resources}
    for finding in ordered(root.findings):
        groups.setdefault(_case_name(finding.result.resource_ref, finding), []).append(finding)
    return groups


def _case_name(ref: ResourceRef | None, finding: Finding) -> str:
    return str(ref) if ref is not None else finding.rule


def case_for(name: str, classname: str, findings: list[Finding], fail_on: str) -> TestCase:
    # Stable sort: findings arrive in location order.
    failing = sorted((f for f in findings if _fails(f, fail_on)),
                     key=lambda f: -SEVERITY_RANK.get(f.severity, 0))
    passing = [f for f in findings if not _fails(f, fail_on)]
    first = failing[0].location if failing else Location("", 0, 0)
    case = TestCase(
        one_line(name), classname=one_line(classname), allow_multiple_subelements=True,
        stdout="\n".join(_detail(f) for f in passing) or None,
        file=one_line(first.path) or None, line=first.line or None,
    )
    for finding in failing:
        _add(case, finding)
    skipped = [f for f in passing if f.rule == NOT_CHECKED]
    if skipped and not failing:
        case.add_skipped_info(message=one_line(" ".join(skipped[0].message.split("\n"))),
                              output=_detail(skipped[0]))
    return case


def _fails(finding: Finding, fail_on: str) -> bool:
    if finding.rule == "build":
        return True
    return SEVERITY_RANK.get(finding.severity, 0) >= SEVERITY_RANK.get(fail_on, 3)


def _add(case: TestCase, finding: Finding) -> None:
    # The message attribute is one line (XML folds newlines in attributes);
    # the element text keeps the whole message with its location and trail.
    message = one_line(" ".join(finding.message.split("\n")))
    if finding.rule == "build":
        case.add_error_info(message=message, output=_detail(finding), error_type="build")
    else:
        case.add_failure_info(message=message, output=_detail(finding),
                              failure_type=one_line(finding.severity))


def _detail(finding: Finding) -> str:
    head = (f"{one_line(where(finding.location))}: {one_line(finding.severity)}: "
            f"{plain_text(finding.message)} [{one_line(finding.rule)}]")
    vias = [f"  via {one_line(str(origin))}" for origin in reversed(finding.trail)]
    return "\n".join([head, *vias])
