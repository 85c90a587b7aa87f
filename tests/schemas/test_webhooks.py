"""A project's own defaulting webhook writes back, before the API server
validates, the plain Go fields without ``omitempty``: a required string,
number or boolean the manifest leaves out is there (``""``, ``0``,
``false``) and is judged as such."""

from __future__ import annotations

from pathlib import Path

from tests.checkrun import check, crd, write

CRD = crd("ClusterTemplate", """
    type: object
    properties:
      spec:
        type: object
        required: [location, region, replicas, tags]
        properties:
          location: {type: string}
          region: {type: string, pattern: '^[a-z]+$'}
          replicas: {type: integer}
          tags: {type: array, items: {type: string}}
    """, group="infra.example.com")

WEBHOOK = """\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- name: default.clustertemplate.infra.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {service: {name: webhook-service, namespace: system, path: /mutate}}
  rules:
  - apiGroups: [infra.example.com]
    apiVersions: [v1]
    operations: [CREATE, UPDATE]
    resources: [clustertemplates]
"""

TYPES = """\
package v1

type ClusterTemplateSpec struct {
	Location string `json:"location"`
	Region   string `json:"region"`
	Replicas *int32 `json:"replicas"`
	Tags     []string `json:"tags"`
}
"""

TEMPLATE = """\
apiVersion: infra.example.com/v1
kind: ClusterTemplate
metadata:
  name: default
spec: {}
"""


def required(tmp_path: Path) -> list[tuple[str, str]]:
    run = check(tmp_path)
    return sorted((d["path"], d["message"]) for d in run.report["defects"]
                  if d["severity"] == "error" and d["path"].startswith("templates/"))


def test_what_the_defaulting_webhook_writes_back_is_judged_as_written_back(tmp_path: Path) -> None:
    write(tmp_path, "config/crd/bases/clustertemplates.yaml", CRD)
    write(tmp_path, "api/v1/types.go", TYPES)
    write(tmp_path, "templates/cluster.yaml", TEMPLATE)
    without = required(tmp_path)
    assert [m for _, m in without] == [
        "spec: missing required field 'location'", "spec: missing required field 'region'",
        "spec: missing required field 'replicas'", "spec: missing required field 'tags'"]
    write(tmp_path, "config/webhook/manifests.yaml", WEBHOOK)
    # location comes back "" (valid), region "" (refused by its pattern);
    # a pointer and a slice come back null, which the API server prunes
    assert required(tmp_path) == [
        ("templates/cluster.yaml", "spec.region: '' does not match '^[a-z]+$'"),
        ("templates/cluster.yaml", "spec: missing required field 'replicas'"),
        ("templates/cluster.yaml", "spec: missing required field 'tags'")]


def test_a_webhook_for_other_operations_or_resources_writes_nothing_back(tmp_path: Path) -> None:
    write(tmp_path, "config/crd/bases/clustertemplates.yaml", CRD)
    write(tmp_path, "api/v1/types.go", TYPES)
    write(tmp_path, "templates/cluster.yaml", TEMPLATE)
    write(tmp_path, "config/webhook/manifests.yaml", WEBHOOK.replace("[CREATE, UPDATE]", "[DELETE]"))
    assert len(required(tmp_path)) == 4
    write(tmp_path, "config/webhook/manifests.yaml", WEBHOOK.replace("[clustertemplates]", "[clusters]"))
    assert len(required(tmp_path)) == 4



KNATIVE_CONFIGURATION = """\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: webhook.infra.example.com
webhooks:
- admissionReviewVersions: [v1]
  clientConfig: {service: {name: infra-webhook, namespace: infra}}
  failurePolicy: Fail
  sideEffects: None
  name: webhook.infra.example.com
"""

