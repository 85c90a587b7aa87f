"""Label selectors select the pods they are meant for.

- ``template`` (error): the API server refuses a workload whose selector does
  not select its own pod template. Checked: a Deployment, StatefulSet,
  DaemonSet or ReplicaSet (``spec.selector``; an empty selector is refused
  too), a ReplicationController (the ``spec.selector`` map, when set) and a
  Job whose ``spec.selector`` is set (usually the API server generates it;
  see ``manualSelector``). ``matchLabels`` and ``matchExpressions`` (``In``,
  ``NotIn``, ``Exists``, ``DoesNotExist``) are judged against
  ``spec.template.metadata.labels``; the finding points at the failing
  ``matchLabels`` key or ``matchExpressions`` entry, or at ``spec.selector``
  when several fail.
- ``no-pods`` (warning): a Service (``spec.selector``; Services without one
  and ``ExternalName`` Services are skipped), PodDisruptionBudget
  (``spec.selector``) or NetworkPolicy (``spec.podSelector``; an empty one
  selects every pod and is fine) that selects no pod template of the root in
  its namespace. Pod templates are those of Pods, PodTemplates, Deployments,
  StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers, Jobs,
  CronJobs' job templates and custom resources with a pod template at
  ``spec.template`` (an Argo Rollout, a Knative Service), with the labels
  their controllers add (``job-name``, ``statefulset.kubernetes.io/pod-name``,
  ``pod-template-hash``...).

  Pods may also come from elsewhere: a Helm chart, an operator, another root.
  So the warning is only given where a mistake is likely: the root defines
  pod templates in that namespace and some of them use a label key the
  selector names (a value changed on one side only, a typo), and no custom
  resource in the namespace carries the selected labels (operators label the
  pods they make alike: a Prometheus labelled
  ``app.kubernetes.io/name: prometheus``, or its ``spec.podMetadata``). The
  message lists the values the root's pod templates do have.
"""


from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from krmcheck.results import Result
from krmcheck.tree.node import Mapping, Node, Scalar, lookup
from krmcheck.tree.node import Sequence as SequenceNode
from krmcheck.validators.base import ValidatorOptions, field_path, make_result, pod_spec_path, scalar_text

id = "selector"
description = "label selectors select their own pod template, and Services and policies select some pod"

Path = tuple[str | int, ...]


# --- pod templates ------------------------------------------------------------

class PodTemplate(NamedTuple):
    """A pod template of a resource: where it is and the labels its pods get."""

    item: Mapping
    namespace: str
    path: Path  # to the template: the mapping holding metadata and spec
    labels: dict[str, str]
    # labels the controller adds with a value not known here (pod-template-hash)
    generated: frozenset[str]

    def spec(self) -> Mapping | None:
        node = lookup(self.item, [str(p) for p in self.path] + ["spec"])
        return node if isinstance(node, Mapping) else None


# Labels that controllers add to the pods they make, by (group, kind).
_JOB_LABELS = frozenset({"controller-uid", "batch.kubernetes.io/controller-uid",
                         "batch.kubernetes.io/job-completion-index"})
_GENERATED: dict[tuple[str, str], frozenset[str]] = {
    ("apps", "Deployment"): frozenset({"pod-template-hash"}),
    ("apps", "StatefulSet"): frozenset({"statefulset.kubernetes.io/pod-name", "apps.kubernetes.io/pod-index",
                                        "controller-revision-hash"}),
    ("apps", "DaemonSet"): frozenset({"controller-revision-hash", "pod-template-generation"}),
    ("batch", "Job"): _JOB_LABELS,
    ("batch", "CronJob"): _JOB_LABELS | {"job-name", "batch.kubernetes.io/job-name"},
}


def group_kind(item: Mapping) -> tuple[str, str]:
    """(API group, kind) of a resource: ("apps", "Deployment"), ("", "Service")."""
    api_version = scalar_text(item.get("apiVersion"))
    group = api_version.rpartition("/")[0]
    return group, scalar_text(item.get("kind"))


