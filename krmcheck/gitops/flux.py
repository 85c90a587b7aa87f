"""Flux Kustomizations (kustomize.toolkit.fluxcd.io): what kustomize-controller
renders for one, in its documented order.

1. ``spec.path`` (relative to the top of the source): its kustomization file,
   or, where it has none, one generated to list every manifest below it and
   every directory below it holding a kustomization file (fluxcd/pkg
   kustomize_generator.go);
2. the object's own fields written into that kustomization, as the
   controller edits it in place: ``targetNamespace`` (namespace),
   ``namePrefix``/``nameSuffix`` (replaced), ``patches`` and ``components``
   (appended), ``images`` (merged by name);
3. kustomize build, with ``LoadRestrictionsNone`` as the controller builds;
4. post-build substitution (``postBuild.substitute`` over
   ``postBuild.substituteFrom``, later sources winning), skipping objects
   labelled or annotated ``kustomize.toolkit.fluxcd.io/substitute: disabled``;
5. ``commonMetadata`` labels and annotations on every object.
"""

from __future__ import annotations

import posixpath

import base64
import binascii
import os
import re
from pathlib import Path
from typing import Iterable, Union


from krmcheck import applied as krmapplied
from krmcheck import discover
from krmcheck.gitops import SYNC_PATH
from krmcheck.gitops.envsubst import NAME, Unknown, Variable
from krmcheck.gitops.objects import Objects
from krmcheck.gitops.root import FLUX, ControllerRoot, confined
from krmcheck.gitops.sourceignore import SourceIgnore
from krmcheck.gitops.substitute import Problem
from krmcheck.kustomize import kustomization as kfile
from krmcheck.kustomize.kustomization import Kustomization
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import REPOSITORY, Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, lookup
from krmcheck.tree.origin import Origin

GROUP = "kustomize.toolkit.fluxcd.io/"
PLACEHOLDER = re.compile(r"\$\{#?([_a-zA-Z][_a-zA-Z0-9]*)[^}]*\}")  # ${VAR}, ${VAR:=default}, ...
BY = "flux Kustomization"


def is_kustomization(res: Resource) -> bool:
    return res.kind == "Kustomization" and res.api_version.startswith(GROUP)


def source_name(res: Resource) -> tuple[str, str, str]:
    """(kind, namespace, name) of the object's ``sourceRef``."""
    ref = lookup(res.node, ["spec", "sourceRef"])
    if not isinstance(ref, Mapping):
        return ("", "", "")
    return (_str(ref.get("kind")), _str(ref.get("namespace")) or res.namespace, _str(ref.get("name")))


def make_root(res: Resource, top: Path, files: Files, objects: Objects,
              path_in_source: str | None = None, tree: str = "") -> ControllerRoot:
    """The root for a Flux Kustomization whose source is this repository
    (``path_in_source``: its path in the repository, where the source is an
    artifact made from it; ``tree``: where it was found, whose applied
    ConfigMaps and Secrets its variables come from first)."""
    spec = res.node.mapping("spec") or Mapping()
    path = _str(spec.get("path")).strip() if path_in_source is None else path_in_source
    directory = confined(top, path)
    name_node = lookup(res.node, ["metadata", "name"])
    origin = name_node.origin if name_node is not None else res.node.origin
    variables, unknown, secrets, problems = _variables(res, spec, objects, tree)
    return ControllerRoot(
        name=f"flux:{res.namespace or 'default'}/{res.name}", controller=FLUX, directory=directory,
        obj=res.node.copy(), origin=origin, restrictor=REPOSITORY, variables=variables,
        unknown_source=unknown, secret_values=secrets, problems=tuple(problems), tree=tree)


def _str(node: Node | None) -> str:
    return node.value if isinstance(node, Scalar) and isinstance(node.value, str) else ""


# --- variables ---------------------------------------------------------------------

Found = Union[Variable, Unknown]


