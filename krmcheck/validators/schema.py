"""Validate every resource against the schema of its kind.

Built-in kinds use the schemas bundled with the installed
``kubernetes-validate`` package, for the Kubernetes version given with
``--kubernetes-version`` (default: the newest bundled one), plus the API
server's field rules that those schemas lack (allowed values, required
values, ranges, formats, uniqueness, one-of: :mod:`krmcheck.schemas.rules`). Custom kinds use the repository's CRDs,
then the schema locations, then the cache (:mod:`krmcheck.schemas.sources`),
with their CEL rules. A custom resource is judged as the API server judges
it: non-nullable nulls pruned and defaults applied first
(:mod:`krmcheck.schemas.defaults`). Each problem is one error at the field
that is wrong: a value of the wrong type, a value outside the allowed set, a
missing required field (reported at the object that lacks it). A field the
schema does not know, which ``kubectl apply`` refuses, is a warning at that
field (info for a catalog's schema, which may predate the CRD installed),
an error in strict mode (``--strict``). What a catalog's schema (a location,
the cache) refuses of an alpha API version is a warning, a null excepted:
alpha versions change shape between releases under the same name, and the
catalog's release need not be the installed one. So is what its CEL rules
and enums refuse of an object that writes, beside the refused field or
above it, a section (a map or a list) the catalog's schema does not know,
with no near miss of a known field (written for another release). Kinds no source covers are not checked; one info result
per apiVersion and kind says so, with the id ``schema-missing`` (a run
reports each kind once, with how many resources and roots it has), unless
the cluster is known to have no such kind (:mod:`krmcheck.schemas.kinds`):
then each resource is an error at its ``kind:`` (rule ``unknown-kind``). A
Secret's values are never quoted: the message says what kind of value is
wrong (``data.password: a number is not of type 'string'``).
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from krmcheck.results import Finding, Result, RootReport
from krmcheck.schemas import builtin, crds, defaults, lists, rules
from krmcheck.schemas.locations import LocationError
from krmcheck.schemas.webhooks import CONTROLLER_DEFAULTS, PLATFORM_ROUND_TRIPS, controller_defaults, write_back
from krmcheck.schemas.sources import BUILTIN, CACHE, LOCATION, Checker, SchemaSettings, Sources, sources_for
from krmcheck.tree.node import Mapping, lookup
from krmcheck.validators.base import CIPHERTEXT, ValidatorOptions, field_path, make_result, resource_ref, scalar_text
from krmcheck.validators.selector import label_selector, namespace_of, string_map

if TYPE_CHECKING:  # the checkers of krmcheck.schemas.sources import it when they first validate
    import jsonschema

id = "schema"
description = "resources match the schema of their kind (built-in, repository CRD, schema location)"
MISSING = "schema-missing"  # the id of the info findings about kinds without a schema
UNJUDGED = "schema-unjudged"  # ...and about CEL rules that could not be judged


def validate(items: Sequence[Mapping], options: ValidatorOptions) -> list[Result]:
    version = builtin.resolve_version(options.kubernetes_version)
    sources = _sources(items, options, version)
    results: list[Result] = []
    skipped: dict[tuple[str, str], list[Mapping]] = {}
    unjudged: dict[tuple[str, str], tuple[Mapping, dict[str, str]]] = {}
    patterns: dict[tuple[str, str], tuple[Mapping, Checker]] = {}  # kinds with patterns RE2 refuses
    # what the repository's defaulting webhooks write back before the API server validates
    written = frozenset(options.schemas.written_back) if options.schemas is not None else frozenset()
    zero_fields = frozenset(options.schemas.zero_fields) if options.schemas is not None else frozenset()
    for item in items:
        ref = resource_ref(item)
        if not ref.apiVersion or not ref.kind:
            results.append(make_result(id, item, "resource has no apiVersion or kind", "", rule="kind"))
            continue
        if CIPHERTEXT.match(ref.kind):
            continue  # encrypted whole (SOPS): what it is is known only once decrypted
        checker = _find(sources, ref.apiVersion, ref.kind, results)
        if checker is None:
            skipped.setdefault((ref.apiVersion, ref.kind), []).append(item)
            continue
        data = _prepared(item, checker, written, zero_fields)
        judged = _check(item, data, checker, version, options.strict, ref.apiVersion)
        if checker.structural is not None:
            judged.extend(_cel(item, data, checker, unjudged))
        if checker.source in (LOCATION, CACHE):
            judged = _another_release(data, checker, judged)
        results.extend(_unless_accepted_elsewhere(item, checker, judged, written, zero_fields))
        mapped = _map_lists(item, data, checker)
        results.extend(mapped)
        if checker.source == BUILTIN:
            found = _field_rules(item, ref.apiVersion, ref.kind, version, {r.field_path for r in mapped})
            results.extend(_completed_by_pod_webhook(item, found, items) if ref.kind == "StatefulSet" else found)
            if ref.kind == crds.CRD_KIND:
                results.extend(_crd_schemas(item, data, version))
        elif checker.structural is not None:
            results.extend(_embedded_metadata(item, data, checker))
            if checker.unjudged:
                patterns.setdefault((ref.apiVersion, ref.kind), (item, checker))
    results.extend(r for kind_items in skipped.values() for r in _without_schema(sources, kind_items, version))
    results.extend(_unjudged_result(item, rules) for item, rules in unjudged.values())
    results.extend(_unjudged_patterns_result(item, checker) for item, checker in patterns.values())
    return results


def _prepared(item: Mapping, checker: Checker, written: frozenset[tuple[str, str]],
              zero_fields: frozenset[str]) -> Any:
    """A copy of the object as the API server validates it against this schema."""
    ref = resource_ref(item)
    data = item.to_data()  # a copy: pruning and defaulting change it
    if isinstance(data, dict) and _sops_metadata(data.get("sops")) and not _declares_sops(checker):
        del data["sops"]  # the decryption that must come first removes it (SOPS, Flux's decryption)
    if checker.drops_status and isinstance(data, dict):
        data.pop("status", None)  # what the API server drops is not judged (PrepareForCreate)
    if checker.structural is not None:
        defaults.prepare(checker.structural, data, checker.prunes)
    group = ref.apiVersion.rpartition("/")[0]
    if (group, ref.kind) in CONTROLLER_DEFAULTS:
        controller_defaults(group, ref.kind, data)
    if written and (group, ref.kind) in written:
        from krmcheck.schemas import webhooks  # (a repository with a defaulting webhook)

        webhooks.write_back(data, checker.full, zero_fields)
    if (group, ref.kind) in PLATFORM_ROUND_TRIPS:
        write_back(data, checker.full, None)
    return data


def _unless_accepted_elsewhere(item: Mapping, checker: Checker, judged: list[Result],
                               written: frozenset[tuple[str, str]], zero_fields: frozenset[str]) -> list[Result]:
    """The schema's errors, as warnings when another of the repository's
    definitions of the kind's version accepts the object: the repository
    holds both (a stale OLM bundle beside the generated CRD, installs of two
    releases), and which one the cluster serves it does not say."""
    if not checker.others or not any(r.severity == "error" for r in judged):
        return judged
    for other in checker.others:
        data = _prepared(item, other, written, zero_fields)
        if not other.valid(data):
            continue
        if other.structural is not None and _cel(item, data, other, {}):
            continue
        note = f"; the repository's other definition of this kind ({other.where}) accepts the object"
        return [dataclasses.replace(r, severity="warning", message=r.message + note) if r.severity == "error" else r
                for r in judged]
    return judged


def _sops_metadata(value: Any) -> bool:
    """Whether ``value`` is the ``sops`` metadata an encrypted file carries
    (its MAC and version): whatever decrypts the file (the sops CLI, Flux's
    decryption, ksops) removes it before the object reaches the API server,
    so it is no field of the object."""
    return isinstance(value, dict) and "mac" in value and ("version" in value or "lastmodified" in value)


def _declares_sops(checker: Checker) -> bool:
    """Whether the kind's own schema has a top-level ``sops`` field: a
    custom resource that carries its encryption metadata to an in-cluster
    decrypter (sops-operator's and sops-secrets-operator's SopsSecret) is
    applied encrypted, the field is the object's."""
    schema = checker.structural or checker.written or {}
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return isinstance(properties, dict) and "sops" in properties


