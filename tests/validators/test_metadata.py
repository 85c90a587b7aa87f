from __future__ import annotations

import pytest

from krmcheck.results import ResourceRef, Result
from krmcheck.tree.load import load_documents
from krmcheck.validators import VALIDATORS, ValidatorOptions
from krmcheck.validators.base import field_path
from krmcheck.validators import metadata


def run(text: str) -> list[Result]:
    return metadata.validate(load_documents(text, "app/res.yaml"), ValidatorOptions())


def named(kind: str, name: str, api_version: str = "v1") -> str:
    return f"apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: {name!r}\n  namespace: prod\n"


def labelled(labels: str, annotations: str = "{}") -> str:
    return f"""\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  labels: {labels}
  annotations: {annotations}
"""


def test_registered_under_its_id() -> None:
    assert VALIDATORS["metadata"] is metadata
    assert metadata.id == "metadata"


@pytest.mark.parametrize("name", ["web", "web-1", "web.example.com", "0ab", "a" * 253])
def test_valid_subdomain_names(name: str) -> None:
    assert run(named("ConfigMap", name)) == []


@pytest.mark.parametrize(("name", "why"), [
    ("Web", "DNS-1123 subdomain"),
    ("web_app", "DNS-1123 subdomain"),
    ("-web", "DNS-1123 subdomain"),
    ("web.", "DNS-1123 subdomain"),
    ("a" * 254, "at most 253 characters"),
])
def test_invalid_names(name: str, why: str) -> None:
    [result] = run(named("ConfigMap", name))
    assert result.field_path == "metadata.name"
    assert result.severity == "error"
    assert result.message.startswith(f"metadata.name: {name!r} is not a valid ConfigMap name: ")
    assert why in result.message
    assert result.resource_ref == ResourceRef("v1", "ConfigMap", name, "prod")
    assert result.tags == (("validator", "metadata"), ("rule", "name"))


def test_namespace_names_are_dns_labels() -> None:
    [result] = run(named("Namespace", "team.prod"))
    assert "DNS-1123 label" in result.message
    assert run(named("Namespace", "team-prod")) == []


def test_service_names_are_dns_1035_labels() -> None:
    assert "DNS-1035 label" in run(named("Service", "1web"))[0].message
    assert "DNS-1035 label" in run(named("Service", "web.internal"))[0].message
    assert run(named("Service", "web")) == []


def test_rbac_names_are_path_segments() -> None:
    rbac = "rbac.authorization.k8s.io/v1"
    assert run(named("ClusterRole", "system:controller:Web_Thing", rbac)) == []
    [result] = run(named("RoleBinding", "a/b", rbac))
    assert "may not contain '/' or '%'" in result.message
    # The same kind name in another group follows the default rule.
    assert "DNS-1123 subdomain" in run(named("Role", "system:x", "example.com/v1"))[0].message


@pytest.mark.parametrize(("kind", "name", "why"), [
    ("User", "sean@vaughan.cc", None),                          # an identity provider's user name
    ("Group", "Platform Admins", None),
    ("Identity", "vaughan-gsuite:112896153305701750996", None),  # <providerName>:<providerUserName>
    ("User", "gsuite:sean", "may not contain ':'"),
    ("User", "~", "may not be '~'"),
    ("Group", "a/b", "may not contain '/' or '%'"),
    ("Identity", "sean", "must be <providerName>:<providerUserName>"),
    ("Identity", "gsuite:", "must be <providerName>:<providerUserName>"),
])
def test_openshift_user_group_and_identity_names(kind: str, name: str, why: str | None) -> None:
    # openshift-apiserver's user validation (ValidateUserName, ValidateGroupName, ValidateIdentityName)
    results = run(named(kind, name, "user.openshift.io/v1"))
    assert [r.message for r in results if why is None] == []
    assert why is None or (len(results) == 1 and why in results[0].message)


def test_missing_name_is_left_to_other_checks() -> None:
    assert run("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: cfg-\n") == []


def test_valid_labels_and_annotations() -> None:
    text = labelled('{app: web, app.kubernetes.io/name: web, "example.com/tier": "", v: "1.2_3-a"}',
                    '{Example.com/Note: "any value at all!", kubectl.kubernetes.io/last-applied-configuration: "{}"}')
    assert run(text) == []


