from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from reporter_sample import sample_run

from krmcheck.reporters.junit import JunitReporter
from krmcheck.results import RunReport


def parse(run: RunReport) -> ET.Element:
    out = io.StringIO()
    JunitReporter().write(run, out)
    return ET.fromstring(out.getvalue())


def case(tree: ET.Element, suite: str, name: str) -> ET.Element:
    found = tree.find(f"testsuite[@name='{suite}']/testcase[@name='{name}']")
    assert found is not None, (suite, name)
    return found


def test_one_suite_per_root_one_case_per_resource() -> None:
    tree = parse(sample_run())
    assert [s.get("name") for s in tree.iter("testsuite")] == [
        "overlays/dev", "overlays/prod", "overlays/prod-eu", "overlays/staging"]
    prod = tree.find("testsuite[@name='overlays/prod']")
    assert prod is not None
    assert [(c.get("name"), c.get("classname")) for c in prod.iter("testcase")] == [
        ("Deployment/prod/prod-web", "overlays/prod"),
        ("Service/prod/prod-web", "overlays/prod"),
        ("ConfigMap/prod/prod-app-config", "overlays/prod"),
    ]
    assert case(tree, "overlays/dev", "Deployment/dev-web").get("file") is None


def test_failing_case_points_at_the_finding() -> None:
    web = case(parse(sample_run()), "overlays/prod", "Deployment/prod/prod-web")
    assert (web.get("file"), web.get("line")) == ("overlays/prod/kustomization.yaml", "9")
    failures = web.findall("failure")
    assert [f.get("type") for f in failures] == ["error"]
    assert failures[0].get("message") == 'image "nginx" uses tag "latest"; pin 100% of images'
    assert failures[0].text == (
        'overlays/prod/kustomization.yaml:9:13: error: image "nginx" uses tag "latest";'
        " pin 100% of images [image-tag]\n  via base/deployment.yaml:20:16 (resource)")


def test_findings_below_fail_on_are_output_not_failures() -> None:
    tree = parse(sample_run())
    web = case(tree, "overlays/prod", "Deployment/prod/prod-web")
    assert web.findtext("system-out", "").startswith("base/deploy, v2.yaml:14:9: warning:")
    config = case(tree, "overlays/prod", "ConfigMap/prod/prod-app-config")
    assert config.find("failure") is None and config.get("file") is None


def test_fail_on_warning_fails_on_warnings_and_keeps_the_most_severe_location() -> None:
    web = case(parse(sample_run("warning")), "overlays/prod", "Deployment/prod/prod-web")
    assert [f.get("type") for f in web.findall("failure")] == ["error", "warning"]
    # The warning comes first by path, but the error's location is the one shown.
    assert (web.get("file"), web.get("line")) == ("overlays/prod/kustomization.yaml", "9")
    warning = web.findall("failure")[1]
    assert warning.get("message") == 'container "web" has no memory limit set resources.limits.memory'
    assert web.find("system-out") is None


def test_build_error_is_an_error_case_named_build() -> None:
    tree = parse(sample_run("never"))
    build = case(tree, "overlays/staging", "build")
    assert (build.get("file"), build.get("line")) == ("overlays/staging/kustomization.yaml", "4")
    assert [e.get("type") for e in build.findall("error")] == ["build"]
    staging = tree.find("testsuite[@name='overlays/staging']")
    assert staging is not None and staging.get("errors") == "1"
    # fail_on=never: nothing else fails.
    assert not list(tree.iter("failure"))
