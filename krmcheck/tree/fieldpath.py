"""Field paths: every spelling KRM functions and validators use, parsed to steps.

Functions report where in a resource a problem is with a path, and there
is no single spelling in use:

* dotted with brackets, ``spec.containers[0].image`` (kpt, kube-linter);
* dotted with numbers, ``spec.containers.0.image`` (many linters);
* list items selected by a field, ``spec.containers[name=web].image``, and
  kyaml's spelling with the selector as its own segment,
  ``spec.containers.[name=web].image`` (``[=value]`` selects a scalar item);
* keys holding dots, quoted ``metadata.annotations["a.b/c"]``, bare in
  brackets ``metadata.annotations[a.b/c]``, or escaped ``a\\.b/c``;
* JSON pointers, ``/spec/containers/0/image`` with ``~0`` and ``~1``
  (kubeconform, JSON patch), also with kyverno's trailing ``/`` and as a URI
  fragment ``#/spec/...``;
* JSONPath-like prefixes ``$.spec`` and ``.spec`` (jsonschema, yq), and the
  filter ``[?(@.name=='web')]``.

All of them parse to the same tuple of :class:`Step`; :func:`format` gives
the canonical dotted spelling back, and :func:`walk` follows the steps
through a provenance tree as deep as it goes.

kustomize's replacements and vars spell paths in kyaml's own grammar, where
a part is kept as written (a selector value is a pattern there);
:func:`split_kyaml` splits such a path into its parts.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Iterable, NamedTuple
from urllib.parse import unquote

from krmcheck.tree.node import Mapping, Node, Scalar, Sequence


class Step(NamedTuple):
    """One step of a path; exactly one of the three fields is set."""

    key: str | None = None
    position: int | None = None
    match: tuple[str, str] | None = None  # (field, value); field "" matches a scalar item

    def __str__(self) -> str:
        return format((self,))


def key(name: str) -> Step:
    return Step(key=name)


def index(position: int) -> Step:
    return Step(position=position)


def match(field: str, value: str) -> Step:
    return Step(match=(field, value))


# --- parsing -------------------------------------------------------------------

_DIGITS = re.compile(r"[0-9]+")
_INDEX = re.compile(r"-?[0-9]+")
# JSONPath filter as jsonpath-ng and friends print it: [?(@.name=='web')]
_FILTER = re.compile(r"\[\?\(\s*@\.([^=\s)]*)\s*==?\s*(?:'([^']*)'|\"([^\"]*)\"|([^)\s]*))\s*\)\]")


@lru_cache(maxsize=4096)  # validators repeat the same few paths across resources
def parse(path: str) -> tuple[Step, ...]:
    """Parse any supported spelling of a field path; ``""`` is the resource itself.

    Raises ValueError naming the path and the position of the problem.
    """
    if path.startswith("#/"):
        return _parse_pointer(unquote(path[1:]), path)
    if path.startswith("/"):
        return _parse_pointer(path, path)
    return _Parser(path).steps()


def _parse_pointer(pointer: str, original: str) -> tuple[Step, ...]:
    parts = pointer.split("/")[1:]
    if parts and parts[-1] == "":  # kyverno ends its paths with "/"
        parts.pop()
    return tuple(_pointer_step(p, original) for p in parts)


def _pointer_step(part: str, original: str) -> Step:
    if re.search(r"~(?![01])", part):
        raise ValueError(f"invalid field path {original!r}: '~' must be followed by 0 or 1 in a JSON pointer")
    if _DIGITS.fullmatch(part):
        return Step(position=int(part))
    return Step(key=part.replace("~1", "/").replace("~0", "~"))


class _Parser:
    """A one-pass scanner over the dotted / bracket spelling."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.out: list[Step] = []

    def error(self, what: str) -> ValueError:
        return ValueError(f"invalid field path {self.text!r}: {what} at character {self.pos + 1}")

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def steps(self) -> tuple[Step, ...]:
        text = self.text
        if text.startswith("$") and text[1:2] in ("", ".", "["):
            self.pos = 1
        if self.peek() == ".":  # ".spec" (yq) and "$.spec" (JSONPath)
            self.pos += 1
            if self.pos == len(text) and text in (".", "$."):
                return ()
        if self.pos == len(text):
            if text in ("", "$"):
                return ()
            raise self.error("empty key")
        self.segment()
        while self.pos < len(text):
            c = self.peek()
            if c == ".":
                self.pos += 1
                self.segment()
            elif c == "[":
                self.bracket()
            else:
                raise self.error("expected '.' or '['")
        return tuple(self.out)

    def segment(self) -> None:
        """A dotted segment: a key, a number, or kyaml's ``.[name=web]``."""
        if self.peek() == "[":
            self.bracket()
        else:
            self.word()

    def word(self) -> None:
        start = self.pos
        chars: list[str] = []
        escaped = False
        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c == "\\":
                if self.pos + 1 == len(text):
                    raise self.error("dangling '\\'")
                chars.append(text[self.pos + 1])
                escaped = True
                self.pos += 2
                continue
            if c in ".[":
                break
            if c == "]":
                raise self.error("unexpected ']'")
            chars.append(c)
            self.pos += 1
        if self.pos == start:
            raise self.error("empty key")
        word = "".join(chars)
        if not escaped and _DIGITS.fullmatch(word):
            self.out.append(Step(position=int(word)))
        else:
            self.out.append(Step(key=word))

    def bracket(self) -> None:
        filt = _FILTER.match(self.text, self.pos)
        if filt:
            value = next(v for v in filt.group(2, 3, 4) if v is not None)
            self.out.append(Step(match=(filt.group(1), value)))
            self.pos = filt.end()
            return
        self.pos += 1  # "["
        if self.peek() in ("'", '"'):
            self.out.append(Step(key=self.quoted()))
            self.close()
            return
        content = self.until("=]")
        if self.peek() == "=":
            self.pos += 1
            value = self.quoted() if self.peek() in ("'", '"') else self.until("]")
            self.out.append(Step(match=(content.strip(), value)))
        elif content == "":
            raise self.error("empty brackets")
        elif _INDEX.fullmatch(content.strip()):
            self.out.append(Step(position=int(content)))
        elif content == "*":
            raise self.error("wildcard '[*]' does not name one field")
        else:
            self.out.append(Step(key=content))
        self.close()

    def until(self, stops: str) -> str:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in stops:
            self.pos += 1
        return self.text[start:self.pos]

    def close(self) -> None:
        if self.peek() != "]":
            raise self.error("expected ']'")
        self.pos += 1

    def quoted(self) -> str:
        """A quoted string: JSON escapes in double quotes, ``\\x`` in single."""
        quote = self.text[self.pos]
        start = self.pos
        self.pos += 1
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == "\\":
                self.pos += 2
                continue
            self.pos += 1
            if c == quote:
                body = self.text[start:self.pos]
                if quote == '"':
                    try:
                        return str(json.loads(body))
                    except ValueError:
                        raise self.error("bad escape in quoted key") from None
                return re.sub(r"\\(.)", r"\1", body[1:-1])
        self.pos = start
        raise self.error("unterminated quote")


