"""What is applied to a cluster: the files discovery sets aside.

A YAML file with top-level ``apiVersion`` and ``kind`` that no kustomization
reads is a plain manifest, checked as the objects ``kubectl apply`` would
create. Some such files are never applied, and judging them as cluster
objects only produces errors nobody would fix. Three documented rules set
them aside, each with a reason id:

- ``tool-config``: every object in the file is of a kind that configures a
  tool rather than a cluster (``tool_configs.yaml``: kind and k3d cluster
  configurations, kubeconfigs, kubeadm and kubelet configurations,
  clusterctl's ``metadata.yaml``, oc-mirror's ImageSetConfiguration...);
- ``test-framework``: the file is in a directory of a chainsaw or kuttl
  test, known by its marker files (``chainsaw-test.yaml``, a kuttl
  ``TestSuite``'s ``testDirs``, a ``kuttl.dev`` step, or step files named
  ``NN-assert*.yaml`` / ``NN-error*.yaml``): the framework applies its steps
  as patches onto live objects and matches its asserts against them, so
  their objects are partial by design. Go tests' inputs count too: a
  ``testdata`` or ``_testdata`` directory (which Go's tools leave alone),
  a kyverno CLI test (``kyverno-test.yaml``, or a ``cli.kyverno.io``
  ``Test``), and, under a
  ``test``/``tests``/``e2e``/``testing`` directory, a file named as a
  negative case (``invalid``, ``malformed``, ``broken``, ``bad``, ``wrong``,
  ``xfail`` as a word of its name);
- ``patch-file``: the file holds strategic-merge patch directives
  (``$patch``, ``$setElementOrder``, ``$retainKeys``,
  ``$deleteFromPrimitiveList``), or its name or directory says it is a patch
  (``*patch*.yaml``, a ``patches/`` directory): a partial object meant for a
  kustomization, which none reads at present;
- ``template``: the file holds ``{{ ... }}`` expressions and is not YAML as
  it stands (``replicas: {{replicas}}``): a Go, Jinja or mustache template
  outside a Helm chart, which its tool renders first.

Discovery counts what it set aside per reason, and the run says so in one
note per reason; ``--roots all`` and ``.krmcheck.yaml``'s ``not-applied:``
bring files back.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

from krmcheck.tree.load import FAST_LOADER

TOOL_CONFIG = "tool-config"
TEST_FRAMEWORK = "test-framework"
PATCH_FILE = "patch-file"
TEMPLATE = "template"
REASONS = (TOOL_CONFIG, TEST_FRAMEWORK, PATCH_FILE, TEMPLATE)

# What each reason's note says after the count.
SAID = {
    TOOL_CONFIG: "their objects configure a tool (kind, kubeconfig, kubeadm...), not a cluster",
    TEST_FRAMEWORK: ("test inputs: chainsaw and kuttl tests apply their steps onto live objects "
                     "and match their asserts against them; Go's testdata and negative cases"),
    PATCH_FILE: "patches (by name or $patch directives) that no kustomization reads",
    TEMPLATE: "templates ({{ ... }} expressions) that are not YAML until their tool renders them",
}


@dataclass(frozen=True)
class SetAside:
    """A file discovery did not take as a manifest, and why."""

    path: Path
    reason: str  # one of REASONS
    why: str  # the rule's detail: the tool, the test's marker, the patch sign


# --- tool configurations -------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def tool_kinds() -> dict[str, tuple[frozenset[str], str]]:
    """group -> (kinds, or {"*"}; the tool), from ``tool_configs.yaml``."""
    text = resources.files("krmcheck").joinpath("tool_configs.yaml").read_text(encoding="utf-8")
    return {row["group"]: (frozenset(row["kinds"]), row["tool"])
            for row in yaml.load(text, Loader=FAST_LOADER)}


def tool_of(api_version: str, kind: str) -> str | None:
    """The tool an object of this apiVersion and kind configures, if any."""
    found = tool_kinds().get(api_version.rpartition("/")[0])  # "v1" is the core group, ""
    if found is None or not ("*" in found[0] or kind in found[0]):
        return None
    return found[1]


_DOCUMENT = re.compile(r"^---", re.MULTILINE)
API_VERSION = re.compile(r"^apiVersion:[ \t]*[\"']?([^\s\"'#]+)", re.MULTILINE)  # (discovery reads it too)
_KIND = re.compile(r"^kind:[ \t]*[\"']?([^\s\"'#]+)", re.MULTILINE)


def _tool_config(text: str) -> str | None:
    """The tool, when every object of the text configures one."""
    tools = []
    for document in _DOCUMENT.split(text):
        version, kind = API_VERSION.search(document), _KIND.search(document)
        if version is None and kind is None:
            continue  # an empty document, or a comment
        tool = tool_of(version.group(1), kind.group(1)) if version and kind else None
        if tool is None:
            return None
        tools.append(tool)
    return tools[0] if tools else None


# --- patches ---------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"^\s*(-\s+)?[\"']?\$(patch|setElementOrder/|retainKeys|deleteFromPrimitiveList/)",
                        re.MULTILINE)
_PATCH_DIRS = frozenset({"patch", "patches"})


def _patch_sign(path: Path, text: str, top: Path) -> str | None:
    found = _DIRECTIVE.search(text)
    if found is not None:
        return f"holds a ${found.group(2).rstrip('/')} directive"
    if "patch" in path.stem.lower():
        return "named as a patch"
    for parent in path.parents:
        if parent == top or top not in parent.parents:
            break
        if parent.name.lower() in _PATCH_DIRS:
            return f"in a {parent.name}/ directory"
    return None


# --- test frameworks ---------------------------------------------------------------

_CHAINSAW_FILES = frozenset({"chainsaw-test.yaml", "chainsaw-test.yml", "chainsaw-test.json"})
_KYVERNO_FILES = frozenset({"kyverno-test.yaml", "kyverno-test.yml"})  # what `kyverno test` looks for
_STEP = re.compile(r"^\d+-(assert|errors?)([-._].*)?\.ya?ml\Z")
_FRAMEWORK = re.compile(r"^apiVersion:[ \t]*[\"']?(chainsaw\.kyverno\.io|kuttl\.dev|cli\.kyverno\.io)/",
                        re.MULTILINE)
_FRAMEWORK_NAMES = {"chainsaw.kyverno.io": "chainsaw", "kuttl.dev": "kuttl", "cli.kyverno.io": "kyverno CLI"}
# Go's tools leave testdata/ (and _-prefixed directories) alone: they hold inputs of tests. In a test
# directory, a file named as a negative case is broken on purpose.
_TEST_DIR_NAMES = frozenset({"test", "tests", "e2e", "testing"})
_NEGATIVE = re.compile(r"(^|[-_.])(invalid|malformed|broken|bad|wrong|xfail)([-_.]|$)", re.IGNORECASE)
_TEST_DIRS = re.compile(r"^testDirs:[ \t]*\n((?:[ \t]*-.*\n?)+)", re.MULTILINE)


class TestDirectories:
    """Directories of chainsaw and kuttl tests: each maps to its marker."""

    def __init__(self) -> None:
        self.marked: dict[Path, str] = {}

    def learn_names(self, directory: Path, names: Iterable[str]) -> None:
        """Markers in file names: chainsaw's and the kyverno CLI's test files,
        numbered assert and error steps."""
        for name in names:
            if name in _CHAINSAW_FILES:
                self.marked.setdefault(directory, f"a chainsaw test ({name})")
            elif name in _KYVERNO_FILES:
                self.marked.setdefault(directory, f"a kyverno CLI test ({name})")
            elif _STEP.match(name):
                self.marked.setdefault(directory, f"a test with step files ({name})")

    def learn_text(self, path: Path, text: str) -> None:
        """Markers in a framework's own files: a chainsaw or kyverno CLI
        ``Test`` or a kuttl ``TestStep``/``TestAssert`` marks its directory, a
        kuttl ``TestSuite`` its ``testDirs``."""
        framework = _FRAMEWORK.search(text)
        if framework is None:
            return
        kinds = set(_KIND.findall(text))
        if kinds & {"Test", "TestStep", "TestAssert"}:
            self.marked.setdefault(path.parent, f"a {_FRAMEWORK_NAMES[framework.group(1)]} test ({path.name})")
        if "TestSuite" in kinds:
            listed = _TEST_DIRS.search(text)
            for line in listed.group(1).splitlines() if listed else ():
                rel = line.strip().lstrip("-").strip().strip("\"'")
                if rel:
                    self.marked.setdefault(Path(os.path.normpath(path.parent / rel)),
                                           f"a kuttl test directory (testDirs of {path.name})")

    def marker(self, path: Path, top: Path) -> str | None:
        """What marks ``path``'s directory, or one above it, as a test's: a
        marker learned, a Go ``testdata`` directory, or, in a test directory,
        a file named as a negative case."""
        below = [p for p in path.parents if p == top or top in p.parents]
        for parent in below:
            found = self.marked.get(parent)
            if found:
                return found
        for parent in below:
            if parent.name in ("testdata", "_testdata"):
                return f"a Go test data directory ({parent.name}/)"
        if _NEGATIVE.search(path.stem) and any(p.name.lower() in _TEST_DIR_NAMES for p in below):
            return "a test input named as a negative case"
        return None


# --- the decision -------------------------------------------------------------------

class Sorter:
    """Decides whether would-be manifests are set aside. Directories are
    learned first (:meth:`learn_names` while walking, :meth:`learn_text` for
    each candidate), then each file is judged (:meth:`set_aside`)."""

    def __init__(self, top: Path, reasons: Iterable[str] = REASONS) -> None:
        self.top = top
        self.reasons = frozenset(reasons)
        self.tests = TestDirectories()
        self.learned: set[Path] = set()  # directories whose markers are known
        self.found: list[SetAside] = []  # what was set aside so far

    def learn_names(self, directory: Path, names: Iterable[str]) -> None:
        if TEST_FRAMEWORK in self.reasons:
            self.tests.learn_names(directory, names)

    def learn_text(self, path: Path, text: str) -> None:
        if TEST_FRAMEWORK in self.reasons:
            self.tests.learn_text(path, text)

    def set_aside(self, path: Path, text: str) -> SetAside | None:
        if TOOL_CONFIG in self.reasons:
            tool = _tool_config(text)
            if tool is not None:
                return SetAside(path, TOOL_CONFIG, tool)
        if TEST_FRAMEWORK in self.reasons:
            marker = self.tests.marker(path, self.top)
            if marker is not None:
                return SetAside(path, TEST_FRAMEWORK, marker)
        if PATCH_FILE in self.reasons:
            sign = _patch_sign(path, text, self.top)
            if sign is not None:
                return SetAside(path, PATCH_FILE, sign)
        if TEMPLATE in self.reasons and "{{" in text and not _loads(text):
            return SetAside(path, TEMPLATE, "{{ ... }} expressions; not YAML as written")
        return None


def _loads(text: str) -> bool:
    """Whether ``text`` is YAML (the build says what is wrong when it is not)."""
    try:
        for _ in yaml.load_all(text, Loader=FAST_LOADER):
            pass
    except (yaml.YAMLError, RecursionError, ValueError):
        return False
    return True


def summary(found: Iterable[SetAside]) -> list[tuple[str, list[SetAside], str]]:
    """Per reason, in REASONS order: (reason, its files sorted, one line saying so)."""
    by_reason: dict[str, list[SetAside]] = {}
    for s in found:
        by_reason.setdefault(s.reason, []).append(s)
    out = []
    for reason in REASONS:
        listed = sorted(by_reason.get(reason, ()), key=lambda s: s.path)
        if listed:
            files = "1 file" if len(listed) == 1 else f"{len(listed)} files"
            out.append((reason, listed, f"{files} not checked as manifests: {SAID[reason]} [{reason}]"))
    return out
