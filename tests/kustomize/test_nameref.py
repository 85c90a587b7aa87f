from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml

from krmcheck.kustomize.nameref import default_name_references, fix_name_references, merge_name_references, parse_name_references
from krmcheck.resource.errors import BuildError
from krmcheck.resource.resid import Gvk
from krmcheck.resource.resid import is_cluster_scoped
from krmcheck.resource.resource import Resource
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, lookup
from krmcheck.tree.origin import Origin

PREFIX = Origin("overlay/kustomization.yaml", 3, 1, "namePrefix")
HASH = Origin("overlay/kustomization.yaml", 7, 3, "configMapGenerator")
NAMESPACE = Origin("overlay/kustomization.yaml", 2, 1, "namespace")


def load(text: str, path: str = "base/res.yaml") -> list[Resource]:
    nodes = load_documents(textwrap.dedent(text), path)
    assert all(isinstance(n, Mapping) for n in nodes)
    return [Resource(n) for n in nodes if isinstance(n, Mapping)]


def prefix(resources: list[Resource], value: str, origin: Origin = PREFIX) -> None:
    """What a namePrefix transformer does to the bookkeeping."""
    for r in resources:
        r.remember_id()
        r.set_name(value + r.name, origin)
        r.prefixes.append(value)


def rename(res: Resource, name: str, origin: Origin = HASH) -> None:
    res.remember_id()
    res.set_name(name, origin)


def move(res: Resource, namespace: str, origin: Origin = NAMESPACE) -> None:
    res.remember_id()
    res.set_namespace(namespace, origin)


def at(res: Resource, dotted: str) -> Node:
    node: Node | None = res.node
    for step in dotted.split("."):
        if isinstance(node, Sequence):
            node = node.items[int(step)]
        else:
            node = lookup(node, [step]) if node is not None else None
    assert node is not None, dotted
    return node


def value(res: Resource, dotted: str) -> object:
    node = at(res, dotted)
    assert isinstance(node, Scalar)
    return node.value


DEPLOYMENT_WITH_CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: app
        env:
        - name: A
          valueFrom:
            configMapKeyRef:
              name: cfg
              key: a
        envFrom:
        - configMapRef:
            name: cfg
      initContainers:
      - name: init
        envFrom:
        - configMapRef:
            name: other
      volumes:
      - name: v
        configMap:
          name: cfg
      - name: p
        projected:
          sources:
          - configMap:
              name: cfg
