"""What a project's own defaulting webhook writes back before the API server validates.

The API server runs mutating admission before it checks an object against
its schema. A kubebuilder project's defaulting webhook decodes the object
into the project's Go types, sets its defaults and encodes it again, and
the API server applies the difference: a field the Go type declares
without ``omitempty``, as a plain value (not a pointer, slice or map),
comes back with its zero value (``""``, ``0``, ``false``), so a required
string, number or boolean the manifest leaves out is there when the schema
is checked (cluster-api providers' ``location: ""``), and the webhook may
set a real default (JobSet names each failure-policy rule).

Both pieces of evidence come from the repository: a
MutatingWebhookConfiguration whose rules take CREATE of the kind's
resource (kinds by the plural names of the repository's CRDs), and a Go
struct field tagged so. The zero value is then judged like any value: a
pattern or an enum that refuses it still refuses the object.

knative.dev/pkg's defaulting webhook (Knative's, Tekton's and their kin's)
does the same round trip (``roundTripPatch``) for the kinds of the
``types`` map its Go code gives ``defaulting.NewAdmissionController``; its
controller writes the configuration's rules at run time, so the
MutatingWebhookConfiguration of the name that call gives holds none.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from krmcheck.resource.files import read_text_bounded, texts_under
from krmcheck.tree.load import FAST_LOADER

MARKER = "MutatingWebhookConfiguration"
_SCAN_SECONDS = 5.0
_SCAN_BYTES = 32 << 20
_SKIP = frozenset({".git", "node_modules", "vendor", "third_party", ".venv", "testdata"})
# ``Location string `json:"location"```: a plain field whose tag has no options
_FIELD = re.compile(r"^\s*[A-Z]\w*\s+([\w.\[\]*]+)\s+`[^`\n]*\bjson:\"([A-Za-z0-9_]+)(,[^\"]*)?\"", re.MULTILINE)
_ZERO: dict[str, Any] = {"string": "", "integer": 0, "number": 0, "boolean": False}


def written_back(top: Path, webhook_files: Iterable[str], crd_files: Iterable[str]) -> tuple[
        tuple[tuple[str, str], ...], tuple[str, ...]]:
    """((group, kind) a mutating webhook of the repository takes on CREATE,
    sorted; JSON names of plain Go fields without ``omitempty``, sorted);
    both empty when no such webhook is found."""
    webhook_files, crd_files = list(webhook_files), list(crd_files)
    resources = set(_mutated(webhook_files))
    kinds = set(_kinds(crd_files, resources)) if resources else set()
    named = _knative_kinds(top, _configuration_names(webhook_files))
    if named:
        kinds.update(_kinds_named(crd_files, named))
    if not kinds:
        return (), ()
    return tuple(sorted(kinds)), tuple(sorted(_go_fields(top)))


def _documents(path: str) -> Iterator[Any]:
    try:
        text = read_text_bounded(path)
        yield from yaml.load_all(text, Loader=FAST_LOADER)
    except (OSError, ValueError, yaml.YAMLError, RecursionError):
        return


def _mutated(files: Iterable[str]) -> Iterator[tuple[str, str]]:
    for path in files:
        for doc in _documents(path):
            if not isinstance(doc, dict) or doc.get("kind") != MARKER:
                continue
            for hook in doc.get("webhooks") or ():
                for rule in (hook.get("rules") or ()) if isinstance(hook, dict) else ():
                    if not isinstance(rule, dict):
                        continue
                    operations = rule.get("operations") or ()
                    if not any(o in ("CREATE", "*") for o in operations):
                        continue
                    for group in rule.get("apiGroups") or ():
                        for resource in rule.get("resources") or ():
                            if isinstance(group, str) and isinstance(resource, str):
                                yield group, resource.split("/")[0]


def _served(crd_files: Iterable[str]) -> Iterator[tuple[str, str, str]]:
    """(group, plural, kind) of each CRD of ``crd_files``."""
    for path in crd_files:
        for doc in _documents(path):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc.get("spec")
            spec = spec if isinstance(spec, dict) else {}
            names = spec.get("names")
            names = names if isinstance(names, dict) else {}
            group, plural, kind = spec.get("group"), names.get("plural"), names.get("kind")
            if isinstance(group, str) and isinstance(plural, str) and isinstance(kind, str):
                yield group, plural, kind


def _kinds(crd_files: Iterable[str], resources: set[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    for group, plural, kind in _served(crd_files):
        if (group, plural) in resources or (group, "*") in resources or ("*", plural) in resources:
            yield group, kind


def _kinds_named(crd_files: Iterable[str], kinds: set[str]) -> Iterator[tuple[str, str]]:
    for group, _, kind in _served(crd_files):
        if kind in kinds:
            yield group, kind


def _configuration_names(files: Iterable[str]) -> set[str]:
    """metadata.name of each MutatingWebhookConfiguration of ``files``."""
    names: set[str] = set()
    for path in files:
        for doc in _documents(path):
            meta = doc.get("metadata") if isinstance(doc, dict) and doc.get("kind") == MARKER else None
            if isinstance(meta, dict) and isinstance(meta.get("name"), str):
                names.add(meta["name"])
    return names


# ``defaulting.NewAdmissionController(ctx, "webhook.serving.knative.dev",
# "/defaulting", types, ...)`` (comments may stand between the arguments),
# and the ``types`` map of its package: ``map[schema.GroupVersionKind]
# resourcesemantics.GenericCRD{v1.SchemeGroupVersion.WithKind("Route"):
# &v1.Route{}, ...}``, or an entry added to it (``types[gvk] = &v1.Addon{}``).
# The Go type of each value is the kind's.
_KNATIVE_CALL = re.compile(r"\bdefaulting\.NewAdmissionController\(\s*\w+\s*,(?:\s|//[^\n]*)*\"([^\"\n]+)\"")
_TYPES_MAP = re.compile(r"map\[schema\.GroupVersionKind\]resourcesemantics\.GenericCRD\s*\{(.*?)\n\s*\}", re.DOTALL)
_TYPE_VALUE = re.compile(r":\s*&\w+\.(\w+)\{\}")
_TYPE_ADDED = re.compile(r"^\s*\w+\[[^\]\n]+\]\s*=\s*&\w+\.(\w+)\{\}", re.MULTILINE)


def _knative_kinds(top: Path, configurations: set[str]) -> set[str]:
    """Kinds a knative defaulting webhook of the repository takes: its Go
    code gives the name of one of ``configurations`` (a
    MutatingWebhookConfiguration of the repository) to
    ``defaulting.NewAdmissionController``, and the Go files of that package
    list the kinds in a ``types`` map."""
    if not configurations:
        return set()
    packages: dict[Path, list[str]] = {}
    calling: set[Path] = set()
    for source, text in texts_under(top, _go_source, _SKIP, _SCAN_SECONDS, _SCAN_BYTES):
        if "resourcesemantics" not in text:
            continue
        packages.setdefault(source.parent, []).append(text)
        if any(name in configurations for name in _KNATIVE_CALL.findall(text)):
            calling.add(source.parent)
    return {kind for package in calling for kind in _types_of(packages[package])}


def _types_of(texts: Iterable[str]) -> set[str]:
    """The kinds of a package's knative ``types`` map (its Go files' texts)."""
    kinds: set[str] = set()
    for text in texts:
        for body in _TYPES_MAP.findall(text):
            kinds.update(_TYPE_VALUE.findall(body))
        if "GenericCRD" in text:
            kinds.update(_TYPE_ADDED.findall(text))
    return kinds


def _go_fields(top: Path) -> set[str]:
    """JSON names of the Go fields that encode their zero value: some
    declaration of the name is a plain value without ``omitempty`` (a field
    is known by its name, not its struct: kubebuilder makes exactly such
    fields required, so a required field of the name is one of them)."""
    plain: set[str] = set()
    for _, text in texts_under(top, _go_source, _SKIP, _SCAN_SECONDS, _SCAN_BYTES):
        if 'json:"' not in text:
            continue
        for found in _FIELD.finditer(text):
            go_type, json_name, options = found.group(1), found.group(2), found.group(3) or ""
            empties = "omitempty" in options or "omitzero" in options or "inline" in options
            if not (empties or go_type.startswith(("*", "[]", "map["))):
                plain.add(json_name)
    return plain


def _go_source(path: Path) -> bool:
    return path.name.endswith(".go") and not path.name.endswith("_test.go")


# ``// +kubebuilder:webhook:path=/mutate-...,mutating=true,groups=g,resources=r,verbs=create;update,...``
_MARKER = re.compile(r"^\s*//\s*\+kubebuilder:webhook:(.*)$", re.MULTILINE)
_DECLARED = re.compile(r"`[^`\n]*\bjson:\"([\w.-]+)[,\"]")
# ``GlobalConfig *config.GlobalConfig `json:"global-config"```: a field's Go
# name and its JSON name
_NAMED_FIELD = re.compile(r"^\s*([A-Z]\w*)\s+[^`\n]+`[^`\n]*\bjson:\"([\w.-]+)[,\"]", re.MULTILINE)
# a defaulting method (knative's ``SetDefaults``, kubebuilder's ``Default``),
# its body up to the brace that closes it at the start of a line (gofmt's)
_DEFAULTING = re.compile(r"^func \([^)]*\) (?:SetDefaults|Default)\([^)]*\)[^{\n]*\{\n(.*?)^\}",
                         re.MULTILINE | re.DOTALL)
_ASSIGNED = re.compile(r"\.([A-Z]\w*)\s*=(?!=)")


@dataclass(frozen=True)
class Defaulting:
    """What the repository's own defaulting webhooks are known to do."""

    kinds: dict[tuple[str, str], str]  # (group, kind) a webhook takes on CREATE -> the Go file that says so
    declared: frozenset[str]  # the JSON names every Go field of the repository declares
    assigned: dict[str, str]  # JSON names a defaulting method assigns -> the Go file holding it


