"""Terminal report: one compiler-style line per finding, then a summary.

    overlays/prod/deployment.yaml:12:16: error: image has no tag [image-tag] (overlays/prod)
      via base/deployment.yaml:20:16 (resource)
    1 error, 0 warnings, 0 infos in 1 root

The first line is what editors and CI log scrapers link to. Each ``via``
line names an earlier writer of the same value (newest first), so a value
an overlay patched can be traced back to the base that first set it. A
message of several lines keeps its later lines indented under the first.
"""

from __future__ import annotations

from typing import TextIO

from krmcheck.reporters import counts_line, ordered, where
from krmcheck.results import Finding, RunReport

_CONTINUATION = "\n    "


class TextReporter:
    def write(self, run: RunReport, out: TextIO) -> None:
        for finding in ordered(run.findings):
            out.write(finding_lines(finding))
        out.write(counts_line(run) + "\n")


def finding_lines(finding: Finding) -> str:
    message = finding.message.replace("\r\n", "\n").replace("\n", _CONTINUATION)
    head = (f"{where(finding.location)}: {finding.severity}: {message}"
            f" [{finding.rule}] ({finding.root})\n")
    vias = "".join(f"  via {origin}\n" for origin in reversed(finding.trail))
    return head + vias
