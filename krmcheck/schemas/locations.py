"""Schema locations a user names, and the catalogs ``krmcheck schemas pull``
copied into the cache.

A location is

- a local directory: the layout of the datreeio CRDs-catalog,
  ``DIR/GROUP/KIND_VERSION.json`` (kind lowercased), works as it is;
- a template with kubeconform's placeholders, a path or a URL:
  ``{{.Group}}`` (the apiVersion's group, or the version for core kinds),
  ``{{.ResourceKind}}`` (the kind, lowercased), ``{{.ResourceAPIVersion}}``
  (the version), ``{{.KindSuffix}}`` (``-GROUP'S FIRST LABEL-VERSION``),
  ``{{.NormalizedKubernetesVersion}}`` (``v1.30``) and ``{{.StrictSuffix}}``
  (``-strict`` with ``--strict``); spaces inside the braces are allowed;
- an ``http(s)://`` base or template: fetched only with ``--network``, once,
  into ``CACHE/http/`` (a later run reads the copy), retrying with backoff
  when the server says 429 or 5xx.
"""

from __future__ import annotations

import os

import functools
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from krmcheck import journal
from krmcheck.resource.files import read_bounded

PULLED = "catalogs"  # CACHE/catalogs/NAME/ holds a pulled catalog in the CRDs-catalog layout
CATALOG_LAYOUT = "{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"
_PLACEHOLDER = re.compile(r"\{\{\s*\.(\w+)\s*\}\}")
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
RETRIES = 4
TIMEOUT = 30.0


class LocationError(Exception):
    """A schema location that cannot be used (a bad template, an unreadable file)."""


def placeholders(api_version: str, kind: str, k8s_version: str, strict: bool) -> dict[str, str] | None:
    """kubeconform's template values for a resource; None when the apiVersion
    or kind would not make a safe path segment."""
    group, _, version = api_version.rpartition("/")
    parts = [p for p in (group, version, kind) if p]
    if not all(_SAFE.fullmatch(p) for p in parts):
        return None
    first = (group or version).split(".")[0].lower()
    suffix = f"-{first}" + (f"-{version.lower()}" if group else "")
    return {"Group": group or version, "ResourceKind": kind.lower(), "ResourceAPIVersion": version,
            "KindSuffix": suffix, "NormalizedKubernetesVersion": f"v{k8s_version}",
            "StrictSuffix": "-strict" if strict else ""}


def expand(template: str, values: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        if m[1] not in values:
            raise LocationError(f"{template}: unknown placeholder {{{{.{m[1]}}}}}; "
                                f"known: {', '.join(sorted(values))}")
        return values[m[1]]
    return _PLACEHOLDER.sub(one, template)


def check_template(location: str) -> None:
    """Raise LocationError for a template krmcheck cannot fill."""
    values = placeholders("apps/v1", "Deployment", "1.30", False)
    assert values is not None
    expand(location, values)


def lookup(location: str, api_version: str, kind: str, k8s_version: str, strict: bool,
           cache: Path | None, network: bool) -> tuple[dict[str, Any], str] | None:
    """(schema, where it was found) for a resource from one location."""
    values = placeholders(api_version, kind, k8s_version, strict)
    if values is None:
        return None
    remote = location.startswith(("http://", "https://"))
    template = location if _PLACEHOLDER.search(location) else location.rstrip("/") + "/" + CATALOG_LAYOUT
    target = expand(template, values)
    if remote:
        if network:  # fetched or not, once per process: never in the render cache
            journal.impure("a schema URL")
        if not network or cache is None:
            cached = _cached(cache, target) if cache is not None else None
            return (cached, target) if cached is not None else None
        fetched = fetch(target, cache)
        return (fetched, target) if fetched is not None else None
    return _read(Path(target))


def _read(path: Path) -> tuple[dict[str, Any], str] | None:
    if not os.path.isfile(path):  # also False for a name too long or holding a NUL
        return None
    try:
        doc = json.loads(read_bounded(path).decode("utf-8"))
    except (OSError, ValueError) as e:  # ValueError: not UTF-8, not JSON, an integer of thousands of digits
        raise LocationError(f"{path}: not a JSON schema: {e}") from None
    return (doc, str(path)) if isinstance(doc, dict) else None


def from_pulled(cache: Path, api_version: str, kind: str) -> tuple[dict[str, Any], str] | None:
    """The schema of a kind in the catalogs pulled into ``cache``, first catalog first."""
    values = placeholders(api_version, kind, "0.0", False)
    base = cache / PULLED
    if values is None or not base.is_dir():
        return None
    for catalog in sorted(p for p in base.iterdir() if p.is_dir()):
        found = _read(catalog / expand(CATALOG_LAYOUT, values))
        if found is not None:
            return found
    return None


# --- HTTP, once per URL --------------------------------------------------------------

def _cache_file(cache: Path, url: str) -> Path:
    return cache / "http" / (hashlib.sha256(url.encode()).hexdigest() + ".json")


def _cached(cache: Path | None, url: str) -> dict[str, Any] | None:
    if cache is None:
        return None
    path = _cache_file(cache, url)
    found = _read(path) if path.is_file() else None
    return found[0] if found else None


@functools.lru_cache(maxsize=4096)
def fetch(url: str, cache: Path) -> dict[str, Any] | None:
    """A schema URL's JSON, from the cache or the network (then cached);
    None when the server has no such file (404)."""
    cached = _cached(cache, url)
    if cached is not None:
        return cached
    body = _get(url)
    if body is None:
        return None
    try:
        doc = json.loads(body)
    except json.JSONDecodeError as e:
        raise LocationError(f"{url}: not a JSON schema: {e.msg}") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise LocationError(f"{url}: not a JSON schema: {e}") from None
    path = _cache_file(cache, url)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(body)
    tmp.replace(path)
    return doc if isinstance(doc, dict) else None


def _get(url: str) -> bytes | None:
    from krmcheck import download

    try:
        return download.get(url, TIMEOUT, retries=RETRIES)
    except download.StatusError as e:
        if e.code == 404:
            return None
        raise LocationError(f"{url}: HTTP {e.code} {e.reason}") from None
    except download.GetError as e:
        raise LocationError(f"{url}: {e.reason}") from None
