"""Finding kustomization roots, the graph of what each one reads, and which
roots a set of changed files touches."""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import yaml

from krmcheck.applied import API_VERSION, REASONS, Served, SetAside, Sorter
from krmcheck.kustomize.kustomization import FILENAMES
from krmcheck.resource.files import Refused, inside, join, read_text_bounded
from krmcheck.tree.load import FAST_LOADER

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__", ".terraform"})
MANIFEST_SUFFIXES = (".yaml", ".yml")

# Says whether a path (a directory when the flag is set) is excluded from
# the run (``exclude:``, ``--exclude``).
Skip = Callable[[Path, bool], bool]


def _never(path: Path, directory: bool) -> bool:
    return False


@dataclass
class KustomizationInfo:
    """What a kustomization reads, from a light parse (no build)."""

    directory: Path
    is_component: bool = False
    dirs: set[Path] = field(default_factory=set)  # kustomization directories it includes
    files: set[Path] = field(default_factory=set)  # other files it reads
    plugin_inputs: set[Path] = field(default_factory=set)  # files its plugins' configurations name


# How long one walk over the repository that reads its files (the scan for
# CRD files, the search for plain manifests) may take; the real-world
# corpus's kubeflow/manifests is scanned in under half a second.
SCAN_SECONDS = 60.0
SCAN = "scan"  # the id of the findings about files a scan did not read


class Refusal(NamedTuple):
    """A file a scan did not read, or where it stopped, and why."""

    path: Path
    reason: str


@dataclass
class Scan:
    """One walk over the repository that reads files: each read bounded
    (:func:`krmcheck.resource.files.read_bounded`: its size, special files,
    and, with ``top``, symbolic links out of the repository), the walk
    bounded in time (``SCAN_SECONDS``). What it refused and where it stopped
    are kept for the run to report (``refused``)."""

    top: Path | None = None  # files must really be at or below it...
    what: str = "files"  # what the walk looks for, for the message where it stops
    # ...or be one a kustomization reads (lifting its load restrictor), resolved
    also: frozenset[Path] = frozenset()
    refused: list[Refusal] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    stopped: bool = False

    def text(self, path: Path) -> str | None:
        """The file's text; None when it cannot be read or was refused."""
        try:
            return read_text_bounded(path, None if self.also and _resolved(path) in self.also else self.top)
        except Refused as e:
            self.refused.append(Refusal(path, f"not read: {e.reason}"))
        except (OSError, ValueError):
            pass  # gone, unreadable, a NUL byte: nothing to look at
        return None

    def out_of_time(self, path: Path) -> bool:
        """Whether the walk's time is up; said once, at ``path``, the first
        place not looked at."""
        if self.stopped:
            return True
        if time.monotonic() - self.started <= SCAN_SECONDS:
            return False
        self.stopped = True
        self.refused.append(Refusal(path, f"the scan for {self.what} reached its time limit of "
                                          f"{SCAN_SECONDS:g} s here: what is here and after it "
                                          f"(in path order) was not read"))
        return True


def repo_root(start: Path) -> Path:
    """The top of the git work tree holding ``start``, else ``start`` itself."""
    return git_top(start) or start.resolve()


def git_top(start: Path) -> Path | None:
    """The top of the git work tree holding ``start``, if any."""
    cur = start.resolve()
    for d in (cur, *cur.parents):
        if os.path.exists(d / ".git"):
            return d
    return None


def top_of(path: Path, cwd: Path) -> Path:
    """The top a checked ``path`` is named from: its git work tree's; outside
    one, the working directory when the path is in it, else the path's
    directory."""
    found = git_top(path if os.path.isdir(path) else path.parent)
    if found is not None:
        return found
    here = cwd.resolve()
    real = path.resolve()
    if real == here or here in real.parents:
        return here
    return real if os.path.isdir(real) else real.parent


def find_kustomizations(paths: list[Path], skip: Skip = _never) -> list[Path]:
    """Every directory under ``paths`` holding a kustomization file, sorted."""
    found: set[Path] = set()
    for directory, filenames in _walk(paths, skip):
        if any(n in filenames for n in FILENAMES):
            found.add(directory)
    return sorted(found)


def walk(paths: Iterable[Path], skip: Skip = _never) -> Iterator[tuple[Path, list[str]]]:
    """(directory, its file names) under ``paths``, as discovery sees them."""
    return _walk(paths, skip)


