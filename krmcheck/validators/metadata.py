"""Names, label keys and values, and annotation keys follow Kubernetes' rules.

The API server rejects a resource whose metadata breaks these rules; this
finds it before it gets there. Each problem is an error at the offending
field:

- ``metadata.name`` (or, for an object the API server names,
  ``metadata.generateName`` as a prefix) is a DNS-1123 subdomain (lowercase letters, digits, '-'
  and '.', starting and ending with a letter or digit, at most 253
  characters). Namespaces need a DNS-1123 label (no '.', at most 63),
  Services a DNS-1035 label (a DNS-1123 label starting with a letter), and
  RBAC Roles, ClusterRoles and their bindings only a valid path segment (not
  ``.`` or ``..``, no '/' or '%'); OpenShift's Users and Groups a path
  segment without ':' (an e-mail address is one), its Identities
  ``<providerName>:<providerUserName>``.
- Label keys are an optional DNS-1123 subdomain prefix and '/', then a name
  of at most 63 letters, digits, '-', '_' and '.', starting and ending with a
  letter or digit. Annotation keys follow the same rule, case-insensitively.
- Label values are empty or at most 63 characters of that same set, starting
  and ending with a letter or digit.

Findings about a key point at the key: ``metadata.labels["app.kubernetes.io/name"]``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from krmcheck.resource.resource import MANAGED_BY, MANAGED_BY_VALUE
from krmcheck.results import Result
from krmcheck.tree.node import Mapping
from krmcheck.validators.base import CIPHERTEXT, ValidatorOptions, field_path, make_result, scalar_text

id = "metadata"
# The rule of a value a tool writes for its own build (kubectl's kustomize
# says "(devel)" where a release says its version): a warning, not the
# repository's error.
TOOL_VERSION = "tool-version"
description = "names, label keys and values, and annotation keys are valid for Kubernetes"

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_DNS1123_LABEL = re.compile(_LABEL)
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")

_RBAC = "rbac.authorization.k8s.io"


def _subdomain(name: str) -> str | None:
    if len(name) > 253:
        return "must be at most 253 characters"
    if not _SUBDOMAIN.fullmatch(name):
        return ("must be lowercase letters, digits, '-' and '.', starting and ending "
                "with a letter or digit (DNS-1123 subdomain)")
    return None


def _dns1123_label(name: str) -> str | None:
    if len(name) > 63:
        return "must be at most 63 characters"
    if not _DNS1123_LABEL.fullmatch(name):
        return ("must be lowercase letters, digits and '-', starting and ending "
                "with a letter or digit (DNS-1123 label)")
    return None


def _dns1035_label(name: str) -> str | None:
    if len(name) > 63:
        return "must be at most 63 characters"
    if not _DNS1035_LABEL.fullmatch(name):
        return ("must be lowercase letters, digits and '-', starting with a letter "
                "and ending with a letter or digit (DNS-1035 label)")
    return None


def _path_segment(name: str) -> str | None:
    if name in (".", ".."):
        return "may not be '.' or '..'"
    if "/" in name or "%" in name:
        return "may not contain '/' or '%'"
    return None


def _openshift_user(name: str) -> str | None:
    """OpenShift's User and Group names (openshift-apiserver, user
    validation: ValidateUserName, ValidateGroupName): a path segment,
    without ':', not '~' (``sean@example.com`` is one)."""
    problem = _path_segment(name)
    if problem is not None:
        return problem
    if ":" in name:
        return "may not contain ':'"
    return "may not be '~'" if name == "~" else None


def _openshift_identity(name: str) -> str | None:
    """OpenShift's Identity names (ValidateIdentityName): a path segment,
    ``<providerName>:<providerUserName>``, both parts non-empty."""
    problem = _path_segment(name)
    if problem is not None:
        return problem
    parts = name.split(":")
    if len(parts) != 2 or not parts[0] or not parts[1]:
        return "must be <providerName>:<providerUserName>, both non-empty"
    return None


_OPENSHIFT_USER = "user.openshift.io"

# Name rules that differ from the default (DNS-1123 subdomain), by (group, kind),
# as the API server's per-type validation has them.
_NAME_RULES: dict[tuple[str, str], Callable[[str], str | None]] = {
    ("", "Namespace"): _dns1123_label,
    ("", "Service"): _dns1035_label,
    (_RBAC, "Role"): _path_segment,
    (_RBAC, "ClusterRole"): _path_segment,
    (_RBAC, "RoleBinding"): _path_segment,
    (_RBAC, "ClusterRoleBinding"): _path_segment,
    (_OPENSHIFT_USER, "User"): _openshift_user,
    (_OPENSHIFT_USER, "Group"): _openshift_user,
    (_OPENSHIFT_USER, "Identity"): _openshift_identity,
}


# A file encrypted whole (no encrypted_regex) has its kind and name in SOPS
# ciphertext too, known only once decrypted: nothing of it is judged.
_CIPHERTEXT = CIPHERTEXT


def validate(items: Sequence[Mapping], options: ValidatorOptions) -> list[Result]:
    results = []
    for item in items:
        kind = item.value("kind")
        if isinstance(kind, str) and _CIPHERTEXT.match(kind):
            continue
        for path, message, rule in _problems(item):
            severity = "warning" if rule == TOOL_VERSION else "error"
            results.append(make_result(id, item, message, path, severity=severity, rule=rule))
    return results


def _problems(item: Mapping) -> Iterator[tuple[str, str, str]]:
    """(field path, message, rule) for every metadata problem of one resource."""
    meta = item.mapping("metadata")
    if meta is None:
        return
    yield from _name_problems(item, meta)
    yield from _labels_and_annotations(meta, ("metadata",))


def _labels_and_annotations(meta: Mapping, at: tuple[str | int, ...]) -> Iterator[tuple[str, str, str]]:
    yield from _key_problems(meta, at, "labels", "label-key", lambda key: key)
    yield from _label_value_problems(meta, at)
    # The API server lowercases annotation keys before checking them.
    yield from _key_problems(meta, at, "annotations", "annotation-key", str.lower)


def embedded_problems(meta: Mapping, at: tuple[str | int, ...]) -> Iterator[tuple[str, str, str]]:
    """(field path, message, rule) for the metadata at ``at`` of a custom
    resource's embedded resource (``x-kubernetes-embedded-resource``), which
    the API server checks as ObjectMeta of any kind: the name a path segment,
    the namespace a DNS-1123 label, labels and annotations as above."""
    for field, rule in (("name", _path_segment), ("namespace", _dns1123_label)):
        value = scalar_text(meta.get(field))
        if value:  # an empty one is no name (the server checks a made-up one) and no namespace
            why = rule(value)
            if why:
                path = field_path([*at, field])
                yield path, f"{path}: {value!r} is not a valid {field}: {why}", field
    yield from _labels_and_annotations(meta, at)


def _name_problems(item: Mapping, meta: Mapping) -> Iterator[tuple[str, str, str]]:
    group = str(item.value("apiVersion", "") or "").rpartition("/")[0]
    kind = str(item.value("kind", "") or "")
    rule = _NAME_RULES.get((group, kind), _subdomain)
    if "name" in meta and scalar_text(meta.get("name")) != "":
        name = scalar_text(meta.get("name"))
        why = rule(name)
        if why:
            yield "metadata.name", f"metadata.name: {name!r} is not a valid {kind or 'resource'} name: {why}", "name"
    elif "generateName" in meta:
        # The API server checks a prefix as a name whose trailing '-' stands
        # for the characters it appends (ValidateObjectMeta, prefix=true).
        prefix = scalar_text(meta.get("generateName"))
        why = rule(prefix[:-1] + "a" if len(prefix) > 1 and prefix.endswith("-") else prefix)
        if why:
            yield ("metadata.generateName", f"metadata.generateName: {prefix!r} is not a valid prefix of a "
                   f"{kind or 'resource'} name: {why}", "generate-name")


def _key_problems(meta: Mapping, at: tuple[str | int, ...], field: str, rule: str,
                  normalize: Callable[[str], str]) -> Iterator[tuple[str, str, str]]:
    entries = meta.mapping(field)
    for key in entries.items if entries else ():
        why = qualified_name_problem(normalize(key))
        if why:
            path = field_path([*at, field, key])
            yield path, f"{path}: {key!r} is not a valid {rule.replace('-', ' ')}: {why}", rule


def _label_value_problems(meta: Mapping, at: tuple[str | int, ...]) -> Iterator[tuple[str, str, str]]:
    labels = meta.mapping("labels")
    for key, node in labels.items.items() if labels else ():
        why = label_value_problem(scalar_text(node))
        if why and key == MANAGED_BY and scalar_text(node) == MANAGED_BY_VALUE:
            path = field_path([*at, "labels", key])
            yield path, (f"{path}: {MANAGED_BY_VALUE!r}, which buildMetadata's managedByLabel writes as kubectl's "
                         f"embedded kustomize names itself, is not a valid label value: the API server refuses it "
                         f"from kubectl apply -k; a released kustomize (its CLI, Argo CD) writes kustomize-vX.Y.Z"), \
                TOOL_VERSION
        elif why:
            path = field_path([*at, "labels", key])
            yield path, f"{path}: {scalar_text(node)!r} is not a valid label value: {why}", "label-value"


def qualified_name_problem(key: str) -> str | None:
    """What is wrong with a label or annotation key (``prefix/name`` or ``name``), or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and "/" in prefix:
        return "may contain at most one '/'"
    if slash and not prefix:
        return "the prefix before '/' may not be empty"
    if prefix:
        why = _subdomain(prefix)
        if why:
            return f"the prefix {prefix!r} {why}"
    if not name:
        return "the name part may not be empty"
    if len(name) > 63:
        return f"the name part {name!r} must be at most 63 characters"
    if not _QUALIFIED.fullmatch(name):
        return (f"the name part {name!r} must be letters, digits, '-', '_' and '.', "
                "starting and ending with a letter or digit")
    return None


def label_value_problem(value: str) -> str | None:
    """What is wrong with a label value, or None."""
    if len(value) > 63:
        return "must be at most 63 characters"
    if value and not _QUALIFIED.fullmatch(value):
        return "must be empty or letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
    return None
