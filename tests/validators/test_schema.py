from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.results import ResourceRef, Result
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping
from krmcheck.validators import VALIDATORS, ValidatorOptions
from krmcheck.validators import schema
from tests.checkrun import check, crd, write

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
  labels:
    app.kubernetes.io/version: {version}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: {port}
          {extra}
"""


def deployment(replicas: str = "3", port: str = "80", version: str = '"1.0"', extra: str = "") -> str:
    return DEPLOYMENT.format(replicas=replicas, port=port, version=version, extra=extra)


def run(text: str, **options: object) -> list[Result]:
    items = load_documents(text, "app/deploy.yaml")
    return schema.validate(items, ValidatorOptions(**options))  # type: ignore[arg-type]


def test_registered_under_its_id() -> None:
    assert VALIDATORS["schema"] is schema
    assert schema.id == "schema"


def test_valid_deployment_has_no_results() -> None:
    assert run(deployment()) == []


def test_wrong_type_names_field_value_and_expected_type() -> None:
    [result] = run(deployment(replicas='"3"'))
    assert result.message == "spec.replicas: '3' is not of type 'integer'"
    assert result.severity == "error"
    assert result.field_path == "spec.replicas"
    assert result.resource_ref == ResourceRef("apps/v1", "Deployment", "web", "prod")
    assert ("validator", "schema") in result.tags
    assert ("rule", "type") in result.tags
    assert ("kubernetes-version", schema.bundled_versions()[-1]) in result.tags


def test_every_error_of_an_item_is_listed_in_path_order() -> None:
    results = run(deployment(replicas="true", port="http-port"))
    assert [r.field_path for r in results] == [
        "spec.replicas",
        "spec.template.spec.containers[0].ports[0].containerPort",
    ]
    assert results[1].message.endswith("'http-port' is not of type 'integer'")


def test_missing_required_field_is_reported_at_the_parent() -> None:
    text = deployment().replace("      - name: web\n        image", "      - image")
    [result] = run(text)
    assert result.field_path == "spec.template.spec.containers[0]"
    assert result.message == "spec.template.spec.containers[0]: missing required field 'name'"
    assert ("rule", "required") in result.tags


def test_missing_required_top_level_field_has_empty_path() -> None:
    text = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: read}
subjects: [{kind: User, name: jane}]
"""
    [result] = run(text)
    assert result.field_path == ""
    assert result.message == "missing required field 'roleRef'"
    assert result.resource_ref == ResourceRef("rbac.authorization.k8s.io/v1", "RoleBinding", "read")


def test_int_or_string_lists_both_types() -> None:
    text = """\
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports:
  - port: 80
    targetPort: [8080]
"""
    [result] = run(text)
    assert result.field_path == "spec.ports[0].targetPort"
    assert result.message == "spec.ports[0].targetPort: a list is not of type 'string' or 'integer'"


def test_a_null_quantity_is_zero_and_a_null_port_is_none() -> None:
    # Helm output unsets a default with `cpu: null`: the API server decodes
    # a null Quantity as zero; an IntOrString null is the integer 0, no port
    text = deployment(extra="name: http") + """\
        readinessProbe:
          httpGet: {port: null}
        resources:
          limits: {cpu: null, memory: true}
          requests: {cpu: null}
"""
    assert sorted((r.field_path, r.message.partition(": ")[2]) for r in run(text)) == [
        ("spec.template.spec.containers[0].readinessProbe.httpGet.port", "null is not of type 'string' or 'integer'"),
        ("spec.template.spec.containers[0].resources.limits.memory", "true is not of type 'string' or 'number'")]


def test_keys_with_dots_and_slashes_are_bracketed_in_the_path() -> None:
    [result] = run(deployment(version="1"))
    assert result.field_path == 'metadata.labels["app.kubernetes.io/version"]'
    assert result.message == 'metadata.labels["app.kubernetes.io/version"]: 1 is not of type \'string\''


