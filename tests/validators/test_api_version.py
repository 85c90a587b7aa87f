from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

import pytest

from krmcheck.locate import locate
from krmcheck.resource.resource import Resource
from krmcheck.results import ResourceRef, Result
from krmcheck.schemas import builtin
from krmcheck.tree.load import load_documents
from krmcheck.validators import VALIDATORS, ValidatorOptions, api_version
from krmcheck.validators.api_version import Version

REPO = Path(__file__).resolve().parents[2]


def run(text: str, version: str | None = None) -> list[Result]:
    return api_version.validate(load_documents(text, "app/manifests.yaml"),
                                ValidatorOptions(kubernetes_version=version))


def resource(api: str, kind: str, name: str = "r") -> str:
    return f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}, namespace: prod}}\n"


CRONJOB = resource("batch/v1beta1", "CronJob", "nightly")


def test_registered_under_its_id() -> None:
    assert api_version.id == "api-version"
    assert VALIDATORS["api-version"] is api_version


def test_removed_version_is_an_error_naming_the_replacement() -> None:
    [result] = run(CRONJOB)
    assert result.severity == "error"
    assert result.message == "batch/v1beta1 CronJob was removed in Kubernetes 1.25; use batch/v1"
    assert result.field_path == "apiVersion"
    assert result.resource_ref == ResourceRef("batch/v1beta1", "CronJob", "nightly", "prod")
    assert result.tags == (("validator", "api-version"), ("rule", "removed"))


def test_deprecated_but_served_version_is_a_warning() -> None:
    [result] = run(CRONJOB, "1.22")
    assert result.severity == "warning"
    assert result.message == ("batch/v1beta1 CronJob is deprecated since Kubernetes 1.21 "
                              "and will be removed in 1.25; use batch/v1")
    assert result.field_path == "apiVersion"
    assert result.tags == (("validator", "api-version"), ("rule", "deprecated"))


@pytest.mark.parametrize(("version", "severity"), [
    ("1.20", None),  # before the deprecation: nothing to say
    ("1.21", "warning"),
    ("v1.24", "warning"),
    ("1.24.9", "warning"),
    ("1.25", "error"),
    (" v1.30.2 ", "error"),
    (None, "error"),  # the newest bundled version
])
def test_the_kubernetes_version_option_is_honoured(version: str | None, severity: str | None) -> None:
    assert [r.severity for r in run(CRONJOB, version)] == ([severity] if severity else [])


def test_default_is_the_newest_bundled_version() -> None:
    newest = builtin.versions()[-1]
    assert api_version.target_version(None) == api_version.target_version(newest)


@pytest.mark.parametrize("version", ["", "latest", "1", "1.x", "1.30-rc1"])
def test_a_malformed_version_is_refused(version: str) -> None:
    with pytest.raises(ValueError, match="unknown Kubernetes version"):
        run(CRONJOB, version)


def test_changes_are_part_of_the_message() -> None:
    [result] = run(resource("extensions/v1beta1", "Ingress"))
    assert result.message.startswith(
        "extensions/v1beta1 Ingress was removed in Kubernetes 1.22; use networking.k8s.io/v1. "
        "In networking.k8s.io/v1: spec.backend becomes spec.defaultBackend;")


def test_removed_without_replacement() -> None:
    [result] = run(resource("policy/v1beta1", "PodSecurityPolicy"))
    assert result.severity == "error"
    assert result.message.startswith(
        "policy/v1beta1 PodSecurityPolicy was removed in Kubernetes 1.25, with no replacement: "
        "enforce pod security with Pod Security Admission")


def test_kinds_share_an_api_version_with_different_dates() -> None:
    # extensions/v1beta1: Deployment went in 1.16, Ingress in 1.22
    text = resource("extensions/v1beta1", "Deployment") + "---\n" + resource("extensions/v1beta1", "Ingress")
    assert [(r.severity, r.message.split(";")[0]) for r in run(text, "1.20")] == [
        ("error", "extensions/v1beta1 Deployment was removed in Kubernetes 1.16"),
        ("warning", "extensions/v1beta1 Ingress is deprecated since Kubernetes 1.14 and will be removed in 1.22"),
    ]


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "ControllerRevision"])
def test_an_entry_without_kinds_covers_every_kind(kind: str) -> None:
    [result] = run(resource("apps/v1beta2", kind))
    assert result.message.startswith(f"apps/v1beta2 {kind} was removed in Kubernetes 1.16; use apps/v1.")


