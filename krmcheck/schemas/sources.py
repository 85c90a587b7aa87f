"""Which schema checks each kind, from sources in a fixed order:

1. ``built-in``: the schemas ``kubernetes-validate`` packages for the chosen
   Kubernetes version (plus the API server's field rules, applied by the
   schema validator);
2. ``repository``: CustomResourceDefinitions in the repository (YAML files
   under the checked paths, the ``crds/`` folders of the charts it holds)
   and those rendered by the root being checked or by any root of the run;
3. ``location``: ``--schema-location`` / ``schema-locations:`` entries, a
   local directory (the CRDs-catalog layout ``GROUP/KIND_VERSION.json``) or
   a template with kubeconform's placeholders; URLs only with ``--network``;
4. ``cache``: catalogs pulled with ``krmcheck schemas pull``.

Each kind's schema is compiled once per run (per process): a fast
``fastjsonschema`` check decides, and ``jsonschema`` explains the failures.
Both match a schema's ``pattern`` with RE2 (Go's syntax, linear time:
:mod:`krmcheck.regex`), never with Python's backtracking ``re``: jsonschema
through its own ``pattern`` keyword, fastjsonschema (whose generated code
calls ``re``) through a custom format that stands in for each pattern.
Files are read through :func:`krmcheck.resource.files.read_bounded`.
:class:`SchemaSettings` is what a run decides (picklable, for ``--jobs``
workers); :func:`sources_for` gives the process's :class:`Sources` for it.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from krmcheck import journal, regex
from krmcheck.resource.files import read_text_bounded
from krmcheck.schemas import builtin, crds, locations
from krmcheck.tree.load import LoadError, load_documents

if TYPE_CHECKING:  # imported when a schema first validates (a warm run validates nothing)
    import jsonschema

BUILTIN, REPOSITORY, LOCATION, CACHE = "built-in", "repository", "location", "cache"
ORDER = (BUILTIN, REPOSITORY, LOCATION, CACHE)


@dataclass(frozen=True)
class SchemaSettings:
    """Everything that decides which schema a kind gets (picklable)."""

    version: str  # packaged Kubernetes "major.minor"
    strict: bool = False
    crd_files: tuple[tuple[str, str], ...] = ()  # (absolute path, repo-relative name) of files holding CRDs
    rendered_crds: tuple[tuple[str, str], ...] = ()  # (JSON text, where) of CRDs other roots rendered
    locations: tuple[str, ...] = ()  # --schema-location values, in order
    cache_dir: str = ""  # where fetched and pulled schemas live
    network: bool = False
    # what the repository's defaulting webhooks write back (krmcheck.schemas.webhooks):
    # (group, kind) they take on CREATE, and the JSON names of Go fields encoding their zero value
    written_back: tuple[tuple[str, str], ...] = ()
    zero_fields: tuple[str, ...] = ()


# Compiling a schema with fastjsonschema costs 10 ms to seconds (a large
# CRD); jsonschema needs no compiling but is slower per object. A kind is
# checked by jsonschema until this many of its objects have been seen, then
# compiled: built-in kinds soon, custom kinds (few objects, large schemas) late.
COMPILE_AFTER = {BUILTIN: 8, REPOSITORY: 256, LOCATION: 256, CACHE: 256}


@dataclass
class Checker:
    """A kind's schema, compiled when it pays, and where it came from."""

    source: str  # one of ORDER
    where: str  # the CRD's file, the location's path or URL, the Kubernetes version
    make_fast: Callable[[], Callable[[Any], Any]]  # raises JsonSchemaException when invalid
    make_full: Callable[[], jsonschema.protocols.Validator]
    structural: dict[str, Any] | None = None  # a custom kind's schema as written: defaults, CEL rules
    prunes: bool = True  # a custom kind's nulls are pruned (not a CRD with spec.preserveUnknownFields)
    # the schema as written and how to follow its $ref (for x-kubernetes-list-map-keys)
    written: dict[str, Any] | None = None
    resolve: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    unjudged: tuple[crds.Unjudged, ...] = ()  # patterns RE2 cannot compile, left out
    # the API server drops ``status`` before validating what is written
    # through the object (a status subresource): it is not judged
    drops_status: bool = False
    # the repository's other definitions of this version of the kind, whose
    # schemas differ (an OLM bundle's copy, another release's install): which
    # one the cluster serves, the repository does not say; made when asked for
    make_others: Callable[[], tuple["Checker", ...]] | None = None
    _others: tuple["Checker", ...] | None = field(default=None, repr=False)
    _full: jsonschema.protocols.Validator | None = field(default=None, repr=False)
    _fast: Callable[[Any], Any] | None = field(default=None, repr=False)
    _seen: int = field(default=0, repr=False)

    @property
    def full(self) -> jsonschema.protocols.Validator:
        """The validator that lists every error with its path."""
        if self._full is None:
            self._full = self.make_full()
        return self._full

    @property
    def others(self) -> tuple["Checker", ...]:
        """Checkers of the repository's other definitions (converted only
        for an object this one refuses)."""
        if self._others is None:
            self._others = self.make_others() if self.make_others is not None else ()
        return self._others

    def valid(self, data: Any) -> bool:
        self._seen += 1
        if self._fast is None and self._seen > COMPILE_AFTER[self.source]:
            self._fast = self.make_fast()
        if self._fast is None:
            return bool(self.full.is_valid(data))
        import fastjsonschema

        try:
            self._fast(data)
            return True
        except fastjsonschema.JsonSchemaException:
            return False


