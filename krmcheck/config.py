"""``.krmcheck.yaml``: the run's configuration, found upward from the checked paths.

The file is checked with jsonschema against ``config_schema.json`` like any
other input, and every problem is reported at its own line and column of
the file (it is loaded into a provenance tree, so each schema error's path
leads to the node that is wrong). Command-line flags override the file.

External validators are KRM functions (an ``exec`` path relative to the
file, or a container ``image``) given each root's rendered output after the
built-in validators; their Results are located like built-in findings.
"""

from __future__ import annotations

import functools
import json
import os
import posixpath
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from krmcheck.applied import REASONS
from krmcheck.resource.function import ExternalValidator, FunctionSpec, Mount
from krmcheck.resource.files import read_bounded
from krmcheck.scope import PathPatterns, refusal
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, lookup
from krmcheck.tree.node import Sequence as SequenceNode
from krmcheck.tree.origin import Location, Origin, Variable
from krmcheck.validators.base import Provided, ValidatorOptions

if TYPE_CHECKING:  # imported when a configuration file is checked
    import jsonschema

FILE_NAMES = (".krmcheck.yaml", ".krmcheck.yml")
BY = "krmcheck config"
# Ids of findings that come from somewhere else than a registered validator:
# the schema validator's kinds without a schema, kubectl's deprecation
# warnings, ignore comments or annotations that silence nothing, and roots
# not checked because they need the network, and files a scan of the
# repository did not read.
EXTRA_IDS = ("schema-missing", "schema-unjudged", "deprecation", "unused-ignore", "duplicate",
             "substitution", "helm", "remote", "scan", "written", "encrypted", "load-restrictor", "plugins", "resourceset",
             "flux-instance")


class KnownValidators(NamedTuple):
    """What the validators are, as a configuration file may name them; the
    pipeline gives it from the registry, so that reading a configuration
    loads no validator."""

    ids: frozenset[str] = frozenset()  # the built-in validators' ids
    opt_in: frozenset[str] = frozenset()  # those off unless the configuration names them
    # what is wrong with a Kubernetes version ("" when nothing)
    version_problem: Callable[[str], str] = lambda version: ""


class ConfigError(Exception):
    """Problems in a configuration file, each at its location."""

    def __init__(self, problems: Sequence[tuple[Location, str]]) -> None:
        self.problems = tuple(sorted(problems))
        super().__init__("\n".join(f"{loc}: {message}" for loc, message in self.problems))


@dataclass(frozen=True)
class ValidatorSetting:
    """One validator's entry under ``validators:`` (or an override's)."""

    enabled: bool = True
    kubernetes_version: str | None = None
    strict: bool | None = None
    severity: str | None = None  # error, warning or info; None: the validator's own


@dataclass(frozen=True)
class TrustedCatalog:
    reference: str  # as written: a path relative to ``directory``, a URL or an oci:// reference
    directory: Path
    origin: Origin