def test_replacement_of_another_kind() -> None:
    [result] = run(resource("v1", "Endpoints"), "1.33")
    assert result.severity == "warning"  # a stable kind: deprecated, never removed
    assert result.message.startswith(
        "v1 Endpoints is deprecated since Kubernetes 1.33; use discovery.k8s.io/v1 EndpointSlice.")
    assert run(resource("v1", "Endpoints"), "1.32") == []


@pytest.mark.parametrize(("api", "kind"), [
    ("batch/v1", "CronJob"),
    ("networking.k8s.io/v1", "Ingress"),
    ("apps/v1", "Deployment"),
    ("v1", "Service"),
    ("networking.k8s.io/v1beta1", "HTTPRoute"),  # a kind the entry does not name
    ("gateway.networking.k8s.io/v1beta1", "HTTPRoute"),  # a custom resource
    ("example.com/v1beta1", "CronJob"),
])
def test_served_and_unknown_api_versions_pass(api: str, kind: str) -> None:
    assert run(resource(api, kind)) == []


def test_resources_without_api_version_or_kind_are_ignored() -> None:
    assert run("kind: CronJob\nmetadata: {name: a}\n---\napiVersion: batch/v1beta1\nmetadata: {name: b}\n") == []


def test_finding_is_located_at_the_api_version_line() -> None:
    text = "# a CronJob\n" + CRONJOB
    [doc] = load_documents(text, "base/cronjob.yaml")
    [result] = api_version.validate([doc], ValidatorOptions())  # type: ignore[list-item]
    finding = locate(result, [Resource(doc)], "overlays/prod")  # type: ignore[arg-type]
    assert finding.location == ("base/cronjob.yaml", 2, 1)


# --- the table ------------------------------------------------------------

# Every entry of the Kubernetes deprecated API migration guide, v1.16 to v1.32:
# (apiVersion, kind, release that stopped serving it, apiVersion to use; None: none).
GUIDE = [
    ("extensions/v1beta1", "NetworkPolicy", "1.16", "networking.k8s.io/v1"),
    ("extensions/v1beta1", "PodSecurityPolicy", "1.16", None),
    *[(api, kind, "1.16", "apps/v1")
      for api, kinds in [("extensions/v1beta1", ["DaemonSet", "Deployment", "ReplicaSet"]),
                         ("apps/v1beta1", ["Deployment", "StatefulSet"]),
                         ("apps/v1beta2", ["DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"])]
      for kind in kinds],
    ("admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration", "1.22", "admissionregistration.k8s.io/v1"),
    ("admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration", "1.22", "admissionregistration.k8s.io/v1"),
    ("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition", "1.22", "apiextensions.k8s.io/v1"),
    ("apiregistration.k8s.io/v1beta1", "APIService", "1.22", "apiregistration.k8s.io/v1"),
    ("authentication.k8s.io/v1beta1", "TokenReview", "1.22", "authentication.k8s.io/v1"),
    ("authorization.k8s.io/v1beta1", "LocalSubjectAccessReview", "1.22", "authorization.k8s.io/v1"),
    ("authorization.k8s.io/v1beta1", "SelfSubjectAccessReview", "1.22", "authorization.k8s.io/v1"),
    ("authorization.k8s.io/v1beta1", "SubjectAccessReview", "1.22", "authorization.k8s.io/v1"),
    ("certificates.k8s.io/v1beta1", "CertificateSigningRequest", "1.22", "certificates.k8s.io/v1"),
    ("coordination.k8s.io/v1beta1", "Lease", "1.22", "coordination.k8s.io/v1"),
    ("extensions/v1beta1", "Ingress", "1.22", "networking.k8s.io/v1"),
    ("networking.k8s.io/v1beta1", "Ingress", "1.22", "networking.k8s.io/v1"),
    ("networking.k8s.io/v1beta1", "IngressClass", "1.22", "networking.k8s.io/v1"),
    *[("rbac.authorization.k8s.io/v1beta1", kind, "1.22", "rbac.authorization.k8s.io/v1")
      for kind in ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]],
    ("scheduling.k8s.io/v1beta1", "PriorityClass", "1.22", "scheduling.k8s.io/v1"),
    *[("storage.k8s.io/v1beta1", kind, "1.22", "storage.k8s.io/v1")
      for kind in ["CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"]],
    ("batch/v1beta1", "CronJob", "1.25", "batch/v1"),
    ("discovery.k8s.io/v1beta1", "EndpointSlice", "1.25", "discovery.k8s.io/v1"),
    ("events.k8s.io/v1beta1", "Event", "1.25", "events.k8s.io/v1"),
    ("autoscaling/v2beta1", "HorizontalPodAutoscaler", "1.25", "autoscaling/v2"),
    ("policy/v1beta1", "PodDisruptionBudget", "1.25", "policy/v1"),
    ("policy/v1beta1", "PodSecurityPolicy", "1.25", None),
    ("node.k8s.io/v1beta1", "RuntimeClass", "1.25", "node.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema", "1.26", "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "PriorityLevelConfiguration", "1.26", "flowcontrol.apiserver.k8s.io/v1"),
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler", "1.26", "autoscaling/v2"),
    ("storage.k8s.io/v1beta1", "CSIStorageCapacity", "1.27", "storage.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", "1.29", "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta2", "PriorityLevelConfiguration", "1.29", "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", "1.32", "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta3", "PriorityLevelConfiguration", "1.32", "flowcontrol.apiserver.k8s.io/v1"),
]