def namespace_of(item: Mapping) -> str:
    meta = item.mapping("metadata")
    return scalar_text(meta.get("namespace")) if meta else ""


def name_of(item: Mapping) -> str:
    meta = item.mapping("metadata")
    return scalar_text(meta.get("name")) if meta else ""


def pod_templates(item: Mapping) -> Iterator[PodTemplate]:
    """The pod template of a resource, if it has one (a pod spec with containers)."""
    gk = group_kind(item)
    path: Path = pod_spec_path(item)[:-1]  # the template holds the pod spec
    template = lookup(item, [str(p) for p in path])
    if not isinstance(template, Mapping):
        return
    spec = template.mapping("spec")
    if spec is None or not isinstance(spec.get("containers"), SequenceNode):
        return
    labels = string_map(lookup(template, ["metadata", "labels"]))
    if gk == ("batch", "Job"):
        labels = {"job-name": name_of(item), "batch.kubernetes.io/job-name": name_of(item)} | labels
    yield PodTemplate(item, namespace_of(item), path, labels, _GENERATED.get(gk, frozenset()))


def string_map(node: Node | None) -> dict[str, str]:
    """A map of strings (labels, a Service selector); {} for anything else."""
    if not isinstance(node, Mapping):
        return {}
    return {key: scalar_text(value) for key, value in node.items.items()}


# --- label selectors ----------------------------------------------------------

class Requirement(NamedTuple):
    """One term of a label selector, and the field that wrote it."""

    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: frozenset[str]
    path: Path

    def matches(self, labels: dict[str, str], generated: frozenset[str] = frozenset()) -> bool:
        """Whether pods with ``labels`` satisfy this term; a ``generated`` key may hold any value."""
        if self.key in generated and self.key not in labels:
            return self.operator != "DoesNotExist"
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        return True  # an unknown operator: the schema check reports it; not judged here

    def describe(self) -> str:
        """The term as kubectl writes selectors: ``app=web``, ``tier in (a, b)``, ``!canary``."""
        if self.operator == "In" and len(self.values) == 1:
            return f"{self.key}={next(iter(self.values))}"
        if self.operator in ("In", "NotIn"):
            return f"{self.key} {self.operator.lower()} ({', '.join(sorted(self.values))})"
        return self.key if self.operator == "Exists" else f"!{self.key}"


def map_selector(node: Node | None, path: Path) -> list[Requirement]:
    """The terms of a plain map selector (Service, ReplicationController)."""
    return [Requirement(key, "In", frozenset({value}), (*path, key))
            for key, value in string_map(node).items()]


def label_selector(node: Node | None, path: Path) -> list[Requirement] | None:
    """The terms of a LabelSelector (matchLabels and matchExpressions); None when not a mapping."""
    if not isinstance(node, Mapping):
        return None
    terms = map_selector(node.get("matchLabels"), (*path, "matchLabels"))
    expressions = node.sequence("matchExpressions")
    for index, expression in enumerate(expressions or ()):
        if isinstance(expression, Mapping):
            values = expression.sequence("values")
            terms.append(Requirement(scalar_text(expression.get("key")), scalar_text(expression.get("operator")),
                                     frozenset(scalar_text(v) for v in values or () if isinstance(v, Scalar)),
                                     (*path, "matchExpressions", index)))
    return terms


