"""Keeping Secret values out of every output.

What is a secret value: every scalar under ``data`` and ``stringData`` of
every Secret a build read, made or produced (a ``data:`` that is a string
instead of a map included); ``data`` both as written and base64-decoded,
``stringData`` both as written and base64-encoded; each line of 8
characters or more of a value of several lines; and the value of every
``secretGenerator`` literal. File and env-file inputs are covered through
the Secret they make (the generator never quotes them in its own errors).
The builder collects the values as it goes (``Builder.secrets``): a build
that fails part-way still knows those it had read, and a value copied out
of a Secret that a later patch deletes is still known.

Where: the pipeline (``pipeline/root.py``) masks each root's report as it is made (its build error,
the Results of functions, validators and external validators, every
finding, the names of the resources it rendered), and the error line of
``krmcheck build``. Fingerprints, baselines, defects and every reporter only
ever see masked text, and a finding keeps its fingerprint when the Secret's
value changes.

Masking follows provenance. The builder also keeps where each value was
written (:func:`secret_places`: the origins of Secret data), and a node
keeps the origins of every earlier writer in its trail wherever a
replacement, a var or a patch copies it. A node is *public* when neither it
nor any earlier writer wrote Secret data, no program (a KRM function, an
exec plugin) wrote it, and its value is none a controller took from a
Secret (:class:`Secrets`, ``unplaced``). Then:

- a finding about a public node shows that node's values, and the name and
  namespace of its resource when those are public, even when a Secret
  holds the same text (a namespace ``user0`` beside a Secret holding
  ``user0``; ``kubernetes.io/service-account.name: argo-server`` beside an
  SSO Secret whose client id is ``argo-server``);
- every other place where a secret value may appear (a message about a
  node that came from a Secret, a build error, which has no node) masks
  every secret value, wherever the value travelled;
- a resource's name or namespace that is a secret value and not public (a
  patch copied a Secret's value into ``metadata.name``) is masked in the
  report's resource references (JSON, SARIF, JUnit), not only in messages.

Text a program wrote (``Result.by_program``: a KRM function's or an
external validator's Results, a program's output in a build error) has no
provenance: every secret value is masked in it, and, since a program may
have read any file, with the values of every root of the run
(:func:`program_text`, called by the pipeline once every root is checked).
What is printed whole rather than quoted in a message (a rendered resource
in the ``--diff-against`` changes, a value ``krmcheck blame`` shows) is
masked by the same provenance, node by node (:func:`shown_tree`).

Values are masked in messages about any resource, not only about Secrets:
replacements, vars and patches copy them into Deployments and ConfigMaps,
where a validator may quote them. A short or common value would mask half
of every report, so how a value is matched depends on its length:

- 8 characters or more: wherever it occurs, and also where a message cut it
  short (a first part of 8 or more characters followed by ``...``);
- 4 to 7 characters: where it stands as a word (no letter or digit right
  before or after it);
- shorter values, the words ``true``, ``false``, ``yes``, ``no``, ``on``,
  ``off``, ``null`` and ``none``, and words krmcheck's own messages use
  (``root``, ``this``, ``error``...): only where a message quotes the whole
  value (``'x'``, ``"x"`` or ```x```).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Iterator
from collections.abc import Sequence as Listed

from krmcheck.resource.resource import Resource
from krmcheck.resource.secrets import ANYWHERE, Secrets, spellings
from krmcheck.results import Finding, ResourceRef, Result, RootReport
from krmcheck.tree.node import Mapping, Node, Scalar, walk
from krmcheck.tree.node import Sequence as ListNode

MASK = "<redacted>"
WORD = 4  # ...this long, where they stand as a word; shorter ones only when quoted whole
COMMON = frozenset({"true", "false", "yes", "no", "on", "off", "null", "none",
                    # words of krmcheck's own messages ("not defined in this root"): a
                    # Secret holding one (a database user "root") must not rewrite them
                    "root", "roots", "this", "error", "errors", "info", "kind", "name",
                    "field", "value", "image", "schema", "secret", "defined", "default"})
_ELLIPSES = ("...", "\u2026")
# Tags that say which check spoke, never what it saw: a value that happens
# to spell a validator id must not turn the validator off.
_IDENTITY_TAGS = frozenset({"validator", "rule"})


# --- masking ----------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Masker:
    """The masking of one set of secret values, compiled once."""

    anywhere: re.Pattern[str] | None
    word: re.Pattern[str] | None
    quoted: re.Pattern[str] | None
    # the long values by their first characters, for messages that cut them short
    heads: dict[str, tuple[str, ...]]
    head: re.Pattern[str] | None  # where any of those first characters start

    def text(self, message: str) -> str:
        if self.anywhere is not None:
            message = self.anywhere.sub(MASK, message)
        if self.head is not None and any(e in message for e in _ELLIPSES):
            message = self._cut_short(message)
        if self.word is not None:
            message = self.word.sub(MASK, message)
        if self.quoted is not None:
            message = self.quoted.sub(rf"\g<q>{MASK}\g<q>", message)
        return message

    def _cut_short(self, message: str) -> str:
        """Mask a value's first part where a message shortened it to ``first...``."""
        assert self.head is not None
        out, done = [], 0
        for found in self.head.finditer(message):
            start = found.start()
            if start < done:
                continue
            end = _next_ellipsis(message, start + ANYWHERE)
            if end < 0:
                break  # nothing after here is cut short
            if any(v.startswith(message[start:end]) for v in self.heads[found.group(1)]):
                out += [message[done:start], MASK]
                done = end
        return "".join(out) + message[done:] if out else message


