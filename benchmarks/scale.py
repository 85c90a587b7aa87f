"""How krmcheck's build scales with resource count, beside kubectl kustomize.

Builds an overlay over N Deployments (namePrefix, namespace, labels, images,
a JSON 6902 patch, a generated ConfigMap that every Deployment references),
then times ``krmcheck build`` and ``kubectl kustomize`` on it in the same
run, for N = 250, 500, 1000, 2000, and prints the ratios and krmcheck's
time(2000) / time(1000); ``x faster`` is kubectl's time over krmcheck's.
``libyaml s`` is a Python process that loads the
base's documents with PyYAML's libyaml loader and dumps them with its libyaml
dumper (no provenance, no transformation): the floor a Python build of the same
documents stands on; ``x libyaml`` is krmcheck's build time over it. ``check s`` is a whole check of the overlay (render,
schema and field rules, the other validators, reports); ``check - build``
is what validating adds.

First it times start-up: ``krmcheck --no-cache .``, ``krmcheck .`` with a
warm render cache and ``krmcheck build`` on a repository of one
kustomization holding one ConfigMap, beside ``kubectl kustomize`` on the
same kustomization, as a ratio: what a pre-commit hook or a one-root CI job
waits for. Run from the project root:

    python benchmarks/scale.py [--runs 3] [--sizes 250,500,1000,2000] [--startup-runs 10]

Whole-process wall times (median of the runs); kubectl is skipped when it is
not installed. Not a test: timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bytecode import installed_env  # noqa: E402

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{i}
  labels:
    app: app-{i}
spec:
  replicas: 1
  selector:
    matchLabels:
      app: app-{i}
  template:
    metadata:
      labels:
        app: app-{i}
    spec:
      containers:
      - name: main
        image: registry.example.com/team/app:1.0.{i}
        ports:
        - containerPort: 8080
        envFrom:
        - configMapRef:
            name: shared-config
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
"""

BASE_KUSTOMIZATION = """\
resources:
- deployments.yaml
configMapGenerator:
- name: shared-config
  literals:
  - LOG_LEVEL=info
  - REGION=eu-west-1
"""

OVERLAY_KUSTOMIZATION = """\
resources:
- ../base
namePrefix: prod-
namespace: production
labels:
- pairs:
    env: production
    team: platform
  includeSelectors: false
commonAnnotations:
  owner: platform-team
images:
- name: registry.example.com/team/app
  newName: registry.example.com/team/app-hardened
patches:
- target:
    kind: Deployment
  patch: |-
    - op: replace
      path: /spec/replicas
      value: 3
"""


def make_tree(root: Path, n: int) -> Path:
    base, overlay = root / "base", root / "overlay"
    base.mkdir(parents=True)
    overlay.mkdir()
    (base / "deployments.yaml").write_text("---\n".join(DEPLOYMENT.format(i=i) for i in range(n)))
    (base / "kustomization.yaml").write_text(BASE_KUSTOMIZATION)
    (overlay / "kustomization.yaml").write_text(OVERLAY_KUSTOMIZATION)
    return overlay


# krmcheck's environment: compiled bytecode, as an installed copy has it
INSTALLED: dict[str, str] = {}

LIBYAML = """\
import sys, yaml
with open(sys.argv[1]) as f:
    docs = list(yaml.load_all(f.read(), Loader=yaml.CSafeLoader))
sys.stdout.write(yaml.dump_all(docs, Dumper=yaml.CSafeDumper))
"""


def time_command(cmd: list[str], runs: int, cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> float:
    env = env or INSTALLED or None
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=cwd, env=env)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  LOG_LEVEL: info
"""


def make_one_root(top: Path) -> None:
    """A repository whose one root is a kustomization of one ConfigMap."""
    (top / ".git").mkdir(parents=True)
    (top / "app").mkdir()
    (top / "app" / "kustomization.yaml").write_text("resources:\n- configmap.yaml\n")
    (top / "app" / "configmap.yaml").write_text(CONFIGMAP)


def startup(runs: int, kubectl: str | None) -> None:
    """Whole-process times on a one-root repository, beside kubectl kustomize."""
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp) / "repo"
        make_one_root(top)
        env = dict(installed_env(Path(tmp)), XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        krmcheck = [sys.executable, "-m", "krmcheck", "--github", "off"]
        kubectl_s = time_command([kubectl, "kustomize", "app"], runs, top, env) if kubectl else float("nan")
        subprocess.run(krmcheck + ["."], check=True, stdout=subprocess.DEVNULL, cwd=top, env=env)  # warms the cache
        print(f"start-up on one root (median of {runs}; krmcheck compiled, as installed)")
        print(f"{'command':<28} {'krmcheck s':>11} {'kubectl s':>10} {'ratio':>7}")
        for name, cmd in (("check --no-cache", krmcheck + ["--no-cache", "."]),
                          ("check, warm render cache", krmcheck + ["."]),
                          ("build app", [sys.executable, "-m", "krmcheck", "build", "app"])):
            s = time_command(cmd, runs, top, env)
            print(f"{name:<28} {s:>11.3f} {kubectl_s:>10.3f} {s / kubectl_s:>7.1f}")
        print()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="250,500,1000,2000", help="resource counts; empty: none")
    ap.add_argument("--startup-runs", type=int, default=10, help="runs of the start-up table; 0: skip it")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    kubectl = shutil.which("kubectl")
    if args.startup_runs > 0:
        startup(args.startup_runs, kubectl)
    if not sizes:
        return 0
    krmcheck = [sys.executable, "-m", "krmcheck", "build"]
    check = [sys.executable, "-m", "krmcheck", "--github", "off", "--fail-on", "never", "--no-cache"]
    own: dict[int, float] = {}
    print(f"{'N':>6} {'krmcheck s':>11} {'kubectl s':>10} {'x faster':>9} {'check s':>8} {'check - build':>14}"
          f" {'libyaml s':>10} {'x libyaml':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        INSTALLED.update(installed_env(Path(tmp)))
        for n in sizes:
            overlay = make_tree(Path(tmp) / str(n), n)
            a = own[n] = time_command(krmcheck + [str(overlay)], args.runs)
            b = time_command([kubectl, "kustomize", str(overlay)], args.runs) if kubectl else float("nan")
            c = time_command(check + ["--roots", str(overlay), str(overlay)], args.runs)
            y = time_command([sys.executable, "-c", LIBYAML, str(overlay.parent / "base" / "deployments.yaml")],
                             args.runs)
            print(f"{n:>6} {a:>11.2f} {b:>10.2f} {b / a:>9.1f} {c:>8.2f} {c - a:>14.2f} {y:>10.2f} {a / y:>10.2f}")
    if 1000 in own and 2000 in own:
        print(f"krmcheck time(2000)/time(1000) = {own[2000] / own[1000]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
