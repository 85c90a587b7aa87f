"""Hostile input through every reporter and the command line.

File names, kustomization entries, resource names and function messages
come from whoever opened the pull request. Whatever they hold, no output
line may be read by the GitHub runner as a workflow command (a line whose
first non-space characters are ``::``, or that holds the older ``##[`` or
Azure's ``##vso[``), no control character, bidi override or surrogate
reaches the output raw, XML parses, JSON and SARIF load, and the job
summary's table keeps its columns.
"""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from reporter_sample import finding

from krmcheck.cli import ProgressLine, main
from krmcheck.reporters import REPORTERS
from krmcheck.reporters.github import GithubReporter
from krmcheck.reporters.safe import MessageStream
from krmcheck.results import Note, ResourceRef, RootReport, RunReport, Suppressed
from krmcheck.tree.origin import Location, Origin

STOP = "::stop-commands::x"
# A file name with a line break that would start a command, and a comma and
# a colon that would end a command's property early.
NEWLINE_PATH = f"base/evil\n{STOP}/a,b:c.yaml"
# A directory named like a command: its path starts the text report's line.
COMMAND_DIR = f"{STOP}/kustomization.yaml"
# A file name that is not UTF-8 (os.fsdecode keeps the byte as a surrogate).
UNDECODABLE = "base/bad\udcff.yaml"
MESSAGE = ("image is bad\n::stop-commands::x \x1b[31mred\x1b[0m\roverwritten\x00nul\x07bel"
           "\ttab \u202eexe.txt\u202c \u2066iso\u2069 \udcff ]]> <script>alert(1)</script>"
           " a|b `code` ``` &amp; [link](http://x) ##[add-mask]secret ##vso[task.complete]\n"
           "# heading\n  ::set-output name=a::b\r\n\u2028::add-mask::y\x85\x9b2J \ufffe\uffff")
ROOT = "overlays/\x1b]0;title\x07prod\u202e"
REF = ResourceRef("v1", "ConfigMap", "<script>]]>\ufffe", f"ns\n{STOP}")

# Characters that must never reach an output raw; a tab is only allowed as
# the JUnit report's own indentation.
RAW = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                 "\u2028\u2029\ud800-\udfff\ufffe\uffff]")
COMMANDS = {"error", "warning", "notice"}
PROPERTIES = {"file", "line", "col", "title"}


def hostile_run() -> RunReport:
    paths = (NEWLINE_PATH, COMMAND_DIR, UNDECODABLE)
    findings = tuple(
        finding(MESSAGE, severity, f"rule-{severity}|`x`", ROOT, Location(path, 3, 5), REF,
                "data[\x1b]", (Origin(COMMAND_DIR, 1, 1, f"patch\n{STOP}"),))
        for severity in ("error", "warning", "info") for path in paths)
    build = finding(f"accumulating resources: '{NEWLINE_PATH}' does not exist", "error", "build",
                    COMMAND_DIR.rsplit("/", 1)[0], Location(COMMAND_DIR, 2, 3))
    silenced = finding(MESSAGE, "error", "replicas", ROOT, Location(UNDECODABLE, 8, 1), REF)
    return RunReport((
        RootReport(ROOT, (REF,), findings, coverage=(("v1\x1b", "Kind\u202e", "", "", 1),),
                   suppressed=(Suppressed(silenced, "comment", f"{NEWLINE_PATH}:8:9"),)),
        RootReport(COMMAND_DIR.rsplit("/", 1)[0], (), (build,), build_failed=True),
    ), notes=(Note(MESSAGE, Location(NEWLINE_PATH, 0, 0)),))


def render(name: str, tmp_path: Path) -> dict[str, str]:
    """Everything a reporter writes for the hostile run: its stream, and for
    github the job summary."""
    summary = tmp_path / "summary.md"
    reporter = REPORTERS[name]
    if name == "github":
        reporter = GithubReporter(env={"GITHUB_STEP_SUMMARY": str(summary)})
    out = io.StringIO()
    reporter.write(hostile_run(), out)
    written = {"out": out.getvalue()}
    if summary.exists():
        written["summary"] = summary.read_text(encoding="utf-8")
    return written


def workflow_command(line: str) -> tuple[str, dict[str, str], str] | None:
    """What the GitHub runner reads in a line: the command, its properties
    and its data, decoded; None when the line is no command."""
    text = line.lstrip()
    end = text.find("::", 2)
    if not text.startswith("::") or end < 0:
        return None
    name, _, props = text[2:end].partition(" ")
    properties = {}
    for prop in props.strip().split(","):
        key, equals, value = prop.partition("=")
        if equals:
            properties[key] = _unescape(value, ("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"),
                                        ("%2C", ","), ("%25", "%"))
    return name, properties, _unescape(text[end + 2:], ("%0D", "\r"), ("%0A", "\n"), ("%25", "%"))


def _unescape(text: str, *mappings: tuple[str, str]) -> str:
    for escaped, char in mappings:
        text = text.replace(escaped, char)
    return text


def assert_log_safe(text: str) -> None:
    # splitlines breaks at more than the runner does (it splits at CR and LF).
    for line in text.splitlines():
        assert not re.match(r"\s*::", line), line
        assert not re.search(r"##[A-Za-z]*\[", line), line


def assert_no_raw_controls(text: str, allowed: str = "\n") -> None:
    assert [c for c in RAW.findall(text) if c not in allowed] == []


def strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


def test_text_report_has_no_command_lines_and_no_raw_controls(tmp_path: Path) -> None:
    out = render("text", tmp_path)["out"]
    assert_log_safe(out)
    assert_no_raw_controls(out)
    assert "\\x1b[31mred" in out and "\\u202e" in out and "\\udcff" in out
    assert "\\x3a:stop-commands::x/kustomization.yaml:2:3: error:" in out
    out.encode("utf-8")