@dataclass(frozen=True)
class Config:
    path: str = ""  # repo-relative; "" when no file was found
    fail_on: str | None = None
    kubernetes_version: str | None = None
    strict: bool | None = None
    validators: dict[str, ValidatorSetting] = field(default_factory=dict)
    trusted_catalogs: tuple[TrustedCatalog, ...] = ()
    kptfile_validators: bool = False
    external_validators: tuple[ExternalValidator, ...] = ()
    schema_locations: tuple[str, ...] = ()  # relative paths resolved against the file's directory
    require_schemas: bool = False
    exclude: PathPatterns | None = None
    # per-path settings, in the order written: (files, validator id -> setting)
    overrides: tuple[tuple[PathPatterns, dict[str, ValidatorSetting]], ...] = ()
    baseline: Path | None = None
    provided: tuple[Provided, ...] = ()
    # cluster name -> the roots deployed to it (``clusters:``), for the duplicate check
    clusters: tuple[tuple[str, PathPatterns], ...] = ()
    # GitOps controller objects as roots (``gitops:``): on unless ``enabled: false``
    gitops: bool = True
    repo_urls: tuple[str, ...] = ()  # ``gitops.repo-urls``: other spellings of this repository
    source_root: Path | None = None  # ``gitops.source-root``: what controller paths are relative to
    strict_substitution: bool = False  # ``gitops.strict-substitution``
    # ``gitops.cluster-objects``: files whose ConfigMaps and Secrets are in the
    # cluster although no controller root of the repository applies them
    cluster_objects: PathPatterns | None = None
    # ``substitute:``: envsubst-style templates, by path pattern, with their variables
    substitute: tuple[tuple[PathPatterns, tuple[tuple[str, Variable], ...]], ...] = ()
    # ``placeholders:``: templates (outside controller roots, values holding
    # ${...} are not judged), skip (nowhere judged) or check
    placeholders: str = "templates"
    # ``not-applied:``: the rules of krmcheck.applied that set files aside
    not_applied: tuple[str, ...] = REASONS
    # ``require-network: true``: a root that needs the network, which is off, fails to build
    require_network: bool = False
    load_restrictor: str | None = None  # ``load-restrictor:`` for every root
    # ``overrides:`` entries' ``load-restrictor``, in the order written (later entries win)
    load_restrictors: tuple[tuple[PathPatterns, str], ...] = ()
    # validators that run only when named (``KnownValidators.opt_in``)
    opt_in: frozenset[str] = frozenset()

    def enabled(self, validator_id: str) -> bool:
        setting = self.validators.get(validator_id)
        return setting.enabled if setting is not None else validator_id not in self.opt_in

    def restrictor_for(self, root: str) -> str | None:
        """The load restrictor the configuration gives the kustomization root
        in the repo-relative directory ``root``: the last ``overrides:``
        entry with one whose paths match it, else ``load-restrictor:``."""
        for scope, restrictor in reversed(self.load_restrictors):
            if scope.matches(root, directory=True):
                return restrictor
        return self.load_restrictor

    @property
    def disabled(self) -> tuple[str, ...]:
        return tuple(sorted(v for v, s in self.validators.items() if not s.enabled))

    @property
    def severities(self) -> dict[str, str]:
        return {v: s.severity for v, s in self.validators.items() if s.severity}

    def options_for(self, validator_id: str, flags: ValidatorOptions) -> ValidatorOptions:
        """What one validator runs with: the command line's ``flags`` first,
        then the validator's own entry, then the file's top level."""
        own = self.validators.get(validator_id, ValidatorSetting())
        strict = own.strict if own.strict is not None else bool(self.strict)
        return ValidatorOptions(flags.kubernetes_version or own.kubernetes_version or self.kubernetes_version,
                                flags.strict or strict, flags.schemas, self.provided)


EMPTY = Config()


# --- finding ---------------------------------------------------------------------

def find(paths: Iterable[Path], stop: Path) -> Path | None:
    """The nearest config file at or above the common directory of ``paths``,
    looking no higher than ``stop`` (the repository's top)."""
    dirs = [p.resolve() if os.path.isdir(p) else p.resolve().parent for p in paths] or [Path.cwd().resolve()]
    start = Path(os.path.commonpath([str(d) for d in dirs]))
    top = stop.resolve()
    for d in (start, *start.parents):
        for name in FILE_NAMES:
            if os.path.isfile(d / name):
                return d / name
        if d == top:
            break
    return None


# --- loading ---------------------------------------------------------------------

def load(path: Path, display: str, known: KnownValidators = KnownValidators()) -> Config:
    """Read and check ``path``; ``display`` is its repo-relative name."""
    root = _document(path, display)
    if root is None:
        return Config(path=display, opt_in=known.opt_in)
    problems = list(schema_problems(root))
    if problems:
        raise ConfigError(problems)
    return _config(root, display, path.parent, known)