def own_defaulting(top: Path, crd_files: Iterable[str]) -> Defaulting:
    """The kinds the repository's own defaulting webhook takes on CREATE: a
    kubebuilder webhook marker with ``mutating=true`` in the repository's Go
    source names the group and the resource (kinds by the plural names of
    the repository's CRDs), or Go code gives knative's
    ``defaulting.NewAdmissionController`` a ``types`` map of its package
    (kinds by name): the project's own code runs at admission on that kind
    before the schema is checked. What that code sets is known for fields
    whose Go type the repository does not declare (another module's), and
    for fields a defaulting method of the repository assigns
    (``p.GlobalConfig = &config.GlobalConfig{}`` in ``SetDefaults``)."""
    hooks: dict[tuple[str, str], str] = {}
    declared: set[str] = set()
    go_names: dict[str, set[str]] = {}
    assigned_go: dict[str, str] = {}
    packages: dict[Path, list[str]] = {}
    knative: dict[Path, str] = {}
    for source, text in texts_under(top, _go_source, _SKIP, _SCAN_SECONDS, _SCAN_BYTES):
        if 'json:"' in text:
            declared.update(_DECLARED.findall(text))
            for go, json_name in _NAMED_FIELD.findall(text):
                go_names.setdefault(go, set()).add(json_name)
        for body in _DEFAULTING.findall(text) if "Default" in text else ():
            for go in _ASSIGNED.findall(body):
                assigned_go.setdefault(go, os.path.relpath(source, top))
        if "resourcesemantics" in text:
            packages.setdefault(source.parent, []).append(text)
            if _KNATIVE_CALL.search(text):
                knative.setdefault(source.parent, os.path.relpath(source, top))
        if "kubebuilder:webhook" not in text:
            continue
        for found in _MARKER.finditer(text):
            fields = dict(part.split("=", 1) for part in found.group(1).split(",") if "=" in part)
            if fields.get("mutating", "").strip() != "true" or \
                    "create" not in fields.get("verbs", "").lower().split(";"):
                continue
            for group in fields.get("groups", "").split(";"):
                for resource in fields.get("resources", "").split(";"):
                    if resource.strip() and resource.strip() != "*":
                        hooks.setdefault((group.strip(), resource.strip()), os.path.relpath(source, top))
    named = {kind: where for package, where in knative.items() for kind in _types_of(packages[package])}
    if not hooks and not named:
        return Defaulting({}, frozenset(), {})
    kinds: dict[tuple[str, str], str] = {}
    for served, plural, kind in _served(crd_files):
        where = hooks.get((served, plural)) or named.get(kind)
        if where is not None:
            kinds.setdefault((served, kind), where)
    assigned = {json_name: where for go, where in assigned_go.items() for json_name in go_names.get(go, ())}
    return Defaulting(kinds, frozenset(declared), assigned)