@functools.lru_cache(maxsize=8)
def sources_for(settings: SchemaSettings) -> "Sources":
    return Sources(settings)


_RUN = [0]  # which run of this process the Sources objects belong to


def new_run() -> None:
    """Forget what earlier runs in this process found (files may have changed;
    compiled built-in schemas are kept: they depend on nothing else)."""
    sources_for.cache_clear()
    _RUN[0] += 1


class Sources:
    """Schemas by (apiVersion, kind), looked up once each."""

    def __init__(self, settings: SchemaSettings, parent: "Sources | None" = None,
                 own: Sequence[tuple[str, str, Callable[[], Any], str]] = ()) -> None:
        self.settings = settings
        self._parent = parent
        self._own = list(own)
        self._found: dict[tuple[str, str], Checker | None] = {}
        self._reads: dict[tuple[str, str], journal.Reads] = {}  # what finding each read
        # (served version, where, rank): of several CRDs of a kind, the first
        # rendered one, else the first file in path order, however lazily parsed
        self._repository: dict[tuple[str, str], tuple[crds.Served, str, int]] = {}
        # every definition whose schema differs from those before it, in rank order
        self._definitions: dict[tuple[str, str], list[tuple[crds.Served, str, int]]] = {}
        # CRD files not parsed yet, with their rank and the words after "kind"
        self._unread: list[tuple[str, str, int, frozenset[str]]] | None = None
        self._rendered_read = False
        self._run = _RUN[0]
        # (group, kind) of every CRD parsed, served or not, with a schema or without
        self._defined: set[tuple[str, str]] = set()
        self._named: frozenset[str] = frozenset()  # every word after "kind" in the CRD files
        self._near: dict[tuple[str, str, object], tuple[frozenset[str], journal.Reads]] = {}

    def current(self) -> bool:
        """Whether these sources belong to the current run."""
        return self._run == _RUN[0]

    def with_crds(self, documents: Sequence[tuple[str, str, Callable[[], Any], str]]) -> "Sources":
        """These sources, with the CRDs a root renders coming before the
        repository's files. ``documents`` are (group, kind, data, where);
        ``data`` is called only when that kind is looked up."""
        return Sources(self.settings, self, documents) if documents else self

    def find(self, api_version: str, kind: str) -> Checker | None:
        key = (api_version, kind)
        if key not in self._found:
            reads = journal.start()
            try:
                found = self._lookup(api_version, kind)
            finally:
                read = journal.stop(reads)
            self._found[key], self._reads[key] = found, read
        else:  # a later root reuses the lookup: it reads what the lookup read
            journal.replay(self._reads.get(key))
        return self._found[key]

    def _lookup(self, api_version: str, kind: str) -> Checker | None:
        if self._parent is not None:
            inherited = self._parent.find(api_version, kind)
            if inherited is not None and inherited.source == BUILTIN:
                return inherited
            group = api_version.rpartition("/")[0]
            for g, k, data, where in self._own:
                if (g, k) == (group, kind):
                    doc = data()
                    for served in (crds.served(doc) if crds.is_crd(doc) else ()):
                        if served.api_version == api_version:
                            return _crd_checker(served, where, self.settings.version)
            return inherited
        found = _builtin_checker(self.settings.version, api_version, kind)
        if found is not None:
            return found
        repository = self._scan(kind).get((api_version, kind))
        if repository is not None:
            others = [(served, where) for served, where, _ in self._definitions[(api_version, kind)]
                      if served is not repository[0]]
            return _crd_checker(repository[0], repository[1], self.settings.version, others)
        group = api_version.rpartition("/")[0]
        if group and self.crd_kinds_near(group, kind, _other_case) - {kind}:
            # a location names its files by the kind in lower case: where the
            # repository's CRDs define the kind spelt otherwise (OCICluster),
            # that file is their kind's, and this spelling (OciCluster) is served by none
            return None
        return self._from_locations(api_version, kind)

    def crd_kinds_near(self, group: str, kind: str, near: Callable[[str, str], bool]) -> frozenset[str]:
        """Of ``kind`` and the kinds ``near`` it, those CRDs define in ``group``
        (served or not, with a schema or without): the root's own, those other
        roots render, those of the repository's files. Only the files that
        name one of them are parsed."""
        key = (group, kind, near)
        if key not in self._near:
            reads = journal.start()
            try:
                found = self._kinds_near(group, kind, near)
            finally:
                read = journal.stop(reads)
            self._near[key] = (found, read)
        else:  # a later root reuses the answer: it reads what finding it read
            journal.replay(self._near[key][1])
        return self._near[key][0]

    def _kinds_near(self, group: str, kind: str, near: Callable[[str, str], bool]) -> frozenset[str]:
        if self._parent is not None:
            own = {k for g, k, _, _ in self._own if g == group and (k == kind or near(kind, k))}
            return frozenset(own) | self._parent.crd_kinds_near(group, kind, near)
        self._scan(kind)
        named = self._named | {k for _, k in self._defined}  # the rendered CRDs' kinds are all parsed
        candidates = {kind} | {word for word in named if word != kind and near(kind, word)}
        for word in candidates - {kind}:
            self._scan(word)
        return frozenset(k for k in candidates if (group, k) in self._defined)

    def _scan(self, kind: str) -> dict[tuple[str, str], tuple[crds.Served, str, int]]:
        """The repository's CRDs, with every file that may define ``kind``
        parsed: CRD files are large, so each is parsed only once a kind it
        names is looked up (its text has ``kind`` then the kind's name)."""
        if self._parent is not None:
            return self._parent._scan(kind)
        if not self._rendered_read:
            self._rendered_read = True
            for rank, (text, where) in enumerate(self.settings.rendered_crds):
                self._index(json.loads(text), where, rank)
        if self._unread is None:  # each file read once for the words that follow "kind"
            first = len(self.settings.rendered_crds)
            self._unread = [(path, display, first + i, frozenset(_KIND_NAMED.findall(_text(Path(path)))))
                            for i, (path, display) in enumerate(self.settings.crd_files)]
            self._named = frozenset().union(*(named for *_, named in self._unread))
        still = []
        for path, display, rank, named in self._unread:
            if kind in named:
                for doc in _documents(_text(Path(path)), display):
                    self._index(doc, display, rank)
            else:
                still.append((path, display, rank, named))
        self._unread = still
        return self._repository

    def _index(self, doc: Any, where: str, rank: int) -> None:
        if crds.is_crd(doc):
            kind = crds.names_of(doc)
            if kind is not None and isinstance(doc["spec"].get("group"), str):
                self._defined.add((doc["spec"]["group"], kind))
            for s in crds.served(doc):
                known = self._repository.get((s.api_version, s.kind))
                if known is None or rank < known[2]:
                    self._repository[(s.api_version, s.kind)] = (s, where, rank)
                definitions = self._definitions.setdefault((s.api_version, s.kind), [])
                if all(d.schema != s.schema or d.prunes != s.prunes for d, _, _ in definitions):
                    definitions.append((s, where, rank))

    def _from_locations(self, api_version: str, kind: str) -> Checker | None:
        s = self.settings
        for where in s.locations:
            found = locations.lookup(where, api_version, kind, s.version, s.strict,
                                     Path(s.cache_dir) if s.cache_dir else None, s.network)
            if found is not None:
                return _json_checker(found[0], LOCATION, found[1], s.version)
        if s.cache_dir:
            pulled = locations.from_pulled(Path(s.cache_dir), api_version, kind)
            if pulled is not None:
                return _json_checker(pulled[0], CACHE, pulled[1], s.version)
        return None


