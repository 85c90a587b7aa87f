"""Is a controller object's repository this one?"""

from __future__ import annotations

import pytest

from krmcheck.gitops.source import normalise, same_repository


@pytest.mark.parametrize("url", [
    "https://github.com/Org/Repo",
    "https://github.com/org/repo.git",
    "https://github.com/org/repo/",
    "ssh://git@github.com/org/repo",
    "ssh://git@github.com:22/org/repo.git",
    "git@github.com:org/repo.git",
    "http://user@github.com/org/repo",
])
def test_spellings_of_one_repository(url: str) -> None:
    assert normalise(url) == "github.com/org/repo"


def test_another_repository() -> None:
    assert not same_repository("https://github.com/org/other", frozenset({"github.com/org/repo"}))
