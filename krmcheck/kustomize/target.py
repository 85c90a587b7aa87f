"""The build: kustomize's KustTarget, one short method per step.

    accumulate resources -> run generators -> accumulate components
    -> builtin transformers -> (top level only) hash suffixes, name
    references, kubectl's output order.

Each step adds context to the errors it passes on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from krmcheck import journal
from krmcheck.resource import secrets as secret_data
from krmcheck.kustomize import buildmetadata, deprecation, openapi, order, pluginconfig, remote
from krmcheck.kustomize import kustomization as kfile
from krmcheck.kustomize.accumulator import ResourceList
from krmcheck.kustomize.builtins import vars as kvars
from krmcheck.kustomize.kustomization import Kustomization
from krmcheck.kustomize.nameref import fix_name_references
from krmcheck.kustomize.plugins import (Config, Context, ExternalPlugins, FunctionOptions, LayerPlugins, NoExternalPlugins,
                                       Plugin)
from krmcheck.kustomize.transformerconfig import Tracker
from krmcheck.resource.errors import BuildError, MissingFile
from krmcheck.resource.files import ROOT_ONLY, Files, Within, join
from krmcheck.resource.resource import Resource
from krmcheck.resource.wire import INTERNAL, strip_wire_annotations
from krmcheck.results import Result
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence
from krmcheck.tree.origin import Location, Origin

# The builtin generators and transformers are imported where a
# kustomization first uses them: a build of plain resources loads none.

LOCAL_CONFIG = "config.kubernetes.io/local-config"


@dataclass(frozen=True)
class BuildOptions:
    load_restrictor: str = ROOT_ONLY
    network: bool = False  # fetch remote resources (also allowed by KRMCHECK_NETWORK=1)
    enable_alpha_plugins: bool = False  # run external plugins (kustomize's flag)
    enable_helm: bool = False  # inflate helmCharts with helm_command
    helm_command: str = "helm"
    # exec plugins and KRM functions: environment, --enable-exec, --mount, -e, ...
    functions: FunctionOptions = field(default_factory=FunctionOptions)
    # what runs them and the catalogs: the function runtime (krmcheck.fn.loader), given
    # by whoever makes the build; by default none, and an external config is an error
    plugins: ExternalPlugins = field(default_factory=NoExternalPlugins)
    # a generator's input named by URL is read as empty while the network is
    # off (finding the controller objects a root holds needs no dashboard JSON)
    offline_files: bool = False


@dataclass
class Builder:
    """Builds kustomization directories; shares rendered sub-kustomizations."""

    files: Files
    options: BuildOptions = field(default_factory=BuildOptions)
    _cache: dict[str, list[Resource]] = field(default_factory=dict)
    remotes: remote.Remotes = field(default_factory=remote.Remotes)
    tables: Tracker = field(default_factory=Tracker)  # configurations, crds, openapi
    # Per build: the root's buildMetadata (None when not asked for) and kubectl's
    # deprecation warnings, in the order kubectl prints them.
    stamper: buildmetadata.Stamper | None = None
    warnings: list[deprecation.Deprecation] = field(default_factory=list)
    _cached_warnings: dict[str, list[deprecation.Deprecation]] = field(default_factory=dict)
    # Per build: the Results functions reported, with the resource each names
    # (kubectl ignores them; krmcheck reports them as findings).
    function_results: list[tuple[Result, Resource | None]] = field(default_factory=list)
    _cached_results: dict[str, list[tuple[Result, Resource | None]]] = field(default_factory=dict)
    function_logs: list[tuple[str, str]] = field(default_factory=list)  # (what ran, its stderr)
    # Per plain manifest: the documents that could not be made resources
    # (each is judged on its own; the others are still checked).
    document_errors: list[BuildError] = field(default_factory=list)
    # Per build: every secret value the build read or made (resource/secrets.py),
    # kept when the build fails part-way, so that its error can be masked;
    # and where each was written (the origins of Secret data, which a copy
    # keeps in its trail), so that a value that did not come from a Secret
    # is shown.
    secrets: set[str] = field(default_factory=set)
    secret_places: set[Location] = field(default_factory=set)
    _cached_secrets: dict[str, tuple[frozenset[str], frozenset[Location]]] = field(default_factory=dict)
    # what rendering each cached directory read, counted again where it is reused
    _cached_reads: dict[str, journal.Reads] = field(default_factory=dict)

    # --- public ---------------------------------------------------------------
    def build(self, directory: Path, given: Kustomization | None = None) -> list[Resource]:
        """Render ``directory`` as ``kubectl kustomize`` would, in output order.

        ``given`` replaces the directory's own kustomization file (a GitOps
        controller's generated or amended one, krmcheck.gitops); such a
        rendering is never cached, as the directory's own is."""
        top = given if given is not None else kfile.load(directory, self.files)
        self.stamper = buildmetadata.Stamper.of(top)
        self.warnings.clear()
        self.function_results.clear()
        self.function_logs.clear()
        self.document_errors.clear()
        self.secrets.clear()
        self.secret_places.clear()
        with openapi.using(self.tables.start_build(), self._fetch_file):
            acc = self._accumulate_dir(directory, None, (), top, fresh=given is not None)
        resources = list(acc)
        try:
            _add_hash_suffixes(resources)
            fix_name_references(resources, self.tables.config.name_reference)
            kvars.resolve(resources, self.tables.config.var_reference)  # names are final now
        except BuildError as e:
            raise e.add_context(f"building {self.files.display(directory)}")
        strip_wire_annotations(resources)
        resources = [r for r in resources if not _is_local_config(r)]
        resources = order.apply(resources, order.options_of(top.field("sortOptions")))
        buildmetadata.finish(resources, self.stamper)
        self._keep_secrets(resources)
        return resources

    def offline_copy(self) -> Builder:
        """A builder like this one that reads a generator's input named by
        URL as empty while the network is off, with caches of its own: what
        it builds is never checked, it finds what else a root holds (its
        controller objects, a defect that does not depend on the input)."""
        if self.options.offline_files:
            return self
        return Builder(self.files, replace(self.options, offline_files=True), remotes=self.remotes)

    def load_manifest(self, path: Path, as_kubectl: bool = False) -> list[Resource]:
        """The resources of a plain manifest file that no kustomization reads,
        as they would be applied: no kustomization, no transformation; with
        ``as_kubectl``, read as ``kubectl apply -f`` reads the file (a root of
        its own), not as a controller's kustomize build reads it."""
        self.stamper = None
        self.warnings.clear()
        self.function_results.clear()
        self.function_logs.clear()
        self.secrets.clear()
        self.secret_places.clear()
        self.document_errors.clear()
        # kubectl create gives an object with only generateName its name; each
        # document is created on its own (kubectl create -f goes on past one
        # it refuses), so one that is no resource does not hide the others
        out: list[Resource] = []
        for doc in self._documents(path, Origin(self.files.display(path), 1, 1)):
            try:
                out.extend(_resources_of(_as_kubectl_reads(doc) if as_kubectl else doc, generated_names=True))
            except BuildError as e:
                self.document_errors.append(e)
        if self.document_errors and not out:
            error = self.document_errors.pop(0)
            raise error
        self._keep_secrets(out)
        return out

    # --- accumulation ---------------------------------------------------------
    def _accumulate_dir(self, directory: Path, origin: Origin | None,
                        stack: tuple[str, ...], loaded: Kustomization | None = None,
                        fresh: bool = False) -> ResourceList:
        real = os.path.realpath(directory)
        self._refuse_cycle(directory, real, stack, origin)
        key = self.tables.cache_key(real)
        cached = None if self.stamper or fresh else self._cache.get(key)  # origins depend on the root
        if cached is not None and self.tables.reuse(key):
            journal.replay(self._cached_reads.get(key))
            self.warnings.extend(self._cached_warnings.get(key, []))
            self.function_results.extend(self._cached_results.get(key, []))
            values, places = self._cached_secrets.get(key, (frozenset(), frozenset()))
            self.secrets.update(values)
            self.secret_places.update(places)
            return ResourceList([r.copy(share=True) for r in cached])  # the cached ones never change
        reads = journal.start()
        try:
            first_warning = len(self.warnings)
            first_result = len(self.function_results)
            # the top kustomization is already loaded by build(): read each file once
            k = loaded if loaded is not None else kfile.load(directory, self.files, origin)
            self.warnings.extend(deprecation.warnings_of(k))
            if k.is_component and origin is not None:
                raise BuildError(f"{k.display} is a Component; list it under components:, not resources:",
                                 origin or k.node.origin)
            entered = self.tables.enter(k, self.files, self.options.load_restrictor, not stack)
            acc = ResourceList()
            # this directory's own secrets, kept for reuse
            outer, outer_places = self.secrets, self.secret_places
            self.secrets, self.secret_places = set(), set()
            try:
                self._run(k, acc, stack + (real,))
            finally:
                own, own_places = self.secrets, self.secret_places
                self.secrets, self.secret_places = outer, outer_places
                outer.update(own)
                outer_places.update(own_places)
            self.tables.leave(entered, key)
        finally:
            read = journal.stop(reads)
        if not self.stamper and not fresh:
            # acc's resources become the cache and never change again: the
            # caller and every later user get shares of them (copied as used)
            self._cache[key] = list(acc)
            self._cached_reads[key] = read
            self._cached_secrets[key] = (frozenset(own), frozenset(own_places))
            self._cached_warnings[key] = self.warnings[first_warning:]
            # a reused base's functions do not run again; their results still count
            self._cached_results[key] = self.function_results[first_result:]
            return ResourceList([r.copy(share=True) for r in acc])
        return acc

    def _run(self, k: Kustomization, acc: ResourceList, stack: tuple[str, ...]) -> None:
        steps = (
            ("checking catalogs", lambda: self._check_catalogs(k)),
            ("accumulating resources", lambda: self._accumulate_resources(k, acc, stack)),
            ("loading configurations", lambda: self.tables.add_own(k, self.files,
                                                                   self.options.load_restrictor)),
            ("running generators", lambda: self._run_generators(k, acc, stack)),
            ("accumulating components", lambda: self._accumulate_components(k, acc, stack)),
            ("running transformers", lambda: self._run_transformers(k, acc, stack)),
            ("running validators", lambda: self._run_validators(k, acc, stack)),
            ("merging vars", lambda: kvars.merge(k.seq("vars"), acc.items)),
        )
        try:
            for what, step in steps:
                try:
                    step()
                except BuildError as e:
                    raise e.add_context(f"{what} of {k.display}")
        finally:  # what patches, functions and charts put in Secrets, even when a step failed
            self._keep_secrets(acc.items)

    def _keep_secrets(self, resources: list[Resource]) -> None:
        """The values of the Secrets among ``resources``, and where each was written."""
        self.secrets.update(secret_data.secret_values(resources))
        self.secret_places.update(secret_data.secret_places(resources))

    def _check_catalogs(self, k: Kustomization) -> None:
        """An error on the first catalog of ``k`` that may not be used (the
        function runtime imports the catalogs when a kustomization lists some)."""
        if k.seq("catalogs"):
            self.options.plugins.check_catalogs(k, self.files)

    def _accumulate_resources(self, k: Kustomization, acc: ResourceList,
                              stack: tuple[str, ...]) -> None:
        with acc.accumulating():
            for entry in k.seq("resources") + k.seq("bases"):
                if not isinstance(entry, Scalar) or not isinstance(entry.value, str):
                    raise BuildError("a resources entry must be a path", entry.origin)
                self._accumulate_entry(k, entry.value, entry.origin, acc, stack)

    def _accumulate_entry(self, k: Kustomization, rel: str, origin: Origin,
                          acc: ResourceList, stack: tuple[str, ...]) -> None:
        fetched = self._remote(rel, k, origin)
        if fetched is not None:
            sub, path = fetched
            acc.extend(list(sub._accumulate_dir(path, origin, stack)) if sub.files.kind(path, origin) == "dir"
                       else sub._load_file(path, origin), origin)
            return
        path = join(k.directory, rel)
        kind = self.files.kind(path, origin)
        if kind == "dir":
            remote.check_contained(self.files, path, origin)
            acc.extend(list(self._accumulate_dir(path, origin, stack)), origin)
            return
        if kind == "missing":
            raise MissingFile(f"accumulating resources: '{rel}' does not exist "
                              f"(no such file or directory)", origin, path)
        acc.extend(self._load_file(path, origin, (self.options.load_restrictor, k.directory)), origin)

    def _documents(self, path: Path, origin: Origin, within: Within | None = None) -> list[Node]:
        """The documents of a resource file, read under the load restrictor;
        an empty one (a trailing ---) holds nothing, as in kustomize."""
        text = self.files.read_text(path, origin, within)
        try:
            docs = load_documents(text, self.files.display(path), "resource")
        except LoadError as e:
            raise BuildError(e.message, Origin(e.path, e.line, e.col)) from None
        return [d for d in docs if not (isinstance(d, Scalar) and d.value is None)]

    def _load_file(self, path: Path, origin: Origin, within: Within | None = None,
                   generated_names: bool = False) -> list[Resource]:
        out: list[Resource] = []
        for doc in self._documents(path, origin, within):
            out.extend(_resources_of(doc, generated_names))
        for res in out:
            _take_build_state(res)
        self._keep_secrets(out)
        if self.stamper:
            self.stamper.loaded(out, self.files, path)
        return out

    def _accumulate_components(self, k: Kustomization, acc: ResourceList,
                               stack: tuple[str, ...]) -> None:
        for entry in k.seq("components"):
            if not isinstance(entry, Scalar) or not isinstance(entry.value, str):
                raise BuildError("a components entry must be a path", entry.origin)
            sub, path = self._remote(entry.value, k, entry.origin) or (self, join(k.directory, entry.value))
            if sub.files.kind(path, entry.origin) != "dir":
                raise BuildError(f"component '{entry.value}' is not a directory", entry.origin)
            remote.check_contained(sub.files, path, entry.origin)
            real = os.path.realpath(path)
            self._refuse_cycle(path, real, stack, entry.origin)
            comp = kfile.load(path, sub.files, entry.origin)
            self.warnings.extend(deprecation.warnings_of(comp))
            self.tables.offer_schema(comp, sub.files, sub.options.load_restrictor)
            if not comp.is_component:
                raise BuildError(f"{comp.display} listed under components: must have kind: Component",
                                 entry.origin)
            sub._run(comp, acc, stack + (real,))

    def _refuse_cycle(self, directory: Path, real: str, stack: tuple[str, ...],
                      origin: Origin | None) -> None:
        """kustomize refuses to enter a directory that is, or contains, one of
        the directories being built (its loader's check against every root up
        the chain): the overlay would read itself through its base."""
        inside = real.rstrip(os.sep) + os.sep
        for visited in stack:
            if visited == real:
                raise BuildError(f"cycle detected: {self.files.display(directory)} includes itself", origin)
            if visited.startswith(inside):
                below = Path(self.files.display(directory)) / os.path.relpath(visited, real)
                raise BuildError(f"cycle detected: {self.files.display(directory)} contains "
                                 f"{below.as_posix()}, which is being built", origin)

    def _remote(self, rel: str, k: Kustomization, origin: Origin) -> tuple[Builder, Path] | None:
        """A remote entry fetched, and a builder for it: files named by URL,
        and a clone never escapes its root (kustomize forces RootOnly there)."""
        fetched = remote.fetch(self.remotes, rel, k.directory, origin, self.options.network)
        if fetched is None:
            return None
        journal.impure("a remote resource")
        options = replace(self.options, load_restrictor=ROOT_ONLY)
        return replace(self, files=fetched.files, options=options), fetched.path

    def _fetch_file(self, url: str, what: str, origin: Origin) -> bytes:
        """A file named by URL (a generator's input, an openapi schema), downloaded (with --network)."""
        return remote.fetch_file(self.remotes, url, what, origin, self.options.network)

    def _fetch_input(self, url: str, what: str, origin: Origin) -> bytes:
        """A generator input that is a URL: downloaded, or read as empty by an offline copy."""
        if self.options.offline_files and not remote.network_allowed(self.options.network):
            return b""
        return self._fetch_file(url, what, origin)

    # --- generators -------------------------------------------------------------
    def _run_generators(self, k: Kustomization, acc: ResourceList, stack: tuple[str, ...] = ()) -> None:
        options = k.mapping("generatorOptions")
        for field_name, kind in (("configMapGenerator", "ConfigMap"), ("secretGenerator", "Secret")):
            for entry in k.seq(field_name):
                if not isinstance(entry, Mapping):
                    raise BuildError(f"a {field_name} entry must be a map", entry.origin)
                if kind == "Secret":  # known before the generator can fail on them
                    self.secrets.update(secret_data.generator_inputs(entry))
                from krmcheck.kustomize.generators import generate

                res = generate(kind, entry, options, k.directory, self.files,
                               self.options.load_restrictor, self._fetch_input)
                self._stamp_generated(res, k, f"{kind}Generator")
                self._add_generated(acc, res, entry.origin)
        helm_charts, helm_globals = k.seq("helmCharts"), k.mapping("helmGlobals")
        legacy = k.seq("helmChartInflationGenerator")
        if helm_charts or legacy:  # (charts_of makes one chart of each entry, nothing else)
            from krmcheck.kustomize.builtins import helm

            charts = helm.charts_of(helm_charts, helm_globals, legacy)
            env = helm.HelmEnv(k.directory, self.files, self.options.enable_helm, self.options.helm_command,
                               self.options.network)
            for res in helm.generate(charts, env):
                self._stamp_generated(res, k, "HelmChartInflationGenerator")
                self._add_generated(acc, res, res.node.origin)
        for config in self._plugin_configs(k, "generators", stack):
            for res in self._plugins(k).generate(config):
                self._stamp_generated(res, k, config.node)
                self._add_generated(acc, res, config.entry)

    def _stamp_generated(self, res: Resource, k: Kustomization, by: str | Mapping) -> None:
        if self.stamper:
            self.stamper.generated(res, self.stamper.made_by(self.files, k.path, by))

    def _add_generated(self, acc: ResourceList, res: Resource, origin: Origin) -> None:
        behavior = res.generator.behavior if res.generator else "create"
        if behavior == "create":
            acc.append(res, origin)
            return
        targets = acc.find_generated_target(res)
        if len(targets) != 1:
            what = "no" if not targets else "more than one"
            raise BuildError(f"{what} existing {res.kind} '{res.name}' to {behavior}", origin)
        from krmcheck.kustomize.generators import merge_generated

        merge_generated(targets[0], res, behavior)

    # --- transformers -----------------------------------------------------------
    def _run_transformers(self, k: Kustomization, acc: ResourceList, stack: tuple[str, ...] = ()) -> None:
        """The builtin transformers in kustomize's order (builtins/table.py),
        each run when the kustomization sets one of its fields; then the
        ``transformers:`` configs."""
        from krmcheck.kustomize.builtins import table

        res = acc.items
        env = table.FieldEnv(k.directory, self.files, self.options.load_restrictor, self.tables.config)
        for builtin in table.TRANSFORMERS:
            if any(k.field(name) is not None for name in builtin.fields):
                getattr(table.module_of(builtin), builtin.run)(k, res, env)
        if self.stamper:
            self.stamper.builtin_transformers(res, k, self.files)
        for config in self._plugin_configs(k, "transformers", stack):
            acc.items[:] = self._plugins(k).transform(config, acc.items)
            if self.stamper:
                self.stamper.transformed(acc.items, self.stamper.made_by(self.files, k.path, config.node))

    # --- plugins (generators:, transformers:, validators:; plugins.py) ----------
    def _run_validators(self, k: Kustomization, acc: ResourceList, stack: tuple[str, ...]) -> None:
        for config in self._plugin_configs(k, "validators", stack):
            self._plugins(k).validate(config, acc.items)

    def _plugins(self, k: Kustomization) -> LayerPlugins:
        o = self.options
        ctx = Context(k.directory, self.files, o.load_restrictor, o.enable_alpha_plugins,
                      o.enable_helm, o.helm_command, fetch_file=self._fetch_file).using(
                          o.functions, o.network, self.function_results, self.function_logs)
        return LayerPlugins(k, ctx, o.plugins, _builtin_kinds)

    def _plugin_configs(self, k: Kustomization, field_name: str, stack: tuple[str, ...]) -> list[Config]:
        def accumulate(rel: str, origin: Origin) -> list[Resource]:
            found = ResourceList()
            self._accumulate_entry(k, rel, origin, found, stack)
            return list(found)

        return pluginconfig.load(field_name, k.seq(field_name), k.path, self.files, accumulate)