def _document(path: Path, display: str) -> Mapping | None:
    try:
        docs = load_documents(read_bounded(path).decode("utf-8"), display, by=BY)
    except OSError as e:
        raise ConfigError([(Location(display, 1, 1), f"cannot read: {e.strerror}")]) from None
    except UnicodeDecodeError:
        raise ConfigError([(Location(display, 1, 1), "not UTF-8 text")]) from None
    except LoadError as e:
        raise ConfigError([(Location(e.path, e.line, e.col), e.message)]) from None
    if len(docs) > 1:
        raise ConfigError([(docs[1].origin.location, "one YAML document expected; found more")])
    if not docs or (isinstance(docs[0], Scalar) and docs[0].value is None):
        return None
    if not isinstance(docs[0], Mapping):
        raise ConfigError([(docs[0].origin.location, "the configuration must be a map")])
    return docs[0]


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    import jsonschema

    text = Path(__file__).with_name("config_schema.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    return jsonschema.Draft202012Validator(schema)


def schema_problems(root: Mapping) -> Iterator[tuple[Location, str]]:
    """Every schema error of the file, at the node it is about."""
    from krmcheck.schemas import errors

    for error in _validator().iter_errors(root.to_data()):
        error = _most_specific(error)
        where = _dotted(errors.error_parts(error)) or "(top level)"
        yield errors.error_node(root, error).origin.location, f"{where}: {_message(error)}"


def _most_specific(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """For a value matching no branch of a oneOf, the branch's own error
    when one branch has the value's type (an unknown key in a map)."""
    if error.validator == "oneOf" and error.context:
        typed = [e for e in error.context if e.validator != "type"]
        if typed:
            import jsonschema.exceptions

            return jsonschema.exceptions.best_match(typed)
    return error


def _dotted(path: list[Any]) -> str:
    from krmcheck.tree import fieldpath  # loaded by the first problem

    return fieldpath.dotted(path)


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        return f"unknown key; known keys: {', '.join(known)}"
    if error.validator == "oneOf":
        kinds = [s.get("type", "?") for s in error.validator_value if isinstance(s, dict)]
        return f"{error.instance!r} must be a {' or a '.join(_type_name(k) for k in kinds)}"
    if error.validator == "type":
        return f"{error.instance!r} must be a {_type_name(error.validator_value)}"
    if error.validator == "anyOf" and all(set(b) == {"required"} for b in error.validator_value):
        return f"needs {' or '.join(k for b in error.validator_value for k in b['required'])}"
    if error.validator == "enum":
        return f"{error.instance!r} is not one of: {', '.join(map(str, error.validator_value))}"
    return error.message


def _type_name(kind: object) -> str:
    names = {"object": "map", "array": "list", "boolean": "boolean (true or false)"}
    if isinstance(kind, list):
        return " or ".join(cast(str, names.get(k, k)) for k in kind)  # k is Any: a JSON schema type name
    return names.get(str(kind), str(kind))


# --- the checked file as values ------------------------------------------------------

def _config(root: Mapping, display: str, directory: Path, known: KnownValidators) -> Config:
    problems = list(_version_problems(root, known))
    externals = []
    for entry in (root.sequence("external-validators") or SequenceNode()).items:
        try:
            externals.append(external_validator(entry, directory, display))
        except ConfigError as e:
            problems += e.problems
    names = {v.name for v in externals}
    problems += _unknown_ids(root, names, known)
    problems += _pattern_problems(root)
    if problems:
        raise ConfigError(problems)
    base = posixpath.dirname(display)
    return Config(
        path=display,
        opt_in=known.opt_in,
        fail_on=_str(root.get("fail-on")),
        kubernetes_version=_str(root.get("kubernetes-version")),
        strict=_bool(root.get("strict")),
        validators=_settings(root.mapping("validators") or Mapping()),
        trusted_catalogs=tuple(TrustedCatalog(n.as_string(), directory, n.origin)
                               for n in (root.sequence("trusted-catalogs") or SequenceNode()).items
                               if isinstance(n, Scalar)),
        kptfile_validators=_bool(root.get("kptfile-validators")) or False,
        external_validators=tuple(externals),
        schema_locations=tuple(_location(loc, directory) for loc in _strings(root.get("schema-locations"))),
        require_schemas=_bool(root.get("require-schemas")) or False,
        exclude=PathPatterns(base, _strings(root.get("exclude")), f"{display} exclude") if "exclude" in root else None,
        overrides=tuple((PathPatterns(base, _strings(o.get("paths")), f"{display} overrides"),
                         _settings(o.mapping("validators") or Mapping()))
                        for o in (root.sequence("overrides") or SequenceNode()).items
                        if isinstance(o, Mapping)),
        baseline=directory / _text(root.get("baseline")) if "baseline" in root else None,
        provided=tuple(_provided(root.sequence("provided"))),
        clusters=tuple((name, PathPatterns(base, _strings(paths), f"{display} clusters.{name}"))
                       for name, paths in (root.mapping("clusters") or Mapping()).items.items()),
        gitops=_bool(lookup(root, ["gitops", "enabled"])) is not False,
        repo_urls=_strings(lookup(root, ["gitops", "repo-urls"])),
        strict_substitution=_bool(lookup(root, ["gitops", "strict-substitution"])) is True,
        cluster_objects=(PathPatterns(base, _strings(lookup(root, ["gitops", "cluster-objects"])),
                                      f"{display} gitops.cluster-objects")
                         if lookup(root, ["gitops", "cluster-objects"]) is not None else None),
        source_root=((directory / _text(lookup(root, ["gitops", "source-root"]))).resolve()
                     if lookup(root, ["gitops", "source-root"]) is not None else None),
        substitute=tuple(_substitute(root.mapping("substitute"), base, display)),
        placeholders=_str(root.get("placeholders")) or "templates",
        not_applied=tuple(r for r in REASONS if _bool(lookup(root, ["not-applied", r])) is not False),
        require_network=_bool(root.get("require-network")) or False,
        load_restrictor=_str(root.get("load-restrictor")),
        load_restrictors=tuple((PathPatterns(base, _strings(o.get("paths")), f"{display} overrides"),
                                _text(o.get("load-restrictor")))
                               for o in (root.sequence("overrides") or SequenceNode()).items
                               if isinstance(o, Mapping) and "load-restrictor" in o))


def _pattern_problems(root: Mapping) -> list[tuple[Location, str]]:
    """Each path pattern (``exclude``, ``overrides[].paths``, ``clusters``,
    ``substitute``) that cannot be compiled, at its line."""
    nodes: list[Node] = list(_items(root.get("exclude")))
    for o in _items(root.get("overrides")):
        nodes += _items(o.get("paths")) if isinstance(o, Mapping) else []
    for paths in (root.mapping("clusters") or Mapping()).items.values():
        nodes += _items(paths)
    problems = [(n.origin.location, f"{n.as_string()!r}: {why}") for n in nodes
                if isinstance(n, Scalar) and (why := refusal(n.as_string())) is not None]
    for pattern, node in (root.mapping("substitute") or Mapping()).items.items():
        why = refusal(pattern)
        if why is not None:
            problems.append((node.origin.location, f"substitute: {pattern!r}: {why}"))
    return problems


def _items(node: Node | None) -> list[Node]:
    return node.items if isinstance(node, SequenceNode) else []


def _substitute(node: Mapping | None, base: str, display: str
                ) -> Iterator[tuple[PathPatterns, tuple[tuple[str, Variable], ...]]]:
    for pattern, variables in (node.items.items() if node is not None else ()):
        if isinstance(variables, Mapping):
            yield (PathPatterns(base, (pattern,), f"{display} substitute"),
                   tuple((name, Variable(value.as_string(), value.origin))
                         for name, value in variables.items.items() if isinstance(value, Scalar)))


def _provided(node: SequenceNode | None) -> Iterator[Provided]:
    for entry in (node.items if node is not None else []):
        if isinstance(entry, Mapping):
            yield Provided(_text(entry.get("kind")) or "*", _text(entry.get("name")) or "*",
                           _text(entry.get("namespace")) or "*")


def _location(written: str, directory: Path) -> str:
    """A schema location: URLs as written, paths relative to the file."""
    if written.startswith(("http://", "https://")) or Path(written).is_absolute():
        return written
    return str(directory / written)


def _strings(node: Node | None) -> tuple[str, ...]:
    items = node.items if isinstance(node, SequenceNode) else []
    return tuple(n.as_string() for n in items if isinstance(n, Scalar))


def known_ids(known: KnownValidators, external_names: Iterable[str] = ()) -> list[str]:
    """Validator ids a configuration may name."""
    return sorted(set(known.ids) | set(EXTRA_IDS) | set(external_names))


def _unknown_ids(root: Mapping, external_names: set[str],
                 validators: KnownValidators) -> Iterator[tuple[Location, str]]:
    """A validator id that no validator has (a typo would silently do nothing)."""
    if not validators.ids:
        return  # (nothing told us the validators: every id is taken)
    known = known_ids(validators, external_names)
    tables = [("validators", root.mapping("validators"))]
    for i, o in enumerate((root.sequence("overrides") or SequenceNode()).items):
        if isinstance(o, Mapping):
            tables.append((f"overrides[{i}].validators", o.mapping("validators")))
    for where, table in tables:
        for key in (table.items if table is not None else {}):
            if key not in known:
                node = table.items[key]  # type: ignore[union-attr]
                yield (_key_location(node), f"{where}.{key}: unknown validator; known: {', '.join(known)}")


def _key_location(node: Node) -> Location:
    return node.origin.location


def _version_problems(root: Mapping, known: KnownValidators) -> Iterator[tuple[Location, str]]:
    """A Kubernetes version the schema validator has no schemas for, at its line."""
    validators = root.mapping("validators")
    schema = validators.get("schema") if validators else None
    places = [("kubernetes-version", root.get("kubernetes-version"))]
    if isinstance(schema, Mapping):
        places.append(("validators.schema.kubernetes-version", schema.get("kubernetes-version")))
    for where, node in places:
        version = _str(node)
        if node is None or version is None:
            continue
        problem = known.version_problem(version)
        if problem:
            yield node.origin.location, f"{where}: {problem}"


def _str(node: Node | None) -> str | None:
    # as_string keeps a version's spelling: an unquoted 1.30 is "1.30", not 1.3
    return node.as_string() if isinstance(node, Scalar) and node.value is not None else None


def _bool(node: Node | None) -> bool | None:
    return node.value if isinstance(node, Scalar) and isinstance(node.value, bool) else None


def _settings(node: Mapping) -> dict[str, ValidatorSetting]:
    settings = {}
    for vid, entry in node.items.items():
        if isinstance(entry, Scalar):
            settings[vid] = ValidatorSetting(enabled=entry.value is not False)
        elif isinstance(entry, Mapping):
            settings[vid] = ValidatorSetting(entry.value("enabled") is not False,
                                             _str(entry.get("kubernetes-version")),
                                             _bool(entry.get("strict")),
                                             _str(entry.get("severity")))
    return settings


# --- function entries (shared with Kptfile pipelines) ----------------------------------

def external_validator(entry: Node, directory: Path, display: str) -> ExternalValidator:
    """A function entry (``exec``/``image``, ``config``/``configMap``/``configPath``,
    ``network``, ``mounts``, ``env``) of a file in ``directory``."""
    if not isinstance(entry, Mapping):
        raise ConfigError([(entry.origin.location, "a validator function entry must be a map")])
    exec_node, image_node = entry.get("exec"), entry.get("image")
    if (exec_node is None) == (image_node is None):
        raise ConfigError([(entry.origin.location, "a validator function needs exactly one of exec and image")])
    if exec_node is not None:
        _exec_only_checks(entry)
    spec = FunctionSpec(
        exec_path=_exec_path(exec_node, directory) if exec_node is not None else None,
        image=_text(image_node) or None,
        network=entry.value("network") is True,
        mounts=tuple(_mount(m, directory) for m in (entry.sequence("mounts") or SequenceNode()).items),
        envs=tuple(_text(n) for n in (entry.sequence("env") or SequenceNode()).items),
        origin=entry.origin)
    return ExternalValidator(_name(entry, spec), spec, function_config(entry, directory, display))


def _exec_only_checks(entry: Mapping) -> None:
    for key in ("network", "mounts"):
        if key in entry:
            node = entry.items[key]
            raise ConfigError([(node.origin.location, f"{key}: only a container (image) function can ask for it")])


def _text(node: Node | None) -> str:
    return node.as_string() if isinstance(node, Scalar) else ""


def _exec_path(node: Node, directory: Path) -> str:
    written = _text(node)
    candidate = directory / written
    if "/" not in written and not os.path.exists(candidate):
        found = shutil.which(written)  # a bare command name: look on PATH like a shell
        if found:
            return found
    if not os.path.isfile(candidate):
        raise ConfigError([(node.origin.location, f"exec: {written}: no such file")])
    return str(candidate.resolve())


def _mount(node: Node, directory: Path) -> Mount:
    assert isinstance(node, Mapping)  # the schema checked it
    kind, src = _text(node.get("type")), _text(node.get("src"))
    if kind == "bind" and src:
        src = str((directory / src).resolve())
    return Mount(kind, src, _text(node.get("dst")), node.value("rw") is True)


def _name(entry: Mapping, spec: FunctionSpec) -> str:
    given = _text(entry.get("name"))
    if given:
        return given
    if spec.exec_path:
        return Path(spec.exec_path).name
    return (spec.image or "").rsplit("/", 1)[-1].split("@")[0]


def function_config(entry: Mapping, directory: Path, display: str) -> Mapping | None:
    """The functionConfig an entry gives, as a tree keeping where it was written."""
    given = [k for k in ("config", "configMap", "configPath") if k in entry]
    if len(given) > 1:
        node = entry.items[given[1]]
        raise ConfigError([(node.origin.location, f"use one of config, configMap and configPath, not {' and '.join(given)}")])
    if not given:
        return None
    node = entry.items[given[0]]
    if given[0] == "config":
        return node if isinstance(node, Mapping) else None
    if given[0] == "configMap":
        return config_map(node)
    return _config_file(node, directory, display)


def config_map(node: Node) -> Mapping:
    """kpt's ``configMap:`` shorthand: a ConfigMap named function-input with this data."""
    at = node.origin
    data: dict[str, Node] = {k: Scalar(v.as_string() if isinstance(v, Scalar) else "", v.origin)
            for k, v in (node.items.items() if isinstance(node, Mapping) else ())}
    return Mapping({"apiVersion": Scalar("v1", at), "kind": Scalar("ConfigMap", at),
                    "metadata": Mapping({"name": Scalar("function-input", at)}, at),
                    "data": Mapping(data, at)}, at)


def _config_file(node: Node, directory: Path, display: str) -> Mapping:
    written = _text(node)
    path = directory / written
    shown = str(Path(display).parent / written) if Path(display).parent != Path(".") else written
    try:
        docs = load_documents(read_bounded(path).decode("utf-8"), Path(shown).as_posix(), by="functionConfig")
    except OSError as e:
        raise ConfigError([(node.origin.location, f"configPath: {written}: {e.strerror}")]) from None
    except LoadError as e:
        raise ConfigError([(Location(e.path, e.line, e.col), e.message)]) from None
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        raise ConfigError([(node.origin.location, f"configPath: {written} must hold one KRM object")])
    return docs[0]