KNATIVE_WEBHOOK = """\
package webhook

var types = map[schema.GroupVersionKind]resourcesemantics.GenericCRD{
	v1.SchemeGroupVersion.WithKind("Cluster"): &v1.Cluster{},
	v1.SchemeGroupVersion.WithKind("%s"): &v1.%s{},
}

func NewDefaultingAdmissionController(ctx context.Context, cmw configmap.Watcher) *controller.Impl {
	return defaulting.NewAdmissionController(ctx,

		// Name of the resource webhook.
		"%s",
		"/defaulting",
		types,
		func(ctx context.Context) context.Context { return ctx },
		true,
	)
}
"""


def test_a_knative_defaulting_webhook_writes_back_the_kinds_of_its_types_map(tmp_path: Path) -> None:
    # Tekton's operator: knative.dev/pkg's defaulting webhook, named by its
    # Go code and by the configuration (which holds no rules: its controller
    # writes them), round-trips the kinds of its types map through the Go types
    write(tmp_path, "config/crd/bases/clustertemplates.yaml", CRD)
    write(tmp_path, "api/v1/types.go", TYPES)
    write(tmp_path, "templates/cluster.yaml", TEMPLATE)
    write(tmp_path, "config/webhook/500-webhooks.yaml", KNATIVE_CONFIGURATION)
    write(tmp_path, "pkg/webhook/webhook.go", KNATIVE_WEBHOOK % ("ClusterTemplate", "ClusterTemplate",
                                                                 "webhook.infra.example.com"))
    assert [m for _, m in required(tmp_path)] == [
        "spec.region: '' does not match '^[a-z]+$'", "spec: missing required field 'replicas'",
        "spec: missing required field 'tags'"]
    # a map without the kind, or a call naming another configuration, writes nothing back
    write(tmp_path, "pkg/webhook/webhook.go", KNATIVE_WEBHOOK % ("Other", "Other", "webhook.infra.example.com"))
    assert len(required(tmp_path)) == 4
    write(tmp_path, "pkg/webhook/webhook.go", KNATIVE_WEBHOOK % ("ClusterTemplate", "ClusterTemplate",
                                                                 "webhook.elsewhere.example.com"))
    assert len(required(tmp_path)) == 4

# (flow style: the schema is the point, the rest of the CRD is as ever)
MACHINE_CRDS = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: machine%(plural)s.cluster.x-k8s.io}
spec:
  group: cluster.x-k8s.io
  names: {kind: Machine%(kind)s, plural: machine%(plural)s}
  scope: Namespaced
  versions:
  - {name: v1beta2, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {
      type: object, required: [clusterName, selector, template], properties: {clusterName: {type: string},
      selector: {type: object, properties: {matchLabels: {type: object, additionalProperties: {type: string},
      minProperties: 1}}}, template: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}}}}
