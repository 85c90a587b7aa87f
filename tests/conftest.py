from __future__ import annotations

import collections
from typing import Any

import pytest

_TALLY: dict[str, int] = collections.Counter()
_REAL: dict[str, int] = collections.Counter()


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test its own cache directory (render cache, schemas...), never
    the user's; a test that sets XDG_CACHE_HOME itself overrides this."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture(scope="session")
def conformance_tally() -> dict[str, int]:
    return _TALLY


@pytest.fixture(scope="session")
def realworld_tally() -> dict[str, int]:
    return _REAL


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its tallies to the controller, which prints them."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["krmcheck-tallies"] = {"conformance": dict(_TALLY), "realworld": dict(_REAL)}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    tallies = getattr(node, "workeroutput", {}).get("krmcheck-tallies")
    if tallies:
        _TALLY.update(tallies["conformance"])
        _REAL.update(tallies["realworld"])


def pytest_terminal_summary(terminalreporter: Any) -> None:
    r = _REAL
    if r.get("run"):
        ok = r["byte"] + r["both-error"]
        terminalreporter.write_line(
            f"realworld: {r['run']} roots; byte-identical {r['byte']}, expected errors {r['both-error']}, "
            f"passing {ok} ({100.0 * ok / r['run']:.1f}%); semantic-only {r['sem']}, differ {r['differ']}, "
            f"engine errors {r['engine-error']}, unexpected success {r['engine-ok-ref-error']}")
    t = _TALLY
    if not t.get("run"):
        return
    pct = lambda n, d: f"{100.0 * n / d:.1f}%" if d else "-"  # noqa: E731
    terminalreporter.write_line(
        f"conformance: {t['run']} cases; success cases {t['success_cases']}: "
        f"semantic {t['semantic']} ({pct(t['semantic'], t['success_cases'])}), "
        f"byte-identical {t['bytes']} ({pct(t['bytes'], t['success_cases'])}); "
        f"error cases {t['error_cases']}: {t['error_pass']} ({pct(t['error_pass'], t['error_cases'])}); "
        f"overall {t['semantic'] + t['error_pass']}/{t['run']} "
        f"({pct(t['semantic'] + t['error_pass'], t['run'])})")