@pytest.mark.parametrize(("api", "kind", "removed", "replacement"), GUIDE,
                         ids=[f"{api}-{kind}" for api, kind, _, _ in GUIDE])
def test_every_entry_of_the_guide_is_in_the_table(api: str, kind: str, removed: str,
                                                  replacement: str | None) -> None:
    entry = api_version.find(api, kind)
    assert entry is not None
    assert str(entry.removed) == removed
    assert entry.replacement == replacement
    assert entry.source == "guide"


TABLE = api_version.table()


def kinds_of(entry: api_version.Deprecation) -> tuple[str, ...]:
    """The kinds an entry names, or for an entry of every kind, those the guide names."""
    return entry.kinds or tuple(kind for api, kind, _, _ in GUIDE if api == entry.api_version)


IDS = [f"{e.api_version}-{'+'.join(e.kinds) or 'all'}" for e in TABLE]
_GROUP_VERSION = re.compile(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?v\d+((alpha|beta)\d+)?")


@pytest.mark.parametrize("entry", TABLE, ids=IDS)
def test_table_entries_are_well_formed(entry: api_version.Deprecation) -> None:
    assert _GROUP_VERSION.fullmatch(entry.api_version)
    assert all(re.fullmatch(r"[A-Z][A-Za-z0-9]*", kind) for kind in entry.kinds)
    assert len(set(entry.kinds)) == len(entry.kinds)
    assert entry.source in ("guide", "lifecycle", "blog")
    assert entry.deprecated >= Version(1, 8)
    if entry.removed is not None:
        # beta versions are served for at least three releases after their deprecation
        assert entry.removed.minor - entry.deprecated.minor >= 3
        assert entry.removed.major == entry.deprecated.major
    else:
        assert "beta" not in entry.api_version and "alpha" not in entry.api_version
    assert entry.replacement != entry.api_version
    assert entry.replacement is not None or entry.changes  # say what to do instead
    if entry.replacement is None:
        assert not entry.replacement_kind
    assert "\n" not in entry.changes


@pytest.mark.parametrize("entry", [e for e in TABLE if e.replacement], ids=[
    i for i, e in zip(IDS, TABLE) if e.replacement])
def test_replacements_are_served_for_good(entry: api_version.Deprecation) -> None:
    assert entry.replacement is not None
    assert kinds_of(entry)
    for kind in kinds_of(entry):
        target_kind = entry.replacement_kind or kind
        replacement = api_version.find(entry.replacement, target_kind)
        assert replacement is None or replacement.removed is None
        # ...and the newest bundled schemas know it
        assert builtin.kind_schema(builtin.versions()[-1], False, entry.replacement, target_kind)


def test_each_api_version_and_kind_has_one_entry() -> None:
    seen: set[tuple[str, str]] = set()
    for entry in TABLE:
        others = [e for e in TABLE if e.api_version == entry.api_version]
        if not entry.kinds:  # an entry for every kind is the only one of its apiVersion
            assert others == [entry]
        for kind in entry.kinds:
            assert (entry.api_version, kind) not in seen
            seen.add((entry.api_version, kind))


@pytest.mark.parametrize("entry", [e for e in TABLE if e.removed],
                         ids=[i for i, e in zip(IDS, TABLE) if e.removed])
def test_table_agrees_with_the_bundled_schemas(entry: api_version.Deprecation) -> None:
    """A release that stopped serving a kind has no schema for it; one between
    the deprecation and the removal (where the schemas reach back) does."""
    assert entry.removed is not None and kinds_of(entry)
    for version in builtin.versions():
        release = api_version.target_version(version)
        for kind in kinds_of(entry):
            schema = builtin.kind_schema(version, False, entry.api_version, kind)
            if release >= entry.removed:
                assert schema is None, (version, kind)
            elif release >= entry.deprecated:
                assert schema is not None, (version, kind)


def test_the_table_is_package_data() -> None:
    settings = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = settings.get("*", []) + settings.get("krmcheck.validators", []) + settings.get("krmcheck", [])
    assert any(fnmatch.fnmatch(api_version.TABLE, p) for p in patterns)


def test_unquoted_versions_in_the_table_are_refused() -> None:
    with pytest.raises(ValueError, match="is not a quoted release"):
        api_version._entry({"apiVersion": "batch/v1beta1", "deprecated": 1.2, "removed": "1.25",
                            "replacement": "batch/v1"}, 0)
    with pytest.raises(ValueError, match="missing 'deprecated'"):
        api_version._entry({"apiVersion": "batch/v1beta1"}, 0)


def test_a_file_kept_for_an_older_release_beside_ones_for_others_is_judged_for_it(tmp_path: Path) -> None:
    # vsphere-csi-driver: manifests/supervisorcluster/1.15 ... 1.35, one
    # directory of manifests per Kubernetes release; 1.21 still serves the
    # v1beta1 CSIDriver its file has, 1.22 (the release that removed it) has v1
    from tests.checkrun import check, write

    old = "apiVersion: storage.k8s.io/v1beta1\nkind: CSIDriver\nmetadata: {name: csi.example.com}\nspec: {}\n"
    write(tmp_path, "manifests/1.21/csi.yaml", old)
    write(tmp_path, "manifests/1.22/csi.yaml", old.replace("v1beta1", "v1"))
    write(tmp_path, "manifests/1.23/csi.yaml", old)  # removed in its own release: still an error
    write(tmp_path, "lonely/1.21/csi.yaml", old)  # a release directory alone says nothing
    write(tmp_path, "drivers/v1.21.4/csi.yaml", old)  # a patch release names an application's version
    write(tmp_path, "drivers/v1.22.0/csi.yaml", old)
    run = check(tmp_path)
    assert sorted(p for p, _, _ in run.located("error")) == [
        "drivers/v1.21.4/csi.yaml", "drivers/v1.22.0/csi.yaml", "lonely/1.21/csi.yaml", "manifests/1.23/csi.yaml"]
    [kept] = [d for d in run.report["defects"] if d["path"] == "manifests/1.21/csi.yaml"]
    assert kept["severity"] == "warning"
    assert kept["message"].endswith("(this file is kept for Kubernetes 1.21, its directory's release among others, "
                                    "which serves it)")
