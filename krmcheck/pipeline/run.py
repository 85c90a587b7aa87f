"""One run of the check: what it was asked (:class:`CheckOptions`) and what
follows from the paths being checked, worked out once (:class:`Run`).

The top of the repository comes from the paths, never from the working
directory: ``krmcheck repo`` from above a repository and ``cd repo &&
krmcheck .`` find the same top, roots and findings. The working directory
is read once, when the command starts (:func:`anchored`): relative
arguments are resolved against it, and the text report names files
relative to it. Paths in two repositories make two runs, one per top.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from krmcheck import config as krmconfig
from krmcheck import discover
from krmcheck import shard as kshard
from krmcheck.kustomize.plugins import FunctionOptions
from krmcheck.resource.files import Files

if TYPE_CHECKING:
    from krmcheck import diff as kdiff

T = TypeVar("T")


class UsageError(Exception):
    """Bad arguments or configuration: exit 2 with one message."""


@dataclass(frozen=True)
class CheckOptions:
    paths: tuple[Path, ...] = (Path("."),)
    roots: tuple[str, ...] = ()
    changed_since: str | None = None
    kubernetes_version: str | None = None
    strict: bool = False
    fail_on: str | None = None  # None: the config file's fail-on, else "error"
    junit: str | None = None
    sarif: str | None = None
    json: str | None = None
    gitlab: str | None = None
    github: str = "auto"
    # --load-restrictor; "" when not given: .krmcheck.yaml's setting for the root, else RootOnly
    load_restrictor: str = ""
    jobs: int = 0  # worker processes; 0: one per CPU when the roots form more than one group
    network: bool = False
    require_network: bool = False  # a root that needs the network, which is off, fails to build
    enable_alpha_plugins: bool = False
    enable_helm: bool = False
    helm_command: str = "helm"
    functions: FunctionOptions = FunctionOptions()  # exec plugins and KRM functions
    trusted_catalogs: tuple[str, ...] = ()  # --trusted-catalog LOCATION...
    shard: kshard.Shard | None = None  # --shard K/N: check only this part of the roots
    exclude: tuple[str, ...] = ()  # --exclude PATTERN...: gitignore-style, relative to ``cwd``
    schema_locations: tuple[str, ...] = ()  # --schema-location, in order
    require_schemas: bool = False  # --require-schemas: a kind without a schema is an error
    baseline: str | None = None  # --baseline FILE
    write_baseline: str | None = None  # --write-baseline FILE
    diff_against: str | None = None  # --diff-against REF: the pull-request view
    fail_on_flags: tuple[str, ...] = ()  # --fail-on-flag ID...: these flags of the view fail the run
    markdown: str | None = None  # --markdown FILE: the pull-request view for a comment
    # Set by the --diff-against run for each of its two sides, never by a user:
    only_roots: frozenset[str] | None = None  # check these roots (by name) only
    diff: kdiff.Context | None = None  # keep each root's rendered output (and compare)
    repo_urls: tuple[str, ...] = ()  # more URLs that name this repository (a REF tree has no remote)
    cache: bool = True  # reuse the reports of unchanged roots from earlier runs (pipeline/render_cache.py)
    # Where the command was started: what relative arguments are relative to,
    # and what the text report names files from. None until :func:`anchored`.
    cwd: Path | None = None


def anchored(opts: CheckOptions, cwd: Path | None = None) -> CheckOptions:
    """``opts`` with the working directory read (once) and every relative
    path argument made absolute against it."""
    if opts.cwd is not None:
        return opts
    here = (cwd or Path.cwd()).resolve()

    def absolute(p: str | None) -> str | None:
        return p if p is None or os.path.isabs(p) else str(here / p)

    return dataclasses.replace(
        opts, cwd=here, paths=tuple(p if p.is_absolute() else here / p for p in opts.paths),
        junit=absolute(opts.junit), sarif=absolute(opts.sarif), json=absolute(opts.json),
        gitlab=absolute(opts.gitlab), markdown=absolute(opts.markdown), baseline=absolute(opts.baseline),
        write_baseline=absolute(opts.write_baseline),
        schema_locations=tuple(loc if loc.startswith(("http://", "https://")) else str(here / loc)
                               for loc in opts.schema_locations),
        trusted_catalogs=tuple(_trusted(t, here) for t in opts.trusted_catalogs),
        roots=tuple(r if r in KEYWORDS else str(here / r) for r in opts.roots))


KEYWORDS = ("all", "kustomize", "default")  # --roots values that are no directory


def _trusted(location: str, here: Path) -> str:
    """A --trusted-catalog location: a path is made absolute; a URL or an
    oci:// reference is kept."""
    if "://" in location or location.startswith("oci:"):
        return location
    return str(here / location)