# --- formatting ----------------------------------------------------------------

# Keys written bare: words (a letter or "_", then letters, digits, "_" and
# "-"), which a reader cannot mistake for anything else. Any other key (dots
# and slashes in "app.kubernetes.io/name", spaces, a leading "-" or digit,
# quotes, brackets) is written as a JSON string in brackets, so the reader
# sees exactly which key is meant; either way it reads back unchanged.
_PLAIN_KEY = re.compile(r"[^\W\d][\w-]*")


def format(steps: Iterable[Step]) -> str:
    """The canonical spelling ``a.b[0].c``; ``parse(format(s)) == s``."""
    out: list[str] = []
    for step in steps:
        if step.key is not None:
            out.append(_format_key(step.key, first=not out))
        elif step.position is not None:
            out.append(f"[{step.position}]")
        elif step.match is not None:
            out.append(_format_match(*step.match))
        else:
            raise ValueError(f"empty step {step!r}")
    return "".join(out)


def from_parts(parts: Iterable[str | int]) -> tuple[Step, ...]:
    """The steps of a path held as plain parts (jsonschema's ``absolute_path``,
    a validator's tuple): a number is a list position, text a key."""
    return tuple(index(p) if isinstance(p, int) else key(p) for p in parts)


def dotted(parts: Iterable[str | int]) -> str:
    """The canonical spelling of plain parts: ``spec.containers[0].image``,
    ``metadata.labels["app.kubernetes.io/name"]``."""
    return format(from_parts(parts))


