"""configMapGenerator and secretGenerator: ConfigMaps and Secrets made from
literals, files and env files, as kubectl's Kustomize v5.5.0 makes them.

Facts mirrored here (kustomize ``api/kv``, ``api/internal/generators``,
``api/types/generatoroptions.go``, checked against kubectl):

- pairs are read in the order env files (``envs``, then the legacy ``env``),
  literals, files; a key seen twice is an error;
- kubectl validates neither keys nor env variable names (its validator is a
  no-op): ``a/b`` or ``export X`` are accepted as keys;
- an env line is trimmed on the left only; ``KEY`` alone gives ``""`` (the
  process environment is never read); a line whose key is empty is skipped;
  a UTF-8 BOM is dropped from the first line only; ``\\r`` before ``\\n`` is
  dropped;
- a literal value loses one pair of matching surrounding quotes;
- a file that is not valid UTF-8 goes to ``binaryData`` (ConfigMap);
  base64 text is wrapped at 70 columns with a newline after each line once
  it is 70 characters or longer;
- a Secret always has ``data`` (possibly ``{}``), a ConfigMap only when it
  has text pairs; Secret ``type`` defaults to ``Opaque``;
- an unknown ``behavior`` is treated as ``create``;
- generatorOptions fill in labels/annotations the entry does not set, and
  switch on ``disableNameSuffixHash``/``immutable`` when the entry does not;
- a ``files``, ``envs`` or ``env`` entry that is an http(s) URL is fetched
  (kustomize's file loader takes URLs, under no load restrictor), through
  the ``fetch`` the build gives; without ``KEY=``, a file's key is the
  URL's last path segment, query included (Go's ``path.Base``); an env
  file's lines point at the URL.

Secret values never appear in messages.
"""

from __future__ import annotations

import base64
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from krmcheck.kustomize.repospec import is_http_url
from krmcheck.resource.errors import BuildError, MissingFile
from krmcheck.resource.files import Files, check_restriction, join
from krmcheck.resource.resource import GeneratorInfo, Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Origin