def coverage(items: Sequence[Mapping], options: ValidatorOptions) -> dict[tuple[str, str], tuple[str, str]]:
    """(apiVersion, kind) -> (source, where) of the schema each kind gets;
    ("", "") for kinds no source has."""
    version = builtin.resolve_version(options.kubernetes_version)
    sources = _sources(items, options, version)
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for item in items:
        ref = resource_ref(item)
        if (ref.apiVersion, ref.kind) not in out and ref.apiVersion and ref.kind:
            checker = _find(sources, ref.apiVersion, ref.kind, [])
            out[(ref.apiVersion, ref.kind)] = (checker.source, checker.where) if checker else ("", "")
    return out


def resolve_version(requested: str | None) -> str:
    """The bundled "major.minor" for a requested version; ValueError if none matches."""
    return builtin.resolve_version(requested)


def bundled_versions() -> tuple[str, ...]:
    return builtin.versions()


def _sources(items: Sequence[Mapping], options: ValidatorOptions, version: str) -> Sources:
    """The run's sources, with the CRDs the root itself renders."""
    settings = options.schemas or SchemaSettings(version)
    settings = dataclasses.replace(settings, version=version, strict=options.strict)
    found = [item for item in items if item.value("kind") == crds.CRD_KIND]
    key = (settings, tuple(builtins.id(item) for item in found))
    if _LAST[0] != key or _LAST[1] is None or not _LAST[1].current():
        # validate() and coverage() of one root share the work
        _LAST[:] = [key, sources_for(settings).with_crds(_crd_documents(found))]
    overlay: Sources = _LAST[1]
    return overlay


