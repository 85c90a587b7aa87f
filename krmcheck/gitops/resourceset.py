"""The Flux Operator's ResourceSets (fluxcd.controlplane.io/v1): the objects
the operator makes of one, as its builder makes them
(controlplaneio-fluxcd/flux-operator internal/builder ``BuildResourceSet``,
internal/inputs), each pointing at the template line that wrote it.

Inputs: the ResourceSet's own ``spec.inputs`` and the input sets of the
ResourceSetInputProviders ``spec.inputsFrom`` names (by name or by label
selector, in the ResourceSet's namespace) that are ``type: Static``: one
set, ``spec.defaultValues`` plus ``id`` (the operator takes the Adler-32
checksum of the provider's UID, which only the cluster knows; like
``flux-operator build rset`` this takes the provider's name). Every set
gets ``provider`` (apiVersion, kind, name, namespace of what gave it).
``inputStrategy: Permute`` makes every combination, each provider's set
under its normalised name, with an ``id`` of its own. A provider of another
type asks an API at run time (pull requests, branches, tags...): its sets
are not known here, and one note per ResourceSet names such providers.

Resources: each of ``spec.resources`` is written out as the operator writes
it (its JSON as YAML) and executed as a Go template with ``<<``/``>>``
delimiters, ``missingkey=error``, the slim-sprig functions, ``inputs``,
``slugify`` (gosimple/slug, 63 characters) and ``toYaml``, once per input
set; ``spec.resourcesTemplate`` likewise as one text of many documents;
``spec.steps`` each so. With no input sets at all (no ``inputs`` and no
``inputsFrom``) each template is executed once, ``inputs`` empty; with
``inputsFrom`` whose providers give none, nothing is made. Objects whose
``fluxcd.controlplane.io/reconcile`` annotation is ``disabled`` are left
out; the others are deduplicated by group, kind, namespace and name (the
first wins). The operator sets no namespace: an object is applied with the
one it names. The owner labels and ``spec.commonMetadata`` come last.

A value of ``resources`` points at the template's line (at the input's
line where the template was one input and nothing else, the template's
line in its trail); a line of ``resourcesTemplate`` output at the template
line that wrote it.
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from krmcheck.gitops import gotemplate
from krmcheck.gitops.substitute import Problem
from krmcheck.resource.resource import Resource
from krmcheck.tree.emit import emit
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, lookup, walk
from krmcheck.tree.origin import Origin

if TYPE_CHECKING:
    from krmcheck.gitops import Rendered

GROUP = "fluxcd.controlplane.io/"
API_VERSION = "fluxcd.controlplane.io/v1"
KIND = "ResourceSet"
PROVIDER = "ResourceSetInputProvider"
VALIDATOR = "resourceset"  # the id of findings about what a ResourceSet makes
DELIMS = ("<<", ">>")
OPTIONS = ("missingkey=error",)
MAX_PERMUTATIONS = 10_000  # the operator's own limit (internal/inputs maxPermutations)
MAX_NESTING = 4  # ResourceSets that make ResourceSets
BY = "ResourceSet"
_RECONCILE = "fluxcd.controlplane.io/reconcile"
_FROM_CLUSTER = ("fluxcd.controlplane.io/copyFrom", "fluxcd.controlplane.io/convertKubeConfigFrom")
_OWNER = "resourceset.fluxcd.controlplane.io"
# a template value that is one input and nothing else: ``<< inputs.app.version | quote >>``
_ONE_INPUT = re.compile(r"^<<-?\s*inputs((?:\.[A-Za-z0-9_]+)+)\s*"
                        r"(?:\|\s*(?:quote|squote|int|int64|float64|toString|toYaml)\s*)*-?>>$")


def is_resource_set(res: Resource) -> bool:
    return res.kind == KIND and res.api_version.startswith(GROUP)


def is_provider(res: Resource) -> bool:
    return res.kind == PROVIDER and res.api_version.startswith(GROUP)


def from_cluster(res: Resource) -> bool:
    """An object whose data the operator copies from the cluster as it
    applies it (``copyFrom``, ``convertKubeConfigFrom``): not known here."""
    annotations = lookup(res.node, ["metadata", "annotations"])
    return isinstance(annotations, Mapping) and any(a in annotations.view() for a in _FROM_CLUSTER) \
        and res.api_version == "v1"


class Expansion(NamedTuple):
    resources: list[Resource]  # what the operator applies, in its order
    problems: list[Problem]  # why some or all of it is not known, or would not be made


class InputSet(NamedTuple):
    values: dict[str, Any]
    origins: dict[tuple[str, ...], Origin]  # a value's path in ``values`` -> the line that gave it


class _Unknown(Exception):
    """Input sets that cannot be known here (and so nothing is made)."""


class _Broken(Exception):
    """What makes the operator's build fail, at the line to fix."""

    def __init__(self, message: str, origin: Origin, certain: bool) -> None:
        super().__init__(message)
        self.message, self.origin = message, origin
        self.certain = certain  # the operator's build fails so too (not a gap of krmcheck's)