def test_unknown_fields_are_warnings_and_errors_when_strict() -> None:
    text = deployment(extra="colour: blue")
    [warning] = run(text)
    assert warning.severity == "warning"
    assert warning.field_path == "spec.template.spec.containers[0].ports[0].colour"
    assert warning.message == "spec.template.spec.containers[0].ports[0].colour: unknown field"
    assert ("rule", "additionalProperties") in warning.tags
    [result] = run(text, strict=True)
    assert result.severity == "error"
    assert result.message == warning.message


def test_kinds_without_schema_get_one_info_result_per_kind() -> None:
    text = """\
apiVersion: example.com/v1
kind: Widget
metadata: {name: a}
spec: {size: "not checked"}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: b}
---
apiVersion: example.com/v2
kind: Widget
metadata: {name: c}
"""
    results = run(text)
    assert [(r.severity, r.resource_ref) for r in results] == [
        ("info", ResourceRef("example.com/v1", "Widget", "a")),
        ("info", ResourceRef("example.com/v2", "Widget", "c")),
    ]
    assert "no schema for Widget (example.com/v1)" in results[0].message
    assert "2 resources" in results[0].message
    assert "1 resource of this kind" in results[1].message
    assert ("rule", "no-schema") in results[0].tags


def test_an_object_encrypted_whole_has_no_kind_to_find_a_schema_for() -> None:
    # sops without encrypted_regex encrypts apiVersion and kind too: no
    # "no schema for ENC[...]" info, nothing judged until it is decrypted
    enc = "ENC[AES256_GCM,data:{},iv:aXY=,tag:dGFn,type:str]"
    text = (f"apiVersion: {enc.format('djE=')}\nkind: {enc.format('U2VjcmV0')}\n"
            f"metadata:\n  name: {enc.format('bmFtZQ==')}\nstringData:\n  token: {enc.format('eA==')}\n")
    assert run(text) == []
    # a kind written in clear beside it is still looked up
    [missing] = run("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n")
    assert missing.message.startswith("no schema for Widget")


def test_custom_group_sharing_a_builtin_file_name_is_not_checked_as_the_builtin() -> None:
    # deployment-apps-v1.json would match "apps.example.com" by file name alone.
    text = """\
apiVersion: apps.example.com/v1
kind: Deployment
metadata: {name: x}
spec: {replicas: "many"}
"""
    [result] = run(text)
    assert result.severity == "info"
    assert "apps.example.com/v1" in result.message


def test_resource_without_kind_is_an_error() -> None:
    [result] = run("apiVersion: v1\nmetadata: {name: x}\n")
    assert result.severity == "error"
    assert "no apiVersion or kind" in result.message


def test_validates_custom_resource_definitions_with_recursive_schema() -> None:
    text = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: 5}
