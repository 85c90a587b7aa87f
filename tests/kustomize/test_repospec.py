"""The git URLs of remote bases, taken apart as kustomize's
``api/internal/git/repospec.go`` does: the facts as a table."""

from __future__ import annotations

import pytest

from krmcheck.kustomize.repospec import DEFAULT_TIMEOUT, NotARepo, RepoSpec, parse_repo_spec

PARSED = [
    # text, host, repo path, path in repo, ref
    ("https://github.com/org/repo//base/dev?ref=v1", "https://github.com/", "org/repo", "base/dev", "v1"),
    ("https://github.com/org/repo/base?ref=v1", "https://github.com/", "org/repo", "base", "v1"),
    ("github.com/org/repo/path?ref=main", "https://github.com/", "org/repo", "path", "main"),
    ("gitHub.com/org/repo", "https://github.com/", "org/repo", "", ""),
    ("github.com:org/repo/a/b", "https://github.com/", "org/repo", "a/b", ""),
    ("http://github.com/org/repo/dir", "https://github.com/", "org/repo", "dir", ""),
    ("hTTps://github.com/org/repo.git/dir", "https://github.com/", "org/repo.git", "dir", ""),
    ("git@github.com:org/repo.git//path", "git@github.com:", "org/repo.git", "path", ""),
    ("git@github.com/org/repo/path", "git@github.com:", "org/repo", "path", ""),
    ("org-12345@github.com:org/repo", "org-12345@github.com:", "org/repo", "", ""),
    ("ssh://git@github.com/org/repo//x?ref=v2", "git@github.com:", "org/repo", "x", "v2"),
    ("git::https://gitlab.com/org/repo//deploy?ref=v3", "https://gitlab.com/", "org/repo", "deploy", "v3"),
    ("git::git@github.com:org/repo", "git@github.com:", "org/repo", "", ""),
    ("ssh://git.example.com:7999/org/repo/dir", "ssh://git.example.com:7999/", "org/repo", "dir", ""),
    ("ssh://git@bitbucket.org/company/project.git//path?ref=branch", "ssh://git@bitbucket.org/",
     "company/project.git", "path", "branch"),
    ("git@bitbucket.org:company/project.git//path?ref=branch", "git@bitbucket.org:",
     "company/project.git", "path", "branch"),
    ("git@gitlab2.example.ru:infra/kubernetes/thanos-base.git?ref=v0.1.0", "git@gitlab2.example.ru:",
     "infra/kubernetes/thanos-base.git", "", "v0.1.0"),
    ("https://bitbucket.example.com/scm/project/repository.git", "https://bitbucket.example.com/",
     "scm/project/repository.git", "", ""),
    ("https://dev.azure.com/org/project/_git/repo/sub/dir?version=v1.0.0", "https://dev.azure.com/",
     "org/project/_git/repo", "sub/dir", "v1.0.0"),
    ("https://itfs.example.com/collection/project/_git/somerepos", "https://itfs.example.com/",
     "collection/project/_git/somerepos", "", ""),
    ("https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo/somedir?ref=b",
     "https://git-codecommit.us-east-2.amazonaws.com/", "someorg/somerepo", "somedir", "b"),
    ("https://github.com/org/repo//examples/dev/?ref=v1.0.6", "https://github.com/", "org/repo",
     "examples/dev/", "v1.0.6"),
    ("http://127.0.0.1:8080/repo.git//base?ref=v1", "http://127.0.0.1:8080/", "repo.git", "base", "v1"),
    ("file:///srv/git/repo.git/base?ref=b", "file://", "/srv/git/repo.git", "base", "b"),
    ("file:///srv/git/repo//base", "file://", "/srv/git/repo", "base", ""),
    ("file:///srv/git/repo", "file://", "/srv/git/repo", "", ""),
]


@pytest.mark.parametrize("text,host,repo_path,path,ref", PARSED, ids=[p[0] for p in PARSED])
def test_parse_repo_spec(text: str, host: str, repo_path: str, path: str, ref: str) -> None:
    spec = parse_repo_spec(text)
    assert (spec.host, spec.repo_path, spec.path, spec.ref) == (host, repo_path, path, ref)


NOT_REPOS = [
    ("/tmp", "abs path"),
    ("../../tmp", "failed to parse scheme"),
    ("base", "failed to parse scheme"),
    ("deploy.yaml", "failed to parse scheme"),
    ("src/github.com/org/repo/path", "failed to parse scheme"),
    ("htxxxtp://github.com/", "failed to parse scheme"),
    ("gh:org/repo", "failed to parse scheme"),
    ("github.com!org/repo.git//path", "failed to parse scheme"),
    ("ssh://git.example.com", "failed to parse repo path segment"),
    ("https://host?ref=group/version", "failed to parse repo path segment"),
    ("https://github.com/thisisa404.yaml", "failed to parse repo path segment"),
    ("file:////tmp//path/to/whatever", "failed to parse repo path segment"),
    ("https://github.com/org/repo.git//path/../../exits/repo", "url path exits repo"),
]


@pytest.mark.parametrize("text,reason", NOT_REPOS, ids=[p[0] for p in NOT_REPOS])
def test_not_a_repo(text: str, reason: str) -> None:
    with pytest.raises(NotARepo, match=reason):
        parse_repo_spec(text)


QUERIES = [
    # query, ref, timeout seconds, submodules
    ("", "", DEFAULT_TIMEOUT, True),
    ("ref=v1&version=v2", "v1", DEFAULT_TIMEOUT, True),
    ("version=v2", "v2", DEFAULT_TIMEOUT, True),
    ("ref=group/version", "group/version", DEFAULT_TIMEOUT, True),
    ("timeout=61", "", 61.0, True),
    ("timeout=1m30s", "", 90.0, True),
    ("timeout=500ms", "", 0.5, True),
    ("timeout=0", "", DEFAULT_TIMEOUT, True),
    ("timeout=-5s", "", DEFAULT_TIMEOUT, True),
    ("timeout=%2B2s", "", 2.0, True),
    ("timeout=soon", "", DEFAULT_TIMEOUT, True),
    ("submodules=false", "", DEFAULT_TIMEOUT, False),
    ("submodules=0&ref=x", "x", DEFAULT_TIMEOUT, False),
    ("submodules=maybe", "", DEFAULT_TIMEOUT, True),
    ("ref=v1;x", "", DEFAULT_TIMEOUT, True),  # Go rejects the query: all defaults
]


@pytest.mark.parametrize("query,ref,timeout,submodules", QUERIES, ids=[q[0] or "none" for q in QUERIES])
def test_query(query: str, ref: str, timeout: float, submodules: bool) -> None:
    spec = parse_repo_spec(f"https://github.com/org/repo?{query}")
    assert (spec.ref, spec.timeout, spec.submodules) == (ref, timeout, submodules)


def test_display_names_files_by_url() -> None:
    spec = RepoSpec("raw", "https://github.com/", "org/repo", "base", "v1")
    assert spec.display("base/deploy.yaml") == "https://github.com/org/repo//base/deploy.yaml?ref=v1"
    assert RepoSpec("raw", "git@github.com:", "org/repo", "").display("a.yaml") == \
        "git@github.com:org/repo//a.yaml"
