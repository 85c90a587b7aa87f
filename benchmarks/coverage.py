"""How many rendered resources of the real-world corpus a schema checks.

For every repository in ../shared/realworld/corpus, one `krmcheck .` run with
a JSON report; prints per repository the rendered resources, how many were
validated and by which source (built-in, repository CRD, schema location,
cache), and the share. With `--schema-location DIR` (for example a checkout
of the datreeio CRDs-catalog, kept outside this repository) the same figures
with that location added. Run from the project root:

    python benchmarks/coverage.py [--schema-location LOCATION]... [--repo OWNER+NAME]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "realworld" / "corpus"
SOURCES = ("built-in", "repository", "location", "cache")


def coverage(repo: Path, extra: list[str]) -> tuple[int, dict[str, int], float]:
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "krmcheck", ".", "--github", "off", "--json", str(report),
                        *extra], cwd=repo, capture_output=True, check=False)
        took = time.perf_counter() - t0
        doc = json.loads(report.read_text()) if report.exists() and report.stat().st_size else {}
    total = sum(len(r["resources"]) for r in doc.get("roots", []))
    by_source = {s: sum(r.get("schemas", {}).get("bySource", {}).get(s, 0) for r in doc.get("roots", []))
                 for s in SOURCES}
    return total, by_source, took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--schema-location", action="append", default=[],
                    help="also run with these schema locations (repeatable)")
    ap.add_argument("--repo", help="only this repository (OWNER+NAME)")
    args = ap.parse_args()
    repos = sorted(p for p in CORPUS.iterdir() if p.is_dir() and (not args.repo or p.name == args.repo))
    runs = [("repository CRDs", [])]
    if args.schema_location:
        extra = [a for loc in args.schema_location for a in ("--schema-location", loc if "{{" in loc
                                                             else str(Path(loc).resolve()))]
        runs.append(("+ schema locations", extra))
    for label, extra in runs:
        print(f"== {label}")
        print(f"{'repository':45} {'resources':>9} " + " ".join(f"{s:>10}" for s in SOURCES) + "  validated      s")
        grand_total, grand_checked = 0, 0
        for repo in repos:
            total, by_source, took = coverage(repo, extra)
            checked = sum(by_source.values())
            grand_total, grand_checked = grand_total + total, grand_checked + checked
            share = f"{100.0 * checked / total:5.1f}%" if total else "    -"
            print(f"{repo.name:45} {total:9} " + " ".join(f"{by_source[s]:10}" for s in SOURCES)
                  + f"  {share:>9} {took:6.1f}")
        print(f"{'total':45} {grand_total:9} {'':43}  {100.0 * grand_checked / max(grand_total, 1):8.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