"""


def test_cluster_api_defaults_a_machine_deployments_selector_before_validation(tmp_path: Path) -> None:
    # cluster-api's own webhooks (not in this repository) give a
    # MachineDeployment or MachineSet with no selector one of its name
    for kind, plural in (("Deployment", "deployments"), ("Set", "sets")):
        write(tmp_path, f"crds/machine{plural}.yaml", MACHINE_CRDS % {"kind": kind, "plural": plural})
        write(tmp_path, f"templates/md-{plural}.yaml", f"apiVersion: cluster.x-k8s.io/v1beta2\nkind: Machine{kind}\n"
                                                       f"metadata:\n  name: md-0\nspec:\n  clusterName: c\n"
                                                       f"  template:\n    spec: {{}}\n")
    assert required(tmp_path) == []
    # another group's kind of the same name is judged as written
    write(tmp_path, "crds/other.yaml", (MACHINE_CRDS % {"kind": "Deployment", "plural": "deployments"})
          .replace("cluster.x-k8s.io", "example.com"))
    write(tmp_path, "templates/other.yaml", "apiVersion: example.com/v1beta2\nkind: MachineDeployment\n"
                                            "metadata:\n  name: md-0\nspec:\n  clusterName: c\n  template: {}\n")
    assert required(tmp_path) == [("templates/other.yaml", "spec: missing required field 'selector'")]


SCC_CRD = crd("SecurityContextConstraints", """
    type: object
    required: [allowHostNetwork, allowPrivilegedContainer, defaultAddCapabilities, priority, volumes]
    properties:
      allowHostNetwork: {type: boolean}
      allowPrivilegedContainer: {type: boolean}
      defaultAddCapabilities: {type: array, items: {type: string}, nullable: true}
      priority: {type: integer, format: int32, nullable: true}
      volumes: {type: array, items: {type: string}, nullable: true}
    """, group="%(group)s", scope="Cluster")


def test_openshift_writes_every_required_field_of_a_security_context_constraints_before_validation(
        tmp_path: Path) -> None:
    # OpenShift's SCC defaulting admission round-trips the object through its
    # Go type: the booleans come back false, the lists and priority null
    write(tmp_path, "crds/scc.yaml", SCC_CRD % {"group": "security.openshift.io"})
    write(tmp_path, "templates/scc.yaml", "apiVersion: security.openshift.io/v1\nkind: SecurityContextConstraints\n"
                                       "metadata:\n  name: csi\nallowPrivilegedContainer: true\n")
    assert required(tmp_path) == []
    # a value written is judged as written
    write(tmp_path, "templates/scc.yaml", "apiVersion: security.openshift.io/v1\nkind: SecurityContextConstraints\n"
                                       "metadata:\n  name: csi\nallowPrivilegedContainer: 'yes'\n")
    assert required(tmp_path) == [("templates/scc.yaml", "allowPrivilegedContainer: 'yes' is not of type 'boolean'")]
    # another group's kind of the same name is judged as written
    (tmp_path / "templates/scc.yaml").unlink()
    write(tmp_path, "crds/other.yaml", SCC_CRD % {"group": "example.com"})
    write(tmp_path, "templates/other.yaml", "apiVersion: example.com/v1\nkind: SecurityContextConstraints\n"
                                      "metadata:\n  name: csi\nallowPrivilegedContainer: true\n")
    assert {m for _, m in required(tmp_path)} == {"missing required field 'allowHostNetwork'",
                                                  "missing required field 'defaultAddCapabilities'",
                                                  "missing required field 'priority'",
                                                  "missing required field 'volumes'"}


CONTROL_PLANE = crd("ControlPlane", """
    type: object
    properties:
      spec:
        type: object
        required: [secret, storage]
        properties:
          secret: {type: string}
          storage:
            type: object
            required: [imageCache, size]
            properties:
              imageCache: {type: object}
              size: {type: string}
    """, group="core.example.com")

MARKED = """\
package v1

// +kubebuilder:webhook:path=/mutate-core-example-com-v1-controlplane,mutating=true,failurePolicy=fail,groups=core.example.com,resources=controlplanes,verbs=create;update,versions=v1,name=mcontrolplane.kb.io
// +kubebuilder:webhook:path=/validate-core-example-com-v1-controlplane,mutating=false,failurePolicy=fail,groups=core.example.com,resources=controlplanes,verbs=create;update,versions=v1,name=vcontrolplane.kb.io

type ControlPlaneSpec struct {
	Secret  string          `json:"secret,omitempty"`
	Storage storagev1.Spec  `json:"storage"`
}

