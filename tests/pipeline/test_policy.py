"""A root that fails only by policy, not by a defect, is one finding for the
run: roots that read outside their directory (kustomize's load restrictor)
are checked as they build with it lifted, and roots that inflate Helm charts
without --enable-helm are not checked; neither is a build failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.checkrun import DEPLOYMENT, Run, check, write

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
  labels:
    team: {label}
"""


def outside(root: Path, label: str = "web") -> Path:
    """Two roots that read a file beside them, one directly and one through
    its base, and one that reads its own files only."""
    write(root, "shared/cm.yaml", CONFIGMAP.format(label=label))
    write(root, "apps/a/kustomization.yaml", "namePrefix: a-\nresources:\n- ../../shared/cm.yaml\n")
    write(root, "apps/base/kustomization.yaml", "resources:\n- ../../shared/cm.yaml\n")
    write(root, "apps/b/kustomization.yaml", "namePrefix: b-\nresources:\n- ../base\n")
    write(root, "clean/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(root, "clean/deployment.yaml", DEPLOYMENT)
    return root


def by(run: Run, validator: str) -> list[dict]:
    return [d for d in run.report["defects"] if d["validator"] == validator]


def failed(run: Run) -> list[str]:
    return sorted(r["root"] for r in run.report["roots"] if r["buildFailed"])


def test_roots_that_read_outside_their_directory_are_one_warning_not_an_error_each(tmp_path: Path) -> None:
    run = check(outside(tmp_path))
    assert run.code == 0, run.out
    assert failed(run) == [] and by(run, "build") == []
    [warning] = by(run, "load-restrictor")
    assert warning["severity"] == "warning"
    assert (warning["path"], warning["line"]) == ("apps/a/kustomization.yaml", 3)  # the entry that reads it
    assert "2 roots read files outside their directory" in warning["message"]
    assert ": apps/a, apps/b; " in warning["message"]
    assert "--load-restrictor LoadRestrictionsNone" in warning["message"]
    assert "`load-restrictor: LoadRestrictionsNone` in .krmcheck.yaml" in warning["message"]
    assert len(run.report["defects"]) == 1
    # and they were checked: what they read outside is rendered
    resources = {r["root"]: [x["name"] for x in r["resources"]] for r in run.report["roots"]}
    assert resources["apps/a"] == ["a-shared"] and resources["apps/b"] == ["b-shared"]


def test_a_defect_in_the_file_read_outside_is_reported(tmp_path: Path) -> None:
    run = check(outside(tmp_path, label="'not valid!'"))
    assert run.code == 1, run.out
    [defect] = by(run, "metadata")
    assert (defect["path"], defect["line"], defect["severity"]) == ("shared/cm.yaml", 6, "error")
    assert defect["roots"] == ["apps/a", "apps/b"]
    assert len(by(run, "load-restrictor")) == 1 and failed(run) == []


def test_the_warning_is_said_once_from_the_render_cache_too(tmp_path: Path) -> None:
    first = check(outside(tmp_path, label="'not valid!'"))
    again = check(tmp_path)
    assert again.report["defects"] == first.report["defects"] and again.code == 1


@pytest.mark.parametrize("given", [
    ("--load-restrictor", "LoadRestrictionsRootOnly"),
    ("config", "load-restrictor: LoadRestrictionsRootOnly\n"),
    ("config", "overrides:\n- paths: [apps/]\n  load-restrictor: LoadRestrictionsRootOnly\n"),
])
def test_a_restrictor_that_was_given_keeps_the_refusal(tmp_path: Path, given: tuple[str, str]) -> None:
    outside(tmp_path, label="'not valid!'")
    if given[0] == "config":
        write(tmp_path, ".krmcheck.yaml", given[1])
        run = check(tmp_path)
    else:
        run = check(tmp_path, *given)
    assert run.code == 2
    assert failed(run) == ["apps/a", "apps/b"]
    assert by(run, "load-restrictor") == [] and by(run, "metadata") == []
    assert all("is not in or below" in d["message"] for d in by(run, "build"))


def test_other_files_a_kustomization_names_outside_are_lifted_too(tmp_path: Path) -> None:
    write(tmp_path, "shared/config.yaml", "namePrefix:\n- path: metadata/name\n")
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml]\nconfigurations:\n"
                                              "- ../shared/config.yaml\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    run = check(tmp_path)
    assert run.code == 0, run.out
    [warning] = by(run, "load-restrictor")
    assert (warning["path"], warning["line"]) == ("app/kustomization.yaml", 3)
    assert "1 root reads files outside its directory" in warning["message"] and ": app; " in warning["message"]