def _builtin_kinds() -> dict[str, Plugin]:
    """The builtin plugin kinds (imported by builds that list one)."""
    from krmcheck.kustomize.builtins.kinds import BUILTIN_KINDS

    return BUILTIN_KINDS


def _as_kubectl_reads(doc: Node) -> Node:
    """The document as ``kubectl apply -f`` reads a file: sigs.k8s.io/yaml
    decodes with go-yaml v2, whose YAML 1.1 takes the plain words ``yes``,
    ``no``, ``on``, ``off``, ``y`` and ``n`` (in any of their spellings) for
    booleans, where kustomize's go-yaml v3 keeps them strings; and which
    keeps a plain timestamp as the text it is (``effectiveDate:
    2023-10-15``), where kustomize writes it out in full
    (``2023-10-15T00:00:00Z``). Keys stay."""
    from krmcheck.tree.scalars import is_timestamp, resolve_plain_v2

    def walk(node: Node) -> Node:
        if isinstance(node, Scalar):
            if node.text is not None and isinstance(node.value, str) and node.text == node.value:
                value = resolve_plain_v2(node.text)
                if isinstance(value, bool):
                    return Scalar(value, node.origin, node.trail, node.text)
            elif node.text is not None and isinstance(node.value, str) and is_timestamp(node.text):
                return Scalar(node.text, node.origin, node.trail, node.text)
            return node
        if isinstance(node, Mapping):
            for key, child in list(node.items.items()):
                new = walk(child)
                if new is not child:
                    node.items[key] = new
        elif isinstance(node, Sequence):
            node.items = [walk(child) for child in node.items]
        return node

    return walk(doc)


