"""Argo CD ApplicationSets (argoproj.io): the Applications the
ApplicationSet controller makes (applicationset/controllers/template
``GenerateApplications``), each a root as if written out.

Generators that read this repository or the object itself are expanded
(argo-cd applicationset/generators):

- ``list``: each element's keys (``elements``; ``elementsYaml`` too);
- ``git`` with ``directories``: every directory of the checkout (hidden ones
  left out) that an entry's ``path`` matches as Go's ``path.Match`` does
  (``*`` within one directory), less the ``exclude: true`` entries;
  parameters ``path``, ``path.basename``, ``path.basenameNormalized``,
  ``path[N]`` (``.path.path``, ``.path.segments``... with ``goTemplate``);
- ``git`` with ``files``: every file that a pattern matches (as ``git
  ls-files`` does: ``*`` crosses directories; where the repository's Argo
  CD runs the controller with ``--enable-new-git-file-globbing``, as
  doublestar does: ``*`` within one directory, ``**`` across), less the excluded ones, each
  YAML or JSON object in it flattened to dotted keys (nested as it is with
  ``goTemplate``), with the ``path`` parameters of its directory and
  ``path.filename``;
- ``matrix`` (two generators, the second's fields templated with each of the
  first's parameter sets) and ``merge`` (by ``mergeKeys``), nested too;
  a ``selector`` on any of them, and git ``values``.

The ``git`` generators need ``repoURL`` to be this repository; the
``revision`` is taken to be this checkout. Generators that ask a cluster or
an API (clusters, pullRequest, scmProvider, clusterDecisionResource,
plugin) are not expanded, and a note says so.

The template (the generator's own merged over ``spec.template``, the
generator's winning) is rendered per parameter set: every string, keys too,
with fasttemplate (``{{path.basename}}``: a parameter that is a string, else
left as written) or, with ``goTemplate: true``, Go's text/template
(``gotemplate.py``) with Argo CD's ``toYaml``, ``fromYaml`` and
``fromYamlArray`` (applicationset/utils template_functions). A value that was one parameter points at the line that
gave it (a list element's key, a git file's line), the template's line in
its trail; anything else at the template's line.
"""

from __future__ import annotations

import fnmatch
import json
import os
import posixpath
import re
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from krmcheck.gitops import gotemplate
from krmcheck.gitops.source import same_repository
from krmcheck.gitops.substitute import Problem
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Origin

GROUP = "argoproj.io/"
MAX_APPLICATIONS = 5_000  # from one ApplicationSet
_FAST = re.compile(r"\{\{(.*?)\}\}", re.S)
_ONE_FAST = re.compile(r"^\{\{\s*([^{}]+?)\s*\}\}$")
_ONE_GO = re.compile(r"^\{\{-?\s*\.([A-Za-z0-9_]+)(?:\.[A-Za-z0-9_.]+)?\s*-?\}\}$")


def is_application_set(res: Resource) -> bool:
    return res.kind == "ApplicationSet" and res.api_version.startswith(GROUP)


class Params(NamedTuple):
    values: dict[str, Any]
    origins: dict[str, Origin]  # a top-level key's line, where one gave it


class Unsupported(Exception):
    """A generator krmcheck does not expand, and why (at ``origin``)."""

    def __init__(self, message: str, origin: Origin) -> None:
        super().__init__(message)
        self.message, self.origin = message, origin


class _Context(NamedTuple):
    top: Path
    urls: frozenset[str]
    go: bool
    options: tuple[str, ...]
    name: str
    new_globbing: bool = False  # the controller's --enable-new-git-file-globbing