# --- the objects a ResourceSet makes ------------------------------------------------

def expand(res: Resource, providers: list[Mapping], held: str = "in the repository") -> Expansion:
    """The objects the operator makes of ``res``; ``providers``: the
    ResourceSetInputProviders that may be the ones it names (``held``: where
    they were looked for, for the note about one that is not there)."""
    spec = res.node.mapping("spec") or Mapping({}, res.node.origin)
    problems: list[Problem] = []
    try:
        sets = _input_sets(res, spec, providers, problems, held)
    except _Unknown:
        return Expansion([], problems)
    asks = spec.get("inputsFrom")
    if sets == [] and isinstance(asks, Sequence) and asks.items:
        return Expansion([], problems)  # providers with no inputs: the operator applies nothing
    try:
        made = _build(spec, sets, res.node.origin.path)
    except _Broken as e:
        severity = "error" if e.certain else "info"
        why = "the operator's build of it fails" if e.certain else "krmcheck cannot render it"
        problems.append(Problem(f"ResourceSet {res.name}: {e.message}: {why}, so nothing it makes is checked",
                                severity, e.origin, res, VALIDATOR))
        return Expansion([], problems)
    _metadata(made, res, spec)
    return Expansion(made, problems)


def referenced(res: Resource, providers: list[Mapping]) -> list[Mapping]:
    """The providers ``res`` names, among ``providers`` (of any type)."""
    spec = res.node.mapping("spec") or Mapping()
    return list(_matched(res, spec, providers, [], "").values())


def applied(rendered: Rendered) -> Rendered:
    """``rendered`` with what each of its ResourceSets makes, as the
    operator applies it, after it; the inputs a provider gives come from the
    providers the same rendering holds (what else a check of this root
    reads is not known to select it). An object whose data the operator
    copies from the cluster is left out (one note says so)."""
    if not any(is_resource_set(r) for r in rendered.resources):
        return rendered
    providers = [r.node for r in rendered.resources if is_provider(r)]
    more: list[Resource] = []
    problems = list(rendered.problems)
    todo = [(r, 0) for r in rendered.resources if is_resource_set(r)]
    while todo:
        rs, depth = todo.pop(0)
        expansion = expand(rs, providers, "applied with it")
        problems += expansion.problems
        kept = [r for r in expansion.resources if not from_cluster(r)]
        held = len(expansion.resources) - len(kept)
        if held:
            problems.append(Problem(
                f"ResourceSet {rs.name}: {held} object{'s' if held > 1 else ''} take{'' if held > 1 else 's'} "
                f"{'their' if held > 1 else 'its'} data from the cluster as the operator applies "
                f"{'them' if held > 1 else 'it'} (copyFrom, convertKubeConfigFrom): not checked", "info",
                rs.node.origin, rs, VALIDATOR))
        more += kept
        if depth < MAX_NESTING:
            todo += [(r, depth + 1) for r in kept if is_resource_set(r)]
    # a ${VAR} the controller's substitution left in the ResourceSet is a
    # variable whose value is not known here: what holds it is not judged
    from krmcheck.gitops.flux import PLACEHOLDER

    held_values = [n for r in more for n in walk(r.node)
                   if isinstance(n, Scalar) and isinstance(n.value, str) and PLACEHOLDER.search(n.value)]
    return rendered._replace(resources=rendered.resources + more, problems=problems,
                             placeholders=rendered.placeholders + len(held_values),
                             unknown=rendered.unknown | frozenset(id(n) for n in held_values))


# --- inputs -----------------------------------------------------------------------------

