"""A long fuzz campaign: the properties of tests/test_fuzz.py with a larger
budget and fresh random examples.

    python benchmarks/fuzz.py --examples 2000 --seed 7

CI runs the same properties with a small fixed budget (60 examples per
property, derandomized). Here each property draws ``--examples`` examples
from ``--seed`` (a new seed finds new inputs); a failure prints the files
that reproduce it and a ``@reproduce_failure`` line. The summary says how
many examples ran and how long they took.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--examples", type=int, default=1000, help="examples per property (default 1000)")
    p.add_argument("--seed", type=int, default=int(time.time()) % 100_000, help="random seed (default: from the clock)")
    p.add_argument("--time-limit", type=float, default=10.0, help="seconds allowed per example (default 10)")
    p.add_argument("-k", dest="select", default="", help="pytest -k expression choosing properties")
    args = p.parse_args()
    env = dict(os.environ, KRMCHECK_FUZZ_CAMPAIGN="1", KRMCHECK_FUZZ_EXAMPLES=str(args.examples),
               KRMCHECK_FUZZ_TIME_LIMIT=str(args.time_limit))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE.parent / "tests" / "test_fuzz.py"),
               f"--hypothesis-seed={args.seed}", "--hypothesis-show-statistics"]
    if args.select:
        command += ["-k", args.select]
    started = time.monotonic()
    print(f"fuzz campaign: {args.examples} examples per property, seed {args.seed}", flush=True)
    code = subprocess.call(command, cwd=HERE.parent, env=env)
    print(f"fuzz campaign: seed {args.seed}, {time.monotonic() - started:.0f} s, "
          f"{'no failure' if code == 0 else 'FAILURES (see above)'}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