"""


def test_configmap_references_in_a_deployment_follow_the_rename() -> None:
    cm, dep = load(DEPLOYMENT_WITH_CONFIG)
    prefix([cm, dep], "p-")
    rename(cm, "p-cfg-5h2kt8gm2c")
    fix_name_references([cm, dep])
    c = "spec.template.spec.containers.0"
    assert value(dep, f"{c}.env.0.valueFrom.configMapKeyRef.name") == "p-cfg-5h2kt8gm2c"
    assert value(dep, f"{c}.envFrom.0.configMapRef.name") == "p-cfg-5h2kt8gm2c"
    assert value(dep, "spec.template.spec.volumes.0.configMap.name") == "p-cfg-5h2kt8gm2c"
    assert value(dep, "spec.template.spec.volumes.1.projected.sources.0.configMap.name") == "p-cfg-5h2kt8gm2c"
    # no ConfigMap was ever called "other"
    assert value(dep, "spec.template.spec.initContainers.0.envFrom.0.configMapRef.name") == "other"


def test_rewritten_name_is_written_by_the_referral_name_writer() -> None:
    cm, dep = load(DEPLOYMENT_WITH_CONFIG)
    prefix([cm, dep], "p-")
    rename(cm, "p-cfg-5h2kt8gm2c")
    fix_name_references([cm, dep])
    node = at(dep, "spec.template.spec.volumes.0.configMap.name")
    # the hash suffix wrote the ConfigMap's name last, so it wrote the reference
    assert node.origin == HASH
    # the line the reference was first written on stays in the trail
    assert node.trail == (Origin("base/res.yaml", 32, 11, "resource"),)


def test_rewritten_name_after_prefix_only_points_at_the_prefix_line() -> None:
    cm, dep = load(DEPLOYMENT_WITH_CONFIG)
    prefix([cm, dep], "p-")
    fix_name_references([cm, dep])
    node = at(dep, "spec.template.spec.containers.0.envFrom.0.configMapRef.name")
    assert isinstance(node, Scalar) and node.value == "p-cfg"
    assert node.origin == PREFIX
    assert node.trail == (Origin("base/res.yaml", 23, 13, "resource"),)


def test_unrenamed_referral_leaves_references_alone() -> None:
    cm, dep = load(DEPLOYMENT_WITH_CONFIG)
    fix_name_references([cm, dep])
    node = at(dep, "spec.template.spec.volumes.0.configMap.name")
    assert isinstance(node, Scalar) and node.value == "cfg"
    assert node.origin == Origin("base/res.yaml", 32, 11, "resource") and node.trail == ()


def test_referral_in_another_namespace_is_not_followed() -> None:
    cm, dep = load(DEPLOYMENT_WITH_CONFIG)
    move(cm, "other")
    rename(cm, "cfg-x")
    fix_name_references([cm, dep])
    assert value(dep, "spec.template.spec.volumes.0.configMap.name") == "cfg"


def test_explicit_default_namespace_equals_no_namespace() -> None:
    cm, dep = load(DEPLOYMENT_WITH_CONFIG)
    dep.set_namespace("default", NAMESPACE)
    rename(cm, "cfg-x")
    fix_name_references([cm, dep])
    assert value(dep, "spec.template.spec.volumes.0.configMap.name") == "cfg-x"


def test_secret_references_lists_of_objects_and_service_account() -> None:
    res = load("""\
        apiVersion: v1
        kind: Secret
        metadata:
          name: pull
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: runner
        ---
        apiVersion: batch/v1
        kind: CronJob
        metadata:
          name: job
        spec:
          jobTemplate:
            spec:
              template:
                spec:
                  serviceAccountName: runner
                  imagePullSecrets:
                  - name: pull
                  - name: unrelated
                  volumes:
                  - name: s
                    secret:
                      secretName: pull
        """)
    prefix(res, "dev-")
    fix_name_references(res)
    job = res[2]
    pod = "spec.jobTemplate.spec.template.spec"
    assert value(job, f"{pod}.serviceAccountName") == "dev-runner"
    assert value(job, f"{pod}.imagePullSecrets.0.name") == "dev-pull"
    assert value(job, f"{pod}.imagePullSecrets.1.name") == "unrelated"
    assert value(job, f"{pod}.volumes.0.secret.secretName") == "dev-pull"


INGRESS = """\
apiVersion: v1
kind: Service
metadata:
  name: svc
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ing
spec:
  ingressClassName: nginx
  defaultBackend:
    service:
      name: svc
  rules:
  - http:
      paths:
      - backend:
          service:
            name: svc
      - backend:
          serviceName: svc
"""


def test_service_in_ingress_backends() -> None:
    res = load(INGRESS)
    prefix(res, "p-")
    fix_name_references(res)
    ing = res[2]
    assert value(ing, "spec.defaultBackend.service.name") == "p-svc"
    assert value(ing, "spec.rules.0.http.paths.0.backend.service.name") == "p-svc"
    assert value(ing, "spec.rules.0.http.paths.1.backend.serviceName") == "p-svc"
    assert at(ing, "spec.rules.0.http.paths.0.backend.service.name").origin == PREFIX


def test_ingress_class_name_is_not_updated_like_kustomize() -> None:
    # kustomize's table spells the IngressClass group "networking.k8s.io/v1",
    # which never matches; kubectl leaves ingressClassName as written.
    res = load(INGRESS)
    prefix(res, "p-")
    fix_name_references(res)
    assert value(res[2], "spec.ingressClassName") == "nginx"


def test_hpa_follows_deployment() -> None:
    res = load("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: web
        ---
        apiVersion: autoscaling/v2
        kind: HorizontalPodAutoscaler
        metadata:
          name: web
        spec:
          scaleTargetRef:
            apiVersion: apps/v1
            kind: Deployment
            name: web
        """)
    prefix(res, "p-")
    fix_name_references(res)
    assert value(res[1], "spec.scaleTargetRef.name") == "p-web"