def test_a_file_outside_the_repository_is_never_read_so(tmp_path: Path) -> None:
    write(tmp_path, "elsewhere.yaml", CONFIGMAP.format(label="web"))
    repo = tmp_path / "repo"
    write(repo, "app/kustomization.yaml", "resources:\n- ../../elsewhere.yaml\n")
    run = check(repo)
    assert run.code == 2 and failed(run) == ["app"]
    [error] = by(run, "build")
    assert "is not in or below 'app'" in error["message"] and "LoadRestrictionsNone" in error["message"]
    assert by(run, "load-restrictor") == []


def test_a_root_that_fails_with_the_restrictor_lifted_too_is_a_build_error(tmp_path: Path) -> None:
    write(tmp_path, "shared/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [broken\n")
    write(tmp_path, "app/kustomization.yaml", "resources:\n- ../shared/cm.yaml\n")
    run = check(tmp_path)
    assert run.code == 2 and failed(run) == ["app"]
    [error] = by(run, "build")
    assert error["path"] == "shared/cm.yaml"  # the defect, not the refusal
    assert "is not in or below" not in error["message"]


def test_secret_values_the_lifted_build_read_are_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "shared/secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n"
                                          "stringData:\n  token: storefront backend\n")
    write(tmp_path, "app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n"
                                   "  labels:\n    tier: x\n")
    write(tmp_path, "app/kustomization.yaml", """\
resources:
- ../shared/secret.yaml
- cm.yaml
replacements:
- source: {kind: Secret, name: db, fieldPath: stringData.token}
  targets:
  - select: {kind: ConfigMap, name: cfg}
    fieldPaths: [metadata.labels.tier]
""")
    run = check(tmp_path, "--no-cache")
    [label] = by(run, "metadata")
    assert "storefront" not in label["message"] and "<redacted>" in label["message"]
    assert "storefront" not in run.out


HELM_ROOT = """\
helmCharts:
- name: podinfo
  repo: https://stefanprodan.github.io/podinfo
  version: 6.7.0
  releaseName: {name}
"""


