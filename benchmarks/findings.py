"""What `krmcheck` reports on each repository of the real-world corpus.

For every repository in ../shared/realworld/corpus, one `krmcheck .` run (a
separate process, as CI would run it) with a JSON report; prints per
repository the roots checked, the findings before grouping (one per root
that renders a defect), the defects after grouping, the defects by
severity, suppressed findings, roots that failed to build, the exit code and
the wall time. Run from the project root:

    python benchmarks/findings.py [--repo OWNER+NAME] [-- EXTRA KRMCHECK ARGS]
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
COLUMNS = ("repository", "roots", "findings", "defects", "errors", "warnings", "infos",
           "suppressed", "failed", "exit", "s")


def check(repo: Path, extra: list[str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "krmcheck", ".", "--github", "off",
                               "--json", str(report), *extra],
                              cwd=repo, capture_output=True, text=True, check=False)
        took = time.perf_counter() - t0
        doc = json.loads(report.read_text()) if report.exists() and report.stat().st_size else {}
    summary = doc.get("summary", {})
    failed = sum(1 for r in doc.get("roots", []) if r.get("buildFailed"))
    return {"repository": repo.name, "roots": summary.get("roots", 0),
            "findings": summary.get("findings", 0), "defects": summary.get("defects", 0),
            "errors": summary.get("errors", 0), "warnings": summary.get("warnings", 0),
            "infos": summary.get("infos", 0), "suppressed": summary.get("suppressed", 0),
            "failed": failed, "exit": done.returncode, "s": f"{took:.1f}",
            "stderr": done.stderr.strip().splitlines()[-1:] if done.returncode == 2 and not doc else []}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", help="only this repository (OWNER+NAME, as in the corpus)")
    ap.add_argument("extra", nargs="*", help="more krmcheck arguments (after --)")
    args = ap.parse_args()
    if not CORPUS.is_dir():
        print(f"no corpus at {CORPUS}")
        return 1
    repos = sorted(p for p in CORPUS.iterdir() if p.is_dir() and (not args.repo or p.name == args.repo))
    rows = [check(repo, args.extra) for repo in repos]
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in COLUMNS}
    print("  ".join(c.ljust(widths[c]) for c in COLUMNS))
    for row in rows:
        print("  ".join(str(row[c]).ljust(widths[c]) for c in COLUMNS))
        for line in row["stderr"]:  # type: ignore[attr-defined]
            print(f"    {line}")
    totals = {c: sum(int(r[c]) for r in rows) for c in COLUMNS[1:-2]}  # type: ignore[call-overload]
    print("  ".join(str(totals.get(c, "total" if c == "repository" else "")).ljust(widths[c]) for c in COLUMNS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