def expand(res: Resource, top: Path, urls: frozenset[str],
           new_globbing: bool = False) -> tuple[list[Resource], list[Problem]]:
    """The Applications the ApplicationSet makes, and why any it would make
    are not here (``new_globbing``: the controller matches git files as
    doublestar patterns, :func:`argocd.new_git_file_globbing`)."""
    spec = res.node.mapping("spec") or Mapping()
    options = spec.sequence("goTemplateOptions")
    c = _Context(top, urls, spec.value("goTemplate") is True,
                 tuple(o.value for o in (options.items if options else []) if isinstance(o, Scalar)
                       and isinstance(o.value, str)), res.name, new_globbing)
    template = spec.mapping("template") or Mapping({}, res.node.origin)
    generators = spec.sequence("generators")
    apps: list[Resource] = []
    problems: list[Problem] = []
    patch = spec.get("templatePatch")
    if patch is not None:
        problems.append(Problem(f"ApplicationSet {res.name}: templatePatch is not applied by krmcheck: its "
                                f"Applications are checked as the template makes them", "info", patch.origin, res))
    for gen in generators.items if generators is not None else ():
        if not isinstance(gen, Mapping):
            continue
        try:
            sets = _params(gen, c, None)
        except Unsupported as e:
            problems.append(Problem(f"ApplicationSet {res.name}: {e.message}", "info", e.origin, res))
            continue
        merged = _merged(_own_template(gen), template)
        for params in sets[:MAX_APPLICATIONS]:
            try:
                apps.append(_application(res, merged, params, c))
            except gotemplate.TemplateError as e:
                problems.append(Problem(f"ApplicationSet {res.name}: the template cannot be rendered "
                                        f"({e}): an Application is not made", "info", template.origin, res))
    return apps, problems


# --- parameters -------------------------------------------------------------------

def _params(gen: Mapping, c: _Context, given: Params | None) -> list[Params]:
    if given is not None:
        gen = _render_node(gen.copy(), given, c)  # a matrix's second generator sees the first's
    kinds = [k for k in gen.items if k not in ("selector", "template", "values")]
    sets: list[Params]
    if "list" in gen.items:
        sets = _list(gen.mapping("list") or Mapping(), c)
    elif "git" in gen.items:
        sets = _git(gen.mapping("git") or Mapping(), c, gen.items["git"].origin)
    elif "matrix" in gen.items:
        sets = _matrix(gen.mapping("matrix") or Mapping(), c, gen.items["matrix"].origin)
    elif "merge" in gen.items:
        sets = _merge(gen.mapping("merge") or Mapping(), c, gen.items["merge"].origin)
    else:
        which = kinds[0] if kinds else "empty"
        raise Unsupported(f"the {which} generator asks the cluster or an API for its parameters, "
                          f"which krmcheck does not: its Applications are not checked", gen.origin)
    selector = gen.mapping("selector")
    return [p for p in sets if selector is None or _selects(selector, p)]


def _list(spec: Mapping, c: _Context) -> list[Params]:
    out = []
    elements = spec.sequence("elements")
    for e in elements.items if elements is not None else ():
        if not isinstance(e, Mapping):
            continue
        origins = {k: v.origin for k, v in e.items.items()}
        if c.go:
            out.append(Params(e.to_data(), origins))
            continue
        values: dict[str, Any] = {}
        for k, v in e.items.items():
            if k == "values" and isinstance(v, Mapping):
                for vk, vv in v.items.items():
                    values[f"values.{vk}"] = _string(vv, c)
                    origins[f"values.{vk}"] = vv.origin
            else:
                values[k] = _string(v, c)
        out.append(Params(values, origins))
    text = spec.get("elementsYaml")
    if isinstance(text, Scalar) and isinstance(text.value, str):
        try:
            docs = load_documents(text.value, text.origin.path, "ApplicationSet")
        except LoadError as e:
            raise Unsupported(f"elementsYaml is not YAML: {e.message}", text.origin) from None
        for doc in docs:
            for item in doc.items if isinstance(doc, Sequence) else ():
                if isinstance(item, Mapping):
                    out.append(Params(item.to_data(), {k: text.origin for k in item.items}))
    return out


def _string(v: Node, c: _Context) -> str:
    if isinstance(v, Scalar) and isinstance(v.value, str):
        return v.value
    raise Unsupported(f"a list element's value that is not a string needs goTemplate: true "
                      f"(the ApplicationSet controller refuses it)", v.origin)


def _git(spec: Mapping, c: _Context, origin: Origin) -> list[Params]:
    url = spec.value("repoURL")
    if not isinstance(url, str) or not c.urls or not same_repository(url, c.urls):
        raise Unsupported(f"the git generator reads {url}, not this repository: its Applications are "
                          f"not checked", origin)
    given = spec.value("pathParamPrefix")
    prefix = given if isinstance(given, str) else ""
    values = spec.mapping("values")
    if "directories" in spec.items:
        entries = _entries(spec.sequence("directories"))
        paths = [d for d in _directories(c.top) if _included(d, entries, _go_match)]
        sets = [_path_params(d, None, prefix, c) for d in paths]
    else:
        entries = _entries(spec.sequence("files"))
        sets = []
        match = _doublestar_match if c.new_globbing else _git_match
        for f in [f for f in _files(c.top) if _included(f, entries, match)]:
            sets += _file_params(f, c, prefix)
    return [_with_values(p, values, c) for p in sets]


