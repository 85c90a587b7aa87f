"""CEL rules of CRD schemas (x-kubernetes-validations), judged as the API
server judges them on create, and the Kubernetes CEL libraries they call."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.schemas import cel
from tests.checkrun import check, crd, write

CRD = crd("Pool", """
    type: object
    properties:
      spec:
        type: object
        x-kubernetes-validations:
        - rule: "self.minReplicas <= self.maxReplicas"
          message: "minReplicas must not exceed maxReplicas"
        - rule: "!has(self.memory) || quantity(self.memory).isLessThan(quantity('64Gi'))"
          fieldPath: ".memory"
          messageExpression: "'memory ' + self.memory + ' is above 64Gi'"
        - rule: "self.__namespace__ != 'kube-system'"
          message: "not in kube-system"
        - rule: "self.mode == oldSelf.mode"
          message: "mode is immutable"
        - rule: "self.weight < 1.5"
        - rule: "self.tier.noSuchFunction()"
        properties:
          minReplicas: {type: integer, default: 1}
          maxReplicas: {type: integer, default: 3}
          memory: {type: string}
          namespace: {type: string, default: default}
          mode: {type: string}
          weight: {type: number, default: 1}
          tier: {type: string, default: gold}
          endpoints:
            type: array
            items:
              type: string
              x-kubernetes-validations:
              - rule: "isURL(self) && url(self).getScheme() == 'https'"
                message: "endpoints must be https URLs"
    """)

POOL = """\
apiVersion: example.com/v1
kind: Pool
metadata:
  name: p