def _resources_of(doc: Node, generated_names: bool = False) -> list[Resource]:
    """A document as resources: a ``kind: List`` expands to its items. With
    ``generated_names`` (a plain manifest, created as it is), an object with
    ``metadata.generateName`` needs no name: the API server makes one."""
    if not isinstance(doc, Mapping):
        raise BuildError("a resource must be a map", doc.origin)
    kind = doc.value("kind")
    listed = doc.items.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(listed, Sequence):
        out: list[Resource] = []
        for item in listed.items:
            out.extend(_resources_of(item, generated_names))
        return out
    if not kind:
        raise BuildError("missing kind in resource", doc.origin)
    if not (isinstance(kind, str) and kind.endswith("List")) and not (generated_names and _generated(doc)):
        _require_name(doc, str(kind))
    _normalise_metadata(doc)
    return [Resource(doc)]


def _take_build_state(res: Resource) -> None:
    """kustomize's build annotations written in a resource file
    (``internal.config.kubernetes.io/previousNames``... copied from an
    earlier build's output) are that resource's build state, as kustomize
    reads them: its previous ids match patches, and the annotations are not
    in the output."""
    md = res.node.mapping("metadata")
    ann = md.mapping("annotations") if md is not None else None
    if ann is None or not any(key.startswith(INTERNAL) for key in ann.items):
        return
    from krmcheck.resource.build_state import take_state  # (only a file holding build state asks)

    take_state(res)


