"""The render cache: a warm run reuses every unchanged root's report and
prints exactly what a run without the cache prints; anything a root's check
read that changes (a base, a file a directory read picks up, a path that
appears, the configuration, the flags, a CRD, a schema) makes it check the
root again; roots that ran programs are never stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from krmcheck import cache
from krmcheck.pipeline import render_cache
from krmcheck.results import RootReport
from tests.checkrun import DEPLOYMENT, Run, check, write
from tests.schemas.test_sources import CRD, widget


@pytest.fixture(autouse=True)
def _counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render_cache, "STATS", render_cache.STATS.__class__())
    # one process (as on one CPU), so that the counts are this process's
    monkeypatch.setattr(os, "cpu_count", lambda: 1)


def counts() -> dict[str, int]:
    counted = dict(render_cache.STATS)
    render_cache.STATS.clear()
    return counted


def shared_base(tmp_path: Path) -> Path:
    """Two overlays over one base (the second reuses the base's rendering
    within a run), and a plain manifest."""
    write(tmp_path, "base/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "base/deployment.yaml", DEPLOYMENT)
    for env in ("dev", "prod"):
        write(tmp_path, f"overlays/{env}/kustomization.yaml",
              f"resources: [../../base]\nnamePrefix: {env}-\n")
    write(tmp_path, "manifests/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n")
    return tmp_path


def same_as_uncached(repo: Path, *args: str) -> Run:
    """A run with the cache, checked against one without it: same exit
    code, same text report, same JSON report."""
    warm = check(repo, *args)
    cold = check(repo, *args, "--no-cache")
    assert (warm.code, warm.out, warm.err) == (cold.code, cold.out, cold.err)
    assert json.dumps(warm.report, sort_keys=True) == json.dumps(cold.report, sort_keys=True)
    return warm


def entries() -> list[Path]:
    return sorted((cache.directory() / "renders").glob("*/*.entry"))


# --- reuse -------------------------------------------------------------------------------

def test_a_warm_run_reuses_every_root_and_prints_the_same(tmp_path: Path) -> None:
    repo = shared_base(tmp_path)
    write(repo, "base/deployment.yaml", DEPLOYMENT.replace("nginx:1.27", "nginx:latest"))
    first = same_as_uncached(repo, "--fail-on", "warning")
    assert counts() == {"miss": 3, "stored": 3}
    assert len(entries()) == 3
    second = same_as_uncached(repo, "--fail-on", "warning")
    assert counts() == {"hit": 3}
    assert (second.out, second.report) == (first.out, first.report)
    assert second.code == first.code == 1


def test_no_cache_neither_reads_nor_writes_entries(tmp_path: Path) -> None:
    repo = shared_base(tmp_path)
    check(repo, "--no-cache")
    assert counts() == {} and entries() == []
    check(repo)
    check(repo, "--no-cache")
    assert counts() == {"miss": 3, "stored": 3}


def test_a_warm_run_with_jobs_prints_the_same(tmp_path: Path) -> None:
    repo = shared_base(tmp_path)
    first = check(repo, "--jobs", "2")
    assert len(entries()) == 3
    assert same_as_uncached(repo, "--jobs", "2").out == first.out


def test_a_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    repo = shared_base(tmp_path)
    check(repo)
    for entry in entries():
        entry.write_bytes(b"not a pickle")
    counts()
    same_as_uncached(repo)
    assert counts() == {"miss": 3, "stored": 3}


# --- what invalidates an entry --------------------------------------------------------------

def test_editing_a_shared_base_checks_both_overlays_again(tmp_path: Path) -> None:
    repo = shared_base(tmp_path)
    check(repo)
    counts()
    write(repo, "base/deployment.yaml", DEPLOYMENT.replace("nginx:1.27", "nginx:latest"))
    run = same_as_uncached(repo)
    # the second overlay reused the base's rendering in the first run: its
    # entry still names the base's files
    assert counts() == {"miss": 2, "stored": 2, "hit": 1}
    assert [d["roots"] for d in run.report["defects"]] == [["overlays/dev", "overlays/prod"]]


def test_creating_a_missing_referenced_path(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml]\n")
    broken = check(tmp_path)
    assert broken.code == 2
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    counts()
    assert same_as_uncached(tmp_path).code == 0
    assert counts() == {"miss": 1, "stored": 1}


def test_a_second_kustomization_file_name_appearing(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    assert check(tmp_path).code == 0
    write(tmp_path, "app/kustomization.yml", "resources: []\n")  # kustomize refuses two
    assert same_as_uncached(tmp_path).code == 2


def test_a_symbolic_link_pointed_elsewhere(tmp_path: Path) -> None:
    repo = tmp_path / "repo"  # the link's targets lie outside the repository
    write(repo, "app/kustomization.yaml", "resources: [current.yaml]\n")
    write(tmp_path, "targets/one.yaml", DEPLOYMENT)
    write(tmp_path, "targets/two.yaml", DEPLOYMENT.replace("nginx:1.27", "nginx:latest"))
    (repo / "app/current.yaml").symlink_to(tmp_path / "targets/one.yaml")
    flags = ("--fail-on", "warning", "--load-restrictor", "LoadRestrictionsNone")
    assert check(repo, *flags).code == 0
    (repo / "app/current.yaml").unlink()
    (repo / "app/current.yaml").symlink_to(tmp_path / "targets/two.yaml")
    assert same_as_uncached(repo, *flags).code == 1


def test_a_file_added_where_a_directory_is_read(tmp_path: Path) -> None:
    # a Flux Kustomization of a directory without a kustomization renders
    # every manifest below it
    write(tmp_path, "clusters/prod/apps.yaml", """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  interval: 10m
  path: ./apps
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
""")
    write(tmp_path, "apps/web.yaml", DEPLOYMENT)
    first = check(tmp_path, "--fail-on", "warning")
    assert first.code == 0 and "flux:flux-system/apps" in [r["root"] for r in first.report["roots"]]
    write(tmp_path, "apps/more/api.yaml", DEPLOYMENT.replace("name: web", "name: api")
          .replace("nginx:1.27", "nginx:latest"))
    assert same_as_uncached(tmp_path, "--fail-on", "warning").code == 1


def test_changing_the_configuration(tmp_path: Path) -> None:
    repo = shared_base(tmp_path)
    write(repo, "base/deployment.yaml", DEPLOYMENT.replace("nginx:1.27", "nginx:latest"))
    assert check(repo).located() == [("base/deployment.yaml", 15, "image-tag")]
    write(repo, ".krmcheck.yaml", "validators:\n  image-tag: false\n")
    assert same_as_uncached(repo).located() == []
    write(repo, ".krmcheck.yaml", "validators:\n  image-tag: {severity: info}\n")
    assert same_as_uncached(repo).located("info") == [("base/deployment.yaml", 15, "image-tag")]


@pytest.mark.parametrize("flags", [("--strict",), ("--kubernetes-version", "1.25")])
def test_changing_validator_flags(tmp_path: Path, flags: tuple[str, ...]) -> None:
    # an unknown field (an error with --strict), an apiVersion Kubernetes 1.26 removed
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT.replace("  replicas: 1\n", "  replicas: 1\n  colour: blue\n"))
    write(tmp_path, "app/hpa.yaml", "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\n"
                                    "metadata:\n  name: web\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, "
                                    "kind: Deployment, name: web}\n  maxReplicas: 2\n")
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml, hpa.yaml]\n")
    plain = check(tmp_path)
    counts()
    flagged = same_as_uncached(tmp_path, *flags)
    assert counts() == {"miss": 1, "stored": 1}
    assert flagged.report != plain.report
    same_as_uncached(tmp_path)
    assert counts() == {"hit": 1}


def test_changing_a_crd_file_of_the_repository(tmp_path: Path) -> None:
    write(tmp_path, "crds/widget.yaml", CRD)
    write(tmp_path, "app/kustomization.yaml", "resources: [widget.yaml]\n")
    write(tmp_path, "app/widget.yaml", widget(size="0"))
    assert check(tmp_path).code == 1
    write(tmp_path, "crds/widget.yaml", CRD.replace("minimum: 1", "minimum: 0"))
    assert same_as_uncached(tmp_path).code == 0


def test_changing_a_crd_another_root_read_first(tmp_path: Path) -> None:
    # one file defines both kinds: the first root's lookup parses it, the
    # second root's lookup finds its kind already parsed and reads nothing
    gadget = CRD.replace("widgets", "gadgets").replace("Widget", "Gadget")
    write(tmp_path, "crds/all.yaml", CRD + "---\n" + gadget)
    write(tmp_path, "a/kustomization.yaml", "resources: [widget.yaml]\n")
    write(tmp_path, "a/widget.yaml", widget())
    write(tmp_path, "b/kustomization.yaml", "resources: [gadget.yaml]\n")
    write(tmp_path, "b/gadget.yaml", widget(size="0").replace("Widget", "Gadget"))
    assert check(tmp_path).located() == [("b/gadget.yaml", 6, "schema")]
    write(tmp_path, "crds/all.yaml", CRD + "---\n" + gadget.replace("minimum: 1", "minimum: 0"))
    assert same_as_uncached(tmp_path).located() == []


def test_a_pulled_schema_catalog_appearing_and_a_first_one_added(tmp_path: Path) -> None:
    # both roots look the kind up; the second reuses the first's lookup
    # within a run, and must still depend on what it read
    repo = tmp_path / "repo"
    for app in ("a", "b"):
        write(repo, f"{app}/kustomization.yaml", "resources: [widget.yaml]\n")
        write(repo, f"{app}/widget.yaml", widget(size="'big'"))
    assert check(repo).code == 0
    catalogs = cache.directory() / "schemas" / "catalogs"
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "string"}}}}}
    write(catalogs, "second/example.com/widget_v1.json", json.dumps(schema))
    counts()
    assert same_as_uncached(repo).code == 0
    assert counts() == {"miss": 2, "stored": 2}
    schema["properties"]["spec"]["properties"]["size"] = {"type": "integer"}
    write(catalogs, "first/example.com/widget_v1.json", json.dumps(schema))  # listed first
    run = same_as_uncached(repo)
    assert run.code == 1
    assert counts() == {"miss": 2, "stored": 2}


# --- what is never stored ----------------------------------------------------------------------

def test_a_root_with_an_external_validator_is_never_stored(tmp_path: Path) -> None:
    write(tmp_path, "tools/pass.py", f"#!{sys.executable}\nimport sys\nsys.stdout.write(sys.stdin.read())\n")
    os.chmod(tmp_path / "tools/pass.py", 0o755)
    write(tmp_path, ".krmcheck.yaml", "external-validators:\n  - exec: tools/pass.py\n")
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    assert check(tmp_path, "--enable-exec").code == 0
    assert counts() == {"miss": 1, "uncacheable": 1}
    assert same_as_uncached(tmp_path, "--enable-exec").code == 0
    assert counts() == {"miss": 1, "uncacheable": 1}
    assert entries() == []


def test_a_check_that_starts_a_process_or_reads_a_changing_file_is_not_stored(tmp_path: Path) -> None:
    renders = render_cache.Renders("run")
    ran = renders.report(Path("a"), "a", None, lambda: _run_a_process(RootReport("a")))
    assert ran == RootReport("a") and counts() == {"miss": 1, "uncacheable": 1}

    target = write(tmp_path, "f.yaml", "one")

    def changing() -> RootReport:
        target.read_text()
        target.write_text("two, longer")
        return RootReport("b")
    renders.report(Path("b"), "b", None, changing)
    assert counts() == {"miss": 1, "uncacheable": 1}
    assert entries() == []


def _run_a_process(report: RootReport) -> RootReport:
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return report


def test_reads_of_a_check_are_journaled(tmp_path: Path) -> None:
    write(tmp_path, "d/x.yaml", "x")
    renders = render_cache.Renders("run")

    def reads() -> RootReport:
        os.listdir(tmp_path / "d")
        (tmp_path / "d/x.yaml").read_text()
        os.path.exists(tmp_path / "missing")
        return RootReport("r")
    renders.report(Path("r"), "r", None, reads)
    assert counts() == {"miss": 1, "stored": 1}
    assert renders.report(Path("r"), "r", None, reads) == RootReport("r")
    assert counts() == {"hit": 1}
    for change in (lambda: write(tmp_path, "d/y.yaml", "y"), lambda: write(tmp_path, "d/x.yaml", "z"),
                   lambda: write(tmp_path, "missing", "now")):
        change()
        renders = render_cache.Renders("run")  # a new run: what files hold is looked at again
        renders.report(Path("r"), "r", None, reads)
        assert counts() == {"miss": 1, "stored": 1}


# --- size --------------------------------------------------------------------------------------

def test_the_least_recently_used_entries_go_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = shared_base(tmp_path)
    check(repo)
    sizes = {p: p.stat().st_size for p in entries()}
    oldest = sorted(sizes)[0]
    for i, p in enumerate(sorted(sizes)):
        os.utime(p, ns=(10**18 + i, 10**18 + i))
    render_cache.evict(sum(sizes.values()) - 1)
    left = entries()
    assert oldest not in left and left
    assert sum(p.stat().st_size for p in left) <= (sum(sizes.values()) - 1) * 9 // 10


# --- the pull-request view --------------------------------------------------------------------

def test_a_second_diff_against_run_reuses_both_sides(tmp_path: Path) -> None:
    from dulwich import porcelain

    repo = shared_base(tmp_path / "repo")
    git = porcelain.init(str(repo))
    porcelain.add(git, paths=[str(p) for p in repo.rglob("*") if ".git" not in p.relative_to(repo).parts])
    porcelain.commit(git, message=b"base", author=b"a <a@b>", committer=b"a <a@b>")
    git.close()
    write(repo, "base/deployment.yaml", DEPLOYMENT.replace("nginx:1.27", "nginx:1.28"))
    first = same_as_uncached(repo, "--diff-against", "HEAD")
    assert counts() == {"miss": 4, "stored": 4}  # two overlays, at HEAD and in the work tree
    assert same_as_uncached(repo, "--diff-against", "HEAD").out == first.out
    assert counts() == {"hit": 4}
    assert "changed Deployment/dev-web" in first.out


def test_the_key_covers_every_file_of_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """A change to a validator (not only to the pipeline) makes every entry stale."""
    from krmcheck import journal

    seen: list[str] = []
    real = journal.REAL_STAT

    def stat(path: str) -> os.stat_result:
        seen.append(Path(path).as_posix())
        return real(path)

    monkeypatch.setattr(journal, "REAL_STAT", stat)
    render_cache._software.__wrapped__()  # (cached per process)
    assert any(p.endswith("krmcheck/validators/schema.py") for p in seen)
    assert any(p.endswith("krmcheck/schemas/field_rules.yaml") for p in seen)


# --- Secret values ---------------------------------------------------------------------------------

LEAKED = "vault-password-4e9b1a"
# A validator of app/'s Kptfile that has read vault/'s Secret file and names its value in a Result.
LEAKING_VALIDATOR = f"""#!{sys.executable}
import sys, yaml
rl = yaml.safe_load(sys.stdin)
rl["results"] = [{{"message": "saw {LEAKED}", "severity": "warning"}}]
yaml.safe_dump(rl, sys.stdout)
"""


def test_no_secret_value_is_stored_and_a_program_still_has_every_value_masked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from krmcheck.pipeline import check as check_stage

    # With --enable-exec every root is rendered once ahead, for the CRDs a plugin could make, and
    # so none is stored; without that look-ahead vault/ is, as it would be were the flag not needed.
    monkeypatch.setattr(check_stage, "crds_rendered_beyond_files", lambda run, roots, settings: settings)
    write(tmp_path, "vault/kustomization.yaml", "resources: [secret.yaml]\n")
    write(tmp_path, "vault/secret.yaml", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n"
                                         f"stringData:\n  password: {LEAKED}\n")
    write(tmp_path, "app/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(tmp_path, "app/deployment.yaml", DEPLOYMENT)
    write(tmp_path, "app/Kptfile", "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"
                                   "pipeline:\n  validators:\n    - exec: leak.py\n")
    write(tmp_path, "app/leak.py", LEAKING_VALIDATOR)
    os.chmod(tmp_path / "app/leak.py", 0o755)
    write(tmp_path, ".krmcheck.yaml", "kptfile-validators: true\n")
    flags = ("--enable-exec",)
    first = check(tmp_path, *flags)
    assert counts() == {"miss": 2, "stored": 1, "uncacheable": 1}  # vault/ stored, app/ ran a program
    assert [e for e in entries() if LEAKED.encode() in e.read_bytes()] == []
    second = same_as_uncached(tmp_path, *flags)
    assert counts()["hit"] == 1  # vault/ answered by the cache, then checked again for its values
    for run in (first, second):
        assert LEAKED not in run.out + json.dumps(run.report)
        assert "saw <redacted>" in [d["message"] for d in run.report["defects"]]


def test_a_finalizer_the_garbage_collector_runs_during_a_check_is_not_read_by_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # an object of an earlier run, in a reference cycle, removes its scratch
    # directory when collected (as a run's download directory does): that
    # may happen in the middle of any later root's check, which must still
    # be stored, having read nothing of it
    import gc
    import shutil
    import tempfile
    import weakref

    from krmcheck.pipeline import root as root_module

    class Scratch:
        def __init__(self) -> None:
            self.me = self
            self.path = tempfile.mkdtemp(dir=tmp_path)
            for name in ("a", "b"):
                write(Path(self.path), f"{name}/x.yaml", "x: 1\n")
            weakref.finalize(self, shutil.rmtree, self.path, True)

    real = root_module.render_root

    def render_with_collection(*args: object, **kwargs: object) -> object:
        Scratch()  # garbage at once, collected only by the collector
        gc.collect()
        return real(*args, **kwargs)

    monkeypatch.setattr(root_module, "render_root", render_with_collection)
    repo = tmp_path / "repo"
    write(repo, "app/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(repo, "app/deployment.yaml", DEPLOYMENT)
    assert check(repo).code == 0
    assert counts() == {"miss": 1, "stored": 1}
    assert list(tmp_path.glob("tmp*")) == []  # every finalizer ran
    assert same_as_uncached(repo).code == 0
    assert counts() == {"hit": 1}


def test_a_root_rendered_before_the_checks_is_still_stored(tmp_path: Path) -> None:
    # with --enable-helm every root is rendered first, for the CRDs a chart
    # may install; the roots' checks reuse those renderings, whose reads
    # count as theirs: a root that runs nothing is stored, and a change to
    # its base is seen
    shared_base(tmp_path)
    assert same_as_uncached(tmp_path, "--enable-helm").code == 0
    assert counts() == {"miss": 3, "stored": 3}
    assert same_as_uncached(tmp_path, "--enable-helm").code == 0
    assert counts() == {"hit": 3}
    write(tmp_path, "base/deployment.yaml", DEPLOYMENT.replace("nginx:1.27", "nginx:latest"))
    changed = same_as_uncached(tmp_path, "--enable-helm", "--fail-on", "warning")
    assert changed.code == 1
    assert counts() == {"miss": 2, "stored": 2, "hit": 1}