spec:
{body}"""


def run(tmp_path: Path, body: str) -> dict:
    write(tmp_path, "crds/pool.yaml", CRD)
    write(tmp_path, "app/kustomization.yaml", "resources: [pool.yaml]\n")
    write(tmp_path, "app/pool.yaml", POOL.format(body=body))
    return check(tmp_path, "app").report


def cel_findings(report: dict) -> list[tuple[int, str]]:
    return sorted((d["line"], d["message"]) for d in report["defects"]
                  if d["validator"] == "schema" and d["severity"] == "error")


def test_a_valid_resource_passes_every_rule(tmp_path: Path) -> None:
    report = run(tmp_path, "  minReplicas: 2\n  maxReplicas: 4\n  memory: 8Gi\n  endpoints: [https://a.example]\n")
    assert cel_findings(report) == []


def test_a_broken_rule_points_at_the_object_it_sits_on(tmp_path: Path) -> None:
    report = run(tmp_path, "  minReplicas: 5\n  maxReplicas: 4\n")
    assert cel_findings(report) == [(5, "spec: minReplicas must not exceed maxReplicas")]


def test_defaults_apply_before_the_rules(tmp_path: Path) -> None:
    # maxReplicas defaults to 3: a minReplicas of 4 breaks the rule
    report = run(tmp_path, "  minReplicas: 4\n")
    assert cel_findings(report) == [(5, "spec: minReplicas must not exceed maxReplicas")]


def test_a_non_nullable_null_is_defaulted_before_the_rules(tmp_path: Path) -> None:
    # the API server replaces maxReplicas: null by its default, 3, before the rules run
    report = run(tmp_path, "  minReplicas: 4\n  maxReplicas: null\n")
    assert cel_findings(report) == [(5, "spec: minReplicas must not exceed maxReplicas")]


def test_field_path_and_message_expression(tmp_path: Path) -> None:
    report = run(tmp_path, "  minReplicas: 1\n  memory: 128Gi\n")
    assert cel_findings(report) == [(7, "spec.memory: memory 128Gi is above 64Gi")]


def test_escaped_names_numbers_and_list_items(tmp_path: Path) -> None:
    report = run(tmp_path, "  namespace: kube-system\n  weight: 2\n  endpoints:\n  - https://ok.example\n"
                           "  - http://plain.example\n")
    assert cel_findings(report) == [
        (5, "spec: failed rule: self.weight < 1.5"),
        (5, "spec: not in kube-system"),
        (10, "spec.endpoints[1]: endpoints must be https URLs"),
    ]


def test_rules_not_judged_are_reported_once_per_kind(tmp_path: Path) -> None:
    report = run(tmp_path, "  mode: fast\n")
    [info] = [d for d in report["defects"] if d["validator"] == "schema-unjudged"]
    assert info["severity"] == "info" and info["line"] == 2
    assert info["message"].startswith("2 CEL rules of Pool (example.com/v1) not judged in 1 root: ")
    assert "1 rule a transition rule (it reads oldSelf, the live object): 'self.mode == oldSelf.mode'" in info["message"]
    assert "1 rule cannot compile: 'self.tier.noSuchFunction()'" in info["message"]


def test_a_rule_erring_as_the_api_servers_would_is_a_violation(tmp_path: Path) -> None:
    # a key the object does not hold (no default fills it), an index out of
    # bounds, a division by zero: the API server refuses the object with
    # "ERROR evaluating rule: RULE" (the rule's message when it has one); an
    # error of a library function stays a rule not judged
    write(tmp_path, "crds/route.yaml", crd("Route", """
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.action == 'CUSTOM' || size(self.rules) > 0"
              message: "At least one rule is required"
            - rule: "self.ports[1] > 0"
            - rule: "self.total / self.parts > 0"
            - rule: "quantity(self.size).isLessThan(quantity('1Gi'))"
            properties:
              action: {type: string}
              rules: {type: array, items: {type: string}}
              ports: {type: array, items: {type: integer}}
              total: {type: integer}
              parts: {type: integer}
              size: {type: string}
        """))
    write(tmp_path, "app/kustomization.yaml", "resources: [route.yaml]\n")
    write(tmp_path, "app/route.yaml", "apiVersion: example.com/v1\nkind: Route\nmetadata:\n  name: r\nspec:\n"
                                      "  action: ALLOW\n  ports: [80]\n  total: 4\n  parts: 0\n  size: bogus\n")
    report = check(tmp_path, "app").report
    assert cel_findings(report) == [
        (5, "spec: division by zero evaluating rule: self.total / self.parts > 0"),
        (5, "spec: index out of bounds: 1 evaluating rule: self.ports[1] > 0"),
        (5, "spec: no such key: rules evaluating rule: At least one rule is required"),
    ]
    [info] = [d for d in report["defects"] if d["validator"] == "schema-unjudged"]
    assert "quantity(self.size)" in info["message"]


def test_without_the_cel_library_rules_are_reported_as_not_judged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cel, "available", lambda: False)
    report = run(tmp_path, "  minReplicas: 5\n  maxReplicas: 4\n")
    assert cel_findings(report) == []
    [info] = [d for d in report["defects"] if d["validator"] == "schema-unjudged"]
    assert "needs the cel-expr-python package" in info["message"]


# --- the evaluator and the libraries ----------------------------------------------------

def judge(rule: str, value: object, schema: dict | None = None) -> bool | str:
    compiled = cel.compile_rule(rule)
    assert compiled.program is not None, compiled.error
    return cel._run(compiled.program, cel.to_cel(schema or {}, value))


@pytest.mark.parametrize(("rule", "value", "expected"), [
    ("quantity(self).compareTo(quantity('1024Mi')) == 0", "1Gi", True),
    ("quantity(self).isGreaterThan(quantity('500m'))", "1", True),
    ("isQuantity(self)", "12Xi", False),
    ("quantity(self).asInteger() == 1500", "1.5k", True),
    ("self.find('[0-9]+') == '42'", "v42beta", True),
    ("self.findAll('[a-z]') == ['a', 'b']", "a1b2", True),
    ("url(self).getHostname() == 'h.example' && url(self).getPort() == '8443'", "https://h.example:8443/x", True),
    ("isURL(self)", "not a url", False),
    ("cidr('10.0.0.0/8').containsIP(self)", "10.9.8.7", True),
    ("isIP(self)", "300.1.1.1", False),
    ("ip(self).family() == 6", "::1", True),
    ("semver(self, true).isGreaterThan(semver('1.9.0'))", "v1.10", True),
    ("self.isSorted() && self.sum() == 6 && self.max() == 3", [1, 2, 3], True),
    ("self.indexOf('b') == 1 && self.lastIndexOf('c') == -1", ["a", "b"], True),
    ("sets.intersects(self, ['x', 'b'])", ["a", "b"], True),
    ("self.split('/').size() == 3", "a/b/c", True),
    ("self.?missing.orValue('d') == 'd'", {}, True),
])
def test_kubernetes_library_functions(rule: str, value: object, expected: bool) -> None:
    assert judge(rule, value) is expected


def test_an_evaluation_error_is_a_text_not_a_verdict() -> None:
    assert isinstance(judge("quantity(self).isLessThan(quantity('1'))", "bogus"), str)
    assert isinstance(judge("self.missing.x == 1", {}), str)


def test_property_names_are_escaped_as_the_api_server_escapes_them() -> None:
    assert cel.escape("namespace") == "__namespace__"
    assert cel.escape("a-b.c/d") == "a__dash__b__dot__c__slash__d"
    assert cel.escape("x__y") == "x__underscores__y"
    assert cel.escape("a b") is None


@pytest.mark.parametrize(("text", "steps"), [
    (".spec.memory", ("spec", "memory")), ("spec.ports[0]", ("spec", "ports", 0)),
    (".metadata['a.b/c']", ("metadata", "a.b/c")), ("", ()), ("..bad", ()),
])
def test_field_paths_of_rules(text: str, steps: tuple) -> None:
    assert cel.field_path_steps(text) == steps