_LAST: list[Any] = [None, None]


def _crd_documents(found: Sequence[Mapping]) -> list[tuple[str, str, Callable[[], Any], str]]:
    out = []
    for item in found:
        spec = item.mapping("spec")
        names = spec.mapping("names") if spec is not None else None
        group = spec.value("group") if spec is not None else None
        kind = names.value("kind") if names is not None else None
        if isinstance(group, str) and isinstance(kind, str):
            out.append((group, kind, item.to_data, str(item.origin.location)))
    return out


def _find(sources: Sources, api_version: str, kind: str, results: list[Result]) -> Checker | None:
    try:
        return sources.find(api_version, kind)
    except LocationError as e:
        results.append(Result(message=f"schema location: {e}", severity="error",
                              tags=(("validator", id), ("rule", "schema-location"))))
        return None


# -- checking -----------------------------------------------------------------

def _check(item: Mapping, data: Any, checker: Checker, version: str, strict: bool,
           api_version: str = "") -> list[Result]:
    if checker.valid(data):
        return []
    # The full validator is the authority: if it finds nothing, the item is valid.
    tags: tuple[tuple[str, str], ...] = (("schema-source", checker.source),)
    if checker.source == BUILTIN:
        tags = (("kubernetes-version", version),) + tags
    seen: set[tuple[str, str]] = set()
    results = []
    secret = item.value("kind") == "Secret"
    errors = sorted(checker.full.iter_errors(data), key=lambda e: _sort_key(e.absolute_path))
    unpinned = _unpinned_release(checker, api_version)
    for error in errors:
        if isinstance(error.instance, str) and CIPHERTEXT.match(error.instance):
            continue  # SOPS ciphertext: the value is what decryption gives, not known here
        severity = _unknown_field_severity(checker, strict) if error.validator == "additionalProperties" else "error"
        if unpinned and severity == "error" and not (error.validator == "type" and error.instance is None):
            severity = "warning"
        for path, message in _describe(error, secret):
            if (path, message) not in seen:
                seen.add((path, message))
                results.append(make_result(id, item, message, path, severity=severity,
                                           rule=str(error.validator), extra_tags=tags))
    return results


def _unknown_field_severity(checker: Checker, strict: bool) -> str:
    """kubectl refuses an unknown field (strict field validation, its
    default) and the API server itself drops it: a warning, an error with
    ``--strict``. A schema location's or the cache's catalog is a snapshot
    of some release of the CRD, often older than the one installed, whose
    new fields it does not know: info there."""
    if strict:
        return "error"
    return "info" if checker.source in (LOCATION, CACHE) else "warning"


# An alpha API version ("v1alpha1", "v2alpha3") may change shape from one
# release to the next without a new version name (the Kubernetes API
# versioning policy: "may change in incompatible ways in a later software
# release without notice"); beta and GA versions may not.
_ALPHA = re.compile(r"v\d+alpha\d+")


def _unpinned_release(checker: Checker, api_version: str) -> bool:
    """Whether the schema is an alpha version's from a location or the
    cache: a catalog holds one release of each CRD (the newest), and nothing
    ties it to the release the cluster installs, so what it refuses of an
    alpha version is a warning. A null stays an error: the value is missing
    (an unset variable, an empty list item), which no release accepts in a
    typed field."""
    if checker.source not in (LOCATION, CACHE):
        return False
    return bool(_ALPHA.fullmatch(api_version.rpartition("/")[2]))