"""
    [result] = run(text)
    assert result.field_path == "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.type"
    assert result.message.endswith("5 is not of type 'string'")


@pytest.mark.parametrize("spelling", ["1.30", "v1.30", "1.30.2"])
def test_version_spellings(spelling: str) -> None:
    assert schema.resolve_version(spelling) == "1.30"
    [result] = run(deployment(replicas='"3"'), kubernetes_version=spelling)
    assert ("kubernetes-version", "1.30") in result.tags


def test_default_version_is_the_newest_bundled() -> None:
    versions = schema.bundled_versions()
    assert schema.resolve_version(None) == versions[-1]
    assert versions == tuple(sorted(versions, key=lambda v: tuple(map(int, v.split(".")))))
    assert "1.25" in versions


@pytest.mark.parametrize("spelling", ["1.2", "1.99", "latest", ""])
def test_unknown_version_lists_bundled_versions(spelling: str) -> None:
    with pytest.raises(ValueError) as info:
        run(deployment(), kubernetes_version=spelling)
    assert repr(spelling) in str(info.value)
    assert ", ".join(schema.bundled_versions()) in str(info.value)


# --- unknown fields ------------------------------------------------------------------------

def test_a_probe_indented_into_the_pod_spec_is_a_warning_at_its_line(tmp_path: Path) -> None:
    text = deployment().replace("        ports:\n        - containerPort: 80\n",
                                "      readinessProbe:\n        httpGet: {path: /, port: 80}\n")
    write(tmp_path, "app/kustomization.yaml", "resources: [deploy.yaml]\n")
    write(tmp_path, "app/deploy.yaml", text)
    run_report = check(tmp_path, "app")
    assert run_report.code == 0
    assert [(d["line"], d["col"], d["severity"], d["message"]) for d in run_report.report["defects"]] == [
        (19, 7, "warning", "spec.template.spec.readinessProbe: unknown field")]


@pytest.mark.parametrize("config", ["strict: true\n", "validators:\n  schema: {strict: true}\n"])
def test_the_configuration_makes_unknown_fields_errors(tmp_path: Path, config: str) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: [deploy.yaml]\n")
    write(tmp_path, "app/deploy.yaml", deployment(extra="colour: blue"))
    assert check(tmp_path, "app").located("warning") == [("app/deploy.yaml", 21, "schema")]
    write(tmp_path, ".krmcheck.yaml", config)
    strict = check(tmp_path, "app")
    assert strict.code == 1 and strict.located("error") == [("app/deploy.yaml", 21, "schema")]


# --- custom resources, judged after pruning and defaulting ---------------------------------------

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: collectors.example.com}
spec:
  group: example.com
  names: {kind: Collector, plural: collectors}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        required: [spec]
        properties:
          spec:
            type: object
            required: [managementState]
            properties:
              managementState: {type: string, default: managed, enum: [managed, unmanaged]}
              global: {type: object, properties: {debug: {type: boolean}}}
              config:
                type: object
                properties:
                  processors: {type: object, x-kubernetes-preserve-unknown-fields: true}
              note: {type: string, nullable: true}
              values: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
"""


def collector(spec: str) -> str:
    return CRD + f"apiVersion: example.com/v1\nkind: Collector\nmetadata: {{name: c}}\n{spec}"


def test_a_required_field_with_a_default_is_not_missing() -> None:
    items = [d for d in load_documents(collector("spec:\n  global: {debug: true}\n"), "app/collector.yaml")
             if isinstance(d, Mapping)]
    assert schema.validate(items, ValidatorOptions()) == []
    spec = items[1].mapping("spec")
    assert spec is not None and spec.get("managementState") is None  # the resource itself is not defaulted


def test_non_nullable_nulls_are_pruned_and_defaulted_before_validation() -> None:
    text = collector("spec:\n  managementState: null\n  global: null\n  config: {processors: null}\n"
                     "  note: null\n")
    assert run(text) == []


def test_a_null_pruned_from_a_required_field_is_missing() -> None:
    [result] = run(collector("spec: null\n"))
    assert (result.field_path, result.message) == ("", "missing required field 'spec'")


def test_status_is_not_judged_where_a_status_subresource_drops_it() -> None:
    """The API server drops ``status`` from what is created or updated
    through the object itself when the CRD serves a status subresource
    (PrepareForCreate), before validating; without one, status is a field
    like any other."""
    crd = CRD.replace("              values: {type: object, x-kubernetes-preserve-unknown-fields: true}\n",
                      "              values: {type: object, x-kubernetes-preserve-unknown-fields: true}\n"
                      "          status:\n            type: object\n            required: [phase]\n"
                      "            properties: {phase: {type: string}}\n")
    obj = "apiVersion: example.com/v1\nkind: Collector\nmetadata: {name: c}\nspec: {}\nstatus: {ready: 1}\n"
    judged = run(crd + obj)
    assert [(r.severity, r.message) for r in judged] == [
        ("error", "status: missing required field 'phase'"), ("warning", "status.ready: unknown field")]
    with_subresource = crd.replace("    storage: true\n", "    storage: true\n    subresources: {status: {}}\n")
    assert run(with_subresource + obj) == []
    assert [r.message for r in run(with_subresource + obj.replace("spec: {}", "spec: {colour: blue}"))] == [
        "spec.colour: unknown field"]  # the rest is judged as before


