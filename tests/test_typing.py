"""The package type-checks cleanly with mypy (configured in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent


def test_mypy_is_clean() -> None:
    pytest.importorskip("mypy")
    proc = subprocess.run([sys.executable, "-m", "mypy", "krmcheck"], cwd=PROJECT,
                          capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    print(output)
    assert proc.returncode == 0, output