def _variables(res: Resource, spec: Mapping, objects: Objects, tree: str
               ) -> tuple[tuple[tuple[str, Found], ...] | None, str, frozenset[str], list[Problem]]:
    """The variables, from ``substituteFrom`` objects as the cluster holds
    them (fluxcd/pkg kustomize_varsub.go ``LoadVariables`` reads them from
    the cluster): ConfigMaps and Secrets a controller root of the repository
    applies, or that files under ``gitops.cluster-objects`` hold. One the
    repository holds but nothing applies (a template for a bootstrap
    script) leaves its variables unknown, as one it does not hold at all.
    Those an admission webhook of the repository adds to every Kustomization
    (:mod:`krmcheck.gitops.injected`) come first, with or without a
    ``postBuild``: the Kustomization's own sources win over them."""
    post = spec.mapping("postBuild")
    added = objects.injected_sources()
    if post is None and not added:
        return None, "", frozenset(), []
    found: dict[str, Found] = {}
    problems: list[Problem] = []
    unknown = ""
    secrets: set[str] = set()
    near = res.node.origin.path
    # (kind, namespace, name, optional, origin, whether a webhook adds it), read in order
    refs = [(a.kind, a.namespace, a.name, False, a.origin, True) for a in added]
    own = post.sequence("substituteFrom") if post is not None else None
    for ref in own.items if own is not None else ():
        if isinstance(ref, Mapping):
            refs.append((_str(ref.get("kind")), res.namespace, _str(ref.get("name")),
                         ref.value("optional") is True, ref.origin, False))
    for kind, namespace, name, optional, origin, by_webhook in refs:
        obj = objects.applied(kind, namespace, name, near, tree)
        where = f"{kind}/{name}"
        if obj is None and by_webhook:
            unknown = unknown or where
            problems.append(Problem(
                f"{where}, whose data kustomize-mutating-webhook adds to every Flux Kustomization's "
                f"substitution, is not applied by the repository (in namespace {namespace}): its "
                f"variables are unknown and values holding them are not judged", "info", origin))
            continue
        if obj is None:
            held = objects.get(kind, namespace, name, near)
            if held is not None and posixpath.dirname(held.origin.path) == posixpath.dirname(near):
                # beside the Kustomization, in a directory nothing in the
                # repository applies: the cluster's sync path, which bootstrap
                # or a FluxInstance applies from outside the repository's roots
                obj = held
                problems.append(Problem(
                    f"substituteFrom {where} is written beside this Kustomization in "
                    f"{held.origin.path}, in a directory nothing in the repository applies: taken as "
                    f"the cluster's sync path (what bootstrap or a FluxInstance applies), its values "
                    f"are used", "info", origin,
                    summary=SYNC_PATH + posixpath.dirname(held.origin.path)))
            elif held is not None:
                # written in the repository, applied by nothing in it: its
                # values in the cluster are not these (or not known)
                unknown = unknown or where
                problems.append(Problem(
                    f"substituteFrom {where} is written in {held.origin.path}, but no Flux "
                    f"Kustomization or Argo CD Application of the repository applies it: its "
                    f"variables are unknown and values holding them are not judged (list the file "
                    f"under gitops.cluster-objects if it is applied another way)", "info", origin))
            elif not optional:
                # it may be made outside the repository (by hand, by another tool)
                unknown = unknown or where
                problems.append(Problem(
                    f"substituteFrom {where} is not in the repository (in namespace "
                    f"{namespace or 'default'}): its variables are left as written",
                    "info", origin))
            if obj is None:
                continue
        data = object_data(obj, kind)
        if data is None:
            unknown = unknown or where  # encrypted (SOPS): the values cannot be read here
            continue
        for key, value in data:
            found[key] = Variable(value.value.replace("\n", ""), value.origin)
            if kind == "Secret":
                secrets.add(value.value)
    inline = post.mapping("substitute") if post is not None else None
    for key, node in (inline.items.items() if inline is not None else ()):
        if isinstance(node, Scalar) and isinstance(node.value, str):
            found[key] = Variable(node.value.replace("\n", ""), node.origin)
        else:
            problems.append(Problem(
                f"postBuild.substitute.{key} must be a string: quote the value", "error", node.origin))
    for key, variable in found.items():
        if not NAME.match(key):
            origin = variable.origin if isinstance(variable, Variable) else res.node.origin
            problems.append(Problem(f"'{key}' var name is invalid, must match "
                                    f"'^[_[:alpha:]][_[:alpha:][:digit:]]*$'", "error", origin))
    if not found and not unknown:
        return None, "", frozenset(), problems  # nothing to substitute: the controller skips it
    return tuple(found.items()), unknown, frozenset(secrets), problems


class _Value:
    __slots__ = ("value", "origin")

    def __init__(self, value: str, origin: Origin) -> None:
        self.value = value
        self.origin = origin


def object_data(obj: Mapping, kind: str) -> list[tuple[str, _Value]] | None:
    """A ConfigMap's ``data``, a Secret's decoded ``data`` and ``stringData``;
    None when the values are encrypted."""
    if "sops" in obj.items:
        return None
    out: list[tuple[str, _Value]] = []
    data = obj.mapping("data")
    for key, node in (data.items.items() if data is not None else ()):
        if not isinstance(node, Scalar):
            continue
        text = node.as_string()
        if kind == "Secret":
            try:
                text = base64.b64decode(text, validate=True).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                continue
        out.append((key, _Value(text, node.origin)))
    if kind == "Secret":
        string_data = obj.mapping("stringData")
        for key, node in (string_data.items.items() if string_data is not None else ()):
            if isinstance(node, Scalar):
                out.append((key, _Value(node.as_string(), node.origin)))
    return out