def _generated(doc: Mapping) -> bool:
    """Whether an object asks the API server for a name (``generateName``, and no name)."""
    md = doc.mapping("metadata")
    if md is None or md.value("name") not in (None, ""):
        return False
    given = md.items.get("generateName")
    return isinstance(given, Scalar) and given.value not in (None, "")


def _require_name(doc: Mapping, kind: str) -> None:
    """kustomize refuses a resource without a name (only a ``...List`` kind
    may go without one); an empty or null name is none."""
    md = doc.mapping("metadata")
    name = md.items.get("name") if md is not None else None
    if isinstance(name, Scalar) and name.value not in (None, ""):
        return
    where = name.origin if name is not None else md.origin if md is not None else doc.origin
    raise BuildError(f"missing metadata.name in {kind}", where)


def _normalise_metadata(doc: Mapping) -> None:
    """kustomize holds labels and annotations as strings (``true`` -> "true"),
    and drops an annotations map that is empty or null (it adds and removes
    its own internal annotations there while building)."""
    md = doc.mapping("metadata")
    if md is None:
        return
    ann = md.items.get("annotations")
    if (isinstance(ann, Mapping) and not ann.items) or (isinstance(ann, Scalar) and ann.value is None):
        del md.items["annotations"]
    for key in ("labels", "annotations"):
        m = md.mapping(key)
        if m is None:
            continue
        for k, v in list(m.items.items()):
            if isinstance(v, Scalar):
                if not isinstance(v.value, str):
                    m.items[k] = Scalar(v.as_string(), v.origin, v.trail)
            else:
                m.items[k] = Scalar("", v.origin, v.trail)


def _add_hash_suffixes(resources: list[Resource]) -> None:
    for res in resources:
        if res.needs_hash:
            origin = res.metadata.items["name"].origin if res.metadata and "name" in res.metadata.items \
                else res.node.origin
            res.remember_id()
            from krmcheck.kustomize.hashing import hashed_name

            res.set_name(hashed_name(res.name, res), origin)
            res.needs_hash = False


def _is_local_config(res: Resource) -> bool:
    """Whether kustomize leaves the resource out of its output as local
    configuration: it carries the annotation with any value but the text
    ``false`` (``true``, ``"True"``, ``yes``, even an empty value; a
    ``True`` spelled so, or ``"False"``, is not ``false``)."""
    ann = res.annotations()
    if ann is None or not ann:
        return False
    value = ann.view().get(LOCAL_CONFIG)
    return value is not None and not (isinstance(value, Scalar) and value.as_string() == "false")