class Memo:
    """What the two sides of a ``--diff-against`` run and the passes over
    each side would otherwise work out again: values by key, made once."""

    def __init__(self) -> None:
        self._values: dict[tuple[Any, ...], Any] = {}

    def get(self, key: tuple[Any, ...], make: Callable[[], T]) -> T:
        if key not in self._values:
            self._values[key] = make()
        value: T = self._values[key]
        return value


@dataclass(frozen=True)
class Run:
    """One check of one repository: made once, passed down."""

    options: CheckOptions  # anchored: every path absolute, ``cwd`` set
    top: Path  # the top of the repository holding the paths
    config: krmconfig.Config
    memo: Memo = field(default_factory=Memo, compare=False, repr=False)

    @property
    def files(self) -> Files:
        return Files(self.top)

    @property
    def cwd(self) -> Path:
        assert self.options.cwd is not None
        return self.options.cwd

    def here(self) -> str:
        """The working directory relative to the top ("" at the top; a path
        with ``..`` when the command was started outside the repository)."""
        rel = Path(os.path.relpath(self.cwd, self.top)).as_posix()
        return "" if rel == "." else rel


Progress = Callable[[int, int, str], None]  # (roots done, roots in all, the root just done)


def start(opts: CheckOptions) -> list[Run]:
    """The runs of an anchored ``opts``: one per repository its paths are in,
    each with the top found from its paths and its configuration."""
    cwd = opts.cwd or Path.cwd()
    by_top: dict[Path, list[Path]] = {}
    for p in opts.paths:
        by_top.setdefault(discover.top_of(p, cwd), []).append(p)
    if not by_top:  # no path: the working directory's repository
        by_top[discover.top_of(cwd, cwd)] = []
    runs = []
    for top, paths in by_top.items():
        mine = dataclasses.replace(opts, paths=tuple(paths) or (top,))
        # Directories use the configuration nearest above them; changed
        # files (pre-commit) the one the whole repository's run uses, so
        # that a file is judged as a full run judges it.
        dirs = [p for p in paths if os.path.isdir(p)]
        runs.append(Run(mine, top, load_config(dataclasses.replace(mine, paths=tuple(dirs) or (top,)), top)))
    return runs


def with_options(run: Run, **changes: Any) -> Run:
    return dataclasses.replace(run, options=dataclasses.replace(run.options, **changes))


def shown(path: Path, cwd: Path) -> str:
    """A path as the user would have written it: relative to the working directory."""
    rel = os.path.relpath(path, cwd)
    return path.as_posix() if rel.startswith("../..") else Path(rel).as_posix()


def whole_repository(run: Run) -> Run:
    """The run over the whole repository (no changed files)."""
    return with_options(run, paths=(run.top,), changed_since=None)


def silent(done: int, total: int, root: str) -> None:
    pass


def load_config(opts: CheckOptions, top: Path) -> krmconfig.Config:
    """``.krmcheck.yaml`` above the checked paths; its problems are usage errors."""
    found = krmconfig.find(opts.paths, top)
    known = known_validators()
    if found is None:
        return with_flags(dataclasses.replace(krmconfig.EMPTY, opt_in=known.opt_in), opts)
    try:
        config = krmconfig.load(found, Files(top).display(found), known)
    except krmconfig.ConfigError as e:
        # each problem at its line, the file named from where the command started
        cwd = opts.cwd or top
        lines = [f"{loc._replace(path=shown(top / loc.path, cwd))}: {message}" for loc, message in e.problems]
        raise UsageError("\nkrmcheck: error: ".join(lines)) from None
    return with_flags(config, opts)


def with_flags(config: krmconfig.Config, opts: CheckOptions) -> krmconfig.Config:
    """The configuration with the flags that win over it folded in."""
    return dataclasses.replace(config, require_network=True) if opts.require_network else config


def known_validators() -> krmconfig.KnownValidators:
    """The registry's validators, as a configuration may name them."""
    from krmcheck.validators import VALIDATORS, enabled_by_default, schema

    def version_problem(version: str) -> str:
        try:
            schema.resolve_version(version)
        except ValueError as e:
            return str(e)
        return ""

    return krmconfig.KnownValidators(frozenset(VALIDATORS),
                                     frozenset(v for v in VALIDATORS if not enabled_by_default(v)),
                                     version_problem)