_BY = {"ConfigMap": "configMapGenerator", "Secret": "secretGenerator"}
BEHAVIORS = ("create", "merge", "replace")
# The kustomization is read by go-yaml v2 (YAML 1.1), so these plain words are booleans.
_V2_TRUE = {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"}
_V2_FALSE = {"n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"}
# Go's unicode.IsSpace; Python's str.isspace also takes \x1c-\x1f.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006" \
            "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_BOM = b"\xef\xbb\xbf"
_BASE64_LINE = 70
# A URL's content: (url, what the entry is for messages, the entry's origin) -> bytes
Fetch = Callable[[str, str, Origin], bytes]


@dataclass(frozen=True)
class _Pair:
    key: str
    value: bytes
    origin: Origin


@dataclass(frozen=True)
class _Options:
    labels: dict[str, tuple[str, Origin]]
    labels_origin: Origin | None
    annotations: dict[str, tuple[str, Origin]]
    annotations_origin: Origin | None
    disable_hash: bool
    immutable: Origin | None


@dataclass(frozen=True)
class _Context:
    kind: str
    by: str
    name: str
    kdir: Path
    files: Files
    restrictor: str
    fetch: Fetch | None = None  # None: a URL cannot be read here

    @property
    def what(self) -> str:
        return f"{self.by} '{self.name}'" if self.name else self.by


# --- public API ---------------------------------------------------------------

def generate(kind: str, entry: Node, options: Node | None, kdir: Path, files: Files,
             restrictor: str, fetch: Fetch | None = None) -> Resource:
    """The ConfigMap or Secret one generator entry makes (name not yet hashed);
    ``fetch`` reads the inputs that are URLs."""
    by = _by(kind)
    if not isinstance(entry, Mapping):
        raise BuildError(f"a {by} entry must be a mapping", _at(entry, by))
    name_node = _name_node(entry)
    name = _text(name_node, "name", by) if name_node is not None else ""
    ctx = _Context(kind, by, name, kdir, files, restrictor, fetch)
    if not name:
        raise BuildError(f"a {by} entry needs a name", _at(name_node if name_node is not None else entry, by))
    opts = _merge_options(_options_node(entry.get("options"), by),
                          _options_node(options, by), by)
    pairs = _unique(_pairs(entry, ctx), ctx)
    resource = Resource(_build(entry, name_node, ctx, pairs, opts))
    resource.needs_hash = not opts.disable_hash
    resource.generator = GeneratorInfo(_behavior(entry, by), resource.needs_hash, _at(entry, by))
    return resource


def merge_generated(existing: Resource, new: Resource, behavior: str) -> None:
    """Fold ``new`` (from an overlay's generator) into ``existing`` in place.

    Like kustomize: the result is ``new`` with the existing name and
    namespace, labels and annotations merged (new wins), and for ``merge``
    also ``data``/``binaryData`` merged (new wins); every other field of the
    existing resource is dropped. The hash suffix survives only if both ask
    for it. Merged values become strings, as kustomize rewrites them.
    """
    if behavior not in ("merge", "replace"):
        raise ValueError(f"cannot merge a generated resource with behavior {behavior!r}")
    node = new.node
    old_md = existing.metadata or Mapping({}, existing.node.origin)
    md = node.setdefault_mapping("metadata", node.origin)
    for key in ("name", "namespace"):
        _move(old_md, md, key)
    for key in ("labels", "annotations"):
        _merge_map(md, old_md.mapping(key), md.mapping(key), key)
    if behavior == "merge":
        for key in ("data", "binaryData"):
            _merge_map(node, existing.node.mapping(key), node.mapping(key), key)
    existing.node = node
    existing.needs_hash = existing.needs_hash and new.needs_hash
    old_behavior = existing.generator.behavior if existing.generator else "create"
    existing.generator = GeneratorInfo(old_behavior, existing.needs_hash,
                                       new.generator.origin if new.generator else None)


# --- entry fields ---------------------------------------------------------------

def _by(kind: str) -> str:
    try:
        return _BY[kind]
    except KeyError:
        raise ValueError(f"no generator makes kind {kind!r}") from None


def _at(node: Node, by: str) -> Origin:
    o = node.origin
    return Origin(o.path, o.line, o.col, by)


def _name_node(entry: Mapping) -> Node | None:
    """``name:``, or ``metadata.name`` in the builtin plugin's config form."""
    node = entry.get("name")
    if node is None or (isinstance(node, Scalar) and node.value in (None, "")):
        md = entry.mapping("metadata")
        alt = md.get("name") if md else None
        if alt is not None:
            return alt
    return node


def _namespace_node(entry: Mapping) -> Node | None:
    node = entry.get("namespace")
    if node is None or (isinstance(node, Scalar) and node.value in (None, "")):
        md = entry.mapping("metadata")
        alt = md.get("namespace") if md else None
        if alt is not None:
            return alt
    return node


def _text(node: Node, field: str, by: str) -> str:
    """A string field as go-yaml v2 and Go's JSON decoder accept it."""
    if not isinstance(node, Scalar):
        raise BuildError(f"{by}: {field} must be a string", _at(node, by))
    value = node.value
    if node.text is None:
        return "" if value is None else str(value)
    if value is None:
        return ""
    if isinstance(value, (bool, int, float)) or node.text in _V2_TRUE or node.text in _V2_FALSE:
        kind = "a boolean" if isinstance(value, bool) or node.text in _V2_TRUE | _V2_FALSE \
            else "a number"
        raise BuildError(f"{by}: {field} must be a string, not {kind} (quote it)", _at(node, by))
    # plain text as written: kustomize keeps 2020-01-01 as it is
    return node.text


def _flag(node: Node | None, field: str, by: str) -> bool:
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return False
    if isinstance(node, Scalar):
        if isinstance(node.value, bool):
            return node.value
        # plain yes/on/no/off are booleans to go-yaml v2; a quoted "true" is not
        if node.text is not None and (node.text in _V2_TRUE or node.text in _V2_FALSE):
            return node.text in _V2_TRUE
    raise BuildError(f"{by}: {field} must be true or false", _at(node, by))


def _items(entry: Mapping, field: str, by: str) -> list[Scalar]:
    node = entry.get(field)
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return []
    if not isinstance(node, Sequence):
        raise BuildError(f"{by}: {field} must be a list of strings", _at(node, by))
    for item in node:
        _text(item, field, by)
    return [item for item in node.items if isinstance(item, Scalar)]


def _behavior(entry: Mapping, by: str) -> str:
    node = entry.get("behavior")
    value = _text(node, "behavior", by) if node is not None else ""
    # kustomize maps anything else to "unspecified", which acts as create
    return value if value in BEHAVIORS else "create"


# --- options --------------------------------------------------------------------

def _options_node(node: Node | None, by: str) -> Mapping | None:
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return None
    if not isinstance(node, Mapping):
        raise BuildError(f"{by}: options must be a mapping", _at(node, by))
    return node


def _string_map(options: Mapping | None, field: str, by: str) -> dict[str, tuple[str, Origin]]:
    node = options.get(field) if options else None
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return {}
    if not isinstance(node, Mapping):
        raise BuildError(f"{by}: {field} must be a mapping of strings", _at(node, by))
    return {k: (_text(v, f"{field}.{k}", by), _at(v, by)) for k, v in node.items.items()}


def _map_origin(local: Mapping | None, glob: Mapping | None, field: str, by: str) -> Origin | None:
    for opts in (local, glob):
        node = opts.get(field) if opts else None
        if isinstance(node, Mapping) and node.items:
            return _at(node, by)
    return None


def _merge_options(local: Mapping | None, glob: Mapping | None, by: str) -> _Options:
    """Per-entry options win; generatorOptions only add what is missing."""
    labels = {**_string_map(glob, "labels", by), **_string_map(local, "labels", by)}
    annotations = {**_string_map(glob, "annotations", by), **_string_map(local, "annotations", by)}
    disable = any(_flag(o.get("disableNameSuffixHash"), "disableNameSuffixHash", by)
                  for o in (local, glob) if o)
    immutable = None
    for opts in (local, glob):
        if opts and _flag(opts.get("immutable"), "immutable", by) and immutable is None:
            immutable = _at(opts.items["immutable"], by)
    return _Options(labels, _map_origin(local, glob, "labels", by), annotations,
                    _map_origin(local, glob, "annotations", by), disable, immutable)


# --- key/value pairs --------------------------------------------------------------

def _pairs(entry: Mapping, ctx: _Context) -> list[_Pair]:
    envs = _items(entry, "envs", ctx.by)
    legacy = entry.get("env")
    if legacy is not None and _text(legacy, "env", ctx.by) and isinstance(legacy, Scalar):
        envs.append(legacy)  # kustomize appends the singular form after the list
    pairs: list[_Pair] = []
    for item in envs:
        pairs.extend(_env_pairs(item, ctx))
    for item in _items(entry, "literals", ctx.by):
        pairs.append(_literal_pair(item, ctx))
    for item in _items(entry, "files", ctx.by):
        pairs.append(_file_pair(item, ctx))
    return pairs


def _read(item: Scalar, rel: str, ctx: _Context, what: str = "file") -> tuple[str, bytes]:
    """The input's name for origins (repo-relative, or the URL) and its bytes."""
    origin = _at(item, ctx.by)
    if is_http_url(rel):
        if ctx.fetch is None:
            raise BuildError(f"{ctx.what}: {what} '{rel}' is a URL, which cannot be read here", origin)
        return rel, ctx.fetch(rel, f"{ctx.what} {what}", origin)
    path = join(ctx.kdir, rel)
    kind = ctx.files.kind(path, origin)
    if kind == "dir":
        raise BuildError(f"{ctx.what}: {ctx.files.display(path)} is a directory, not a file", origin)
    if kind == "missing":  # (a file a program of the repository may write: krmcheck.pipeline.root)
        check_restriction(ctx.restrictor, ctx.kdir, path, origin, ctx.files)
        raise MissingFile(f"{ctx.files.display(path)}: No such file or directory", origin, path)
    return ctx.files.display(path), ctx.files.read_bytes(path, origin, within=(ctx.restrictor, ctx.kdir))


def _literal_pair(item: Scalar, ctx: _Context) -> _Pair:
    source = _text(item, "literals", ctx.by)
    key, sep, value = source.partition("=")
    if not sep or not key:
        # a malformed Secret literal may be a bare secret: never echo it
        shown = f" '{source}'" if ctx.kind == "ConfigMap" else ""
        raise BuildError(f"{ctx.what}: literal{shown} is not of the form KEY=VALUE", _at(item, ctx.by))
    return _Pair(key, _unquote(value).encode("utf-8"), _at(item, ctx.by))


def _unquote(value: str) -> str:
    """One pair of matching surrounding quotes goes, as in kustomize's removeQuotes."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _file_source(source: str, item: Scalar, ctx: _Context) -> tuple[str, str]:
    """``[key=]path``: without a key, the key is the path's base name."""
    origin = _at(item, ctx.by)
    count = source.count("=")
    if count == 0:
        return _go_base(source), source
    if count > 1:
        raise BuildError(f"{ctx.what}: file source '{source}' has more than one '='", origin)
    key, _, path = source.partition("=")
    if not key:
        raise BuildError(f"{ctx.what}: file source '{source}' has no key before '='", origin)
    if not path:
        raise BuildError(f"{ctx.what}: file source '{source}' has no path after '='", origin)
    return key, path


def _go_base(path: str) -> str:
    """Go's path.Base: trailing slashes ignored, "" -> "."."""
    stripped = path.rstrip("/")
    if not stripped:
        return "/" if path else "."
    return posixpath.basename(stripped)


def _file_pair(item: Scalar, ctx: _Context) -> _Pair:
    key, rel = _file_source(_text(item, "files", ctx.by), item, ctx)
    _, content = _read(item, rel, ctx)
    return _Pair(key, content, _at(item, ctx.by))


def _env_pairs(item: Scalar, ctx: _Context) -> list[_Pair]:
    shown, content = _read(item, _text(item, "envs", ctx.by), ctx, "env file")
    pairs = []
    for index, raw in enumerate(content.split(b"\n")):
        origin = Origin(shown, index + 1, 1, ctx.by)
        pair = _env_line(raw, index, origin, ctx)
        if pair is not None:
            pairs.append(pair)
    return pairs


def _env_line(raw: bytes, index: int, origin: Origin, ctx: _Context) -> _Pair | None:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BuildError(f"{ctx.what}: env file line is not valid UTF-8", origin) from None
    if index == 0 and line.startswith("\ufeff"):
        line = line[1:]
    line = line.lstrip(_GO_SPACE)
    if not line or line.startswith("#"):
        return None
    key, _, value = line.partition("=")
    if not key:
        return None  # kustomize drops a line with an empty key without a word
    return _Pair(key, value.encode("utf-8"), origin)


def _unique(pairs: list[_Pair], ctx: _Context) -> list[_Pair]:
    seen: dict[str, _Pair] = {}
    for pair in pairs:
        first = seen.get(pair.key)
        if first is not None:
            raise BuildError(f"{ctx.what}: key '{pair.key}' is repeated (first at {first.origin.location})",
                             pair.origin)
        seen[pair.key] = pair
    return pairs


# --- the resource ---------------------------------------------------------------

def _build(entry: Mapping, name_node: Node | None, ctx: _Context, pairs: list[_Pair],
           opts: _Options) -> Mapping:
    here = _at(entry, ctx.by)
    root = Mapping({"apiVersion": Scalar("v1", here), "kind": Scalar(ctx.kind, here),
                    "metadata": _metadata(entry, name_node, ctx, opts)}, here)
    if ctx.kind == "Secret":
        root.items["type"] = _secret_type(entry, ctx)
        root.items["data"] = Mapping({p.key: Scalar(_base64(p.value), p.origin) for p in pairs}, here)
    else:
        _configmap_data(root, pairs, here)
    if opts.immutable is not None:
        root.items["immutable"] = Scalar(True, opts.immutable)
    return root


def _metadata(entry: Mapping, name_node: Node | None, ctx: _Context, opts: _Options) -> Mapping:
    here = _at(entry, ctx.by)
    md = Mapping({"name": Scalar(ctx.name, _at(name_node if name_node is not None else entry, ctx.by))}, here)
    ns_node = _namespace_node(entry)
    namespace = _text(ns_node, "namespace", ctx.by) if ns_node is not None else ""
    if namespace and ns_node is not None:
        md.items["namespace"] = Scalar(namespace, _at(ns_node, ctx.by))
    if opts.labels:
        md.items["labels"] = _string_mapping(opts.labels, opts.labels_origin or here)
    if opts.annotations:
        md.items["annotations"] = _string_mapping(opts.annotations, opts.annotations_origin or here)
    return md


def _string_mapping(values: dict[str, tuple[str, Origin]], origin: Origin) -> Mapping:
    return Mapping({k: Scalar(v, o) for k, (v, o) in values.items()}, origin)


def _secret_type(entry: Mapping, ctx: _Context) -> Scalar:
    node = entry.get("type")
    value = _text(node, "type", ctx.by) if node is not None else ""
    if value:
        assert node is not None
        return Scalar(value, _at(node, ctx.by))
    return Scalar("Opaque", _at(entry, ctx.by))


def _configmap_data(root: Mapping, pairs: list[_Pair], here: Origin) -> None:
    data: dict[str, Node] = {}
    binary: dict[str, Node] = {}
    for pair in pairs:
        try:
            data[pair.key] = Scalar(pair.value.decode("utf-8"), pair.origin)
        except UnicodeDecodeError:
            binary[pair.key] = Scalar(_base64(pair.value), pair.origin)
    if data:
        root.items["data"] = Mapping(data, here)
    if binary:
        root.items["binaryData"] = Mapping(binary, here)


def _base64(value: bytes) -> str:
    """Standard base64; from 70 characters on, kustomize breaks it into
    70-character lines, each ending in a newline (a literal block)."""
    text = base64.b64encode(value).decode("ascii")
    if len(text) < _BASE64_LINE:
        return text
    return "".join(text[i:i + _BASE64_LINE] + "\n" for i in range(0, len(text), _BASE64_LINE))


# --- merging ------------------------------------------------------------------------

def _move(src: Mapping, dst: Mapping, key: str) -> None:
    node = src.get(key)
    if node is None:
        dst.items.pop(key, None)
    else:
        dst.items[key] = node


def _merge_map(parent: Mapping, old: Mapping | None, new: Mapping | None, key: str) -> None:
    """``old`` then ``new`` (new wins), values turned into strings; an empty
    result removes the field, as kustomize's SetLabels/SetDataMap do."""
    merged: dict[str, Node] = {}
    for source in (old, new):
        for k, v in (source.items.items() if source else ()):
            merged[k] = _as_string(v)
    if not merged:
        parent.items.pop(key, None)
        return
    origin = new.origin if new is not None else (old.origin if old is not None else parent.origin)
    parent.items[key] = Mapping(merged, origin, new.trail if new is not None else ())


def _as_string(node: Node) -> Node:
    if isinstance(node, Scalar) and not isinstance(node.value, str):
        return Scalar(node.as_string(), node.origin, node.trail)
    return node
