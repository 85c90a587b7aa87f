"""``buildMetadata``: annotations and a label that say where output came from.

- ``originAnnotations``: ``config.kubernetes.io/origin`` names the file a
  resource was read from (relative to the kustomization being built; a
  remote file by repo, ref and path in the repo), or for a generated
  resource the kustomization or config that generated it.
- ``transformerAnnotations``: ``alpha.config.kubernetes.io/transformations``
  lists every transformer that ran over a resource, in order.
- ``managedByLabel``: ``app.kubernetes.io/managed-by: kustomize-<version>``.

As in kustomize, only the kustomization being built decides (its list
replaces those of everything it includes), and any non-empty list makes the
build track origins while it runs: the transformer list needs to know whether
a resource had an origin when each transformer ran. What was not asked for is
removed at the end. The annotation texts are YAML written field by field in
kustomize's order, each line through the kustomize-compatible emitter.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from krmcheck.kustomize.kustomization import Kustomization
from krmcheck.kustomize.remote import RemoteFiles
from krmcheck.resource.files import Files
from krmcheck.resource.resource import MANAGED_BY, MANAGED_BY_VALUE, Resource
from krmcheck.tree.emit import emit
from krmcheck.tree.load import FAST_LOADER
from krmcheck.tree.node import Mapping, Node, Scalar
from krmcheck.tree.origin import Origin

ORIGIN = "config.kubernetes.io/origin"
TRANSFORMATIONS = "alpha.config.kubernetes.io/transformations"
ORIGIN_ANNOTATIONS, TRANSFORMER_ANNOTATIONS, MANAGED_BY_LABEL = (
    "originAnnotations", "transformerAnnotations", "managedByLabel")
BY = "buildMetadata"


@dataclass(frozen=True)
class Source:
    """kustomize's resource.Origin: where a resource or a transformer came from."""

    path: str = ""
    repo: str = ""
    ref: str = ""
    configured_in: str = ""
    configured_by: tuple[tuple[str, str], ...] = ()  # apiVersion, kind, name, namespace

    def text(self) -> str:
        """The YAML kustomize writes: fields in declaration order, empty ones left out."""
        out = [emit(Mapping({k: Scalar(v)})) for k, v in (
            ("path", self.path), ("repo", self.repo), ("ref", self.ref),
            ("configuredIn", self.configured_in)) if v]
        by: dict[str, Node] = {k: Scalar(v) for k, v in self.configured_by if v}
        if by:  # apiVersion < kind < name < namespace: sorted order is kustomize's order
            out.append(emit(Mapping({"configuredBy": Mapping(by)})))
        return "".join(out)

    def list_item(self) -> str:
        """This source as one item of the transformations list."""
        lines = self.text().splitlines(keepends=True)
        return "".join(("- " if i == 0 else "  ") + line for i, line in enumerate(lines))

    def configured(self, api_version: str, kind: str, name: str = "", namespace: str = "") -> Source:
        """The origin of what a config at this place generates or transforms."""
        return Source(repo=self.repo, ref=self.ref, configured_in=self.path,
                      configured_by=(("apiVersion", api_version), ("kind", kind),
                                     ("name", name), ("namespace", namespace)))


@dataclass(frozen=True)
class Stamper:
    """Writes the annotations during one build whose root asked for buildMetadata."""

    root: Path  # the directory being built: local paths are relative to it
    options: tuple[str, ...]
    origin: Origin  # the buildMetadata field, the origin of every value written here

    @staticmethod
    def of(k: Kustomization) -> Stamper | None:
        options = _options(k)
        if not options:
            return None
        o = k.origin(BY)
        return Stamper(k.directory, options, Origin(o.path, o.line, o.col, BY))

    # --- where things are ---------------------------------------------------------
    def place(self, files: Files, path: Path) -> Source:
        """A file as kustomize names it in origins."""
        if isinstance(files, RemoteFiles):
            if files.spec is None:
                return Source(path=files.url)
            rel = os.path.relpath(path, files.repo_root)
            if not rel.startswith(os.pardir):
                return Source(path=Path(rel).as_posix(), repo=files.spec.clone_url, ref=files.spec.ref)
        return Source(path=Path(os.path.relpath(path, self.root)).as_posix())

    def builtin(self, files: Files, kfile: Path, kind: str) -> Source:
        """A kustomization field's builtin generator or transformer."""
        return self.place(files, kfile).configured("builtin", kind)

    def plugin(self, files: Files, kfile: Path, config: Mapping) -> Source:
        """A generators:/transformers: config: from its file's origin annotation,
        or the kustomization itself for an inline config (as kustomize)."""
        where = _annotated(config) or self.place(files, kfile)
        md = config.mapping("metadata") or Mapping({})
        return where.configured(_text(config.value("apiVersion")), _text(config.value("kind")),
                                _text(md.value("name")), _text(md.value("namespace")))

    def made_by(self, files: Files, kfile: Path, by: str | Mapping) -> Source:
        """A builtin kind configured by the kustomization ``kfile``, or a plugin config."""
        return self.builtin(files, kfile, by) if isinstance(by, str) else self.plugin(files, kfile, by)

    # --- writing ----------------------------------------------------------------------
    def loaded(self, resources: list[Resource], files: Files, path: Path) -> None:
        """Resources read from ``path`` get its origin, replacing any they had."""
        text = self.place(files, path).text()
        for res in resources:
            _set_annotation(res, ORIGIN, text, self.origin)

    def generated(self, res: Resource, source: Source) -> None:
        """A generated resource keeps an origin it already has (a merge keeps
        the origin of the resource it merges into)."""
        behavior = res.generator.behavior if res.generator else "create"
        if behavior != "merge" and not _has(res, ORIGIN):
            _set_annotation(res, ORIGIN, source.text(), self.origin)

    def transformed(self, resources: list[Resource], source: Source) -> None:
        """A transformer ran over every resource of the accumulator; one
        without an origin is taken as made by it."""
        for res in resources:
            if not _has(res, ORIGIN):
                _set_annotation(res, ORIGIN, source.text(), self.origin)
                continue
            ann = res.annotations()
            before = ann.value(TRANSFORMATIONS) if ann is not None else None
            _set_annotation(res, TRANSFORMATIONS, _text(before) + source.list_item(), self.origin)

    def builtin_transformers(self, resources: list[Resource], k: Kustomization, files: Files) -> None:
        for kind in builtin_transformer_kinds(k):
            self.transformed(resources, self.builtin(files, k.path, kind))


