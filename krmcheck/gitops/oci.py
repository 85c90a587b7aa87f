"""Flux OCIRepositories this repository fills: where a Flux Kustomization
whose source is an OCI artifact finds its ``spec.path`` in the repository.

Evidence, not names: an artifact is this repository's when a CI workflow or
script of the repository pushes it (``flux push artifact URL --path=DIR``);
the artifact then holds DIR, and a path inside it is the same path under DIR.
The URL is matched without its tag or digest (what is pushed at each commit
is pulled by tag, semver or digest). Variables of the command are read from
the workflow's ``env:`` maps and GitHub's ``github.repository`` contexts,
from this repository's origin URL; a URL left with a variable nothing sets
is no evidence.

The ``flux-system`` source itself is often not in the repository: the Flux
Operator's FluxInstance makes it from ``spec.sync`` (kind, url, ref, path),
and the ``flux-instance`` Helm chart from its values' ``instance.sync``
(fluxcd.controlplane.io/v1; controlplaneio-fluxcd/flux-operator). Both are
read here: a FluxInstance object, a HelmRelease of the chart with inline
values or ``valuesFrom`` a ConfigMap, and a helmfile release of the chart
(the bootstrap of many home labs) with its ``values:`` inline or in files
beside it (``helmfile_syncs``).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from krmcheck.resource.files import read_text_bounded
from krmcheck.tree.load import FAST_LOADER, LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, lookup

# `flux push artifact URL ... --path=DIR` (a backslash continues a line)
_PUSH = re.compile(r"\bflux\s+push\s+artifact\b")
_VAR = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
_CONTEXT = re.compile(r"\$\{\{\s*([\w.]+)\s*\}\}")
OPERATOR_GROUP = "fluxcd.controlplane.io/"  # the Flux Operator's FluxInstance and ResourceSet
_SCRIPT_DIRS = ("", "hack", "scripts", ".taskfiles", ".github/workflows", ".github/scripts")
_SCRIPT_NAMES = ("Makefile", "Taskfile.yaml", "Taskfile.yml", ".gitlab-ci.yml", "justfile", "Justfile")
_SCRIPT_SUFFIXES = (".sh", ".yaml", ".yml", ".mk")
_MAX_SCRIPTS = 400


class Pushed(NamedTuple):
    directory: str  # repository-relative, "" for the top
    where: str  # the file that pushes it


def oci_key(url: str) -> str:
    """An OCI repository URL without scheme, tag or digest, lower-cased:
    ``oci://ghcr.io/org/app:main`` -> ``ghcr.io/org/app``."""
    u = url.strip().strip("\"'").lower()
    u = re.sub(r"^oci://", "", u)
    u = u.split("@", 1)[0]
    head, _, last = u.rpartition("/")
    if head and ":" in last:
        last = last.split(":", 1)[0]
    return f"{head}/{last}" if head else last


def pushed_artifacts(top: Path, urls: frozenset[str]) -> list[tuple[re.Pattern[str], Pushed]]:
    """What the repository's scripts push: a pattern of the artifact's
    oci_key (a GitHub context no URL of this checkout gives, such as the
    repository's name, stands for any one path segment) and the directory."""
    out: list[tuple[re.Pattern[str], Pushed]] = []
    contexts = _github_contexts(urls)
    for path in _scripts(top):
        try:
            text = read_text_bounded(path)
        except (OSError, ValueError):
            continue
        if "push" not in text or "artifact" not in text:
            continue
        env = _env_of(text) if path.suffix in (".yaml", ".yml") else {}
        env.update(_assignments(text))
        joined = re.sub(r"\\\r?\n\s*", " ", text)
        for m in _PUSH.finditer(joined):
            words = _words(joined[m.end():].split("\n", 1)[0])
            if not words:
                continue
            directory = next((w[len("--path="):] for w in words if w.startswith("--path=")), None)
            if directory is None and "--path" in words[:-1]:
                directory = words[words.index("--path") + 1]
            url = _expand(words[0], env, contexts)
            directory = _expand(directory, env, contexts) if directory is not None else None
            if url is None or directory is None or _WILD in directory:
                continue
            if directory.startswith("/") or ".." in directory.split("/"):
                continue
            rel = posixpath.normpath(directory.strip("/") or ".")
            key = re.escape(oci_key(url)).replace(re.escape(_WILD), "[^/]+")
            out.append((re.compile(key), Pushed("" if rel == "." else rel, path.relative_to(top).as_posix())))
    return out


def find_pushed(pushed: list[tuple[re.Pattern[str], Pushed]], url: str) -> Pushed | None:
    key = oci_key(url)
    return next((p for pattern, p in pushed if pattern.fullmatch(key)), None)


