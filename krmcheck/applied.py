"""What is judged: the files discovery sets aside, and the test inputs it marks.

A YAML file with top-level ``apiVersion`` and ``kind`` that no root reads is
a plain manifest, checked as the objects ``kubectl apply`` would create. What
is judged follows evidence about what the file is, never its name alone
(names add evidence to a rule; they never decide one). Files that are not
cluster objects are set aside, each with a reason id:

- ``tool-config``: every object in it is of a kind that configures a tool
  rather than a cluster (``tool_configs.yaml``: kind and k3d cluster
  configurations, kubeconfigs, kubeadm and kubelet configurations...);
- ``data``: every document lacks what every API object has (a ``kind``, a
  ``metadata`` with a ``name`` or ``generateName``) and is of a kind nothing
  serves (not built in, no CRD in the repository, no schema location):
  data written in apiVersion/kind form (conformance reports, proposal
  metadata, Talos machine-configuration patches), not a cluster object;
- ``test-framework``: it is in the directory of a chainsaw, kuttl or
  kyverno CLI test, known by the framework's own files (``chainsaw-test.yaml``,
  a ``Test``, ``TestStep`` or ``TestAssert`` of the framework, a kuttl
  ``TestSuite``'s ``testDirs``, numbered ``NN-assert``/``NN-errors`` step
  files), or a gator ``Suite`` names it as a case: the framework applies its
  steps as patches onto live objects and matches its asserts against them,
  or judges its cases offline, so their objects are partial or wrong by
  design;
- ``unused-input``: it lies in the directory of a kustomization (below the
  repository's top), or in a ``patch``/``patches`` directory of one, and no
  kustomization reads it: an input that kustomize would apply only once it
  is listed (a patch a Makefile adds, a commented-out entry), not a manifest;
- ``patch-file``: it holds strategic-merge directives (``$patch``,
  ``$setElementOrder``, ``$retainKeys``, ``$deleteFromPrimitiveList``), which
  only a patch holds;
- ``template``: it holds placeholders (``{{ ... }}``, ``{% ... %}``,
  ``<#if>``, ``${...}``, a Go ``%s``, or a ``{NAME}`` a script fills in)
  and is not YAML as it stands, or it is a file of an Ansible role: a
  template its tool renders first;
- ``vendored``: it is in a Go ``vendor`` directory that a dependency tool
  records (``vendor/modules.txt``, ``vendor/vendor.json``, or beside it
  ``Gopkg.lock``, ``glide.lock``, ``Godeps/Godeps.json``): a dependency's
  files, not the repository's manifests.

Whatever the reason, a YAML-level defect of a set-aside file (not YAML,
a repeated key, documents run together) is still reported
(:func:`yaml_defect`): its content is lost whatever tool reads it.

A file in a test directory that no root reads is a test's input
(:meth:`Sorter.test_input`): it is judged, but its cluster findings are
warnings, since tests transform their inputs (placeholder names, golden
files compared as text, cases invalid on purpose) before anything is applied.
So is the kustomization a script pipes into ``operator-sdk generate bundle``,
which completes its ClusterServiceVersion base before anything is applied,
and a file of an OLM bundle or package, which OLM's registry reads from a
catalog image (``bundle-input``). So is a documentation fragment: a file no root reads that a Markdown page of
the repository embeds to show its text (``mdox-exec="cat example/a.yaml"``,
an include) and that lies in the documentation's tree (``docs/``...) or
cannot be applied as it stands (a document with no name): a page showing
some fields, with values to fill in.
Test directories are known by the ecosystem's conventions (``test``,
``tests``, ``e2e``, ``testdata``, ``fixtures``, ``.chainsaw-test``,
``.kyverno-test``..., or a directory named for cases invalid on purpose).

Discovery counts each class in one note; ``--roots all`` and
``.krmcheck.yaml``'s ``not-applied:`` restore full judgement.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from krmcheck import journal
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files, read_text_bounded, texts_under
from krmcheck.tree.load import FAST_LOADER, LoadError, load_documents

TOOL_CONFIG = "tool-config"
DATA = "data"
TEST_FRAMEWORK = "test-framework"
UNUSED_INPUT = "unused-input"
PATCH_FILE = "patch-file"
TEMPLATE = "template"
VENDORED = "vendored"
DISABLED = "disabled"
SET_ASIDE = (TOOL_CONFIG, DATA, TEST_FRAMEWORK, UNUSED_INPUT, PATCH_FILE, TEMPLATE, VENDORED, DISABLED)
# Not reasons to set a file aside: their files are judged, their cluster findings as warnings.
TEST_INPUT = "test-input"
DOC_FRAGMENT = "doc-fragment"
BUNDLE_INPUT = "bundle-input"
WARNED = (TEST_INPUT, DOC_FRAGMENT, BUNDLE_INPUT)
REASONS = SET_ASIDE + WARNED  # the rules `not-applied:` can turn off

# What each reason's note says after the count.
SAID = {
    TOOL_CONFIG: "their objects configure a tool (kind, kubeconfig, kubeadm...), not a cluster",
    DATA: ("data in apiVersion/kind form: no kind, no metadata.name, or metadata fields no object has, and a "
           "kind that nothing serves (not built in, no CRD in the repository); or objects of a kind nothing serves "
           "that a page gives to another API's client (mactl create -f FILE)"),
    TEST_FRAMEWORK: "test inputs: chainsaw, kuttl and kyverno CLI tests apply their steps onto live objects "
                    "and match their asserts against them",
    UNUSED_INPUT: "beside a kustomization (or in a patches directory of one) that does not read them: "
                  "kustomize inputs not listed at present",
    PATCH_FILE: "patches ($patch and other strategic-merge directives, applied with kubectl patch, a program's kustomization lists them as patches, or shaped as a workload's patch or image override) that no kustomization of the repository reads",
    TEMPLATE: "templates (placeholders such as {{ ... }}, {% ... %}, <#if>, ${...}, @NAME@, ytt's #@ annotations, a "
              "shell command's here-document) that are not YAML until their tool renders them",
    VENDORED: "vendored dependencies (a Go vendor/ directory a dependency tool records), not the repository's manifests",
    DISABLED: "switched off: a kustomization, or the template a program renders it from, lists them only in an "
              "entry commented out (# - PATH)",
}


@dataclass(frozen=True)
class SetAside:
    """A file discovery did not take as a manifest, and why."""

    path: Path
    reason: str  # one of SET_ASIDE
    why: str  # the rule's detail: the tool, the test's marker, the kustomization beside it


# Says whether an apiVersion and kind are served: built in, by a CRD of the
# repository, or by a schema location.
Served = Callable[[str, str], bool]


def _everything(api_version: str, kind: str) -> bool:
    return True


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


# --- data -------------------------------------------------------------------------------

_METADATA = re.compile(r"^metadata:", re.MULTILINE)


# What a reference to an object, or a patch entry naming one, holds at its
# top level (core/v1 ObjectReference, Hive's SyncSet patches)
_REFERENCE_KEYS = frozenset({"apiVersion", "kind", "name", "namespace", "uid", "resourceVersion", "fieldPath",
                             "patch", "patchType", "applyMode"})


# The fields of every API object's metadata (k8s.io/apimachinery
# pkg/apis/meta/v1 types.go, ObjectMeta; clusterName until Kubernetes 1.25)
OBJECT_META_FIELDS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
    "managedFields", "clusterName"})
_META_KEY = re.compile(r"^metadata:[ \t]*\n((?:[ \t]*(?:#.*)?\n|[ \t]+\S.*\n?)*)", re.MULTILINE)
_KEY = re.compile(r"([ \t]+)([A-Za-z_][\w-]*)[ \t]*:")


def _foreign_meta(document: str) -> list[str]:
    """The keys of a document's metadata that no object's metadata has
    (``group``, ``version``), leaving out near misses of its fields
    (``lables``: a slip, judged as one), read from the text."""
    found = _META_KEY.search(document)
    if found is None:
        return []
    keys = [(len(m.group(1)), m.group(2)) for m in map(_KEY.match, found.group(1).splitlines()) if m]
    depth = min((d for d, _ in keys), default=0)
    return _not_object_meta(k for d, k in keys if d == depth)


def _not_object_meta(keys: Iterable[object]) -> list[str]:
    """The keys no object's metadata has, but for near misses of its fields."""
    return sorted(k for k in keys if isinstance(k, str) and k not in OBJECT_META_FIELDS
                  and not difflib.get_close_matches(k, OBJECT_META_FIELDS, n=1, cutoff=0.8))


def _data(text: str, served: Served) -> str | None:
    """Why the text is data, when every document lacks what every API object
    has (a kind; metadata with a name or generateName, and only an object's
    metadata fields) and is of a kind nothing serves, or names an object at
    its top level (``name:`` beside apiVersion and kind, no metadata): a
    reference to an object."""
    documents = [d for d in _DOCUMENT.split(text) if API_VERSION.search(d) or _KIND.search(d)]
    if all(_KIND.search(d) and _METADATA.search(d) and not _foreign_meta(d) for d in documents):
        return None  # the common case, without parsing: every document looks like an object
    try:
        loaded = [d for d in yaml.load_all(text, Loader=FAST_LOADER) if d is not None]
    except (yaml.YAMLError, RecursionError, ValueError):
        return None  # the build says what is wrong with it
    kinds: list[str] = []
    refers: list[str] = []
    for doc in loaded:
        if not isinstance(doc, dict):
            return None
        api_version, kind, meta = doc.get("apiVersion"), doc.get("kind"), doc.get("metadata")
        foreign = _not_object_meta(meta) if isinstance(meta, dict) else []
        if isinstance(meta, dict) and (meta.get("name") or meta.get("generateName")) and not foreign:
            return None
        if not isinstance(api_version, str):
            if kind is not None or api_version is not None:
                return None  # the build says what is wrong with it
            kinds.append("a document with neither apiVersion nor kind")
            continue
        if meta is None and isinstance(doc.get("name"), str) and isinstance(kind, str) and kind \
                and set(doc) <= _REFERENCE_KEYS:
            # a name at the top level, beside apiVersion and kind and nothing of
            # an object's body, refers to an object (a Hive SyncSet's patch
            # entry, an object reference): an API object keeps its name in
            # metadata, and one that forgot it still has its spec or data
            refers.append(f"{api_version} {kind} named at its top level")
            continue
        if isinstance(kind, str) and kind and served(api_version, kind):
            return None  # an object of a served kind: the API server judges it
        if foreign and isinstance(meta, dict) and (meta.get("name") or meta.get("generateName")):
            held = ", ".join(foreign[:3])
            kinds.append(f"{api_version} {kind}: metadata holds {held}, which no object's metadata has,")
            continue
        kinds.append(f"{api_version} {kind}: no metadata.name," if isinstance(kind, str) and kind
                     else f"{api_version} (no kind): no metadata.name,")
    served_by_none = [k for k in kinds if not k.startswith("a document")]
    if refers and not served_by_none:
        return f"{refers[0]}, with no metadata: a reference to an object, not one"
    if not served_by_none:
        return None
    return f"{served_by_none[0]} and no API serves the kind"


# --- kustomize inputs and patches --------------------------------------------------------

_DIRECTIVE = re.compile(r"^\s*(-\s+)?[\"']?\$(patch|setElementOrder/|retainKeys|deleteFromPrimitiveList/)",
                        re.MULTILINE)
_PATCH_DIRS = frozenset({"patch", "patches"})


def _patch_sign(text: str) -> str | None:
    found = _DIRECTIVE.search(text)
    return None if found is None else f"holds a ${found.group(2).rstrip('/')} directive"


# Workloads the API server refuses without a selector and a container image.
_SELECTED_WORKLOADS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"})


def _patch_shape(text: str) -> str | None:
    """A file whose every object is a workload shaped as a patch
    (:func:`patch_shaped`: only its name, and the pod fields to change):
    what a strategic-merge patch of a workload made elsewhere looks
    like; no such object can be created."""
    return _patch_shape_of(text) if "template" in text else None


def _patch_shape_of(text: str) -> str | None:
    docs = _documents(text)
    if docs is None or not docs:
        return None
    if all(patch_shaped(doc) for doc in docs):
        return f"a {docs[0]['kind']} with no selector and no container image: a patch's shape"
    if all(patch_shaped(doc) or image_override(doc) for doc in docs):
        return f"a {docs[0]['kind']} with no selector, no pod labels and only its containers' images: " \
               "an image override's shape"
    return None


def _documents(text: str) -> list[Any] | None:
    try:
        return [d for d in yaml.load_all(text, Loader=FAST_LOADER) if d is not None]
    except (yaml.YAMLError, RecursionError, ValueError):
        return None


def patch_shaped(doc: Any) -> bool:
    """A workload with neither a selector nor an image in any container (or
    no containers at all, only what goes beside them): only its name and the
    fields to change, what a strategic-merge patch of a
    workload made elsewhere (or ``kubectl apply`` onto a live one) holds; the
    API server creates no such object."""
    if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str) or doc["kind"] not in _SELECTED_WORKLOADS:
        return False
    spec = doc.get("spec")
    if not isinstance(spec, dict) or "selector" in spec:
        return False
    template = spec.get("template")
    pod = template.get("spec") if isinstance(template, dict) else None
    if pod is None and isinstance(template, dict) and isinstance(template.get("metadata"), dict) \
            and template["metadata"] and set(template) == {"metadata"}:
        return True  # only the pod template's labels or annotations to change (a restart, a reload)
    if not isinstance(pod, dict) or not pod:
        return False
    containers = pod.get("containers")
    if containers is None:  # only what to add beside them (an init container, volumes)
        return True
    return isinstance(containers, list) and bool(containers) and \
        all(isinstance(c, dict) and "image" not in c for c in containers)


_IMAGE_FIELDS = frozenset({"name", "image", "imagePullPolicy"})


def image_override(doc: Any) -> bool:
    """A workload that says nothing but which image each named container
    runs: no selector, no pod labels for one to match (no version of the
    apps API ever created a workload without both), no other field of the
    workload or its pods. That is what a strategic-merge patch bumping the
    images of a workload made elsewhere holds. Only evidence for a file no
    root reads: a root's object of this shape is judged as it renders (a
    whole Deployment that forgot its selector)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str) or doc["kind"] not in _SELECTED_WORKLOADS:
        return False
    spec = doc.get("spec")
    if not isinstance(spec, dict) or set(spec) != {"template"}:
        return False
    template = spec["template"]
    if not isinstance(template, dict) or set(template) != {"spec"}:
        return False
    pod = template["spec"]
    if not isinstance(pod, dict) or not pod or not set(pod) <= {"containers", "initContainers"}:
        return False
    lists = list(pod.values())
    if not all(isinstance(each, list) and each for each in lists):
        return False
    containers = [c for each in lists for c in each]
    return all(isinstance(c, dict) and {"name", "image"} <= set(c) <= _IMAGE_FIELDS for c in containers)


def patch_shaped_objects(text: str) -> frozenset[tuple[str, str]]:
    """(kind, name) of each workload of a manifest file shaped as a patch
    (:func:`patch_shaped`)."""
    if "template" not in text:
        return frozenset()
    return frozenset((d["kind"], str((d.get("metadata") or {}).get("name", "")))
                     for d in _documents(text) or () if patch_shaped(d) and isinstance(d.get("metadata"), dict))


_OBJECT_KEYS = frozenset({"apiVersion", "kind", "metadata"})


def metadata_only_objects(text: str) -> frozenset[tuple[str, str]]:
    """(kind, name) of each object of a manifest file that writes nothing
    but its metadata, with labels or annotations
    (``storageclass.kubernetes.io/is-default-class: 'true'`` on a platform's
    StorageClass): where its kind requires a field outside metadata, no
    such object can be created, and ``kubectl apply`` merges it onto the
    live one, as a patch."""
    if "metadata" not in text:
        return frozenset()
    out = set()
    for d in _documents(text) or ():
        meta = d.get("metadata") if isinstance(d, dict) else None
        if isinstance(meta, dict) and set(d) <= _OBJECT_KEYS and isinstance(d.get("kind"), str) and \
                isinstance(meta.get("name"), str) and (meta.get("labels") or meta.get("annotations")):
            out.add((d["kind"], meta["name"]))
    return frozenset(out)


def _unused_input(path: Path, top: Path, kustomizations: frozenset[Path],
                  read_dirs: frozenset[Path]) -> str | None:
    """The kustomization directory the file lies in or beside, when it is
    one below the repository's top: a kustomization at the top does not make
    the whole repository its inputs."""
    parent = path.parent
    if parent in kustomizations and parent != top:
        return f"beside {_relative(parent, top)}/kustomization"
    owner = parent.parent
    if owner in kustomizations and owner != top and (parent.name.lower() in _PATCH_DIRS or parent in read_dirs):
        return f"in {parent.name}/ of {_relative(owner, top)}/kustomization, which reads other files there" \
            if parent in read_dirs else f"in {parent.name}/ of {_relative(owner, top)}/kustomization"
    return None


# A list entry commented out: `# - ../../base/app/ks.yaml`, `#- ../webhook`
_COMMENTED_ENTRY = re.compile(r"^[ \t]*#[ \t]*-[ \t]+[\"']?([^\s\"'#]+)[\"']?[ \t]*(?:#.*)?$", re.MULTILINE)
_YAML_NAME = re.compile(r"\.ya?ml\Z")


KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def flux_kustomizations(path: Path, top: Path) -> list[tuple[Path, str]]:
    """The Flux Kustomizations in the file at ``path``: the directory each
    builds (``spec.path``, from the top of the repository) and its
    ``targetNamespace`` ("" for none)."""
    try:
        if path.stat().st_size > 1 << 20:
            return []
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if "kustomize.toolkit.fluxcd.io" not in text:
        return []
    try:
        docs = list(yaml.load_all(text, Loader=FAST_LOADER))
    except (yaml.YAMLError, RecursionError, ValueError):
        return []
    out = []
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "Kustomization" and \
                str(doc.get("apiVersion", "")).startswith("kustomize.toolkit.fluxcd.io/"):
            spec = doc.get("spec")
            where = spec.get("path") if isinstance(spec, dict) else None
            if isinstance(spec, dict) and isinstance(where, str) and "$" not in where:
                target = spec.get("targetNamespace")
                out.append((Path(os.path.normpath(top / where.lstrip("/"))),
                            target if isinstance(target, str) else ""))
    return out


def commented_entries(kustomizations: Iterable[Path]) -> dict[Path, Path]:
    """Files (YAML) and directories the kustomizations of ``kustomizations``
    (directories) name in commented-out list entries -> the kustomization
    file naming them."""
    out: dict[Path, Path] = {}
    for directory in sorted(kustomizations):
        found = next((directory / n for n in KUSTOMIZATION_FILES if os.path.isfile(directory / n)), None)
        if found is not None:
            _commented_in(found, out)
    return out


def _commented_in(found: Path, out: dict[Path, Path]) -> None:
    """Add what the kustomization (or template) file ``found`` names in
    commented-out list entries to ``out``."""
    try:
        if found.stat().st_size > 1 << 20 or not found.is_file():
            return
        text = found.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    if "#" not in text:
        return
    for m in _COMMENTED_ENTRY.finditer(text):
        target = Path(os.path.normpath(found.parent / m.group(1)))
        if _YAML_NAME.search(m.group(1)) or os.path.isdir(target):
            out.setdefault(target, found)


# the template a program renders a kustomization from: kustomization.template.yaml,
# kustomization.yaml.in, kustomization.tmpl.yaml (kubebuilder projects that sed a version in)
_KUSTOMIZATION_TEMPLATE = re.compile(r"\Akustomization(?:\.ya?ml)?[._-](?:template|tmpl|tpl|in)(?:\.ya?ml)?\Z")


def template_commented_entries(directory: Path) -> dict[Path, Path]:
    """What a kustomization template in ``directory`` (a directory holding no
    kustomization: a program renders it from the template) names in
    commented-out list entries -> the template."""
    out: dict[Path, Path] = {}
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return out
    for name in names:
        if _KUSTOMIZATION_TEMPLATE.match(name):
            _commented_in(directory / name, out)
    return out


def _relative(path: Path, top: Path) -> str:
    try:
        return path.relative_to(top).as_posix() or "."
    except ValueError:
        return path.as_posix()


# --- test frameworks and test inputs ---------------------------------------------------

_CHAINSAW_FILES = frozenset({"chainsaw-test.yaml", "chainsaw-test.yml", "chainsaw-test.json"})
_KYVERNO_FILES = frozenset({"kyverno-test.yaml", "kyverno-test.yml"})  # what `kyverno test` looks for
_STEP = re.compile(r"^\d+-(assert|errors?)([-._].*)?\.ya?ml\Z")
_FRAMEWORK = re.compile(r"^apiVersion:[ \t]*[\"']?(chainsaw\.kyverno\.io|kuttl\.dev|cli\.kyverno\.io|"
                        r"test\.gatekeeper\.sh)/", re.MULTILINE)
_FRAMEWORK_NAMES = {"chainsaw.kyverno.io": "chainsaw", "kuttl.dev": "kuttl", "cli.kyverno.io": "kyverno CLI",
                    "test.gatekeeper.sh": "gator"}
_TEST_DIRS = re.compile(r"^testDirs:[ \t]*\n((?:[ \t]*-.*\n?)+)", re.MULTILINE)
# The ecosystem's names for directories of test inputs: test runners' (test,
# tests, e2e), Go's (testdata, which its tools leave alone, and _testdata),
# fixtures, and the hidden test directories of chainsaw and kyverno policy
# libraries; and a directory named for cases invalid on purpose.
TEST_DIR_NAMES = frozenset({"test", "tests", "e2e", "testing", "testdata", "_testdata", "fixtures",
                            "__fixtures__", ".chainsaw-test", ".kyverno-test", "integration-tests",
                            "e2e-tests", "test-data"})
# a directory of some kind of tests: cel-tests, unit_tests, conformance-tests,
# or a kind of tests written as one word (Rancher Fleet's integrationtests,
# functests, fuzztests; not speedtest, an application);
# or of tests' inputs, hidden or not: test-fixtures, e2e_data, .test-fixtures
# (Package Operator's template tests compare a package's renders with it)
_KIND_OF_TESTS = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*[-_]tests|"
                            r"(?:integration|e2e|unit|func|functional|fuzz|acceptance|conformance|smoke|system|"
                            r"regression|component)tests|"
                            r"\.?(?:tests?|e2e|integration)[-_](?:fixtures|data|inputs)")
_NEGATIVE = re.compile(r"(^|[-_.])(invalid|malformed|broken|bad|wrong|xfail)([-_.]|$)", re.IGNORECASE)
# A directory whose name says it holds such cases (invalid-examples, bad_cases);
# a bare ``bad/`` or ``broken/`` says nothing of what it holds.
_CASES = r"(examples?|cases?|samples?|manifests?|inputs?)"
_NEGATIVE_CASES = re.compile(rf"(^|[-_.])(invalid|malformed|broken|bad|wrong|xfail)[-_.]?{_CASES}([-_.]|$)|"
                             rf"(^|[-_.]){_CASES}[-_.]?(invalid|malformed|broken|bad|wrong|xfail)([-_.]|$)",
                             re.IGNORECASE)


class TestDirectories:
    """Directories of chainsaw, kuttl and kyverno CLI tests: each maps to its marker."""

    def __init__(self) -> None:
        self.marked: dict[Path, str] = {}
        self.marked_files: dict[Path, str] = {}  # the cases a gator Suite judges offline

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
        if framework.group(1) == "test.gatekeeper.sh":
            if "Suite" in kinds:
                for rel in _suite_objects(text):
                    self.marked_files.setdefault(Path(os.path.normpath(path.parent / rel)),
                                                 f"a case of a gator test suite ({path.name})")
            return
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
        """What marks ``path``, its directory, or one above it, as a framework's test."""
        if path in self.marked_files:
            return self.marked_files[path]
        for parent in _below(path, top):
            found = self.marked.get(parent)
            if found:
                return found
        return None


