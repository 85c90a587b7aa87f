"""Run krmcheck as an installed copy runs: from compiled bytecode.

``pip install`` compiles every module it installs, so a user's krmcheck
starts from ``.pyc`` files. A checkout run with PYTHONDONTWRITEBYTECODE (or
from a read-only tree) compiles all of krmcheck again in every process, which
adds a tenth of a second or more to each start. The benchmarks time the
installed case: :func:`installed_env` compiles the package once into a
scratch cache (PYTHONPYCACHEPREFIX, leaving the tree untouched) and returns
the environment that makes each process read it.
"""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "krmcheck"


def installed_env(scratch: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment whose Python processes read krmcheck's bytecode from
    ``scratch`` (compiled here, once)."""
    prefix = str(scratch / "pycache")
    previous = sys.pycache_prefix
    sys.pycache_prefix = prefix  # where compileall writes, as the processes will look
    try:
        compileall.compile_dir(str(PACKAGE), quiet=1)
    finally:
        sys.pycache_prefix = previous
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = prefix
    return env