_WILD = "\x00"  # a value no URL of this checkout gives


def _words(line: str) -> list[str]:
    """A command's words, quotes removed, up to a pipe, ``;`` or ``&&``;
    a command's output (``$(...)``, backquotes) is a word of its own kind."""
    line = re.sub(r"\$\([^()]*\)|`[^`]*`", "CMD", line)
    out: list[str] = []
    word, quote, started = "", "", False
    for ch in line:
        if quote:
            if ch == quote:
                quote = ""
            else:
                word += ch
        elif ch in "\"'":
            quote, started = ch, True
        elif ch in " \t":
            if started:
                out.append(word)
            word, started = "", False
        elif ch in "|;&#":
            break
        else:
            word += ch
            started = True
    if started:
        out.append(word)
    return out


def _scripts(top: Path) -> Iterator[Path]:
    seen = 0
    for sub in _SCRIPT_DIRS:
        directory = top / sub if sub else top
        if not directory.is_dir():
            continue
        depth = 0 if sub in ("", ".github/workflows") else 2
        for here, dirs, names in os.walk(directory):
            level = Path(here).relative_to(directory).parts
            if len(level) >= depth:
                dirs[:] = []
            for n in sorted(names):
                if n in _SCRIPT_NAMES or (sub and n.endswith(_SCRIPT_SUFFIXES)) or (not sub and n.endswith(".sh")):
                    seen += 1
                    if seen > _MAX_SCRIPTS:
                        return
                    yield Path(here) / n


def _env_of(text: str) -> dict[str, str]:
    """Every ``env:`` map of a workflow (the top's, a job's, a step's)."""
    try:
        docs = list(yaml.load_all(text, Loader=FAST_LOADER))
    except (yaml.YAMLError, RecursionError, ValueError):
        return {}
    out: dict[str, str] = {}

    def visit(node: Any, depth: int) -> None:
        if depth > 12:
            return
        if isinstance(node, dict):
            env = node.get("env")
            if isinstance(env, dict):
                out.update({str(k): str(v) for k, v in env.items() if isinstance(v, (str, int))})
            for v in node.values():
                visit(v, depth + 1)
        elif isinstance(node, list):
            for v in node:
                visit(v, depth + 1)

    for doc in docs:
        visit(doc, 0)
    return out


_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_]\w*)\s*[:?]?=\s*[\"']?([^\s\"'#]+)[\"']?\s*$", re.MULTILINE)


def _assignments(text: str) -> dict[str, str]:
    """``NAME=value`` lines of a shell script or Makefile."""
    return {m.group(1): m.group(2) for m in _ASSIGN.finditer(text)}


_REPOSITORY_CONTEXTS = ("github.repository", "github.repository_owner", "github.event.repository.name")


def _github_contexts(urls: frozenset[str]) -> dict[str, str]:
    """GitHub's repository contexts, from a github.com URL of this repository."""
    for url in sorted(urls):
        m = re.fullmatch(r"github\.com/([^/]+)/([^/]+)", url)
        if m:
            owner, name = m.groups()
            return {"github.repository": f"{owner}/{name}", "github.repository_owner": owner,
                    "github.event.repository.name": name}
    return {}


def _expand(text: str, env: dict[str, str], contexts: dict[str, str], depth: int = 0) -> str | None:
    """``text`` with its variables set; None when one is not known."""
    missing = False

    def context(m: re.Match[str]) -> str:
        nonlocal missing
        name = m.group(1)
        if name in contexts:
            return contexts[name]
        if name in _REPOSITORY_CONTEXTS:
            return _WILD  # this repository's name, which a checkout without its URL does not say
        missing = True
        return ""

    def variable(m: re.Match[str]) -> str:
        nonlocal missing
        name = m.group(1) or m.group(2)
        value = env.get(name)
        if value is None or depth > 4:
            missing = True
            return ""
        expanded = _expand(value, env, contexts, depth + 1)
        if expanded is None:
            missing = True
            return ""
        return expanded

    out = _CONTEXT.sub(context, text)
    out = _VAR.sub(variable, out)
    return None if missing else out


# --- the flux-system source a FluxInstance makes -------------------------------------------

class Sync(NamedTuple):
    kind: str  # GitRepository, OCIRepository, Bucket
    url: str
    path: str
    where: str  # the file that says so
    patches: Any = None  # ``kustomize.patches`` of the instance (plain data, or a node): gitops.instance
    origin: Any = None  # the node that says so (its sync, or the HelmRelease)
    namespace: str = "flux-system"
    ref: str = ""  # the branch or ref, tag or bucket name
    # the source's and Kustomization's name: ``sync.name``, else the
    # instance's namespace (the operator's default)
    name: str = ""