def _input_sets(res: Resource, spec: Mapping, providers: list[Mapping],
                problems: list[Problem], held: str) -> list[InputSet]:
    """The combined input sets, as the operator's ``inputs.Combine`` makes them."""
    own = [_own_set(item, res) for item in (spec.sequence("inputs") or Sequence()).items
           if isinstance(item, Mapping)]
    chosen, unknown = _providers(res, spec, providers, held)
    if unknown:
        problems.append(Problem(
            f"ResourceSet {res.name}: the inputs of {_listed(unknown)} are not known here (a provider that is "
            f"not Static asks an API at run time, which krmcheck does not): the objects made from them are not "
            f"checked", "info",
            (spec.get("inputsFrom") or spec).origin, res, VALIDATOR))
    strategy = lookup(spec, ["inputStrategy", "name"])
    permute = isinstance(strategy, Scalar) and strategy.value == "Permute"
    given = [(res.name, own)] + [(_name(p), [_static_set(p, res)]) for p, _ in chosen]
    if not permute:
        return [s for _, sets in given for s in sets]
    if unknown:
        raise _Unknown  # every combination holds a set of the providers not known here
    empty = lookup(spec, ["inputStrategy", "includeEmptyProviders"])
    return _permuted(given, isinstance(empty, Scalar) and empty.value is True, res, spec)


def _own_set(item: Mapping, res: Resource) -> InputSet:
    values = item.to_data()
    values["provider"] = _provider_ref(KIND, res.name, res.namespace)
    return InputSet(values, _origins(item))


def _static_set(provider: Mapping, res: Resource) -> InputSet:
    defaults = lookup(provider, ["spec", "defaultValues"])
    values = defaults.to_data() if isinstance(defaults, Mapping) else {}
    origins = _origins(defaults) if isinstance(defaults, Mapping) else {}
    # the operator's id is of the provider's UID, which only the cluster knows
    values["id"] = _adler(_name(provider))
    values["provider"] = _provider_ref(PROVIDER, _name(provider), _text(lookup(provider, ["metadata", "namespace"]))
                                       or res.namespace)
    return InputSet(values, origins)


def _provider_ref(kind: str, name: str, namespace: str) -> dict[str, str]:
    return {"apiVersion": API_VERSION, "kind": kind, "name": name, "namespace": namespace}


def _origins(node: Node, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Origin]:
    out: dict[tuple[str, ...], Origin] = {}
    if isinstance(node, Mapping):
        for k, v in node.items.items():
            out[path + (k,)] = v.origin
            out.update(_origins(v, path + (k,)))
    return out


def _providers(res: Resource, spec: Mapping, known: list[Mapping],
               held: str = "") -> tuple[list[tuple[Mapping, str]], list[str]]:
    """(the Static providers ``inputsFrom`` names, in the operator's order;
    the providers whose sets are not known here, described)."""
    unknown: list[str] = []
    found = _matched(res, spec, known, unknown, held)
    chosen = []
    for name in sorted(found):  # the operator sorts its providers by namespace and name
        p = found[name]
        kind = _text(lookup(p, ["spec", "type"]))
        if kind == "Static":
            chosen.append((p, name))
        else:
            unknown.append(f"{PROVIDER} {name} (type {kind or 'unset'})")
    return chosen, unknown


def _matched(res: Resource, spec: Mapping, known: list[Mapping], unknown: list[str], held: str) -> dict[str, Mapping]:
    """The providers ``inputsFrom`` names (by name: the first of ``known``),
    by name; ``unknown`` gets those named that are not there."""
    namespace = res.namespace
    here = [p for p in known if _text(lookup(p, ["metadata", "namespace"])) in (namespace, "")]
    found: dict[str, Mapping] = {}
    for ref in (spec.sequence("inputsFrom") or Sequence()).items:
        if not isinstance(ref, Mapping):
            continue
        name, selector = _text(ref.get("name")), ref.mapping("selector")
        if name:
            match = [p for p in here if _name(p) == name][:1]  # the nearest, as the repository is read
            if not match:
                unknown.append(f"{PROVIDER} {name} (not {held})")
        elif selector is not None:
            match = [p for p in here if _selects(selector, lookup(p, ["metadata", "labels"]))]
        else:
            continue
        for p in match:
            found.setdefault(_name(p), p)
    return found