def helm_roots(root: Path) -> Path:
    for name in ("one", "two"):
        write(root, f"charts/{name}/kustomization.yaml", HELM_ROOT.format(name=name))
    write(root, "clean/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(root, "clean/deployment.yaml", DEPLOYMENT)
    return root


def test_roots_that_inflate_helm_charts_without_enable_helm_are_one_warning(tmp_path: Path) -> None:
    run = check(helm_roots(tmp_path))
    assert run.code == 0, run.out
    assert failed(run) == [] and by(run, "build") == []
    [warning] = by(run, "helm")
    assert warning["severity"] == "warning"
    assert (warning["path"], warning["line"]) == ("charts/one/kustomization.yaml", 2)  # the chart's entry
    assert "2 roots inflate Helm charts" in warning["message"] and "--enable-helm" in warning["message"]
    assert ": charts/one, charts/two; " in warning["message"]
    assert len(run.report["defects"]) == 1


def test_a_helm_root_that_also_needs_the_network_is_the_same_warning(tmp_path: Path) -> None:
    # a dashboard generated from a URL as well: built offline with the file
    # read as empty, it still fails only for want of --enable-helm
    helm_roots(tmp_path)
    write(tmp_path, "charts/two/kustomization.yaml", HELM_ROOT.format(name="two")
          + "configMapGenerator:\n- name: dashboards\n  files:\n  - d.json=https://example.com/d.json\n")
    run = check(tmp_path)
    assert run.code == 0, run.out
    assert failed(run) == [] and by(run, "build") == []
    [warning] = by(run, "helm")
    assert ": charts/one, charts/two; " in warning["message"]
    assert [d["path"] for d in by(run, "remote")] == ["charts/two/kustomization.yaml"]


def test_a_helm_root_beside_a_real_defect_still_fails_by_that_defect(tmp_path: Path) -> None:
    helm_roots(tmp_path)
    write(tmp_path, "web/kustomization.yaml", "resources: [missing.yaml]\n")
    run = check(tmp_path)
    assert run.code == 2 and failed(run) == ["web"]
    assert len(by(run, "helm")) == 1


def test_the_policy_findings_can_be_turned_off_and_regraded(tmp_path: Path) -> None:
    write(helm_roots(tmp_path), ".krmcheck.yaml", "validators:\n  helm: {severity: error}\n")
    run = check(tmp_path)
    assert run.code == 1 and [d["severity"] for d in by(run, "helm")] == ["error"]
    write(tmp_path, ".krmcheck.yaml", "validators:\n  helm: false\n")
    run = check(tmp_path)
    assert run.code == 0 and by(run, "helm") == []


def test_the_run_is_unchanged_without_such_roots(tmp_path: Path) -> None:
    write(tmp_path, "clean/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "clean/deployment.yaml", DEPLOYMENT)
    run = check(tmp_path)
    assert run.code == 0 and run.report["defects"] == []


def test_the_load_restrictor_warning_is_a_rule_the_configuration_can_grade(tmp_path: Path) -> None:
    root = outside(tmp_path)
    write(root, ".krmcheck.yaml", "validators:\n  load-restrictor: {severity: error}\n")
    run = check(root)
    assert run.code == 1, run.err
    assert [d["severity"] for d in by(run, "load-restrictor")] == ["error"]
    write(root, ".krmcheck.yaml", "validators:\n  load-restrictor: false\n")
    run = check(root)
    assert run.code == 0, run.err
    assert by(run, "load-restrictor") == []


PLUGIN_ROOT = """\
generators:
- policy-generator.yaml
"""
PLUGIN_CONFIG = """\
apiVersion: policy.open-cluster-management.io/v1
kind: PolicyGenerator
metadata: {name: policies}
"""


def test_roots_that_run_external_plugins_without_the_flag_are_one_warning(tmp_path: Path) -> None:
    # kustomize runs a PolicyGenerator only with --enable-alpha-plugins, which
    # an Argo CD configuration gives: policy, no defect; a Flux Kustomization
    # cannot run it at all: there it is a build error
    for name in ("acm", "more"):
        write(tmp_path, f"{name}/kustomization.yaml", PLUGIN_ROOT)
        write(tmp_path, f"{name}/policy-generator.yaml", PLUGIN_CONFIG)
    run = check(tmp_path)
    assert run.code == 0, run.out
    assert failed(run) == [] and by(run, "build") == []
    [warning] = by(run, "plugins")
    assert (warning["severity"], warning["path"], warning["line"]) == ("warning", "acm/kustomization.yaml", 2)
    assert warning["message"].startswith("2 roots run external kustomize plugins") and ": acm, more; " in \
        warning["message"] and "--enable-alpha-plugins" in warning["message"]
    write(tmp_path, "clusters/prod/acm.yaml", """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: acm, namespace: flux-system}
spec:
  path: ./acm
  sourceRef: {kind: GitRepository, name: flux-system}
""")
    run = check(tmp_path)
    assert run.code == 2 and failed(run) == ["flux:flux-system/acm"], run.out


def test_a_root_reading_a_file_encrypted_with_git_crypt_is_not_checked(tmp_path: Path) -> None:
    # git-crypt's header, then ciphertext: only an unlocked checkout reads it
    secret = b"\x00GITCRYPT\x00\xc7\x0e\xd7#\xfd*Z\xf5(}"
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml, config/ingress.yaml]\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    (tmp_path / "app/config").mkdir()
    (tmp_path / "app/config/ingress.yaml").write_bytes(secret)
    write(tmp_path, "gen/kustomization.yaml", "configMapGenerator:\n- name: c\n  files: [token]\n")
    (tmp_path / "gen/token").write_bytes(secret)
    # a file that is merely not UTF-8 is still a build error
    write(tmp_path, "broken/kustomization.yaml", "resources: [x.yaml]\n")
    (tmp_path / "broken/x.yaml").write_bytes(b"kind: \xc7\n")
    run = check(tmp_path)
    assert failed(run) == ["broken"]
    encrypted = sorted((d["path"], d["line"], d["severity"]) for d in by(run, "encrypted"))
    assert encrypted == [("app/kustomization.yaml", 1, "warning"), ("gen/kustomization.yaml", 3, "warning")]
    assert all("git-crypt unlock" in d["message"] for d in by(run, "encrypted"))