def _other_case(kind: str, other: str) -> bool:
    return kind.lower() == other.lower()


# Each word that follows a word ending in "kind" in a file (a CRD names its
# kind so, as ``kind: Widget`` or ``"kind": "Widget"``; ``subkind: X`` only
# costs a needless parse); only "kind" itself is consumed, so ``kind: kind``
# is no blind spot. A pattern that starts with a literal is searched for
# by it: 80 times faster than a lookahead tried at every position.
_KIND_NAMED = re.compile(r"kind\b(?=\W+(\w+))")


def _text(path: Path) -> str:
    """A CRD file's text; "" for one that cannot be read, or that the scan
    for CRD files refused (``discover.find_crd_files`` reported it)."""
    try:
        return read_text_bounded(path)
    except (OSError, ValueError):
        return ""


def _documents(text: str, path: str) -> list[Any]:
    """The documents of a repository file, read as kustomize reads them
    (and parsed once with the builder's reads of the same file)."""
    try:
        if text.lstrip().startswith("{"):
            return [json.loads(text)]
        return [d.to_data() for d in load_documents(text, path)]
    except (LoadError, ValueError, RecursionError):  # ValueError: bad JSON, an integer of thousands of digits
        return []  # not a schema source then; a root that reads it reports the problem




# --- compiling -------------------------------------------------------------------------