def _selects(selector: Mapping, labels: Node | None) -> bool:
    have = {k: v.as_string() for k, v in labels.items.items() if isinstance(v, Scalar)} \
        if isinstance(labels, Mapping) else {}
    wanted = selector.mapping("matchLabels")
    for k, v in (wanted.items.items() if wanted else ()):
        if not isinstance(v, Scalar) or have.get(k) != v.as_string():
            return False
    for e in (selector.sequence("matchExpressions") or Sequence()).items:
        if not isinstance(e, Mapping):
            continue
        key, op = _text(e.get("key")), _text(e.get("operator"))
        values = [x.as_string() for x in (e.sequence("values") or Sequence()).items if isinstance(x, Scalar)]
        if (op == "In" and have.get(key) not in values) or (op == "NotIn" and key in have and have[key] in values) \
                or (op == "Exists" and key not in have) or (op == "DoesNotExist" and key in have):
            return False
    return True


def _permuted(given: list[tuple[str, list[InputSet]]], include_empty: bool, res: Resource,
              spec: Mapping) -> list[InputSet]:
    """The Cartesian product of the providers' sets, each under its
    normalised name, with an ``id`` of the combination (internal/inputs
    ``Permuter``)."""
    scoped = [(normalize_key(name), sets) for name, sets in given if sets or include_empty]
    if not scoped or any(not sets for _, sets in scoped):
        return []
    total = 1
    for _, sets in scoped:
        total *= len(sets)
    if total > MAX_PERMUTATIONS:
        raise _Broken(f"{total} input permutations, more than the operator's {MAX_PERMUTATIONS}",
                      (spec.get("inputStrategy") or spec).origin, True)
    out = []
    for choice in itertools.product(*(list(enumerate(sets)) for _, sets in scoped)):
        values: dict[str, Any] = {}
        origins: dict[tuple[str, ...], Origin] = {}
        for (key, _), (i, s) in zip(scoped, choice):
            values[key] = s.values
            origins.update({(key,) + p: o for p, o in s.origins.items()})
        values["id"] = _adler("/".join(f"{key}={i}" for (key, _), (i, _s) in zip(scoped, choice)))
        out.append(InputSet(values, origins))
    return out


def normalize_key(name: str) -> str:
    """A provider's name as a template key: lower case, spaces and
    punctuation to ``_``, other characters dropped, runs of ``_`` joined."""
    mapped = "".join("_" if ch.isspace() or unicodedata.category(ch).startswith("P") else ch
                     for ch in name.lower())
    kept = "".join(ch for ch in mapped if ch == "_" or ("a" <= ch <= "z") or ("0" <= ch <= "9"))
    return "_".join(w for w in kept.split("_") if w)


def _adler(text: str) -> str:
    return str(zlib.adler32(text.encode()))


# --- building ---------------------------------------------------------------------------

class _Step(NamedTuple):
    name: str
    resources: Sequence | None
    template: Scalar | None


def _build(spec: Mapping, sets: list[InputSet], path: str) -> list[Resource]:
    steps = spec.sequence("steps")
    if steps is None:
        parts = [_Step("", spec.sequence("resources"), _template(spec))]
    else:
        # (the operator's ValidateResourceSetSpec)
        if spec.sequence("resources") or _template(spec) is not None:
            raise _Broken("spec.steps is mutually exclusive with spec.resources and spec.resourcesTemplate",
                          (spec.get("steps") or spec).origin, True)
        parts = [_Step(_text(s.get("name")), s.sequence("resources"), _template(s))
                 for s in steps.items if isinstance(s, Mapping)]
        for step, node in zip(parts, [s for s in steps.items if isinstance(s, Mapping)]):
            if not (step.resources and step.resources.items) and step.template is None:
                raise _Broken(f"step {step.name!r} sets neither resources nor resourcesTemplate", node.origin, True)
    made: list[Resource] = []
    step_of: dict[tuple[str, str, str, str], str] = {}
    for step in parts:
        objects = _build_step(step, sets, path)
        for r in objects:
            key = _key(r)
            if key in step_of and step_of[key] != step.name:
                raise _Broken(f"{r.kind} {r.name} is made in step {step.name!r} and in step "
                              f"{step_of[key]!r} too", r.node.origin, True)
            step_of[key] = step.name
        made += objects
    return made


def _template(node: Mapping) -> Scalar | None:
    t = node.get("resourcesTemplate")
    return t if isinstance(t, Scalar) and isinstance(t.value, str) and t.value else None