def _map_lists(item: Mapping, data: Any, checker: Checker) -> list[Result]:
    """Items of an ``x-kubernetes-list-type: map`` list with the same keys."""
    if checker.written is None:
        return []
    found = lists.duplicates(checker.written, data, checker.resolve or (lambda node: node))
    tags = (("schema-source", checker.source),)
    results = []
    for path, message in found:
        if checker.source == BUILTIN and _is_env(path):
            hidden = _hidden_env(data, path)
            if hidden is not None:
                results.append(make_result(id, item, f"{field_path(path)}: {hidden}", field_path(path),
                                           severity="warning", rule=ENV_HIDES, extra_tags=tags))
            continue
        results.append(make_result(id, item, f"{field_path(path)}: {message}", field_path(path),
                                   rule="list-map-keys", extra_tags=tags))
    return results


# A container's env with a name twice: the API server keeps both, the later
# wins, and it warns (pkg/api/pod/warnings.go, "hides previous definition"),
# unless the later value builds on the earlier ($(NAME) inside a longer
# value); `kubectl apply` may drop one, and server-side apply refuses the
# list (duplicate entries for a list-map key), which is how Flux applies.
ENV_HIDES = "env-hides"
_CONTAINER_LISTS = frozenset({"containers", "initContainers", "ephemeralContainers"})


def _is_env(path: Sequence[str | int]) -> bool:
    return len(path) >= 4 and path[-2] == "env" and path[-4] in _CONTAINER_LISTS


def _hidden_env(data: Any, path: Sequence[str | int]) -> str | None:
    """The warning for the env item at ``path``, None where the API server gives none."""
    node = data
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    if not isinstance(node, dict):
        return None
    name, value = str(node.get("name")), node.get("value")
    reference = f"$({name})"
    if node.get("valueFrom") is None and isinstance(value, str) and value != reference and reference in value:
        return None  # X="$(X)123": builds on the earlier definition
    return (f"hides previous definition of {name!r}: the API server keeps the later one and warns; "
            f"kubectl apply may drop one, and server-side apply (Flux) refuses the list")


def _embedded_metadata(item: Mapping, data: Any, checker: Checker) -> list[Result]:
    """The metadata of embedded resources (``x-kubernetes-embedded-resource``),
    which the API server validates as ObjectMeta: names, label and annotation keys."""
    assert checker.structural is not None
    from krmcheck.schemas import embedded

    if not embedded.has_embedded(checker.structural):
        return []
    from krmcheck.tree import fieldpath
    from krmcheck.validators.metadata import embedded_problems

    tags = (("schema-source", checker.source),)
    results = []
    for at in embedded.resources(checker.structural, data):
        steps = fieldpath.from_parts([*at, "metadata"])
        node, depth = fieldpath.walk(item, steps)
        if depth == len(steps) and isinstance(node, Mapping):  # a defaulted one has no node, nor labels
            results += [make_result(id, item, message, path, rule=f"embedded-{rule}", extra_tags=tags)
                        for path, message, rule in embedded_problems(node, (*at, "metadata"))]
    return results


# What changes from one release of a CRD to the next, under the same API
# version: its CEL rules (Crossplane 2 made Pipeline the only mode of a
# v1 Composition) and the values its enums allow.
_RELEASE_RULES = frozenset({"cel", "enum"})


def _another_release(data: Any, checker: Checker, judged: list[Result]) -> list[Result]:
    """A catalog's schema (a location, the cache) is one release of the CRD.
    An object that writes, inside its body, a section (a map or a list)
    that schema does not know was written for another release, which has
    that feature: what the schema's CEL rules and enums refuse at or below
    the map holding the section is a warning that names it. No evidence: a
    section at the object's top level (misplaced content), an unknown
    scalar (a field misnamed), an object with a near miss of a known field
    anywhere (a slip: the object is judged as written), a missing field or
    a wrong type (slips in any release)."""
    if not any(r.severity == "error" and _rule_of(r) in _RELEASE_RULES for r in judged):
        return judged
    if not any(_rule_of(r) == "additionalProperties" for r in judged):
        return judged
    import difflib

    from krmcheck.schemas.errors import unexpected_keys

    holders: dict[tuple[str | int, ...], list[str]] = {}  # the map holding such fields -> their names
    for error in checker.full.iter_errors(data):
        parts = tuple(error.absolute_path)
        known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        for name in unexpected_keys(error):
            if difflib.get_close_matches(name, list(known) if isinstance(known, dict) else [], n=1, cutoff=0.8):
                return judged  # a slip: the object is judged as written
            if parts and isinstance(error.instance[name], (dict, list)):
                holders.setdefault(parts, []).append(name)
    if not holders:
        return judged
    out = []
    for r in judged:
        fields = _fields_beside(r, holders) if r.severity == "error" and _rule_of(r) in _RELEASE_RULES else []
        if fields:
            r = dataclasses.replace(r, severity="warning", message=(
                f"{r.message.rstrip('.')}; the object writes {', '.join(fields)}, which this schema does not know: "
                f"it was written for another release of the CRD than the one the schema describes"))
        out.append(r)
    return out