def _format_key(name: str, first: bool) -> str:
    if _PLAIN_KEY.fullmatch(name):
        return name if first else "." + name
    return "[" + json.dumps(name, ensure_ascii=False) + "]"


def _format_match(field: str, value: str) -> str:
    if any(c in field for c in "=]") or field[:1] in ("'", '"', "?") or field != field.strip():
        raise ValueError(f"cannot spell a list selector on field {field!r}")
    if "]" in value or value[:1] in ("'", '"'):
        value = json.dumps(value, ensure_ascii=False)
    return f"[{field}={value}]"


# --- kyaml's split paths ---------------------------------------------------------
# replacements and vars read a field path as kyaml does: a list of raw parts
# (a selector's value is a regular expression in a replacement target, "*"
# and "-" are parts of their own), not as the steps above.

def split_kyaml(path: str) -> list[str]:
    """kyaml's SmarterPathSplitter: split on ``.``, but not after ``\\`` nor
    inside ``[...]`` holding ``=``; a leading ``.`` is dropped."""
    parts = path.split(".")
    if len(parts) > 1 and parts[0] == "":
        parts = parts[1:]
    joined: list[str] = [parts[0]]
    for p in parts[1:]:
        if joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + "." + p
        else:
            joined.append(p)
    out: list[str] = []
    i = 0
    while i < len(joined):
        elem = joined[i]
        if elem.startswith("[") and not elem.endswith("]"):
            group = [elem]
            while i < len(joined) - 1:
                i += 1
                group.append(joined[i])
                if joined[i].endswith("]"):
                    break
            text = ".".join(group)
            out.append(text if "=" in text else text.strip("[]"))
        else:
            out.append(elem)
        i += 1
    return out


def is_kyaml_index(part: str) -> bool:
    """A list position (kyaml's IsListIndex): digits only."""
    return part.isdigit()


def is_kyaml_selector(part: str) -> bool:
    """A list-item selector, ``[name=value]`` (kyaml's IsListMatcher)."""
    return part.startswith("[") and part.endswith("]")


def kyaml_selector(part: str) -> tuple[str, str]:
    """``(field, value)`` of ``[field=value]``; ValueError, in kyaml's words, without ``=``."""
    field, eq, value = part[1:-1].partition("=")
    if not eq:
        raise ValueError("list path element must contain fieldName=fieldValue for element to match")
    return field, value


# --- walking -------------------------------------------------------------------

def trace(node: Node, steps: Iterable[Step]) -> list[Node]:
    """The nodes the steps pass through, ``node`` first, as far as they exist."""
    chain = [node]
    for step in steps:
        child = _child(chain[-1], step)
        if child is None:
            break
        chain.append(child)
    return chain


def walk(node: Node, steps: Iterable[Step]) -> tuple[Node, int]:
    """The deepest existing node along ``steps`` and how many steps it took."""
    chain = trace(node, steps)
    return chain[-1], len(chain) - 1


def _child(node: Node, step: Step) -> Node | None:
    if isinstance(node, Mapping):
        if step.key is not None:
            return node.items.get(step.key)
        if step.position is not None:  # "ports.80" on a map keyed by number
            return node.items.get(str(step.position))
        return None
    if isinstance(node, Sequence):
        if step.position is not None:
            return _item(node, step.position)
        if step.key is not None and _DIGITS.fullmatch(step.key):
            return _item(node, int(step.key))
        if step.match is not None:
            return _select(node, *step.match)
    return None


def _item(seq: Sequence, position: int) -> Node | None:
    if -len(seq.items) <= position < len(seq.items):
        return seq.items[position]
    return None


def _select(seq: Sequence, field: str, value: str) -> Node | None:
    for item in seq.items:
        target = item if field == "" else (item.items.get(field) if isinstance(item, Mapping) else None)
        if isinstance(target, Scalar) and target.as_string() == value:
            return item
    return None