def _build_step(step: _Step, sets: list[InputSet], path: str) -> list[Resource]:
    """One step's objects, as ``BuildResourceSet`` makes them: the resources'
    first (with no input sets, each as it renders, neither deduplicated nor
    left out), then the template's."""
    out: list[Resource] = []
    keys: set[tuple[str, str, str, str]] = set()

    def add(r: Resource, dedup: bool) -> None:
        if dedup and _key(r) in keys:
            return
        keys.add(_key(r))
        out.append(r)

    for item in (step.resources.items if step.resources is not None else ()):
        if not isinstance(item, Mapping):
            continue
        if not sets:
            add(_item(item, None), False)
            continue
        for s in sets:
            r = _item(item, s)
            if not _disabled(r):
                add(r, True)
    if step.template is not None:
        given: list[InputSet | None] = list(sets) if sets else [None]
        made = [r for s in given for r in _documents(step.template, s, path)]
        for r in made:
            if not _disabled(r):
                add(r, True)
    return out


def _key(r: Resource) -> tuple[str, str, str, str]:
    group = r.api_version.rpartition("/")[0] if "/" in r.api_version else ""
    return (group, r.kind, r.namespace, r.name)


def _disabled(r: Resource) -> bool:
    value = lookup(r.node, ["metadata", "annotations", _RECONCILE])
    return isinstance(value, Scalar) and value.value == "disabled"


def _functions(s: InputSet | None) -> dict[str, Callable[..., Any]]:
    values = s.values if s is not None else {}
    return {"inputs": lambda: values, "slugify": slugify, "toYaml": gotemplate.to_yaml, "mustToYaml": gotemplate.to_yaml}


def _execute(text: str, s: InputSet | None, origin: Origin) -> tuple[str, list[gotemplate.Segment]]:
    try:
        return gotemplate.render_mapped(text, None, OPTIONS, DELIMS, _functions(s))
    except (gotemplate.MissingKey, gotemplate.Failed) as e:
        raise _Broken(f"its template fails ({e})", origin, True) from None
    except gotemplate.TemplateError as e:
        raise _Broken(f"its template cannot be rendered ({e})", origin, False) from None
    except (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError) as e:
        raise _Broken(f"its template cannot be rendered ({type(e).__name__}: {e})", origin, False) from None


def _item(item: Mapping, s: InputSet | None) -> Resource:
    """One of ``resources`` for one input set: written out as the operator
    writes it (its JSON as YAML, keys sorted), executed, read back."""
    text = emit(item)
    if DELIMS[0] not in text:
        return Resource(item.copy())
    out, _ = _execute(text, s, item.origin)
    try:
        docs = load_documents(out, item.origin.path, BY, duplicate_keys=True)
    except LoadError as e:
        raise _Broken(f"a resource it renders is not YAML ({e.message})", item.origin, True) from None
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        raise _Broken("a resource it renders is not one object", item.origin, True)
    node = docs[0]
    _graft(node, item, item.origin, s)
    return Resource(node)


def _graft(out: Node, tmpl: Node | None, at: Origin, s: InputSet | None) -> None:
    """Give what a template rendered the origins of the template nodes it
    came from (a value a template wrote more than, the nearest's)."""
    trail: tuple[Origin, ...] = ()
    if tmpl is not None:
        at, trail = tmpl.origin, tmpl.trail
    out.origin, out.trail = at, trail
    if isinstance(out, Mapping):
        keyed = _keyed(tmpl, s) if isinstance(tmpl, Mapping) else {}
        for k, v in out.items.items():
            _graft(v, keyed.get(k), at, s)
    elif isinstance(out, Sequence):
        same = isinstance(tmpl, Sequence) and len(tmpl.items) == len(out.items)
        for i, v in enumerate(out.items):
            _graft(v, tmpl.items[i] if same and isinstance(tmpl, Sequence) else None, at, s)
    elif isinstance(out, Scalar) and isinstance(tmpl, Scalar) and s is not None and isinstance(tmpl.value, str):
        m = _ONE_INPUT.match(tmpl.value.strip())
        given = s.origins.get(tuple(m.group(1)[1:].split("."))) if m else None
        if given is not None:
            out.origin, out.trail = given, (tmpl.origin,) + tmpl.trail