# What widely used controllers' own defaulting webhooks write before the API
# server validates, whether or not the repository holds the webhook: facts,
# each with the webhook it mirrors. (group, kind) -> (the label naming the
# object, whether the cluster's name is a label too, where the fact is).
CONTROLLER_DEFAULTS: dict[tuple[str, str], tuple[str, bool, str]] = {
    ("cluster.x-k8s.io", "MachineDeployment"): (
        "cluster.x-k8s.io/deployment-name", True,
        "cluster-api, core/webhooks/admission/machinedeployment.go (MachineDeployment.Default)"),
    ("cluster.x-k8s.io", "MachineSet"): (
        "cluster.x-k8s.io/set-name", False,
        "cluster-api, core/webhooks/admission/machineset.go (MachineSet.Default)"),
}
_CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"


def controller_defaults(group: str, kind: str, data: Any) -> None:
    """Write what the controller's defaulting webhook writes (see
    ``CONTROLLER_DEFAULTS``): cluster-api gives a MachineDeployment or
    MachineSet with no selector one that matches its own name (a
    MachineDeployment's also its cluster's), and puts the same labels on
    its template."""
    fact = CONTROLLER_DEFAULTS.get((group, kind))
    spec = data.get("spec") if fact is not None and isinstance(data, dict) else None
    if fact is None or not isinstance(spec, dict):
        return
    name_label, cluster_too, _ = fact
    selector = spec.setdefault("selector", {})
    template = spec.setdefault("template", {})
    metadata = template.setdefault("metadata", {}) if isinstance(template, dict) else None
    if not (isinstance(selector, dict) and isinstance(metadata, dict)):
        return
    match = selector.setdefault("matchLabels", {})
    labels = metadata.setdefault("labels", {})
    if not (isinstance(match, dict) and isinstance(labels, dict)):
        return
    own = data.get("metadata", {}).get("name", "") if isinstance(data.get("metadata"), dict) else ""
    added = {}
    if not match and not selector.get("matchExpressions"):
        added[name_label] = own
    if cluster_too:
        added[_CLUSTER_NAME_LABEL] = spec.get("clusterName", "")
    match.update(added)
    labels.update(added)


