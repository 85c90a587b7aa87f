"""Post-build variable substitution over rendered resources, with provenance.

kustomize-controller substitutes text, not values (fluxcd/pkg
kustomize_varsub.go, ``SubstituteVariables``): each rendered object is
printed as YAML (``resource.AsYAML``), envsubst runs over that text, and the
result is parsed again (``yaml.YAMLToJSON``, go-yaml v2). So:

- keys are substituted as well as values;
- a value is typed by where it lands in the printed text: a plain
  ``replicas: ${N}`` with ``N: "3"`` becomes the number 3, ``${X:=\\"4\\"}``
  the string ``4`` (the default's quotes are YAML quotes now), ``yes`` the
  boolean true (go-yaml v2 reads YAML 1.1);
- a value holding YAML syntax (``a: b``) can break the text: the controller
  fails the build, and so does this (a build error at the line that defined
  the variable).

The objects are printed with the kustomize-compatible emitter, which is the
printer kustomize and the controller share. A substituted value's origin is
the line that defined the variable; the ``${VAR}`` line it replaced moves to
the trail. Values the substitution did not touch keep their nodes.
"""

from __future__ import annotations

import bisect
from typing import NamedTuple

import yaml

from krmcheck.gitops.envsubst import Lookup, Span, SubstitutionError, expand
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resource import Resource
from krmcheck.tree.emit import emit
from krmcheck.tree.load import FAST_LOADER, error_mark
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, Value, walk
from krmcheck.tree.origin import Origin
from krmcheck.tree.scalars import UnrepresentableScalar, format_float, resolve_plain_v2

DISABLE_KEY = "kustomize.toolkit.fluxcd.io/substitute"
DISABLED = "disabled"
_PLAIN = "!krmcheck/plain"
MAX_GROWTH = 100_000  # nodes an object may gain by substitution (aliases a value brought in)


class Problem(NamedTuple):
    """Something about substitution worth a finding, at a source line."""

    message: str
    severity: str  # error, warning, info
    origin: Origin
    resource: Resource | None = None
    validator: str = "substitution"  # or "helm": a chart a controller renders
    # findings with the same key are one line per run (gitops.summary): why a chart was not rendered
    summary: str = ""


class Outcome(NamedTuple):
    problems: list[Problem]
    placeholders: int  # expressions left as written (their variables are unknown)
    unknown: frozenset[int] = frozenset()  # id() of the values holding such an expression


def disabled(resource: Resource) -> bool:
    """The opt-out, as a label or an annotation."""
    for meta in (resource.labels(), resource.annotations()):
        if meta is not None and meta.value(DISABLE_KEY) == DISABLED:
            return True
    return False


class _Mode(NamedTuple):
    lookup: Lookup
    strict: bool
    keep_undefined: bool


class _Loader(FAST_LOADER):  # type: ignore[misc, valid-type]
    """Composes only; plain scalars are marked, to be typed as go-yaml v2 types them."""

    def resolve(self, kind, value, implicit):  # type: ignore[no-untyped-def]
        if kind is yaml.ScalarNode:
            return _PLAIN if implicit[0] else super().resolve(kind, value, implicit)
        return "tag:yaml.org,2002:seq" if kind is yaml.SequenceNode else "tag:yaml.org,2002:map"


def substitute(resources: list[Resource], lookup: Lookup, strict: bool = False,
               honour_opt_out: bool = True, keep_undefined: bool = False) -> Outcome:
    """Substitute in place in every resource that has not opted out.
    ``keep_undefined``: see :func:`krmcheck.gitops.envsubst.expand`."""
    problems: list[Problem] = []
    kept = 0
    unknown: set[int] = set()
    mode = _Mode(lookup, strict, keep_undefined)
    for res in resources:
        if honour_opt_out and disabled(res):
            continue
        if any(_has_dollar(n) for n in walk(res.node)):
            kept += _Object(res, mode, problems, unknown).run()
    return Outcome(problems, kept, frozenset(unknown))


def _has_dollar(n: Node) -> bool:
    if isinstance(n, Scalar):
        return isinstance(n.value, str) and "$" in n.value
    return isinstance(n, Mapping) and any("$" in k for k in n.view())