class Templates:
    """Pod templates by namespace and label: a selector looks only at the few that can
    match it (a root may hold thousands)."""

    def __init__(self, templates: Iterable[PodTemplate]) -> None:
        self.by_namespace: dict[str, list[PodTemplate]] = {}
        self.values: dict[tuple[str, str], set[str]] = {}  # (namespace, key) -> label values
        self._sorted: dict[tuple[str, str], list[str]] = {}
        self._by_label: dict[tuple[str, str, str], list[PodTemplate]] = {}
        self._by_generated: dict[tuple[str, str], list[PodTemplate]] = {}
        for template in templates:
            namespace = template.namespace
            self.by_namespace.setdefault(namespace, []).append(template)
            for key, value in template.labels.items():
                self._by_label.setdefault((namespace, key, value), []).append(template)
                self.values.setdefault((namespace, key), set()).add(value)
            for key in template.generated - template.labels.keys():
                self._by_generated.setdefault((namespace, key), []).append(template)

    def sorted_values(self, namespace: str, key: str) -> list[str]:
        """The values of label ``key`` in ``namespace``, sorted (once: many selectors may ask)."""
        if (namespace, key) not in self._sorted:
            self._sorted[(namespace, key)] = sorted(self.values.get((namespace, key), ()))
        return self._sorted[(namespace, key)]

    def selected(self, terms: Sequence[Requirement], namespace: str, generated: bool = True) -> list[PodTemplate]:
        """The templates of ``namespace`` that ``terms`` select. With ``generated``, a label
        that a controller adds (pod-template-hash) may hold any value; without, only the
        labels written in the template decide."""
        return [t for t in self._candidates(terms, namespace, generated)
                if all(term.matches(t.labels, t.generated if generated else frozenset()) for term in terms)]

    def _candidates(self, terms: Sequence[Requirement], namespace: str, generated: bool) -> list[PodTemplate]:
        for term in terms:
            if term.operator == "In" and len(term.values) == 1:
                [value] = term.values
                found = self._by_label.get((namespace, term.key, value), [])
                return found + self._by_generated.get((namespace, term.key), []) if generated else found
        return self.by_namespace.get(namespace, [])


def describe(labels: dict[str, str]) -> str:
    return ", ".join(f"{key}={value}" for key, value in sorted(labels.items())) or "none"


# --- the rules ----------------------------------------------------------------

# Kinds whose own selector must select their template, and whether an empty
# selector is refused ("empty selector is invalid for deployment").
_OWN_SELECTOR: dict[tuple[str, str], bool] = {
    ("apps", "Deployment"): True,
    ("apps", "StatefulSet"): True,
    ("apps", "DaemonSet"): True,
    ("apps", "ReplicaSet"): True,
    ("", "ReplicationController"): False,
    ("batch", "Job"): False,
}


def validate(items: Sequence[Mapping], options: ValidatorOptions) -> list[Result]:
    results: list[Result] = []
    templates = Templates(t for item in items for t in pod_templates(item))
    custom = Templates(_custom_labels(items))
    for item in items:
        gk = group_kind(item)
        if gk in _OWN_SELECTOR:
            results.extend(_own_selector(item, gk))
        chosen = _pod_selector(item, gk)
        if chosen is not None:
            results.extend(_no_pods(item, gk[1], *chosen, templates, custom))
    return results


def _own_selector(item: Mapping, gk: tuple[str, str]) -> Iterator[Result]:
    """The template rule: a workload's selector selects its own pod template."""
    spec = item.mapping("spec")
    if spec is None or "selector" not in spec:
        return  # apps/v1 requires it (the schema check says so); Jobs and RCs generate it
    if gk == ("", "ReplicationController"):
        terms: list[Requirement] | None = map_selector(spec.get("selector"), ("spec", "selector"))
    else:
        terms = label_selector(spec.get("selector"), ("spec", "selector"))
    kind = gk[1]
    if terms is None or not terms:
        if terms is not None and _OWN_SELECTOR[gk]:
            yield make_result(id, item, f"spec.selector is empty: the API server refuses a {kind} "
                              "whose selector selects every pod", "spec.selector", rule="template")
        return
    labels = string_map(lookup(item, ["spec", "template", "metadata", "labels"]))
    generated: frozenset[str] = frozenset()
    if gk == ("batch", "Job") and spec.value("manualSelector") is not True:
        # the API server labels the pods of a Job before it compares
        labels = {"job-name": name_of(item), "batch.kubernetes.io/job-name": name_of(item)} | labels
        generated = _JOB_LABELS
    failing = [term for term in terms if not term.matches(labels, generated)]
    if failing:
        path = field_path(_cause(item, failing[0]) if len(failing) == 1 else ("spec", "selector"))
        message = (f"spec.selector requires {', '.join(t.describe() for t in failing)}, but the pod template "
                   f"is labelled {describe(labels)}: the API server refuses a {kind} whose selector does not "
                   "match spec.template.metadata.labels")
        yield make_result(id, item, message, path, rule="template")