def _entries(seq: Sequence | None) -> list[tuple[str, bool]]:
    out = []
    for e in seq.items if seq is not None else ():
        if isinstance(e, Mapping) and isinstance(e.value("path"), str):
            out.append((str(e.value("path")), e.value("exclude") is True))
    return out


def _included(path: str, entries: list[tuple[str, bool]], match: Any) -> bool:
    hit = [exclude for pattern, exclude in entries if match(pattern, path)]
    return bool(hit) and not any(hit)


def _go_match(pattern: str, path: str) -> bool:
    """Go's ``path.Match``: ``*`` and ``?`` do not cross ``/``."""
    rx = "".join("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch) for ch in pattern)
    return re.fullmatch(rx, path) is not None


def _git_match(pattern: str, path: str) -> bool:
    """A ``git ls-files -- PATTERN`` pathspec: wildcards cross ``/``."""
    return fnmatch.fnmatchcase(path, pattern) or path == pattern


def _doublestar_match(pattern: str, path: str) -> bool:
    """The ApplicationSet controller's new git file globbing (doublestar):
    ``*`` and ``?`` stay within one directory, ``**`` crosses any number,
    ``{a,b}`` is either."""
    rx, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            rx, i = rx + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            rx, i = rx + ".*", i + 2
        elif pattern[i] == "*":
            rx, i = rx + "[^/]*", i + 1
        elif pattern[i] == "?":
            rx, i = rx + "[^/]", i + 1
        elif pattern[i] == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            rx += "(?:" + "|".join(re.escape(a) for a in pattern[i + 1:end].split(",")) + ")"
            i = end + 1
        elif pattern[i] == "[" and "]" in pattern[i + 1:]:
            end = pattern.index("]", i + 1)
            body = pattern[i + 1:end]
            rx += "[" + ("^" + body[1:] if body.startswith("!") else body) + "]"
            i = end + 1
        else:
            rx, i = rx + re.escape(pattern[i]), i + 1
    try:
        return re.fullmatch(rx, path) is not None
    except re.error:
        return False


def _directories(top: Path) -> list[str]:
    out = []
    for here, dirnames, _ in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        out += [(Path(here) / d).relative_to(top).as_posix() for d in dirnames]
    return out


def _files(top: Path) -> list[str]:
    out = []
    for here, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        out += [(Path(here) / f).relative_to(top).as_posix() for f in filenames]
    return sorted(out)


def _path_params(directory: str, filename: str | None, prefix: str, c: _Context) -> Params:
    base = posixpath.basename(directory)
    if c.go:
        p: dict[str, Any] = {"path": directory, "basename": base,
                             "basenameNormalized": gotemplate.sanitize_name(base),
                             "segments": directory.split("/")}
        if filename is not None:
            p.update(filename=filename, filenameNormalized=gotemplate.sanitize_name(filename))
        return Params({prefix: {"path": p}} if prefix else {"path": p}, {})
    key = f"{prefix}.path" if prefix else "path"
    flat: dict[str, Any] = {key: directory, f"{key}.basename": base,
                            f"{key}.basenameNormalized": gotemplate.sanitize_name(base)}
    if filename is not None:
        flat[f"{key}.filename"] = filename
        flat[f"{key}.filenameNormalized"] = gotemplate.sanitize_name(filename)
    for i, segment in enumerate(directory.split("/")):
        if segment:
            flat[f"{key}[{i}]"] = segment
    return Params(flat, {})


def _file_params(rel: str, c: _Context, prefix: str) -> list[Params]:
    try:
        text = (c.top / rel).read_text(encoding="utf-8")
        docs = load_documents(text, rel, "ApplicationSet")
    except (OSError, UnicodeDecodeError, LoadError) as e:
        raise Unsupported(f"the git generator's file {rel} cannot be read: {e}", Origin(rel, 1, 1)) from None
    doc = docs[0] if docs else Mapping({}, Origin(rel, 1, 1))
    objects = [doc] if isinstance(doc, Mapping) else \
        [d for d in doc.items if isinstance(d, Mapping)] if isinstance(doc, Sequence) else []
    out = []
    for obj in objects:
        where = _path_params(posixpath.dirname(rel), posixpath.basename(rel), prefix, c)
        if c.go:
            values = {**obj.to_data(), **where.values}
            origins = {k: v.origin for k, v in obj.items.items()}
        else:
            values, origins = {}, {}
            for key, node in _flatten(obj, ""):
                values[key] = gotemplate._print(node.value) if isinstance(node, Scalar) else ""
                origins[key] = node.origin
            values.update(where.values)
        out.append(Params(values, origins))
    return out


def _flatten(node: Node, prefix: str) -> list[tuple[str, Node]]:
    """Dotted keys, as jeremywohl/flatten's DotStyle (lists by index)."""
    if isinstance(node, Mapping):
        return [kv for k, v in node.items.items() for kv in _flatten(v, f"{prefix}.{k}" if prefix else k)]
    if isinstance(node, Sequence):
        return [kv for i, v in enumerate(node.items) for kv in _flatten(v, f"{prefix}.{i}" if prefix else str(i))]
    return [(prefix, node)]


def _with_values(p: Params, values: Mapping | None, c: _Context) -> Params:
    if values is None:
        return p
    out = dict(p.values)
    rendered = {k: _render_text(v.value, p, c) for k, v in values.items.items()
                if isinstance(v, Scalar) and isinstance(v.value, str)}
    if c.go:
        out["values"] = rendered
    else:
        out.update({f"values.{k}": v for k, v in rendered.items()})
    return Params(out, p.origins)


def _matrix(spec: Mapping, c: _Context, origin: Origin) -> list[Params]:
    gens = [g for g in (spec.sequence("generators") or Sequence()).items if isinstance(g, Mapping)]
    if len(gens) != 2:
        raise Unsupported("a matrix generator needs exactly two generators", origin)
    out = []
    for a in _params(gens[0], c, None):
        for b in _params(gens[1], c, a):
            if c.go:
                out.append(Params(_deep_merge(b.values, a.values), {**b.origins, **a.origins}))
                continue
            clash = [k for k in a.values if k in b.values and a.values[k] != b.values[k]]
            if clash:
                raise Unsupported(f"the matrix generator's two generators give {clash[0]} different "
                                  f"values (the ApplicationSet controller refuses this)", origin)
            out.append(Params({**a.values, **b.values}, {**a.origins, **b.origins}))
    return out


def _merge(spec: Mapping, c: _Context, origin: Origin) -> list[Params]:
    gens = [g for g in (spec.sequence("generators") or Sequence()).items if isinstance(g, Mapping)]
    keys_node = spec.sequence("mergeKeys")
    keys = sorted({str(k.value) for k in (keys_node.items if keys_node else []) if isinstance(k, Scalar)})
    if len(gens) < 2 or not keys:
        raise Unsupported("a merge generator needs two generators or more and mergeKeys", origin)
    sets = [_params(g, c, None) for g in gens]

    def key(p: Params) -> str:
        return json.dumps({k: p.values.get(k) for k in keys}, sort_keys=True, default=str)

    base: dict[str, Params] = {}
    for p in sets[0]:
        if key(p) in base:
            raise Unsupported(f"the merge generator's first generator repeats the key {key(p)}", origin)
        base[key(p)] = p
    for more in sets[1:]:
        by_key = {key(p): p for p in more}
        for k, p in base.items():
            if k in by_key:
                o = by_key[k]
                values = _deep_merge(p.values, o.values) if c.go else {**p.values, **o.values}
                base[k] = Params(values, {**p.origins, **o.origins})
    return list(base.values())


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _deep_merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) else v
    return out