def _crd_checker(served: crds.Served, where: str, version: str,
                 others: Sequence[tuple[crds.Served, str]] = ()) -> Checker:
    checker = _json_checker(served.schema, REPOSITORY, where, version, served.prunes, served.status_subresource)
    if not others:
        return checker
    return replace(checker, make_others=lambda: tuple(_crd_checker(s, w, version) for s, w in others))


def _json_checker(schema: dict[str, Any], source: str, where: str, version: str,
                  prunes: bool = True, status_subresource: bool | None = None) -> Checker:
    """A checker for an OpenAPI v3 structural schema, or for a JSON schema a
    location serves (also read as one: they are converted from CRDs, see
    :mod:`krmcheck.schemas.crds` for what is trusted of them). A location's
    schema does not say whether its CRD serves a status subresource: taken
    to, as controller-gen's CRDs with a status do."""
    unjudged: list[crds.Unjudged] = []
    document = crds.to_json_schema(schema, object_meta(version), crd=source == REPOSITORY, prunes=prunes,
                                   unjudged=unjudged)
    drops = status_subresource if status_subresource is not None else source != REPOSITORY
    return Checker(source, where, lambda: _compile(document), lambda: _draft4(document),
                   structural=schema, prunes=prunes, written=schema, unjudged=tuple(unjudged),
                   drops_status=drops)


_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


@functools.cache
def object_meta(version: str) -> crds.ObjectMeta | None:
    """ObjectMeta of the built-in schemas, closed: the API server decodes a
    custom resource's metadata into it, strictly."""
    if not version:
        return None
    bundled = _bundle({"$ref": f"#/$defs/{_OBJECT_META}"}, builtin.definitions(version))
    defs = bundled.pop("$defs")
    return crds.ObjectMeta(bundled, defs)


def json_validator(document: dict[str, Any]) -> jsonschema.protocols.Validator:
    """A draft 4 validator of a converted schema, matching ``pattern`` with RE2
    (:mod:`krmcheck.schemas.crd_defaults` checks a CRD's defaults with it)."""
    return _draft4(document)


def _draft4(document: dict[str, Any]) -> jsonschema.protocols.Validator:
    validator: jsonschema.protocols.Validator = _draft4_re2()(document)
    return validator


@functools.cache
def _draft4_re2() -> Any:
    """jsonschema's draft 4 validator with ``pattern`` matched by RE2."""
    import jsonschema

    def pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "string"):
            return
        try:
            matched = regex.search(pattern, instance)
        except regex.RegexError:
            return  # left out of converted schemas; never judged here either
        if not matched:
            yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")
    return jsonschema.validators.extend(jsonschema.Draft4Validator, {"pattern": pattern})


def _compile(document: dict[str, Any]) -> Callable[[Any], Any]:
    import fastjsonschema
    import jsonschema

    fast, formats = _patterns_as_formats(document)
    try:
        compiled: Callable[[Any], Any] = fastjsonschema.compile(fast, formats=formats, use_formats=True)
        return compiled
    except (fastjsonschema.JsonSchemaDefinitionException, RecursionError, ValueError, TypeError, re.error):
        # a schema fastjsonschema cannot compile is checked by jsonschema alone
        validator = _draft4(document)

        def slow(data: Any) -> None:
            error = jsonschema.exceptions.best_match(validator.iter_errors(data))
            if error is not None:
                raise fastjsonschema.JsonSchemaException(error.message)
        return slow


_RE2_FORMAT = "krmcheck-re2-"