ROLE_BINDING = """\
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: sa
subjects:
- kind: User
  name: sa
- kind: ServiceAccount
  name: sa
- kind: ServiceAccount
  name: sa
  namespace: other
- kind: ServiceAccount
  name: sa
  namespace: default
"""


def test_service_account_subjects_of_a_role_binding() -> None:
    res = load(ROLE_BINDING)
    prefix(res, "p-")
    fix_name_references(res)
    rb = res[1]
    # As kubectl does: the subject kind is not consulted, so a User named like
    # a renamed ServiceAccount follows it too.
    assert value(rb, "subjects.0.name") == "p-sa"
    assert value(rb, "subjects.1.name") == "p-sa"
    assert value(rb, "subjects.2.name") == "sa"  # no such ServiceAccount there
    assert value(rb, "subjects.3.name") == "p-sa"
    # a ServiceAccount without namespace writes none into the subject
    subject = at(rb, "subjects.1")
    assert isinstance(subject, Mapping) and "namespace" not in subject
    assert value(rb, "subjects.3.namespace") == "default"
    # roleRef names a ClusterRole; no ClusterRole was renamed
    assert value(rb, "roleRef.name") == "sa"
    assert at(rb, "subjects.1.name").origin == PREFIX


def test_cluster_role_binding_subject_gets_the_moved_namespace() -> None:
    sa, = load("""\
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: sa
        """, "base/sa.yaml")
    crb, = load("""\
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRoleBinding
        metadata:
          name: crb
        subjects:
        - kind: ServiceAccount
          name: sa
          namespace: default
        - kind: ServiceAccount
          name: sa
        """, "crb.yaml")
    move(sa, "foo", Origin("base/kustomization.yaml", 1, 1, "namespace"))
    prefix([sa], "b-", Origin("base/kustomization.yaml", 2, 1, "namePrefix"))
    fix_name_references([crb, sa])
    for i in (0, 1):
        assert value(crb, f"subjects.{i}.name") == "b-sa"
        assert value(crb, f"subjects.{i}.namespace") == "foo"
    # the namespace written into a subject comes from the namespace transformer
    assert at(crb, "subjects.0.namespace").origin == Origin("base/kustomization.yaml", 1, 1, "namespace")
    assert at(crb, "subjects.0.namespace").trail == (Origin("crb.yaml", 8, 3, "resource"),)
    assert at(crb, "subjects.1.namespace").origin == Origin("base/kustomization.yaml", 1, 1, "namespace")
    assert at(crb, "subjects.1.name").origin == Origin("base/kustomization.yaml", 2, 1, "namePrefix")


def test_role_ref_kind_picks_role_or_cluster_role() -> None:
    role, cluster_role = load("""\
        apiVersion: rbac.authorization.k8s.io/v1
        kind: Role
        metadata:
          name: reader
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRole
        metadata:
          name: reader
        """)
    bindings = load("""\
        apiVersion: rbac.authorization.k8s.io/v1
        kind: RoleBinding
        metadata:
          name: to-role
        roleRef:
          apiGroup: rbac.authorization.k8s.io
          kind: Role
          name: reader
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: RoleBinding
        metadata:
          name: to-cluster-role
        roleRef:
          apiGroup: rbac.authorization.k8s.io
          kind: ClusterRole
          name: reader
        """, "bindings.yaml")
    rename(role, "ns-reader")
    rename(cluster_role, "cluster-reader")
    fix_name_references([role, cluster_role, *bindings])
    assert value(bindings[0], "roleRef.name") == "ns-reader"
    assert value(bindings[1], "roleRef.name") == "cluster-reader"


