"""Validate every resource against the Kubernetes JSON schema of its kind.

The schemas are the ones bundled with the installed ``kubernetes-validate``
package, for the Kubernetes version given with ``--kubernetes-version``
(default: the newest bundled one). Each problem is one error at the field
that is wrong: a value of the wrong type, a value outside the allowed set, a
missing required field (reported at the object that lacks it). In strict mode
(``--strict``) fields the schema does not know are errors too, reported at the
unknown field. Kinds without a bundled schema (custom resources) are not
checked; one info result per apiVersion and kind says so, with the id
``schema-missing`` (a run reports each kind once, with how many resources and
roots it has).
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import json
import re
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, NamedTuple

import fastjsonschema
import jsonschema
from referencing import Registry, Resource

from krmcheck.results import Finding, Result, RootReport
from krmcheck.tree.node import Mapping
from krmcheck.validators import ValidatorOptions, field_path, make_result, resource_ref

id = "schema"
description = "resources match the Kubernetes JSON schema of their kind"
MISSING = "schema-missing"  # the id of the info findings about kinds without a schema

_SCHEMA_ROOT = "kubernetes-json-schema"
_DIR_NAME = re.compile(r"v(\d+)\.(\d+)\.0-local")
_VERSION_ARG = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?")
# apiVersion and kind become a file name: accept nothing that could leave the directory.
_GROUP = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
_NAME = re.compile(r"[A-Za-z0-9]+")


class Kind(NamedTuple):
    """Which schema a resource needs."""

    version: str  # bundled Kubernetes version, "1.37"
    strict: bool
    api_version: str
    kind: str


def validate(items: Sequence[Mapping], options: ValidatorOptions) -> list[Result]:
    version = resolve_version(options.kubernetes_version)
    results: list[Result] = []
    skipped: dict[tuple[str, str], list[Mapping]] = {}
    for item in items:
        ref = resource_ref(item)
        key = Kind(version, options.strict, ref.apiVersion, ref.kind)
        if not ref.apiVersion or not ref.kind:
            results.append(make_result(id, item, "resource has no apiVersion or kind", "", rule="kind"))
        elif _fast_check(key) is None:
            skipped.setdefault((ref.apiVersion, ref.kind), []).append(item)
        else:
            results.extend(_check(item, key))
    results.extend(_skipped_result(kind_items, version) for kind_items in skipped.values())
    return results


# -- versions -------------------------------------------------------------------

@functools.cache
def bundled_versions() -> tuple[str, ...]:
    """Kubernetes versions the installed kubernetes-validate has schemas for, oldest first."""
    found = [_DIR_NAME.fullmatch(entry.name) for entry in _schema_root().iterdir()]
    pairs = sorted((int(m[1]), int(m[2])) for m in found if m)
    return tuple(f"{major}.{minor}" for major, minor in pairs)


def resolve_version(requested: str | None) -> str:
    """The bundled "major.minor" for a requested version; ValueError if none matches."""
    versions = bundled_versions()
    if requested is None:
        return versions[-1]
    m = _VERSION_ARG.fullmatch(requested.strip())
    wanted = f"{int(m[1])}.{int(m[2])}" if m else ""
    if wanted not in versions:
        raise ValueError(f"unknown Kubernetes version {requested!r}; "
                         f"schemas are bundled for {', '.join(versions)}")
    return wanted


def _schema_root() -> Traversable:
    return resources.files("kubernetes_validate").joinpath(_SCHEMA_ROOT)


def _schema_dir(version: str, strict: bool) -> Traversable:
    return _schema_root().joinpath(f"v{version}.0-local" + ("-strict" if strict else ""))


# -- loading schemas ----------------------------------------------------------

@functools.cache
def _definitions(version: str, strict: bool) -> dict[str, Any]:
    """``_definitions.json``: every type, under ``$defs``, that kind files ``$ref``."""
    loaded: dict[str, Any] = json.loads(_schema_dir(version, strict).joinpath("_definitions.json").read_text())
    return loaded


@functools.cache
def _kind_schema(key: Kind) -> dict[str, Any] | None:
    """The schema file of a kind, or None when none is bundled.

    Files are named ``<kind>-<first label of the group>-<version>.json``
    (``deployment-apps-v1``, ``role-rbac-v1``; core kinds ``pod-v1``), so a
    custom resource can land on a built-in's file name: the file's own
    group/version/kind list must name the resource's.
    """
    group, _, version = key.api_version.rpartition("/")
    if not _NAME.fullmatch(key.kind) or not _NAME.fullmatch(version) or (group and not _GROUP.fullmatch(group)):
        return None
    stem = "-".join(p for p in (key.kind.lower(), group.split(".")[0], version) if p)
    path = _schema_dir(key.version, key.strict).joinpath(f"{stem}.json")
    if not path.is_file():
        return None
    schema: dict[str, Any] = json.loads(path.read_text())
    wanted = {"group": group, "version": version, "kind": key.kind}
    return schema if wanted in schema.get("x-kubernetes-group-version-kind", []) else None


@functools.cache
def _fast_check(key: Kind) -> Callable[[Any], Any] | None:
    """A compiled validator deciding quickly whether a resource is valid; None: no schema."""
    schema = _kind_schema(key)
    if schema is None:
        return None
    # Formats are not asserted, as in the full validator below (and the API server
    # accepts "int32" and friends as plain numbers).
    check: Callable[[Any], Any] = fastjsonschema.compile(_bundle(schema, _definitions(key.version, key.strict)),
                                                         use_formats=False)
    return check


@functools.cache
def _full_validator(key: Kind) -> jsonschema.protocols.Validator:
    """A validator that lists every error with its path (slow; only for invalid resources)."""
    defs = _definitions(key.version, key.strict)
    registry: Registry[Any] = Registry().with_resource(defs["$id"], Resource.from_contents(defs))
    return jsonschema.Draft202012Validator(_kind_schema(key) or {}, registry=registry)


# Keywords whose value maps names to subschemas, lists subschemas, or is one.
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs")
_SCHEMA_LISTS = ("oneOf", "anyOf", "allOf", "prefixItems")
_SCHEMA_ONE = ("items", "additionalProperties", "not")
_DROPPED = ("description", "$id", "$schema")


def _bundle(schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """One self-contained schema: the kind plus the definitions it reaches, refs made local.

    fastjsonschema resolves ``$ref`` by fetching URLs; a single document with
    ``#/$defs/...`` pointers needs no resolver and compiles only what is used.
    """
    used: dict[str, Any] = {}
    bundled = _localize(schema, definitions["$defs"], used)
    bundled["$defs"] = used
    return bundled


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
        elif key in _SCHEMA_LISTS:
            out[key] = [_localize(sub, defs, used) for sub in value]
        elif key in _SCHEMA_ONE:
            out[key] = _localize(value, defs, used)
        elif key not in _DROPPED and not key.startswith("x-"):
            out[key] = value
    return out


# -- checking -----------------------------------------------------------------

def _check(item: Mapping, key: Kind) -> list[Result]:
    data = item.to_data()
    check = _fast_check(key)
    try:
        if check is not None:
            check(data)
        return []
    except fastjsonschema.JsonSchemaException:
        pass
    # The full validator is the authority: if it finds nothing, the item is valid.
    seen: set[tuple[str, str]] = set()
    results = []
    errors = sorted(_full_validator(key).iter_errors(data), key=lambda e: _sort_key(e.absolute_path))
    for error in errors:
        for path, message in _describe(error):
            if (path, message) not in seen:
                seen.add((path, message))
                results.append(make_result(id, item, message, path, rule=str(error.validator),
                                           extra_tags=(("kubernetes-version", key.version),)))
    return results


def _sort_key(path: Sequence[str | int]) -> list[tuple[int, str]]:
    return [(0, f"{p:09d}") if isinstance(p, int) else (1, p) for p in path]


def _describe(error: jsonschema.ValidationError) -> Iterator[tuple[str, str]]:
    """(field path, short message) for one schema error; some errors name several fields."""
    parts = list(error.absolute_path)
    where = field_path(parts)
    prefix = f"{where}: " if where else ""
    kind = error.validator
    if kind == "required" and isinstance(error.instance, dict):
        for name in error.validator_value:
            if name not in error.instance:
                yield where, f"{prefix}missing required field {name!r}"
    elif kind == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        for name in error.instance:
            if name not in known:
                yield field_path(parts + [name]), f"{field_path(parts + [name])}: unknown field"
    elif kind == "type":
        yield where, f"{prefix}{_value(error.instance)} is not of type {_types(error.validator_value)}"
    elif kind == "enum":
        allowed = ", ".join(_value(v) for v in error.validator_value[:8])
        more = ", ..." if len(error.validator_value) > 8 else ""
        yield where, f"{prefix}{_value(error.instance)} is not one of {allowed}{more}"
    elif kind in ("oneOf", "anyOf") and _alternative_types(error.validator_value):
        yield where, (f"{prefix}{_value(error.instance)} is not of type "
                      f"{_types(_alternative_types(error.validator_value))}")
    else:
        yield where, f"{prefix}{_shorten(error.message, 120)}"


def _alternative_types(alternatives: list[Any]) -> list[str]:
    """The types of ``oneOf`` alternatives that are bare types (IntOrString, Quantity)."""
    found: list[str] = []
    for alt in alternatives:
        t = alt.get("type") if isinstance(alt, dict) else None
        found.extend([t] if isinstance(t, str) else t or [])
    return found


def _types(types: str | list[str]) -> str:
    # Every field of the "local" schemas also allows null; saying so adds nothing.
    names = [types] if isinstance(types, str) else [t for t in dict.fromkeys(types) if t != "null"]
    return " or ".join(f"'{t}'" for t in names) or "'null'"


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return repr(_shorten(value, 40))
    return json.dumps(value)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _skipped_result(items: list[Mapping], version: str) -> Result:
    first = resource_ref(items[0])
    message = (f"no schema for {first.kind} ({first.apiVersion}) in Kubernetes {version}; "
               f"{_count(len(items), 'resource')} of this kind not checked")
    # at the kind: the line that names what has no schema (a name an overlay
    # prefixed would point into the overlay)
    return make_result(MISSING, items[0], message, "kind", severity="info", rule="no-schema",
                       extra_tags=(("kubernetes-version", version), ("count", str(len(items)))))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def missing_per_run(roots: Sequence[RootReport]) -> tuple[RootReport, ...]:
    """One ``schema-missing`` finding per kind for the whole run: each root's
    finding about a kind is moved to the kind's first location and says how
    many resources and roots the run has of it, so that reports show it once."""
    kinds: dict[tuple[str, str], list[Finding]] = {}
    for root in roots:
        for f in root.findings:
            if f.rule == MISSING and f.result.resource_ref is not None:
                ref = f.result.resource_ref
                kinds.setdefault((ref.apiVersion, ref.kind), []).append(f)
    if not kinds:
        return tuple(roots)
    moved: dict[int, Finding] = {}
    for (api_version, kind), found in kinds.items():
        first = min(found, key=lambda f: (f.location, f.root))
        tags = dict(first.result.tags)
        total = sum(int(dict(f.result.tags).get("count", "1")) for f in found)
        named = len({f.root for f in found})
        message = (f"no schema for {kind} ({api_version}) in Kubernetes {tags.get('kubernetes-version', '')}: "
                   f"{_count(total, 'resource')} in {_count(named, 'root')} not checked")
        for f in found:
            moved[builtins.id(f)] = dataclasses.replace(
                first, root=f.root, result=dataclasses.replace(first.result, message=message))
    return tuple(dataclasses.replace(r, findings=tuple(moved.get(builtins.id(f), f) for f in r.findings))
                 for r in roots)
