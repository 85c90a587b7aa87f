"""Every rule of ``krmcheck/schemas/field_rules.yaml``, one by one: an object
the API server refuses for the rule's reason (the rule reports it, at the
field that is wrong or the object that lacks it) and a close variant it
accepts (no error at all).

The cases are data, ``field_rule_cases.yaml`` beside this file, one entry
per rule id:

- ``refused``: the document the rule refuses;
- ``at``: the field path (or paths) the rule reports, as ``spec.a[0].b``;
  the line the finding points at ends with the comment ``# <``;
- ``accepted``: the document the API server accepts, written out, or as
  replacements ``{old: new}`` made in ``refused`` (each ``old`` once);
- ``version``: the Kubernetes version to judge at (default: the newest);
- ``also``: other rules the refused document breaks as well, where the
  API server refuses it for more than one reason.

A rule without a case fails :func:`test_every_rule_has_a_case`, so a new
rule comes with its two objects.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import yaml

from krmcheck.locate import Locator
from krmcheck.resource.resource import Resource
from krmcheck.schemas import builtin, rules
from krmcheck.tree.load import load_documents
from krmcheck.validators import ValidatorOptions, schema

CASES = Path(__file__).with_name("field_rule_cases.yaml")
RULES = Path(rules.__file__).with_name("field_rules.yaml")
NEWEST = builtin.versions()[-1]


@functools.cache
def cases() -> dict[str, dict[str, Any]]:
    loaded: dict[str, dict[str, Any]] = yaml.safe_load(CASES.read_text(encoding="utf-8"))
    return loaded


def rule_ids() -> list[str]:
    return [entry["id"] for entry in yaml.safe_load(RULES.read_text(encoding="utf-8"))["rules"]]


def errors(text: str, version: str) -> list[tuple[str, str, int]]:
    """(rule, field path, line) of every error the schema validator reports."""
    [item] = load_documents(text, "case.yaml")
    locator = Locator([Resource(item)], "root")
    return [(dict(r.tags).get("rule") or "schema", r.field_path, locator.locate(r).location.line)
            for r in schema.validate([item], ValidatorOptions(version)) if r.severity == "error"]


def accepted_text(case: dict[str, Any]) -> str:
    written = case["accepted"]
    if isinstance(written, str):
        return written
    text: str = case["refused"]
    for old, new in written.items():
        assert text.count(old) == 1, f"{old!r} must occur once in the refused document"
        text = text.replace(old, new)
    return text


def as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


def test_every_rule_has_a_case() -> None:
    ids = rule_ids()
    assert len(ids) == len(set(ids)), "rule ids are unique"
    assert sorted(set(ids) - set(cases())) == [], "rules without a case"
    assert sorted(set(cases()) - set(ids)) == [], "cases of no rule"


@pytest.mark.parametrize("rule_id", sorted(cases()))
def test_the_rule_refuses_its_object(rule_id: str) -> None:
    case = cases()[rule_id]
    found = errors(case["refused"], str(case.get("version", NEWEST)))
    assert sorted(path for rule, path, _ in found if rule == rule_id) == sorted(as_list(case["at"])), found
    marked = {i for i, t in enumerate(case["refused"].splitlines(), 1) if t.endswith("# <")}
    assert {line for rule, _, line in found if rule == rule_id} == marked, found
    others = {rule for rule, _, _ in found if rule != rule_id}
    assert others == set(case.get("also", ())), found


@pytest.mark.parametrize("rule_id", sorted(cases()))
def test_the_rule_accepts_the_close_variant(rule_id: str) -> None:
    case = cases()[rule_id]
    text = accepted_text(case)
    assert text != case["refused"]
    assert errors(text, str(case.get("version", NEWEST))) == []