def test_github_annotations_are_well_formed_and_decode_to_the_input(tmp_path: Path) -> None:
    out = render("github", tmp_path)["out"]
    assert_no_raw_controls(out)
    commands = [workflow_command(line) for line in re.split("\r\n|\r|\n", out.rstrip("\n"))]
    assert all(c is not None for c in commands), out
    decoded = [c for c in commands if c is not None]
    assert {name for name, _, _ in decoded} <= COMMANDS
    assert all(set(props) <= PROPERTIES for _, props, _ in decoded)
    # GitHub gets the real file name back, line breaks, colons and commas included.
    files = {props.get("file") for _, props, _ in decoded}
    assert files == {NEWLINE_PATH, COMMAND_DIR, UNDECODABLE.replace("\udcff", "\\udcff")}
    messages = [data for _, props, data in decoded if props.get("file") == NEWLINE_PATH]
    assert messages and all(m.startswith("image is bad\n::stop-commands::x \\x1b[31m") for m in messages)


def test_job_summary_rows_keep_their_columns(tmp_path: Path) -> None:
    summary = render("github", tmp_path)["summary"]
    assert_no_raw_controls(summary)
    rows = [line for line in summary.splitlines() if line.startswith("|")]
    assert len(rows) == 2 + len(hostile_run().defects)  # heading, delimiter, one row per defect
    for row in rows:
        # GitHub splits a row at every pipe without a backslash before it.
        assert len(re.split(r"(?<!\\)\|", row)) == 7, row
    for row in rows[2:]:
        # The message cell: no tag, code span, entity or link but its own line breaks.
        message = re.split(r"(?<!\\)\|", row)[3].replace("<br>", "")
        assert not re.search(r"(?<!\\)[<`&\[]", message), message
    assert not [line for line in summary.splitlines() if line.startswith("#") and "krmcheck" not in line]


def test_junit_parses(tmp_path: Path) -> None:
    xml = render("junit", tmp_path)["out"]
    assert_no_raw_controls(xml, allowed="\n\t")
    tree = ET.fromstring(xml.encode("utf-8"))
    assert "<script>]]>" in " ".join(c.get("name", "") for c in tree.iter("testcase"))
    assert any("::stop-commands::x" in (f.text or "") for f in tree.iter("failure"))


@pytest.mark.parametrize("name", ["sarif", "json"])
def test_sarif_and_json_load_and_encode(name: str, tmp_path: Path) -> None:
    text = render(name, tmp_path)["out"]
    assert_no_raw_controls(text)
    document = json.loads(text)
    for value in strings(document):
        value.encode("utf-8")  # no surrogate, which strict JSON parsers refuse
    assert any(NEWLINE_PATH in value for value in strings(document))


def test_sarif_messages_show_control_characters_escaped(tmp_path: Path) -> None:
    log = json.loads(render("sarif", tmp_path)["out"])
    texts = [r["message"]["text"] for r in log["runs"][0]["results"]]
    texts += [loc["message"]["text"] for r in log["runs"][0]["results"]
              for loc in r.get("relatedLocations", ())]
    for text in texts:
        assert_no_raw_controls(text)
    assert any(t.startswith("image is bad\n::stop-commands::x \\x1b[31mred") for t in texts)


def test_message_stream_guards_lines_written_in_pieces() -> None:
    out = io.StringIO()
    stream = MessageStream(out)
    for piece in ("Error: a\n", ":", ":stop-commands::x\n", "  :", ":add-mask::y\r\n", "one #",
                  "#[add-mask]z ##v", "so[task.setvariable]\n", "\x1b[2J\u202e\udcff\n"):
        stream.write(piece)
    assert_log_safe(out.getvalue())
    assert_no_raw_controls(out.getvalue())
    assert out.getvalue().startswith("Error: a\n\\x3a:stop-commands::x\n")


def test_progress_line_shows_a_hostile_root_escaped() -> None:
    out = io.StringIO()
    progress = ProgressLine(out)
    progress.start -= ProgressLine.DELAY + 1
    progress(1, 2, ROOT)
    assert out.getvalue().startswith("\r\033[K")
    assert_no_raw_controls(out.getvalue().removeprefix("\r\033[K"))


def test_a_hostile_kustomization_entry_cannot_stop_workflow_commands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".git").mkdir()
    entries = {"app": "missing\\n::stop-commands::abc", "::stop-commands::dir": "\\e[31mred\\u202e"}
    for directory, entry in entries.items():
        (tmp_path / directory).mkdir()
        (tmp_path / directory / "kustomization.yaml").write_text(f'resources:\n- "{entry}"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output.txt"))

    assert main(["check", "--github", "on", "."]) == 2
    out, err = capsys.readouterr()
    assert "stop-commands::abc" in out and "\\x1b[31mred\\u202e" in out
    annotations = [line for line in out.splitlines() if line.startswith("::")]
    commands = [workflow_command(line) for line in annotations]
    assert {(c[0], c[1]["file"]) for c in commands if c is not None} == {
        ("error", "app/kustomization.yaml"), ("error", "::stop-commands::dir/kustomization.yaml")}
    others = [line for line in out.splitlines() if line not in annotations]
    assert_log_safe("\n".join([*others, err]))
    assert_no_raw_controls(out + err)

    assert main(["build", "app"]) == 2
    out, err = capsys.readouterr()
    assert "stop-commands::abc" in err and err.startswith("Error: ")
    assert_log_safe(out + err)
    assert_no_raw_controls(err)