def _suite_objects(text: str) -> list[str]:
    """The files a gator ``Suite`` judges offline: each case's ``object`` and
    ``inventory`` entries (its ``template`` and ``constraint`` are applied)."""
    try:
        doc = yaml.load(text, Loader=FAST_LOADER)
    except (yaml.YAMLError, RecursionError, ValueError):
        return []
    out: list[str] = []
    for test in doc.get("tests") or [] if isinstance(doc, dict) else []:
        for case in (test.get("cases") or []) if isinstance(test, dict) else []:
            if not isinstance(case, dict):
                continue
            held = case.get("inventory")
            for rel in [case.get("object")] + (held if isinstance(held, list) else []):
                if isinstance(rel, str) and rel:
                    out.append(rel)
    return out


def _below(path: Path, top: Path) -> list[Path]:
    """``path``'s directories from its own up to ``top``."""
    return [p for p in path.parents if p == top or top in p.parents]


# Names that are also those of environments (a cluster called test): evidence
# decides between the two.
_ENVIRONMENT_NAMES = frozenset({"test", "tests", "testing"})


def test_directory(path: Path, top: Path) -> str | None:
    """Why ``path`` is in a test directory, by the ecosystem's conventions."""
    for parent in _below(path, top):
        if parent == top:
            break
        name = parent.name.lower()
        if (name in TEST_DIR_NAMES or _KIND_OF_TESTS.fullmatch(name)) and not _environment(parent):
            return f"in a test directory ({parent.name}/)"
        if _NEGATIVE_CASES.search(parent.name):
            return f"in a directory of cases invalid on purpose ({parent.name}/)"
    return None



def plugin_home(path: Path) -> str | None:
    """Why ``path`` lies in a kustomize exec plugin's own directory: the
    layout kustomize loads legacy plugins from
    (``<apiVersion>/<lowercased kind>/<Kind>``, an executable named for the
    kind in the directory named for it lowercased, below a version
    directory: ``agilicus/v1/secretmerge/SecretMerge``). The YAML beside the
    plugin is its configuration example and the inputs its tests give it:
    kustomize and the plugin read them, no cluster does."""
    directory = path.parent
    if not re.fullmatch(r"v\d+\w*", directory.parent.name):
        return None
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    for name in names:
        plugin = directory / name
        if name.lower() == directory.name and name != directory.name and name[:1].isupper() and \
                plugin.is_file() and os.access(plugin, os.X_OK):
            return f"beside the kustomize exec plugin {directory.parent.name}/{directory.name}/{name}, " \
                   f"whose configuration example or test input it is"
    return None

# kpt's test runner (pkg/test/runner, used by kpt and the function catalogs)
# takes every directory holding ``.expected/`` as a test case: it copies the
# package, runs the function (or ``kpt fn render``) over it, and compares
# the result with ``.expected/diff.patch`` or ``results.yaml``, as
# ``.expected/config.yaml`` directs.
_KPT_EXPECTED = ".expected"
_KPT_RUNNER_FILES = ("config.yaml", "diff.patch", "results.yaml")


def _kpt_case(directory: Path) -> bool:
    expected = directory / _KPT_EXPECTED
    return any((expected / name).is_file() for name in _KPT_RUNNER_FILES)


def kpt_test_case(path: Path, top: Path) -> str | None:
    """Why ``path`` is the input of a test case of kpt's test runner: it
    lies in a package (or below one) that holds ``.expected/`` with the
    runner's files. The runner gives the package to a function and compares
    what comes out; its objects are the function's input, often minimal or
    invalid on purpose, and no cluster receives them."""
    for directory in _below(path, top):
        if directory == top:
            break  # a package the run is asked to check is judged in full
        if _kpt_case(directory):
            return f"a test case of kpt's test runner ({_relative(directory / _KPT_EXPECTED, top)}/ beside it): " \
                   f"a function transforms it and the runner compares the result"
    return None


# A checker's expected report kept beside the directory it checks
# (``expected-errs.txt``, ``expected.out``): not a rendering's golden output,
# which is YAML or JSON itself.
_EXPECTED_REPORT = re.compile(r"expected[\w.-]*")
_REPORT_SUFFIXES = (".yaml", ".yml", ".json")
_NAMED_YAML = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.ya?ml)(?![\w-])")


def expected_report(directory: Path) -> str | None:
    """The report a checker is expected to give on ``directory``, when the
    directory holds one that names a YAML file below it as it names a source
    (``expected-errs.txt`` listing ``source: namespaces/prod/rb.yaml``):
    the directory is a negative test case, invalid on purpose as a whole."""
    try:
        names = sorted(e.name for e in os.scandir(directory) if e.is_file())
    except OSError:
        return None
    for name in names:
        if not _EXPECTED_REPORT.fullmatch(name) or name.endswith(_REPORT_SUFFIXES):
            continue
        try:
            text = read_text_bounded(directory / name)
        except (OSError, ValueError):
            continue
        if any((directory / named).is_file() for named in _NAMED_YAML.findall(text)):
            return name
    return None


# Names of environments a repository's clusters or overlays are named for.
_ENVIRONMENTS = frozenset({"main", "prod", "production", "staging", "stage", "dev", "development", "qa", "uat",
                           "live", "sandbox", "preprod", "pre-prod", "nonprod", "non-prod", "demo", "local"})


@functools.lru_cache(maxsize=4096)
def _environment(directory: Path) -> bool:
    """Whether a directory named ``test`` is one environment among others:
    a sibling is named for an environment (``clusters/test`` beside
    ``clusters/prod``), or holds mostly the same directories
    (two or more of the same names: ``apps/test/{kube-system,network}`` beside
    ``apps/utility/{kube-system,network,media}``, a sibling that is no
    test directory itself): the shape of a repository's environments,
    never of its tests."""
    if directory.name.lower() not in _ENVIRONMENT_NAMES or directory.parent.name == "src":
        return False  # src/test beside src/main: Maven's and Gradle's test sources
    if _holds_test_code(directory):
        return False  # a test suite's programs: whatever its siblings are named (a Go staging/)
    siblings = _subdirectories(directory.parent) - {directory.name}
    mine = _subdirectories(directory)
    if any(s.lower() in _ENVIRONMENTS and _alike(directory, directory.parent / s, mine) for s in siblings):
        return True
    for sibling in siblings:
        if sibling.lower() in TEST_DIR_NAMES or _KIND_OF_TESTS.fullmatch(sibling.lower()):
            continue  # tests beside perf-tests: two kinds of tests, not two environments
        theirs = _subdirectories(directory.parent / sibling)
        common = mine & theirs
        if len(common) >= 2 and len(common) * 2 >= len(mine | theirs):
            return True
    return False


# Test programs by the naming each ecosystem's runner requires: go test,
# pytest, bats, RSpec, Jest/Mocha, Deno (and Jasmine's ``*_test.js``), JUnit.
_TEST_CODE = re.compile(r".+_test\.go|test_.+\.py|.+_test\.py|.+\.bats|.+_spec\.rb|.+[._](test|spec)\.[jt]sx?|"
                        r".+Tests?\.(java|kt)")


