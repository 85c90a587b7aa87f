"""A resource in the build: its provenance tree plus kustomize's bookkeeping."""

from __future__ import annotations

from dataclasses import dataclass, field

from krmcheck.resource.resid import Gvk, ResId
from krmcheck.tree.node import Mapping, Node, Scalar
from krmcheck.tree.origin import Origin

# The label buildMetadata's managedByLabel writes, and the value kubectl's
# embedded kustomize gives it, naming its own build "(devel)" (a released
# kustomize writes kustomize-vX.Y.Z): the oracle's value, and so the build's.
MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "kustomize-(devel)"


@dataclass
class GeneratorInfo:
    """How a generated resource joins the others (behavior, hash suffix)."""

    behavior: str = "create"
    needs_hash: bool = True
    origin: Origin | None = None


@dataclass
class Resource:
    node: Mapping
    # Names and namespaces this resource had before prefix/suffix/namespace
    # transformers renamed it, oldest first; used to fix references.
    prev_ids: list[ResId] = field(default_factory=list)
    generator: GeneratorInfo | None = None
    needs_hash: bool = False
    # name prefixes / suffixes applied so far (kustomize's build annotations)
    prefixes: list[str] = field(default_factory=list)
    suffixes: list[str] = field(default_factory=list)
    # The `vars:` entries (kustomization nodes) bound to this resource where
    # they were declared (kustomize's refVarNames); resolved at the top level.
    ref_vars: list[Mapping] = field(default_factory=list)

    # --- identity -----------------------------------------------------------
    @property
    def api_version(self) -> str:
        v = self.node.value("apiVersion")
        return v if isinstance(v, str) else ""

    @property
    def kind(self) -> str:
        v = self.node.value("kind")
        return v if isinstance(v, str) else ""

    @property
    def gvk(self) -> Gvk:
        return Gvk.from_api_version(self.api_version, self.kind)

    @property
    def metadata(self) -> Mapping | None:
        return self.node.mapping("metadata")

    @property
    def name(self) -> str:
        md = self.metadata
        v = md.value("name") if md else None
        return v if isinstance(v, str) else ("" if v is None else str(v))

    @property
    def namespace(self) -> str:
        md = self.metadata
        v = md.value("namespace") if md else None
        return v if isinstance(v, str) else ""

    def id(self) -> ResId:
        return ResId(self.gvk, self.name, self.namespace)

    def orig_id(self) -> ResId:
        return self.prev_ids[0] if self.prev_ids else self.id()

    def all_ids(self) -> list[ResId]:
        return self.prev_ids + [self.id()]

    # --- edits ----------------------------------------------------------------
    def remember_id(self) -> None:
        """Call before renaming or moving: the current id joins ``prev_ids``."""
        self.prev_ids.append(self.id())

    def set_name(self, name: str, origin: Origin) -> None:
        md = self.node.setdefault_mapping("metadata", origin)
        node = md.items.get("name")
        if isinstance(node, Scalar):
            node.set(name, origin)
        else:
            md.items["name"] = Scalar(name, origin)

    def set_namespace(self, namespace: str, origin: Origin) -> None:
        md = self.node.setdefault_mapping("metadata", origin)
        node = md.items.get("namespace")
        if isinstance(node, Scalar):
            if node.value != namespace:
                node.set(namespace, origin)
        else:
            md.items["namespace"] = Scalar(namespace, origin)

    def annotations(self) -> Mapping | None:
        md = self.metadata
        return md.mapping("annotations") if md else None

    def labels(self) -> Mapping | None:
        md = self.metadata
        return md.mapping("labels") if md else None

    def copy(self, share: bool = False) -> "Resource":
        """An independent copy; with ``share``, its tree is copied only as it
        is looked into, for a resource that never changes again (a cached render)."""
        return Resource(self.node.share() if share else self.node.copy(), list(self.prev_ids),
                        GeneratorInfo(self.generator.behavior, self.generator.needs_hash,
                                      self.generator.origin) if self.generator else None,
                        self.needs_hash, list(self.prefixes), list(self.suffixes),
                        list(self.ref_vars))

    def field(self, *path: str) -> Node | None:
        node: Node | None = self.node
        for key in path:
            if not isinstance(node, Mapping):
                return None
            node = node.items.get(key)
        return node