def _fields_beside(result: Result, holders: dict[tuple[str | int, ...], list[str]]) -> list[str]:
    """The unknown fields of the maps at or above the refused field."""
    found = []
    for parts, names in holders.items():
        where = field_path(list(parts))
        path = result.field_path or ""
        if path == where or path.startswith((where + ".", where + "[")):
            found += [field_path(list(parts) + [name]) for name in names]
    return sorted(found)


def _cel(item: Mapping, data: Any, checker: Checker,
         unjudged: dict[tuple[str, str], tuple[Mapping, dict[str, str]]]) -> list[Result]:
    """The schema's CEL rules; the rules that could not be judged are collected per kind."""
    assert checker.structural is not None
    from krmcheck.schemas import cel  # custom kinds only

    if not cel.has_rules(checker.structural):
        return []
    ref = resource_ref(item)
    tags = (("schema-source", checker.source),)
    if not cel.available():
        rules = {rule: "CEL needs the cel-expr-python package (Python 3.11 or newer)"
                 for rule in _all_rules(checker.structural)}
        unjudged.setdefault((ref.apiVersion, ref.kind), (item, {}))[1].update(rules)
        return []
    outcome = cel.evaluate(checker.structural, data)
    for u in outcome.unjudged:
        unjudged.setdefault((ref.apiVersion, ref.kind), (item, {}))[1].setdefault(u.rule, u.why)
    severity = "warning" if _unpinned_release(checker, ref.apiVersion) else "error"
    return [make_result(id, item, f"{field_path(v.path)}: {v.message}" if v.path else v.message,
                        field_path(v.path), severity=severity, rule="cel",
                        extra_tags=tags + (("cel-rule", v.rule),))
            for v in outcome.violations]


def _all_rules(schema: Any) -> list[str]:
    if not isinstance(schema, dict):
        return []
    rules = schema.get("x-kubernetes-validations")
    found = [r["rule"] for r in (rules if isinstance(rules, list) else ()) if isinstance(r, dict)
             and isinstance(r.get("rule"), str)]
    props = schema.get("properties")
    for sub in (list(props.values()) if isinstance(props, dict) else []) + [schema.get("items"),
                                                                            schema.get("additionalProperties")]:
        found += _all_rules(sub)
    return found


def _unjudged_result(item: Mapping, rules: dict[str, str]) -> Result:
    """One info per kind and root about the CEL rules that were not judged
    (``schema-unjudged``; the run reports each kind once)."""
    return make_result(UNJUDGED, item, "", "kind", severity="info", rule="cel-unjudged",
                       extra_tags=(("rules", json.dumps(sorted(rules.items()))),))


def _unjudged_patterns_result(item: Mapping, checker: Checker) -> Result:
    """One info per kind and root about the ``pattern``s of its schema that
    RE2 cannot compile, which were left out (``schema-unjudged``, with the
    CEL rules not judged: the run reports each kind once)."""
    listed = [[p.field, p.pattern, p.reason] for p in checker.unjudged]
    return make_result(UNJUDGED, item, "", "kind", severity="info", rule="pattern-unjudged",
                       extra_tags=(("patterns", json.dumps(listed)), ("schema-where", checker.where)))