def _walk(paths: Iterable[Path], skip: Skip) -> Iterator[tuple[Path, list[str]]]:
    """(directory, its file names) under ``paths``, leaving out what ``skip``
    excludes and the directories no repository checks (.git, node_modules...)."""
    for p in paths:
        if os.path.isfile(p):
            p = p.parent
        if skip(p.resolve(), True):
            continue
        for dirpath, dirnames, filenames in os.walk(p):
            here = Path(dirpath).resolve()
            dirnames[:] = sorted(d for d in dirnames
                                 if d not in SKIP_DIRS and not skip(here / d, True))
            yield here, sorted(f for f in filenames if not skip(here / f, False))


# A Kubernetes object's file has top-level apiVersion and kind lines; the
# apiVersions of kustomize's and kpt's own configuration files are not objects.
_KIND = re.compile(r"^kind:[ \t]*\S", re.MULTILINE)
_NOT_OBJECTS = ("kustomize.config.k8s.io/", "kpt.dev/", "config.kubernetes.io/", "fn.kpt.dev/")
LOCAL_CONFIG = "config.kubernetes.io/local-config"
# kustomize's and kpt's marker of a function's configuration (kyaml runtimeutil),
# and its older spelling: an input of `kustomize fn run`, never applied
_FUNCTION_CONFIG = re.compile(r"^[ \t]+config\.(?:kubernetes\.io|k8s\.io)/function:", re.MULTILINE)


def find_manifests(paths: list[Path], infos: dict[Path, KustomizationInfo],
                   skip: Skip = _never, also_read: Iterable[Path] = (),
                   sorter: Sorter | None = None, scan: Scan | None = None) -> list[Path]:
    """YAML files under ``paths`` (or among them, when they are files) that
    hold Kubernetes objects and that nothing reads: no kustomization of
    ``infos``, no Kptfile beside them, nothing in ``also_read`` (function
    configurations the run's configuration names). Helm charts (a directory
    with ``Chart.yaml``) hold templates, not objects. Files that ``sorter``
    sets aside as not applied (:mod:`krmcheck.applied`) are kept in its
    ``found`` list instead. Files are read through ``scan``, which keeps
    what it refused."""
    scan = scan if scan is not None else Scan(what="plain manifests")
    read = {f for info in infos.values() for f in info.files} | {_resolved(p) for p in also_read}
    charts: list[Path] = []
    files = [p for p in paths if os.path.isfile(p) and not skip(_resolved(p), False)]
    if sorter is not None:
        for f in files:  # what marks a given file's directory is above it
            _learn_above(sorter, _resolved(f).parent, skip, scan)
    for directory, names in _walk([p for p in paths if os.path.isdir(p)], skip):
        if scan.out_of_time(directory):
            break
        if "Chart.yaml" in names:
            charts.append(directory)
        if any(inside(directory, c, resolve=False) for c in charts):
            continue
        if "Kptfile" in names:
            read |= _kptfile_reads(directory)
        if sorter is not None:
            sorter.learn_names(directory, names)
        files.extend(directory / n for n in names)
    candidates: dict[Path, str] = {}
    for path in files:
        if scan.out_of_time(path):
            break
        real = _resolved(path)
        if real.suffix in MANIFEST_SUFFIXES and real.name not in FILENAMES and real not in read:
            text = manifest_text(path, scan)  # a refusal names the file as the repository does
            if text is not None:
                candidates[real] = text
                if sorter is not None:
                    sorter.learn_text(real, text)
    if sorter is None:
        return sorted(candidates)
    found: list[Path] = []
    for path, text in sorted(candidates.items()):
        aside = sorter.set_aside(path, text)
        if aside is None:
            found.append(path)
            as_test = sorter.test_input(path, text)
            if as_test is not None:
                sorter.test_inputs.append(as_test)
        else:
            sorter.found.append(aside)
    return found


def _learn_above(sorter: Sorter, directory: Path, skip: Skip, scan: Scan) -> None:
    """Teach ``sorter`` the markers of ``directory`` and the directories above
    it, up to the top of the repository, as a walk of the whole would."""
    for d in (directory, *directory.parents):
        if d in sorter.learned:
            continue
        sorter.learned.add(d)
        try:
            names = sorted(n for n in os.listdir(d) if not skip(d / n, False))
        except OSError:
            names = []
        sorter.learn_names(d, names)
        for n in names:
            if n.endswith(MANIFEST_SUFFIXES) and n not in FILENAMES:
                text = manifest_text(d / n, scan)
                if text is not None:
                    sorter.learn_text(d / n, text)
        if d == sorter.top:
            break


