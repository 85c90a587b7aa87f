"""namespace: move every namespaced resource into one namespace.

Mirrors kustomize's namespace transformer (api/filters/namespace and
plugin/builtin/namespacetransformer in Kustomize v5.5.0): every resource's
current id is remembered, namespaced resources get ``metadata.namespace``,
the fields of the namespace table are set (a Namespace object's own name
only when its apiVersion is exactly ``v1``), and RoleBinding /
ClusterRoleBinding subjects named ``default`` get the namespace too.
"""

from __future__ import annotations

from krmcheck.kustomize import fieldspec
from krmcheck.kustomize.fieldspec import FieldSpec
from krmcheck.kustomize.transformerconfig import TransformerConfig, default_config
from krmcheck.resource.resid import is_cluster_scoped
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Scalar
from krmcheck.tree.origin import Origin
from krmcheck.kustomize.builtins.table import FieldEnv
from krmcheck.kustomize.kustomization import Kustomization

_METADATA_NAMESPACE = ("metadata", "namespace")
_METADATA_NAME = ("metadata", "name")
_BINDINGS = ("RoleBinding", "ClusterRoleBinding")
_SUBJECTS_NAMESPACE = ("subjects", "namespace")


def apply(resources: list[Resource], namespace: str, origin: Origin,
          config: TransformerConfig | None = None) -> None:
    if not namespace:
        return
    specs = (config or default_config()).namespace
    for res in resources:
        if not res.node.items:
            continue  # kustomize leaves empty objects alone
        res.remember_id()
        _transform(res, _specs_for(res, specs), namespace, origin)


def _specs_for(res: Resource, specs: tuple[FieldSpec, ...]) -> list[FieldSpec]:
    """The table minus what kustomize handles apart or skips for this object."""
    binding = res.kind in _BINDINGS
    out = []
    for spec in specs:
        if spec.path == _METADATA_NAMESPACE:
            continue
        if spec.path == _METADATA_NAME and res.api_version != "v1":
            continue
        if binding and spec.kind in _BINDINGS and spec.path == _SUBJECTS_NAMESPACE:
            continue
        out.append(spec)
    return out


def _transform(res: Resource, specs: list[FieldSpec], namespace: str, origin: Origin) -> None:
    if not is_cluster_scoped(res.gvk) and res.namespace != namespace:
        res.set_namespace(namespace, origin)
    if res.kind in _BINDINGS:
        _default_subjects(res, namespace, origin)
    for spec in specs:
        if spec.path == _METADATA_NAME and spec.matches(res.gvk):
            if res.name != namespace:
                res.set_name(namespace, origin)
            continue
        fieldspec.visit(res, spec, _setter(namespace, origin), origin)


def _default_subjects(res: Resource, namespace: str, origin: Origin) -> None:
    """Subjects named ``default`` (of any kind) get the namespace: kustomize's
    defaultOnly mode for role binding subjects."""
    subjects = res.node.sequence("subjects")
    for subject in subjects.items if subjects is not None else ():
        if isinstance(subject, Mapping) and subject.value("name") == "default":
            _setter(namespace, origin)(subject, "namespace")


def _setter(namespace: str, origin: Origin) -> fieldspec.Visit:
    def setter(parent: Mapping, key: str) -> None:
        node = parent.items.get(key)
        if isinstance(node, Scalar):
            if node.value != namespace:
                node.set(namespace, origin)
        elif node is None:
            parent.items[key] = Scalar(namespace, origin)
    return setter


# --- the kustomization's field (builtins/table.py) ---------------------------

def from_kustomization(k: Kustomization, resources: list[Resource], env: FieldEnv) -> None:
    """``namespace:``."""
    ns = k.string("namespace")
    if ns and ns[0]:
        apply(resources, ns[0], ns[1], env.tables)