def _field_rules(item: Mapping, api_version: str, kind: str, version: str,
                 listed: set[str] | frozenset[str] = frozenset()) -> list[Result]:
    """The API server's field rules that the schemas lack (allowed values,
    formats, ranges, uniqueness...); a duplicate that an ``x-kubernetes-list-type:
    map`` list already reported (``listed``: the items' paths) is not repeated."""
    tags = (("kubernetes-version", version), ("schema-source", BUILTIN))
    return [make_result(id, item, f"{field_path(v.path)}: {v.message}", field_path(v.path),
                        rule=v.rule.id, extra_tags=tags)
            for v in rules.check(item, api_version, kind, version)
            if not (v.rule.check == "unique" and {field_path(v.path), field_path(v.path[:-1])} & listed)]


# Rules the API server applies to a StatefulSet's pods only when its
# controller creates them (ValidatePodTemplateSpecForStatefulSet leaves the
# pod spec out), where a mutating webhook may add what the template lacks.
POD_TIME = frozenset({"statefulset-volume-mount-refers-to-volume"})


def _completed_by_pod_webhook(item: Mapping, found: list[Result], items: Sequence[Mapping]) -> list[Result]:
    """A StatefulSet's pod-time errors, as warnings where the root installs a
    MutatingWebhookConfiguration whose webhook selects the StatefulSet's pods
    by their labels (a non-empty ``objectSelector`` the template's labels
    satisfy; a ``namespaceSelector`` on ``kubernetes.io/metadata.name`` that
    names the namespace; ``rules``, where written, taking pods on CREATE):
    the pods pass through it before the API server judges them, and it may
    add the volume the template mounts (Knative's dispatchers)."""
    if not any(r.severity == "error" and _rule_of(r) in POD_TIME for r in found):
        return found
    template = lookup(item, ["spec", "template", "metadata", "labels"])
    labels = string_map(template)
    namespace = namespace_of(item)
    for other in items:
        if resource_ref(other).kind != "MutatingWebhookConfiguration":
            continue
        hooks = other.sequence("webhooks")
        for hook in hooks.items if hooks is not None else ():
            if isinstance(hook, Mapping) and _selects_pods(hook, labels, namespace):
                note = (f"; the pods it creates pass through the mutating webhook {scalar_text(hook.get('name'))} "
                        f"the root installs, which selects them by label and may add what the template lacks")
                return [dataclasses.replace(r, severity="warning", message=r.message + note)
                        if r.severity == "error" and _rule_of(r) in POD_TIME else r for r in found]
    return found


def _selects_pods(hook: Mapping, labels: dict[str, str], namespace: str) -> bool:
    terms = label_selector(hook.get("objectSelector"), ())
    if not terms or not all(t.matches(labels) for t in terms):
        return False  # no objectSelector: nothing ties the webhook to these pods
    for t in label_selector(hook.get("namespaceSelector"), ()) or ():
        if t.key == "kubernetes.io/metadata.name" and namespace and not t.matches({t.key: namespace}):
            return False
    written = hook.sequence("rules")
    if written is None:
        return True  # rules a webhook server fills in when it starts (Knative)
    for rule in written.items:
        if not isinstance(rule, Mapping):
            continue
        resources = {scalar_text(v) for v in rule.sequence("resources") or ()}
        operations = {scalar_text(v) for v in rule.sequence("operations") or ()}
        if resources & {"pods", "*", "*/*"} and operations & {"CREATE", "*"}:
            return True
    return False


def _rule_of(result: Result) -> str:
    return dict(result.tags).get("rule", "")


def _crd_schemas(item: Mapping, data: Any, version: str) -> list[Result]:
    """A CRD's schemas as the apiextensions API server judges them before it
    creates the CRD (:mod:`krmcheck.schemas.structural`): each refusal at
    the schema node to edit."""
    from krmcheck.schemas import structural  # loaded by the first CRD

    tags = (("kubernetes-version", version), ("schema-source", BUILTIN))
    return [make_result(id, item, p.message, field_path(p.path), rule=p.rule, extra_tags=tags)
            for p in structural.check(data, version)]


def _sort_key(path: Sequence[str | int]) -> list[tuple[int, str]]:
    return [(0, f"{p:09d}") if isinstance(p, int) else (1, p) for p in path]