@pytest.mark.parametrize(("key", "path", "why"), [
    ("-app", 'metadata.labels["-app"]', "the name part '-app' must be"),
    ("app-", "metadata.labels.app-", "the name part 'app-' must be"),
    ("a/b/c", 'metadata.labels["a/b/c"]', "at most one '/'"),
    ("/app", 'metadata.labels["/app"]', "prefix before '/' may not be empty"),
    ("example.com/", 'metadata.labels["example.com/"]', "name part may not be empty"),
    ("Example.com/app", 'metadata.labels["Example.com/app"]', "the prefix 'Example.com'"),
    ("x" * 64, "metadata.labels." + "x" * 64, "at most 63 characters"),
    ("has space", 'metadata.labels["has space"]', "must be letters, digits"),
])
def test_invalid_label_keys_point_at_the_key(key: str, path: str, why: str) -> None:
    [result] = run(labelled(f"{{{key!r}: v}}".replace("'", '"')))
    assert result.field_path == path
    assert result.message.startswith(f"{path}: {key!r} is not a valid label key: ")
    assert why in result.message
    assert ("rule", "label-key") in result.tags


@pytest.mark.parametrize(("value", "why"), [
    ("has space", "must be empty or letters"),
    ("-start", "must be empty or letters"),
    ("end.", "must be empty or letters"),
    ("v" * 64, "at most 63 characters"),
])
def test_invalid_label_values(value: str, why: str) -> None:
    [result] = run(labelled(f'{{app.kubernetes.io/version: "{value}"}}'))
    assert result.field_path == 'metadata.labels["app.kubernetes.io/version"]'
    assert result.message.startswith(
        f'metadata.labels["app.kubernetes.io/version"]: {value!r} is not a valid label value: ')
    assert why in result.message
    assert ("rule", "label-value") in result.tags


def test_invalid_annotation_key() -> None:
    results = run(labelled("{}", '{"bad key": x, "a/b/c": y, Example.COM/Ok: z}'))
    assert [r.field_path for r in results] == ['metadata.annotations["bad key"]', 'metadata.annotations["a/b/c"]']
    assert "'bad key' is not a valid annotation key" in results[0].message
    assert "at most one '/'" in results[1].message
    assert ("rule", "annotation-key") in results[0].tags


def test_results_for_each_resource_name_their_resource() -> None:
    text = named("ConfigMap", "Bad") + "---\n" + named("Secret", "also_bad")
    refs = [r.resource_ref for r in run(text)]
    assert refs == [ResourceRef("v1", "ConfigMap", "Bad", "prod"), ResourceRef("v1", "Secret", "also_bad", "prod")]


@pytest.mark.parametrize("key", ["app.kubernetes.io/name", "has space", "-app", "0", 'quo"te'])
def test_reported_paths_parse_back_to_the_same_key(key: str) -> None:
    # locate must find the field from the path a validator reports.
    fieldpath = pytest.importorskip("krmcheck.tree.fieldpath")
    path = field_path(["metadata", "labels", key])
    assert [step.key for step in fieldpath.parse(path)] == ["metadata", "labels", key]


def test_an_object_encrypted_whole_is_known_only_once_decrypted() -> None:
    # sops without encrypted_regex encrypts kind and name too
    enc = "ENC[AES256_GCM,data:{},iv:aXY=,tag:dGFn,type:str]"
    text = (f"apiVersion: {enc.format('djE=')}\nkind: {enc.format('U2VjcmV0')}\n"
            f"metadata:\n  name: {enc.format('bmFtZQ==')}\n")
    assert run(text) == []
    # a name that is ciphertext in a kind written in clear is judged as written
    [result] = run(f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {enc.format('bmFtZQ==')}\n")
    assert result.field_path == "metadata.name"


def test_the_managed_by_label_kubectls_kustomize_writes_is_a_warning(tmp_path) -> None:
    # buildMetadata: [managedByLabel] writes kustomize-(devel) with kubectl's
    # embedded kustomize (as the oracle does), kustomize-vX.Y.Z with a release:
    # the value depends on the tool, so the finding is a warning naming it
    from tests.checkrun import check, write

    write(tmp_path, "app/kustomization.yaml", "resources: [cm.yaml]\nbuildMetadata: [managedByLabel]\n")
    write(tmp_path, "app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n")
    run_ = check(tmp_path / "app")
    [found] = [d for d in run_.report["defects"] if d["validator"] == "metadata"]
    assert found["severity"] == "warning" and "kubectl apply -k" in found["message"]
    # the same value written by hand in another label is the repository's own: an error
    [result] = run(labelled("{team: kustomize-(devel)}"))
    assert result.severity == "error"
