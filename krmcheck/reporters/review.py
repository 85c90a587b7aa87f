"""The pull-request view before the diffs: what the merge will do.

``--diff-against REF`` shows, before any diff, per affected root what is
added, changed and removed; every image the change replaces; what the GitOps
controller will do (changes held while suspended, removed objects deleted
or orphaned...); then the flags, each at the source line that made the
change. The text report, the job summary and the ``--markdown`` file show
the same view; a flag that several roots render is shown once with its
roots. Nothing here is longer than a line per root, image or flag, so a
realistic pull request reads in under a screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from krmcheck.reporters import plural, relative, roots_text, where
from krmcheck.reporters.safe import command_data, command_property, markdown_code, markdown_text, one_line
from krmcheck.results import SEVERITY_RANK, Flag, RootDiff, RunReport
from krmcheck.tree.origin import Location

SHOWN = 3  # objects or workloads named in one line before "and N more"
ROWS = 50  # roots in the impact table before the rest are counted


@dataclass(frozen=True)
class Shown:
    """A flag as the view shows it: once, with every root that has it."""

    flag: Flag
    roots: tuple[str, ...]

    @property
    def location(self) -> Location:
        return self.flag.finding.location


def grouped(run: RunReport, section: str) -> list[Shown]:
    """The flags of ``section`` ("flag" or "controller"), one per place,
    id and message, most severe first, then by place."""
    by: dict[tuple[object, ...], list[Flag]] = {}
    for d in run.diff:
        for f in d.flags:
            if f.section == section:
                by.setdefault((f.finding.location, f.id, f.finding.message, f.old, f.new), []).append(f)
    shown = [Shown(fs[0], tuple(dict.fromkeys(f.finding.root for f in fs))) for fs in by.values()]
    return sorted(shown, key=lambda s: (-SEVERITY_RANK.get(s.flag.finding.severity, 0), s.location.path,
                                        s.location.line, s.location.col, s.flag.id))


def _names(names: Sequence[str], shown: int = SHOWN) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def impact_line(d: RootDiff) -> str:
    """``prod: 1 changed (Deployment/prod-web), 2 added (ConfigMap/a, ConfigMap/b)``."""
    parts = []
    for status in ("added", "changed", "renamed", "removed"):
        names = [c.resource for c in d.changes if c.status == status]
        if names:
            parts.append(f"{len(names)} {status} ({_names(names)})")
    side = {"work": " (new root)", "base": " (root removed)"}.get(d.side, "")
    if d.fails:
        return f"{d.root}: fails to build{side}"
    if not parts:
        return f"{d.root}: {'not compared' if d.unrendered else 'rendered output unchanged'}{side}"
    return f"{d.root}: {', '.join(parts)}{side}"


def change_text(f: Flag, arrow: str = "->") -> str:
    """`` (old -> new)``, unless the message already says both."""
    if not (f.old or f.new) or (f.old in f.finding.message and f.new in f.finding.message):
        return ""
    return f" ({f.old} {arrow} {f.new})"


def total_flags(run: RunReport) -> int:
    return len(grouped(run, "flag"))


# --- text -----------------------------------------------------------------------------------

def text_lines(run: RunReport) -> list[str]:
    """The view as lines of the terminal report (unsafe characters are made
    safe by the caller)."""
    cwd, top = run.cwd, run.top_from_cwd
    lines = [f"what the merge does (against {one_line(run.diff_against)}, "
             f"{plural(len(run.diff), 'affected root')}):", "  impact:"]
    lines += [f"    {one_line(impact_line(d))}" for d in run.diff]
    if run.images:
        lines.append("  images:")
        lines += [f"    {one_line(i.old)} -> {one_line(i.new)} ({one_line(_names(i.workloads))})"
                  for i in run.images]
    for section, title in (("controller", "controller"), ("flag", "flags")):
        shown = grouped(run, section)
        if not shown:
            if section == "flag":
                lines.append("  flags: none (nothing in this change is known to wedge a rollout or hurt)")
            continue
        lines.append(f"  {title}:")
        for s in shown:
            here = where(s.location._replace(path=relative(s.location.path, cwd, top)))
            roots = roots_text([relative(r, cwd, top) for r in s.roots])
            lines.append(f"    {one_line(here)}: {one_line(s.flag.finding.severity)}: "
                         f"{one_line(s.flag.finding.message)}{one_line(change_text(s.flag))} "
                         f"[{one_line(s.flag.id)}] ({one_line(roots)})")
    return lines


# --- Markdown ----------------------------------------------------------------------------------

def markdown(run: RunReport) -> str:
    """The view in Markdown: the job summary's and the ``--markdown`` file's."""
    out = [f"\n### What the merge does (against {markdown_code(run.diff_against)})\n",
           f"**Impact** ({plural(len(run.diff), 'affected root')})\n",
           "| Root | Added | Changed | Renamed | Removed | Objects |", "| --- | --- | --- | --- | --- | --- |"]
    for d in run.diff[:ROWS]:
        counts = d.counts
        objects = [c.resource for c in d.changes]
        note = "fails to build" if d.fails else ("not compared" if d.unrendered and not objects else "")
        side = {"work": " (new root)", "base": " (root removed)"}.get(d.side, "")
        out.append(f"| {markdown_code(d.root)}{markdown_text(side)} | {counts['added']} | "
                   f"{counts['changed']} | {counts['renamed']} | {counts['removed']} | "
                   f"{markdown_text(note or _names(objects) or 'unchanged')} |")
    if len(run.diff) > ROWS:
        out.append(f"\n{plural(len(run.diff) - ROWS, 'more root')} in the text report.")
    if run.images:
        out.append("\n**Images**\n")
        out += [f"- {markdown_code(i.old)} → {markdown_code(i.new)}: {markdown_text(_names(i.workloads))}"
                for i in run.images]
    controller = grouped(run, "controller")
    if controller:
        out.append("\n**What the controller will do**\n")
        out += [f"- {markdown_code(where(s.location))} **{markdown_text(s.flag.id)}**: "
                f"{markdown_text(s.flag.finding.message)}" for s in controller]
    flags = grouped(run, "flag")
    if not flags:
        out.append("\n**Flags**: none. Nothing in this change is known to wedge a rollout or hurt.")
    else:
        out.append(f"\n**Flags** ({len(flags)})\n")
        for s in flags:
            change = (f" ({markdown_code(s.flag.old)} → {markdown_code(s.flag.new)})"
                      if change_text(s.flag) else "")
            out.append(f"- {markdown_text(s.flag.finding.severity)} **{markdown_text(s.flag.id)}** at "
                       f"{markdown_code(where(s.location))}: {markdown_text(s.flag.finding.message)}{change} "
                       f"({markdown_code(roots_text(s.roots))})")
    return "\n".join(out) + "\n"


# --- GitHub annotations ---------------------------------------------------------------------------

PER_STEP_LIMIT = 10  # annotations of one type GitHub shows per step


def flag_annotations(run: RunReport, used: dict[str, int]) -> str:
    """Workflow commands for the flags at their lines, so that a reviewer
    sees them on the pull request's files: ``::warning`` for a change the
    API server refuses in place (severity error), ``::notice`` for the
    others; within what the defects (``used``, per command) left of
    GitHub's 10 per type and step."""
    out = []
    left = {command: PER_STEP_LIMIT - used.get(command, 0) for command in ("warning", "notice")}
    for s in grouped(run, "flag"):
        command = "warning" if s.flag.finding.severity == "error" else "notice"
        if left[command] <= 0 or not s.location.path:
            continue
        left[command] -= 1
        props = [("file", s.location.path)]
        if s.location.line > 0:
            props += [("line", str(s.location.line)), ("col", str(s.location.col))]
        props.append(("title", f"krmcheck flag {s.flag.id} ({roots_text(s.roots)})"))
        joined = ",".join(f"{key}={command_property(value)}" for key, value in props)
        out.append(f"::{command} {joined}::{command_data(s.flag.finding.message + change_text(s.flag))}\n")
    return "".join(out)
