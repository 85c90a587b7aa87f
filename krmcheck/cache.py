"""Where krmcheck keeps what it downloads between runs: ``$XDG_CACHE_HOME/krmcheck``,
else ``~/.cache/krmcheck`` (function binaries, fetched and pulled schemas)."""

from __future__ import annotations

import os
from pathlib import Path


def directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "krmcheck"
