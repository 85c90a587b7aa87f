"""The pull-request view: what a change does to each root's rendered output.

``--diff-against REF`` renders the roots the change can affect twice, at
REF (written out of the object store, see :func:`krmcheck.git.export_tree`)
and in the work tree, then compares them here:

- resource by resource (added, removed, renamed, changed, the last as a
  unified diff of the rendered YAML), with a Secret's values hidden;
- findings: those only the work tree has are new, those only REF has are
  fixed; only new findings fail the run;
- what the change does that a reviewer must see (fields the API server will
  not change in place, privilege gained, objects pruned...): :mod:`krmcheck.flags`.
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
import hashlib
import hmac
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from krmcheck import git
from krmcheck.baseline import Entry, entry_of
from krmcheck.tree import fieldpath
from krmcheck.results import Change, Finding, ResourceRef, RootDiff, RootReport, RunReport, Suppressed
from krmcheck.tree.load import FAST_LOADER


class Rendered(NamedTuple):
    """One rendered resource, as the diff needs it."""

    ref: ResourceRef
    source_id: str  # the resource as its source file names it (see locate.source_id)
    text: str  # its YAML, Secret values replaced by keyed digests (see hide_secret_values)
    path: str = ""  # the file that first wrote it

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What the API server identifies an object by: group, kind, namespace, name."""
        return (_group(self.ref.apiVersion), self.ref.kind, self.ref.namespace, self.ref.name)


@dataclass(frozen=True)
class Context:
    """What one side of a --diff-against run needs: the key of the Secret
    digests, and on the work tree's side, the base's rendered resources by root."""

    secret_key: bytes
    base: tuple[tuple[str, tuple[Rendered, ...]], ...] | None = None

    @functools.cached_property
    def _by_root(self) -> dict[str, tuple[Rendered, ...]]:
        return dict(self.base or ())

    def base_of(self, root: str) -> tuple[Rendered, ...]:
        return self._by_root.get(root, ())


# --- the tree at REF -----------------------------------------------------------------

KEPT_TREES = 4  # trees of earlier runs kept for the next one (a branch's base rarely moves)


def base_tree(top: Path, tree: str, directory: Path) -> Path:
    """The files of ``tree`` (a tree id of the repository at ``top``) under
    ``directory``/ID, written once and reused by later runs; an empty
    ``.git`` marks its top, as a checkout's would."""
    target = directory / tree
    if (target / ".git").exists():
        os.utime(target)
        return target
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f".{tree}.{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    try:
        git.export_tree(top, tree, partial)
        (partial / ".git").write_text("")
        os.replace(partial, target)
    except OSError:
        if not (target / ".git").exists():
            raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)  # another run wrote it first
    _prune(directory, KEPT_TREES)
    return target