def instance_syncs(fluxinstances: list[Mapping], helmreleases: list[Mapping],
                   configmap: Any, oci_url: Any, applied_in: Any = None) -> list[Sync]:
    """What each FluxInstance (object, or flux-instance chart release) syncs.
    ``configmap(namespace, name, near)`` gives a ConfigMap a HelmRelease
    takes values from, ``oci_url(namespace, name, near)`` the URL of an
    OCIRepository a HelmRelease's ``chartRef`` names; ``applied_in(node)``
    the namespace the Flux Kustomization that applies a release written
    without one gives it ("" when none is known)."""
    out = []
    for obj in fluxinstances:
        sync = lookup(obj, ["spec", "sync"])
        found = _sync(sync, obj.origin.path)
        if found is not None:
            namespace = _text(lookup(obj, ["metadata", "namespace"])) or \
                (applied_in(obj) if applied_in is not None else "") or "flux-system"
            out.append(found._replace(patches=lookup(obj, ["spec", "kustomize", "patches"]),
                                      origin=sync, namespace=namespace,
                                      name=(_text(sync.get("name")) if isinstance(sync, Mapping) else "") or namespace))
    for release in helmreleases:
        if not _is_flux_instance_chart(release, oci_url):
            continue
        values: list[tuple[Any, Mapping | None]] = []  # (values, their node when written inline)
        refs = lookup(release, ["spec", "valuesFrom"])
        for ref in getattr(refs, "items", ()):
            if isinstance(ref, Mapping) and _text(ref.get("kind")) == "ConfigMap":
                namespace = _text(lookup(release, ["metadata", "namespace"]))
                cm = configmap(namespace, _text(ref.get("name")), release.origin.path)
                key = _text(ref.get("valuesKey")) or "values.yaml"
                data = lookup(cm, ["data", key]) if cm is not None else None
                if isinstance(data, Scalar) and isinstance(data.value, str):
                    try:
                        values.append((yaml.load(data.value, Loader=FAST_LOADER), None))
                    except (yaml.YAMLError, RecursionError, ValueError):
                        pass
        inline = lookup(release, ["spec", "values"])
        if isinstance(inline, Mapping):
            values.append((inline.to_data(), inline))
        for v, node in values:
            instance = v.get("instance") if isinstance(v, dict) else None
            sync = instance.get("sync") if isinstance(instance, dict) else None
            if isinstance(sync, dict) and isinstance(sync.get("url"), str):
                kustomize = instance.get("kustomize") if isinstance(instance, dict) else None
                patches = kustomize.get("patches") if isinstance(kustomize, dict) else None
                if node is not None and isinstance(patches, list):  # with their lines
                    patches = lookup(node, ["instance", "kustomize", "patches"])
                namespace = _text(lookup(release, ["spec", "targetNamespace"])) or \
                    _text(lookup(release, ["metadata", "namespace"])) or \
                    (applied_in(release) if applied_in is not None else "") or "flux-system"
                out.append(Sync(str(sync.get("kind") or "GitRepository"), sync["url"],
                                str(sync.get("path") or ""), release.origin.path,
                                patches if isinstance(patches, (list, Node)) else None, release, namespace,
                                str(sync.get("ref") or ""), str(sync.get("name") or "") or namespace))
    return out


# helmfile's state files: helmfile.yaml (.gotmpl), and every file of a helmfile.d directory
_HELMFILES = ("helmfile.yaml", "helmfile.yml", "helmfile.yaml.gotmpl", "helmfile.yml.gotmpl")
_HELMFILE_DIRS = ("helmfile.d", "helmfile")
_HELMFILE_DEPTH = 4  # directories below the top where a bootstrap's helmfile is looked for
_MAX_HELMFILES = 50
_TEMPLATE_LINE = re.compile(r"^\s*\{\{.*\}\}\s*$", re.MULTILINE)


