"""The pull-request view on the largest real-world repository.

The kubeflow/manifests copy of ../shared/realworld is committed into a
temporary git repository (with dulwich), then:

1. **timing**: one file is changed and committed, and
   `krmcheck --diff-against HEAD~1` runs twice (cold: REF's tree not yet
   written and nothing cached; warm: a second run), next to what the same
   answer costs with kubectl: `kubectl kustomize` of every affected root at
   both commits (the older one written out in a scratch directory). Printed
   as seconds and ratios.
2. **replay**: 50 commits, each changing one file the roots read (a new
   annotation on a resource, or a changed line of a kustomization). After
   each, the roots `--changed-since HEAD~1` selects are compared with the
   roots whose rendered output (or build error) changed, found by rendering
   every root of both commits. A root whose output changed but that was not
   selected is a miss; the benchmark prints the misses, which must be 0.

Run from the project root:

    python benchmarks/diff_against.py [--commits 50] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dulwich import porcelain

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from krmcheck import discover, git  # noqa: E402
from krmcheck.kustomize.target import BuildOptions, Builder  # noqa: E402
from krmcheck.resource.errors import BuildError  # noqa: E402
from krmcheck.resource.files import Files  # noqa: E402
from krmcheck.tree.emit import emit_all  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "realworld" / "corpus"
REPOSITORY = "kubeflow+manifests"


def commit(top: Path, message: str) -> None:
    porcelain.add(str(top), paths=[str(p) for p in top.rglob("*")
                                   if p.is_file() and ".git" not in p.relative_to(top).parts])
    porcelain.commit(str(top), message=message.encode(), author=b"b <b@b>", committer=b"b <b@b>")


def krmcheck(top: Path, *args: str, cache: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "krmcheck", "--github", "off", *args], cwd=top, env=env,
                          capture_output=True, text=True, check=False)
    return time.perf_counter() - t0, done


def roots_of(top: Path) -> list[Path]:
    with _in(top):
        selection = discover.select((Path("."),), ("all",), None, top.resolve())
        return list(selection.roots)


def render_all(top: Path) -> dict[str, str]:
    """Every root's output, or its error, by repo-relative name."""
    out = {}
    with _in(top):
        files = Files(top.resolve())
        builder = Builder(files, BuildOptions())  # one per commit: it reuses rendered bases, as a run does
        for root in roots_of(top):
            name = files.display(root)
            try:
                resources = builder.load_manifest(root) if root.is_file() else builder.build(root)
                out[name] = emit_all([r.node for r in resources])
            except BuildError as e:
                out[name] = f"error: {e}"
    return out


def selected(top: Path) -> set[str]:
    """What `--changed-since HEAD~1` selects (every kustomization may be a root)."""
    with _in(top):
        files = Files(top.resolve())
        selection = discover.select((Path("."),), ("all",), "HEAD~1", top.resolve())
        return {files.display(r) for r in selection.roots}


class _in:
    def __init__(self, directory: Path) -> None:
        self.directory, self.before = directory, ""

    def __enter__(self) -> None:
        self.before = os.getcwd()
        os.chdir(self.directory)

    def __exit__(self, *exc: object) -> None:
        os.chdir(self.before)


ANNOTATABLE = re.compile(r"^metadata:\n", re.M)


def mutate(top: Path, rng: random.Random, n: int) -> str:
    """Change one file the roots read so that (usually) some output changes."""
    candidates = sorted(p for p in top.rglob("*.yaml") if ".git" not in p.parts)
    while True:
        path = rng.choice(candidates)
        text = path.read_text()
        if path.name == "kustomization.yaml" and "namespace:" in text:
            new = re.sub(r"^namespace: (\S+)", rf"namespace: \g<1>-r{n}", text, count=1, flags=re.M)
        elif ANNOTATABLE.search(text) and "\nkind:" in "\n" + text:
            new = ANNOTATABLE.sub(f"metadata:\n  labels:\n    replay: r{n}\n", text, count=1)
        else:
            continue
        if new != text:
            path.write_text(new)
            return str(path.relative_to(top))


def timing(top: Path, scratch: Path) -> None:
    target = top / "applications/centraldashboard/upstream/base/deployment.yaml"
    target.write_text(target.read_text().replace("replicas: 1", "replicas: 2", 1) + "\n")
    target.write_text(re.sub(r"(image: \S+?)(\n)", r"\1-changed\2", target.read_text(), count=1))
    commit(top, "one change")
    cache = scratch / "cache"
    cold, done = krmcheck(top, "--diff-against", "HEAD~1", cache=cache)
    warm, done = krmcheck(top, "--diff-against", "HEAD~1", cache=cache)
    affected = re.findall(r"^  (\S+): ", done.stdout.split("changes against HEAD~1", 1)[-1], re.M)
    base = scratch / "base"
    git.export_tree(top, git.revision(top, "HEAD~1")[1], base)
    t0 = time.perf_counter()
    for root in affected:
        for side in (top, base):
            subprocess.run(["kubectl", "kustomize", str(side / root)], capture_output=True, check=False)
    kubectl = time.perf_counter() - t0
    print(f"timing: {len(affected)} affected root(s) of one changed file")
    print(f"  krmcheck --diff-against HEAD~1  cold {cold:6.2f} s   warm {warm:6.2f} s (target: warm < 2 s)")
    print(f"  kubectl kustomize, both sides   {kubectl:6.2f} s (renders only: no validation, no diff, no lines)")
    print(f"  ratio kubectl / krmcheck warm   {kubectl / warm:6.2f}x")


def replay(top: Path, commits: int, seed: int) -> int:
    rng = random.Random(seed)
    before = render_all(top)
    misses = extra = changed_total = 0
    for n in range(commits):
        path = mutate(top, rng, n)
        commit(top, f"replay {n}: {path}")
        after = render_all(top)
        changed = {r for r in set(before) | set(after) if before.get(r) != after.get(r)}
        chosen = selected(top)
        missed = sorted(changed - chosen)
        misses += len(missed)
        extra += len(chosen - changed)
        changed_total += len(changed)
        for m in missed:
            print(f"  MISS commit {n} ({path}): {m} changed but was not selected")
        before = after
    print(f"replay: {commits} commits, {changed_total} root outputs changed, misses {misses}, "
          f"selected without a change {extra}")
    return misses


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--commits", type=int, default=50)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    source = CORPUS / REPOSITORY
    if not source.is_dir():
        print(f"no {source}: the real-world corpus is not here")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        top = scratch / "repo"
        shutil.copytree(source, top)
        porcelain.init(str(top))
        commit(top, "corpus")
        timing(top, scratch)
        misses = replay(top, a.commits, a.seed)
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
