"""``emit(load(text)) == text`` for text that kustomize itself printed."""

from __future__ import annotations

import lzma

import pytest

from krmcheck.tree.emit import emit_all
from krmcheck.tree.load import load_documents
from tests.conformance import CORPUS
from tests.realworld import CORPUS as REALWORLD

EXPECTED = sorted(CORPUS.glob("*/*/expected.yaml"))
REAL = sorted((REALWORLD / "expected").glob("**/*.yaml.xz"))[::25]


@pytest.mark.skipif(not EXPECTED, reason="../shared/conformance is not present")
@pytest.mark.parametrize("path", EXPECTED, ids=[p.parent.name for p in EXPECTED])
def test_conformance_outputs_round_trip(path) -> None:  # type: ignore[no-untyped-def]
    text = path.read_text()
    assert emit_all(load_documents(text, "expected.yaml")) == text


@pytest.mark.skipif(not REAL, reason="../shared/realworld is not present")
@pytest.mark.parametrize("path", REAL, ids=[str(p.relative_to(REALWORLD)) for p in REAL] if REAL else [])
def test_realworld_outputs_round_trip(path) -> None:  # type: ignore[no-untyped-def]
    with lzma.open(path, "rt", encoding="utf-8") as fh:
        text = fh.read()
    assert emit_all(load_documents(text, "expected.yaml")) == text
