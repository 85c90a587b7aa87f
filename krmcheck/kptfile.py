"""The validators of a Kptfile next to a kustomization.

A kpt package that is also a kustomization declares its checks in the
Kptfile's ``pipeline.validators`` (``kpt fn render`` runs them). krmcheck
reads the same entries (``exec`` or ``image``, with ``configPath`` or
``configMap``, and ``name``) and runs them over the root's rendered output,
so a repository keeps one declaration for both tools. Paths are relative to
the Kptfile's directory, as kpt has them.

Not supported yet: ``selectors`` and ``exclude`` (an error at their line, so
a validator never silently sees more or fewer resources than under kpt).
``pipeline.mutators`` are kpt's business, not a check, and are ignored.
"""

from __future__ import annotations

import os

from pathlib import Path

from krmcheck.config import ConfigError, external_validator
from krmcheck.resource.function import ExternalValidator
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import read_bounded
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar
from krmcheck.tree.node import Sequence as SequenceNode
from krmcheck.tree.origin import Location

FILE_NAME = "Kptfile"
KIND = "Kptfile"
# kpt completes an image name without a registry path with its catalog's
# (kpt's Function.AddDefaultImagePathPrefix): "kubeval:v0.3" runs gcr.io/kpt-fn/kubeval:v0.3.
DEFAULT_IMAGE_PREFIX = "gcr.io/kpt-fn/"
_FIELDS = frozenset({"exec", "image", "configPath", "configMap", "name"})
_UNSUPPORTED = ("selectors", "exclude")


def validators(directory: Path, display: str) -> tuple[ExternalValidator, ...]:
    """The validators of ``directory/Kptfile`` (none without one);
    ``display`` is the directory's repo-relative name."""
    path = directory / FILE_NAME
    if not os.path.isfile(path):
        return ()
    shown = f"{display}/{FILE_NAME}" if display not in ("", ".") else FILE_NAME
    kptfile = _load(path, shown)
    pipeline = kptfile.mapping("pipeline")
    entries = pipeline.sequence("validators") if pipeline is not None else None
    return tuple(_validator(e, directory, shown) for e in (entries or SequenceNode()).items)


def _load(path: Path, shown: str) -> Mapping:
    try:
        docs = load_documents(read_bounded(path).decode("utf-8"), shown, by="Kptfile")
    except OSError as e:
        raise BuildError(f"cannot read {shown}: {e.strerror}") from None
    except LoadError as e:
        raise BuildError(e.message, Location(e.path, e.line, e.col)) from None
    if len(docs) != 1 or not isinstance(docs[0], Mapping) or docs[0].value("kind") != KIND:
        where = docs[0].origin if docs else None
        raise BuildError(f"{shown} must hold one object of kind {KIND}", where)
    return docs[0]


def _validator(entry: Node, directory: Path, shown: str) -> ExternalValidator:
    if isinstance(entry, Mapping):
        _check_fields(entry)
    try:
        return external_validator(_as_entry(entry), directory, shown)
    except ConfigError as e:
        loc, message = e.problems[0]
        raise BuildError(f"pipeline.validators: {message}", loc) from None


def _check_fields(entry: Mapping) -> None:
    for key, node in entry.items.items():
        if key in _UNSUPPORTED:
            raise BuildError(f"pipeline.validators: {key} is not supported yet by krmcheck", node.origin)
        if key not in _FIELDS:
            raise BuildError(f"pipeline.validators: unknown field '{key}' "
                             f"(known: {', '.join(sorted(_FIELDS))})", node.origin)


def _as_entry(entry: Node) -> Node:
    """The entry with kpt's image shorthand completed."""
    if not isinstance(entry, Mapping):
        return entry
    image = entry.get("image")
    if not isinstance(image, Scalar) or not image.as_string() or "/" in image.as_string():
        return entry
    completed = entry.copy()
    completed.items["image"] = Scalar(DEFAULT_IMAGE_PREFIX + image.as_string(), image.origin, image.trail)
    return completed