def builtin_transformer_kinds(k: Kustomization) -> list[str]:
    """The builtin transformers a kustomization's fields configure, one per
    instance, in the order kustomize runs them."""
    kinds: list[str] = []
    if k.seq("patchesStrategicMerge"):
        kinds.append("PatchStrategicMergeTransformer")
    kinds += ["PatchTransformer"] * len(k.seq("patches"))
    for field_name, kind in (("namespace", "NamespaceTransformer"), ("namePrefix", "PrefixTransformer"),
                             ("nameSuffix", "SuffixTransformer")):
        value = k.string(field_name)
        if value and value[0]:
            kinds.append(kind)
    labels, common = k.seq("labels"), k.mapping("commonLabels")
    if labels or (common is not None and common.items):
        # one per labels entry, and one for commonLabels even when it is empty
        kinds += ["LabelTransformer"] * (len(labels) + 1)
    annotations = k.mapping("commonAnnotations")
    if annotations is not None and annotations.items:
        kinds.append("AnnotationsTransformer")
    kinds += ["PatchJson6902Transformer"] * len(k.seq("patchesJson6902"))
    kinds += ["ReplicaCountTransformer"] * len(k.seq("replicas"))
    kinds += ["ImageTagTransformer"] * (len(k.seq("images")) + len(k.seq("imageTags")))
    if k.seq("replacements"):
        kinds.append("ReplacementTransformer")
    return kinds


def finish(resources: list[Resource], stamper: Stamper | None) -> None:
    """At the end of the build: the managed-by label, and away with the
    annotations that were tracked but not asked for."""
    if stamper is None:
        return
    if MANAGED_BY_LABEL in stamper.options:
        for res in resources:
            _set_label(res, MANAGED_BY, MANAGED_BY_VALUE, stamper.origin)
    for option, key in ((ORIGIN_ANNOTATIONS, ORIGIN), (TRANSFORMER_ANNOTATIONS, TRANSFORMATIONS)):
        if option not in stamper.options:
            for res in resources:
                _remove_annotation(res, key)


# --- helpers --------------------------------------------------------------------------

def _options(k: Kustomization) -> tuple[str, ...]:
    return tuple(n.as_string() for n in k.seq(BY) if isinstance(n, Scalar))


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _has(res: Resource, key: str) -> bool:
    ann = res.annotations()
    return ann is not None and key in ann.items


def _annotated(config: Mapping) -> Source | None:
    md = config.mapping("metadata")
    ann = md.mapping("annotations") if md is not None else None
    text = ann.value(ORIGIN) if ann is not None else None
    if not isinstance(text, str):
        return None
    try:
        data = yaml.load(text, Loader=FAST_LOADER)
    except (yaml.YAMLError, RecursionError):
        return None  # not an origin kustomize wrote: the resource's own file is its origin
    if not isinstance(data, dict):
        return None
    return Source(path=str(data.get("path") or ""), repo=str(data.get("repo") or ""),
                  ref=str(data.get("ref") or ""))


def _set_in(parent: Mapping, key: str, value: str, origin: Origin) -> None:
    node: Node | None = parent.items.get(key)
    if isinstance(node, Scalar):
        node.set(value, origin)
    else:
        parent.items[key] = Scalar(value, origin)


def _set_annotation(res: Resource, key: str, value: str, origin: Origin) -> None:
    md = res.node.setdefault_mapping("metadata", origin)
    _set_in(md.setdefault_mapping("annotations", origin), key, value, origin)


def _set_label(res: Resource, key: str, value: str, origin: Origin) -> None:
    md = res.node.setdefault_mapping("metadata", origin)
    _set_in(md.setdefault_mapping("labels", origin), key, value, origin)


def _remove_annotation(res: Resource, key: str) -> None:
    md = res.metadata
    ann = res.annotations()
    if md is None or ann is None or key not in ann.items:
        return
    del ann.items[key]
    if not ann.items:
        del md.items["annotations"]