_CONFIG_PATH = re.compile(r"^\s*-?\s*configPath:\s*[\"']?([^\s\"'#]+)", re.MULTILINE)


def _kptfile_reads(directory: Path) -> set[Path]:
    """The function configurations a Kptfile's pipeline names (``configPath``)."""
    try:
        text = read_text_bounded(directory / "Kptfile")
    except OSError:
        return set()
    return {_resolved(directory / rel) for rel in _CONFIG_PATH.findall(text)}


def find_crd_files(paths: list[Path], skip: Skip = _never, scan: Scan | None = None,
                   webhooks: list[Path] | None = None) -> list[Path]:
    """YAML and JSON files under ``paths`` that may hold CustomResourceDefinitions
    (Helm charts' ``crds/`` folders included), for schemas of custom kinds,
    read through ``scan`` (which keeps what it refused, and where its time
    ran out); the files that may hold a MutatingWebhookConfiguration are
    added to ``webhooks``."""
    scan = scan if scan is not None else Scan(what="CRD files")
    found: list[Path] = []
    for directory, names in _walk([p for p in paths if os.path.isdir(p)], skip):
        if scan.out_of_time(directory):
            break
        for name in names:
            if name.endswith((".yaml", ".yml", ".json")):
                path = directory / name
                if scan.out_of_time(path):
                    return sorted(found)
                text = scan.text(path)
                if text is not None and "CustomResourceDefinition" in text:
                    found.append(path)
                if webhooks is not None and text is not None and "MutatingWebhookConfiguration" in text:
                    webhooks.append(path)
    return sorted(found)


def is_input_name(path: Path) -> bool:
    """Whether writing a report to ``path`` would overwrite something krmcheck
    reads: a kustomization, its configuration, or a Kubernetes manifest."""
    if path.name in FILENAMES or path.name in (".krmcheck.yaml", ".krmcheck.yml"):
        return True
    return os.path.isfile(path) and path.suffix in MANIFEST_SUFFIXES and is_manifest(path)


def is_manifest(path: Path) -> bool:
    """Whether a file looks like Kubernetes objects (not proof: the build decides)."""
    return manifest_text(path) is not None


def manifest_text(path: Path, scan: Scan | None = None) -> str | None:
    """The text of a file that looks like Kubernetes objects, else None
    (read through ``scan`` when given, which keeps a refusal)."""
    if scan is not None:
        text = scan.text(path)
        if text is None:
            return None
    else:
        try:
            text = read_text_bounded(path)
        except (OSError, ValueError):
            return None
    if LOCAL_CONFIG in text:
        return None  # kpt's marker for configuration that is never applied
    if "/function:" in text and _FUNCTION_CONFIG.search(text):
        return None  # a function's configuration
    versions = API_VERSION.findall(text)
    if versions and _KIND.search(text) and not any(v.startswith(_NOT_OBJECTS) or v == "builtin"
                                                    for v in versions):
        return text
    return None


def read_info(directory: Path) -> KustomizationInfo:
    """What a kustomization refers to, read leniently: discovery only orders
    and groups roots, and the build reports whatever is wrong with the file."""
    info = KustomizationInfo(directory)
    for name in FILENAMES:
        path = directory / name
        if os.path.isfile(path):
            info.files.add(_resolved(path))
            try:
                data = yaml.load(read_text_bounded(path), Loader=FAST_LOADER)
            except (OSError, ValueError, yaml.YAMLError, RecursionError):
                return info
            if isinstance(data, dict):
                _collect(info, data)
            break
    return info


