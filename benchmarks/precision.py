"""Precision of krmcheck's errors on whole public repositories.

`benchmarks/precision_labels.yaml` names public repositories at fixed
commits (GitOps repositories, operators with end-to-end tests and samples,
cluster-api templates, repositories of examples) and labels every error
krmcheck reports on them, run at the top of each as a new user would
(`krmcheck .`, no configuration of ours): `true` (a defect the maintainers
would fix: the API server, the controller or kustomize refuses it, or it
silently loses content), `false` (not a defect), or `debatable`, each with
the fact that decided it. Only the labels are kept here, never the
repositories' files.

    python benchmarks/precision.py --repos DIR [--repo OWNER/NAME]
    python benchmarks/precision.py --repos DIR -- --schema-location CATALOG

The second form measures with a checkout of the CRDs-catalog as a schema
location: labels marked ``modes: [catalog]`` are errors only that run gives.
DIR holds a clone of each repository, as DIR/NAME (or DIR/OWNER+NAME), at
its labelled commit (a clone at another commit is skipped, and said so).
For each repository the script runs `krmcheck .` in a separate process and
prints the errors (defects of error severity) by label; then
precision = true / (true + false) over every repository. An error without a
label is a regression until someone labels it, and so is an error labelled
true that is no longer reported (a true defect shown as a warning, where it
lies in a test input or a documentation fragment, is not lost: the warning's
root is one the report lists under `inputs`; a warning for any other reason
is a loss): both make the script exit 1, as does a
precision below 0.9. Labels of errors no longer reported that were false
are counted as fixed.

Repositories come in batches (`batch:`), each added as repositories no one
had run krmcheck on: every error of a batch is labelled before any rule
changes, and that first-sight precision is recorded in the file's
`batches:` list; the script prints each batch's precision now.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

LABELS = Path(__file__).resolve().parent / "precision_labels.yaml"
VERDICTS = ("true", "false", "debatable")
TARGET = 0.9


@dataclass(frozen=True)
class Label:
    repo: str
    path: str
    line: int
    check: str
    message: str  # how the message starts: several errors can share a line
    verdict: str
    why: str
    modes: tuple[str, ...] = ("default", "catalog")  # the runs it is an error of

    def matches(self, error: dict[str, Any]) -> bool:
        return (error["path"], error["line"], error["validator"]) == (self.path, self.line, self.check) \
            and error["message"].startswith(self.message)


def load(path: Path = LABELS) -> tuple[dict[str, dict[str, str]], list[Label]]:
    """(repository -> its entry, labels)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    repos = {r["repo"]: r for r in doc["repositories"]}
    labels = [Label(e["repo"], e["path"], int(e["line"]), e["check"], e["message"], str(e["verdict"]).lower(),
                    e["why"], tuple(e.get("modes", ("default", "catalog")))) for e in doc["errors"]]
    return repos, labels


def checkout(repos_dir: Path, repo: str) -> Path | None:
    owner, name = repo.split("/")
    for candidate in (repos_dir / f"{owner}+{name}", repos_dir / name):
        if (candidate / ".git").exists():
            return candidate
    return None


def head(directory: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True,
                          check=False).stdout.strip()


# Where a true defect may be shown as a warning and not count as lost: a
# test's input, which tests transform before anything is applied, or a
# fragment a documentation page shows (the JSON report's `inputs`).
SHOWN_AS_WARNINGS = ("test-input", "doc-fragment")


