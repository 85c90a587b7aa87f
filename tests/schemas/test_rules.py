"""The API server's allowed-values rules (``krmcheck/schemas/field_rules.yaml``):
every rule, at every version it names, reported at the line of the value."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from krmcheck.locate import Locator
from krmcheck.resource.resource import Resource
from krmcheck.schemas import builtin, rules
from krmcheck.tree.load import load_documents
from krmcheck.validators import ValidatorOptions, schema

BAD = "NotAValueOfThisField"
NEWEST = builtin.versions()[-1]


def cases() -> list[tuple[str, str, tuple[str, ...], rules.Rule]]:
    """One case per rule: the first resource kind its place applies to."""
    seen: dict[str, tuple[str, str, tuple[str, ...], rules.Rule]] = {}
    for (api_version, kind), found in sorted(rules.table().items()):
        for prefix, rule in found:
            seen.setdefault(rule.id, (api_version, kind, prefix, rule))
    return [seen[k] for k in sorted(seen)]


def resource(api_version: str, kind: str, path: tuple[str, ...], value: Any) -> str:
    """A resource holding ``value`` at ``path`` ("*": a list of one item)."""
    node: Any = value
    for step in reversed(path):
        node = [node] if step == "*" else {step: node}
    doc = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    for key, sub in node.items():
        doc.setdefault(key, sub) if not isinstance(doc.get(key), dict) else doc[key].update(sub)
    return yaml.safe_dump(doc, sort_keys=False)


def findings(text: str, rule_id: str, version: str) -> list[tuple[int, str]]:
    [item] = load_documents(text, "r.yaml")
    results = [r for r in schema.validate([item], ValidatorOptions(version)) if dict(r.tags).get("rule") == rule_id]
    locator = Locator([Resource(item)], "root")
    return [(locator.locate(r).location.line, r.message) for r in results]


def version_text(v: tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}"


def test_the_table_is_well_formed() -> None:
    ids = [rule.id for found in rules.table().values() for _, rule in found]
    assert len(set(ids)) >= 80
    for found in rules.table().values():
        for _, rule in found:
            assert rule.values and rule.source and rule.since >= (1, 0)


@pytest.mark.parametrize(("api_version", "kind", "prefix", "rule"), cases(), ids=[c[3].id for c in cases()])
def test_each_rule_reports_a_bad_value_at_its_line(api_version: str, kind: str, prefix: tuple[str, ...],
                                                   rule: rules.Rule) -> None:
    if rule.until is not None:
        pytest.skip("no rule stops holding within the bundled versions")
    version = max(NEWEST, version_text(rule.since), key=rules.version_of)
    text = resource(api_version, kind, prefix + rule.field, BAD)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if BAD in t)
    [(where, message)] = findings(text, rule.id, version)
    assert where == line
    assert f"'{BAD}' is not one of" in message
    for value in rule.allowed(rules.version_of(version)):
        assert findings(resource(api_version, kind, prefix + rule.field, value), rule.id, version) == []
    if rule.since > rules.version_of(builtin.versions()[0]):
        before = version_text((rule.since[0], rule.since[1] - 1))
        assert findings(text, rule.id, before) == [], "a rule holds only from its first version"


def test_a_value_accepted_later_is_refused_before() -> None:
    [(prefix, rule)] = [(p, r) for p, r in rules.table()[("v1", "PersistentVolumeClaim")]
                        if r.id.endswith("access-modes")]
    text = resource("v1", "PersistentVolumeClaim", prefix + rule.field, "ReadWriteOncePod")
    assert findings(text, rule.id, "1.27") == []
    assert len(findings(text, rule.id, "1.26")) == 1


def test_a_required_field_is_reported_at_the_object_that_lacks_it() -> None:
    text = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n"
            "    spec:\n      containers: [{name: a, image: busybox}]\n")
    [(line, message)] = findings(text, "job-template-restart-policy", NEWEST)
    assert line == 7
    assert message.startswith("spec.template.spec: missing required field 'restartPolicy': "
                              "must be one of OnFailure, Never; left out, it defaults to Always")
