"""Text made safe for where it is written.

krmcheck runs on pull requests from people it does not trust, so every file
name, kustomization entry, resource name and function message that reaches
an output is hostile until made safe for that output:

- a terminal acts on control characters (ESC starts a sequence that can
  recolour, move the cursor or retitle the window; CR overwrites a line) and
  shows bidi overrides as reordered text (Trojan Source), so they are shown
  as visible escapes (``\\x1b``, ``\\r``, ``\\u202e``), as Python's ``repr``
  writes them;
- the GitHub runner reads any stdout or stderr line whose first non-space
  characters are ``::``, and any line holding ``##[``, as a workflow command
  (``::stop-commands::TOKEN`` silences every annotation after it; Azure
  Pipelines reads ``##vso[`` alike), so no line may start with a colon or
  hold ``##[``, ``##vso[`` or the like;
- workflow commands, Markdown, XML and JSON each have their own escapes.

A lone surrogate (how Python keeps a byte of a file name that is not UTF-8)
cannot be encoded as UTF-8, XML or strict JSON; it is shown as its escape
(``\\udcff``) like the control characters, and exactly as the
``backslashreplace`` error handler would write it.

Backslashes themselves are not escaped: a message that holds the text
``\\x1b`` looks like one that held ESC, which is harmless, and messages full
of regular expressions stay readable.
"""

from __future__ import annotations

import io
import re
from typing import TextIO

# C0 and C1 controls and DEL; Unicode's Bidi_Control characters; the line and
# paragraph separators; surrogates; U+FFFE and U+FFFF, which XML 1.0 forbids
# like most C0 controls and the surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     "\u2028\u2029\ud800-\udfff\ufffe\uffff]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_SURROGATE = re.compile("[\ud800-\udfff]")
# What json.dumps leaves raw (it escapes only C0 controls, quotes and backslashes).
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                          "\u2028\u2029\ud800-\udfff\ufffe\uffff]")
# After leading whitespace (what .NET's TrimStart removes: Python's
# str.isspace set), a colon would start a workflow command; one colon is
# escaped as well as two so that a line written in pieces is safe too.
_COMMAND_START = re.compile(r"^(\s*):")
# GitHub's older ``##[command]``, Azure's ``##vso[...]``, TeamCity's ``##teamcity[...]``.
_COMMAND_INSIDE = re.compile(r"(##[A-Za-z]*)\[")


def escape(char: str) -> str:
    """One character as Python's ``repr`` would write it: ``\\n``, ``\\x1b``, ``\\u202e``."""
    code = ord(char)
    if char in _SHORT:
        return _SHORT[char]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, keep: str = "") -> str:
    """``text`` with every unsafe character (controls, bidi controls, line
    separators, surrogates, U+FFFE/U+FFFF) escaped, except those in ``keep``."""
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else escape(m.group()), text)


def one_line(text: str) -> str:
    """Text for one line of a terminal or CI log: no line breaks, no controls."""
    return visible(text)


def plain_text(text: str) -> str:
    """Text that may span lines (a message in JUnit XML or SARIF): line breaks
    are kept (CRLF becomes LF), everything else unsafe is escaped. The result
    holds only characters XML 1.0 allows and always encodes as UTF-8."""
    return visible(text.replace("\r\n", "\n"), keep="\n")


def well_formed(text: str) -> str:
    """``text`` with only its surrogates escaped: what UTF-8 can encode."""
    return _SURROGATE.sub(lambda m: escape(m.group()), text)


def log_line(line: str) -> str:
    """A line (already made ``one_line``) that a CI runner cannot read as a
    command: a colon that would start it and the ``[`` of a ``##[`` or
    ``##vso[`` (read anywhere in a line) are escaped.
    https://github.com/actions/runner/blob/main/src/Runner.Common/ActionCommand.cs"""
    return _COMMAND_INSIDE.sub(r"\1\\x5b", _COMMAND_START.sub(r"\1\\x3a", line))


def log_text(text: str) -> str:
    """Every line of ``text`` made a ``log_line``."""
    return "\n".join(log_line(line) for line in text.split("\n"))


def command_data(text: str) -> str:
    """A workflow command's message: GitHub decodes %25, %0D and %0A; other
    unsafe characters have no GitHub escape and are shown escaped."""
    return visible(text, keep="\r\n").replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def command_property(text: str) -> str:
    """A workflow command's property value: also ``:`` and ``,``, which would end it early."""
    return command_data(text).replace(":", "%3A").replace(",", "%2C")


def markdown_text(text: str) -> str:
    """Plain text inside a Markdown table cell: punctuation that Markdown or
    HTML would act on (emphasis, links, tags, entities, headings, the cell's
    pipe) is backslash-escaped, and line breaks become ``<br>``."""
    escaped = "".join("\\" + c if c in "\\`*_[]<>|~&#!" else c for c in plain_text(text))
    return escaped.replace("\n", "<br>")


def markdown_code(text: str) -> str:
    """A code span inside a Markdown table cell, on one line. It must be
    fenced by more backticks than any run inside it; a pipe still needs its
    backslash there because GitHub splits the row into cells first."""
    body = one_line(text).replace("|", "\\|")
    fence = "`" * (longest_backtick_run(body) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def longest_backtick_run(text: str) -> int:
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def json_text(serialized: str) -> str:
    """JSON text from ``json.dumps(..., ensure_ascii=False)`` made safe to
    write as UTF-8 and to print: a surrogate becomes its visible escape
    (strict JSON parsers refuse a lone one), and the other unsafe characters
    json.dumps leaves raw become ``\\u`` escapes, which keep their value.
    Every such character is inside a JSON string, so this cannot break one."""
    return _JSON_UNSAFE.sub(_json_escape, serialized)


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    if _SURROGATE.match(char):
        return "\\" + escape(char)  # the text \udcff, its backslash escaped for JSON
    return f"\\u{ord(char):04x}"


class MessageStream(io.TextIOBase):
    """A text stream for messages (stderr): every line written through it is
    ``one_line`` and a ``log_line``, whether a message arrives in one write or
    in several (a line's start is remembered across writes)."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream
        self.line = ""  # the current line so far, made one_line but not yet log_line

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        first, *rest = text.split("\n")
        out = [self._extend(first)]
        for segment in rest:
            self.line = ""
            out.append("\n" + self._extend(segment))
        self.stream.write("".join(out))
        return len(text)

    def _extend(self, segment: str) -> str:
        # log_line only ever changes the character that completes what it
        # guards against, so what it made of the line so far stays as written.
        before = log_line(self.line)
        self.line += one_line(segment)
        return log_line(self.line)[len(before):]

    def flush(self) -> None:
        self.stream.flush()
