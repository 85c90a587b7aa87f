"""``schema-missing``: a kind without a schema is reported once per run, with
how many resources and roots have it, not once per root."""

from __future__ import annotations

from pathlib import Path

from tests.checkrun import check, write

WIDGET = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: {name}\n"


def test_one_finding_per_kind_for_the_whole_run(tmp_path: Path) -> None:
    write(tmp_path, "base/kustomization.yaml", "resources: [a.yaml, b.yaml]\n")
    write(tmp_path, "base/a.yaml", WIDGET.format(name="a"))
    write(tmp_path, "base/b.yaml", WIDGET.format(name="b"))
    for overlay in ("one", "two", "three"):
        write(tmp_path, f"{overlay}/kustomization.yaml", f"resources: [../base]\nnamePrefix: {overlay}-\n")
    run = check(tmp_path)
    assert run.code == 0
    [defect] = run.report["defects"]
    assert (defect["validator"], defect["severity"], defect["path"], defect["line"]) == (
        "schema-missing", "info", "base/a.yaml", 2)
    assert defect["message"].startswith("no schema for Widget (example.com/v1) in Kubernetes ")
    assert defect["message"].endswith(": 6 resources in 3 roots not checked")
    assert defect["roots"] == ["one", "three", "two"]
    assert run.out.count("no schema for Widget") == 1


def test_it_can_be_turned_off(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: [a.yaml]\n")
    write(tmp_path, "app/a.yaml", WIDGET.format(name="a"))
    write(tmp_path, ".krmcheck.yaml", "validators:\n  schema-missing: false\n")
    run = check(tmp_path)
    assert run.report["defects"] == [] and run.report["disabled"] == ["schema-missing"]


def test_a_controllers_own_kind_names_the_command_that_brings_its_schema(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: [a.yaml, repo.yaml]\n")
    write(tmp_path, "app/a.yaml", WIDGET.format(name="a"))
    write(tmp_path, "app/repo.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\n"
                                     "metadata:\n  name: apps\n")
    messages = {d["message"].split(" ")[3]: d["message"] for d in check(tmp_path).report["defects"]}
    assert messages["GitRepository"].endswith(": 1 resource in 1 root not checked; `krmcheck schemas pull` "
                                              "(once; later runs read it offline) brings the controllers' "
                                              "schemas from the CRDs-catalog")
    assert "schemas pull" not in messages["Widget"]  # a kind no catalog is known to have