TWO_NAMESPACES = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: a
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: b
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
rules:
- resourceNames: [cm, other]
"""


def test_ambiguous_referral_is_an_error_at_the_reference() -> None:
    a, b, cr = load(TWO_NAMESPACES)
    rename(a, "cm-hmg6f82fh6")
    rename(b, "cm-d5gm26dhhd")
    with pytest.raises(BuildError) as err:
        fix_name_references([a, b, cr])
    message = str(err.value)
    assert "found multiple possible referrals" in message
    assert "ConfigMap.v1.[noGrp]/cm-hmg6f82fh6.a" in message
    assert "ConfigMap.v1.[noGrp]/cm-d5gm26dhhd.b" in message
    assert "'rules/resourceNames'" in message
    assert err.value.location is not None
    assert tuple(err.value.location) == ("base/res.yaml", 18, 19)


def test_ambiguity_with_the_same_new_name_takes_the_first() -> None:
    # kubectl: one namePrefix over both ConfigMaps and the ClusterRole
    a, b, cr = load(TWO_NAMESPACES)
    prefix([a, b, cr], "p-")
    fix_name_references([a, b, cr])
    assert value(cr, "rules.0.resourceNames.0") == "p-cm"
    assert value(cr, "rules.0.resourceNames.1") == "other"


def test_prefixes_that_do_not_match_the_referrer_rule_referrals_out() -> None:
    # kubectl: two bases with different prefixes, a ClusterRole in the
    # overlay without one -> neither ConfigMap is taken, nothing changes.
    a, b, cr = load(TWO_NAMESPACES)
    prefix([a], "a-")
    prefix([b], "b-")
    fix_name_references([a, b, cr])
    assert value(cr, "rules.0.resourceNames.0") == "cm"


def test_referrer_prefix_selects_among_candidates() -> None:
    a, b, cr = load(TWO_NAMESPACES)
    prefix([a, cr], "a-")
    prefix([b], "b-")
    fix_name_references([a, b, cr])
    assert value(cr, "rules.0.resourceNames.0") == "a-cm"


def test_scalar_in_the_middle_of_a_path_is_an_error() -> None:
    res = load("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: d
        spec:
          template:
            spec:
              volumes:
              - foo
        """)
    with pytest.raises(BuildError) as err:
        fix_name_references(res)
    assert "spec/template/spec/volumes/configMap/name" in str(err.value)
    assert err.value.location is not None and tuple(err.value.location) == ("base/res.yaml", 9, 9)


def test_subject_without_name_is_an_error() -> None:
    res = load("""\
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRoleBinding
        metadata:
          name: crb
        subjects:
        - kind: ServiceAccount
          namespace: x
        """)
    with pytest.raises(BuildError, match="no 'name' field"):
        fix_name_references(res)


def test_null_reference_is_left_alone() -> None:
    cm, dep = load("""\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: cfg
        ---
        apiVersion: v1
        kind: Pod
        metadata:
          name: p
        spec:
          volumes:
          - configMap:
              name:
        """)
    rename(cm, "cfg-1")
    fix_name_references([cm, dep])
    assert value(dep, "spec.volumes.0.configMap.name") is None


def test_custom_table_adds_referrers() -> None:
    res = load("""\
        apiVersion: v1
        kind: Secret
        metadata:
          name: creds
        ---
        apiVersion: example.com/v1
        kind: Backup
        metadata:
          name: nightly
        spec:
          credentials:
            secret: creds
        """)
    table = parse_name_references([{"kind": "Secret", "version": "v1", "fieldSpecs": [
        {"path": "spec/credentials/secret", "kind": "Backup"}]}])
    prefix(res, "p-")
    fix_name_references(res, table)
    assert value(res[1], "spec.credentials.secret") == "p-creds"


