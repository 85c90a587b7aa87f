"""Fields a Kyverno policy of the repository writes at admission."""

from __future__ import annotations

from pathlib import Path

from krmcheck.schemas.kyverno import added_fields
from tests.checkrun import check, crd, write

CERT_CRD = crd("Cert", """
    type: object
    properties:
      spec:
        type: object
        required: [issuerRef, secretName, dnsName]
        properties:
          issuerRef: {type: object, properties: {name: {type: string}}}
          secretName: {type: string}
          dnsName: {type: string}
    """)

POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: cert-defaults
spec:
  rules:
  - name: default-issuer
    match:
      any:
      - resources:
          kinds: [example.com/v1/Cert]
    mutate:
      patchStrategicMerge:
        spec:
          +(issuerRef):
            name: vault
          (dnsName): "*.example.com"
  - name: secret-name
    match:
      resources:
        kinds: [Cert]
    mutate:
      patchStrategicMerge:
        spec:
          secretName: "{{request.object.metadata.name}}-tls"
"""


def test_the_fields_a_policy_adds_by_kind(tmp_path: Path) -> None:
    # a plain key and an add anchor are written; a conditional anchor is a
    # condition, not a field written
    write(tmp_path, "policy/cert-defaults.yaml", POLICY)
    added = added_fields(tmp_path)
    assert sorted(added["Cert"]) == [("spec",), ("spec", "issuerRef"), ("spec", "issuerRef", "name"),
                                     ("spec", "secretName")]
    assert added["Cert"][("spec", "secretName")] == "ClusterPolicy/cert-defaults"


def test_a_required_field_a_kyverno_policy_adds_at_admission_is_a_warning(tmp_path: Path) -> None:
    write(tmp_path, "app/crd.yaml", CERT_CRD)
    write(tmp_path, "app/cert.yaml", "apiVersion: example.com/v1\nkind: Cert\nmetadata:\n  name: web\n"
                                     "spec:\n  issuerRef: null\n")
    write(tmp_path, "app/kustomization.yaml", "resources:\n- crd.yaml\n- cert.yaml\n")
    run = check(tmp_path)
    assert sorted(d["message"] for d in run.report["defects"] if d["severity"] == "error") == [
        "spec: missing required field 'dnsName'", "spec: missing required field 'issuerRef'",
        "spec: missing required field 'secretName'"]
    write(tmp_path, "policy/cert-defaults.yaml", POLICY)
    run = check(tmp_path)
    # dnsName is written only where a condition holds: still judged
    assert [d["message"] for d in run.report["defects"] if d["severity"] == "error"] == [
        "spec: missing required field 'dnsName'"]
    assert sorted(d["message"] for d in run.report["defects"] if d["severity"] == "warning") == [
        "spec: missing required field 'issuerRef'", "spec: missing required field 'secretName'"]
    [note] = [n for n in run.report["notes"] if "Kyverno policy" in n["message"]]
    assert "ClusterPolicy/cert-defaults" in note["message"] and note["message"].startswith("2 errors")
