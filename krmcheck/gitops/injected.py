"""Substitution sources an admission webhook adds to every Flux Kustomization.

Flux substitutes only what a Kustomization's own ``postBuild`` names, from
objects in its own namespace. kustomize-mutating-webhook (a chart many Flux
home labs install) lifts that limit: on each Kustomization CREATE and
UPDATE it writes the data of ConfigMaps and Secrets kept in its own
namespace into ``postBuild.substitute``. Where the repository installs it,
those objects are sources of every Kustomization, written or not.

The evidence is the chart's values, wherever they are written: a document
(a values file a ``configMapGenerator`` turns into ``valuesFrom``, or a
HelmRelease's ``spec.values``) whose ``image.repository`` names the
webhook's image, with its ``configMaps`` and ``secrets`` lists (each item a
``name``). Values that name neither list keep the chart's default, the
ConfigMap ``cluster-config``. The objects are read in the namespace of the
HelmRelease that installs the webhook, ``flux-system`` (the chart's
documented namespace) where it names none.
"""

from __future__ import annotations

from typing import NamedTuple

from krmcheck.tree.node import Mapping, Scalar, Sequence, lookup
from krmcheck.tree.origin import Origin

MARK = "kustomize-mutating-webhook"  # in the image's name, and in the chart's
DEFAULT_CONFIG_MAP = "cluster-config"
DEFAULT_NAMESPACE = "flux-system"


class Source(NamedTuple):
    kind: str  # ConfigMap or Secret
    namespace: str
    name: str
    origin: Origin  # where the values name it


def sources(documents: list[Mapping]) -> tuple[Source, ...]:
    """The sources the webhook adds, from the documents of files that name it."""
    found: list[Source] = []
    for doc in documents:
        values, namespace = doc, DEFAULT_NAMESPACE
        if doc.value("kind") == "HelmRelease":
            spec_values = lookup(doc, ["spec", "values"])
            if not isinstance(spec_values, Mapping):
                continue
            namespace = _text(lookup(doc, ["metadata", "namespace"])) or DEFAULT_NAMESPACE
            values = spec_values
        if MARK not in _text(lookup(values, ["image", "repository"])):
            continue
        named = [(kind, item) for kind, key in (("ConfigMap", "configMaps"), ("Secret", "secrets"))
                 for item in _items(values.get(key))]
        if not named and values.get("configMaps") is None:
            origin = values.origin
            found.append(Source("ConfigMap", namespace, DEFAULT_CONFIG_MAP, origin))
        for kind, item in named:
            name = item.get("name")
            if isinstance(name, Scalar) and isinstance(name.value, str) and name.value:
                found.append(Source(kind, namespace, name.value, name.origin))
    unique = {(s.kind, s.namespace, s.name): s for s in found}
    return tuple(unique.values())


def _items(node: object) -> list[Mapping]:
    return [i for i in node.items if isinstance(i, Mapping)] if isinstance(node, Sequence) else []


def _text(node: object) -> str:
    return node.value if isinstance(node, Scalar) and isinstance(node.value, str) else ""
