"""Check every listed root of the real-world corpus, beside kubectl.

For each repository of ../shared/realworld (its roots as realworld.list
lists them), one `krmcheck --no-cache --roots R1 --roots R2 ...` process
renders and validates all of them, as a CI job would; `kubectl kustomize`
runs once per root (render only). Roots with extra flags run in a process of
their own with those flags. Both run in this invocation; per repository and
in total it prints both times and the ratio (kubectl / krmcheck, higher is
better for krmcheck), then a second krmcheck run with a warm render cache.
krmcheck runs from compiled bytecode, as an installed copy does
(benchmarks/bytecode.py).
Run from the project root:

    python benchmarks/corpus_check.py [--repo OWNER/NAME] [--no-kubectl]
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bytecode import installed_env  # noqa: E402
from tests import realworld  # noqa: E402


def krmcheck(repo_dir: Path, roots: list[realworld.Root], cache: Path, installed: dict[str, str],
             *extra: str) -> float:
    by_flags: dict[tuple[str, ...], list[str]] = collections.defaultdict(list)
    for r in roots:
        by_flags[r.flags].append(r.path)
    env = dict(installed, XDG_CACHE_HOME=str(cache))
    t0 = time.perf_counter()
    for flags, paths in by_flags.items():
        args = [a for p in paths for a in ("--roots", p)]
        subprocess.run([sys.executable, "-m", "krmcheck", "--github", "off", *extra, *flags, *args],
                       cwd=repo_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def _render_benchmark() -> Any:
    """benchmarks/realworld.py, for its kubectl loop (one process per root)."""
    spec = importlib.util.spec_from_file_location("render_benchmark", Path(__file__).with_name("realworld.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kubectl = _render_benchmark().run_kubectl


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", help="only this repository (OWNER/NAME)")
    ap.add_argument("--no-kubectl", action="store_true")
    a = ap.parse_args()
    roots = [r for r in realworld.roots() if not a.repo or r.repo == a.repo]
    if not roots:
        print("no real-world corpus here")
        return 0
    binary = shutil.which("kubectl") if not a.no_kubectl else None
    by_repo: dict[str, list[realworld.Root]] = collections.defaultdict(list)
    for r in roots:
        by_repo[r.repo].append(r)
    totals = [0.0, 0.0, 0.0]
    print(f"{'repository':45} {'roots':>5} {'kubectl':>8} {'krmcheck':>9} {'ratio':>6} {'warm':>6}")
    with tempfile.TemporaryDirectory() as scratch:
        installed = installed_env(Path(scratch))
        for repo, listed in sorted(by_repo.items()):
            cache = Path(scratch) / repo.replace("/", "+")
            cold = krmcheck(listed[0].repo_dir, listed, cache, installed, "--no-cache")
            krmcheck(listed[0].repo_dir, listed, cache, installed)  # fills the render cache
            warm = krmcheck(listed[0].repo_dir, listed, cache, installed)
            ref = kubectl(listed, binary) if binary else 0.0
            totals[0] += ref
            totals[1] += cold
            totals[2] += warm
            ratio = f"{ref / cold:5.1f}x" if ref else "-"
            print(f"{repo:45} {len(listed):5} {ref:7.2f}s {cold:8.2f}s {ratio:>6} {warm:5.2f}s")
    ratio = f"{totals[0] / totals[1]:5.1f}x" if totals[0] else "-"
    print(f"{'total':45} {len(roots):5} {totals[0]:7.2f}s {totals[1]:8.2f}s {ratio:>6} {totals[2]:5.2f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