def _keyed(tmpl: Mapping, s: InputSet | None) -> dict[str, Node]:
    """The template's values by the key each renders to."""
    out: dict[str, Node] = {}
    for k, v in tmpl.items.items():
        if DELIMS[0] in k:
            try:
                k = gotemplate.render(k, None, OPTIONS, DELIMS, _functions(s))
            except (gotemplate.TemplateError, TypeError, ValueError):
                continue
        out.setdefault(k, v)
    return out


def _documents(template: Scalar, s: InputSet | None, path: str) -> list[Resource]:
    """``resourcesTemplate`` for one input set: its documents, each line at
    the template line that wrote it."""
    text = str(template.value)
    out, segments = _execute(text, s, template.origin)
    where = _Lines(text, out, segments, template.origin)
    try:
        docs = load_documents(out, path, BY, duplicate_keys=True)
    except LoadError as e:
        raise _Broken(f"what its template renders is not YAML ({e.message})", where.origin(e.line, e.col),
                      True) from None
    made = []
    for doc in docs:
        if not isinstance(doc, Mapping):
            raise _Broken("a document its template renders is not an object", where.origin(1, 1), True)
        for n in walk(doc):
            n.origin, n.trail = where.origin(n.origin.line, n.origin.col), ()
        made.append(Resource(doc))
    return made


class _Lines:
    """Output positions of a rendered template -> the template's lines in
    the file (a block scalar: its first line is the one after the key)."""

    def __init__(self, text: str, out: str, segments: list[gotemplate.Segment], at: Origin) -> None:
        self.at = at
        self.block = "\n" in text.rstrip("\n")
        self.text_lines = _starts(text)
        self.out_lines = _starts(out)
        self.segments = segments
        self.outs = [seg.out for seg in segments]

    def origin(self, line: int, col: int) -> Origin:
        if not self.block or not self.segments or line < 1:
            return self.at
        offset = self.out_lines[min(line, len(self.out_lines)) - 1] + max(col - 1, 0)
        seg = self.segments[max(bisect.bisect_right(self.outs, offset) - 1, 0)]
        source = seg.source + (offset - seg.out if seg.literal else 0)
        row = max(bisect.bisect_right(self.text_lines, source) - 1, 0)
        column = source - self.text_lines[row]
        return Origin(self.at.path, self.at.line + 1 + row, self.at.col + 2 + column, self.at.by)


def _starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _metadata(made: list[Resource], res: Resource, spec: Mapping) -> None:
    """The owner labels the operator sets on what it applies, then
    ``commonMetadata`` (which wins)."""
    name_node = lookup(res.node, ["metadata", "name"]) or res.node
    owner = {f"{_OWNER}/name": Scalar(res.name, name_node.origin),
             f"{_OWNER}/namespace": Scalar(res.namespace, name_node.origin)}
    common = spec.mapping("commonMetadata")
    for r in made:
        meta = r.node.setdefault_mapping("metadata", r.node.origin)
        labels = meta.setdefault_mapping("labels", meta.origin)
        for k, v in owner.items():
            labels.items[k] = v.copy()
        for field in ("labels", "annotations"):
            given = common.mapping(field) if common is not None else None
            if given is None:
                continue
            target = meta.setdefault_mapping(field, given.origin)
            for k, value in given.items.items():
                if isinstance(value, Scalar):
                    target.items[k] = Scalar(value.as_string(), value.origin, value.trail)


# --- the operator's own template functions ---------------------------------------------------

def slugify(text: Any) -> str:
    """gosimple/slug's ``Make`` as the operator sets it (at most 63
    characters, cut after a whole word): ``&`` -> ``and``, ``@`` -> ``at``,
    quotes dropped, accents dropped, lower case, runs of anything else but
    letters, digits, ``-`` and ``_`` one ``-``."""
    s = gotemplate._text(text).strip()
    s = "".join({"&": "and", "@": "at", '"': "", "'": "", "\u2019": ""}.get(ch, "-" if ch in "\u2012\u2013\u2014\u2015"
                                                                           else ch) for ch in s)
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode().lower()
    s = re.sub(r"-+", "-", re.sub(r"[^a-zA-Z0-9\-_]", "-", s)).strip("-_")
    if len(s) > 63:
        cut = s.rfind("-", 0, 64)
        s = s[:cut] if cut >= 0 else s[:63]
    return s


def _name(node: Mapping) -> str:
    return _text(lookup(node, ["metadata", "name"]))


def _text(node: Node | None) -> str:
    return node.value if isinstance(node, Scalar) and isinstance(node.value, str) else ""


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