def write_back(data: Any, full: Any, fields: frozenset[str] | None) -> None:
    """Give the required fields ``data`` lacks that ``fields`` names (None:
    every one) their zero value, where the schema types them as a string,
    number or boolean, or ``null`` where it lets them be null (a slice, a
    pointer), as the webhook's round trip does (``full``: the kind's
    validator)."""
    for _ in range(3):  # a filled field may not uncover more, but bounded all the same
        changed = False
        for error in full.iter_errors(data):
            if error.validator != "required" or not isinstance(error.instance, dict):
                continue
            properties = error.schema.get("properties") or {}
            for name in error.validator_value:
                if name in error.instance or (fields is not None and name not in fields):
                    continue
                field = properties.get(name)
                if not isinstance(field, dict):
                    continue
                typed = field.get("type")
                if fields is None and (field.get("nullable") is True or isinstance(typed, list) and "null" in typed):
                    error.instance[name] = None
                    changed = True
                elif isinstance(typed, str) and typed in _ZERO:
                    error.instance[name] = _ZERO[field["type"]]
                    changed = True
        if not changed:
            return


# Kinds a platform's API server decodes into their Go type and encodes again
# in its own mutating admission, before it validates them against the CRD's
# schema, whether or not the repository says so: every field the type writes
# without omitempty is then present (a boolean false, a slice or pointer
# null), so the schema's required list is always met. (group, kind) -> the
# check it mirrors.
PLATFORM_ROUND_TRIPS: dict[tuple[str, str], str] = {
    ("security.openshift.io", "SecurityContextConstraints"): (
        "OpenShift's kube-apiserver, openshift-kube-apiserver/admission/customresourcevalidation/"
        "securitycontextconstraints/defaulting.go (security.openshift.io/DefaultSecurityContextConstraints, "
        "SetDefaults_SCC)"),
}
