"""kustomize's builtin transformers, as data: the order a kustomization's
fields run in (Kustomize v5.5.0, ``api/internal/target``'s builtin
transformer order), each with the builtin plugin kind that runs the same
code from a ``transformers:`` config and the module of this package that
holds it.

The build walks :data:`TRANSFORMERS` for a kustomization's fields; the
plugin kinds (``kinds.py``) are keyed by the same kinds. A module is
imported only when a kustomization uses one of its fields, so a build that
sets no ``images:`` never loads the images transformer.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

from krmcheck.resource.files import Files

if TYPE_CHECKING:
    from krmcheck.kustomize.transformerconfig import TransformerConfig


class Builtin(NamedTuple):
    kind: str  # the builtin plugin kind (``apiVersion: builtin``)
    fields: tuple[str, ...]  # the kustomization fields it serves
    module: str  # its module in krmcheck.kustomize.builtins
    run: str  # that module's function for the fields: run(kustomization, resources, env)


class FieldEnv(NamedTuple):
    """What a builtin transformer needs besides the kustomization's fields."""

    directory: Path  # the kustomization's
    files: Files
    load_restrictor: str
    tables: TransformerConfig  # which fields of which kinds each transformer touches


TRANSFORMERS: tuple[Builtin, ...] = (
    Builtin("PatchStrategicMergeTransformer", ("patchesStrategicMerge",), "patches", "strategic_merge_field"),
    Builtin("PatchTransformer", ("patches",), "patches", "patches_field"),
    Builtin("NamespaceTransformer", ("namespace",), "namespace", "from_kustomization"),
    Builtin("PrefixSuffixTransformer", ("namePrefix", "nameSuffix"), "prefix_suffix", "from_kustomization"),
    Builtin("LabelTransformer", ("labels", "commonLabels"), "labels", "labels_fields"),
    Builtin("AnnotationsTransformer", ("commonAnnotations",), "labels", "annotations_field"),
    Builtin("PatchJson6902Transformer", ("patchesJson6902",), "patches", "json6902_field"),
    Builtin("ReplicaCountTransformer", ("replicas",), "replicas", "from_kustomization"),
    Builtin("ImageTagTransformer", ("images", "imageTags"), "images", "from_kustomization"),
    Builtin("ReplacementTransformer", ("replacements",), "replacements", "from_kustomization"),
)


def module_of(builtin: Builtin) -> ModuleType:
    return importlib.import_module(f"krmcheck.kustomize.builtins.{builtin.module}")
