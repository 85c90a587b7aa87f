"""GitLab code quality: the JSON array a merge request's Code Quality widget
and its diff annotations read (``artifacts: reports: codequality:``), the
subset of the Code Climate issue format GitLab documents.

One issue per defect, in report order: a base line that twelve roots
render is one issue whose description names the roots (shortened as the
text report shortens them; ``content.body`` lists them all). Each issue has:

- ``check_name``: the validator id (``build`` for a build error), and
  ``engine_name`` ``krmcheck``, which tells krmcheck's issues apart from
  other tools' in a pipeline that merges several reports;
- ``fingerprint``: the baseline fingerprint (validator, file, resource and
  message, no line numbers), the same value as SARIF's
  ``partialFingerprints["krmcheck/v1"]``, so GitLab follows a defect while
  lines move and compares a merge request's issues with its target branch's.
  GitLab shows one issue per fingerprint: two defects that differ only in
  their line (same validator, file, resource and message) are one issue;
- ``severity``: error is ``major``, warning ``minor``, info ``info``
  (``critical`` and ``blocker`` are left to tools that rank harder);
- ``location``: the repo-relative path and the 1-based line (1 when the
  position is unknown); a defect with no file points at its first root.

Suppressed findings are not issues (GitLab has no way to mark one silenced);
the SARIF and JSON reports list them.

Paths, names and messages may come from whoever opened the pull request: the
description is one line of ``plain_text``, the body (Markdown, in the Code
Climate format) escapes everything Markdown or HTML would act on, and the
document is ``json_text``: valid JSON that encodes as UTF-8 whatever the strings.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from krmcheck.reporters import defect_fingerprint, ordered_defects, roots_text, where
from krmcheck.reporters.safe import json_text, markdown_code, markdown_text, one_line
from krmcheck.results import Defect, RunReport

# https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format
SEVERITIES = {"error": "major", "warning": "minor", "info": "info"}
ENGINE = "krmcheck"


class GitlabReporter:
    def write(self, run: RunReport, out: TextIO) -> None:
        out.write(json_text(json.dumps(report(run), indent=2, ensure_ascii=False)) + "\n")


def report(run: RunReport) -> list[dict[str, Any]]:
    return [issue(d) for d in ordered_defects(run.defects)]


def issue(defect: Defect) -> dict[str, Any]:
    location = defect.location
    return {
        "description": description(defect),
        "check_name": defect.rule,
        "fingerprint": defect_fingerprint(defect.rule, location.path,
                                          defect.finding.resource_id, defect.message),
        "severity": SEVERITIES.get(defect.severity, "info"),
        "location": {"path": location.path or defect.roots[0],
                     "lines": {"begin": max(location.line, 1)}},
        "content": {"body": body(defect)},
        "engine_name": ENGINE,
        "type": "issue",
    }


def description(defect: Defect) -> str:
    """``message (roots)`` on one line, as the widget lists it."""
    message = " ".join(line.strip() for line in defect.message.replace("\r\n", "\n").split("\n"))
    return one_line(f"{message} ({roots_text(defect.roots)})")


def body(defect: Defect) -> str:
    """The whole message, the validator, every root, the resource and field
    it names, and the earlier writers of the value (newest first)."""
    parts = [markdown_text(defect.message),
             f"Validator: {markdown_code(defect.rule)}",
             "Roots: " + ", ".join(markdown_code(r) for r in defect.roots)]
    resource = defect.finding.resource_id
    if resource:
        parts.append(f"Resource: {markdown_code(resource)}")
    if defect.finding.result.field_path:
        parts.append(f"Field: {markdown_code(defect.finding.result.field_path)}")
    parts += [f"Earlier value at {markdown_code(where(o.location))}, set by {markdown_text(o.by)}"
              for o in reversed(defect.trail)]
    return "\n\n".join(parts)