class _Scalars:
    """The scalars of the printed text in order, to find the one a position falls in."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.nodes: list[Node] = []  # the resource's node each printed scalar is (a key: its value)

    def add(self, start: int, end: int, node: Node) -> None:
        self.starts.append(start)
        self.ends.append(end)
        self.nodes.append(node)

    def at(self, position: int) -> int:
        """The index of the scalar that holds ``position``, or -1."""
        i = bisect.bisect_right(self.starts, position) - 1
        return i if i >= 0 and position < max(self.ends[i], self.starts[i] + 1) else -1


class _Object:
    """One object's text round trip."""

    def __init__(self, res: Resource, mode: _Mode, problems: list[Problem], unknown: set[int]) -> None:
        self.res, self.mode, self.problems, self.unknown = res, mode, problems, unknown
        self.spans: list[Span] = []
        self.span_starts: list[int] = []
        self.grown = 0
        self.scalars = _Scalars()

    def run(self) -> int:
        text = emit(self.res.node)
        printed = _compose(text)
        scalars = self.scalars
        _index(self.res.node, printed, scalars)
        try:
            done = expand(text, *self.mode)
        except SubstitutionError as e:
            # the controller fails this object's build; report every
            # expression's problem at its own line and leave it as written
            self._report_each(scalars, e)
            return 0
        self.spans = done.spans
        self.span_starts = [s.start for s in done.spans]
        kept = 0
        for s in done.spans:
            i = scalars.at(s.start)
            node = scalars.nodes[i] if i >= 0 else self.res.node
            kept += len(s.unknown)
            self._report(s, node.origin)
        if done.text == text:
            self._mark_unknown(scalars)
            return kept
        try:
            after = _compose(done.text)
        except yaml.MarkedYAMLError as e:
            if any(s.unknown or any("${" in str(v.value) for _, v in s.used) for s in done.spans):
                # expressions whose variables are unknown were kept as
                # written (here, or in a value a parent's substitution
                # left), and the text they are part of is no YAML: what the
                # controller makes of it depends on the values it has, so
                # each value is substituted on its own, as a string
                return self._each_scalar(scalars)
            raise self._broken(done.text, e) from None
        merged = self._merge(self.res.node, printed, after)
        if isinstance(merged, Mapping):
            self.res.node = merged
        return kept

    def _each_scalar(self, scalars: _Scalars) -> int:
        """Substitute in each string value on its own (the text as a whole
        is no YAML while unknown expressions stay as written); a value that
        keeps an unknown expression is not judged."""
        kept = 0
        for node in dict.fromkeys(scalars.nodes):
            if not isinstance(node, Scalar) or not isinstance(node.value, str) or "$" not in node.value:
                continue
            try:
                done = expand(node.value, *self.mode)
            except SubstitutionError:
                continue  # reported with the text's other problems
            if done.text != node.value:
                node.set(self._as_written(node, done.text), self._writer(done.spans, node.origin))
            if any(s.unknown or any("${" in str(v.value) for _, v in s.used) for s in done.spans):
                self.unknown.add(id(node))
                kept += 1
        return kept

    def _as_written(self, node: Scalar, text: str) -> Value:
        """A value substituted on its own, as the controller's parser reads
        it where it lands: a plain scalar's text is read again as YAML (a
        value the substitution wrapped in quotes is a string without them);
        a quoted one, or one that reads as a collection, stays the text."""
        if node.text is None:
            return text
        try:
            parsed = _compose(text)
        except yaml.YAMLError:
            return text
        return self._typed(parsed) if isinstance(parsed, yaml.ScalarNode) else text

    # --- problems ---------------------------------------------------------------

    def _report(self, span: Span, origin: Origin) -> None:
        res = self.res
        for name in dict.fromkeys(span.undefined):
            self.problems.append(Problem(
                f"variable {name} is not defined: the controller substitutes an empty string for "
                f"${{{name}}}", "warning", origin, res))

    def _report_each(self, scalars: _Scalars, failed: SubstitutionError) -> None:
        """Each scalar's expressions on their own, for their problems."""
        reported = False
        for node in dict.fromkeys(scalars.nodes):
            for text in _texts(node):
                if "$" not in text:
                    continue
                try:
                    done = expand(text, *self.mode)
                except SubstitutionError as e:
                    reported = True
                    self.problems.append(Problem(f"variable substitution failed: {e} in {text!r}",
                                                 "error", node.origin, self.res))
                    continue
                for s in done.spans:
                    self._report(s, node.origin)
        if not reported:
            self.problems.append(Problem(f"variable substitution failed: {failed}", "error",
                                         self.res.node.origin, self.res))

    def _broken(self, text: str, e: yaml.MarkedYAMLError) -> BuildError:
        """The substituted text is not YAML any more: the controller's build
        fails ("post build failed ... YAMLToJSON"). The error is at the line
        that defined the value that broke it."""
        mark = error_mark(e)
        index = mark.index if mark is not None else 0
        span = next((s for s in reversed(self.spans) if s.out_start <= index), None)
        what = f"{self.res.kind}/{self.res.name}"
        problem = f"{e.problem or e.context}, line {mark.line + 1 if mark else 1} of the substituted object"
        if span is None or not span.used:
            return BuildError(f"post-build substitution makes {what} invalid YAML ({problem})",
                              self.res.node.origin)
        name, variable = span.used[0]
        i = self.scalars.at(span.start)
        written = self.scalars.nodes[i].origin if i >= 0 else self.res.node.origin
        return BuildError(
            f"post-build substitution makes {what} invalid YAML ({problem}): the value of {name} "
            f"lands unquoted in the text at {written.path}:{written.line}; kustomize-controller "
            f"substitutes the text and parses it again, so the value must be written as YAML "
            f"(quoted within the value)", variable.origin)

    # --- merging the parsed text back --------------------------------------------

    def _spans_in(self, start: int, end: int) -> list[Span]:
        i = bisect.bisect_left(self.span_starts, start)
        out = []
        while i < len(self.spans) and self.spans[i].start < end:
            out.append(self.spans[i])
            i += 1
        return out

    def _writer(self, spans: list[Span], current: Origin) -> Origin:
        """The line that defined the (first) variable whose value went in."""
        for s in spans:
            for _, variable in s.used:
                return variable.origin
        return current

    def _merge(self, old: Node, before: yaml.Node, after: yaml.Node) -> Node:
        """``old`` (printed as ``before``) updated to what ``after`` says."""
        if isinstance(old, Mapping) and isinstance(before, yaml.MappingNode) and \
                isinstance(after, yaml.MappingNode) and len(before.value) == len(after.value):
            return self._merge_mapping(old, before, after)
        if isinstance(old, Sequence) and isinstance(before, yaml.SequenceNode) and \
                isinstance(after, yaml.SequenceNode) and len(before.value) == len(after.value):
            old.items = [self._merge(o, b, a) for o, b, a in zip(old.items, before.value, after.value)]
            return old
        spans = self._spans_in(before.start_mark.index, before.end_mark.index)
        if isinstance(old, Scalar) and isinstance(after, yaml.ScalarNode):
            if _same(before, after):
                self._note_unknown(old, spans)
                return old
            old.set(self._typed(after), self._writer(spans, old.origin))
            self._note_unknown(old, spans)
            return old
        # the shape changed (a value brought in a list or a map): new nodes
        made = self._convert(after, self._writer(spans, old.origin))
        made.trail = old.trail + (old.origin,)
        return made

    def _merge_mapping(self, old: Mapping, before: yaml.MappingNode, after: yaml.MappingNode) -> Mapping:
        items: dict[str, Node] = {}
        for (kb, vb), (ka, va) in zip(before.value, after.value):
            key = str(kb.value)
            child = old.items[key]
            if not _same(kb, ka):
                key = self._key(ka)
            items[key] = self._merge(child, vb, va)
        old.items = items
        return old

    def _typed(self, node: yaml.ScalarNode) -> Value:
        if node.tag != _PLAIN:
            return str(node.value)  # quoted or a block: a string
        try:
            return resolve_plain_v2(node.value)
        except UnrepresentableScalar:
            raise BuildError(f"post-build substitution makes {self.res.kind}/{self.res.name} "
                             f"hold {node.value}, which JSON cannot represent",
                             self.res.node.origin) from None

    def _key(self, node: yaml.Node) -> str:
        """A key as YAMLToJSON writes it: non-string keys as their text."""
        if not isinstance(node, yaml.ScalarNode):
            raise BuildError(f"post-build substitution makes a key of {self.res.kind}/{self.res.name} "
                             f"a collection", self.res.node.origin)
        value = self._typed(node)
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return format_float(value)
        return str(value)

    def _convert(self, node: yaml.Node, origin: Origin) -> Node:
        self.grown += 1
        if self.grown > MAX_GROWTH:
            raise BuildError(f"post-build substitution makes {self.res.kind}/{self.res.name} grow "
                             f"past {MAX_GROWTH:,} nodes", self.res.node.origin)
        if isinstance(node, yaml.MappingNode):
            return Mapping({self._key(k): self._convert(v, origin) for k, v in node.value}, origin)
        if isinstance(node, yaml.SequenceNode):
            return Sequence([self._convert(v, origin) for v in node.value], origin)
        assert isinstance(node, yaml.ScalarNode)
        return Scalar(self._typed(node), origin)

    # --- values the repository cannot show -----------------------------------------

    def _note_unknown(self, node: Node, spans: list[Span]) -> None:
        if any(s.unknown for s in spans):
            self.unknown.add(id(node))

    def _mark_unknown(self, scalars: _Scalars) -> None:
        for s in self.spans:
            if s.unknown:
                i = scalars.at(s.start)
                if i >= 0:
                    self.unknown.add(id(scalars.nodes[i]))