def test_unknown_fields_of_a_custom_resource_are_warnings() -> None:
    text = collector("spec:\n  values: {any: thing}\n  global: {debug: true, verbose: true}\n  colour: blue\n")
    results = run(text)
    assert [(r.severity, r.field_path, r.message) for r in results] == [
        ("warning", "spec.colour", "spec.colour: unknown field"),
        ("warning", "spec.global.verbose", "spec.global.verbose: unknown field"),
    ]
    assert [r.severity for r in run(text, strict=True)] == ["error", "error"]


def test_the_metadata_of_an_embedded_resource_is_validated_as_object_meta() -> None:
    crd = CRD.replace("              values: {type: object, x-kubernetes-preserve-unknown-fields: true}\n",
                      "              values: {type: object, x-kubernetes-preserve-unknown-fields: true}\n"
                      "              template: {type: object, x-kubernetes-embedded-resource: true,"
                      " x-kubernetes-preserve-unknown-fields: true}\n")
    text = crd + ("apiVersion: example.com/v1\nkind: Collector\nmetadata: {name: c}\nspec:\n  template:\n"
                  "    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: a/b\n"
                  "      labels: {app: web server, ok: yes-it-is}\n      lables: {}\n")
    assert [(r.severity, r.message) for r in run(text)] == [
        ("warning", "spec.template.metadata.lables: unknown field"),
        ("error", "spec.template.metadata.name: 'a/b' is not a valid name: may not contain '/' or '%'"),
        ("error", "spec.template.metadata.labels.app: 'web server' is not a valid label value: must be empty "
                  "or letters, digits, '-', '_' and '.', starting and ending with a letter or digit"),
    ]


SOPS_SECRET = """\
apiVersion: v1
kind: Secret
metadata:
  name: cluster-secrets
stringData:
  TOKEN: ENC[AES256_GCM,data:abcd,iv:efgh,tag:ijkl,type:str]
sops:
  age:
  - recipient: age1example
    enc: ENC
  lastmodified: "2026-01-01T00:00:00Z"
  mac: ENC[AES256_GCM,data:mnop,iv:qrst,tag:uvwx,type:str]
  version: 3.9.0
"""


def test_the_metadata_of_a_sops_encrypted_file_is_no_field_of_the_object() -> None:
    # whatever decrypts the file removes it before the API server sees it;
    # a `sops` key that is not SOPS's metadata is an unknown field as any
    assert run(SOPS_SECRET) == []
    [result] = run(SOPS_SECRET.replace("  mac: ENC", "  note: ENC"))
    assert result.message == "sops: unknown field"


SOPS_SECRET_CRD = crd("SopsSecret", """
    type: object
    required: [sops]
    properties:
      stringData: {type: object, x-kubernetes-preserve-unknown-fields: true}
      sops: {type: object, x-kubernetes-preserve-unknown-fields: true}
    """) + "---\n"


def test_a_kind_whose_schema_declares_sops_carries_it_to_an_in_cluster_decrypter() -> None:
    # sops-operator's SopsSecret is applied encrypted: its CRD requires the
    # sops metadata, which is the object's own field, not removed first
    custom = SOPS_SECRET.replace("apiVersion: v1\nkind: Secret", "apiVersion: example.com/v1\nkind: SopsSecret")
    assert run(SOPS_SECRET_CRD + custom) == []
    # the Secret beside it still loses its metadata to the decryption
    assert run(SOPS_SECRET_CRD + SOPS_SECRET) == []
    [missing] = run(SOPS_SECRET_CRD + custom.split("sops:")[0])
    assert missing.message == "missing required field 'sops'"