def _selects(selector: Mapping, p: Params) -> bool:
    flat = {k: gotemplate._print(v) for k, v in _flat_values(p.values, "").items()}
    labels = selector.mapping("matchLabels")
    for k, v in (labels.items.items() if labels else ()):
        if not isinstance(v, Scalar) or flat.get(k) != v.as_string():
            return False
    expressions = selector.sequence("matchExpressions")
    for e in expressions.items if expressions else ():
        if not isinstance(e, Mapping):
            continue
        k, op = str(e.value("key")), str(e.value("operator"))
        listed = [str(x.value) for x in (e.sequence("values") or Sequence()).items if isinstance(x, Scalar)]
        present = k in flat
        if (op == "In" and flat.get(k) not in listed) or (op == "NotIn" and present and flat[k] in listed) \
                or (op == "Exists" and not present) or (op == "DoesNotExist" and present):
            return False
    return True


def _flat_values(values: dict[str, Any], prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in values.items():
        name = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            out.update(_flat_values(v, name))
        else:
            out[name] = v
    return out


# --- the template -----------------------------------------------------------------

def _own_template(gen: Mapping) -> Mapping | None:
    for kind, node in gen.items.items():
        if isinstance(node, Mapping) and kind not in ("selector", "values"):
            own = node.mapping("template")
            if own is not None:
                return own
    return None


def _merged(own: Mapping | None, template: Mapping) -> Mapping:
    """The generator's template over the ApplicationSet's (its fields win)."""
    if own is None:
        return template
    out = template.copy()
    _over(out, own)
    return out


def _over(base: Mapping, own: Mapping) -> None:
    for k, v in own.items.items():
        old = base.items.get(k)
        if isinstance(old, Mapping) and isinstance(v, Mapping):
            _over(old, v)
        elif not (isinstance(v, Scalar) and v.value in (None, "")):
            base.items[k] = v.copy()


def _application(appset: Resource, template: Mapping, params: Params, c: _Context) -> Resource:
    node = _render_node(template.copy(), params, c)
    meta = node.mapping("metadata") or Mapping({}, template.origin)
    meta.items["namespace"] = Scalar(appset.namespace or "argocd", appset.node.origin)
    spec = node.get("spec") or Mapping({}, template.origin)
    app = Mapping({"apiVersion": Scalar("argoproj.io/v1alpha1", template.origin),
                   "kind": Scalar("Application", template.origin),
                   "metadata": meta, "spec": spec}, template.origin)
    return Resource(app)


def _render_node(node: Node, params: Params, c: _Context) -> Mapping:
    out = _render(node, params, c)
    assert isinstance(out, Mapping)
    return out


def _render(node: Node, params: Params, c: _Context) -> Node:
    if isinstance(node, Mapping):
        node.items = {_render_text(k, params, c) if "{{" in k else k: _render(v, params, c)
                      for k, v in node.items.items()}
        return node
    if isinstance(node, Sequence):
        node.items = [_render(v, params, c) for v in node.items]
        return node
    if isinstance(node, Scalar) and isinstance(node.value, str) and "{{" in node.value:
        written = node.value
        value = _render_text(written, params, c)
        node.set(value, _origin_of(written, params, c) or node.origin)
    return node


def _from_yaml(text: Any, kind: type) -> Any:
    try:
        value = yaml.safe_load(gotemplate._text(text)) if text is not gotemplate.MISSING else None
    except yaml.YAMLError as e:
        raise gotemplate.TemplateError(f"not YAML: {str(e).splitlines()[0]}") from None
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise gotemplate.TemplateError(f"YAML that is not {'a map' if kind is dict else 'a list'}")
    return value


# applicationset/utils: toYaml, fromYaml and fromYamlArray join sprig's functions
_ARGO_FUNCTIONS: dict[str, Any] = {
    "toYaml": lambda v: gotemplate.to_yaml(v).removesuffix("\n"),
    "fromYaml": lambda s: _from_yaml(s, dict),
    "fromYamlArray": lambda s: _from_yaml(s, list),
}


def _render_text(text: str, params: Params, c: _Context) -> str:
    if c.go:
        return gotemplate.render(text, params.values, c.options, functions=_ARGO_FUNCTIONS)
    values = params.values

    def one(m: re.Match[str]) -> str:
        v = values.get(m.group(1).strip())
        return v if isinstance(v, str) and m.group(1).strip() else m.group(0)

    return _FAST.sub(one, text)


def _origin_of(written: str, params: Params, c: _Context) -> Origin | None:
    """The line that gave a value written as one parameter and nothing else."""
    m = (_ONE_GO if c.go else _ONE_FAST).match(written.strip())
    return params.origins.get(m.group(1)) if m else None