def _compose(text: str) -> yaml.Node:
    node = yaml.compose(text, Loader=_Loader)
    return node if node is not None else yaml.MappingNode("tag:yaml.org,2002:map", [])


def _same(a: yaml.Node, b: yaml.Node) -> bool:
    return isinstance(a, yaml.ScalarNode) and isinstance(b, yaml.ScalarNode) and \
        (a.value, a.tag, a.style) == (b.value, b.tag, b.style)


def _index(node: Node, printed: yaml.Node, scalars: _Scalars) -> None:
    """Where each scalar of ``node`` is in the printed text (a key counts as its value's)."""
    if isinstance(node, Mapping) and isinstance(printed, yaml.MappingNode):
        items = node.view()
        for k, v in printed.value:
            child = items[str(k.value)]
            scalars.add(k.start_mark.index, k.end_mark.index, child)
            _index(child, v, scalars)
    elif isinstance(node, Sequence) and isinstance(printed, yaml.SequenceNode):
        for child, v in zip(node.view(), printed.value):
            _index(child, v, scalars)
    elif isinstance(printed, yaml.ScalarNode):
        scalars.add(printed.start_mark.index, printed.end_mark.index, node)


def _texts(node: Node) -> list[str]:
    return [node.value] if isinstance(node, Scalar) and isinstance(node.value, str) else []