def test_default_table_has_kustomize_referrals() -> None:
    table = {(b.gvk.kind, b.gvk.group): b for b in default_name_references()}
    cm = table[("ConfigMap", "")]
    assert cm.gvk == Gvk("", "v1", "ConfigMap")
    paths = {("/".join(s.path), s.kind) for s in cm.referrers}
    assert ("spec/template/spec/volumes/configMap/name", "Deployment") in paths
    assert ("spec/volumes/projected/sources/configMap/name", "Pod") in paths
    sa = table[("ServiceAccount", "")]
    assert ("subjects", "RoleBinding") in {("/".join(s.path), s.kind) for s in sa.referrers}
    secret = table[("Secret", "")]
    annotation = [s for s in secret.referrers if s.path[-1] == "nginx.ingress.kubernetes.io/auth-secret"]
    assert annotation and annotation[0].path == ("metadata", "annotations", "nginx.ingress.kubernetes.io/auth-secret")
    assert ("ClusterRole", "rbac.authorization.k8s.io") in table
    # kustomize processes its table sorted by kind order
    kinds = [b.gvk.kind for b in default_name_references()]
    assert kinds[:4] == ["StorageClass", "ServiceAccount", "Role", "ClusterRole"]


@pytest.mark.parametrize("api_version, kind, expected", [
    ("rbac.authorization.k8s.io/v1", "ClusterRole", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", True),
    ("v1", "Namespace", True),
    ("v1", "PersistentVolume", True),
    ("storage.k8s.io/v1", "StorageClass", True),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", True),
    ("rbac.authorization.k8s.io/v1", "Role", False),
    ("apps/v1", "Deployment", False),
    ("v1", "PersistentVolumeClaim", False),
    ("example.com/v1", "ClusterThing", False),
    # kustomize knows scope per apiVersion; unknown versions count as namespaced
    ("rbac.authorization.k8s.io/v1alpha1", "ClusterRole", False),
])
def test_is_cluster_scoped(api_version: str, kind: str, expected: bool) -> None:
    assert is_cluster_scoped(Gvk.from_api_version(api_version, kind)) is expected


# --- against kubectl --------------------------------------------------------------

KUBECTL_CASE = {
    "kustomization.yaml": """\
        namePrefix: p-
        configMapGenerator:
        - name: cfg
          literals: [a=1]
        secretGenerator:
        - name: creds
          literals: [b=2]
        resources:
        - res.yaml
        """,
    "res.yaml": """\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: web
        spec:
          template:
            spec:
              serviceAccountName: runner
              containers:
              - name: app
                env:
                - name: A
                  valueFrom:
                    configMapKeyRef: {name: cfg, key: a}
                - name: B
                  valueFrom:
                    secretKeyRef: {name: creds, key: b}
                envFrom:
                - configMapRef: {name: cfg}
                - secretRef: {name: creds}
              volumes:
              - name: c
                configMap: {name: cfg}
              - name: s
                secret: {secretName: creds}
              - name: p
                projected:
                  sources:
                  - configMap: {name: cfg}
                  - secret: {name: creds}
        ---
        apiVersion: v1
        kind: Service
        metadata:
          name: svc
        ---
        apiVersion: networking.k8s.io/v1
        kind: Ingress
        metadata:
          name: ing
        spec:
          defaultBackend:
            service: {name: svc, port: {number: 80}}
          tls:
          - secretName: creds
          rules:
          - http:
              paths:
              - path: /
                pathType: Prefix
                backend:
                  service: {name: svc, port: {number: 80}}
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: runner
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: Role
        metadata:
          name: reader
        rules:
        - apiGroups: [""]
          resources: [configmaps]
          resourceNames: [cfg]
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: RoleBinding
        metadata:
          name: reader
        roleRef:
          apiGroup: rbac.authorization.k8s.io
          kind: Role
          name: reader
        subjects:
        - kind: ServiceAccount
          name: runner
        """,
}


def _kubectl_build(tmp_path: Path) -> list[dict]:
    for name, text in KUBECTL_CASE.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    out = subprocess.run(["kubectl", "kustomize", str(tmp_path)], check=True,
                         capture_output=True, text=True, timeout=120).stdout
    return [d for d in yaml.safe_load_all(out) if d]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is the oracle; not installed")
def test_references_match_kubectl(tmp_path: Path) -> None:
    expected = _kubectl_build(tmp_path)
    by_kind = {(d["kind"], d["metadata"]["name"].split("-")[1]): d for d in expected}
    resources = load(textwrap.dedent(KUBECTL_CASE["res.yaml"]), "res.yaml")
    generated = [Resource(n) for n in load_documents(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: '1'\n"
        "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ntype: Opaque\n"
        "data:\n  b: Mg==\n", "kustomization.yaml", "generator") if isinstance(n, Mapping)]
    prefix(resources + generated, "p-")
    # the hash suffixes are not ours to compute here: take them from kubectl
    for g in generated:
        rename(g, by_kind[(g.kind, g.name.split("-")[1])]["metadata"]["name"])
    fix_name_references(resources + generated)
    ours = {(r.kind, r.name): r.node.to_data() for r in resources + generated}
    theirs = {(d["kind"], d["metadata"]["name"]): d for d in expected}
    assert ours.keys() == theirs.keys()
    for key in ("Deployment", "Ingress", "Role", "RoleBinding"):
        name = next(n for k, n in ours if k == key)
        assert ours[(key, name)] == theirs[(key, name)], key


def test_resource_that_kept_its_name_still_competes() -> None:
    # kustomize's TestIssue3489: two overlays of one base, one with a name
    # suffix, joined under a namespace. The namespace transformer records an
    # id for every resource (even unchanged, cluster-scoped ones), so the
    # public ClusterRole is a candidate too and the suffix sieve keeps the
    # public binding on it.
    public_role, public_binding = load("""\
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRole
        metadata:
          name: external-dns
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRoleBinding
        metadata:
          name: external-dns-viewer
        roleRef:
          apiGroup: rbac.authorization.k8s.io
          kind: ClusterRole
          name: external-dns
        """)
    private_role, private_binding = [r.copy() for r in (public_role, public_binding)]
    for r in (private_role, private_binding):
        rename(r, r.name + "-private", Origin("private/kustomization.yaml", 3, 1, "nameSuffix"))
        r.suffixes.append("-private")
    fix_name_references([private_role, private_binding])
    assert value(private_binding, "roleRef.name") == "external-dns-private"
    everything = [public_role, public_binding, private_role, private_binding]
    for r in everything:
        r.remember_id()  # the overlay's namespace transformer
    fix_name_references(everything)
    assert value(public_binding, "roleRef.name") == "external-dns"
    assert value(private_binding, "roleRef.name") == "external-dns-private"


def test_merge_adds_referrers_to_the_same_kind_once() -> None:
    extra = parse_name_references([
        {"kind": "ConfigMap", "version": "v1", "fieldSpecs": [
            {"path": "spec/configRef/name", "kind": "Backup"},
            {"path": "spec/template/spec/volumes/configMap/name", "kind": "Deployment"}]},
        {"kind": "Backup", "group": "example.com", "fieldSpecs": [
            {"path": "spec/backupRef", "kind": "Restore"}]},
    ])
    merged = merge_name_references(default_name_references(), extra)
    cm = next(b for b in merged if b.gvk == Gvk("", "v1", "ConfigMap"))
    default_cm = next(b for b in default_name_references() if b.gvk == Gvk("", "v1", "ConfigMap"))
    assert len(cm.referrers) == len(default_cm.referrers) + 1
    assert cm.referrers[-1].path == ("spec", "configRef", "name")
    # kinds kustomize does not rank go after the ranked ones, by group/version/kind text
    kinds = [b.gvk.kind for b in merged]
    assert kinds.index("Backup") > kinds.index("StatefulSet")
    assert kinds.index("Backup") < kinds.index("IngressClass")


def test_merge_rejects_a_conflicting_create() -> None:
    extra = parse_name_references([{"kind": "Deployment", "fieldSpecs": [
        {"path": "spec/scaleTargetRef/name", "kind": "HorizontalPodAutoscaler", "create": True}]}])
    with pytest.raises(BuildError, match="conflicting fieldspecs"):
        merge_name_references(default_name_references(), extra)
