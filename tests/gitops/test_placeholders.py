"""Templates outside Flux: ``substitute:`` and ``placeholders:`` in
``.krmcheck.yaml`` (``templates`` by default)."""

from __future__ import annotations

import json

import pytest

from krmcheck.cli import main
from tests.checkrun import crd
from tests.gitops.conftest import Repo

TEMPLATE = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${CLUSTER_NAME}-controller
  namespace: ${NAMESPACE:=capz-system}
spec:
  replicas: ${REPLICAS}
  selector:
    matchLabels:
      app: controller
  template:
    metadata:
      labels:
        app: controller
    spec:
      containers:
      - name: manager
        image: registry.example/manager:v1.0.0
"""


def run(repo: Repo) -> dict:
    out = repo.top.parent / "report.json"
    main([".", "--json", str(out)])
    return json.loads(out.read_text(encoding="utf-8"))


def kept(report: dict) -> list[tuple[str, int, str, str]]:
    return sorted((f["path"], f["line"], f["validator"], f["message"]) for f in report["findings"]
                  if f["validator"] not in ("schema-missing",))


def test_placeholders_check_judges_templates_as_written(repo: Repo) -> None:
    repo.write("templates/cluster.yaml", TEMPLATE)
    repo.write(".krmcheck.yaml", "placeholders: check\n")
    found = kept(run(repo))
    assert [(p, line, v) for p, line, v, _ in found] == [
        ("templates/cluster.yaml", 4, "metadata"),
        ("templates/cluster.yaml", 7, "schema")]


def test_by_default_a_template_outside_flux_is_not_judged_where_it_holds_placeholders(repo: Repo) -> None:
    # a clusterctl template: ${CLUSTER_NAME}-controller is no name yet, and
    # ${REPLICAS} no number yet; what holds no placeholder is still judged
    repo.write("templates/cluster.yaml", TEMPLATE.replace("image: registry.example/manager:v1.0.0",
                                                          "image: registry.example/manager:v1.0.0\n"
                                                          "        imagePullPolicy: Sometimes"))
    report = run(repo)
    assert [(line, v) for _, line, v, _ in kept(report)] == [(7, "substitution"), (19, "schema")]
    assert {s["by"] for s in report["suppressed"]} == {"placeholder"}
    assert sorted(s["line"] for s in report["suppressed"]) == [4, 7]


def test_substitute_gives_templates_their_values(repo: Repo) -> None:
    repo.write("templates/cluster.yaml", TEMPLATE)
    repo.write(".krmcheck.yaml", """
        substitute:
          templates/**:
            CLUSTER_NAME: demo
            REPLICAS: 2
        """)
    assert kept(run(repo)) == []


def test_placeholders_skip(repo: Repo) -> None:
    repo.write("templates/cluster.yaml", TEMPLATE)
    repo.write(".krmcheck.yaml", """
        substitute:
          templates/**:
            CLUSTER_NAME: demo
        placeholders: skip
        """)
    report = run(repo)
    # replicas: ${REPLICAS} is not judged; one info says so; it is listed
    assert kept(report) == [("templates/cluster.yaml", 7, "substitution",
                             "1 finding about values holding a placeholder (${...}, <what to write>, {name}, "
                             "REPLACE-ME) that nothing filled in were not judged")]
    [silenced] = report["suppressed"]
    assert silenced["by"] == "placeholder"


def test_placeholders_skip_covers_values_partly_a_placeholder(repo: Repo) -> None:
    repo.write("templates/cluster.yaml", TEMPLATE)
    repo.write(".krmcheck.yaml", "placeholders: skip\n")
    found = kept(run(repo))
    # "${CLUSTER_NAME}-controller" holds a placeholder: its name is not known yet
    assert [(line, v) for _, line, v, _ in found] == [(7, "substitution")]


HAND_RUN = """\
apiVersion: v1
kind: Pod
metadata:
  name: disk-wipe-HOSTNAME
  namespace: kube-system
spec:
  nodeName: HOSTNAME
  containers:
  - name: wipe
    image: ubuntu:24.04
"""


def test_a_word_a_script_of_the_repository_replaces_is_a_placeholder(repo: Repo) -> None:
    # `sed s/HOSTNAME/$node/ wipe.yaml | kubectl apply -f -`: the capitalised
    # word is written to be replaced, in the file the script names and in
    # its sibling alike; a word no program replaces is judged as written
    repo.write("hack/wipe.yaml", HAND_RUN)
    repo.write("hack/shell.yaml", HAND_RUN.replace("disk-wipe", "shell").replace("  nodeName: HOSTNAME\n",
                                                                               "  nodeName: NODE\n"))
    repo.write("hack/wipe.sh", 'for node in a b; do\n  sed -e "s/HOSTNAME/$node/g" wipe.yaml | kubectl apply -f -\n'
                               "done\n")
    report = run(repo)
    assert [(p, line, v) for p, line, v, _ in kept(report) if v != "substitution"] == [
        ("hack/shell.yaml", 7, "schema")]  # NODE: nothing replaces it
    assert sorted((s["path"], s["line"]) for s in report["suppressed"] if s["by"] == "placeholder") == [
        ("hack/shell.yaml", 4), ("hack/wipe.yaml", 4), ("hack/wipe.yaml", 7)]
    [note] = [m for _, _, v, m in kept(report) if v == "substitution"]
    assert note == ("3 findings about values holding a word that a program or page of the repository replaces "
                    "before applying were not judged: HOSTNAME (hack/wipe.sh replaces it)")
    # `placeholders: check` judges templates as written
    repo.write(".krmcheck.yaml", "placeholders: check\n")
    assert len([f for f in kept(run(repo)) if f[2] != "substitution"]) == 4
    # a sed command continued over lines replaces every word of its -e lines
    (repo.top / ".krmcheck.yaml").unlink()
    repo.write("hack/wipe.sh", 'sed \\\n  -e "s|HOSTNAME|$node|g" \\\n  -e "s|NODE|$node|g" \\\n'
                               '  "$FILE" > "$out"\n')
    assert [v for _, _, v, _ in kept(run(repo)) if v != "substitution"] == []
    # a word of two letters too (kubevela's load test: `sed 's/ID/'$i'/g'`)
    repo.write("hack/load.yaml", HAND_RUN.replace("disk-wipe-HOSTNAME", "app-ID").replace("HOSTNAME", "node-a"))
    assert [(p, line) for p, line, v, _ in kept(run(repo)) if v != "substitution"] == [("hack/load.yaml", 4)]
    repo.write("hack/load.sh", "cat ./$TEMPLATE.yaml | sed 's/ID/'$i'/g' | kubectl apply -f -\n")
    assert [v for _, _, v, _ in kept(run(repo)) if v != "substitution"] == []
    # any delimiter sed takes: `s~ID~...~g` (one that a URL holding slashes needs)
    repo.write("hack/load.sh", 'sed -i "s~ID~$PREFIX~g" load.yaml\n')
    assert [v for _, _, v, _ in kept(run(repo)) if v != "substitution"] == []


def test_a_required_field_commented_out_as_choices_is_for_the_reader(repo: Repo) -> None:
    # the field written out twice or more as commented-out blocks: the
    # reader uncomments one; a single commented-out block is missing
    crd_text = crd("Store", """
        type: object
        properties:
          spec:
            type: object
            properties:
              storage:
                type: object
                required: [type, hive]
                properties:
                  type: {type: string}
                  hive:
                    type: object
                    properties:
                      type: {type: string}
        """)
    store = """
        apiVersion: example.com/v1
        kind: Store
        metadata:
          name: NAME
        spec:
          storage:
            type: hive
            # uncomment one of the hive sections below
            # hive:
            #   type: s3
            #
            # hive:
            #   type: azure
        """
    repo.write("crds/store.yaml", crd_text)
    repo.write("examples/choices.yaml", store.replace("NAME", "choices"))
    repo.write("examples/one.yaml", store.replace("NAME", "one").replace(
        "            #\n            # hive:\n            #   type: azure\n", ""))
    report = run(repo)
    assert [(path, line, v) for path, line, v, _ in kept(report) if v == "schema"] == [("examples/one.yaml", 6, "schema")]
    [held] = [s for s in report["suppressed"] if s["by"] == "placeholder"]
    assert (held["path"], held["line"]) == ("examples/choices.yaml", 6)
    notes = [m for _, _, v, m in kept(report) if v == "substitution"]
    assert any("as choices to uncomment" in n and "(# hive: (2 choices))" in n for n in notes)


def test_a_value_written_empty_beside_a_note_of_words_is_for_the_reader(repo: Repo) -> None:
    # KubeEdge's mapper template: `image:  # Replace with your mapper image
    # name`, a form the reader fills in; the same empty image with no note
    # beside it, or beside a note of no words, is a slip
    deployment = """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: NAME
        spec:
          selector:
            matchLabels: {app: mapper}
          template:
            metadata:
              labels: {app: mapper}
            spec:
              containers:
                - name: mapper
                  image: NOTE
                  imagePullPolicy: IfNotPresent
        """
    repo.write("template/deployment.yaml",
               deployment.replace("NAME", "form").replace("NOTE", " # Replace with your mapper image name"))
    repo.write("apps/slip.yaml", deployment.replace("NAME", "slip").replace("NOTE", ""))
    repo.write("apps/marks.yaml", deployment.replace("NAME", "marks").replace("NOTE", " # --"))
    report = run(repo)
    assert sorted(path for path, _, v, _ in kept(report) if v == "schema") == ["apps/marks.yaml", "apps/slip.yaml"]
    [held] = [s for s in report["suppressed"] if s["by"] == "placeholder"]
    assert (held["path"], held["line"]) == ("template/deployment.yaml", 14)


def test_a_required_field_written_empty_over_a_todo_note_is_for_the_reader(repo: Repo) -> None:
    # `spec:` with no value over `# TODO: ...`: the author says it is yet to
    # be written (kairos' VSphereMachineTemplate samples); the same empty
    # field over commented-out fields with no such note is a slip
    crd_text = crd("MachineTemplate", """
        type: object
        required: [spec]
        properties:
          spec:
            type: object
            required: [template]
            properties:
              template:
                type: object
                required: [spec]
                properties:
                  spec:
                    type: object
                    properties:
                      image: {type: string}
        """)
    template = """
        apiVersion: example.com/v1
        kind: MachineTemplate
        metadata:
          name: NAME
        spec:
          template:
            spec:
              # NOTE
              # image: "registry.example/os:v1"
        """
    repo.write("crds/template.yaml", crd_text)
    repo.write("samples/todo.yaml", template.replace("NAME", "todo").replace("NOTE", "TODO: Configure the VM settings"))
    repo.write("samples/slip.yaml", template.replace("NAME", "slip").replace("NOTE", "A custom image may be set here"))
    report = run(repo)
    assert [(path, v) for path, _, v, _ in kept(report) if v == "schema"] == [("samples/slip.yaml", "schema")]
    [held] = [s for s in report["suppressed"] if s["by"] == "placeholder"]
    assert held["path"] == "samples/todo.yaml"
    notes = [m for _, _, v, m in kept(report) if v == "substitution"]
    assert any("TODO note" in n and "(# TODO: Configure the VM settings (under spec:))" in n for n in notes)
    # the object's own spec over kubebuilder's `# TODO(user): Add fields here`
    repo.write("samples/scaffold.yaml", "apiVersion: example.com/v1\nkind: MachineTemplate\nmetadata:\n"
                                        "  name: scaffold\nspec:\n  # TODO(user): Add fields here\n")
    report = run(repo)
    assert sorted(s["path"] for s in report["suppressed"] if s["by"] == "placeholder") == [
        "samples/scaffold.yaml", "samples/todo.yaml"]
    # the spec written empty with the note beside it; an empty spec with no note is judged
    repo.write("samples/beside.yaml", "apiVersion: example.com/v1\nkind: MachineTemplate\nmetadata:\n"
                                      "  name: beside\nspec: {} # TODO: Must be filled by user\n")
    repo.write("samples/bare.yaml", "apiVersion: example.com/v1\nkind: MachineTemplate\nmetadata:\n"
                                    "  name: bare\nspec: {} # the defaults\n")
    report = run(repo)
    assert sorted(s["path"] for s in report["suppressed"] if s["by"] == "placeholder") == [
        "samples/beside.yaml", "samples/scaffold.yaml", "samples/todo.yaml"]
    assert "samples/bare.yaml" in [path for path, _, v, _ in kept(report) if v == "schema"]
    # a required field written with no value beside a note of what to write is for the reader;
    # with no note, or a note that says nothing (#), it is judged
    noted = template.replace("NAME", "noted").replace("NOTE", "A note").replace(
        "    spec:\n              # A note", "    spec:  ## The machine's settings\n              # A note")
    assert "spec:  ## The machine's settings" in noted
    repo.write("samples/noted.yaml", noted)
    # the note's marks spaced apart (`tenantID: # # terraform output tenant`)
    repo.write("samples/spaced.yaml", noted.replace("name: noted", "name: spaced").replace(
        "spec:  ## The machine's settings", "spec: # # terraform output machine"))
    report = run(repo)
    held = {s["path"] for s in report["suppressed"] if s["by"] == "placeholder"}
    assert {"samples/noted.yaml", "samples/spaced.yaml"} <= held and "samples/slip.yaml" not in held


def test_a_replace_me_value_and_a_field_commented_out_with_a_placeholder_are_for_the_reader(repo: Repo) -> None:
    # a value that says to replace it, and a required field the object
    # writes as a comment with a placeholder value, are left to the reader;
    # a field commented out with a real value, or elsewhere, is missing
    repo.write("deploy/binding.yaml", """
        kind: ClusterRoleBinding
        apiVersion: rbac.authorization.k8s.io/v1
        metadata:
          name: operator
        subjects:
        - kind: ServiceAccount
          # namespace: <your-namespace>
          name: operator
        - kind: ServiceAccount
          # namespace: operators
          name: other
        roleRef:
          kind: ClusterRole
          name: operator
          apiGroup: rbac.authorization.k8s.io
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: REPLACE-ME
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: PLACEHOLDER_SERVICE_ACCOUNT
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: PLACEHOLDERS-list
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: NAME_PLACEHOLDER
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: REPLACED_BY_SCRIPT
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: your_service_account_here
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: YOUR_SERVICE_ACCOUNT
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: example service account
        """)
    report = run(repo)
    # a value that says it is a placeholder is one; a word holding it elsewhere is no such instruction
    assert [(line, v) for _, line, v, _ in kept(report) if v != "substitution"] == [(9, "schema"), (30, "metadata")]
    assert sorted(s["line"] for s in report["suppressed"] if s["by"] == "placeholder") == [6, 20, 25, 35, 40, 45, 50, 55]
    notes = sorted(m for _, _, v, m in kept(report) if v == "substitution")
    assert notes[0].startswith("1 finding about a required field that the object writes commented out") \
        and notes[0].endswith("(# namespace: <your-namespace>)")
    # `placeholders: check` judges templates as written
    repo.write(".krmcheck.yaml", "placeholders: check\n")
    assert len([f for f in kept(run(repo)) if f[2] != "substitution"]) == 10


def test_a_format_string_name_and_a_double_parenthesis_variable_are_placeholders(repo: Repo) -> None:
    # a program fills {prefix} in with str.format, a script ((NAME)) with sed;
    # a name holding neither is judged, and `placeholders: check` judges all
    repo.write("utils/db_template.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: '{prefix}-db'\n"
                                         "---\napiVersion: v1\nkind: Secret\nmetadata:\n"
                                         "  name: alertmanager-((ALERTMANAGER_NAME))\n"
                                         "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: Plain_Name\n")
    report = run(repo)
    assert [(p, line, v) for p, line, v, _ in kept(report) if v != "substitution"] == [
        ("utils/db_template.yaml", 14, "metadata")]
    assert sorted(s["line"] for s in report["suppressed"] if s["by"] == "placeholder") == [4, 9]
    repo.write(".krmcheck.yaml", "placeholders: check\n")
    assert sorted(line for _, line, v, _ in kept(run(repo)) if v != "substitution") == [4, 9, 14]


def test_a_fill_in_name_written_bare_in_braces_is_a_placeholder(repo: Repo) -> None:
    # storageClassName: {storageClassName} is a format string's fill-in
    # that YAML reads as a map of one key with no value; a map written
    # out, in braces or as a block, is judged
    claim = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {name}\nspec:\n"
             "  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n"
             "  storageClassName: {value}\n")
    repo.write("example/pvc.yaml", claim.format(name="braced", value="{storageClassName}"))
    repo.write("example/other.yaml", claim.format(name="other", value="{ class: fast }").replace(
        "fast }\n", "fast }\n---\n" + claim.format(name="block", value="\n    fast:")))
    report = run(repo)
    schema = sorted((p, line) for p, line, v, _ in kept(report) if v == "schema")
    assert schema == [("example/other.yaml", 10), ("example/other.yaml", 21)]
    assert [(s["path"], s["line"]) for s in report["suppressed"] if s["by"] == "placeholder"] == [
        ("example/pvc.yaml", 10)]
    repo.write(".krmcheck.yaml", "placeholders: check\n")
    assert ("example/pvc.yaml", 10) in [(p, line) for p, line, v, _ in kept(run(repo)) if v == "schema"]


def test_a_fill_in_in_capitals_written_in_brackets_is_a_placeholder(repo: Repo) -> None:
    # credentials.json: [GOOGLE_APPLICATION_CREDENTIALS] or
    # [your-github-token-with-repo-access], for the reader to replace, which
    # YAML reads as a list of one item; a list of a single lowercase word,
    # of two items, or written as a block, is judged
    secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\nstringData:\n  creds.json: {value}\n"
    repo.write("demo/creds.yaml", secret.format(name="gke", value="[GOOGLE_APPLICATION_CREDENTIALS]") + "---\n"
               + secret.format(name="aks", value="[ AKS CONTEXT ]") + "---\n"
               + secret.format(name="token", value="[your-github-token-with-repo-access]"))
    repo.write("demo/other.yaml", secret.format(name="lower", value="[credentials]") + "---\n"
               + secret.format(name="two", value="[A, B]") + "---\n"
               + secret.format(name="block", value="\n  - GOOGLE_APPLICATION_CREDENTIALS"))
    report = run(repo)
    assert sorted((p, line) for p, line, v, _ in kept(report) if v == "schema") == [
        ("demo/other.yaml", 6), ("demo/other.yaml", 13), ("demo/other.yaml", 20)]
    assert sorted((s["path"], s["line"]) for s in report["suppressed"] if s["by"] == "placeholder") == [
        ("demo/creds.yaml", 6), ("demo/creds.yaml", 13), ("demo/creds.yaml", 20)]


def test_braces_that_are_no_fill_in_name_are_judged(repo: Repo) -> None:
    # {{ }} and ${ } are placeholders of their own; a brace pair around no
    # name, or a single parenthesis pair, is not a placeholder
    repo.write("plain.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: 'a{1}'\n"
                             "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: a(NAME)\n")
    assert sorted(line for _, line, v, _ in kept(run(repo)) if v != "substitution") == [4, 9]


POLICY_CRD = "\n" + crd("Policy", """
    type: object
    properties:
      spec:
        type: object
        x-kubernetes-validations:
        - rule: self.targets.all(t, t.group == 'gateway.networking.k8s.io')
          message: a target must be of gateway.networking.k8s.io
        properties:
          targets:
            type: array
            maxItems: 4
            items:
              type: object
              properties:
                group: {type: string, maxLength: 64}
                name: {type: string, maxLength: 64}
    """, plural="policies")


def test_a_cel_rule_over_an_object_that_holds_a_placeholder_is_not_judged(repo: Repo) -> None:
    # which values the rule reads is not known: ${GROUP:-gateway.networking.k8s.io} may satisfy it
    repo.write("crds/policy.yaml", POLICY_CRD)
    repo.write("templates/held.yaml", "apiVersion: example.com/v1\nkind: Policy\nmetadata: {name: held}\n"
                                      "spec:\n  targets:\n  - group: ${GROUP:-gateway.networking.k8s.io}\n")
    repo.write("templates/wrong.yaml", "apiVersion: example.com/v1\nkind: Policy\nmetadata: {name: wrong}\n"
                                       "spec:\n  targets:\n  - group: apps\n")
    # a placeholder the rule does not read (the target's name) leaves its verdict whole
    repo.write("templates/named.yaml", "apiVersion: example.com/v1\nkind: Policy\nmetadata: {name: named}\n"
                                       "spec:\n  targets:\n  - group: apps\n    name: ${NAME}\n")
    report = run(repo)
    assert [(p, line, v) for p, line, v, _ in kept(report) if v != "substitution"] == [
        ("templates/named.yaml", 4, "schema"), ("templates/wrong.yaml", 4, "schema")]
    assert [(s["path"], s["by"]) for s in report["suppressed"]] == [("templates/held.yaml", "placeholder")]


def test_the_paths_a_cel_rule_reads() -> None:
    from krmcheck.gitops.placeholders import read_paths

    assert sorted(read_paths("!has(self.topology) || self.topology != 'VirtualIP' || (has(self.network) && "
                             "self.network.type == 'Reference' && size(self.network.reference.id) > 0)")) == [
        ("network", "reference", "id"), ("network", "type"), ("topology",)]
    assert read_paths("self.refs.all(r, r.group == 'gateway.networking.k8s.io')") == [("refs", "*", "group")]
    assert read_paths("self.name.matches('^a')") == [("name",)]
    assert read_paths("self == oldSelf") == [()]


def test_a_variables_name_where_a_name_goes_is_a_word_to_fill_in(repo: Repo) -> None:
    # a documentation template: a name written APP_NAME (capitals joined by
    # underscores, as variables are spelled) is a word to fill in, whole or
    # as a part; a capitalised word alone (HOSTNAME) is judged, and so is a
    # finding of another kind about such a word (a missing key LOG_LEVEL)
    repo.write("docs/templates/app.yaml", """
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: APP_NAME
        ---
        apiVersion: v1
        kind: Pod
        metadata:
          name: loop-TASK_ID
        spec:
          nodeName: HOSTNAME
          containers:
          - name: main
            image: busybox:1.36
            env:
            - name: LOG_LEVEL
              valueFrom:
                configMapKeyRef:
                  name: settings
                  key: LOG_LEVEL
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: settings
        data:
          LOG_FORMAT: json
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: neo4j-cluster-MY-CLUSTER
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: RTX6000-micro
        """)
    report = run(repo)
    # capitals joined by hyphens are such a word too; one capitalised word with a
    # lowercase one (RTX6000-micro) is judged
    assert [(line, v) for _, line, v, _ in kept(report) if v != "substitution"] == [
        (11, "schema"), (20, "reference"), (37, "metadata")]
    assert sorted(s["line"] for s in report["suppressed"] if s["by"] == "placeholder") == [4, 9, 32]
    [note] = [m for _, _, v, m in kept(report) if v == "substitution"]
    assert note == ("3 findings about names written as a variable's name in capitals (APP_NAME, MY-CLUSTER, "
                    "TASK_ID), a word to fill in, were not judged")
    # `placeholders: check` judges templates as written
    repo.write(".krmcheck.yaml", "placeholders: check\n")
    assert [line for _, line, v, _ in kept(run(repo)) if v != "substitution"] == [4, 9, 11, 20, 32, 37]


def test_a_variables_name_where_a_hostname_goes_is_a_word_to_fill_in(repo: Repo) -> None:
    # a route template: hostnames written __HTTPBIN_HOST__ (the hostname
    # pattern lets a wildcard lead, ^(\*\.)?[a-z0-9]...); a host in capitals
    # that is no variable's spelling is judged
    repo.write("crds/route.yaml", crd("Route", r"""
        type: object
        properties:
          spec:
            type: object
            properties:
              hostnames:
                type: array
                items:
                  type: string
                  pattern: '^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'
        """))
    repo.write("routes/route.yaml", """
        apiVersion: example.com/v1
        kind: Route
        metadata:
          name: httpbin
        spec:
          hostnames:
          - __HTTPBIN_HOST__
          - Example.COM
        """)
    report = run(repo)
    assert [(path, line) for path, line, v, _ in kept(report) if v == "schema"] == [("routes/route.yaml", 8)]
    assert [s["line"] for s in report["suppressed"] if s["by"] == "placeholder"] == [7]


def test_a_variables_name_where_a_domain_goes_is_a_word_to_fill_in(repo: Repo) -> None:
    # a managed certificate's domain a kpt setter fills in
    # (KUBEFLOW-NAME.endpoints.PROJECT.cloud.goog): the domain pattern opens
    # its repeated labels first, ^(([a-z0-9]+|...)\.)+; a domain in capitals
    # that is no variable's spelling is judged
    repo.write("crds/cert.yaml", crd("Certificate", r"""
        type: object
        properties:
          spec:
            type: object
            properties:
              domains:
                type: array
                items:
                  type: string
                  pattern: '^(([a-z0-9]+|[a-z0-9][-a-z0-9]*[a-z0-9])\.)+[a-z][-a-z0-9]*[a-z0-9]$'
        """))
    repo.write("certs/cert.yaml", """
        apiVersion: example.com/v1
        kind: Certificate
        metadata:
          name: iap
        spec:
          domains:
          - KUBEFLOW-NAME.endpoints.PROJECT.cloud.goog
          - Kubeflow.Example.COM
        """)
    report = run(repo)
    assert [(path, line) for path, line, v, _ in kept(report) if v == "schema"] == [("certs/cert.yaml", 8)]
    assert [s["line"] for s in report["suppressed"] if s["by"] == "placeholder"] == [7]


def test_one_capitalised_word_between_double_underscores_is_a_word_to_fill_in(repo: Repo) -> None:
    # a service template a copy script fills in: the name and the label
    # values written __SERVICE__; a single leading underscore (_SERVICE) or
    # a lowercase word between them (__service__) is no such marker
    repo.write("workloads/_template/app.yaml", """
        apiVersion: v1
        kind: Service
        metadata:
          name: __SERVICE__
          labels:
            app.kubernetes.io/name: __SERVICE__
        spec:
          ports:
          - port: 80
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: robot
          labels:
            app.kubernetes.io/name: _SERVICE
            app.kubernetes.io/part-of: __service__
        """)
    report = run(repo)
    assert [(line, v) for _, line, v, _ in kept(report) if v != "substitution"] == [
        (16, "metadata"), (17, "metadata")]
    assert sorted(s["line"] for s in report["suppressed"] if s["by"] == "placeholder") == [4, 6]
    [note] = [m for _, _, v, m in kept(report) if v == "substitution"]
    assert "(SERVICE)" in note


def test_a_variables_name_in_an_ingress_host_is_a_word_to_fill_in(repo: Repo) -> None:
    # a service template's Ingress: hosts written SERVICE_NAME-dev.example.com;
    # a host with a capitalised word alone (Web.example.com) is judged
    repo.write("services/_template/ingress.yaml", """
        apiVersion: networking.k8s.io/v1
        kind: Ingress
        metadata:
          name: web
        spec:
          rules:
          - host: SERVICE_NAME-dev.example.com
          - host: Web.example.com
        """)
    report = run(repo)
    assert [(line, v) for _, line, v, _ in kept(report) if v != "substitution"] == [(8, "schema")]
    assert [s["line"] for s in report["suppressed"] if s["by"] == "placeholder"] == [7]


def test_a_word_a_page_tells_the_reader_to_replace_in_a_named_file_is_a_placeholder(tmp_path) -> None:
    # a template repository's set-up page: sed -i "s~REPO_PREFIX~$URL~g" on
    # the Flux bootstrap file of the reader's copy; the word is a placeholder
    # there, in the controller's root too, and judged in a file no command names
    from tests.checkrun import check, write

    write(tmp_path, "crds/gitrepository.yaml", crd("GitRepository", """
        type: object
        properties:
          spec:
            type: object
            properties:
              url: {type: string, pattern: '^(http|https|ssh)://.*$'}
        """, group="source.toolkit.fluxcd.io", plural="gitrepositories"))
    sync = ("apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\n"
            "metadata: {name: flux-system, namespace: flux-system}\n"
            "spec:\n  interval: 1m0s\n  ref: {branch: main}\n  url: REPO_PREFIX/gitops-system\n---\n"
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"
            "metadata: {name: flux-system, namespace: flux-system}\n"
            "spec:\n  interval: 10m0s\n  path: ./repos/gitops-system/clusters/mgmt\n  prune: true\n"
            "  sourceRef: {kind: GitRepository, name: flux-system}\n")
    write(tmp_path, "repos/gitops-system/clusters/mgmt/flux-system/gotk-sync.yaml", sync)
    write(tmp_path, "repos/gitops-system/clusters/mgmt/flux-system/kustomization.yaml", "resources: [gotk-sync.yaml]\n")
    write(tmp_path, "repos/gitops-system/clusters/mgmt/other.yaml",
          sync.split("---\n")[0].replace("name: flux-system, namespace", "name: other, namespace"))
    def errors(run) -> list[str]:
        return sorted(f["path"] for f in run.report["findings"] if f["severity"] == "error")

    assert errors(check(tmp_path)) == ["repos/gitops-system/clusters/mgmt/flux-system/gotk-sync.yaml",
                                       "repos/gitops-system/clusters/mgmt/other.yaml"]
    write(tmp_path, "README.md", '```\nsed -i "s~REPO_PREFIX~$REPO_PREFIX~g" \\\n'
                                 '  gitops-system/clusters/mgmt/flux-system/gotk-sync.yaml\n```\n')
    run = check(tmp_path)
    assert errors(run) == ["repos/gitops-system/clusters/mgmt/other.yaml"]
    assert any("REPO_PREFIX (README.md replaces it)" in f["message"] for f in run.report["findings"])


def test_a_token_a_page_replaces_with_sed_before_the_build_completes_the_kustomization(tmp_path) -> None:
    # argo-cd-notifications/README.md: sed -i "s|%SLACK_TOKEN%|$SLACK_TOKEN|g"
    # secret.yaml, then kustomize build . | kubectl apply -f -: the Secret is
    # not YAML until then, so its kustomization is completed by the page;
    # the same file where no page's sed names it, and a file holding
    # another token, fail the build as ever
    from tests.checkrun import check, write

    secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  token: %SLACK_TOKEN%\n"
    for folder in ("notifications", "other", "third"):
        write(tmp_path, f"{folder}/kustomization.yaml", "resources:\n- secret.yaml\n")
        write(tmp_path, f"{folder}/secret.yaml", secret if folder != "third" else secret.replace("SLACK", "TEAMS"))
    write(tmp_path, "notifications/README.md", '```bash\nsed -i "s|%SLACK_TOKEN%|$SLACK_TOKEN|g" secret.yaml\n'
                                               'kustomize build . | kubectl apply -f -\n```\n')
    run = check(tmp_path)
    errors = sorted(f["path"] for f in run.report["findings"] if f["severity"] == "error")
    assert errors == ["other/secret.yaml", "third/secret.yaml"]
    warned = [f for f in run.report["findings"] if f["path"] == "notifications/secret.yaml"]
    assert [f["severity"] for f in warned] == ["warning"]
    assert "holds %SLACK_TOKEN%, which notifications/README.md replaces with sed" in warned[0]["message"]


def test_a_fill_in_word_a_script_gives_the_variable_its_sed_pattern_is_is_a_placeholder(repo: Repo) -> None:
    # startxfr's CLI copies the template _tools/_sample_ and runs
    # `sed -i "s/$template_name/$name/g"` over the copy, template_name being
    # _sample_ (a lowercase word between underscores); a plain value a
    # variable holds (`app=web`) is no fill-in word, and stays judged
    template = HAND_RUN.replace("disk-wipe-HOSTNAME", "default-_sample_").replace("HOSTNAME", "node-a")
    repo.write("_tools/_sample_/pod.yaml", template)
    repo.write("apps/web/pod.yaml", template.replace("_sample_", "web_"))
    repo.write("_tools/cli", "#!/bin/bash\nSHARED=_sample_\ncreate() {\n  local template_name=_sample_\n"
                             "  local app=web_\n  cp -R $template_dir $dir\n"
                             '  sed -i "s/$template_name/$1/g" $(find $dir -type f)\n  sed -i "s/$app/x/" f\n}\n')
    assert [(p, line) for p, line, v, _ in kept(run(repo)) if v != "substitution"] == [("apps/web/pod.yaml", 4)]
    notes = [m for _, _, v, m in kept(run(repo)) if v == "substitution"]
    assert notes and "_sample_ (_tools/cli replaces it)" in notes[0], notes


def test_a_kpt_setters_stand_in_in_capitals_is_a_word_to_fill_in(repo: Repo) -> None:
    # a kpt package whose names are written NAME beside kpt's setter
    # comments (kpt 0.x's {"$kpt-set":...}, kpt 1.0's kpt-set:), one through
    # the kustomization's namePrefix; the same stand-in with no setter
    # comment, and a setter-marked value with no word in capitals, are judged
    repo.write("pkg/kustomization.yaml", 'namePrefix: NAME- # {"$kpt-set":"name-prefix"}\n'
                                         "resources:\n- sa.yaml\n")
    repo.write("pkg/sa.yaml", """
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: vm
        """)
    repo.write("apply/sa.yaml", """
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: CLUSTER-sa # kpt-set: ${cluster}-sa
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: pool_1 # kpt-set: ${pool}
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: ZONE-sa
        """)
    report = run(repo)
    assert [(path, line) for path, line, v, _ in kept(report) if v == "metadata"] == [
        ("apply/sa.yaml", 9), ("apply/sa.yaml", 14)]
    assert sorted((s["path"], s["line"]) for s in report["suppressed"] if s["by"] == "placeholder") == [
        ("apply/sa.yaml", 4), ("pkg/kustomization.yaml", 1)]
    [note] = [m for _, _, v, m in kept(report) if v == "substitution"]
    assert note == ("2 findings about values a kpt setter's comment marks, written as the package's stand-in "
                    "in capitals (CLUSTER, NAME) that kpt cfg set or apply-setters replaces, were not judged")


@pytest.mark.parametrize("said, judged", [
    ("Import the bases, patching any UNDEFINED values as described.\n", False),
    ("Any UNDEFINED values should be patched via the overlay.\n", False),
    ("- Name: UNDEFINED (patch via overlay)\n", False),
    ("Replace `UNDEFINED` with the name of your app.\n", False),
    ("Replace HTTP with HTTPS, and UNDEFINED is our default.\n", True),  # names no word to fill in
    ("Write it to USB (replace UNDEFINED /dev/sdX with your disk)\n", True),
    ("", True),
])
def test_a_word_a_page_says_is_filled_in_is_a_placeholder_where_a_name_goes(tmp_path, said: str,
                                                                                judged: bool) -> None:
    # OpenGov/kustomize-bases: shared bases name their objects UNDEFINED, and
    # the READMEs say the overlay patches every UNDEFINED value
    from tests.checkrun import check, write

    write(tmp_path, "resources/namespace/kustomization.yaml", "resources: [namespace.yaml]\n")
    write(tmp_path, "resources/namespace/namespace.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: UNDEFINED\n")
    if said:
        write(tmp_path, "README.md", said)
    run = check(tmp_path)
    errors = [f for f in run.report["findings"] if f["severity"] == "error"]
    assert bool(errors) == judged, errors
    if not judged:
        assert any("UNDEFINED (README.md says to fill it in)" in f["message"] for f in run.report["findings"])