def errors_of(directory: Path, extra: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int, float]:
    """The error defects of one `krmcheck .` run, its warning defects
    rendered by a test input or documentation fragment, its exit code and
    wall time."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "krmcheck", ".", "--github", "off", "--no-cache",
                               "--json", str(report), *extra], cwd=directory, capture_output=True,
                              text=True, check=False)
        took = time.perf_counter() - t0
        doc = json.loads(report.read_text()) if report.exists() and report.stat().st_size else {}
    if not doc and "nothing to check" in done.stderr:
        return [], [], done.returncode, took  # a repository of Helm charts only: no root, no error
    if not doc:
        raise SystemExit(f"{directory}: krmcheck wrote no report: {done.stderr.strip()[-400:]}")
    inputs = {i["path"] for i in doc.get("inputs", []) if i["reason"] in SHOWN_AS_WARNINGS}
    return ([d for d in doc["defects"] if d["severity"] == "error"],
            [d for d in doc["defects"] if d["severity"] == "warning" and inputs.intersection(d["roots"])],
            done.returncode, took)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repos", required=True, type=Path, help="directory holding the clones")
    ap.add_argument("--repo", help="only this repository (OWNER/NAME)")
    ap.add_argument("--verbose", action="store_true", help="print every error with its label")
    ap.add_argument("extra", nargs="*", help="more krmcheck arguments (after --)")
    args = ap.parse_args(argv)
    repos, labels = load()
    # with a schema catalog (--schema-location), the errors the catalog's schemas add are labelled too
    mode = "catalog" if any(a.startswith("--schema-location") for a in args.extra) else "default"
    labels = [lab for lab in labels if mode in lab.modes]
    totals = {v: 0 for v in VERDICTS} | {"unlabelled": 0, "lost": 0, "fixed": 0, "warned": 0}
    by_batch: dict[int, dict[str, int]] = {}
    problems: list[str] = []
    print(f"{'repository':44} {'errors':>6} {'true':>5} {'false':>5} {'debat.':>6} {'unlab.':>6} "
          f"{'lost':>5} {'fixed':>5} {'exit':>4} {'s':>6}")
    for repo, entry in repos.items():
        if args.repo and repo != args.repo:
            continue
        directory = checkout(args.repos, repo)
        if directory is None or head(directory) != entry["commit"]:
            print(f"{repo:44} skipped: no clone at {entry['commit'][:12]} under {args.repos}")
            continue
        found, warned, code, took = errors_of(directory, args.extra)
        mine = [lab for lab in labels if lab.repo == repo]
        counts = {v: 0 for v in VERDICTS} | {"unlabelled": 0, "lost": 0, "fixed": 0, "warned": 0}
        matched: set[Label] = set()
        for error in found:
            label = next((lab for lab in mine if lab.matches(error)), None)
            if label is None:
                counts["unlabelled"] += 1
                problems.append(f"unlabelled: {repo} {error['path']}:{error['line']} [{error['validator']}] "
                                f"{error['message'][:160]}")
                continue
            matched.add(label)
            counts[label.verdict] += 1
            if args.verbose:
                print(f"  {label.verdict:9} {error['path']}:{error['line']} [{error['validator']}] {label.why}")
        for label in mine:
            if label not in matched:
                # a true defect may be shown as a warning where it lies in a test input
                if label.verdict == "true" and any(label.matches(w) for w in warned):
                    counts["warned"] += 1
                    continue
                key = "lost" if label.verdict == "true" else "fixed"
                counts[key] += 1
                if key == "lost":
                    problems.append(f"lost: {repo} {label.path}:{label.line} [{label.check}] {label.message}")
        for k in totals:
            totals[k] += counts[k]
        batch = by_batch.setdefault(int(entry.get("batch", 1)), {"true": 0, "false": 0})
        batch["true"] += counts["true"]
        batch["false"] += counts["false"]
        print(f"{repo:44} {len(found):6} {counts['true']:5} {counts['false']:5} {counts['debatable']:6} "
              f"{counts['unlabelled']:6} {counts['lost']:5} {counts['fixed']:5} {code:4} {took:6.1f}")
    judged = totals["true"] + totals["false"]
    precision = totals["true"] / judged if judged else 1.0
    print(f"\nprecision = true / (true + false) = {totals['true']} / {judged} = {precision:.3f} "
          f"({totals['debatable']} debatable, {totals['unlabelled']} unlabelled, "
          f"{totals['lost']} true errors lost, {totals['warned']} true defects shown as warnings in test "
          f"inputs, {totals['fixed']} false errors no longer reported)")
    for number, batch in sorted(by_batch.items()):
        judged_here = batch["true"] + batch["false"]
        print(f"batch {number}: now {batch['true']} / {judged_here} = "
              f"{batch['true'] / judged_here if judged_here else 1.0:.3f}")
    for p in problems:
        print(p)
    return 1 if problems or precision < TARGET else 0


if __name__ == "__main__":
    raise SystemExit(main())