# --- the kustomization the controller builds ----------------------------------------

def kustomization(root: ControllerRoot, files: Files) -> Kustomization:
    """The directory's kustomization amended with the object's fields, or the
    one the controller generates for a directory without one."""
    spec = root.obj.mapping("spec") or Mapping()
    left_out = root.ignore.excludes(root.directory) if root.ignore is not None else None
    if left_out is not None and root.ignore is not None:
        raise BuildError(f"kustomization path not found: {files.display(root.directory)} is left out of "
                         f"the source by {root.ignore.describe(left_out)}", _at(spec, "path", root.origin))
    own = kfile.find_file(root.directory) if os.path.isdir(root.directory) else None
    if own is not None and root.ignore is not None and root.ignore.excludes(own) is not None:
        own = None  # not in the artifact: the controller generates one
    if not os.path.isdir(root.directory):
        written = _str(spec.get("path"))
        unsubstituted = PLACEHOLDER.search(written)
        if unsubstituted is not None:
            # the Kustomization came through no substitution that defines it
            raise BuildError(f"spec.path {written!r} holds {unsubstituted.group(0)}, which nothing "
                             f"substituted: the variable {unsubstituted.group(1)} is not defined where "
                             f"this Kustomization is applied", _at(spec, "path", root.origin))
        raise BuildError(f"kustomization path not found: {files.display(root.directory)}",
                         _at(spec, "path", root.origin))
    if own is not None:
        k = kfile.load(root.directory, files, _at(spec, "path", root.origin), empty_ok=True)
        node = k.node.copy()
        path, display = k.path, k.display
        resources = node.get("resources")
        if not (isinstance(resources, Sequence) and resources.items):
            # The controller rewrites the file through kustomize's type; one
            # with no resources gets buildMetadata [originAnnotations] (in
            # place of any it has), so that an empty or comments-only file
            # builds to nothing rather than failing (fluxcd/pkg
            # kustomize_generator.go, since 2024).
            node.items["buildMetadata"] = Sequence([Scalar("originAnnotations", k.node.origin)],
                                                   k.node.origin)
    else:
        node = generated(root.directory, _at(spec, "path", root.origin), root.ignore)
        path = root.directory / "kustomization.yaml"
        display = f"{files.display(root.directory)} (generated by kustomize-controller)"
    amend(node, spec, root.directory)
    return Kustomization(path, display, node)


def applying_namespace(directory: Path, top: Path, applied: Path) -> str | None:
    """The ``targetNamespace`` ("" for none) of a Flux Kustomization written
    in a YAML file directly in ``directory`` whose ``spec.path`` is the
    directory ``applied``; None when no file there holds one."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return None
    for name in names:
        if name.endswith((".yaml", ".yml")):
            for built, target in krmapplied.flux_kustomizations(directory / name, top):
                if built == applied:
                    return target
    return None


def _at(spec: Mapping, key: str, default: Origin) -> Origin:
    n = spec.get(key)
    return n.origin if n is not None else default


def generated(directory: Path, origin: Origin, ignore: SourceIgnore | None = None) -> Mapping:
    """Every manifest below ``directory`` and every directory below it that
    holds a kustomization file (whose contents it then leaves to it), of
    what the source's artifact holds (fluxcd/pkg kustomize_generator.go
    ``scanManifests`` walks the artifact)."""
    entries: list[Node] = []
    for rel in scan(directory, ignore):
        entries.append(Scalar(rel, origin))
    return Mapping({
        "apiVersion": Scalar("kustomize.config.k8s.io/v1beta1", origin),
        "kind": Scalar("Kustomization", origin),
        "resources": Sequence(entries, origin),
    }, origin)


def scan(directory: Path, ignore: SourceIgnore | None = None) -> list[str]:
    """``ignore``: what the source leaves out, which is not there to find."""
    found: list[str] = []
    for here, dirnames, filenames in os.walk(directory):
        dirnames.sort()
        for d in list(dirnames):
            if d in discover.SKIP_DIRS or d.startswith("."):
                dirnames.remove(d)
            elif ignore is not None and ignore.excludes(Path(here) / d) is not None:
                dirnames.remove(d)
            elif _kustomization_in(Path(here) / d, ignore):
                dirnames.remove(d)  # (the build reports two kustomization files in one)
                found.append(_rel(Path(here) / d, directory))
        for name in sorted(filenames):
            path = Path(here) / name
            if ignore is not None and ignore.excludes(path) is not None:
                continue
            if path.suffix in discover.MANIFEST_SUFFIXES and discover.is_manifest(path):
                found.append(_rel(path, directory))
    return sorted(found)


def _kustomization_in(directory: Path, ignore: SourceIgnore | None) -> bool:
    try:
        found = kfile.find_file(directory)
    except BuildError:
        return True  # two of them: the build reports it
    return found is not None and (ignore is None or ignore.excludes(found) is None)


def _rel(path: Path, directory: Path) -> str:
    return "./" + path.relative_to(directory).as_posix()


def amend(node: Mapping, spec: Mapping, directory: Path) -> None:
    """Write the controller's fields into a kustomization tree."""
    for field, key in (("targetNamespace", "namespace"), ("namePrefix", "namePrefix"),
                       ("nameSuffix", "nameSuffix")):
        value = spec.get(field)
        if isinstance(value, Scalar) and isinstance(value.value, str):
            node.items[key] = _copied(value)
    patches = spec.sequence("patches")
    if patches is not None and patches.items:
        list_field(node, "patches").items.extend(_copied(p) for p in patches.items)
    components = spec.sequence("components")
    ignore_missing = spec.value("ignoreMissingComponents") is True
    for c in components.items if components is not None else ():
        if isinstance(c, Scalar) and isinstance(c.value, str):
            if ignore_missing and not os.path.exists(directory / c.value):
                continue
            list_field(node, "components").items.append(_copied(c))
    images = spec.sequence("images")
    for image in images.items if images is not None else ():
        if isinstance(image, Mapping):
            _merge_image(list_field(node, "images"), image)