def _describe(error: jsonschema.ValidationError, secret: bool = False) -> Iterator[tuple[str, str]]:
    """(field path, short message) for one schema error; some errors name
    several fields. The values of a Secret are described, never quoted."""
    parts = list(error.absolute_path)
    where = field_path(parts)
    prefix = f"{where}: " if where else ""
    kind = error.validator
    # the whole Secret, or its data: jsonschema would print what it holds
    hidden = secret and parts[:1] in ([], ["data"], ["stringData"])
    value = _kind_of(error.instance) if hidden else _quoted(error.instance)
    if kind == "required" and isinstance(error.instance, dict):
        for name in error.validator_value:
            if name not in error.instance:
                yield where, f"{prefix}missing required field {name!r}"
    elif kind == "additionalProperties" and isinstance(error.instance, dict):
        from krmcheck.schemas.errors import unexpected_keys  # loaded by the first unknown field

        for name in unexpected_keys(error):
            yield field_path(parts + [name]), f"{field_path(parts + [name])}: unknown field"
    elif kind == "type":
        yield where, f"{prefix}{value} is not of type {_types(error.validator_value)}"
    elif kind == "enum":
        allowed = ", ".join(_quoted(v) for v in error.validator_value[:8])
        more = ", ..." if len(error.validator_value) > 8 else ""
        yield where, f"{prefix}{value} is not one of {allowed}{more}"
    elif kind in ("oneOf", "anyOf") and _alternative_types(error.validator_value):
        inner = _inside_alternative(error)
        if inner is not None:  # the value has an alternative's type: what fails is inside it
            yield from _describe(inner, secret)
        else:
            yield where, (f"{prefix}{value} is not of type "
                          f"{_types(_alternative_types(error.validator_value))}")
    elif hidden:  # jsonschema's own message would quote the value
        yield where, f"{prefix}{value} fails the schema's {kind!r}"
    else:
        yield where, f"{prefix}{_shorten(error.message, 120)}"


_JSON_TYPES = ((bool, ("boolean",)), (int, ("integer", "number")), (float, ("number",)), (str, ("string",)),
               (dict, ("object",)), (list, ("array",)), (type(None), ("null",)))


def _inside_alternative(error: jsonschema.ValidationError) -> jsonschema.ValidationError | None:
    """For a ``oneOf``/``anyOf`` the value fails though its type is one an
    alternative allows (``{default: null}`` where the alternatives are an
    object of strings and a string): the error inside the alternative of
    that type that goes deepest, so the message names the field at fault."""
    types = next((names for kind, names in _JSON_TYPES if isinstance(error.instance, kind)), ())
    if not set(types) & set(_alternative_types(error.validator_value)):
        return None
    inside = [e for e in error.context or () if e.validator != "type" or e.relative_path]
    if not inside:
        return None
    return max(inside, key=lambda e: (len(e.relative_path), e.validator != "type"))


def _alternative_types(alternatives: list[Any]) -> list[str]:
    """The types of ``oneOf`` alternatives that are bare types (IntOrString, Quantity)."""
    found: list[str] = []
    for alt in alternatives:
        t = alt.get("type") if isinstance(alt, dict) else None
        found.extend([t] if isinstance(t, str) else t or [])
    return found


def _types(types: str | list[str]) -> str:
    # Every field of the "local" schemas also allows null; saying so adds nothing.
    names = [types] if isinstance(types, str) else [t for t in dict.fromkeys(types) if t != "null"]
    return " or ".join(f"'{t}'" for t in names) or "'null'"


