"""Image references as (name, tag, digest)."""

from __future__ import annotations

import pytest

from krmcheck.resource.image import split


@pytest.mark.parametrize(("ref", "parts"), [
    ("nginx", ("nginx", "", "")),
    ("nginx:1.25", ("nginx", "1.25", "")),
    ("nginx@sha256:abc", ("nginx", "", "sha256:abc")),
    ("registry:5000/team/app", ("registry:5000/team/app", "", "")),  # a port is not a tag
    ("registry:5000/team/app:v1@sha256:abc", ("registry:5000/team/app", "v1", "sha256:abc")),
])
def test_split(ref: str, parts: tuple[str, str, str]) -> None:
    assert split(ref) == parts