def _copied(n: Node) -> Node:
    """A node of the object, moved into the kustomization with its origin:
    what it makes points at the object's line."""
    return n.copy()


def list_field(node: Mapping, key: str) -> Sequence:
    """The list under ``key`` of a kustomization being amended, made empty
    when absent (or null)."""
    seq = node.items.get(key)
    if not isinstance(seq, Sequence):
        seq = Sequence([], node.origin)
        node.items[key] = seq
    return seq


def _merge_image(images: Sequence, image: Mapping) -> None:
    """An entry with the same name is updated (newName; newTag and digest
    together), as the controller does; otherwise the entry is added."""
    name = image.value("name")
    for entry in images.items:
        if isinstance(entry, Mapping) and entry.value("name") == name:
            if image.value("newName"):
                entry.items["newName"] = _copied(image.items["newName"])
            if image.value("newTag") or image.value("digest"):
                for key in ("newTag", "digest"):
                    if image.value(key):
                        entry.items[key] = _copied(image.items[key])
                    else:
                        entry.items.pop(key, None)
            return
    images.items.append(_copied(image))


# --- after the build -----------------------------------------------------------------

OWNER_LABELS = ("kustomize.toolkit.fluxcd.io/name", "kustomize.toolkit.fluxcd.io/namespace")


def owner_labels(resources: Iterable[Resource], root: ControllerRoot,
                 keys: tuple[str, str] = OWNER_LABELS) -> None:
    """The labels kustomize-controller puts on every object it applies, naming
    its Kustomization (fluxcd/pkg ssa ``ResourceManager.SetOwnerLabels``,
    called by the controller's ``reconcile`` before ``commonMetadata``),
    each at the object's name line; ``keys``: helm-controller's, which its
    ``OriginLabels`` post-renderer puts on what a HelmRelease installs."""
    name, namespace = lookup(root.obj, ["metadata", "name"]), lookup(root.obj, ["metadata", "namespace"])
    given = (_str(name), _str(namespace) or "default")
    origins = (root.origin, namespace.origin if namespace is not None else root.origin)
    for res in resources:
        labels = res.node.setdefault_mapping("metadata", root.origin).setdefault_mapping("labels", root.origin)
        for key, value, origin in zip(keys, given, origins):
            labels.items[key] = Scalar(value, origin)


def common_metadata(resources: Iterable[Resource], obj: Mapping) -> None:
    """``spec.commonMetadata`` labels and annotations on every object."""
    meta = lookup(obj, ["spec", "commonMetadata"])
    if not isinstance(meta, Mapping):
        return
    for field in ("labels", "annotations"):
        given = meta.mapping(field)
        if given is None:
            continue
        for res in resources:
            metadata = res.node.setdefault_mapping("metadata", given.origin)
            target = metadata.setdefault_mapping(field, given.origin)
            for key, value in given.items.items():
                target.items[key] = value.copy()