def _prune(directory: Path, keep: int) -> None:
    trees = sorted((p for p in directory.iterdir() if not p.name.startswith(".")),
                   key=lambda p: p.stat().st_mtime, reverse=True)
    for old in trees[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def secret_key(directory: Path) -> bytes:
    """The key of the Secret digests: random, kept (readable by its owner
    only) so that the base side's renders stay the same between runs."""
    path = directory / "diff-key"
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        pass
    key = secrets.token_bytes(32)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(key.hex())
    except OSError:
        pass  # an unwritable cache: a key for this run only
    return key


# --- Secret values ------------------------------------------------------------------

SECRET_FIELDS = ("data", "stringData")


def is_secret(data: Any) -> bool:
    """Whether rendered ``data`` is a core Secret."""
    return isinstance(data, dict) and data.get("kind") == "Secret" and "/" not in str(data.get("apiVersion", "v1"))


def hide_secret_values(data: dict[str, Any], key: bytes) -> dict[str, Any]:
    """A Secret with each value of ``data`` and ``stringData`` replaced by a
    digest keyed with ``key`` (random per run and never shown): a diff tells
    which values changed, and nobody can test guesses against the digest."""
    if not is_secret(data):
        return data
    out = dict(data)
    for field in SECRET_FIELDS:
        values = out.get(field)
        if isinstance(values, dict):
            out[field] = {k: _digest(v, key) for k, v in values.items()}
    return out


def _digest(value: Any, key: bytes) -> str:
    mac = hmac.new(key, str(value).encode("utf-8", "backslashreplace"), hashlib.sha256).hexdigest()
    return f"(hidden, digest {mac[:12]})"


# --- comparing two renders ------------------------------------------------------------

def compare(base: Sequence[Rendered], work: Sequence[Rendered]) -> tuple[Change, ...]:
    """The changes from ``base`` to ``work``, in the work tree's output order
    (removed resources last). Resources are paired by what the API server
    identifies an object by (group, kind, namespace, name), so that a new
    apiVersion of one object is a change; where a side holds the same
    object in several apiVersions, each is paired with its own apiVersion
    first."""
    pairs, removed = matched(base, work)
    out: list[Change] = []
    for before, r in pairs:
        if before is None:
            out.append(Change("added", str(r.ref)))
        elif before.key != r.key:
            out.append(Change("renamed", str(r.ref), str(before.ref), _unified(before, r)))
        elif before.text != r.text:
            out.append(Change("changed", str(r.ref), diff=_unified(before, r)))
    out.extend(Change("removed", str(r.ref)) for r in removed)
    return tuple(out)


def matched(base: Sequence[Rendered], work: Sequence[Rendered]
            ) -> tuple[list[tuple[Rendered | None, Rendered]], list[Rendered]]:
    """Each work resource with what it was at REF (None: it is new, a
    renamed one with its old self), and the base resources that are gone."""
    pairs = _pairs(base, work)
    paired = {id(b) for b, _ in pairs if b is not None}
    removed = [r for r in base if id(r) not in paired]
    added = [w for b, w in pairs if b is None]
    renames = _renames(removed, added)
    taken = {id(b) for b in renames.values()}
    return [(before or renames.get(r.key), r) for before, r in pairs], [r for r in removed if id(r) not in taken]


def _pairs(base: Sequence[Rendered], work: Sequence[Rendered]) -> list[tuple[Rendered | None, Rendered]]:
    """Each work resource with the base resource it is (None for none)."""
    by_key: dict[tuple[str, str, str, str], list[Rendered]] = {}
    for r in base:
        by_key.setdefault(r.key, []).append(r)
    out: list[tuple[Rendered | None, Rendered]] = []
    for r in work:
        candidates = by_key.get(r.key, [])
        same = next((b for b in candidates if b.ref.apiVersion == r.ref.apiVersion), None)
        if same is None and candidates and sum(w.key == r.key for w in work) <= len(candidates):
            same = candidates[0]  # the object at a new apiVersion
        if same is not None:
            candidates.remove(same)
        out.append((same, r))
    return out


def _renames(removed: Sequence[Rendered], added: Sequence[Rendered]) -> dict[tuple[str, str, str, str], Rendered]:
    """Added resources that are a removed one under a new name or namespace:
    the same kind, written by the same source resource (a changed prefix,
    suffix or namespace), or, when its own name was edited, the only one of
    its kind that left the file it comes from and the only one that came.
    A generator's new hash suffix is not a rename: kustomize makes a new
    object on purpose, and the old one is pruned once nothing refers to it."""
    out: dict[tuple[str, str, str, str], Rendered] = {}
    for identity in (lambda r: r.source_id, lambda r: r.path):
        by: dict[tuple[str, str, str], list[Rendered]] = {}
        for r in removed:
            if identity(r) and r not in out.values():
                by.setdefault((_group(r.ref.apiVersion), r.ref.kind, identity(r)), []).append(r)
        came = collections.Counter((_group(r.ref.apiVersion), r.ref.kind, identity(r)) for r in added)
        for r in added:
            where = (_group(r.ref.apiVersion), r.ref.kind, identity(r))
            candidates = by.get(where, [])
            if (r.key not in out and identity(r) and len(candidates) == 1 and came[where] == 1
                    and not _rehashed(candidates[0].ref.name, r.ref.name)):
                out[r.key] = candidates.pop()
    return out


_HASHED = re.compile(r"(.+)-[bcdfghkmt2-9]{10}")  # kustomize's name hash alphabet


def _rehashed(old: str, new: str) -> bool:
    a, b = _HASHED.fullmatch(old), _HASHED.fullmatch(new)
    return bool(a and b and a[1] == b[1])


def _unified(before: Rendered, after: Rendered) -> str:
    lines = difflib.unified_diff(before.text.splitlines(keepends=True), after.text.splitlines(keepends=True),
                                 f"a/{before.ref}", f"b/{after.ref}", n=3)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


# --- what the flags read (krmcheck.flags) -------------------------------------------------

MISSING: Any = object()  # a field an object does not have


def renames(removed: Sequence[Rendered], added: Sequence[Rendered]) -> dict[tuple[str, str, str, str], Rendered]:
    """Each added resource that is a removed one under a new name (see :func:`compare`)."""
    return _renames(removed, added)


def data_of(r: Rendered) -> dict[str, Any]:
    """A rendered resource's YAML, loaded."""
    loaded = yaml.load(r.text, Loader=FAST_LOADER)
    return loaded if isinstance(loaded, dict) else {}


def first_difference(old: Any, new: Any, at: tuple[fieldpath.Step, ...]) -> tuple[fieldpath.Step, ...]:
    """The path of the first value that differs within ``new`` (its line is
    the one that made the change), as deep as ``new`` has it."""
    if isinstance(old, dict) and isinstance(new, dict):
        for k, v in new.items():
            if old.get(k, MISSING) != v:
                return first_difference(old.get(k, MISSING), v, at + (fieldpath.key(str(k)),))
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            if a != b:
                return first_difference(a, b, at + (fieldpath.index(i),))
    return at


def get(data: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` of ``data``, or ``MISSING``."""
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return MISSING
        data = data[part]
    return data


# --- findings ------------------------------------------------------------------------

def root_diffs(base: Sequence[RootReport], work: Sequence[RootReport],
               new: dict[str, list[Finding]], fixed: dict[str, list[Finding]]) -> tuple[RootDiff, ...]:
    """Each root of either side with its changes and its new and fixed
    findings; a root that fails to build on a side shows the error instead
    of its resources as removed or added."""
    by_base = {r.root: r for r in base}
    by_work = {r.root: r for r in work}
    out = []
    for name in sorted(set(by_base) | set(by_work)):
        b, w = by_base.get(name), by_work.get(name)
        side = "both" if b and w else ("work" if w else "base")
        fails = _fails(b, w)
        if fails:
            error = next((f.message for r in (w, b) if r is not None and r.build_failed
                          for f in r.findings if f.rule == "build"), "")
            # (a root only the work tree has: what it reports is new)
            out.append(RootDiff(name, side, new=tuple(new.get(name, ())), fails=fails, error=error.split("\n")[0]))
            continue
        changes = compare(_rendered(b), _rendered(w))
        out.append(RootDiff(name, side, changes, tuple(new.get(name, ())), tuple(fixed.get(name, ())),
                            unrendered=_unrendered(b, w)))
    return tuple(out)


def _fails(base: RootReport | None, work: RootReport | None) -> str:
    failed = [side for side, r in (("base", base), ("work", work)) if r is not None and r.build_failed]
    return "both" if len(failed) == 2 else failed[0] if failed else ""


# Findings that say a root's output was not rendered in full.
_NOT_RENDERED = ("helm", "remote")


def _unrendered(base: RootReport | None, work: RootReport | None) -> str:
    reports = [r for r in (base, work) if r is not None]
    if any(r.needs_network for r in reports):
        return "it needs the network, which is off: its output was not rendered"
    charts = {f.message for r in reports for f in list(r.findings) + [s.finding for s in r.suppressed]
              if f.rule in _NOT_RENDERED}
    if charts:
        return "a chart or remote source was not rendered, so its output is not compared"
    return ""


def _rendered(report: RootReport | None) -> Sequence[Rendered]:
    return [Rendered(*r) for r in report.rendered] if report is not None else []


def against(base: RunReport, work: RunReport, ref: str) -> RunReport:
    """The work tree's report, where a finding REF already had is suppressed
    (REF's findings are the baseline), with each root's changes. A finding
    is matched by its fingerprint (validator, file, resource, message), then
    without its file (a finding that moved to another file), then, for the
    run-wide infos whose message counts things, by its validator and
    resource. The findings of a root that fails to build on either side are
    neither new nor fixed (only its build error is reported), but for a root
    REF does not have: with nothing to compare, what it reports is new, as
    a full run reports it."""
    known = _Known(f for r in base.roots for f in r.findings)
    before = {r.root for r in base.roots}
    failing = {r.root for r in base.roots if r.build_failed} | \
        {r.root for r in work.roots if r.build_failed and r.root in before}
    roots, new = [], {}
    for report in work.roots:
        kept, silenced = [], list(report.suppressed)
        for f in report.findings:
            if f.rule != "build" and (f in known or report.root in failing):
                silenced.append(Suppressed(f, "diff-against", ref))
            else:
                kept.append(f)
        new[report.root] = [f for f in kept if f not in known and report.root not in failing]
        roots.append(dataclasses.replace(report, findings=tuple(kept), suppressed=tuple(silenced)))
    still = _Known([f for r in work.roots for f in r.findings]
                   + [s.finding for r in work.roots for s in r.suppressed])
    fixed = {r.root: [f for f in r.findings if f not in still] for r in base.roots if r.root not in failing}
    return dataclasses.replace(work, roots=tuple(roots), diff_against=ref,
                               diff=root_diffs(base.roots, work.roots, new, fixed))


# Run-wide infos: their message counts resources and roots, which a change
# elsewhere alters.
_COUNTED = ("schema-missing", "schema-unjudged")


class _Known:
    """Findings of one side, to tell whether the other side had one."""

    def __init__(self, findings: Iterable[Finding]) -> None:
        listed = list(findings)
        self.entries = {entry_of(f) for f in listed}
        self.moved = {_moved(entry_of(f)) for f in listed}
        self.counted = {(f.rule, _kind_of(f)) for f in listed if f.rule in _COUNTED}

    def __contains__(self, f: object) -> bool:
        if not isinstance(f, Finding):
            return False
        entry = entry_of(f)
        if entry in self.entries or _moved(entry) in self.moved:
            return True
        return f.rule in _COUNTED and (f.rule, _kind_of(f)) in self.counted


def _moved(entry: Entry) -> tuple[str, str, str]:
    return (entry.validator, entry.resource, entry.message)


def _kind_of(f: Finding) -> tuple[str, str]:
    ref = f.result.resource_ref
    return (ref.apiVersion, ref.kind) if ref is not None else ("", "")
