"""What a GitRepository's artifact leaves out (``.sourceignore``,
``spec.ignore`` and source-controller's defaults) is not there for the
Kustomizations built from it: fluxcd/pkg sourceignore
``LoadIgnorePatterns`` and artifact/storage ``SourceIgnoreFilter`` (the
defaults only while no pattern is given), go-git's gitignore matching."""

from __future__ import annotations

import pytest

from krmcheck.gitops.sourceignore import SourceIgnore, load, parse
from krmcheck.resource.errors import BuildError
from tests.gitops.conftest import Repo, dedent

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"

SYNC = """
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  url: https://github.com/example/fleet
  ref:
    branch: main
{ignore}---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  path: ./apps
  sourceRef:
    kind: GitRepository
    name: flux-system
"""


def sync(ignore: str = "") -> str:
    return dedent(SYNC).replace("{ignore}", ignore)


def matcher(text: str) -> SourceIgnore:
    from pathlib import Path

    return SourceIgnore(tuple(parse(text)), Path("/"))


@pytest.mark.parametrize("patterns, path, excluded", [
    ("*.md", "docs/README.md", True),
    ("tools/", "tools/lint/config.yaml", True),  # a directory takes its files along
    ("tools/", "apps/tools", False),  # a file of that name is not a directory
    ("/apps/test", "apps/test/x.yaml", True),
    ("/apps/test", "other/apps/test/x.yaml", False),  # anchored at the top
    ("test", "other/apps/test/x.yaml", True),  # a bare name: any component
    ("**/secret.yaml", "a/b/secret.yaml", True),
    ("*.yaml\n!apps/keep.yaml", "apps/keep.yaml", False),  # the last match decides
    ("*.yaml\n!apps/keep.yaml", "apps/other.yaml", True),
    ("# a comment\n\nfoo[0-9].yaml", "foo7.yaml", True),
    ("foo[^0-9].yaml", "foo7.yaml", False),
])
def test_gitignore_matching_as_go_git_does(patterns: str, path: str, excluded: bool) -> None:
    assert (matcher(patterns).excluding(path) is not None) == excluded


def test_defaults_only_while_nothing_is_given(repo: Repo) -> None:
    repo.write("x.yaml", "a: 1\n")
    shown = repo.files.display
    defaults = load(repo.top, shown)
    assert defaults.excluding("apps/logo.png") is not None  # *.png
    assert defaults.excluding(".github/workflows/ci.yaml") is not None
    assert defaults.excluding("apps/.sops.yaml") is not None
    assert defaults.excluding(".git/config") is not None
    repo.write("apps/.sourceignore", "extra.yaml\n")
    given = load(repo.top, shown)
    assert given.excluding("apps/logo.png") is None  # a pattern given: no defaults
    assert given.excluding(".git/config") is not None  # but always version control
    assert given.excluding("apps/extra.yaml") is not None
    assert given.excluding("extra.yaml") is None  # scoped to the directory of its file


def test_a_name_too_long_to_stat_is_judged_as_a_file(repo: Repo) -> None:
    # a kustomization listing a 5000-character name: the build says it is
    # missing; asking whether the source leaves it out must not crash
    repo.write("x.yaml", "a: 1\n")
    given = load(repo.top, repo.files.display)
    assert given.excludes(repo.top / "apps" / ("x" * 5000)) is None
    assert given.excludes(repo.top / "apps" / ("x" * 5000 + ".png")) is not None


def test_ignored_files_are_not_what_the_controller_builds(repo: Repo) -> None:
    """A directory without a kustomization: the generated one lists only
    what the artifact holds; ``spec.ignore`` adds to ``.sourceignore``."""
    repo.write("clusters/prod/sync.yaml", sync("  ignore: |\n    /apps/drafts/\n"))
    repo.write(".sourceignore", "# tool configuration, not for the cluster\napps/lint.yaml\n")
    repo.write("apps/web.yaml", CM.format(name="web"))
    repo.write("apps/lint.yaml", CM.format(name="lint-config"))
    repo.write("apps/drafts/next.yaml", CM.format(name="draft"))
    root = repo.root("flux:flux-system/apps")
    assert [r.name for r in repo.render("flux:flux-system/apps").resources] == ["web"]
    assert repo.top / "apps/lint.yaml" not in root.reads


def test_a_kustomization_that_lists_an_ignored_file_fails_as_in_flux(repo: Repo) -> None:
    repo.write("clusters/prod/sync.yaml", sync())
    repo.write(".sourceignore", "*.local.yaml\n")
    repo.write("apps/kustomization.yaml", "resources:\n- web.yaml\n- web.local.yaml\n")
    repo.write("apps/web.yaml", CM.format(name="web"))
    repo.write("apps/web.local.yaml", CM.format(name="local"))
    with pytest.raises(BuildError) as e:
        repo.render("flux:flux-system/apps")
    assert "apps/web.local.yaml is left out of the source by '*.local.yaml' (.sourceignore:1)" in str(e.value)
    assert e.value.location is not None and (e.value.location.path, e.value.location.line) == \
        ("clusters/prod/sync.yaml", 17)
