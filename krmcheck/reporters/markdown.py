"""``--markdown FILE``: the pull-request view as a comment for the forge.

The same view as the job summary (counts, what the merge does, the new
findings, then each root's diff folded), kept within what a forge accepts
as one comment (GitHub: 65,536 characters): the diffs are cut first, then
the new findings, and the comment says what it left out and where the rest
is (the job summary, the text report).
"""

from __future__ import annotations

from typing import TextIO

from krmcheck.reporters import counts_line, ordered, plural, where
from krmcheck.reporters.github import _root_diff
from krmcheck.reporters.review import markdown as view
from krmcheck.reporters.safe import markdown_code, markdown_text
from krmcheck.results import RunReport

COMMENT_LIMIT = 65536  # characters of a GitHub issue or pull-request comment
_ROOM = 400  # kept for the lines that say what was cut


class MarkdownReporter:
    def __init__(self, limit: int = COMMENT_LIMIT) -> None:
        self.limit = limit

    def write(self, run: RunReport, out: TextIO) -> None:
        out.write(comment(run, self.limit))


def comment(run: RunReport, limit: int = COMMENT_LIMIT) -> str:
    head = f"## krmcheck\n\n**{markdown_text(counts_line(run))}**\n" + (view(run) if run.diff_against else "")
    if len(head) > limit - _ROOM:
        cut = head[:limit - _ROOM].rpartition("\n")[0]
        return cut + "\n\n_The view is cut here: the job summary and the text report show all of it._\n"
    used = len(head) + _ROOM
    new = [f for d in run.diff for f in d.new]
    lines: list[str] = []
    left_findings = 0
    for f in ordered(new):
        line = (f"- {markdown_text(f.severity)} {markdown_code(where(f.location))}: {markdown_text(f.message)} "
                f"({markdown_code(f.rule)})\n")
        if used + len(line) > limit:
            left_findings += 1
            continue
        used += len(line)
        lines.append(line)
    findings = (f"\n**New findings** ({len(new)})\n\n" + "".join(lines)) if new else ""
    parts: list[str] = []
    left_roots = 0
    for d in run.diff:
        part = _root_diff(d)
        if used + len(part) > limit:
            left_roots += 1
            continue
        used += len(part)
        parts.append(part)
    diffs = ("\n### Changes\n\n" + "".join(parts)) if parts else ""
    dropped: list[str] = []
    if left_findings:
        dropped.append(plural(left_findings, "new finding"))
    if left_roots:
        dropped.append(f"the diffs of {plural(left_roots, 'root')}")
    tail = (f"\n_Left out to stay within the comment size the forge allows: {' and '.join(dropped)}; "
            f"the job summary and the text report show everything._\n") if dropped else ""
    return head + findings + diffs + tail
