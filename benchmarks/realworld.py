"""Render every root of the real-world corpus with krmcheck and with kubectl.

krmcheck renders all roots in one process (one Builder per repository, so a
base shared by many overlays is rendered once); ``kubectl kustomize`` runs
once per root, as a CI job would run it. Both run in the same invocation of
this script; it prints both totals, the ratio and krmcheck's pass counts.
Run from the project root, with the corpus at ../shared/realworld:

    python benchmarks/realworld.py [--repo OWNER/NAME] [--no-kubectl]
"""

from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import realworld  # noqa: E402


def run_krmcheck(roots: list[realworld.Root]) -> tuple[float, collections.Counter]:
    counts: collections.Counter = collections.Counter()
    t0 = time.perf_counter()
    for root in roots:
        status, _ = realworld.check(root)
        counts[status] += 1
    return time.perf_counter() - t0, counts


def run_kubectl(roots: list[realworld.Root], kubectl: str) -> float:
    t0 = time.perf_counter()
    for root in roots:
        subprocess.run([kubectl, "kustomize", *root.flags, str(root.directory)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", help="only this repository")
    ap.add_argument("--no-kubectl", action="store_true")
    args = ap.parse_args()
    roots = [r for r in realworld.roots() if not args.repo or r.repo == args.repo]
    if not roots:
        print("no roots: is ../shared/realworld present?")
        return 1
    own, counts = run_krmcheck(roots)
    ok = counts["byte"] + counts["both-error"]
    print(f"roots: {len(roots)}; krmcheck passes {ok} ({100.0 * ok / len(roots):.1f}%): {dict(counts)}")
    print(f"krmcheck, one process: {own:8.1f} s")
    kubectl = shutil.which("kubectl")
    if kubectl and not args.no_kubectl:
        ref = run_kubectl(roots, kubectl)
        print(f"kubectl, per root:     {ref:8.1f} s")
        print(f"ratio krmcheck/kubectl: {own / ref:.2f} (one warm krmcheck process for every root, "
              f"against one kubectl process per root; not a per-invocation comparison)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