def _next_ellipsis(message: str, start: int) -> int:
    found = [i for i in (message.find(e, start) for e in _ELLIPSES) if i >= 0]
    return min(found, default=-1)


@functools.lru_cache(maxsize=64)
def masker(secrets: frozenset[str]) -> Masker:
    spelled = {s for v in secrets for s in _escaped(v)}
    tiers: dict[str, list[str]] = {"anywhere": [], "word": [], "quoted": []}
    for v in spelled:
        tier = ("quoted" if len(v) < WORD or v.lower() in COMMON
                else "word" if len(v) < ANYWHERE else "anywhere")
        tiers[tier].append(v)
    heads: dict[str, list[str]] = {}
    for v in tiers["anywhere"]:
        heads.setdefault(v[:ANYWHERE], []).append(v)
    return Masker(_alternation(tiers["anywhere"], "{}"),
                  _alternation(tiers["word"], r"(?<![0-9A-Za-z]){}(?![0-9A-Za-z])"),
                  _alternation(tiers["quoted"], r"(?P<q>['\"`]){}(?P=q)"),
                  {head: tuple(vs) for head, vs in heads.items()},
                  _alternation(list(heads), "(?=({}))"))


def _escaped(value: str) -> set[str]:
    """A value, and as ``repr`` and JSON print it inside a message."""
    return {value, repr(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}


def _alternation(values: list[str], shape: str) -> re.Pattern[str] | None:
    if not values:
        return None
    longest_first = sorted(values, key=lambda v: (-len(v), v))
    return re.compile(shape.format("(?:" + "|".join(map(re.escape, longest_first)) + ")"))


# --- what is masked ---------------------------------------------------------------

def redact(result: Result, secrets: frozenset[str]) -> Result:
    """``result`` with every secret value masked in its message and tags."""
    return _result(result, masker(secrets)) if secrets else result


def root_report(report: RootReport, secrets: frozenset[str] | Secrets,
                resources: Listed[Resource] = ()) -> RootReport:
    """A root's report with every secret value masked in every finding,
    kept or suppressed, and in the names of the resources it lists: where
    a root's messages leave the build. With the rendered ``resources``,
    masking follows provenance (see the module's documentation)."""
    known = secrets if isinstance(secrets, Secrets) else Secrets(secrets)
    if not known.values:
        return report
    shown = _Provenance(known, resources, report.root)
    return dataclasses.replace(
        report, findings=tuple(shown.finding(f) for f in report.findings),
        suppressed=tuple(dataclasses.replace(s, finding=shown.finding(s.finding)) for s in report.suppressed),
        resources=tuple(shown.ref(r) for r in report.resources),
        places=tuple((shown.ref(ref), at, shown.source_id(sid)) for ref, at, sid in report.places),
        rendered=tuple((shown.ref(ref), shown.source_id(sid), text, path)
                       for ref, sid, text, path in report.rendered))


class _Provenance:
    """The masking of one root's report: what each finding may show."""

    def __init__(self, secrets: Secrets, resources: Listed[Resource], root: str) -> None:
        from krmcheck.locate import Locator  # only a root whose build saw a Secret

        self.secrets = secrets
        self.masker = masker(secrets.values)
        self.locator = Locator(resources, root)
        # names and namespaces that are secret values and that some resource does not hold publicly
        self.hidden: set[str] = set()
        for res in resources:
            for node in _identity(res):
                if isinstance(node, Scalar) and node.as_string() in secrets.values and not secrets.public(node):
                    self.hidden.add(node.as_string())

    def finding(self, finding: Finding) -> Finding:
        if finding.result.by_program:  # no provenance: every value masked, wherever it stands
            masked = _program_finding(finding, self.masker)
            source_id = self.source_id(masked.source_id)
            return masked if source_id == masked.source_id else dataclasses.replace(masked, source_id=source_id)
        shown = self._shown(finding)
        m = masker(self.secrets.values - shown) if shown else self.masker
        ref = finding.result.resource_ref
        result = _result(finding.result, m, self.ref(ref) if ref is not None else None)
        source_id = self.source_id(finding.source_id)
        if result is finding.result and source_id == finding.source_id:
            return finding
        return dataclasses.replace(finding, result=result, source_id=source_id)

    def _shown(self, finding: Finding) -> frozenset[str]:
        """The secret values ``finding`` may show: those of the public node
        it is about (a scalar, or the scalars under it) and of its resource's
        public name and namespace."""
        resource = self.locator.find(finding.result)
        if resource is None:
            return frozenset()
        node = self.locator.node(resource, finding.result.field_path)
        if node.origin.location != finding.location:
            return frozenset()  # not the node the finding was located at
        if not self.secrets.public(node):
            return frozenset()  # a message about a copy of a Secret's value shows no secret value at all
        values = self.secrets.values
        shown = {v for n in _public_scalars(node, self.secrets) for v in spellings(n) if v in values}
        shown |= {n.as_string() for n in _identity(resource)
                  if isinstance(n, Scalar) and n.as_string() in values and self.secrets.public(n)}
        return frozenset(shown - self.secrets.unplaced)

    def ref(self, ref: ResourceRef) -> ResourceRef:
        if ref.name not in self.hidden and ref.namespace not in self.hidden:
            return ref
        return dataclasses.replace(ref, name=MASK if ref.name in self.hidden else ref.name,
                                   namespace=MASK if ref.namespace in self.hidden else ref.namespace)

    def source_id(self, source_id: str) -> str:
        """``Kind/namespace/name`` with a hidden name or namespace masked."""
        if not self.hidden or not source_id:
            return source_id
        kind, _, rest = source_id.partition("/")
        return "/".join([kind] + [MASK if part in self.hidden else part for part in rest.split("/")])


def _identity(resource: Resource) -> Iterator[Node]:
    """A resource's ``metadata.name`` and ``metadata.namespace`` nodes."""
    metadata = resource.node.items.get("metadata")
    if isinstance(metadata, Mapping):
        for key in ("name", "namespace"):
            if key in metadata.items:
                yield metadata.items[key]


_SHOWN_NODES = 200  # how many scalars under a finding's node are looked at


def _public_scalars(node: Node, secrets: Secrets) -> Iterator[Scalar]:
    """The public scalars at or under a public ``node``."""
    for i, n in enumerate(walk(node)):
        if i >= _SHOWN_NODES:
            return
        if isinstance(n, Scalar) and secrets.public(n):
            yield n


# --- rendered values shown whole -------------------------------------------------

def shown_tree(node: Node, secrets: Secrets) -> Node:
    """A copy of ``node`` to print whole (a rendered resource in the
    ``--diff-against`` changes, a field ``krmcheck blame`` shows), masked by
    provenance as findings are: a scalar that a Secret's data, a program or
    a controller's Secret variable may have written is masked where it holds
    a secret value (and a map key beside it); a public one is printed as
    written, even when a Secret holds the same text."""
    if not secrets.values:
        return node
    return _shown(node, secrets, masker(secrets.values))


def _shown(node: Node, secrets: Secrets, m: Masker) -> Node:
    if isinstance(node, Mapping):
        items: dict[str, Node] = {}
        for key, value in node.items.items():
            if not secrets.public(value) and _masked_scalar(key, secrets, m) != key:
                key = MASK + (f"-{len(items)}" if MASK in items else "")
            items[key] = _shown(value, secrets, m)
        return Mapping(items, node.origin, node.trail)
    if isinstance(node, ListNode):
        return ListNode([_shown(v, secrets, m) for v in node.items], node.origin, node.trail)
    if not isinstance(node, Scalar) or node.value is None or secrets.public(node):
        return node
    text = node.value if isinstance(node.value, str) else node.as_string()
    if spellings(node) & secrets.values:
        return Scalar(MASK, node.origin, node.trail)
    masked = _masked_scalar(text, secrets, m)
    return node if masked == text else Scalar(masked, node.origin, node.trail)


def _masked_scalar(text: str, secrets: Secrets, m: Masker) -> str:
    """A value that came from a Secret: masked whole when it is a secret
    value, else every secret value in it as a message's would be."""
    return MASK if text in secrets.values else m.text(text)


# --- text a program wrote ---------------------------------------------------------

def program_text(reports: Listed[RootReport], seen: frozenset[str]) -> tuple[RootReport, ...]:
    """The reports with every value of ``seen`` (the Secret values of every
    root of the run) masked in the text programs wrote: a KRM function's or
    an external validator's Results, a program's output in a build error.
    Such text has no provenance, and a program may print what it read
    anywhere (a Secret file of a sibling root), so a root's own values are
    not enough."""
    if not seen or not any(r.program_text for r in reports):
        return tuple(reports)
    m = masker(seen)

    def masked(r: RootReport) -> RootReport:
        if not r.program_text:
            return r
        return dataclasses.replace(
            r, findings=tuple(_program_finding(f, m) for f in r.findings),
            suppressed=tuple(dataclasses.replace(s, finding=_program_finding(s.finding, m)) for s in r.suppressed))

    return tuple(masked(r) for r in reports)


def _program_finding(finding: Finding, m: Masker) -> Finding:
    """``finding`` masked wholly when a program wrote it: its message, tags,
    field path, and the resource it names (which the program chose)."""
    result = finding.result
    if not result.by_program:
        return finding
    ref = result.resource_ref
    if ref is not None:
        ref = dataclasses.replace(ref, name=_whole(ref.name, m), namespace=_whole(ref.namespace, m))
    masked = _result(result, m, ref)
    field_path = m.text(result.field_path)
    if field_path != result.field_path:
        masked = dataclasses.replace(masked, field_path=field_path)
    return finding if masked is result else dataclasses.replace(finding, result=masked)


def _whole(value: str, m: Masker) -> str:
    """A name a program gave: masked when it holds a secret value, quoted whole or not."""
    if not value:
        return value
    return MASK if m.text(f"'{value}'") != f"'{value}'" else value


def text(message: str, secrets: frozenset[str]) -> str:
    """A message (a build error printed as it is) with every secret value masked."""
    return masker(secrets).text(message) if secrets else message


def _result(result: Result, m: Masker, ref: ResourceRef | None = None) -> Result:
    message = m.text(result.message)
    tags = tuple((k, v if k in _IDENTITY_TAGS else m.text(v)) for k, v in result.tags)
    ref = result.resource_ref if ref is None else ref
    if message == result.message and tags == result.tags and ref == result.resource_ref:
        return result
    return dataclasses.replace(result, message=message, tags=tags, resource_ref=ref)

