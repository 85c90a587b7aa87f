"""The schemas of built-in kinds, as the ``kubernetes-validate`` package ships
them: the one module that knows its directory layout.

The package holds, per Kubernetes minor version, a directory
``kubernetes-json-schema/v1.NN.0-local`` (and ``-strict``, where objects
forbid unknown fields) with ``_definitions.json`` (every type, under
``$defs``) and one file per kind, ``<kind>-<first label of the group>-<version>.json``
(``deployment-apps-v1``, ``role-rbac-v1``; core kinds ``pod-v1``), whose
``$ref`` point into the definitions.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

PACKAGE = "kubernetes_validate"
_ROOT = "kubernetes-json-schema"
_DIR_NAME = re.compile(r"v(\d+)\.(\d+)\.0-local")
_VERSION_ARG = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?")
# apiVersion and kind become a file name: accept nothing that could leave the directory.
_GROUP = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
_NAME = re.compile(r"[A-Za-z0-9]+")


@functools.cache
def versions() -> tuple[str, ...]:
    """Kubernetes versions with packaged schemas, oldest first ("1.25", ...)."""
    found = [_DIR_NAME.fullmatch(entry.name) for entry in _root().iterdir()]
    pairs = sorted((int(m[1]), int(m[2])) for m in found if m)
    return tuple(f"{major}.{minor}" for major, minor in pairs)


def resolve_version(requested: str | None) -> str:
    """The packaged "major.minor" for a requested version; ValueError if none matches."""
    known = versions()
    if requested is None:
        return known[-1]
    m = _VERSION_ARG.fullmatch(requested.strip())
    wanted = f"{int(m[1])}.{int(m[2])}" if m else ""
    if wanted not in known:
        raise ValueError(f"unknown Kubernetes version {requested!r}; "
                         f"schemas are bundled for {', '.join(known)}")
    return wanted


@functools.cache
def _root() -> Traversable:
    # The package's directory, found without running the package: its
    # __init__ imports jsonschema, certifi and more, which reading its
    # files does not need.
    spec = importlib.util.find_spec(PACKAGE)
    for where in (spec.submodule_search_locations or []) if spec is not None else []:
        if (Path(where) / _ROOT).is_dir():
            return Path(where) / _ROOT
    from importlib import resources  # an installation that is no directory (a zip)

    return resources.files(PACKAGE).joinpath(_ROOT)


def _directory(version: str, strict: bool) -> Traversable:
    return _root().joinpath(f"v{version}.0-local" + ("-strict" if strict else ""))


def definitions(version: str, strict: bool = False) -> dict[str, Any]:
    """``_definitions.json`` of a version: its ``$id`` and every type under ``$defs``."""
    # one cache entry however strict is passed (a cache keys definitions(v) and
    # definitions(v, False) apart, and the file is 1.7 MB of JSON)
    return _definitions(version, bool(strict))


@functools.cache
def _definitions(version: str, strict: bool) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(_directory(version, strict).joinpath("_definitions.json").read_text())
    return loaded


@functools.cache
def kind_schema(version: str, strict: bool, api_version: str, kind: str) -> dict[str, Any] | None:
    """The schema file of a kind, or None when none is packaged.

    A custom resource can land on a built-in's file name (a group whose
    first label is ``apps``): the file's own group/version/kind list must
    name the resource's."""
    group, _, gv = api_version.rpartition("/")
    if not _NAME.fullmatch(kind) or not _NAME.fullmatch(gv) or (group and not _GROUP.fullmatch(group)):
        return None
    stem = "-".join(p for p in (kind.lower(), group.split(".")[0], gv) if p)
    path = _directory(version, strict).joinpath(f"{stem}.json")
    try:
        if not path.is_file():
            return None
    except OSError:  # a kind too long for a file name is no built-in kind
        return None
    schema: dict[str, Any] = json.loads(path.read_text())
    wanted = {"group": group, "version": gv, "kind": kind}
    return schema if wanted in schema.get("x-kubernetes-group-version-kind", []) else None


# Kinds every group/version of the definitions lists, served or not (the
# options and events of its requests): a group/version with nothing else,
# like extensions/v1beta1, is no longer served.
_REQUEST_KINDS = frozenset({"DeleteOptions", "WatchEvent"})


def group_version_kinds(version: str, api_version: str) -> frozenset[str]:
    """The kinds the API server of a version serves in a group/version
    (``v1``, ``apps/v1``), with their ``...List`` kinds; empty for a
    group/version it does not serve."""
    return _served(version).get(api_version, frozenset())


def serving(version: str, kind: str) -> tuple[str, ...]:
    """The group/versions whose API server of a version serves ``kind``, sorted."""
    return tuple(sorted(gv for gv, kinds in _served(version).items() if kind in kinds))


@functools.cache
def _served(version: str) -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for schema in definitions(version)["$defs"].values():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            group, gv = gvk.get("group", ""), gvk.get("version", "")
            found.setdefault(f"{group}/{gv}" if group else gv, set()).add(gvk.get("kind", ""))
    return {api_version: frozenset(kinds) for api_version, kinds in found.items() if kinds - _REQUEST_KINDS}