func (r *ControlPlane) Default() {
	r.Spec.Storage.Default() // the storage operator's module sets its own fields
}
"""


def test_a_field_only_an_imported_type_declares_is_a_warning_under_the_projects_own_webhook(
        tmp_path: Path) -> None:
    # the project's mutating webhook takes CREATE of the kind and calls into
    # another module's types: what it writes there is not known here; a
    # field its own Go type declares (secret, omitempty) is still judged
    write(tmp_path, "config/crd/bases/controlplanes.yaml", CONTROL_PLANE)
    write(tmp_path, "templates/plane.yaml", "apiVersion: core.example.com/v1\nkind: ControlPlane\n"
                                            "metadata:\n  name: plane\nspec:\n  storage: {size: 10G}\n")
    write(tmp_path, "api/v1/webhook.go", MARKED.replace("mutating=true", "mutating=false"))
    assert [m for _, m in required(tmp_path)] == ["spec.storage: missing required field 'imageCache'",
                                                  "spec: missing required field 'secret'"]
    write(tmp_path, "api/v1/webhook.go", MARKED)
    run = check(tmp_path)
    assert [d["message"] for d in run.report["defects"] if d["severity"] == "error"] == [
        "spec: missing required field 'secret'"]
    assert [d["message"] for d in run.report["defects"] if d["severity"] == "warning"] == [
        "spec.storage: missing required field 'imageCache'"]
    [note] = [n for n in run.report["notes"] if "[admission-default]" in n["message"]]
    assert "api/v1/webhook.go" in note["message"] and note["message"].startswith("1 error")
    # a webhook configuration alone (a vendored controller's) is no such evidence
    write(tmp_path, "api/v1/webhook.go", MARKED.split("// +kubebuilder")[0] + MARKED.split("\n", 4)[4])
    write(tmp_path, "config/webhook/manifests.yaml", WEBHOOK.replace("infra.example.com", "core.example.com")
          .replace("clustertemplates", "controlplanes"))
    assert [m for _, m in required(tmp_path)] == ["spec.storage: missing required field 'imageCache'",
                                                  "spec: missing required field 'secret'"]


PRUNER = crd("Pruner", """
    type: object
    properties:
      spec:
        type: object
        required: [disabled, global-config, schedule]
        properties:
          disabled: {type: boolean}
          global-config: {type: object}
          schedule: {type: object}
    """, group="operator.example.com")

PRUNER_TYPES = """\
package v1alpha1

type PrunerSpec struct {
	Disabled     *bool         `json:"disabled"`
	GlobalConfig *GlobalConfig `json:"global-config"`
	Schedule     *Schedule     `json:"schedule"`
}

func (p *PrunerSpec) SetDefaults() {
	if p.GlobalConfig == nil {
		p.GlobalConfig = &GlobalConfig{}
	}
	if p.Disabled == nil {
		p.Disabled = &defaultDisabled
	}
}
"""


def test_a_field_the_webhooks_defaulting_method_assigns_is_a_warning(tmp_path: Path) -> None:
    # Tekton's operator: knative's defaulting webhook takes TektonPruner, and
    # its SetDefaults gives global-config and disabled when they are nil;
    # schedule, which no defaulting method assigns, stays an error, and
    # without the webhook nothing is lowered
    write(tmp_path, "config/crd/pruners.yaml", PRUNER)
    write(tmp_path, "pkg/apis/v1alpha1/pruner_types.go", PRUNER_TYPES)
    write(tmp_path, "templates/pruner.yaml", "apiVersion: operator.example.com/v1\nkind: Pruner\n"
                                             "metadata:\n  name: pruner\nspec: {}\n")
    assert len(required(tmp_path)) == 3
    write(tmp_path, "pkg/webhook/webhook.go", KNATIVE_WEBHOOK % ("Pruner", "Pruner", "webhook.example.com"))
    run = check(tmp_path)
    assert [d["message"] for d in run.report["defects"] if d["severity"] == "error"] == [
        "spec: missing required field 'schedule'"]
    assert sorted(d["message"] for d in run.report["defects"] if d["severity"] == "warning") == [
        "spec: missing required field 'disabled'", "spec: missing required field 'global-config'"]
    [note] = [n for n in run.report["notes"] if "[admission-default]" in n["message"]]
    assert "whose defaulting method in pkg/apis/v1alpha1/pruner_types.go assigns the field" in note["message"]