def _patterns_as_formats(document: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Callable[[str], bool]]]:
    """The document fastjsonschema compiles, and its custom formats. Its code
    would match a ``pattern`` with Python's ``re``: each becomes a format
    whose check is RE2's search (a format, like a pattern, is only checked on
    strings). The formats written in the schema are not asserted by either
    validator, and are left out."""
    formats: dict[str, Callable[[str], bool]] = {}

    def walk(schema: Any) -> Any:
        if not isinstance(schema, dict):
            return schema
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "format":
                continue
            if key == "pattern" and isinstance(value, str):
                name = f"{_RE2_FORMAT}{len(formats)}"
                formats[name] = functools.partial(_matches, value)
                out["format"] = name
            elif key in _SCHEMA_MAPS + ("definitions",) and isinstance(value, dict):
                out[key] = {n: walk(sub) for n, sub in value.items()}
            elif key in _SCHEMA_LISTS + ("items",) and isinstance(value, list):
                out[key] = [walk(sub) for sub in value]
            elif key in _SCHEMA_ONE:
                out[key] = walk(value)
            else:
                out[key] = value
        return out
    return walk(document), formats


def _matches(pattern: str, text: str) -> bool:
    try:
        return regex.search(pattern, text)
    except regex.RegexError:
        return True  # not judged (left out of converted schemas)


@functools.cache
def _builtin_checker(version: str, api_version: str, kind: str) -> Checker | None:
    """A built-in kind's checker. Its objects are closed (as the packaged
    ``-strict`` schemas close them): what they reject are unknown fields,
    which the schema validator grades."""
    schema = builtin.kind_schema(version, False, api_version, kind)
    if schema is None:
        return None
    definitions = builtin.definitions(version)
    bundled: list[dict[str, Any]] = []

    def bundle() -> dict[str, Any]:
        if not bundled:
            bundled.append(_bundle(schema, definitions))
        return bundled[0]

    def fast() -> Callable[[Any], Any]:
        import fastjsonschema

        # Formats are not asserted (the API server accepts "int32" and friends as plain numbers).
        compiled: Callable[[Any], Any] = fastjsonschema.compile(bundle(), use_formats=False)
        return compiled

    def full() -> jsonschema.protocols.Validator:
        import jsonschema

        return jsonschema.Draft202012Validator(bundle())
    defs = definitions["$defs"]

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node and node["$ref"].rpartition("/")[2] in defs:
            node = defs[node["$ref"].rpartition("/")[2]]
        return node
    return Checker(BUILTIN, f"Kubernetes {version}", fast, full, written=schema, resolve=resolve)


# Keywords whose value maps names to subschemas, lists subschemas, or is one.
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs")
_SCHEMA_LISTS = ("oneOf", "anyOf", "allOf", "prefixItems")
_SCHEMA_ONE = ("items", "additionalProperties", "not")
_DROPPED = ("description", "$id", "$schema")


def _bundle(schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """One self-contained schema: the kind plus the definitions it reaches,
    refs made local, every object with properties closed to other fields
    (what the packaged ``-strict`` variant differs by, without reading a
    second copy of the definitions).

    fastjsonschema resolves ``$ref`` by fetching URLs; a single document with
    ``#/$defs/...`` pointers needs no resolver and compiles only what is used.
    """
    used: dict[str, Any] = {}
    bundled = _localize(schema, definitions["$defs"], used)
    bundled["$defs"] = used
    return bundled


def _is_quantity(alternatives: Any) -> bool:
    """Whether ``alternatives`` are Quantity's: a string or a number, each nullable."""
    return alternatives == [{"type": ["string", "null"]}, {"type": ["number", "null"]}]


def _localize(schema: Any, defs: dict[str, Any], used: dict[str, Any]) -> Any:
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$ref":
            name = value.rpartition("/$defs/")[2]
            out[key] = f"#/$defs/{name}"
            if name not in used:
                used[name] = {}  # placeholder first: definitions are recursive
                used[name] = _localize(defs[name], defs, used)
        elif key in _SCHEMA_MAPS:
            out[key] = {name: _localize(sub, defs, used) for name, sub in value.items()}
        elif key == "oneOf" and _is_quantity(value):
            # Quantity is oneOf [string|null, number|null]: a null matches
            # both, which oneOf refuses; the API server decodes it as zero
            # (resource.Quantity.UnmarshalJSON), so either alternative will do.
            # (IntOrString's null is the integer 0, which a port refuses: its
            # oneOf stays, and says null is no port.)
            out["anyOf"] = [_localize(sub, defs, used) for sub in value]
        elif key in _SCHEMA_LISTS:
            out[key] = [_localize(sub, defs, used) for sub in value]
        elif key in _SCHEMA_ONE:
            out[key] = _localize(value, defs, used)
        elif key not in _DROPPED and not key.startswith("x-"):
            out[key] = value
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out
