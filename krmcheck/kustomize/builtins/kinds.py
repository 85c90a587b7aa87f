"""kustomize's builtin plugin kinds (``apiVersion: builtin``), run in process.

Each kind reads its config the way the builtin plugin of Kustomize v5.5.0
does (``api/internal/builtins``) and hands the work to the module of this
package that also serves the kustomization field (``prefix_suffix.py`` for
PrefixSuffixTransformer, ``namespace.py`` for NamespaceTransformer...), as
kustomize runs the same plugin for the field and for the config.
Every value a config writes gets the origin of the config line that asked
for it (the ``prefix:`` line, a label's line, ``newTag:``...).

``SortOrderTransformer`` is deliberately absent: kustomize does not wire it
as a builtin plugin (kubernetes-sigs/kustomize#3913), so listing it is the
same "unable to load builtin" error.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Callable, ClassVar

from krmcheck.kustomize import fieldspec
from krmcheck.kustomize.builtins import helm, images, labels, patches, prefix_suffix, replacements, replicas
from krmcheck.kustomize.builtins import namespace as ns_builtin
from krmcheck.kustomize.fieldspec import FieldSpec
from krmcheck.kustomize.generators import generate
from krmcheck.kustomize.hashing import hashed_name
from krmcheck.kustomize.plugins import GENERATOR, TRANSFORMER, Config, Context, Plugin
from krmcheck.kustomize.transformerconfig import TransformerConfig
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import is_cluster_scoped
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Origin

Make = Callable[[Config, Context], list[Resource]]
Apply = Callable[[Config, Context, list[Resource]], None]


@dataclass(frozen=True)
class BuiltinGenerator:
    make: Make
    roles: ClassVar[frozenset[str]] = frozenset({GENERATOR})

    def run(self, config: Config, ctx: Context, resources: list[Resource]) -> list[Resource]:
        return self.make(config, ctx)


@dataclass(frozen=True)
class BuiltinTransformer:
    apply: Apply
    roles: ClassVar[frozenset[str]] = frozenset({TRANSFORMER})

    def run(self, config: Config, ctx: Context, resources: list[Resource]) -> list[Resource]:
        self.apply(config, ctx, resources)
        return resources


# --- reading configs ------------------------------------------------------------

def _string(config: Config, key: str, parent: Mapping | None = None) -> tuple[str, Origin]:
    node = (parent if parent is not None else config.node).get(key)
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return "", config.at
    if not isinstance(node, Scalar):
        raise BuildError(f"{config.describe()}: {key} must be a string", node.origin)
    return node.as_string(), node.origin


def _map(config: Config, key: str) -> Mapping | None:
    node = config.node.get(key)
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return None
    if not isinstance(node, Mapping):
        raise BuildError(f"{config.describe()}: {key} must be a map", node.origin)
    return node


def _specs(config: Config, required: bool = False) -> list[FieldSpec]:
    node = config.node.get("fieldSpecs")
    if node is None or (isinstance(node, Scalar) and node.value is None):
        if required:
            raise BuildError(f"{config.describe()}: fieldSpecs is required", config.at)
        return []
    if not isinstance(node, Sequence):
        raise BuildError(f"{config.describe()}: fieldSpecs must be a list", node.origin)
    return [FieldSpec.from_dict(_spec_data(config, item)) for item in node]


def _spec_data(config: Config, item: Node) -> dict:
    if not isinstance(item, Mapping):
        raise BuildError(f"{config.describe()}: a fieldSpecs entry must be a map", item.origin)
    return item.to_data()


# --- generators ---------------------------------------------------------------------

def _configmap(config: Config, ctx: Context) -> list[Resource]:
    return [generate("ConfigMap", config.node, None, ctx.kdir, ctx.files, ctx.restrictor, ctx.fetch_file)]


def _secret(config: Config, ctx: Context) -> list[Resource]:
    return [generate("Secret", config.node, None, ctx.kdir, ctx.files, ctx.restrictor, ctx.fetch_file)]


def _iam_policy(config: Config, ctx: Context) -> list[Resource]:
    """A GKE workload-identity ServiceAccount (the only cloud kustomize knows)."""
    cloud, cloud_at = _string(config, "cloud")
    if cloud != "gke":
        raise BuildError(f"{config.describe()}: cloud provider '{cloud}' not supported yet", cloud_at)
    k8s = config.node.mapping("kubernetesService") or Mapping({}, config.at)
    gsa = config.node.mapping("serviceAccount") or Mapping({}, config.at)
    name, name_at = _string(config, "name", k8s)
    sa, sa_at = _string(config, "name", gsa)
    project, _ = _string(config, "projectId", gsa)
    here = config.at
    md = Mapping({"annotations": Mapping({"iam.gke.io/gcp-service-account": Scalar(
        f"{sa}@{project}.iam.gserviceaccount.com", sa_at)}, sa_at),
        "name": Scalar(name, name_at)}, here)
    namespace, ns_at = _string(config, "namespace", k8s)
    if namespace:
        md.items["namespace"] = Scalar(namespace, ns_at)
    node = Mapping({"apiVersion": Scalar("v1", here), "kind": Scalar("ServiceAccount", here),
                    "metadata": md}, here)
    return [Resource(node)]


def _helm(config: Config, ctx: Context) -> list[Resource]:
    return helm.inflate(helm.Chart.from_config(config.node), _helm_env(ctx))


def _helm_env(ctx: Context) -> helm.HelmEnv:
    return helm.HelmEnv(ctx.kdir, ctx.files, ctx.enable_helm, ctx.helm_command, ctx.network)


# --- transformers ----------------------------------------------------------------------

def _source(ctx: Context) -> patches.PatchSource:
    return patches.PatchSource(ctx.kdir, ctx.files, ctx.restrictor)


def _patch(config: Config, ctx: Context, resources: list[Resource]) -> None:
    """PatchTransformer: the config reads like a ``patches:`` entry."""
    docs = patches.load_patch(config.node, _source(ctx))
    tnode = config.node.mapping("target")
    selector = patches.Selector.from_node(tnode) if tnode is not None else None
    if patches.is_json_patch(docs):
        if selector is None:
            raise BuildError(f"{config.describe()}: a JSON 6902 patch needs a target", config.at)
        patches.json6902(resources, docs[0], selector, config.at)
        return
    patches.strategic(resources, docs, selector, config.at,
                      patches.PatchOptions.from_node(config.node))


def _patch_strategic(config: Config, ctx: Context, resources: list[Resource]) -> None:
    """PatchStrategicMergeTransformer: ``paths`` (files or inline) and ``patches`` (inline)."""
    docs: list[Node] = []
    paths = config.node.get("paths")
    inline = config.node.get("patches")
    given = isinstance(inline, Scalar) and bool(inline.value)
    if not (isinstance(paths, Sequence) and paths.items) and not given:
        raise BuildError(f"{config.describe()}: empty file path and empty patch content", config.at)
    if isinstance(paths, Sequence):
        for item in paths:
            docs += patches.load_patch(item, _source(ctx), comments=True)
    if isinstance(inline, Scalar) and given:
        docs += patches.load_patch(Mapping({"patch": inline}, inline.origin), _source(ctx))
    if not patches.holds_patch(docs):
        raise BuildError(f"{config.describe()}: patch appears to be empty", config.at)
    patches.strategic(resources, docs, None, config.at)


def _patch_json6902(config: Config, ctx: Context, resources: list[Resource]) -> None:
    target = config.node.mapping("target")
    if target is None or not target.value("name"):
        raise BuildError(f"{config.describe()}: must specify the target name", config.at)
    path, op = config.node.get("path"), config.node.get("jsonOp")
    given = {k: v for k, v in (("path", path), ("patch", op))
             if isinstance(v, Scalar) and v.value not in (None, "")}
    if len(given) != 1:
        what = "empty file path and empty jsonOp" if not given else "must specify a file path or jsonOp, not both"
        raise BuildError(f"{config.describe()}: {what}", config.at)
    docs = patches.load_patch(Mapping(dict(given), config.at), _source(ctx))
    if not docs or not isinstance(docs[0], Sequence):
        raise BuildError(f"{config.describe()}: a JSON 6902 patch must be a list of operations", config.at)
    patches.json6902(resources, docs[0], patches.Selector.from_node(target), config.at)


def _labels(config: Config, ctx: Context, resources: list[Resource]) -> None:
    node = _map(config, "labels")
    if node is not None:
        labels.apply(resources, labels.pairs(node), _specs(config), node.origin)


def _annotations(config: Config, ctx: Context, resources: list[Resource]) -> None:
    node = _map(config, "annotations")
    if node is not None:
        labels.apply(resources, labels.pairs(node), _specs(config), node.origin)


def _namespace(config: Config, ctx: Context, resources: list[Resource]) -> None:
    """NamespaceTransformer: the namespace transformer with the config's
    field specs as its table; ``unsetOnly`` leaves namespaced objects alone."""
    md = config.node.mapping("metadata")
    namespace, origin = _string(config, "namespace", md) if md is not None else ("", config.at)
    if not namespace:
        return
    unset_only = config.node.value("unsetOnly") is True
    chosen = [r for r in resources if not (unset_only and r.namespace)]
    ns_builtin.apply(chosen, namespace, origin, TransformerConfig(namespace=tuple(_specs(config))))


def _prefix_suffix(config: Config, ctx: Context, resources: list[Resource]) -> None:
    """PrefixSuffixTransformer runs as a prefix then a suffix transformer."""
    _prefix(config, ctx, resources)
    _suffix(config, ctx, resources)


def _prefix(config: Config, ctx: Context, resources: list[Resource]) -> None:
    """PrefixTransformer: the namePrefix transformer with the config's field
    specs as its table."""
    prefix, origin = _string(config, "prefix")
    specs = tuple(_specs(config, required=True))
    if specs:  # an empty table renames nothing (the field's own falls back to metadata/name)
        prefix_suffix.apply(resources, prefix, "", origin, TransformerConfig(name_prefix=specs))


def _suffix(config: Config, ctx: Context, resources: list[Resource]) -> None:
    """SuffixTransformer: the nameSuffix transformer with the config's field
    specs as its table."""
    suffix, origin = _string(config, "suffix")
    specs = tuple(_specs(config, required=True))
    if specs:
        prefix_suffix.apply(resources, "", suffix, origin, TransformerConfig(name_suffix=specs))


def _image_tag(config: Config, ctx: Context, resources: list[Resource]) -> None:
    node = _map(config, "imageTag")
    if node is not None:
        images.apply(resources, node, TransformerConfig(images=tuple(_specs(config))))


def _replica_count(config: Config, ctx: Context, resources: list[Resource]) -> None:
    node = _map(config, "replica")
    if node is not None:
        replicas.apply(resources, node, TransformerConfig(replicas=tuple(_specs(config))))


def _hash(config: Config, ctx: Context, resources: list[Resource]) -> None:
    """HashTransformer: give generated resources their hash suffix now.
    kustomize leaves them marked, so the build's own hash pass appends a
    second suffix (``name-<h>-<h>``, checked with kubectl)."""
    for res in resources:
        if res.needs_hash:
            res.remember_id()
            res.set_name(hashed_name(res.name, res), config.at)


def _replacement(config: Config, ctx: Context, resources: list[Resource]) -> None:
    node = config.node.get("replacements")
    entries = node.items if isinstance(node, Sequence) else []
    replacements.run(resources, entries, replacements.Source(ctx.kdir, ctx.files, ctx.restrictor))


# --- ValueAddTransformer ------------------------------------------------------------------

def _value_add(config: Config, ctx: Context, resources: list[Resource]) -> None:
    value, origin = _string(config, "value")
    value = value.strip()
    if not value:
        # kustomize's default: the name of the directory of the kustomization
        value, origin = ctx.kdir.resolve().name, config.at
    targets = config.node.get("targets")
    if not isinstance(targets, Sequence) or not targets.items:
        raise BuildError(f"{config.describe()}: must specify at least one target", config.at)
    for target in targets:
        if not isinstance(target, Mapping):
            raise BuildError(f"{config.describe()}: a target must be a map", target.origin)
        _value_add_target(config, target, value, origin, resources)


def _value_add_target(config: Config, target: Mapping, value: str, origin: Origin,
                      resources: list[Resource]) -> None:
    field_path = target.value("fieldPath")
    if not isinstance(field_path, str) or not field_path:
        raise BuildError(f"{config.describe()}: fieldPath cannot be empty", target.origin)
    position = target.value("filePathPosition")
    position = position if isinstance(position, int) and not isinstance(position, bool) else 0
    snode = target.mapping("selector")
    selector = patches.Selector.from_node(snode) if snode is not None else None
    path = fieldspec.split_path(field_path)
    for res in [r for r in resources if selector is None or selector.matches(r)]:
        if path == ("metadata", "namespace"):
            if not is_cluster_scoped(res.gvk) and res.namespace != value:
                res.remember_id()
                res.set_namespace(value, origin)
            continue
        _value_add_field(res.node, path, value, position, origin, config)


def _value_add_field(node: Mapping, path: tuple[str, ...], value: str, position: int,
                     origin: Origin, config: Config) -> None:
    for key in path[:-1]:
        child = node.items.get(key)
        if child is None or (isinstance(child, Scalar) and child.value is None):
            child = Mapping({}, origin)
            node.items[key] = child
        if not isinstance(child, Mapping):
            raise BuildError(f"{config.describe()}: field {key} is not a map", child.origin)
        node = child
    leaf = node.items.get(path[-1])
    if leaf is not None and not isinstance(leaf, Scalar):
        raise BuildError(f"{config.describe()}: field {path[-1]} is not a scalar", leaf.origin)
    old = leaf.as_string() if isinstance(leaf, Scalar) and leaf.value is not None else ""
    new = insert_path_part(old, position - 1, value) if position > 0 else value
    if isinstance(leaf, Scalar):
        leaf.set(new, origin)
    else:
        node.items[path[-1]] = Scalar(new, origin)


def insert_path_part(path: str, pos: int, part: str) -> str:
    """kyaml's filesys.InsertPathPart: ``part`` becomes element ``pos`` of the
    path (clamped), and an absolute path stays absolute."""
    if not part:
        return path
    parts = _path_split(path)
    pos = max(0, min(pos, len(parts)))
    if parts and parts[0] == "" and pos < len(parts):
        pos += 1
    parts = parts[:pos] + [part] + parts[pos:]
    if parts[0] == "":
        return "/" + posixpath.join(*parts[1:]) if len(parts) > 1 else "/"
    return posixpath.normpath(posixpath.join(*parts))


def _path_split(path: str) -> list[str]:
    if not path:
        return []
    head, tail = posixpath.split(path)
    if head == "/":
        return [""] if not tail else ["", tail]
    head = head.rstrip("/") if head != "/" else head
    return [tail] if not head else _path_split(head) + [tail]


BUILTIN_KINDS: dict[str, Plugin] = {
    "ConfigMapGenerator": BuiltinGenerator(_configmap),
    "SecretGenerator": BuiltinGenerator(_secret),
    "IAMPolicyGenerator": BuiltinGenerator(_iam_policy),
    "HelmChartInflationGenerator": BuiltinGenerator(_helm),
    "AnnotationsTransformer": BuiltinTransformer(_annotations),
    "HashTransformer": BuiltinTransformer(_hash),
    "ImageTagTransformer": BuiltinTransformer(_image_tag),
    "LabelTransformer": BuiltinTransformer(_labels),
    "NamespaceTransformer": BuiltinTransformer(_namespace),
    "PatchJson6902Transformer": BuiltinTransformer(_patch_json6902),
    "PatchStrategicMergeTransformer": BuiltinTransformer(_patch_strategic),
    "PatchTransformer": BuiltinTransformer(_patch),
    "PrefixSuffixTransformer": BuiltinTransformer(_prefix_suffix),
    "PrefixTransformer": BuiltinTransformer(_prefix),
    "SuffixTransformer": BuiltinTransformer(_suffix),
    "ReplacementTransformer": BuiltinTransformer(_replacement),
    "ReplicaCountTransformer": BuiltinTransformer(_replica_count),
    "ValueAddTransformer": BuiltinTransformer(_value_add),
}