def helmfile_syncs(top: Path, display: Any) -> list[Sync]:
    """What helmfile releases of the ``flux-instance`` chart sync (a
    bootstrap: ``helmfile.yaml``, ``bootstrap/helmfile.d/01-apps.yaml``),
    from each release's ``values:``: a map written inline, or a file
    relative to the helmfile. A value or file that is a template (``{{``:
    one that reads the repository's HelmRelease, as many home labs write
    it) is not followed. ``display(path)``: a file's repo-relative name."""
    out: list[Sync] = []
    for path in _helmfiles(top):
        for release in _releases(path, top, display):
            chart = _text(release.get("chart"))
            if "{{" in chart or oci_key(chart).rpartition("/")[2] != "flux-instance":
                continue
            namespace = _text(release.get("namespace")) or "flux-system"
            found: tuple[Mapping, Mapping] | None = None
            for entry in (release.sequence("values") or Sequence()).items:
                values = _values_of(entry, path.parent, top, display)
                sync = lookup(values, ["instance", "sync"]) if values is not None else None
                url = lookup(sync, ["url"]) if isinstance(sync, Mapping) else None
                if values is not None and isinstance(sync, Mapping) and isinstance(url, Scalar) \
                        and isinstance(url.value, str) and "{{" not in url.value:
                    found = (values, sync)  # the last values that say it win, as helm merges them
            if found is None:
                continue
            values, sync = found
            where = _sync(sync, sync.origin.path)
            if where is not None:
                out.append(where._replace(patches=lookup(values, ["instance", "kustomize", "patches"]),
                                          origin=sync, namespace=namespace))
    return out


def _helmfiles(top: Path) -> list[Path]:
    found: list[Path] = []
    for here, dirs, names in os.walk(top):
        depth = len(Path(here).relative_to(top).parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules") \
            if depth < _HELMFILE_DEPTH else []
        in_dir = Path(here).name in _HELMFILE_DIRS
        for n in sorted(names):
            if n in _HELMFILES or (in_dir and n.endswith((".yaml", ".yml", ".yaml.gotmpl", ".yml.gotmpl"))):
                found.append(Path(here) / n)
                if len(found) >= _MAX_HELMFILES:
                    return found
    return found


def _releases(path: Path, top: Path, display: Any) -> list[Mapping]:
    """The releases of a state file, its template lines (``{{ ... }}`` alone
    on a line) taken out so that the rest reads as YAML."""
    try:
        text = read_text_bounded(path, within=top)
    except (OSError, ValueError):
        return []
    if "releases" not in text or "flux-instance" not in text:
        return []
    plain = _TEMPLATE_LINE.sub("", text)
    out: list[Mapping] = []
    for part in re.split(r"(?m)^---[ \t]*$", plain):
        try:
            docs = load_documents(part, display(path), "helmfile")
        except LoadError:
            continue
        for doc in docs:
            releases = doc.sequence("releases") if isinstance(doc, Mapping) else None
            out += [r for r in (releases.items if releases is not None else []) if isinstance(r, Mapping)]
    return out


def _values_of(entry: Node, directory: Path, top: Path, display: Any) -> Mapping | None:
    if isinstance(entry, Mapping):
        return None if "{{" in str(entry.to_data()) else entry
    if not isinstance(entry, Scalar) or not isinstance(entry.value, str) or "{{" in entry.value:
        return None
    path = (directory / entry.value).resolve()
    try:
        text = read_text_bounded(path, within=top)
        if "{{" in text and path.name.endswith(".gotmpl"):
            return None  # a template that reads other files: not followed
        docs = load_documents(text, display(path), "helmfile values")
    except (OSError, ValueError, LoadError):
        return None
    return docs[0] if docs and isinstance(docs[0], Mapping) else None


def resource_set_resources(resource_set: Mapping) -> list[Mapping]:
    """The objects a ResourceSet's ``spec.resources`` write with no template
    (``<< >>``) in them; their namespace is the ResourceSet's where unset."""
    out = []
    items = lookup(resource_set, ["spec", "resources"])
    for item in getattr(items, "items", ()):
        if isinstance(item, Mapping) and "<<" not in str(item.to_data()):
            out.append(item)
    return out


def _is_flux_instance_chart(release: Mapping, oci_url: Any) -> bool:
    """The chart is ``flux-instance`` (from a HelmRepository, or the
    OCIRepository a ``chartRef`` names)."""
    chart = _text(lookup(release, ["spec", "chart", "spec", "chart"]))
    if not chart and _text(lookup(release, ["spec", "chartRef", "kind"])) == "OCIRepository":
        namespace = _text(lookup(release, ["spec", "chartRef", "namespace"])) or \
            _text(lookup(release, ["metadata", "namespace"]))
        chart = oci_url(namespace, _text(lookup(release, ["spec", "chartRef", "name"])), release.origin.path)
    return oci_key(chart).rpartition("/")[2] == "flux-instance" if chart else False


def _sync(sync: Node | None, where: str) -> Sync | None:
    if not isinstance(sync, Mapping):
        return None
    url = _text(sync.get("url"))
    if not url:
        return None
    return Sync(_text(sync.get("kind")) or "GitRepository", url, _text(sync.get("path")), where,
                ref=_text(sync.get("ref")))


def _text(node: Node | None) -> str:
    return node.value if isinstance(node, Scalar) and isinstance(node.value, str) else ""