def _resolved(path: Path) -> Path:
    """``path`` resolved as far as the file system allows (a symlink loop or a
    NUL byte leaves it as written; the build reports those)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return Path(os.path.abspath(path))


def _entries(value: object) -> list[str]:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and "\n" not in v and "://" not in v]
    return []


def _items(value: object) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _collect(info: KustomizationInfo, data: dict) -> None:
    d = info.directory
    info.is_component = data.get("kind") == "Component"
    for key in ("resources", "bases", "components", "generators", "transformers", "validators",
                "catalogs"):
        for rel in _entries(data.get(key)):
            target = _resolved(join(d, rel))
            (info.dirs if os.path.isdir(target) else info.files).add(target)
            if key in _PLUGIN_KEYS and os.path.isfile(target):
                info.plugin_inputs.update(plugin_inputs(target))
    rels = [rel for key in ("patchesStrategicMerge", "crds", "configurations") for rel in _entries(data.get(key))]
    rels += [item["path"] for key in ("patches", "patchesJson6902", "replacements")
             for item in _items(data.get(key)) if isinstance(item.get("path"), str)]
    openapi = data.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        rels.append(openapi["path"])
    for chart in _items(data.get("helmCharts")):
        rels += _entries(chart.get("additionalValuesFiles")) + _entries([chart.get("valuesFile")])
    for key in ("configMapGenerator", "secretGenerator"):
        for item in _items(data.get(key)):
            rels += [rel.split("=", 1)[-1] for rel in _entries(item.get("files"))]
            rels += _entries(item.get("envs")) + _entries([item.get("env")])
    info.files.update(_resolved(join(d, rel)) for rel in rels)



_PLUGIN_KEYS = ("generators", "transformers", "validators")


def plugin_inputs(config: Path) -> set[Path]:
    """The files below its own directory that a plugin's configuration file
    names by a path from there (PolicyGenerator's ``manifests: [{path:
    input/policy.yaml}]``; a directory's YAML files for a path naming one):
    the plugin reads them, and what it makes of them is what the
    kustomization renders. A change to one selects the kustomization; each
    is still checked as a plain manifest, as the plugin's input
    (:class:`krmcheck.applied.Sorter`), since the plugin may not run here."""
    try:
        docs = list(yaml.load_all(read_text_bounded(config), Loader=FAST_LOADER))
    except (OSError, ValueError, yaml.YAMLError, RecursionError):
        return set()
    found: set[Path] = set()
    stack: list[object] = list(docs)
    while stack and len(found) < 4096:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and 0 < len(node) < 256 and "\n" not in node and "://" not in node \
                and not os.path.isabs(node) and node not in (".", ".."):
            target = _resolved(join(config.parent, node))
            if target == config or config.parent not in target.parents:
                continue  # (only what lies below the configuration's own directory)
            if os.path.isfile(target):
                found.add(target)
            elif os.path.isdir(target) and target != config.parent:
                found.update(_resolved(target / n) for n in _yaml_names(target))
    return found


def _yaml_names(directory: Path) -> list[str]:
    try:
        return [n for n in os.listdir(directory) if n.endswith((".yaml", ".yml"))]
    except OSError:
        return []


def graph(kdirs: list[Path]) -> dict[Path, KustomizationInfo]:
    return {d: read_info(d) for d in kdirs}


def default_roots(infos: dict[Path, KustomizationInfo]) -> list[Path]:
    """Kustomizations no other one includes; Components are never roots.

    A kustomization that only a cycle of inclusions reaches (two that include
    each other, or one that lists itself) is a root too, one per cycle, so
    that its build reports the cycle instead of nothing being checked."""
    included = {t for d, i in infos.items() for t in i.dirs if t != d}
    roots = [d for d, i in sorted(infos.items()) if d not in included and not i.is_component]
    reached = _reachable(roots, infos)
    for d, i in sorted(infos.items()):
        if d not in reached and not i.is_component:
            roots.append(d)
            reached |= _reachable([d], infos)
    return sorted(roots)


def _reachable(start: Iterable[Path], infos: dict[Path, KustomizationInfo]) -> set[Path]:
    seen: set[Path] = set()
    stack = list(start)
    while stack:
        d = stack.pop()
        if d not in seen:
            seen.add(d)
            stack.extend(infos[d].dirs if d in infos else ())
    return seen


def all_roots(infos: dict[Path, KustomizationInfo]) -> list[Path]:
    return [d for d, i in sorted(infos.items()) if not i.is_component]


def reads(root: Path, infos: dict[Path, KustomizationInfo]) -> set[Path]:
    """Every file a root can read, through the kustomizations it includes
    (a plain manifest root reads itself)."""
    if os.path.isfile(root):
        return {root}
    seen: set[Path] = set()
    out: set[Path] = set()
    stack = [root]
    while stack:
        d = stack.pop()
        if d in seen:
            continue
        seen.add(d)
        info = infos.get(d) or read_info(d)
        out |= info.files | info.plugin_inputs
        for sub in info.dirs:
            out.add(sub)
            stack.append(sub)
        for f in info.files:
            if os.path.isdir(f):
                stack.append(f)
    return out


def touched_roots(roots: list[Path], changed: list[Path],
                  infos: dict[Path, KustomizationInfo]) -> list[Path]:
    """The roots that read any of ``changed`` (a changed kustomization file
    counts as read by every root that includes its directory)."""
    changed_set = {c.resolve() for c in changed}
    return [root for root in roots if reads(root, infos) & changed_set]


class NothingToCheck(Exception):
    """A path, root or revision that gives the run nothing it can check."""


@dataclass(frozen=True)
class Selection:
    roots: tuple[Path, ...]  # kustomization directories and plain manifest files
    infos: dict[Path, KustomizationInfo]
    changed: bool  # only what changed files touch (pre-commit, --changed-since)
    set_aside: tuple[SetAside, ...] = ()  # would-be manifests that are not applied (krmcheck.applied)
    refused: tuple[Refusal, ...] = ()  # files the search for manifests did not read, and why
    test_inputs: tuple[SetAside, ...] = ()  # manifests in test directories: cluster findings are warnings


def select(paths: tuple[Path, ...], mode: tuple[str, ...], changed_since: str | None,
           top: Path, skip: Skip = _never, also_read: tuple[Path, ...] = (),
           not_applied: tuple[str, ...] = REASONS, shown: Callable[[Path], str] = str,
           served: Served | None = None) -> Selection:
    """The roots a run checks.

    Directories in ``paths`` are searched; files in them are changed files
    (as pre-commit passes them), as are the files changed since
    ``changed_since``: then only the roots that read one of them are kept.
    ``mode`` is ``("all",)`` (every kustomization is a root), explicit root
    directories, or empty (the kustomizations no other one includes). Plain
    manifests that nothing reads (see :func:`find_manifests`) are roots of
    their own, unless one of the ``not_applied`` rules sets them aside
    (every rule is off with ``("all",)``)."""
    for p in paths:
        if not os.path.exists(p) and not changed_since:
            raise NothingToCheck(f"{shown(p)}: no such file or directory")
    if mode and mode != ("all",):
        return _explicit(mode, shown)
    directories = [p for p in paths if os.path.isdir(p)]
    changed = [p for p in paths if not os.path.isdir(p)]
    if changed_since:
        changed += _changed(changed_since, top)
    search = [top] if changed or changed_since else directories or [top]
    infos = graph(find_kustomizations(search, skip))
    kustomizations = all_roots(infos) if mode == ("all",) else default_roots(infos)
    sorter = Sorter(top.resolve(), () if mode == ("all",) else not_applied,
                    served if served is not None else ServedKinds(top.resolve(), skip),
                    kustomizations=infos, read=(f for i in infos.values() for f in i.files),
                    plugin_inputs={f: i.directory for i in infos.values() for f in i.plugin_inputs},
                    searched=[_resolved(d) for d in directories])
    kustomizations = _not_vendored(kustomizations, sorter)
    scan = Scan(top.resolve(), "plain manifests")
    for directory in kustomizations:  # a test's input, or a fragment a page shows, as a plain file is
        found = find_file_in(directory)
        as_test = sorter.test_input(found, "") if found is not None else None
        if as_test is not None:
            sorter.test_inputs.append(dataclasses.replace(as_test, path=directory))
    if changed or changed_since:
        manifests = find_manifests([c for c in changed if os.path.isfile(c)], infos, skip, also_read, sorter,
                                   scan)
        roots = touched_roots(kustomizations, changed, infos) + manifests
        return Selection(tuple(sorted(set(roots))), infos, True, tuple(sorter.found), tuple(scan.refused),
                         tuple(sorter.test_inputs))
    manifests = find_manifests(directories, infos, skip, also_read, sorter, scan)
    for d in directories:
        _something_under(d, kustomizations + manifests, skip, sorter.found, shown)
    return Selection(tuple(sorted(set(kustomizations + manifests))), infos, False, tuple(sorter.found),
                     tuple(scan.refused), tuple(sorter.test_inputs))


def _not_vendored(directories: list[Path], sorter: Sorter) -> list[Path]:
    """``directories`` but the kustomizations a Go dependency tool vendored,
    which ``sorter`` keeps as set aside."""
    kept = []
    for directory in directories:
        found = find_file_in(directory)
        aside = sorter.vendored(found) if found is not None else None
        if aside is None:
            kept.append(directory)
        else:
            sorter.found.append(aside)
    return kept


class ServedKinds:
    """Whether an apiVersion and kind are served: a built-in kind of the
    newest packaged Kubernetes version, or a kind a CustomResourceDefinition
    of the repository defines (scanned once, when first asked)."""

    def __init__(self, top: Path, skip: Skip = _never, extra: Callable[[str, str], bool] | None = None) -> None:
        self.top, self.skip, self.extra = top, skip, extra
        self.defined: set[tuple[str, str]] | None = None

    def __call__(self, api_version: str, kind: str) -> bool:
        from krmcheck.schemas import builtin

        try:
            if builtin.kind_schema(builtin.versions()[-1], False, api_version, kind) is not None:
                return True
        except (OSError, ValueError):
            pass
        if self.defined is None:
            self.defined = self._scan()
        group = api_version.rpartition("/")[0]
        if (group, kind) in self.defined:
            return True
        return self.extra is not None and self.extra(api_version, kind)

    def _scan(self) -> set[tuple[str, str]]:
        found: set[tuple[str, str]] = set()
        for path in find_crd_files([self.top], self.skip, Scan(self.top, "CRD files")):
            try:
                documents = list(yaml.load_all(read_text_bounded(path), Loader=FAST_LOADER))
            except (OSError, ValueError, yaml.YAMLError, RecursionError):
                continue
            for doc in documents:
                if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                    continue
                spec = doc.get("spec")
                names = spec.get("names") if isinstance(spec, dict) else None
                if isinstance(spec, dict) and isinstance(names, dict) and isinstance(spec.get("group"), str):
                    found.add((spec["group"], str(names.get("kind"))))
        return found


def _explicit(mode: tuple[str, ...], shown: Callable[[Path], str] = str) -> Selection:
    for given in mode:
        if not os.path.isdir(given):
            raise NothingToCheck(f"--roots {shown(Path(given))}: not a directory")
    roots = tuple(Path(r).resolve() for r in mode)
    return Selection(roots, graph([r for r in roots if find_kustomization(r)]), False)


def find_file_in(directory: Path) -> Path | None:
    """The kustomization file of a directory, under whichever name it has."""
    return next((directory / n for n in FILENAMES if os.path.isfile(directory / n)), None)


def find_kustomization(directory: Path) -> bool:
    return any(os.path.isfile(directory / n) for n in FILENAMES)


def changed_paths(ref: str, top: Path) -> list[Path]:
    """The files changed since ``ref`` (NothingToCheck for a ref that is not there)."""
    return _changed(ref, top)


def _changed(ref: str, top: Path) -> list[Path]:
    from krmcheck import git  # only --changed-since and --diff-against read the repository

    try:
        return git.changed_since(ref, top)
    except KeyError:
        raise NothingToCheck(f"--changed-since {ref}: no such commit, branch or tag") from None
    except Exception as e:  # noqa: BLE001 - dulwich raises many types; this is the boundary
        raise NothingToCheck(f"--changed-since {ref}: {e}") from None


def _something_under(directory: Path, roots: list[Path], skip: Skip,
                     set_aside: Iterable[SetAside] = (), shown: Callable[[Path], str] = str) -> None:
    """A searched directory must hold something to check (a mistyped path
    or the wrong checkout must not pass as a clean run)."""
    real = directory.resolve()
    if any(inside(r, real, resolve=False) for r in roots):
        return
    if skip(real, True):
        raise NothingToCheck(f"{shown(directory)}: nothing to check: the path is excluded")
    aside = [s for s in set_aside if inside(s.path, real, resolve=False)]
    if aside:
        reasons = ", ".join(sorted({s.reason for s in aside}))
        raise NothingToCheck(f"{shown(directory)}: nothing to check: its {len(aside)} YAML file(s) with "
                             f"apiVersion and kind are not applied to a cluster ({reasons}); "
                             f"--roots all checks them")
    raise NothingToCheck(f"{shown(directory)}: nothing to check: no kustomization and no Kubernetes "
                         f"manifest (a YAML file with apiVersion and kind) under it")