def _cause(item: Mapping, term: Requirement) -> Path:
    """Where the mismatch of one term was made: the template's label when a
    later step wrote it and not the selector (an overlay's ``labels:``
    entry with ``includeTemplates`` but not ``includeSelectors``, a patch of
    the template), else the selector's term."""
    keys = [step for step in term.path if isinstance(step, str)]
    if len(keys) != len(term.path):
        return term.path  # a matchExpressions entry: the selector's own
    label = ("spec", "template", "metadata", "labels", term.key)
    written = lookup(item, list(label))
    chosen = lookup(item, keys)
    if written is not None and chosen is not None and _rewritten(written) and not _rewritten(chosen):
        return label
    return term.path


def _rewritten(node: Node) -> bool:
    """Whether a step after the resource file wrote the value (a transformer, a patch)."""
    return bool(node.trail) or node.origin.by != "resource"


def _pod_selector(item: Mapping, gk: tuple[str, str]) -> tuple[list[Requirement], Path] | None:
    """The pod selector of a Service, PodDisruptionBudget or NetworkPolicy; None when it selects
    nothing to judge (no selector, an ExternalName Service, an empty podSelector)."""
    spec = item.mapping("spec")
    if spec is None:
        return None
    terms: list[Requirement] | None = None
    if gk == ("", "Service"):
        if scalar_text(spec.get("type")) == "ExternalName":
            return None
        path: Path = ("spec", "selector")
        terms = map_selector(spec.get("selector"), path)
    elif gk[1] == "PodDisruptionBudget" and gk[0] == "policy":
        path = ("spec", "selector")
        terms = label_selector(spec.get("selector"), path)
    elif gk == ("networking.k8s.io", "NetworkPolicy"):
        path = ("spec", "podSelector")
        terms = label_selector(spec.get("podSelector"), path)
    return (terms, path) if terms else None


_SHOWN = 5  # near misses named in a message


def _no_pods(item: Mapping, kind: str, terms: Sequence[Requirement], path: Path,
             templates: Templates, custom: Templates) -> Iterator[Result]:
    """The no-pods rule, said only where a mistake is likely: the namespace has pod
    templates, some of them use a label key the selector names (so a value was
    probably mistyped or changed on one side only), and no custom resource of the
    namespace carries the labels (operators label the pods they make of it alike)."""
    namespace = namespace_of(item)
    keys = sorted({term.key for term in terms})
    if (templates.selected(terms, namespace) or not any((namespace, key) in templates.values for key in keys)
            or custom.selected(terms, namespace)):
        return
    values = [(key, templates.sorted_values(namespace, key)) for key in keys]
    seen = [f"{key}={value}" for key, some in values for value in some[:_SHOWN]][:_SHOWN]
    more = sum(len(some) for _, some in values) - len(seen)
    if more:
        seen.append(f"{more} more")
    where = f"namespace {namespace!r}" if namespace else "its namespace"
    what = ", ".join(t.describe() for t in terms)
    message = (f"{kind} {name_of(item)!r} selects no pod of this root: no pod template in {where} "
               f"has {what} (they have {', '.join(seen)}); if the pods come from elsewhere "
               "(a Helm chart, an operator), ignore this")
    yield make_result(id, item, message, field_path(path), severity="warning", rule="no-pods")


def _custom_labels(items: Sequence[Mapping]) -> Iterator[PodTemplate]:
    """The labels of custom resources (and their ``spec.podMetadata``), as the pods an
    operator makes of them would have them: a Prometheus labelled
    app.kubernetes.io/name=prometheus gets pods labelled so."""
    for item in items:
        group = group_kind(item)[0]
        if "." in group and not group.endswith(".k8s.io"):
            labels = string_map(lookup(item, ["metadata", "labels"]))
            labels |= string_map(lookup(item, ["spec", "podMetadata", "labels"]))
            yield PodTemplate(item, namespace_of(item), (), labels, frozenset())