def test_a_value_in_sops_ciphertext_is_not_judged() -> None:
    # encrypted_regex left some values as ciphertext: decryption gives the
    # value, which is not known here; a plain value beside it is judged
    enum = crd("Store", """
        type: object
        properties:
          spec:
            type: object
            properties:
              compression: {type: string, enum: [gzip, bzip2]}
              retries: {type: integer}
        """) + "---\n"
    store = ("apiVersion: example.com/v1\nkind: Store\nmetadata: {name: s}\nspec:\n"
             "  compression: ENC[AES256_GCM,data:vjWvzQ==,iv:e+7r,tag:74ni,type:str]\n"
             "  retries: ENC[AES256_GCM,data:MQ==,iv:aa,tag:bb,type:int]\n")
    assert run(enum + store) == []
    [wrong] = run(enum + store.replace("ENC[AES256_GCM,data:vjWvzQ==,iv:e+7r,tag:74ni,type:str]", "zip"))
    assert wrong.message.startswith("spec.compression: 'zip' is not one of")


def _store_crd(compressions: str) -> str:
    return crd("Store", f"""
        type: object
        properties:
          spec:
            type: object
            properties:
              compression: {{type: string, enum: [{compressions}]}}
        """)


def test_an_object_another_definition_of_its_crd_in_the_repository_accepts_is_a_warning(tmp_path: Path) -> None:
    # datadog-operator: the OLM bundle keeps last release's CRD (first in
    # path order), config/crd/bases the current one, which takes the new value
    write(tmp_path, "bundle/manifests/stores.yaml", _store_crd("gzip, bzip2"))
    write(tmp_path, "config/crd/bases/stores.yaml", _store_crd("gzip, bzip2, zstd"))
    store = "apiVersion: example.com/v1\nkind: Store\nmetadata: {name: s}\nspec:\n  compression: "
    write(tmp_path, "examples/new.yaml", store + "zstd\n")
    write(tmp_path, "examples/wrong.yaml", store + "zip\n")
    run = check(tmp_path)
    assert run.located("error") == [("examples/wrong.yaml", 5, "schema")]
    [accepted] = [d for d in run.report["defects"] if d["path"] == "examples/new.yaml"]
    assert accepted["severity"] == "warning"
    assert accepted["message"].endswith("the repository's other definition of this kind "
                                        "(config/crd/bases/stores.yaml) accepts the object")
    # one definition, or copies of the same one, decide alone
    write(tmp_path, "config/crd/bases/stores.yaml", _store_crd("gzip, bzip2"))
    assert check(tmp_path).located("error") == [("examples/new.yaml", 5, "schema"),
                                                ("examples/wrong.yaml", 5, "schema")]


def test_a_value_of_an_alternatives_type_is_judged_inside_that_alternative(tmp_path: Path) -> None:
    # oneOf [an object whose `default` is a string or an object, a string]:
    # {default: null} is an object, so what fails is its `default`, not its type
    import json

    default = {"oneOf": [{"type": "string"}, {"type": "object", "properties": {"host": {"type": "string"}}}]}
    override = {"oneOf": [{"type": "object", "properties": {"default": default}}, {"type": "string"}]}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "override": override, "other": override}}}}
    (tmp_path / "catalog" / "example.com").mkdir(parents=True)
    (tmp_path / "catalog" / "example.com" / "endpoints_v1.json").write_text(json.dumps(schema))
    write(tmp_path / "repo", "endpoints.yaml", "apiVersion: example.com/v1\nkind: Endpoints\nmetadata:\n  name: e\n"
                                               "spec:\n  override:\n    default: null\n  other: [1]\n")
    run = check(tmp_path / "repo", "--schema-location", str(tmp_path / "catalog"))
    assert sorted((d["line"], d["message"]) for d in run.report["defects"] if d["severity"] == "error") == [
        (7, "spec.override.default: null is not of type 'string' or 'object'"),
        (8, "spec.other: a list is not of type 'object' or 'string'")]