def _holds_test_code(directory: Path, depth: int = 1) -> bool:
    """Whether ``directory`` or a directory right below it holds a test
    runner's programs (tests/api_test.go, test/bats/test.bats)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return False
    if any(e.is_file() and _TEST_CODE.fullmatch(e.name) for e in entries):
        return True
    return depth > 0 and any(e.is_dir() and not e.name.startswith(".") and _holds_test_code(Path(e.path), depth - 1)
                             for e in entries)


def _alike(directory: Path, sibling: Path, mine: frozenset[str]) -> bool:
    """Whether a sibling named for an environment holds what ``directory``
    holds, as environments of one repository do: a subdirectory of the same
    name (clusters/test/apps beside clusters/prod/apps), or manifests or a
    kustomization at the top of both. A Go ``staging/`` tree or a ``demo/``
    of scripts beside ``test/`` is no environment of it."""
    return bool(mine & _subdirectories(sibling)) or (_holds_yaml(directory) and _holds_yaml(sibling))


def _holds_yaml(directory: Path) -> bool:
    try:
        return any(e.is_file() and e.name.endswith((".yaml", ".yml")) for e in os.scandir(directory))
    except OSError:
        return False


def _subdirectories(directory: Path) -> frozenset[str]:
    try:
        return frozenset(e.name for e in os.scandir(directory) if e.is_dir() and not e.name.startswith("."))
    except OSError:
        return frozenset()


# --- documentation fragments -------------------------------------------------------------

_NAMED = re.compile(r"^[ \t]+(name|generateName):", re.MULTILINE)
# The directories a documentation site is built from.
_DOC_DIRS = frozenset({"docs", "doc", "documentation", "website", "site"})
# What makes a directory a documentation site whatever its name
# (``docs-gen/hugo.toml``): a site generator's own configuration. Hugo's
# older ``config.toml`` and Jekyll's ``_config.yml`` are generic names, so
# they count only beside the directory the generator reads pages from.
# mkdocs.yml is no such evidence: it sits at a project's root (Backstage's
# TechDocs in every component) and reads the pages from docs/ beside it.
_SITE_CONFIGS = ("hugo.toml", "hugo.yaml", "hugo.json", "docusaurus.config.js", "docusaurus.config.ts",
                 "docusaurus.config.mjs", "book.toml", "antora.yml")
_SITE_CONFIGS_BESIDE = (("config.toml", "content"), ("config.yaml", "content"), ("_config.yml", "_layouts"),
                        ("_config.yml", "_posts"))


def is_site(directory: Path) -> bool:
    """Whether a documentation site is built from ``directory``."""
    if any((directory / name).is_file() for name in _SITE_CONFIGS):
        return True
    return any((directory / name).is_file() and (directory / beside).is_dir() for name, beside in _SITE_CONFIGS_BESIDE)


def in_documentation(path: Path, top: Path, sites: dict[Path, bool] | None = None) -> bool:
    """Whether ``path`` lies in the documentation's tree: below a directory
    named for it (``docs/``), or below one a site generator builds, other
    than the repository's top (whose site config says nothing of the rest).
    ``sites`` remembers what was learnt of each directory."""
    sites = {} if sites is None else sites
    for p in _below(path, top):
        if p.name.lower() in _DOC_DIRS:
            return True
        if p != top:
            if p not in sites:
                sites[p] = is_site(p)
            if sites[p]:
                return True
    return False


_TOP_KEY = re.compile(r"\n(?=\S)")


def _unnamed(text: str) -> bool:
    """Whether a document of the text has no metadata with a name or generateName."""
    for document in _DOCUMENT.split(text):
        if not (API_VERSION.search(document) or _KIND.search(document)):
            continue
        meta = _METADATA.search(document)
        if meta is None:
            return True
        block = _TOP_KEY.split(document[meta.end():], 1)[0]  # metadata's own lines
        if not _NAMED.search(block):
            return True
    return False

# A YAML file a page embeds, to show its text rather than to have it
# applied: mdox's ``mdox-exec="cat PATH"``, embedmd's ``[embedmd]:# (PATH)``,
# mkdocs snippets' ``--8<-- "PATH"``, markdown-include's ``{!PATH!}``, Hugo's
# ``readfile``/``include`` and Jekyll's ``include``/``include_relative``. A page that only names a file
# (``kubectl apply -f PATH``) shows an object to apply: no evidence.
_YAML_PATH = r"\.?/?((?:[\w.-]+/)*[\w.-]+\.ya?ml)"
_PAGE_PATH = re.compile(
    r"(?:mdox-exec=\"cat\s+|\[embedmd\]:\s*#\s*\(|--8<--\s*\"|\{!\s*|readfile\s+(?:file=)?\"?|"
    r"\{%-?\s*include(?:_relative)?\s+['\"]?|\{\{[<%]\s*include\s+\"?)" + _YAML_PATH)
_PAGES_SECONDS = 10.0  # the walk over Markdown pages is bounded in time
_PAGE_BYTES = 1 << 20
_SKIP = frozenset({".git", "node_modules", "vendor", ".venv"})


def _walk(top: Path, seconds: float, skip: frozenset[str] = _SKIP) -> Iterator[tuple[Path, list[str]]]:
    """(directory, its file names, sorted) under ``top``, in a stable order,
    leaving out ``skip`` directories, until ``seconds`` have passed."""
    import time

    started = time.monotonic()
    for directory, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        if time.monotonic() - started > seconds:
            return
        yield Path(directory), sorted(filenames)


# ``kubectl patch deployment/x --patch-file PATH`` (or ``-p "$(cat PATH)"``):
# the file is a patch of a live object, not an object.
_PATCHED = re.compile(r"\bkubectl\b[^\n]*?\bpatch\b[^\n]*?(?:--patch-file[= ]\s*|\$\(cat\s+)[\"']?" + _YAML_PATH)


def shown_in_pages(top: Path, pages: Iterable[tuple[Path, str]] | None = None) -> dict[str, str]:
    """Repository-relative YAML paths a Markdown page names -> the first such
    page: a documentation page that embeds a file to show a field shows a
    fragment, not an object to apply (``pages``: ``markdown_pages(top)``, read once)."""
    return _named_in_pages(top, _PAGE_PATH, markdown_pages(top) if pages is None else pages)


# kubectl's arguments as a program's list (Go's exec.Command, Python's
# subprocess): "--patch-file" and the path, or a variable the same program
# gives the path; "--patch" and the text of a file Go embeds (//go:embed).
_ARG_PATCH_FILE = re.compile(r"[\"']--patch-file[\"']\s*,\s*(?:[\"']" + _YAML_PATH + r"[\"']|(\w+))")
_ARG_PATCH_TEXT = re.compile(r"[\"']--patch[\"']\s*,\s*string\((\w+)\)")
_GO_EMBED = re.compile(r"^//go:embed\s+" + _YAML_PATH + r"\s*\n(?:\s*//.*\n)*\s*var\s+(\w+)", re.MULTILINE)


# `go run ./cmd/aigw run ./examples/mcp/mcp_example.yaml`: a page that gives
# the file to a program of the repository (built from its cmd/ directory)
# documents it as that program's input; the program reads it, not kubectl.
_RUN_BY = re.compile(r"\bgo\s+run\s+\.?/?(?:[\w.-]+/)*cmd/[\w.-]+/?[^\n|;&]*?\s\.?/?"
                     r"((?:[\w.-]+/)*[\w.-]+\.ya?ml)\b")


# The page of a program's own directory (cmd/NAME/README.md) runs it by
# its name: `yaml-mapper --headerPath=examples/header.yaml ...` gives the
# program every file on that command line. Programs that apply what they
# are given are no such evidence, whatever directory they are built from.
_ARG_PATH = re.compile(r"(?:^|[\s=])[\"']?\.?/?((?:[\w.-]+/)*[\w.-]+\.ya?ml)\b")
_APPLIERS = frozenset({"kubectl", "oc", "kustomize", "helm", "kpt", "flux", "argocd", "kapp"})


# A Makefile that builds a program of the repository (`go build -o bin/NAME
# ./internal/cmd/NAME`, `-o $@` in the rule for bin/NAME) and runs it with a
# file (`bin/NAME --file hack/x.yaml`) gives the file to that program.
_GO_BUILT = re.compile(r"^(\S+)\s*:[^=\n]*\n(?:\t.*\n)*?\t[^\n]*\bgo\s+build\b[^\n]*-o\s+\$@|"
                       r"\bgo\s+build\b[^\n]*?-o\s+(\S+)", re.MULTILINE)


def _built_and_run(text: str) -> list[str]:
    """The files a Makefile gives to the programs it builds with go build."""
    built = {(target or output).strip("\"'") for target, output in _GO_BUILT.findall(text)}
    built = {b for b in built if "/" in b and "$" not in b}
    if not built:
        return []
    found = []
    for line in text.replace("\\\n", " ").splitlines():
        for program in built:
            at = re.search(rf"(?:^|[\s;&|(])(?:\./)?{re.escape(program)}(?=\s)([^\n|;&>]*)", line)
            if at is not None:
                found += _ARG_PATH.findall(at.group(1))
    return found


def run_by(top: Path, pages: Iterable[tuple[Path, str]] | None = None, run: object = None) -> dict[str, str]:
    """Repository-relative YAML paths a Markdown page gives to a program of
    the repository (``go run ./cmd/NAME ... PATH``, or ``NAME ... PATH`` on
    the page of cmd/NAME itself), or a Makefile to a program it builds
    (``bin/NAME --file PATH``) -> the first such page or Makefile."""
    pages = list(markdown_pages(top) if pages is None else pages)
    out = _named_in_pages(top, _RUN_BY, pages)
    for rel, text in _programs(top, run):
        if rel.rpartition("/")[2] in _SCRIPT_NAMES and "go build" in text:
            _note_paths(_built_and_run(text), top / rel, top, rel, out)
    for page, text in pages:
        name = page.parent.name
        if page.parent.parent.name != "cmd" or name in _APPLIERS or name not in text:
            continue
        command = re.compile(rf"^[ \t>$]*(?:\./|bin/)?{re.escape(name)}[ \t]([^\n|;&]*)", re.MULTILINE)
        found = [path for line in command.findall(text) for path in _ARG_PATH.findall(line)]
        _note_paths(found, page, top, _relative(page, top), out)
    return out


# `argo submit .argo/deploy.yaml --generate-name="$APP-" -p ...` in a CI
# pipeline or a script: the Argo CLI writes metadata.name or generateName
# from its option before it creates the Workflow, so a file that leaves
# both out is complete as submitted. A pipeline runs in its repository's
# top (the directory holding .github/ or .gitlab-ci.yml), a script in its
# own directory or the repository's.
_ARGO_SUBMIT = re.compile(r"(?:^|[\s/;&|(])argo[\w.-]*\s+submit\s([^\n;&|#]*)", re.MULTILINE)
_ARGO_NAMES = re.compile(r"(?:^|\s)--(?:generate-)?name[=\s]")
# `argocd app create --file ../templates/app.yaml --name "$2" --upsert`: the
# Argo CD CLI names the Application from its option, as argo submit does
_ARGOCD_CREATE = re.compile(r"(?:^|[\s/;&|(])argocd\s+app\s+create\s([^\n;&|#]*)", re.MULTILINE)
_ARGOCD_FILE = re.compile(r"(?:^|\s)(?:--file|-f)(?:=|\s+)[\"']?([^\s\"']+\.ya?ml)")
_ARGO_VALUED = frozenset({"-p", "--parameter", "-f", "--parameter-file", "-o", "--output", "-l", "--labels",
                          "--from", "--entrypoint", "--serviceaccount", "--instanceid", "-n", "--namespace"})
_CI_FILES = (".gitlab-ci.yml", ".gitlab-ci.yaml")
_CI_SECONDS = 5.0


def _pipelines(top: Path) -> Iterator[tuple[Path, str, Path]]:
    """(file, text, the directory its commands run in) of the CI pipelines
    under ``top``: GitHub Actions workflows and GitLab CI files."""
    for directory, names in _walk(top, _CI_SECONDS, _PROGRAM_SKIP):
        if directory.name == "workflows" and directory.parent.name == ".github":
            home = directory.parent.parent
            files = [n for n in names if n.endswith((".yml", ".yaml"))]
        else:
            home, files = directory, [n for n in names if n in _CI_FILES]
        for name in files:
            try:
                text = read_text_bounded(directory / name)
            except (OSError, ValueError):
                continue
            yield directory / name, text, home


def argo_submitted(top: Path, run: object = None) -> dict[str, str]:
    """Repository-relative paths of files a CI pipeline or a program of the
    repository gives to ``argo submit`` with ``--name`` or
    ``--generate-name``, or to ``argocd app create --file`` with ``--name``
    -> that pipeline or program."""
    sources = [*_pipelines(top), *((top / rel, text, (top / rel).parent) for rel, text in _programs(top, run))]
    out: dict[str, str] = {}
    for path, text, home in sources:
        for found in _ARGOCD_CREATE.finditer(text.replace("\\\n", " ")) if "argocd" in text else ():
            if _ARGO_NAMES.search(found.group(1)) is None:
                continue
            for word in _ARGOCD_FILE.findall(found.group(1)):
                for base in (home, top):
                    named = Path(os.path.normpath(base / word))
                    if top in named.parents and named.is_file():
                        out.setdefault(_relative(named, top), _relative(path, top))
                        break
        if "submit" not in text:
            continue
        for found in _ARGO_SUBMIT.finditer(text.replace("\\\n", " ")):
            line = found.group(1)
            if _ARGO_NAMES.search(line) is None:
                continue
            words = line.split()
            for before, word in zip([""] + words, words):
                word = word.strip("\"'")
                if before in _ARGO_VALUED or not word.endswith((".yaml", ".yml")) or "=" in word or "$" in word:
                    continue
                for base in (home, top):
                    named = Path(os.path.normpath(base / word))
                    if top in named.parents and named.is_file():
                        out.setdefault(_relative(named, top), _relative(path, top))
                        break
    return out


# `//go:embed yaml-templates` (or a file, or a glob): the Go program carries
# the files in its binary. Together with a fill-in marker in a value of the
# file (a name written XXX, a ${VAR}, a <MARKER>), that makes the file a
# template the program fills in before it creates anything; a manifest it
# embeds with no such marker may be applied as it is, and stays judged.
_EMBED_LINE = re.compile(r"^[ \t]*//go:embed\s+(.+)$", re.MULTILINE)  # (indented inside a var block too)
_VALUE = re.compile(r"^[ \t-]*[\w./\"'-]+:[ \t]+([^\n#]+)", re.MULTILINE)
_XXX = re.compile(r"(?:\A|[-_.\s{\[,])X{3,}(?:\Z|[-_.\s}\],])")  # a name written XXX, or my-secret-XXX
# ${VAR}, {{ expression }}, a <MARKER> in capitals, or a value wholly <what to write>
_MARKER = re.compile(r"\$\{[^{}]+\}|\{\{.*?\}\}|<[A-Z][A-Z0-9_]{2,}>|\A<[^<>\n]+>\Z")


# ko copies the ``kodata`` directory beside a main package into the image it
# builds (the program finds it at $KO_DATA_PATH): data the program reads.
KODATA = "kodata"
_GO_MAIN = re.compile(r"^package main\b", re.MULTILINE)


def embedded_by(top: Path, run: object = None) -> dict[str, str]:
    """Repository-relative files and directories a Go program of the
    repository embeds (``//go:embed``), or that ko ships with a main
    package (its ``kodata`` directory) -> that program's path."""
    out: dict[str, str] = {}
    for rel, text in _programs(top, run):
        if not rel.endswith(".go"):
            continue
        folder = rel.rpartition("/")[0]
        data = f"{folder}/{KODATA}" if folder else KODATA
        if data not in out and _GO_MAIN.search(text) and (top / data).is_dir():
            out[data] = rel
        if "//go:embed" in text:
            for embedded in _embeds(rel, text):
                out.setdefault(embedded, rel)
    return out


def _embeds(rel: str, text: str) -> Iterator[str]:
    """The repository paths (or globs) a Go file's ``//go:embed`` lines
    name, from the file's own directory."""
    folder = rel.rpartition("/")[0]
    for line in _EMBED_LINE.findall(text):
        for pattern in line.split():
            pattern = pattern.strip("\"`").removeprefix("all:")
            if pattern and ".." not in pattern:
                yield f"{folder}/{pattern}" if folder else pattern


# Go that sets a field of an object it decoded: ``deployment.Spec.Template.
# Spec.Containers[0].Image = image``, ``obj.Namespace = ns``, an unstructured
# object's ``u.SetName(name)``; and the YAML file names a Go file gives as a
# string (``Asset("assets/deployment.yaml")``, ``path.Join(dir, "pipeline.yaml")``).
_GO_SETS = re.compile(r"\.(?:Spec|ObjectMeta|Namespace|Name|Labels|Annotations|Data)\b"
                      r"(?:\.\w+|\[[^\]\n]+\])*\s*=(?!=)|\.Set(?:Name|Namespace|Labels|Annotations)\(")
_GO_YAML_NAME = re.compile(r"\"([\w./-]+\.ya?ml)\"")


def go_setters(top: Path, run: object = None) -> list[tuple[str, str]]:
    """(a YAML path, or the end of one, that a Go file embeds or names as a
    string; that Go file) for each Go file of the repository that also sets
    a field of a decoded object in code."""
    out: list[tuple[str, str]] = []
    for rel, text in _programs(top, run):
        if not rel.endswith(".go") or not _GO_SETS.search(text):
            continue
        out.extend((embedded, rel) for embedded in _embeds(rel, text))
        out.extend((name.lstrip("./"), rel) for name in _GO_YAML_NAME.findall(text))
    return out


def embedded_template(path: Path, text: str, top: Path, embedded: dict[str, str],
                      setters: Iterable[tuple[str, str]] = (), served: Served = lambda _v, _k: True) -> str | None:
    """Why ``path`` is a template a Go program of the repository fills in:
    the program embeds it (the file, a glob naming it, or a directory above
    it), and a value of it is a fill-in marker, or no object of it has
    metadata (:func:`_without_metadata`), or none has a name or a kind
    anything ``served`` (:func:`_none_named`), or a Go file that embeds it or names it sets
    fields of the decoded object in code (:func:`go_setters`)."""
    if not embedded:
        return None
    rel = _relative(path, top)
    pattern = rel if rel in embedded else next(
        (pattern for pattern in embedded
         if fnmatch.fnmatchcase(rel, pattern) or rel.startswith(pattern.rstrip("/") + "/")), None)
    if pattern is None:
        return None
    program = embedded[pattern]
    how = f"ko ships it with {program} (its {KODATA}/)" if pattern.rpartition("/")[2] == KODATA \
        else f"{program} embeds it (//go:embed)"
    values = [value.strip().strip("\"'") for value in _VALUE.findall(text)]
    if any(_XXX.search(value) or _MARKER.search(value) for value in values):
        return f"{how} and fills in its placeholders"
    if _without_metadata(text):
        return f"{how}, and no object of it has metadata: values the program reads, not objects it creates"
    if _none_named(text, served):
        return f"{how}, and no object of it has a name or a kind an API serves: values the program reads, " \
               f"not objects it creates"
    setter = next((go for named, go in setters
                   if rel == named or fnmatch.fnmatchcase(rel, named) or rel.endswith("/" + named)), None)
    return None if setter is None else f"{how}, and {setter} sets fields of the decoded object in code " \
                                       f"before it creates it"



def _without_metadata(text: str) -> bool:
    """Whether every document of the text is written as an object (apiVersion
    and kind) with no ``metadata`` at all: nothing the API server creates,
    and nothing a program that names its copies starts from (those write
    the namespace or labels to keep) but values in an object's shape (an
    operator's profile of values)."""
    docs = _documents(text) or []
    return bool(docs) and all(isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc
                              and "metadata" not in doc for doc in docs)


def _none_named(text: str, served: Served) -> bool:
    """Whether every document of the text is written as an object (apiVersion
    and kind) of a kind nothing serves, whose metadata gives neither a name
    nor a generateName (istioctl's install profiles, which write only a
    namespace): no API server creates it."""
    docs = _documents(text) or []
    return bool(docs) and all(
        isinstance(doc, dict) and isinstance(doc.get("apiVersion"), str) and isinstance(doc.get("kind"), str)
        and isinstance(doc.get("metadata"), dict) and not doc["metadata"].get("name")
        and not doc["metadata"].get("generateName") and not served(doc["apiVersion"], doc["kind"]) for doc in docs)


# Go that builds a kustomization with kustomize's own API (krusty) and runs
# transformers of its own over the result (``namePrefix.Transform(resMap)``,
# a field mutator that writes the storage request from the custom resource)
# before it creates anything: the directory it names (``"manifests/base"``,
# the end of the root's path, wherever the image puts it) is that program's
# input, completed at run time.
_KRUSTY = re.compile(r"\"sigs\.k8s\.io/kustomize/api/krusty\"")
_TRANSFORMS = re.compile(r"\.Transform\(")
_GO_DIRECTORY = re.compile(r"\"((?:[\w.-]+/)+[\w.-]+)\"")


def kustomize_api_roots(top: Path, run: object = None) -> dict[str, str]:
    """Directory paths (as path suffixes) that a Go program of the
    repository names, where a Go package of the repository builds
    kustomizations with kustomize's API and transforms the result -> why."""
    programs = [(rel, text) for rel, text in _programs(top, run)
                if rel.endswith(".go") and not rel.endswith("_test.go")]
    folders = {rel.rpartition("/")[0] for rel, text in programs if _TRANSFORMS.search(text)}
    builder = next((rel for rel, text in programs
                    if _KRUSTY.search(text) and rel.rpartition("/")[0] in folders), None)
    if builder is None:
        return {}
    out: dict[str, str] = {}
    for rel, text in programs:
        for name in _GO_DIRECTORY.findall(text):
            if "." in name.split("/", 1)[0] or name.endswith((".yaml", ".yml", ".go")):
                continue  # an import path (a host first), or a file
            out.setdefault(name.strip("./"), f"{rel} names it, and {builder} builds it with kustomize's Go API "
                                             f"and transforms the result before it creates the objects")
    return out

# A program that reads a YAML file by a path from its own directory, parses
# it and sets its fields before it creates the object: Node's
# readFileSync(`${__dirname}/manifests/cronjob.yaml`) or
# path.join(__dirname, "manifests", "hpa.yaml"), Python's
# os.path.join(os.path.dirname(__file__), "manifests", "job.yaml") or
# Path(__file__).parent / "manifests" / "job.yaml"; a ${...} in a template
# literal is any name.
_QUOTED_PARTS = r"(?:[\"'][^\"'`\n]+[\"']\s*,\s*)*[\"'][^\"'`\n]+\.ya?ml[\"']"
_OWN_DIR_PATH = re.compile(
    r"`\$\{__dirname\}/([^`\n]+?\.ya?ml)`"
    r"|path\.(?:join|resolve)\(\s*__dirname\s*,\s*(" + _QUOTED_PARTS + r")\s*\)"
    r"|os\.path\.join\(\s*os\.path\.dirname\(\s*(?:os\.path\.(?:abspath|realpath)\(\s*__file__\s*\)|__file__)\s*\)"
    r"\s*,\s*(" + _QUOTED_PARTS + r")\s*\)"
    r"|Path\(\s*__file__\s*\)(?:\.resolve\(\))?\.parent((?:\s*/\s*[\"'][^\"'\n]+[\"'])+)")
_PARSES_YAML = re.compile(r"\b(?:yaml|YAML|jsyaml|jsYaml)\.(?:load|safeLoad|safe_load|parse|load_all|safe_load_all|"
                          r"loadAll|parseDocument)\s*\(")
# an assignment to a field of the parsed object: metadata.name = ..., spec.metrics = [],
# manifest["metadata"]["name"] = ...
_SETS_FIELD = re.compile(r"\b(?:metadata|spec)(?:\.[A-Za-z_$][\w$]*)+\s*=(?![=>])"
                         r"|\[[\"'](?:metadata|spec)[\"']\](?:\[[\"'][^\"'\n]+[\"']\])+\s*=(?!=)")


def filled_in_by(top: Path, run: object = None) -> dict[str, str]:
    """Repository-relative YAML paths (globs, where the program builds the
    name) that a Python or Node program of the repository reads by a path
    from its own directory, parses, and sets fields of -> that program."""
    out: dict[str, str] = {}
    for rel, text in (*_programs(top, run), *_programs(top, run, node=True)):
        if not rel.endswith((".py", *_NODE_SUFFIXES)) or not _PARSES_YAML.search(text) or \
                not _SETS_FIELD.search(text):
            continue
        folder = rel.rpartition("/")[0]
        for found in _OWN_DIR_PATH.finditer(text):
            if found.group(1) is not None:
                written = re.sub(r"\$\{[^}]*\}", "*", found.group(1))
            else:
                written = "/".join(re.findall(r"[\"']([^\"'`\n]+)[\"']", found.group(2) or found.group(3) or found.group(4)))
            joined = os.path.normpath(os.path.join(folder, written)).replace(os.sep, "/")
            if not joined.startswith("../"):
                out.setdefault(joined, rel)
    return out



# A Java program that loads a resource of its own package from the
# classpath (``getClass().getResourceAsStream("deployment.yaml")``, the file
# in src/main/resources/<package>/; a name starting with / from the root of
# src/main/resources) and sets fields of the object it decodes from it
# (``deployment.getMetadata().setName(...)``) before it creates it.
_JAVA_LOADS = re.compile(r"\.getResource(?:AsStream)?\(")
_JAVA_SETS = re.compile(r"\.get(?:Metadata|Spec)\(\)(?:\.get\w+\([^()]*\))*\.(?:set\w+|put)\(")
_JAVA_YAML = re.compile(r"\"(/?[\w./-]+\.ya?ml)\"")
_JAVA_SECONDS = 5.0
_JAVA_BYTES = 16 << 20


def _java_tree(directory: Path) -> bool:
    """Whether ``directory`` is Maven's or Gradle's ``src/main/java``."""
    return directory.name == "java" and directory.parent.name == "main" and directory.parent.parent.name == "src"


def _java_source(path: Path) -> bool:
    return path.name.endswith(".java") and any(_java_tree(p) for p in path.parents)

def java_loaded(top: Path) -> dict[str, str]:
    """Repository-relative YAML resources that a Java class of the
    repository loads from the classpath and sets fields of -> the class's
    source file. Only Maven's and Gradle's ``src/main/java`` trees are read."""
    out: dict[str, str] = {}
    for source, text in texts_under(top, _java_source, _PROGRAM_SKIP, _JAVA_SECONDS, _JAVA_BYTES):
        here = source.parent
        sources = next((p for p in (here, *here.parents) if _java_tree(p) and top in p.parents), None)
        if sources is None or not (_JAVA_LOADS.search(text) and _JAVA_SETS.search(text)):
            continue
        kept = sources.parent / "resources"
        package = here.relative_to(sources)
        for written in _JAVA_YAML.findall(text):
            found = kept / written.lstrip("/") if written.startswith("/") else kept / package / written
            if found.is_file():
                out.setdefault(_relative(found, top), _relative(source, top))
    return out

def patched_by(top: Path, run: object = None, pages: Iterable[tuple[Path, str]] | None = None) -> dict[str, str]:
    """Repository-relative YAML paths that a page or a program of the
    repository applies with ``kubectl patch`` -> the first such page or
    program."""
    out = _named_in_pages(top, _PATCHED, markdown_pages(top) if pages is None else pages)
    for rel, text in _programs(top, run):
        if "patch" in text:
            _note_paths(_PATCHED.findall(text), top / rel, top, rel, out)
            if "kubectl" in text:
                _note_paths(_patch_arguments(text), top / rel, top, rel, out)
    return out


# A kustomization a program writes (Terraform's yamlencode of a map whose
# patchesStrategicMerge holds file("${path.module}/kustomize/kured.yaml")):
# the files in its patches list are patches, not objects.
_PATCHES_LIST = re.compile(r"\bpatches(?:StrategicMerge)?\b[\"']?\s*[=:]\s*(?:concat\(\s*)?\[([^\]]*)\]")
_LISTED_FILE = re.compile(r"[\"'](?:\$\{path\.module\}/)?" + _YAML_PATH + r"[\"']")


def kustomize_patches_by(top: Path, run: object = None) -> dict[str, str]:
    """Repository-relative YAML paths a program of the repository lists
    among the patches of a kustomization it writes -> the program. A path
    names the file from the program's directory."""
    out: dict[str, str] = {}
    for rel, text in _programs(top, run):
        if not rel.endswith(".tf") or "patches" not in text:
            continue
        for listed in _PATCHES_LIST.findall(text):
            _note_paths(_LISTED_FILE.findall(listed), top / rel, top, rel, out)
    return out


def _patch_arguments(text: str) -> list[str]:
    """The files a program's kubectl argument list patches with."""
    found = []
    for literal, variable in _ARG_PATCH_FILE.findall(text):
        if literal:
            found.append(literal)
        else:
            given = re.search(rf"\b{re.escape(variable)}\s*:?=\s*[\"']" + _YAML_PATH + "[\"']", text)
            if given is not None:
                found.append(given.group(1))
    embedded = {var: path for path, var in _GO_EMBED.findall(text)}
    found += [embedded[var] for var in _ARG_PATCH_TEXT.findall(text) if var in embedded]
    return found


# A file a program gives to envsubst (``envsubst < FILE``, a8m's ``envsubst
# -i FILE``, ``cat FILE | envsubst``), its directory often a variable of the
# program (``$TESTS_DIR/pod.yaml``): envsubst also fills bare ``$NAME``.
_VAR_DIR = r"[\"']?(\$\{?\w+\}?/)?"
_ENVSUBST = re.compile(r"\benvsubst\b[^\n|;]*?(?:<|\s-i)\s*" + _VAR_DIR + _YAML_PATH + "|"
                       r"\bcat\s+" + _VAR_DIR + _YAML_PATH + r"[\"']?\s*\|\s*envsubst\b")


def envsubst_inputs(top: Path, run: object = None) -> list[tuple[str, str, str]]:
    """What the programs of the repository render with envsubst: (directory,
    path, program), each repository-relative. A path as written names the
    file from the top (as make runs) or from the program's directory
    (``directory`` empty); one below a directory the program names by a
    variable (``$TESTS_DIR/pod.yaml``) is any file of that path below the
    program's own directory."""
    out = []
    for rel, text in _programs(top, run):
        if "envsubst" not in text:
            continue
        here = _relative((top / rel).parent, top)
        for var_a, path_a, var_b, path_b in _ENVSUBST.findall(text):
            var, path = (var_a, path_a) if path_a else (var_b, path_b)
            if var:
                out.append(("" if here == "." else here, path, rel))
            else:
                out.append(("=", os.path.normpath(path), rel))
                out.append(("=", _relative(Path(os.path.normpath(top / here / path)), top), rel))
    return out


# `yq eval '.metadata.name = env(name) | ...' bundle.csv.yaml > out.yaml`: a
# file a program transforms with yq into another file (the expression may
# span lines, inside its quotes) is that program's input, not what is applied.
_YQ_TO_FILE = re.compile(r"^[ \t]*yq\b(?:[^'\"\n>|;&]|'[^']*'|\"[^\"]*\")*?[\s'\"]"
                         r"((?:[\w.-]+/)*[\w.-]+\.ya?ml)['\"]?[ \t]*>(?!>|&)", re.MULTILINE)


# `yq --yaml-roundtrip --arg v "$(yq 'first' <<<"$x")" '...' <bundle.csv.yaml \
#  >"$dir/manifests/x.clusterserviceversion.yaml"`: the same, the file read on
# yq's standard input (the command continued over lines).
_YQ_FROM_FILE = re.compile(r"^[ \t]*yq\b(?:[^'\"\n>|;&]|'[^']*'|\"[^\"]*\"|\\\n)*?<[ \t]*['\"]?"
                           r"((?:[\w.-]+/)*[\w.-]+\.ya?ml)['\"]?[ \t]*(?:\\\n[ \t]*)?>(?!>|&)", re.MULTILINE)


# ``cat "$DIR/manifest/ingress.yaml" | yq '.spec...name = "..."' - | kubectl
# apply -f -``: a file a program pipes into yq is transformed before it is
# applied; yq's output, not the file, is what the cluster receives.
_PIPED_TO_YQ = re.compile(r"(?<![\w-])cat\s+[\"']?(?:\$\{?\w+\}?/)?((?:[\w.-]+/)*[\w.-]+\.ya?ml)[\"']?\s*\|\s*yq\b")


def yq_inputs(top: Path, run: object = None) -> dict[str, str]:
    """Repository-relative paths of the files programs of the repository
    transform with yq into another file (the file named as yq's argument
    or given on its standard input, ``<FILE``), or pipe into yq (``cat FILE |
    yq ...``) -> the program. A path as written names the file from the
    program's directory or from the top; one piped into yq, after a
    variable holding a directory, from a directory above the program's too
    (``$DIR/cluster/aks/manifest/ingress.yaml``, ``DIR`` the scripts' top)."""
    out: dict[str, str] = {}
    for rel, text in _programs(top, run):
        if "yq" not in text:
            continue
        here = (top / rel).parent
        for path in (*_YQ_TO_FILE.findall(text), *_YQ_FROM_FILE.findall(text)):
            for candidate in (_relative(Path(os.path.normpath(here / path)), top), os.path.normpath(path)):
                out.setdefault(candidate, rel)
        for path in _PIPED_TO_YQ.findall(text.replace("\\\n", " ")):
            named = _named_from_here_or_above(path, here, top)
            if named is not None:
                out.setdefault(_relative(named, top), rel)
    return out


def _named_from_here_or_above(path: str, here: Path, top: Path) -> Path | None:
    """The file ``path`` names from ``here`` or the nearest directory above
    it (up to the top) where there is one (a script run from where its page
    says), if any."""
    for base in (here, *[d for d in here.parents if d == top or top in d.parents]):
        named = Path(os.path.normpath(base / path))
        try:
            if named.is_file():
                return named
        except OSError:  # a name too long for the file system: no such file
            continue
    return None


# `aws s3 cp pod-templates/driver.yaml s3://bucket/scripts/` (or gsutil's,
# gcloud storage's): a file a program of the repository copies to object
# storage is data for what reads it there (Spark reads its pod templates
# by spark.kubernetes.driver.podTemplateFile and fills in the image), not
# a manifest applied from this checkout.
_UPLOAD = re.compile(r"(?:^|[\s;&|(])(?:aws\s+s3\s+cp|gsutil\s+(?:-m\s+)?cp|gcloud\s+storage\s+cp)\s"
                     r"([^\n;&|#]*?\s(?:s3|gs)://\S*)", re.MULTILINE)


def uploaded_inputs(top: Path, run: object = None) -> dict[str, str]:
    """Repository-relative YAML files programs of the repository copy to
    object storage (``aws s3 cp``, ``gsutil cp``, ``gcloud storage cp``)
    -> the program. A path names the file from the program's directory or
    one above it (a script run from where its page says), or from the top."""
    out: dict[str, str] = {}
    for rel, text in _programs(top, run):
        if "s3://" not in text and "gs://" not in text:
            continue
        here = (top / rel).parent
        for found in _UPLOAD.finditer(text.replace("\\\n", " ")):
            for path in _ARG_PATH.findall(found.group(1)):
                named = _named_from_here_or_above(path, here, top)
                if named is not None:
                    out.setdefault(_relative(named, top), rel)
    return out


# `templatefile("${path.module}/../envs/app-root.tmpl.yaml", { env = var.env })`:
# a file a Terraform program renders is a template whose ${...} Terraform
# fills in before what it gives (a kubectl_manifest's yaml_body, a Helm
# release's values) is applied.
_TEMPLATEFILE = re.compile(r"\btemplatefile\(\s*\"((?:\$\{path\.(?:module|root|cwd)\}/)?[^\"$]+)\"")


def terraform_templates(top: Path, run: object = None) -> dict[str, str]:
    """Repository-relative paths of the files Terraform programs of the
    repository render with ``templatefile()`` -> the program. A path names
    the file from the program's directory (``${path.module}``, and
    ``${path.root}`` for a root module), or from the top (``${path.cwd}``)."""
    out: dict[str, str] = {}
    for rel, text in _programs(top, run):
        if not rel.endswith(".tf") or "templatefile" not in text:
            continue
        here = (top / rel).parent
        for path in _TEMPLATEFILE.findall(text):
            base = top if path.startswith("${path.cwd}/") else here
            named = Path(os.path.normpath(base / path.split("}/", 1)[-1]))
            out.setdefault(_relative(named, top), rel)
    return out


# `sed -e "s/service_name/$name/" ./external-services/template.yaml >
# env/$name.yaml` (or `| kubectl apply -f -`), in a program or a page's
# commands: the file is a template sed turns into what is applied; its words
# are no values. An in-place `sed -i` names no other output: no evidence.
_SED_COMMAND = re.compile(r"(?<![\w-])sed\s(?:[^'\"\n|>;&]|'[^'\n]*'|\"[^\"\n]*\")*?(?=[|>]|$)", re.MULTILINE)
_SED_SUBSTITUTES = re.compile(r"(?<![A-Za-z0-9\\])s([/|#,:@])[^\n]+?\1[^\n]*?\1")


def sed_inputs(top: Path, run: object = None, pages: Iterable[tuple[Path, str]] = ()) -> dict[str, str]:
    """Repository-relative YAML files a program or a Markdown page of the
    repository gives to a ``sed`` substitution whose output goes on (to a
    file or a pipe) -> that program or page. A path names the file from the
    top, or from the program's or page's directory."""
    out: dict[str, str] = {}
    sources = [(rel, text) for rel, text in _programs(top, run) if "sed" in text]
    sources += [(_relative(page, top), text) for page, text in pages if "sed" in text]
    for rel, text in sources:
        here = (top / rel).parent
        joined = text.replace("\\\n", " ")  # a command continued over lines
        for command in _SED_COMMAND.finditer(joined):
            if not joined.startswith(("|", ">"), command.end()) or "-i" in command.group(0).split():
                continue
            if not _SED_SUBSTITUTES.search(command.group(0)):
                continue
            for path in _ARG_PATH.findall(command.group(0)):
                for candidate in (_relative(Path(os.path.normpath(here / path)), top), os.path.normpath(path)):
                    out.setdefault(candidate, rel)
    return out


# `istioctl manifest generate -f ./istio-operator.yml > ./istio-kubernetes.yml`,
# in a program or a page's commands: the file given with -f is the input of a
# generator whose output, another YAML file, is what is applied. Programs
# that apply what they are given (kubectl, helm...) are no such evidence.
_GENERATED = re.compile(r"(?:^|[\s;&|(`$>])([\w.-]+)\s((?:[^\n|;&>]*?\s)?(?:-f|--filename|--file)(?:=|\s+)"
                        r"[^\n|;&>]*)>\s*[\"']?\.?/?((?:[\w.$-]+/)*[\w.$-]+\.ya?ml)", re.MULTILINE)
# each file the command is given (`-f profile.yaml -f profile-overlay.yaml`)
_GIVEN = re.compile(r"(?:^|\s)(?:-f|--filename|--file)(?:=|\s+)[\"']?\.?/?((?:[\w.-]+/)*[\w.-]+\.ya?ml)\b")


# `oc process -f ${BASEDIR}/deploy.yaml -p NAME=... | oc apply -f -`: oc
# renders an OpenShift Template on the client (its legacy `v1` form too:
# openshift/api's template/v1 legacy scheme) and what is applied is the
# objects it writes; the Template file is that command's input.
_OC_PROCESS = re.compile(r"(?<![\w-])oc\s+process\b([^\n|;&>]*)")
# a page's fill-in for the file (``oc process -f <template_file>``) and the
# Template kind of an OpenShift Template it then stands for
_PROCESSED_FORM = re.compile(r"(?:^|\s)(?:-f|--filename)(?:=|\s+)<[\w.-]+(?:>|$)")  # (a > ends the command)
_TEMPLATE_KIND = re.compile(r"^kind:[ \t]*[\"']?Template[\"']?[ \t]*$", re.MULTILINE)
_PROCESSED = re.compile(r"(?:^|\s)(?:-f|--filename)(?:=|\s+)[\"']?((?:\$\{?\w+\}?/)?(?:[\w.-]+/)*[\w.-]+\.(?:ya?ml|json))\b")


def processed_by(top: Path, run: object = None, pages: Iterable[tuple[Path, str]] = ()) -> dict[str, str]:
    """Repository-relative Template files a program or a Markdown page of
    the repository gives to ``oc process`` with ``-f`` -> that program or
    page. A path names the file from the program's or page's directory
    (after a variable holding that directory, ``${BASEDIR}/deploy.yaml``)
    or from the top; only a file that is there counts."""
    out = _given_files(top, run, pages, ("oc process", "oc  process"),
                       lambda text: (path for arguments in _OC_PROCESS.findall(text)
                                     for path in _PROCESSED.findall(arguments)))
    for page, text in pages:  # ``oc process -f <template_file>``: the Templates beside the page
        if "oc process" in text and any(_PROCESSED_FORM.search(a) for a in _OC_PROCESS.findall(text)):
            try:
                names = sorted(os.listdir(page.parent))
            except OSError:
                continue
            for name in names:
                path = page.parent / name
                if name.endswith((".yaml", ".yml", ".json")) and path.is_file() and _is_template(path):
                    out.setdefault(_relative(path, top), _relative(page, top))
    return out


def _is_template(path: Path) -> bool:
    """Whether the file's kind is an OpenShift Template (a file that cannot
    be read is not; the search for manifests reports it)."""
    try:
        return _TEMPLATE_KIND.search(read_text_bounded(path)) is not None
    except (OSError, ValueError):
        return False


# ``kpt fn eval DIR -i IMAGE --fn-config config.yaml`` (and ``kustomize fn
# run``): the file is the function's configuration (its ``functionConfig``),
# which kpt hands to the function; no cluster receives it.
_FN_CONFIG = re.compile(r"--fn-config(?:=|\s+)[\"']?((?:\$\{?\w+\}?/)?(?:[\w.-]+/)*[\w.-]+\.ya?ml)\b")


def function_configs(top: Path, run: object = None, pages: Iterable[tuple[Path, str]] = ()) -> dict[str, str]:
    """Repository-relative files a program or a Markdown page of the
    repository gives to a KRM function runner with ``--fn-config`` -> that
    program or page (paths as :func:`processed_by` reads them)."""
    return _given_files(top, run, pages, ("--fn-config",), _FN_CONFIG.findall)


def _given_files(top: Path, run: object, pages: Iterable[tuple[Path, str]], markers: tuple[str, ...],
                 paths: Callable[[str], Iterable[str]]) -> dict[str, str]:
    """Repository-relative files that ``paths`` finds in the programs and
    pages holding one of ``markers`` (continued lines joined) -> the program
    or page; a path from its directory, after a variable holding that
    directory, or from the top; only a file that is there counts."""
    out: dict[str, str] = {}
    sources = [(rel, text) for rel, text in _programs(top, run) if any(m in text for m in markers)]
    sources += [(_relative(page, top), text) for page, text in pages if any(m in text for m in markers)]
    for rel, text in sources:
        here = (top / rel).parent
        for path in paths(text.replace("\\\n", " ")):
            path = re.sub(r"^\$\{?\w+\}?/", "", path)
            for candidate in (Path(os.path.normpath(here / path)), Path(os.path.normpath(top / path))):
                if top in candidate.parents and candidate.is_file():
                    out.setdefault(_relative(candidate, top), rel)
                    break
    return out


# ``istioctl install -y -f resources/istio-operator.yaml`` (an istioctl of a
# version's name, ``istioctl1.10``, ``$(bin_dir)/istioctl-$(ISTIO_VERSION)``,
# and ``istioctl manifest install``, ``istioctl upgrade`` too): istioctl reads
# the IstioOperator on the client, renders the control plane from it and
# installs that; the file is its input, which needs no name.
_ISTIOCTL_INSTALL = re.compile(r"(?<![\w-])istioctl[\w.$(){}-]*\s+(?:manifest\s+)?(?:install|upgrade)\b([^\n|;&>]*)")


def istioctl_installs(top: Path, run: object = None, pages: Iterable[tuple[Path, str]] = ()) -> dict[str, str]:
    """Repository-relative files a program or a Markdown page of the
    repository gives to ``istioctl install`` with ``-f`` (a variable the
    program gives one path standing for it) -> that program or page."""
    return _given_files(top, run, pages, ("istioctl",),
                        lambda text: (path for arguments in _ISTIOCTL_INSTALL.findall(_expanded(text))
                                      for path in _PROCESSED.findall(arguments)))


def generated_from(top: Path, run: object = None, pages: Iterable[tuple[Path, str]] = ()) -> dict[str, str]:
    """Repository-relative YAML files a program or a Markdown page of the
    repository gives with ``-f`` to a command whose output it writes into
    another YAML file -> that program or page. A path names the file from
    the top, or from the program's or page's directory."""
    out: dict[str, str] = {}
    sources = [(rel, text) for rel, text in _programs(top, run) if ">" in text]
    sources += [(_relative(page, top), text) for page, text in pages if ">" in text]
    for rel, text in sources:
        here = (top / rel).parent
        for command, arguments, output in _GENERATED.findall(text.replace("\\\n", " ")):
            if command in _APPLIERS:
                continue
            for path in _GIVEN.findall(arguments):
                if os.path.basename(path) == os.path.basename(output):
                    continue
                for candidate in (_relative(Path(os.path.normpath(here / path)), top), os.path.normpath(path)):
                    out.setdefault(candidate, rel)
    return out


def markdown_pages(top: Path) -> list[tuple[Path, str]]:
    """(path, text) of the repository's Markdown pages, bounded in time and size."""
    out = []
    for directory, names in _walk(top, _PAGES_SECONDS):
        for name in names:
            if not name.endswith((".md", ".markdown")):
                continue
            page = directory / name
            try:
                if page.stat().st_size > _PAGE_BYTES or not page.is_file():
                    continue
                out.append((page, page.read_text(encoding="utf-8", errors="replace")))
            except OSError:
                continue
    return out


# kubectl's report that the API server refuses an object: `Service
# "multiport-broken" is invalid: spec.ports[1].name: Required value`, `The
# ConfigMap "c" is invalid:`, `Deployment.apps "d" is invalid:`.
_REFUSED = re.compile(r"\b([A-Z][A-Za-z0-9]*)(?:\.[a-z0-9-]+)*\s+\"([^\"\n]+)\"\s+is invalid:")
_MENTIONED = re.compile(r"(?<![\w/-])" + _YAML_PATH + r"\b")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_HEADING = re.compile(r"^#{1,6}[ \t]")


def _sections(text: str) -> Iterator[str]:
    """A Markdown page's sections, each from a heading to the next one
    (a line starting ``#`` inside a fenced code block is a comment, not a heading)."""
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and _HEADING.match(line) and lines:
            yield "\n".join(lines)
            lines = []
        lines.append(line)
    if lines:
        yield "\n".join(lines)


def refused_in_pages(top: Path, pages: Iterable[tuple[Path, str]]) -> dict[str, tuple[str, frozenset[tuple[str, str]]]]:
    """Repository-relative YAML paths a Markdown page shows refused -> (the
    page, the (kind, name) of each object the refusals name): a section of
    the page names the file (as a path from the page's directory or from the
    top) and quotes kubectl's report that the API server refuses an object
    (`Service "multiport-broken" is invalid: ...`). An exercise that asks the
    reader to find what is wrong, or a page showing what the API server
    refuses, keeps such a case invalid on purpose."""
    out: dict[str, tuple[str, frozenset[tuple[str, str]]]] = {}
    for page, text in pages:
        if "is invalid:" not in text:
            continue
        shown = _relative(page, top)
        for section in _sections(text):
            refused = frozenset(_REFUSED.findall(section))
            if not refused:
                continue
            for path in _MENTIONED.findall(section):
                for candidate in (path, _relative(Path(os.path.normpath(page.parent / path)), top)):
                    had = out.get(candidate)
                    out[candidate] = (had[0] if had else shown, (had[1] if had else frozenset()) | refused)
    return out


def _named_in_pages(top: Path, pattern: re.Pattern[str], pages: Iterable[tuple[Path, str]]) -> dict[str, str]:
    """Repository-relative YAML paths ``pattern`` finds in a Markdown page -> the first such page."""
    out: dict[str, str] = {}
    for page, text in pages:
        _note_paths(pattern.findall(text), page, top, _relative(page, top), out)
    return out


def _note_paths(found: Iterable[str], page: Path, top: Path, shown: str, out: dict[str, str]) -> None:
    """Each path as written and as relative to the page's directory -> ``shown``."""
    for path in found:
        for candidate in (path, _relative(Path(os.path.normpath(page.parent / path)), top)):
            out.setdefault(candidate, shown)
        out.setdefault(f"*/{path}", shown)  # a path below the site's include directory


# `mactl create -f volume-0.yaml` on a page: a command that creates or
# applies the file it reads with -f (or --filename, --file) and is no
# Kubernetes client gives it to another API (a generator's input,
# `istioctl manifest generate -f`, is another rule's). A line that runs kubectl or another client that applies what
# it is given (`k3s kubectl apply -f`, the alias `k`) is none.
_GIVEN_WITH_F = re.compile(r"^[ \t>$]*(?:sudo[ \t]+)?(?:\./)?([A-Za-z][\w.-]*)[ \t]((?:[^\n|;&]*?[ \t])?(?:create|apply)\b[^\n|;&]*?)[ \t]"
                           r"(?:-f|--filename|--file)(?:=|[ \t]+)[\"']?\.?/?((?:[\w.-]+/)*[\w.-]+\.ya?ml)\b",
                           re.MULTILINE)
_CLIENTS = _APPLIERS | {"k", "kubecolor", "k3s", "microk8s", "minikube", "k0s", "rke2", "openshift-install"}
# every apiVersion and kind of a file's documents, in order
_KINDS = re.compile(r"^apiVersion:[ \t]*[\"']?([^\s\"'#]+)[\"']?[ \t]*(?:#.*)?\n(?:(?![ \t]*-{3}).*\n)*?"
                    r"^kind:[ \t]*[\"']?([^\s\"'#]+)", re.MULTILINE)


def given_to_clients(top: Path, pages: Iterable[tuple[Path, str]]) -> dict[str, str]:
    """Repository-relative YAML paths a Markdown page gives with ``-f`` to a
    command that is no Kubernetes client, and their directories (``DIR/``)
    -> the first such page; a path a page gives to a Kubernetes client too
    -> "" (the API server's, whatever else reads it)."""
    out: dict[str, str] = {}
    kube: dict[str, str] = {}
    for page, text in pages:
        other: list[str] = []
        client: list[str] = []
        for command, between, path in _GIVEN_WITH_F.findall(text):
            kubernetes = command in _CLIENTS or any(w in _CLIENTS for w in between.split())
            (client if kubernetes else other).append(path)
        _note_paths(other, page, top, _relative(page, top), out)
        _note_paths(client, page, top, "", kube)
        for path in other:  # and the directory of each, as "DIR/"
            where = _relative(Path(os.path.normpath(page.parent / path)), top)
            out.setdefault(where.rpartition("/")[0] + "/", _relative(page, top))
    return out | kube


# --- inputs of operator-sdk's bundle generator --------------------------------------------

# `kustomize build DIR | operator-sdk generate bundle`, in a Makefile or a
# script: the build's output is the generator's input, which completes the
# ClusterServiceVersion base (its deployments, permissions) before anything
# is applied. Make variables are resolved from the same file.
_BUILD_ARG = re.compile(r"\bbuild\s+[\"']?((?:\$\([A-Za-z_]\w*\)|[^\s|;\"')])+)")
_MAKE_VAR = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*[?:]?=\s*(\S+)\s*$", re.MULTILINE)
_SCRIPT_NAMES = ("Makefile", "makefile", "GNUmakefile")
_SCRIPT_SUFFIXES = (".mk", ".sh")


def bundle_inputs(top: Path, run: object = None) -> frozenset[str]:
    """The directories (as path suffixes, ``config/manifests``) whose build
    a script of the repository pipes into ``operator-sdk generate bundle``;
    a Makefile below the top (a project of a monorepo,
    ``operators/x/Makefile``) names them from its own directory, or, where
    no such directory is there, from the nearest directory above it that
    has it (a Makefile kept in ``operator/config`` and run from
    ``operator/`` with ``make -f config/Makefile``)."""
    out: set[str] = set()
    scripts = (top, top / "hack", top / "scripts", top / "make")
    for rel, text in _programs(top, run):
        folder, _, name = rel.rpartition("/")
        if folder and name in _SCRIPT_NAMES and top / folder not in scripts and "generate bundle" in text:
            for suffix in _piped_to_bundle(text):
                homes = [Path(folder), *Path(folder).parents]
                home = next((h for h in homes if (top / h / suffix).is_dir()), Path(folder))
                out.add(suffix if home == Path(".") else f"{home.as_posix()}/{suffix}")
    for directory in scripts:
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            if name in _SCRIPT_NAMES or name.endswith(_SCRIPT_SUFFIXES):
                try:
                    text = (directory / name).read_text(encoding="utf-8", errors="replace")[:1 << 20]
                except OSError:
                    continue
                out |= _piped_to_bundle(text)
    return frozenset(out)


def csv_base(path: Path, top: Path | None = None, run: object = None) -> str | None:
    """Why the ClusterServiceVersion at ``path`` is operator-sdk's base, the
    input ``operator-sdk generate bundle`` completes with the manager's
    deployment and permissions (and names, with ``--version``): it has no
    install strategy yet (``strategy: ""``, ``deployments: null``), so OLM
    could not install it; or (given the repository's ``top``) it has no
    deployment to install and lies where the generator reads its base,
    ``bases/`` of a kustomization's directory (``--kustomize-dir``,
    ``config/manifests`` unless given), in a repository whose programs run
    ``generate bundle``."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if "ClusterServiceVersion" not in text or "install" not in text:
        return None
    try:
        docs = [d for d in yaml.load_all(text, Loader=FAST_LOADER) if isinstance(d, dict)]
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    for doc in docs:
        spec = doc.get("spec")
        install = spec.get("install") if isinstance(spec, dict) else None
        if doc.get("kind") != "ClusterServiceVersion" or not isinstance(install, dict):
            continue
        body = install.get("spec")
        if isinstance(body, dict) and body.get("deployments"):
            continue  # a deployment to install: what OLM installs
        if not install.get("strategy"):
            return "operator-sdk's ClusterServiceVersion base (no install strategy yet), which operator-sdk " \
                   "generate bundle completes"
        if top is not None and path.parent.name == "bases" and \
                any((path.parent.parent / n).is_file() for n in KUSTOMIZATION_FILES) and \
                any(_GENERATES_BUNDLE.search(program) for _, program in _programs(top, run)):
            return "operator-sdk's ClusterServiceVersion base (bases/ beside a kustomization, no deployment to " \
                   "install yet), which the repository's operator-sdk generate bundle reads and completes"
    return None


_GENERATES_BUNDLE = re.compile(r"\bgenerate\s+bundle\b")


CSV_SUFFIXES = (".clusterserviceversion.yaml", ".clusterserviceversion.yml")


def olm_bundle(path: Path, top: Path) -> str | None:
    """Why ``path`` is a file of a package a package manager installs (never
    applied with kubectl as it stands): an OLM package or bundle, which OLM's
    registry reads from a catalog image (a directory above it holds a package
    manifest, ``*.package.yaml`` with ``packageName``, or bundle metadata,
    ``metadata/annotations.yaml`` with the ``operators.operatorframework.io.bundle``
    annotations), or a Crossplane package (``crossplane.yaml`` of
    ``meta.pkg.crossplane.io``), whose package manager completes its CRDs'
    conversion webhooks."""
    for directory in _below(path, top):
        found = _olm_marker(directory)
        if found is not None:
            return found
    return None


@functools.lru_cache(maxsize=4096)
def _olm_marker(directory: Path) -> str | None:
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    for name in sorted(names):
        if name.endswith((".package.yaml", ".package.yml")):
            try:
                text = (directory / name).read_text(encoding="utf-8", errors="replace")[:65536]
            except OSError:
                continue
            if re.search(r"^packageName:", text, re.MULTILINE):
                return f"an OLM package ({name})"
    for name in ("crossplane.yaml", "crossplane.yml"):
        try:
            if re.search(r"^apiVersion:[ \t]*[\"']?meta\.pkg\.crossplane\.io/",
                         (directory / name).read_text(encoding="utf-8", errors="replace")[:65536], re.MULTILINE):
                return f"a Crossplane package ({name})"
        except OSError:
            pass
    annotations = directory / "metadata" / "annotations.yaml"
    try:
        if "operators.operatorframework.io.bundle.manifests" in annotations.read_text(
                encoding="utf-8", errors="replace")[:65536]:
            return "an OLM bundle (metadata/annotations.yaml)"
    except OSError:
        pass
    return None


_INPUT_DIR = re.compile(r"--input-dir[= ]\s*[\"']?([^\s\"';|&]+)")
_CD = re.compile(r"\bcd\s+[\"']?([^\s\"';|&]+)[\"']?\s*&&")


def _piped_to_bundle(text: str) -> set[str]:
    values = dict(_MAKE_VAR.findall(text))
    found = set()
    for line in text.replace("\\\n", " ").splitlines():
        input_dir = _INPUT_DIR.search(line) if "generate bundle" in line else None
        if input_dir is not None:
            # `cd deploy/operator && operator-sdk generate bundle --input-dir config`
            given = input_dir.group(1)
            before = _CD.findall(line.split("generate bundle")[0])
            joined = (before[-1] + "/" if before and not given.startswith("/") else "") + given
            kept = [p for p in joined.split("/") if p not in ("", ".", "..") and "$" not in p and "(" not in p]
            if len(kept) >= 2 or (kept and not before):
                found.add("/".join(kept))
            continue
        if "|" in line and "generate bundle" not in line:
            found |= _piped_to_own_program(line, values)
            continue
        if "generate bundle" not in line or "|" not in line:
            continue
        for arg in _BUILD_ARG.findall(line.split("generate bundle")[0]):
            arg = re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: values.get(m.group(1), "\0"), arg)
            arg = re.split(r"[})]", arg)[-1]  # after a shell variable: "${TMP}/config/x" -> /config/x
            suffix = "/".join(p for p in arg.split("/") if p not in ("", ".", ".."))
            if suffix and "\0" not in suffix and "$" not in suffix:
                found.add(suffix)
    return found


_RUNS = re.compile(r"^\s*(?:go\s+run|python3?|node|bash|sh)?\s*\.?/?([\w./*-]+)")
_BUILT_DIR = re.compile(r"\bbuild\b(.*)$")


def _piped_to_own_program(line: str, values: dict[str, str]) -> set[str]:
    """``kustomize build DIR | go run DIR/*.go``: a build piped into a
    program kept in the built directory itself (gatekeeper's helmify, which
    turns the output into a Helm chart), whose input the build is. The
    directory, as the program names it (a container may mount the
    repository elsewhere: ``/src/DIR``)."""
    built, _, rest = line.partition("|")
    after = _BUILT_DIR.search(built)
    runs = _RUNS.match(rest.split("|")[0])
    if after is None or runs is None:
        return set()
    args = [a.strip("\"'") for a in after.group(1).split() if not a.startswith("-")]
    args = [re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: values.get(m.group(1), "\0"), a) for a in args]
    directory = "/".join(p for p in runs.group(1).split("/")[:-1] if p not in ("", "."))
    if directory.count("/") < 1 or "$" in directory:
        return set()  # a program at the top, or one level down, says too little
    for arg in args:
        path = "/".join(p for p in arg.split("/") if p not in ("", ".", ".."))
        if "\0" not in path and (path == directory or path.endswith("/" + directory)):
            return {directory}
    return set()


# --- overlays Rancher Fleet applies to a chart's output ----------------------------------

# A fleet.yaml with ``helm`` (a chart) and ``kustomize.dir`` (at the top or in
# a ``targetCustomizations`` entry): Fleet renders the chart, then applies the
# kustomization in that directory to the chart's output, whose objects its
# patches name; built alone it is not what Fleet applies.
_FLEET_NAMES = ("fleet.yaml", "fleet.yml")
_FLEET_SECONDS = 5.0


def fleet_overlays(top: Path) -> dict[str, str]:
    """Repository-relative directories Fleet applies to a Helm chart's output -> the fleet.yaml."""
    out: dict[str, str] = {}
    for directory, filenames in _walk(top, _FLEET_SECONDS):
        for name in _FLEET_NAMES:
            if name not in filenames:
                continue
            path = directory / name
            try:
                doc = yaml.load(read_text_bounded(path), Loader=FAST_LOADER)
            except (OSError, ValueError, yaml.YAMLError, RecursionError):
                continue
            if not isinstance(doc, dict) or not isinstance(doc.get("helm"), dict):
                continue
            entries = [doc] + [t for t in doc.get("targetCustomizations") or () if isinstance(t, dict)]
            for entry in entries:
                kustomize = entry.get("kustomize")
                given = kustomize.get("dir") if isinstance(kustomize, dict) else None
                if isinstance(given, str) and given.strip():
                    overlay = os.path.normpath(os.path.join(directory, given.strip()))
                    out.setdefault(_relative(Path(overlay), top), _relative(path, top))
    return out


# --- files a program of the repository writes ------------------------------------------

# Programs that write a kustomization's inputs before it is built: build
# scripts, and test code that writes an overlay's files.
_PROGRAM_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile", "Taskfile.yaml", "Taskfile.yml", "justfile"})
# the parts of a Makefile split by purpose, which it includes (``include
# Makefile.build``) or ``make -f`` reads: ``Makefile.build``, ``Makefile.e2e``
_MAKEFILE_PART = re.compile(r"(?:GNUm|[Mm])akefile\.[\w.-]+")
_PROGRAM_SUFFIXES = (".sh", ".bash", ".bats", ".mk", ".go", ".py", ".tf")
_PROGRAMS_BYTES = 64 << 20  # read at most this much program text in all
_PROGRAMS_SECONDS = 10.0
# Ansible's task lists (``tasks/NAME.yml`` calling ``ansible.builtin.template``,
# ``ansible.builtin.copy``...) are programs too: a play that copies a
# kustomization elsewhere and renders the file it lists beside the copy.
_ANSIBLE_DIRS = frozenset({"tasks", "handlers", "playbooks"})
_PROGRAM_SKIP = frozenset({".git", "node_modules", "vendor", ".venv", "third_party"})


# Node programs (JavaScript, TypeScript), read only by the rules that ask
# for them, and kept only when they name their own directory (__dirname).
_NODE_SUFFIXES = (".js", ".mjs", ".cjs", ".ts")

_READ: dict[tuple[Path, int, object], tuple[object, tuple[tuple[str, str], ...], journal.Reads]] = {}


def _programs(top: Path, run: object, node: bool = False, pages: bool = False,
              told: bool = False) -> tuple[tuple[str, str], ...]:
    """(repository-relative path, text) of the repository's programs (with
    ``node``, of its Node programs that name their own directory; with
    ``pages``, of its Markdown pages that run ``sed``; with ``told``, of
    its Markdown pages that tell the reader to fill in a word), bounded in
    bytes and time; read once per ``run`` (an object the run keeps), and
    each root that uses them counts as having read them (the render cache)."""
    reader = _read_told_pages if told else _read_sed_pages if pages else \
        _read_node_programs if node else _read_programs
    if run is None:
        return reader(top)  # no run to keep them for
    key = (top, id(run), "told" if told else "pages" if pages else node)
    kept = _READ.get(key)
    if kept is not None and kept[0] is run:
        journal.replay(kept[2])
        return kept[1]
    if len(_READ) > 8:
        _READ.clear()
    reads = journal.start()
    try:
        found = reader(top)
    finally:
        read = journal.stop(reads)
    _READ[key] = (run, found, read)
    return found


def _read_node_programs(top: Path) -> tuple[tuple[str, str], ...]:
    total, out = 0, []
    for directory, filenames in _walk(top, _PROGRAMS_SECONDS, _PROGRAM_SKIP):
        if total > _PROGRAMS_BYTES:
            break
        for name in filenames:
            if not name.endswith(_NODE_SUFFIXES) or name.endswith((".min.js", ".d.ts")):
                continue
            path = directory / name
            try:
                if not path.is_file() or path.stat().st_size > (1 << 20):
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            total += len(text)
            if "__dirname" in text:
                out.append((_relative(path, top), text))
    return tuple(out)


def _read_programs(top: Path) -> tuple[tuple[str, str], ...]:
    total, out = 0, []
    for directory, filenames in _walk(top, _PROGRAMS_SECONDS, _PROGRAM_SKIP):
        if total > _PROGRAMS_BYTES:
            break
        tasks = any(part in _ANSIBLE_DIRS for part in directory.relative_to(top).parts[-3:])
        for name in filenames:
            if name in _PROGRAM_NAMES or name.endswith(_PROGRAM_SUFFIXES) or _MAKEFILE_PART.fullmatch(name) or \
                    (tasks and name.endswith((".yml", ".yaml"))) or ("." not in name and _shebang(directory / name)):
                path = directory / name
                try:
                    if not path.is_file() or path.stat().st_size > (1 << 20):
                        continue
                    text = path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if tasks and name.endswith((".yml", ".yaml")) and "ansible.builtin." not in text:
                    continue  # a YAML file in tasks/ that calls no Ansible module is no program
                total += len(text)
                out.append((_relative(path, top), text))
    return tuple(out)


def _read_sed_pages(top: Path) -> tuple[tuple[str, str], ...]:
    return _read_pages(top, lambda text: "sed" in text)


def _read_told_pages(top: Path) -> tuple[tuple[str, str], ...]:
    return _read_pages(top, lambda text: _TOLD_FILL.search(text) is not None)


def _read_pages(top: Path, wanted: Callable[[str], bool]) -> tuple[tuple[str, str], ...]:
    out = []
    for directory, filenames in _walk(top, _PAGES_SECONDS, _PROGRAM_SKIP):
        for name in filenames:
            if not name.endswith((".md", ".markdown")):
                continue
            path = directory / name
            try:
                if not path.is_file() or path.stat().st_size > _PAGE_BYTES:
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if wanted(text):
                out.append((_relative(path, top), text))
    return tuple(out)


def _shebang(path: Path) -> bool:
    """Whether a file without a suffix is a script (``#!/bin/bash``: a Helm
    post-renderer, a ``render`` beside a kustomization)."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def written_by(top: Path, missing: Path, directory: Path | None = None, run: object = None,
               kustomization: Path | None = None) -> str | None:
    """A program of the repository that names a file a kustomization reads
    and the repository does not hold (a Makefile target, a test that writes
    an overlay), or that copies the kustomization's directory elsewhere (a
    script that puts the overlay beside the files it fetches, or a copy-me
    template it copies to the depth its paths are written for): the build
    is completed when that program runs. A program that only builds the
    directory is no evidence: its build would fail too."""
    made = _made_beside(top, missing, run) or _made_at(top, missing, run) or _from_template(top, missing, run) \
        or (_copied_from(top, kustomization, run) if kustomization is not None else None)
    if made is not None:
        return made
    name = missing.name
    if len(name) < 6 or "." not in name:
        return None  # too short a name to be evidence
    # every kustomize Makefile names kustomization.yaml: only a copy says it is made
    written = re.compile(r"(?!)") if name in KUSTOMIZATION_FILES else \
        re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-])")
    parts = _relative(directory, top).split("/") if directory is not None else []
    # a directory path of two parts or more, named from the top or from a subproject
    places = [re.escape("/".join(parts[i:])) for i in range(len(parts) - 1)]
    copied = re.compile(rf"^\s*(cp|rsync|mv|install)\s.*(?<![\w.-])({'|'.join(places)})(?![\w-])",
                        re.MULTILINE) if places else None
    near = parts

    def closeness(rel: str) -> int:  # the program nearest the file names it first
        shared = 0
        for a, b in zip(rel.split("/")[:-1], near):
            if a != b:
                break
            shared += 1
        return -shared

    # a program elsewhere in the repository (no leading directory in common,
    # not at the top) that names the bare file name says nothing of this one:
    # a test writing base/mykind.yaml into its own in-memory file system
    # ... unless it also names the file's directory, or the kustomization's
    # (a play that copies bootstrap/cilium/kustomization.yaml and renders
    # application.yaml beside the copy)
    with_parent = re.compile(rf"(?<![\w.-]){re.escape(missing.parent.name)}/{re.escape(name)}(?![\w-])")
    named_dir = re.compile(rf"(?<![\w.-])(?:{'|'.join(places)})(?:/|(?![\w.-]))") if places else None
    for rel, text in sorted(_programs(top, run), key=lambda p: closeness(p[0])):
        if written.search(text) and (closeness(rel) < 0 or "/" not in rel or with_parent.search(text)
                                     or (named_dir is not None and named_dir.search(text))):
            return rel
        if copied is not None and copied.search(text):
            return rel
    return None


def written_by_page(top: Path, missing: Path, files: Files | None = None) -> str | None:
    """A Markdown page in the missing file's own directory whose command
    writes that file by name, its output redirected to it (``oc get secret
    ... | base64 -d > ca.crt``, ``... | tee tls.key``): the page has the
    reader make the file before the kustomization beside it is built."""
    directory = missing.parent
    if not directory.is_dir():
        return None
    name = re.escape(missing.name)
    writes = re.compile(rf"(?:>>?|\btee(?:[ \t]+-a)?)[ \t]*[\"']?(?:\./)?{name}[\"']?(?![\w.-])")
    for page in sorted(directory.iterdir()):
        if not page.name.endswith((".md", ".markdown")) or not page.is_file():
            continue
        try:
            if page.stat().st_size > _PAGE_BYTES:
                continue
            text = files.read_text(page) if files is not None else page.read_text(encoding="utf-8", errors="replace")
        except (OSError, BuildError):
            continue
        if writes.search(text):
            return _relative(page, top)
    return None


_COMMAND_END = re.compile(r"\s*(?:&&|\|\||[;|])")
_CONTENTS = re.compile(r"/(?:\*|\.)$")  # cp -r DIR/* DEST, cp -r DIR/. DEST: what DIR holds


def _copied_from(top: Path, directory: Path, run: object) -> str | None:
    """A program that copies the kustomization's directory, or a directory
    holding it, to somewhere else (``cp -r docs/examples/cluster-template
    "$PROJECT/ns/cluster"``, then a build of the copy): the directory is a
    template whose relative paths are written for where the copy lands. The
    directory is named as a source of the copy, by its path from the
    program's directory or from the repository's top (two parts or more);
    ``cp -r DIR/* DEST`` and ``cp -r DIR/. DEST`` copy what DIR holds, so
    they name DIR as well."""
    rel = _relative(directory, top)
    if rel in ("", "."):
        return None
    parts = rel.split("/")
    held = {"/".join(parts[:end]) for end in range(2, len(parts) + 1)}  # the directory and those holding it
    for program, text in _programs(top, run):
        if not any(p in text for p in held):
            continue
        home = _relative((top / program).parent, top)
        for command, rest in _MAKES.findall(text.replace("\\\n", " ")):
            if command not in ("cp", "rsync"):
                continue
            command_line = _COMMAND_END.split(rest, maxsplit=1)[0]
            args = [_CONTENTS.sub("", _PATH_PREFIX.sub("", a.strip("\"'"))).rstrip("/")
                    for a in command_line.split() if not a.startswith("-")]
            for source in args[:-1]:
                for named in (source, os.path.normpath(f"{home}/{source}") if home not in ("", ".") else source):
                    if named in held:
                        return program
    return None


_TEMPLATE_SUFFIXES = (".in", ".tmpl", ".template", ".tpl")


def _from_template(top: Path, missing: Path, run: object) -> str | None:
    """A program that names the template lying beside the missing file
    (``kustomization.yaml.in``, which a Makefile copies to
    ``kustomization.yaml`` and edits before the build)."""
    for suffix in _TEMPLATE_SUFFIXES:
        template = missing.with_name(missing.name + suffix)
        if not os.path.isfile(template):
            continue
        named = re.compile(rf"(?<![\w.-]){re.escape(template.name)}(?![\w-])")
        for rel, text in _programs(top, run):
            if template.name in text and named.search(text):
                return rel
    return None


def _first_absent(missing: Path) -> Path:
    """The outermost directory of ``missing`` that does not exist (``missing``
    itself when its directory does), joined lexically as kustomize joins
    entries (a/b/../c)."""
    absent = Path(os.path.normpath(missing))
    while absent.parent != absent and not os.path.lexists(absent.parent):
        absent = absent.parent
    return absent


def _made_beside(top: Path, missing: Path, run: object) -> str | None:
    """A program in the directory where the missing path's first absent
    directory would be that makes a directory of that name (``mkdir -p
    $TMP/argo-cd``, ``git clone URL argo-cd``): it completes a copy of its
    own directory (``cp -r $SCRIPTPATH/* $TMP``) before the build."""
    absent = _first_absent(missing)
    if absent == Path(os.path.normpath(missing)) or absent.parent == absent or top not in absent.parents:
        return None  # a file, not a directory, is what is missing; or it is outside the repository
    name = absent.name
    if len(name) < 4:
        return None  # too short a name to be evidence
    makes = re.compile(rf"\b(?:mkdir|git\s+clone)\b[^\n]*[\s/\"'](?:{re.escape(name)})(?![\w.-])")
    here = _relative(absent.parent, top)
    for rel, text in _programs(top, run):
        if _relative((top / rel).parent, top) == here and name in text and makes.search(_expanded(text)):
            return rel
    return None


# ``BASE_DIR="./base"`` in a script, ``OUT ?= build/crds`` in a Makefile: a
# variable given one path, literal or made of other variables
# (``generated_dir="${install_dir}/generated"``), no command in it
_ASSIGNED = re.compile(r"""^[ \t]*(?:export[ \t]+|readonly[ \t]+|local[ \t]+)?([A-Za-z_]\w*)[ \t]*(?::=|\?=|=)[ \t]*"""
                       r"""(["']?)((?:[\w./-]|\$\{\w+\}|\$\(\w+\))+)\2[ \t]*(?:#.*)?$""", re.MULTILINE)
# ``group=$2``: an argument the program is given, one name of many (``hack/package.sh render GROUP``)
_ARGUMENT = re.compile(r"""^[ \t]*(?:local[ \t]+)?([A-Za-z_]\w*)=(["']?)\$\{?([1-9])\}?\2[ \t]*(?:#.*)?$""", re.MULTILINE)
# ``ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)``: a directory named from the script's own
_HOME = re.compile(r"""^[ \t]*(?:export[ \t]+|readonly[ \t]+|local[ \t]+)?([A-Za-z_]\w*)=["']?\$\(\s*cd\s+["']?"""
                   r"""\$\(\s*dirname\s+["']?\$(?:\{BASH_SOURCE(?:\[0\])?\}|BASH_SOURCE|0|\{0\})["']?\s*\)"""
                   r"""(/[\w./-]*)?["']?\s*(?:&&|;)\s*pwd(?:\s+-P)?\s*\)["']?[ \t]*$""", re.MULTILINE)
_USED = re.compile(r"\$\{(\w+)\}|\$\((\w+)\)|\$(\w+)")
ANY_NAME = "*"  # what an argument's variable stands for in a path: any one name


@functools.lru_cache(maxsize=256)  # asked once per missing path for every program
def _expanded(text: str) -> str:
    """The program's text with each variable that it gives a single value
    written as that value: a literal path (``BASE_DIR="./base"``, then
    ``mkdir -p ${BASE_DIR}``), one made of such variables
    (``"${install_dir}/generated"``), the script's own directory or one
    named from it (``$(cd "$(dirname "$0")/.." && pwd)``, as a path from
    the script's directory), or an argument (``group=$2``), which stands for
    any one name (``*``). A variable given two different values is left as
    written."""
    values: dict[str, str] = {}

    def give(name: str, value: str) -> None:
        values[name] = value if values.get(name, value) == value else ""

    for name, _, value in _ASSIGNED.findall(text):
        give(name, value)
    for name, _, _ in _ARGUMENT.findall(text):
        give(name, ANY_NAME)
    for name, below in _HOME.findall(text):
        give(name, os.path.normpath("." + below) if below else ".")
    values = {k: v for k, v in values.items() if v}
    if not values:
        return text

    def substitute(value: str) -> str:
        return _USED.sub(lambda m: values.get(m.group(1) or m.group(2) or m.group(3), m.group(0)), value)

    for _ in range(4):  # a chain of variables, each made of the one before
        values = {k: substitute(v) for k, v in values.items()}
    return substitute(text)


_MAKES = re.compile(r"^\s*(?:@?\s*)(mkdir|cp|rsync|git\s+clone|kpt\s+pkg\s+get)\s+(.*)$", re.MULTILINE)
_KPT_GET_VALUED = ("--strategy",)  # kpt pkg get's flags that take the next word as their value


def _kpt_fetched(args: list[str]) -> list[str]:
    """The directories ``kpt pkg get SOURCE [DEST]`` may write: DEST itself
    when it does not exist yet, or below DEST (the current directory when
    none is given) a directory named after the package's last path segment
    (``kpt pkg get $REPO/apps/profiles/upstream@v1.8.0 apps/profiles``
    fetches into ``apps/profiles/upstream``), as kpt names it."""
    words: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a.startswith("-"):
            skip = a in _KPT_GET_VALUED
        else:
            words.append(a)
    if not words or len(words) > 2:
        return []
    source = words[0].rsplit("@", 1)[0].rstrip("/")  # a ref ends the package's path
    package = source.rsplit("/", 1)[-1].removesuffix(".git")
    dest = words[1].rstrip("/") if len(words) == 2 else "."
    made = [dest] if dest not in ("", ".") else []
    if package and "$" not in package:
        made.append(package if dest in ("", ".") else f"{dest}/{package}")
    return made
_PATH_PREFIX = re.compile(r"^(?:\./|\$\((?:CURDIR|PWD|ROOT_DIR|PROJECT_DIR)\)/|\$\{?(?:PWD|ROOT_DIR|PROJECT_DIR)\}?/)")


def _names_path(made: str, wanted: str, parents: bool) -> bool:
    """Whether a path a program makes (``../packages/*/install/generated/crd``,
    ``*`` for an argument's name) is ``wanted``, or holds it where the
    command makes parents too (``mkdir -p``). The name of the directory
    wanted must be written, not stand for an argument."""
    have, want = os.path.normpath(made).split("/"), wanted.split("/")
    if len(have) < len(want) or (len(have) > len(want) and not parents) or have[len(want) - 1] == ANY_NAME:
        return False
    return all(h == w or (h == ANY_NAME and w not in (".", "..")) for h, w in zip(have, want))


def _made_at(top: Path, missing: Path, run: object) -> str | None:
    """A program that makes the missing path's first absent directory,
    naming it by its path from the program's own directory: ``mkdir -p
    config/crd-small``, or as the destination of ``cp -R config/crd/
    config/crd-small`` (a Makefile that copies a base and generates into the
    copy before it builds the overlays that read it); or from a directory
    named from the script's own (``mkdir -p
    "${ROOT_DIR}/packages/${group}/install/generated"``, ``ROOT_DIR`` the
    script's parent and ``group`` its argument); or as the directory ``kpt
    pkg get`` fetches a package into (:func:`_kpt_fetched`)."""
    absent = _first_absent(missing)  # the entry itself may be the directory made
    if top not in absent.parents:
        return None  # outside the repository
    # the missing file's own directory, where it lies below the first absent
    # one: `mkdir -p etc/.secrets` names both, by a path long enough to be evidence
    deepest = Path(os.path.normpath(missing)).parent
    for rel, text in _programs(top, run):
        home = (top / rel).parent
        if absent.name not in text:
            continue
        wanted = [w for w in {Path(os.path.relpath(d, home)).as_posix()
                              for d in (absent, deepest) if d == absent or absent in d.parents}
                  if "/" in w or len(w) >= 4]  # too short a name is no evidence
        if not wanted:
            continue
        for command, rest in _MAKES.findall(_expanded(text)):
            args = [_PATH_PREFIX.sub("", a.strip("\"'")).rstrip("/") for a in rest.split() if not a.startswith("-")]
            if not args:
                continue
            made = args if command == "mkdir" else args[-1:] if not command.startswith("kpt") else \
                [_PATH_PREFIX.sub("", m) for m in _kpt_fetched([a.strip("\"'") for a in rest.split()])]
            if any(_names_path(m, w, command == "mkdir") for m in made if m for w in wanted):
                return rel
    return None


# --- a namespace a program gives a kustomization -----------------------------------------

# one command of a shell line: ``cd config``, ``pushd rbac/cluster-scope``,
# ``popd``, ``kustomize edit set namespace "$namespace"``
_SHELL_COMMAND_SPLIT = re.compile(r"\s*(?:&&|\|\||;)\s*")
_CHANGE_DIRECTORY = re.compile(r"\A\(?\s*(cd|pushd)(?:\s+([^\s;&|)]+))?\s*\)?\Z")
_SET_NAMESPACE = re.compile(r"\bkustomize\s+edit\s+set\s+namespace\s+\S")


def namespaced_by(top: Path, run: object = None) -> dict[str, str]:
    """Kustomization directories (repository-relative) in which a program of
    the repository runs ``kustomize edit set namespace`` -> that program:
    the kustomization gets its namespace when the program runs, before it
    builds it. The program's working directory is followed through ``cd``,
    ``pushd`` and ``popd`` of literal paths, from the program's own
    directory or the repository's top; a directory named by a variable
    (``cd "$install_dir"``) starts the path anew from either."""
    out: dict[str, str] = {}
    for rel, text in _programs(top, run):
        if "kustomize" not in text or not _SET_NAMESPACE.search(text):
            continue
        home = (top / rel).parent
        here: list[str] = []  # the directory stack, each a path from an unknown start
        current = "."
        for line in text.replace("\\\n", " ").splitlines():
            for command in _SHELL_COMMAND_SPLIT.split(line.split("#", 1)[0].strip()):
                moved = _CHANGE_DIRECTORY.match(command)
                if moved is not None:
                    verb, where = moved.groups()
                    where = (where or "").strip("\"'")
                    if verb == "pushd":
                        here.append(current)
                    if not where or "$" in where or where.startswith(("/", "~", "-")):
                        current = "."  # a directory not known here: paths start anew
                    else:
                        current = os.path.normpath(f"{current}/{where}")
                elif command.strip() == "popd":
                    current = here.pop() if here else "."
                elif _SET_NAMESPACE.search(command):
                    for start in (home, top):
                        directory = Path(os.path.normpath(start / current))
                        if (top == directory or top in directory.parents) and \
                                any((directory / n).is_file() for n in KUSTOMIZATION_FILES):
                            out.setdefault(_relative(directory, top), rel)
                            break
    return out


# --- words a program of the repository replaces ------------------------------------------

# ``sed -e "s/HOSTNAME/$i/g" pod.yaml | kubectl apply -f -``: the word a sed
# substitution replaces, when it is a literal written in capitals (a word to
# fill in, not a value), is a placeholder wherever the repository writes it.
_SED_LINE = re.compile(r"(?<![\w-])sed\b[^\n]*")
_SED_WORD = re.compile(r"(?<![A-Za-z0-9\\])s([/|#,:@~%!])([A-Z_][A-Z0-9_-]*[A-Z0-9_])\1")


# ``sed -i "s/$template_name/$name/g"``: a substitution whose pattern is a
# variable; the word is each literal value the program gives the variable
# (``local template_name=_sample_``) that is shaped as a fill-in word
_SED_VARIABLE = re.compile(r"(?<![A-Za-z0-9\\])s([/|#,:@~%!])\$\{?(\w+)\}?\1")
# a fill-in word: capitals (``ID``, ``APP_NAME``), or a lowercase word
# between underscores (``_sample_``, ``__name__``), never a plain value
_FILL_IN = re.compile(r"[A-Z_][A-Z0-9_-]*[A-Z0-9_]|(_{1,2})[a-z][a-z0-9-]*\1")


def sed_words(top: Path, run: object = None) -> dict[str, str]:
    """Word -> the program that replaces it: every literal capitalised word
    (two characters or more, no lowercase letter: ``s/ID/'$i'/g``) that a
    ``sed`` substitution in a program of the repository replaces, and each
    fill-in word (capitals, or a lowercase word between underscores) the
    program assigns to a variable a substitution's pattern is
    (``template_name=_sample_``, then ``sed -i "s/$template_name/$name/g"``)."""
    out: dict[str, str] = {}
    for rel, text in _programs(top, run):
        if "sed" not in text:
            continue
        literals: dict[str, set[str]] = {}
        for name, _, value in _ASSIGNED.findall(text):
            if "$" not in value:
                literals.setdefault(name, set()).add(value)
        for line in _SED_LINE.finditer(text.replace("\\\n", " ")):  # a command continued over lines
            for found in _SED_WORD.finditer(line.group(0)):
                word = found.group(2)
                if len(word) >= 2 and any(c.isalpha() for c in word):
                    out.setdefault(word, rel)
            for found in _SED_VARIABLE.finditer(line.group(0)):
                for word in sorted(literals.get(found.group(2), ())):
                    if _FILL_IN.fullmatch(word) and any(c.isalpha() for c in word):
                        out.setdefault(word, rel)
    return out


def page_sed_words(top: Path, run: object = None) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Word -> (the Markdown page, the YAML files its command names): a
    ``sed`` substitution of a literal capitalised word, or of a token with
    sigils (``%SLACK_TOKEN%``), that a page tells the reader to run on files
    it names (``sed -i "s~REPO_PREFIX~$URL~g"
    gitops-system/clusters/mgmt/flux-system/gotk-sync.yaml``, a template
    repository's set-up step; ``sed -i "s|%SLACK_TOKEN%|$SLACK_TOKEN|g"
    secret.yaml`` before ``kustomize build .``): those files are filled in
    before anything applies them."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for rel, text in _programs(top, run, pages=True):
        for line in _SED_LINE.finditer(text.replace("\\\n", " ")):  # a command continued over lines
            named = tuple(_ARG_PATH.findall(line.group(0)))
            if not named:
                continue
            words = [found.group(2) for found in _SED_WORD.finditer(line.group(0))]
            words += [token for _, token in _SED_TOKEN.findall(line.group(0))
                      if _PLACEHOLDER_TOKEN.fullmatch(token) and not token[0].isalnum()]
            for word in words:
                if len(word) >= 2 and any(c.isalpha() for c in word):
                    had = out.get(word)
                    out[word] = (had[0] if had else rel, (had[1] if had else ()) + named)
    return out


# A page telling the reader that a word in capitals stands for a value to
# fill in: "patching any UNDEFINED values", "Any UNDEFINED values should be
# patched via the overlay", "replace `YOUR_DOMAIN` with your domain",
# "Name: UNDEFINED (patch via overlay)" (not "Write to USB (replace
# /dev/sdX ...)", nor "ADOPTER-MUST-SET values"). The word is named next to the verb
# and to what it is (values, a placeholder), or quoted or of joined words
# before what replaces it (not "replace HTTP with HTTPS").
_FILL_VERB = r"(?:[Pp]atch|[Rr]eplac|[Oo]verrid|[Ff]ill|[Ss]ubstitut)"
_TOLD_WORD = r"(?<![\w-])[`'\"]?([A-Z][A-Z0-9_]*[A-Z0-9])(?![\w-])[`'\"]?"
_TOLD_FILL = re.compile(
    rf"{_FILL_VERB}\w*[ \t]+(?:any|all|every|each|the|these|those)[ \t]+{_TOLD_WORD}[ \t]+"
    rf"(?:values?|placeholders?)\b"
    rf"|{_FILL_VERB}\w*[ \t]+(?:the[ \t]+)?(?:[`'\"]([A-Z][A-Z0-9_]*[A-Z0-9])[`'\"]|([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+))"
    rf"[ \t]+with\b"
    rf"|{_TOLD_WORD}[ \t]+(?:values?|placeholders?)[ \t]+(?:[a-z]+[ \t]+){{0,4}}?{_FILL_VERB}(?:ed|den)\b"
    rf"|{_TOLD_WORD}[ \t]+\((?:[\w-]+(?:[ \t]+[\w-]+){{0,2}},[ \t]+)?{_FILL_VERB}\w*[ \t]+(?:via|by|through)\b")


def page_told_words(top: Path, run: object = None) -> dict[str, str]:
    """Word -> the Markdown page that tells the reader it stands for a value
    to fill in (:data:`_TOLD_FILL`): a word in capitals of three characters
    or more, with a letter."""
    out: dict[str, str] = {}
    for rel, text in _programs(top, run, told=True):
        for found in _TOLD_FILL.finditer(text):
            word = next(g for g in found.groups() if g)
            if len(word) >= 3:
                out.setdefault(word, rel)
    return out


def named_by(location: str, named: Iterable[str]) -> bool:
    """Whether a repository path is a file a command names, by a path from
    the top or the end of one (a page writes paths of the reader's copy)."""
    for path in named:
        written = os.path.normpath(path).lstrip("./")
        if location == written or location.endswith("/" + written):
            return True
    return False


def page_names(page: str, location: str, named: Iterable[str]) -> bool:
    """Whether a page's command names the repository path ``location``: a
    bare file name from the page's own directory, a path as
    :func:`named_by` reads it."""
    home = os.path.dirname(page)
    paths = list(named)
    bare = [n for n in paths if "/" not in os.path.normpath(n)]
    return any(os.path.normpath(os.path.join(home, n)) == location for n in bare) or \
        named_by(location, [n for n in paths if n not in bare])


# ``strings.ReplaceAll(string(content), "%%%", ns)`` in Go, ``text.replace("@NS@",
# ns)`` in Python: the literal a program replaces in text it read, when it is
# shaped as a placeholder: sigils only (``%%%``), or a capitalised word,
# bare or between sigils (``NAMESPACE``, ``@NS@``, ``{{NS}}``, ``__NS__``);
# a word of the text (``default``, ``secret:``) says nothing.
_REPLACE_CALL = re.compile(r"""(?:strings|bytes)\.Replace(?:All)?\(\s*[^,()]+(?:\([^()]*\))?\s*,\s*(?:\[\]byte\()?"([^"\n]{3,})"|"""
                           r"""\.replace\(\s*(?:b?["'])([^"'\n]{3,})["']""")


_PLACEHOLDER_TOKEN = re.compile(r"[%@#$_{}<>\[\]|~^*+=!-]{3,}|([%@#$_{<\[]*)[A-Z][A-Z0-9_]{2,}[%@_}>\]]*")


# ``sed -e "s/%%_SSP_NAME_%%/${SSP_NAME}/g" template.yaml | oc apply -f -``: a
# sed substitution of a token with sigils (a bare word is judged as a value,
# :func:`sed_words`).
_SED_TOKEN = re.compile(r"(?<![A-Za-z0-9\\])s([/|#,:~!])([^\s/|#,:~!\\]{3,})\1")


def replaced_tokens(top: Path, run: object = None) -> dict[str, str]:
    """Token -> the program that replaces it in a text (Go, Python, or a
    ``sed`` substitution of a token with sigils in any program)."""
    out: dict[str, str] = {}
    for rel, text in _programs(top, run):
        if rel.endswith((".go", ".py")) and "eplace" in text:
            for found in _REPLACE_CALL.finditer(text):
                token = found.group(1) or found.group(2)
                if token and _PLACEHOLDER_TOKEN.fullmatch(token):
                    out.setdefault(token, rel)
        if "sed" in text:
            for line in _SED_LINE.finditer(text.replace("\\\n", " ")):
                for _, token in _SED_TOKEN.findall(line.group(0)):
                    if _PLACEHOLDER_TOKEN.fullmatch(token) and not token[0].isalnum():
                        out.setdefault(token, rel)
    return out


# A string literal of a test program that is a relative path: "./manifests/x/",
# "testdata/input.yaml", '../examples' (at least one directory, or a YAML name).
_RELATIVE_LITERAL = re.compile(r"([\"'`])(\.{1,2}/[\w./-]+|[\w.-]+/[\w./-]*|[\w./-]+\.ya?ml)\1")


# A walk of the tree below a directory a test names: ``filepath.Walk("./examples",
# ...)``, ``filepath.WalkDir``, ``fs.WalkDir(fsys, "x")``, Python's ``os.walk("x")``.
_WALKED = re.compile(r"\b(?:filepath\.Walk(?:Dir)?|fs\.WalkDir|os\.walk)\(\s*(?:\w+\s*,\s*)?([\"'`])([\w./-]+)\1")


def test_program_paths(top: Path, run: object = None) -> dict[Path, tuple[str, bool]]:
    """Existing files and directories the repository's test programs name by
    a path relative to the program -> (the program, whether it walks the
    tree below the directory)."""
    out: dict[Path, tuple[str, bool]] = {}
    for rel, text in (*_programs(top, run), *_programs(top, run, node=True)):
        name = rel.rsplit("/", 1)[-1]
        if not _TEST_CODE.fullmatch(name):
            continue
        here = (top / rel).parent
        walked = {literal for _, literal in _WALKED.findall(text)}
        for _, literal in _RELATIVE_LITERAL.findall(text) + _WALKED.findall(text):
            target = Path(os.path.normpath(here / literal))
            if target != here and top in target.parents and (target.is_dir() or target.is_file()):
                if literal in walked or target not in out:
                    out[target] = (rel, literal in walked or out.get(target, ("", False))[1])
    return out


def _skeleton(text: str) -> str | None:
    """A field reference a documentation generator writes: an object whose
    values are three in four empty ("", 0, false, {}, []), of twenty or
    more: every field listed, few set (defaults); nothing to apply."""
    try:
        docs = [d for d in yaml.load_all(text, Loader=FAST_LOADER) if d is not None]
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    leaves = [v for d in docs if isinstance(d, dict) for v in _leaves(d.get("spec"))]
    empty = sum(1 for v in leaves if v in ("", 0, False, None) or v == {} or v == [])
    if len(leaves) >= 20 and empty * 4 >= len(leaves) * 3:
        return f"a skeleton of every field ({empty} of {len(leaves)} values empty): a field reference"
    return None


def _leaves(node: object) -> Iterator[object]:
    if isinstance(node, dict) and node:
        for v in node.values():
            yield from _leaves(v)
    elif isinstance(node, list) and node:
        for v in node:
            yield from _leaves(v)
    else:
        yield node


# --- vendored dependencies --------------------------------------------------------------

# The record each of Go's dependency tools keeps of what it copied into a
# vendor/ directory: Go modules' vendor/modules.txt, govendor's
# vendor/vendor.json, and beside the directory, dep's Gopkg.lock, glide's
# glide.lock and godep's Godeps/Godeps.json.
_VENDOR_RECORDS = (("vendor", "modules.txt"), ("vendor", "vendor.json"), ("Gopkg.lock",), ("glide.lock",),
                   ("Godeps", "Godeps.json"))


def _vendored(path: Path, top: Path) -> str | None:
    for parent in _below(path, top):
        if parent.name == "vendor":
            for record in _VENDOR_RECORDS:
                if os.path.isfile(parent.parent.joinpath(*record)):
                    return f"in Go's {_relative(parent, top)}/ ({'/'.join(record)})"
    return None


# --- the decision -------------------------------------------------------------------

class Sorter:
    """Decides whether would-be manifests are set aside, or judged as test
    inputs. Directories are learned first (:meth:`learn_names` while walking,
    :meth:`learn_text` for each candidate), then each file is judged
    (:meth:`set_aside`, :meth:`test_input`)."""

    def __init__(self, top: Path, reasons: Iterable[str] = REASONS, served: Served = _everything,
                 kustomizations: Iterable[Path] = (), read: Iterable[Path] = (),
                 searched: Iterable[Path] = (), plugin_inputs: dict[Path, Path] | None = None) -> None:
        self.top = top
        self.plugin_inputs = plugin_inputs or {}  # a file a plugin's configuration names -> its kustomization
        # the directories the run was asked to check: a test directory above
        # one of them is not evidence (`krmcheck fixtures/demo` judges the demo)
        self.searched = tuple(sorted(searched, key=lambda p: len(p.parts), reverse=True))
        self.reasons = frozenset(reasons)
        self.served = served
        self.kustomizations = frozenset(kustomizations)
        self.read_dirs = frozenset(p.parent for p in read)
        self.tests = TestDirectories()
        self.learned: set[Path] = set()  # directories whose markers are known
        self.found: list[SetAside] = []  # what was set aside so far
        self.test_inputs: list[SetAside] = []  # what is judged as a test's input so far
        self.shown: dict[str, str] | None = None  # repo-relative path -> a Markdown page showing it
        self.refused: dict[str, tuple[str, frozenset[tuple[str, str]]]] | None = None  # ... a page showing it refused
        self.sites: dict[Path, bool] = {}  # directory -> whether a documentation site is built from it
        self.bundles: frozenset[str] | None = None  # what a script pipes into operator-sdk generate bundle
        self.embedded: dict[str, str] | None = None  # what Go programs embed -> the program
        self.setters: list[tuple[str, str]] | None = None  # what Go that sets decoded fields embeds or names
        self.krusty: dict[str, str] | None = None  # directories Go builds with kustomize's API and transforms
        self.filled: dict[str, str] | None = None  # what programs read by their own path and fill in -> the program
        self.java: dict[str, str] | None = None  # classpath resources Java loads and fills in -> the class
        self.submitted: dict[str, str] | None = None  # what argo submit names -> the pipeline or program
        self.listed_patches: dict[str, str] | None = None  # what a program lists as kustomize patches -> it
        self.fleet: dict[str, str] | None = None  # overlays Fleet applies to a chart's output -> fleet.yaml
        self.commented: dict[Path, Path] | None = None  # files only commented-out entries name
        self.templates: dict[Path, dict[Path, Path]] = {}  # ... those of a directory's kustomization template
        self.patched: dict[str, str] | None = None  # repo-relative path -> what applies it with kubectl patch
        self.pages: list[tuple[Path, str]] | None = None  # the Markdown pages (path, text)
        self.substituted: list[tuple[str, str, str]] | None = None  # what programs give to envsubst
        self.tokens: dict[str, str] | None = None  # what programs replace in a file's text
        self.test_paths: dict[Path, tuple[str, bool]] | None = None  # what test programs name -> (it, walked)
        self.clients: dict[str, str] | None = None  # repo-relative path -> a page giving it to another API's client
        self.reports: dict[Path, str | None] = {}  # directory -> the checker's report it is expected to give
        self.given: dict[str, dict[str, str]] = {}  # a kind of program input (_GIVEN) -> its files -> the giver

    # Files a program or page of the repository gives to something that
    # makes what is applied of them: (key, what finds them -> the giver, why),
    # asked in this order, each found once per run.
    _GIVEN: tuple[tuple[str, Callable[[Sorter], dict[str, str]], str], ...] = (
        ("yq", lambda s: yq_inputs(s.top, s), "{program} transforms it with yq into what it applies"),
        ("sed", lambda s: sed_inputs(s.top, s, s._pages()), "{program} turns it with sed into what it applies"),
        ("generated", lambda s: generated_from(s.top, s, s._pages()),
         "{program} gives it to a generator whose output, another file, is what is applied"),
        ("processed", lambda s: processed_by(s.top, s, s._pages()),
         "{program} gives it to oc process, which renders the Template; what is applied is the objects it writes"),
        ("istioctl", lambda s: istioctl_installs(s.top, s, s._pages()),
         "{program} gives it to istioctl install, which reads the IstioOperator on the client and installs "
         "what it renders from it"),
        ("fn-config", lambda s: function_configs(s.top, s, s._pages()),
         "{program} gives it to a KRM function with --fn-config: the function's configuration, "
         "which no cluster receives"),
        ("uploaded", lambda s: uploaded_inputs(s.top, s),
         "{program} copies it to object storage, where another program reads it"),
        ("run-by", lambda s: run_by(s.top, s._pages(), s), "{program} gives it to a program of the repository, "
                                                          "which reads it"),
    )

    def learn_names(self, directory: Path, names: Iterable[str]) -> None:
        if TEST_FRAMEWORK in self.reasons:
            self.tests.learn_names(directory, names)

    def learn_text(self, path: Path, text: str) -> None:
        if TEST_FRAMEWORK in self.reasons:
            self.tests.learn_text(path, text)

    def set_aside(self, path: Path, text: str) -> SetAside | None:
        for reason, why in self._evidence(path, text):
            if reason in self.reasons:
                return SetAside(path, reason, why)
        return None

    def _evidence(self, path: Path, text: str) -> Iterable[tuple[str, str]]:
        """(reason, why) for each rule that holds, in order; computed as asked."""
        checks: tuple[tuple[str, Callable[[], str | None]], ...] = (
            (VENDORED, lambda: _vendored(path, self.top)),
            (TOOL_CONFIG, lambda: _tool_config(text)),
            (TEST_FRAMEWORK, lambda: self.tests.marker(path, self.top)),
            (PATCH_FILE, lambda: _patch_sign(text) or self._patched(path) or _patch_shape(text)),
            (UNUSED_INPUT, lambda: _unused_input(path, self.top, self.kustomizations, self.read_dirs)),
            (DISABLED, lambda: self._disabled(path)),
            (DATA, lambda: _data(text, self.served) or self._other_client(path, text)),
            (TEMPLATE, lambda: _template(text) or ytt_template(text) or bracket_template(text) or _here_document(text)
             or self._envsubst(path, text)
             or self._replaced(text) or _ansible_role(path, self.top) or _blank_form(text)),
        )
        for reason, check in checks:
            if reason in self.reasons:
                why = check()
                if why is not None:
                    yield reason, why

    def _pages(self) -> list[tuple[Path, str]]:
        """The repository's Markdown pages, read once for the rules that read them."""
        if self.pages is None:
            self.pages = markdown_pages(self.top)
        return self.pages

    def _other_client(self, path: Path, text: str) -> str | None:
        """Why the file is another API's object: every document is of a kind
        nothing serves, and a page gives the file with ``-f`` to a command
        that is no Kubernetes client (``mactl create -f volume-0.yaml``): that
        program reads it, not the API server. A kind nothing serves that a
        page applies with kubectl stays judged (a typo of a real kind)."""
        kinds = _KINDS.findall(text)
        if not kinds or any(self.served(api_version, kind) for api_version, kind in kinds):
            return None
        if self.clients is None:
            self.clients = given_to_clients(self.top, self._pages())
        rel = _relative(path, self.top)
        by = self.clients.get(rel)
        if by == "":
            return None  # a page applies it with a Kubernetes client
        if by is not None:
            return f"{by} gives it to a client of another API; no Kubernetes API serves its kind"
        # a directory whose page gives its files to that client holds that client's objects
        by = self.clients.get(rel.rpartition("/")[0] + "/")
        return None if by is None else f"{by} gives files beside it to a client of another API; no Kubernetes " \
                                       f"API serves its kind"

    def _patched(self, path: Path) -> str | None:
        """A file a page or a program of the repository applies with
        ``kubectl patch``, or that a program lists among the patches of a
        kustomization it writes."""
        if self.patched is None:
            self.patched = patched_by(self.top, self, self._pages())
        by = self.patched.get(_relative(path, self.top))
        if by is not None:
            return f"{by} applies it with kubectl patch"
        if self.listed_patches is None:
            self.listed_patches = kustomize_patches_by(self.top, self)
        by = self.listed_patches.get(_relative(path, self.top))
        return None if by is None else f"{by} lists it among the patches of a kustomization it writes"

    def _envsubst(self, path: Path, text: str) -> str | None:
        """A file a program of the repository renders with envsubst, and
        that is not YAML as written: YAML only once its ``$NAME`` are filled."""
        if _loads(text):
            return None
        if self.substituted is None:
            self.substituted = envsubst_inputs(self.top, self)  # the programs read once per sorter
        rel = _relative(path, self.top)
        for directory, named, program in self.substituted:
            if (rel == named) if directory == "=" else \
                    (rel.endswith("/" + named) and (not directory or rel.startswith(directory + "/"))):
                return f"{program} renders it with envsubst; not YAML as written"
        return None

    def _shown_refused(self, path: Path, text: str) -> str | None:
        """A page of the repository names the file, and in the same section
        quotes the API server's refusal of an object the file holds, by its
        kind and name: the page shows the case refused on purpose."""
        if self.refused is None:
            self.refused = refused_in_pages(self.top, self._pages())
        found = self.refused.get(_relative(path, self.top))
        if found is None:
            return None
        page, refused = found
        for kind, name in sorted(refused):
            held = re.compile(rf"^kind:[ \t]*[\"']?{re.escape(kind)}[\"']?[ \t]*$", re.MULTILINE).search(text) and \
                re.compile(rf"^[ \t]+name:[ \t]*[\"']?{re.escape(name)}[\"']?[ \t]*(?:#.*)?$", re.MULTILINE).search(text)
            if held:
                return f"{page} shows the API server refusing it ({kind} \"{name}\" is invalid): a case invalid on purpose"
        return None

    def _read_by_test(self, path: Path) -> str | None:
        """A test program of the repository (``*_test.go``, ``test_*.py``,
        a Node test naming ``__dirname``) names the file, or the directory it
        lies in, by a path relative to the program
        (``fileString("./manifests/jobservice/" + name)``,
        ``path.resolve(__dirname, '../examples')``). A directory further up
        is evidence only where the test walks the tree below it
        (``filepath.Walk("./examples", ...)``): a test rendering a chart from
        ``../helm/`` does not make the manifests kept below it its inputs."""
        if self.test_paths is None:
            self.test_paths = test_program_paths(self.top, self)
        for candidate in (path, *_below(path, self.top)):
            found = self.test_paths.get(candidate)
            if found is not None and (candidate in (path, path.parent) or found[1]):
                return f"{found[0]} reads it" if candidate in (path, path.parent) else \
                    f"{found[0]} walks {_relative(candidate, self.top)}/ and reads it"
        return None

    def _expected_to_fail(self, path: Path, base: Path) -> str | None:
        """The file lies in a directory (below the one the run is asked to
        check) beside the report a checker is expected to give on it."""
        for directory in _below(path, base):
            if directory == base:
                return None
            if directory not in self.reports:
                self.reports[directory] = expected_report(directory)
            report = self.reports[directory]
            if report is not None:
                return f"in a case invalid on purpose: {_relative(directory / report, self.top)} holds the " \
                       f"errors a checker is expected to report on its directory"
        return None

    def _replaced(self, text: str) -> str | None:
        """A file that holds a token a program of the repository replaces in
        a file's text before using it (a Go test's
        ``strings.ReplaceAll(content, "%%%", namespace)``), and that is not
        YAML as written, or where YAML reads the token as a comment (a
        server's ``image: #{ARGO_WORKFLOW_CONTROLLER}``): either way what
        YAML reads is not what the program makes of it."""
        loads = _loads(text)
        if loads and "#" not in text:
            return None
        if self.tokens is None:
            self.tokens = replaced_tokens(self.top, self)
        for token, program in self.tokens.items():
            if token in text and not loads:
                return f"{program} replaces {token} in it; not YAML as written"
            if token.startswith("#") and re.search(r"(?:^|[ \t])" + re.escape(token), text, re.MULTILINE):
                return f"{program} replaces {token} in it, which YAML reads as a comment"
        return None

    def _disabled(self, path: Path) -> str | None:
        """A file only a commented-out entry of a kustomization names: the
        maintainers switched it off (a kustomization reading it would have
        made it no root of its own)."""
        if self.commented is None:
            self.commented = commented_entries(self.kustomizations)
        naming = self.commented.get(path)
        if naming is None and path.parent not in self.kustomizations:
            if path.parent not in self.templates:
                self.templates[path.parent] = template_commented_entries(path.parent)
            naming = self.templates[path.parent].get(path)
        return None if naming is None else f"commented out in {_relative(naming, self.top)}"

    def vendored(self, path: Path) -> SetAside | None:
        """A kustomization (or any file) as a dependency's, when it lies in a
        vendor/ directory a Go dependency tool records."""
        why = _vendored(path, self.top) if VENDORED in self.reasons else None
        return None if why is None else SetAside(path, VENDORED, why)

    def test_input(self, path: Path, text: str) -> SetAside | None:
        """The file as a test's input, when it is in a test directory, or as
        a documentation fragment, when a Markdown page of the repository
        embeds it and it cannot be applied as it stands (a document with no
        name)."""
        if BUNDLE_INPUT in self.reasons:
            owner = self.plugin_inputs.get(path)
            if owner is not None:
                return SetAside(path, BUNDLE_INPUT, f"a plugin configuration of {_relative(owner, self.top)}/ "
                                                    f"names it: the plugin's input, whose output is what is "
                                                    f"applied")
            olm = olm_bundle(path, self.top) or \
                (csv_base(path, self.top, self) if path.name.endswith(CSV_SUFFIXES) else None)
            if olm is not None:
                return SetAside(path, BUNDLE_INPUT, olm)
            # the kustomization, and the bases/ operator-sdk reads beside it (--kustomize-dir)
            if self.bundles is None:
                self.bundles = bundle_inputs(self.top, self)
            for directory in _below(path, self.top) if self.bundles else ():
                rel = _relative(directory, self.top)
                for suffix in sorted(self.bundles):
                    if rel == suffix or rel.endswith("/" + suffix):
                        return SetAside(path, BUNDLE_INPUT, f"a script pipes the build of {suffix} into a generator "
                                                            f"(operator-sdk generate bundle, or a program kept there)")
            rel = _relative(path, self.top)
            for key, build, reason in self._GIVEN:
                if key not in self.given:
                    self.given[key] = build(self)
                giver = self.given[key].get(rel)
                if giver is not None:
                    return SetAside(path, BUNDLE_INPUT, reason.format(program=giver))
            if _unnamed(text):
                if self.submitted is None:
                    self.submitted = argo_submitted(self.top, self)
                program = self.submitted.get(_relative(path, self.top))
                if program is not None:
                    return SetAside(path, BUNDLE_INPUT, f"{program} creates it with argo submit or argocd app "
                                                        f"create, whose --name or --generate-name names it")
            if self.embedded is None:
                self.embedded = embedded_by(self.top, self)
            if self.embedded and self.setters is None:
                self.setters = go_setters(self.top, self)
            why = embedded_template(path, text, self.top, self.embedded, self.setters or (), self.served)
            if why is not None:
                return SetAside(path, BUNDLE_INPUT, why)
            if self.krusty is None:
                self.krusty = kustomize_api_roots(self.top, self)
            for directory in _below(path, self.top) if self.krusty else ():
                rel = _relative(directory, self.top)
                why = next((w for named, w in self.krusty.items() if rel == named or rel.endswith("/" + named)), None)
                if why is not None:
                    return SetAside(path, BUNDLE_INPUT, why)
            if self.filled is None:
                self.filled = filled_in_by(self.top, self)
            rel = _relative(path, self.top)
            program = next((p for pattern, p in self.filled.items() if fnmatch.fnmatchcase(rel, pattern)), None)
            if program is not None:
                return SetAside(path, BUNDLE_INPUT, f"{program} reads it by its path, parses it and sets its "
                                                    f"fields before it creates the object")
            if "src/main/resources/" in f"/{rel}":
                if self.java is None:
                    self.java = java_loaded(self.top)
                program = self.java.get(rel)
                if program is not None:
                    return SetAside(path, BUNDLE_INPUT, f"{program} loads it from the classpath and sets its fields "
                                                        f"before it creates the object")
            if self.fleet is None:
                self.fleet = fleet_overlays(self.top)
            for directory in _below(path, self.top) if self.fleet else ():
                bundle = self.fleet.get(_relative(directory, self.top))
                if bundle is not None:
                    return SetAside(path, BUNDLE_INPUT, f"an overlay {bundle} applies to its Helm chart's output "
                                                        f"(Rancher Fleet)")
        if TEST_INPUT in self.reasons:
            base = next((d for d in self.searched if d == path.parent or d in path.parents), self.top)
            why = test_directory(path, base) or kpt_test_case(path, base) or invalid_twin(path) or plugin_home(path) or \
                self._shown_refused(path, text) or self._expected_to_fail(path, base) or \
                self._read_by_test(path)
            if why is not None:
                return SetAside(path, TEST_INPUT, why)
        if DOC_FRAGMENT in self.reasons:
            in_docs = in_documentation(path, self.top, self.sites)
            skeleton = _skeleton(text) if in_docs else None
            if skeleton is not None:
                return SetAside(path, DOC_FRAGMENT, skeleton)
            if not (in_docs or _unnamed(text)):
                return None  # an example a page shows whole is an object to apply
            if self.shown is None:
                self.shown = shown_in_pages(self.top, self._pages())
            rel = _relative(path, self.top)
            parts = rel.split("/")
            page = self.shown.get(rel) or next(
                (self.shown[f"*/{tail}"] for tail in ("/".join(parts[i:]) for i in range(len(parts)))
                 if in_docs and f"*/{tail}" in self.shown), None)
            if page is not None:
                return SetAside(path, DOC_FRAGMENT, f"shown in {page}")
        return None


# A placeholder a script fills in before applying (sed, envsubst, make):
# {{ name }}, a Jinja statement {% ... %}, a single-brace {NAME}, a
# FreeMarker directive <#if ...>, ${...}, or a Go fmt verb as a value (%s).
# A templating language's own placeholder: {{ .name }} (Go, Jinja, and
# Backstage's ${{ values.name }}), a statement {% if %}.
_TEMPLATING = r"\{\{.*?\}\}|\{%.*?%\}"
TEMPLATING = re.compile(_TEMPLATING)
_PLACEHOLDER = re.compile(_TEMPLATING + r"|\{[A-Za-z][A-Za-z0-9_]*\}|</?#[a-z]+\b|\$\{[^{}\n]+\}|<[A-Z][A-Z0-9_]{2,}>|"
                          r"(?:^|[:-])[ \t]+%[sdvq][ \t]*$|"
                          r"(?:^|[:-])[ \t]+@[A-Z][A-Z0-9_]*@", re.MULTILINE)  # autoconf/sed-style @NAME@


def _template(text: str) -> str | None:
    """Why the text is a template: it holds placeholders and is not YAML as
    written (a file that is YAML as written is judged, placeholders and all)."""
    found = _PLACEHOLDER.search(text)
    if found is None or _loads(text):
        return None
    return f"{found.group(0)[:40]} placeholders; not YAML as written"


# ``cat <<EOF | kubectl apply -f -``, ``kubectl apply -f - <<'EOF'``: the first
# line a shell reads is a command that feeds a here-document to a program
_HERE_DOCUMENT = re.compile(r"\A(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*(?![\w.-]+:[ \t])([^\n#]*<<-?[ \t]*(['\"]?)([A-Za-z_]\w*)\2[^\n]*)\n")


def _here_document(text: str) -> str | None:
    """Why the text is a shell command saved as YAML: its first line feeds
    a here-document (``cat <<EOF | kubectl apply -f -``), whose body, up to
    the line that ends it, is what the program reads once a shell has
    expanded it. Judged only where the whole is not YAML as written."""
    found = _HERE_DOCUMENT.match(text)
    if found is None or not re.search(rf"^[ \t]*{re.escape(found.group(3))}[ \t]*$", text[found.end():], re.MULTILINE) \
            or _loads(text):
        return None
    return f"{found.group(1).strip()[:40]}: a shell command and its here-document, which a shell expands"


# ytt's annotations, comments to YAML: a module it loads (``#@ load("@ytt:data",
# "data")``), a data values, overlay or schema document
_YTT = re.compile(r"^[ \t]*#@[ \t]*load\([ \t]*['\"]@ytt:|^[ \t]*#@(?:data/values|overlay/|schema/)", re.MULTILINE)


# A Go template written with [[ ]] delimiters (a chart's source whose
# program turns [[ into {{ before Helm renders it, as giantswarm's charts
# do): an action, not a list of lists (`[[- if .Values.x ]]`, `[[ end ]]`,
# `[[ include "labels" . | nindent 4 ]]`, `[[ .Values.name ]]`).
_BRACKET_ACTION = re.compile(r"\[\[-?[ \t]*(?:(?:if|else|end|range|with|define|template|block|include|tpl|toYaml)\b|"
                             r"\.[A-Za-z$]|\$[A-Za-z.]|/\*)[^\[\]\n]*\]\]")


def bracket_template(text: str) -> str | None:
    """Why the text is a Go template with [[ ]] delimiters: it holds a
    template action written so (``[[- if not .Values.cel.enabled ]]``),
    which YAML reads as text or as a list of lists, not as what the
    template renders."""
    found = _BRACKET_ACTION.search(text)
    return None if found is None else f"{found.group(0)[:40]}: a Go template written with [[ ]] delimiters"


def ytt_template(text: str) -> str | None:
    """Why the text is a ytt template: it loads ytt's modules or is one of
    its data values, overlay or schema documents. Its ``#@`` annotations
    compute values (``image: #@ data.values.registry + "/app"``) that YAML
    reads as comments, so what YAML reads is not what ytt writes."""
    found = _YTT.search(text)
    return None if found is None else f"{found.group(0).strip()[:40]}: a ytt template, which ytt renders"


_BLANK_NAME = re.compile(r"^[ \t]+name:[ \t]*(?:#.*)?$", re.MULTILINE)


def _blank_form(text: str) -> str | None:
    """Why the text is a form to fill in: every object in it writes its
    ``metadata.name`` key with no value (and no generateName), a name left
    blank for the reader, as a template to copy is (an object that omits
    the key is judged); or every object in it is an outline of its kind's
    fields, each written with no value (:func:`_outline`)."""
    if _BLANK_NAME.search(text) is None and "{}" not in text and '""' not in text and "[]" not in text:
        return None
    docs = _documents(text)
    if not docs:
        return None
    if all(_outline(doc) for doc in docs):
        return "every field written with no value: an outline of the kind's fields"
    if _BLANK_NAME.search(text) is None:
        return None
    for doc in docs:
        metadata = doc.get("metadata") if isinstance(doc, dict) else None
        if not (isinstance(metadata, dict) and "name" in metadata and metadata["name"] in (None, "")
                and not metadata.get("generateName")):
            return None
    return "metadata.name written blank: a form to fill in"


_OUTLINE_FIELDS = 5  # fewer empty fields say too little


def _outline(doc: object) -> bool:
    """Whether an object writes nothing but empty or zero values below its
    apiVersion and kind (``""``, null, ``[]``, ``{}``, ``false``, ``0``),
    for some fields at least: an outline of the kind's fields, as a schema's documentation
    gives one (``metadata: {}``, ``name: ""``, ``steps: []``), not an object
    anyone applies; an object with any value at all is judged."""
    if not isinstance(doc, dict):
        return False
    empty = 0
    stack: list[object] = [v for k, v in doc.items() if k not in ("apiVersion", "kind")]
    while stack:
        value = stack.pop()
        if isinstance(value, dict) and value:
            stack.extend(value.values())
        elif isinstance(value, list) and value:
            stack.extend(value)
        elif value is None or value is False or value in ("", 0) or value == [] or value == {}:
            empty += 1
        else:
            return False
    return empty >= _OUTLINE_FIELDS


_ROLE_PARTS = ("defaults", "vars", "meta", "handlers", "templates")


def _ansible_role(path: Path, top: Path) -> str | None:
    """Why ``path`` is a file of an Ansible role (a directory below a
    ``roles/`` directory holding ``tasks/`` and another of a role's
    directories): Ansible renders it with Jinja, and its k8s module applies,
    patches or removes what it names."""
    for directory in _below(path, top):
        if directory == top:
            break
        in_roles = any(p.name == "roles" for p in _below(directory, top))  # roles/NAME, roles/VERSION/NAME
        if in_roles and os.path.isdir(directory / "tasks") and \
                any(os.path.isdir(directory / part) for part in _ROLE_PARTS):
            return f"a file of the Ansible role {_relative(directory, top)}/, which Ansible renders"
    return None


def is_template(text: str) -> bool:
    """Whether the text is a template that is not YAML until rendered."""
    return _template(text) is not None


def negative_case(path: Path) -> bool:
    """Whether the file's name says it is a case invalid on purpose."""
    return bool(_NEGATIVE.search(path.stem))


_OPPOSITE = {"invalid": "valid", "bad": "good", "broken": "working", "wrong": "right"}


def invalid_twin(path: Path) -> str | None:
    """Why a file is a case invalid on purpose: its name says so, and the
    valid case it is a variant of lies beside it (``invalid.yaml`` beside
    ``valid.yaml``, ``invalid-snapshot-v1.yaml`` beside ``snapshot-v1.yaml``,
    ``invalid_multiple_providers.yaml`` beside the directory's one
    ``valid.yaml``): an example of what is refused, not an object to apply."""
    found = _NEGATIVE.search(path.stem)
    if found is None:
        return None
    word = found.group(2).lower()
    head, tail = path.stem[:found.start(2)], path.stem[found.end(2):]
    # the name without the word (a-invalid-b -> a-b), and with its opposite (invalid -> valid)
    removed = head.rstrip("-_.") + tail if head and tail else (head + tail).strip("-_.")
    opposite = head + _OPPOSITE[word] + tail if word in _OPPOSITE else ""
    bare = _OPPOSITE.get(word, "")  # the directory's one valid case (valid.yaml)
    for stem in (s for s in (removed, opposite, bare) if s and s != path.stem):
        for suffix in (".yaml", ".yml", ".json"):
            twin = path.with_name(stem + suffix)
            if twin != path and os.path.isfile(twin):
                return f"a case invalid on purpose, beside the valid one ({twin.name})"
    return None


def _loads(text: str) -> bool:
    """Whether ``text`` is YAML (the build says what is wrong when it is not)."""
    try:
        for _ in yaml.load_all(text, Loader=FAST_LOADER):
            pass
    except (yaml.YAMLError, RecursionError, ValueError):
        return False
    return True


def yaml_defect(text: str, display: str, duplicate_keys: bool = False) -> LoadError | None:
    """What makes the text lose content whatever reads it (not YAML, a
    repeated key, documents run together), as the build would report it;
    with ``duplicate_keys``, a repeated key is none (the later one wins)."""
    try:
        load_documents(text, display, "resource", duplicate_keys=duplicate_keys)
    except LoadError as e:
        return e
    return None


_REPEATED = re.compile(r'mapping key ".*" already defined at line (\d+)\Z')
# ytt's control annotations: a branch, a loop, or a key that may override one
# before it (``#@yaml/map-key-override``)
_YTT_CHOICE = re.compile(r"^[ \t]*#@[ \t]*(?:if|elif|else|for|end)\b|#@[ \t]*yaml/map-key-override", re.MULTILINE)


def ytt_yaml_defect(text: str, display: str) -> LoadError | None:
    """``yaml_defect`` of a ytt template. ytt reads the text as YAML, but
    judges repeated keys in what it writes: a key given again in another
    branch of an ``#@ if``/``#@ elif``/``#@ else`` (or by a loop, or marked
    ``#@yaml/map-key-override``) is ytt's choice, not a defect."""
    defect = yaml_defect(text, display)
    repeated = _REPEATED.search(defect.message) if defect is not None else None
    if defect is None or repeated is None:
        return defect
    between = "\n".join(text.splitlines()[int(repeated.group(1)) - 1:defect.line])
    if _YTT_CHOICE.search(between) is None:
        return defect  # written twice whatever ytt chooses
    return yaml_defect(text, display, duplicate_keys=True)


def summary(found: Iterable[SetAside]) -> list[tuple[str, list[SetAside], str]]:
    """Per reason, in SET_ASIDE order: (reason, its files sorted, one line saying so)."""
    by_reason: dict[str, list[SetAside]] = {}
    for s in found:
        by_reason.setdefault(s.reason, []).append(s)
    out = []
    for reason in SET_ASIDE:
        listed = sorted(by_reason.get(reason, ()), key=lambda s: s.path)
        if listed:
            files = "1 file" if len(listed) == 1 else f"{len(listed)} files"
            out.append((reason, listed, f"{files} not checked as manifests: {SAID[reason]} [{reason}]"))
    return out