def _kind_of(value: Any) -> str:
    """A value as its kind only ("a string"), for the values of a Secret."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "a string" if isinstance(value, str) else "null" if value is None else _quoted(value)


def _quoted(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return repr(_shorten(value, 40))
    return json.dumps(value)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _without_schema(sources: Sources, items: list[Mapping], version: str) -> list[Result]:
    """Resources of a kind no source has a schema for: an error at each
    one's ``kind:`` where its group/version is known not to serve the kind
    (:mod:`krmcheck.schemas.kinds`), else one ``schema-missing`` info."""
    from krmcheck.schemas import kinds  # loaded by the first kind without a schema
    from krmcheck.validators.api_version import find as deprecation

    first = resource_ref(items[0])
    removed = deprecation(first.apiVersion, first.kind)  # the api-version validator's finding
    unknown = kinds.unknown(sources, first.apiVersion, first.kind, version) if removed is None else None
    if unknown is None:
        return [_skipped_result(items, version)]
    tags: tuple[tuple[str, str], ...] = (("kubernetes-version", version),) if unknown.builtin else ()
    grouped = kinds.openshift_group(first.apiVersion, first.kind) if unknown.builtin else None
    if grouped is not None:
        tags += ((kinds.REFUSED_BY, "oc"),)  # oc refuses it too, wherever it reads the file
    return [make_result(id, item, unknown.message(version), "kind", rule="unknown-kind", extra_tags=tags)
            for item in items]


def _skipped_result(items: list[Mapping], version: str) -> Result:
    first = resource_ref(items[0])
    message = (f"no schema for {first.kind} ({first.apiVersion}) in Kubernetes {version}; "
               f"{_count(len(items), 'resource')} of this kind not checked")
    # at the kind: the line that names what has no schema (a name an overlay
    # prefixed would point into the overlay)
    return make_result(MISSING, items[0], message, "kind", severity="info", rule="no-schema",
                       extra_tags=(("kubernetes-version", version), ("count", str(len(items)))))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


# The GitOps controllers' own API groups: their kinds' schemas come with a catalog
_CONTROLLER_GROUPS = ("toolkit.fluxcd.io", "extensions.fluxcd.io", "fluxcd.controlplane.io", "argoproj.io")


def missing_per_run(roots: Sequence[RootReport]) -> tuple[RootReport, ...]:
    """One finding per kind for the whole run about kinds without a schema
    (``schema-missing``) and CEL rules not judged (``schema-unjudged``):
    each root's finding about a kind is moved to the kind's first location
    and says how many resources, rules and roots the run has of it, so that
    reports show it once."""
    kinds: dict[tuple[str, str, str], list[Finding]] = {}
    for root in roots:
        for f in root.findings:
            if f.rule in (MISSING, UNJUDGED) and f.result.resource_ref is not None:
                ref = f.result.resource_ref
                kinds.setdefault((f.rule, ref.apiVersion, ref.kind), []).append(f)
    if not kinds:
        return tuple(roots)
    moved: dict[int, Finding] = {}
    for (rule, api_version, kind), found in kinds.items():
        first = min(found, key=lambda f: (f.location, f.root))
        named = _count(len({f.root for f in found}), "root")
        if rule == MISSING:
            total = sum(int(dict(f.result.tags).get("count", "1")) for f in found)
            version = dict(first.result.tags).get("kubernetes-version", "")
            message = (f"no schema for {kind} ({api_version}) in Kubernetes {version}: "
                       f"{_count(total, 'resource')} in {named} not checked")
            if api_version.partition("/")[0].endswith(_CONTROLLER_GROUPS):
                message += ("; `krmcheck schemas pull` (once; later runs read it offline) brings the "
                            "controllers' schemas from the CRDs-catalog")
        else:
            message = _unjudged_message(kind, api_version, found, named)
        for f in found:
            moved[builtins.id(f)] = dataclasses.replace(
                first, root=f.root, result=dataclasses.replace(first.result, message=message))
    return tuple(dataclasses.replace(r, findings=tuple(moved.get(builtins.id(f), f) for f in r.findings))
                 for r in roots)


def _unjudged_message(kind: str, api_version: str, found: list[Finding], named: str) -> str:
    rules: dict[str, str] = {}
    patterns: dict[tuple[str, str], tuple[str, str]] = {}  # (field, pattern) -> (why, the schema's file)
    for f in found:
        tags = dict(f.result.tags)
        rules.update(dict(json.loads(tags.get("rules", "[]"))))
        for field, pattern, why in json.loads(tags.get("patterns", "[]")):
            patterns.setdefault((field, pattern), (why, tags.get("schema-where", "")))
    said = []
    if rules:
        reasons: dict[str, list[str]] = {}
        for rule, why in rules.items():
            reasons.setdefault(why.split(":")[0], []).append(f"{rule!r} ({why})" if ":" in why else repr(rule))
        parts = [f"{_count(len(listed), 'rule')} {why}: {'; '.join(listed[:2])}{' ...' if len(listed) > 2 else ''}"
                 for why, listed in sorted(reasons.items())]
        said.append(f"{_count(len(rules), 'CEL rule')} of {kind} ({api_version}) not judged in {named}: "
                    + "; ".join(parts))
    if patterns:
        listed = [f"{field}: {pattern!r} ({why})" for (field, pattern), (why, _) in sorted(patterns.items())]
        where = sorted({w for _, w in patterns.values() if w})
        said.append(f"{_count(len(patterns), 'pattern')} of {kind} ({api_version}) not judged in {named}: "
                    f"RE2 (Go's syntax, as the API server reads it) cannot compile "
                    f"{'; '.join(listed[:3])}{' ...' if len(listed) > 3 else ''}"
                    + (f"; the schema is in {', '.join(where)}" if where else ""))
    return ". ".join(said)
