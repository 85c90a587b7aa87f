"""Argo CD Applications (argoproj.io): ``source.path`` rendered with the
source's ``kustomize:`` options, written into the directory's kustomization
as ``kustomize edit`` writes them (namePrefix, nameSuffix and namespace
replaced; images, replicas, commonLabels and commonAnnotations merged by key;
patches and components appended). A directory without a kustomization file
is a plain directory of manifests (below it too with ``directory.recurse``).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Collection
from pathlib import Path

from krmcheck import discover
from krmcheck.gitops import argocd_helm
from krmcheck.gitops.flux import list_field
from krmcheck.gitops.placeholders import VARIABLE, is_placeholder
from krmcheck.gitops.root import ARGOCD, ControllerRoot, confined
from krmcheck.gitops.source import same_repository
from krmcheck.kustomize import kustomization as kfile
from krmcheck.resource.image import split
from krmcheck.kustomize.kustomization import Kustomization
from krmcheck.resource.errors import BuildError, MissingFile
from krmcheck.resource.files import REPOSITORY, ROOT_ONLY, Files, read_text_bounded
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence, lookup
from krmcheck.tree.origin import Origin

GROUP = "argoproj.io/"
DIRECTORY_APPLICATION = " (directory application)"  # how a plain directory's build is named


def is_application(res: Resource) -> bool:
    return res.kind == "Application" and res.api_version.startswith(GROUP)


def sources_of(res: Resource, urls: frozenset[str]) -> list[Mapping]:
    """The application's sources that render: ``source``, or each of
    ``sources`` that is a path of this repository or a chart (Argo CD applies
    what they all render); a source that only lends its files to the others
    (``ref:``) renders nothing itself, and a config management plugin is
    not rendered."""
    spec = res.node.mapping("spec")
    if spec is None:
        return []
    single = spec.mapping("source")
    several = spec.sequence("sources")
    candidates = [single] if single is not None else []
    candidates += [s for s in (several.items if several is not None else ()) if isinstance(s, Mapping)]
    out = []
    for source in candidates:
        url = source.value("repoURL")
        if "chart" in source.items:
            out.append(source)
        elif (isinstance(url, str) and same_repository(url, urls) and "plugin" not in source.items
                and ("path" in source.items or "ref" not in source.items)):
            out.append(source)
    return out


def refs_of(res: Resource, urls: frozenset[str]) -> dict[str, bool]:
    """Each ``ref:`` name of a multi-source application, and whether its
    source is this repository (whose files ``$NAME/path`` then reads)."""
    several = lookup(res.node, ["spec", "sources"])
    out = {}
    for source in several.items if isinstance(several, Sequence) else ():
        if isinstance(source, Mapping) and isinstance(source.value("ref"), str):
            url = source.value("repoURL")
            out[str(source.value("ref"))] = isinstance(url, str) and same_repository(url, urls)
    return out


def make_root(res: Resource, source: Mapping, top: Path, files: Files,
              restrictor: str = ROOT_ONLY, tree: str = "", refs: dict[str, bool] | None = None) -> ControllerRoot:
    path = source.value("path")
    directory = confined(top, path) if isinstance(path, str) else top
    name_node = lookup(res.node, ["metadata", "name"])
    origin = name_node.origin if name_node is not None else res.node.origin
    spec: dict[str, Node] = {"source": source.copy()}
    destination = lookup(res.node, ["spec", "destination"])
    if isinstance(destination, Mapping):
        spec["destination"] = destination.copy()
    sync = lookup(res.node, ["spec", "syncPolicy"])
    if isinstance(sync, Mapping):  # (whether it syncs and prunes by itself: the pull-request view)
        spec["syncPolicy"] = sync.copy()
    top_level: dict[str, Node] = {k: res.node.items[k].copy() for k in ("apiVersion", "kind", "metadata")
                                  if k in res.node.items}
    obj = Mapping({**top_level, "spec": Mapping(spec, res.node.origin)}, res.node.origin)
    root = ControllerRoot(name=f"argocd:{res.name}", controller=ARGOCD, directory=directory,
                          obj=obj, origin=origin, restrictor=restrictor, tree=tree)
    if "chart" in source.items or is_helm(source, directory):
        return argocd_helm.with_chart(root, res, source, files, top, refs or {})
    return root


# ``kustomize.buildOptions`` of the argocd-cm ConfigMap (or the Argo CD
# chart's ``configs.cm``, the operator's ``kustomizeBuildOptions``): the flags
# Argo CD gives every kustomize build it runs
_BUILD_OPTIONS = re.compile(r"""^\s*["']?kustomize(?:\.buildOptions|BuildOptions)["']?\s*:(.*)$""", re.MULTILINE)
_LIFTED = re.compile(r"--load[-_]restrictor[= ]+[\"']?LoadRestrictionsNone")


# Argo CD's own configuration, which would give build options: the
# argocd-cm ConfigMap, or the operator's ArgoCD resource
_CONFIGURED = re.compile(r"^\s*name:\s*[\"']?argocd-cm[\"']?\s*$|^kind:\s*ArgoCD\s*$", re.MULTILINE)


def build_restrictor(top: Path) -> str:
    """The load restrictor Argo CD builds this repository's applications
    with: lifted (within the repository, as a Flux build) where the
    repository's Argo CD configuration gives ``kustomize.buildOptions``
    holding ``--load-restrictor LoadRestrictionsNone``; kustomize's
    default, RootOnly, where the repository holds Argo CD's configuration
    (build options without it, an ``argocd-cm`` ConfigMap, an ``ArgoCD``
    resource); and ``""``, none given, where it holds none: the Argo CD
    that renders the applications is configured elsewhere, so a root that
    reads outside its directory is policy, as a kustomization given no
    restrictor (krmcheck.pipeline.policy)."""
    configured = False
    for here, names in discover.walk([top]):
        for name in names:
            if not name.endswith(discover.MANIFEST_SUFFIXES):
                continue
            try:
                text = read_text_bounded(here / name)
            except (OSError, ValueError):
                continue
            if "uildOptions" in text:
                options = _BUILD_OPTIONS.findall(text)
                if any(_LIFTED.search(m) for m in options):
                    return REPOSITORY
                configured = configured or bool(options)
            if not configured and ("argocd-cm" in text or "ArgoCD" in text) and _CONFIGURED.search(text):
                configured = True
    return ROOT_ONLY if configured else ""


# The ApplicationSet controller's new git file globbing, as the repository's
# Argo CD configuration turns it on: the flag in the operator's
# applicationSet.extraCommandArgs or the controller's args, the
# argocd-cmd-params-cm key (the chart's configs.params), or its variable.
_NEW_GLOBBING = re.compile(r"--enable-new-git-file-globbing(?![\w-])(?!=false)|"
                           r"applicationsetcontroller\.enable\.new\.git\.file\.globbing[\"']?\s*:\s*[\"']?true|"
                           r"ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_NEW_GIT_FILE_GLOBBING[\"']?\s*\n\s*value:\s*[\"']?true")


def new_git_file_globbing(top: Path) -> bool:
    """Whether the repository's Argo CD runs the ApplicationSet controller
    with the new git file globbing (git files generators match as
    doublestar: ``*`` within one directory)."""
    for here, names in discover.walk([top]):
        for name in names:
            if not name.endswith(discover.MANIFEST_SUFFIXES):
                continue
            try:
                text = read_text_bounded(here / name)
            except (OSError, ValueError):
                continue
            if "lobbing" in text.lower() and _NEW_GLOBBING.search(text):
                return True
    return False


def application_root(res: Resource, top: Path, files: Files, urls: frozenset[str],
                     tree: str = "", restrictor: str = ROOT_ONLY) -> ControllerRoot | None:
    """The root of an Application: its first rendering source, the others
    rendered with it (``ControllerRoot.also``), built with ``restrictor``
    (:func:`build_restrictor`); None when none renders, or when the
    Application's own name holds a fill-in marker (``<env>-backstage``,
    ``${CLUSTER}-apps``) or a variable's name in capitals
    (``SERVICE_NAME-dev``, which no Kubernetes name can hold): a template
    to copy and fill in, which nobody applies as it is."""
    if is_placeholder(res.name, holding=True) or VARIABLE.search(res.name):
        return None
    sources = sources_of(res, urls)
    if not sources:
        return None
    refs = refs_of(res, urls)
    roots = [make_root(res, s, top, files, restrictor=restrictor, tree=tree, refs=refs) for s in sources]
    url = sources[0].value("repoURL")
    return dataclasses.replace(roots[0], also=tuple(roots[1:]), source=url if isinstance(url, str) else "")


def is_helm(source: Mapping, directory: Path) -> bool:
    """Argo CD renders a directory with helm when the source says ``helm:``,
    or, saying neither ``kustomize:`` nor ``directory:``, it holds a Chart.yaml."""
    if "helm" in source.items:
        return True
    return (not any(k in source.items for k in ("kustomize", "directory"))
            and os.path.isfile(directory / "Chart.yaml"))


def kustomization(root: ControllerRoot, files: Files) -> Kustomization:
    source = lookup(root.obj, ["spec", "source"])
    assert isinstance(source, Mapping)
    path_origin = source.items["path"].origin if "path" in source.items else root.origin
    if not os.path.isdir(root.directory):
        message = f"application path does not exist: {files.display(root.directory)}"
        if argocd_helm.in_unfetched_submodule(root.directory, files) is not None:
            raise MissingFile(message, path_origin, root.directory)  # another repository's: a warning
        raise BuildError(message, path_origin)
    if kfile.find_file(root.directory) is None:
        entries: list[Node] = [Scalar("./" + p.relative_to(root.directory).as_posix(), path_origin)
                               for p in directory_files(root.directory, source)]
        node = Mapping({"resources": Sequence(entries, path_origin)}, path_origin)
        return Kustomization(root.directory / "kustomization.yaml",
                             f"{files.display(root.directory)}{DIRECTORY_APPLICATION}", node)
    k = kfile.load(root.directory, files, path_origin)
    node = k.node.copy()
    options = source.mapping("kustomize")
    if options is not None:
        amend(node, options)
    return Kustomization(k.path, k.display, node)


def directory_files(directory: Path, source: Mapping | None) -> list[Path]:
    """The manifest files Argo CD reads of a plain directory: its own, and
    those below it with ``directory.recurse``; a file whose path relative to
    the directory matches ``directory.exclude``, or does not match a given
    ``directory.include``, is left out."""
    options = source.mapping("directory") if source is not None else None
    recurse = lookup(options, ["recurse"]) if options is not None else None
    include, exclude = (_glob(options, key) for key in ("include", "exclude"))
    out = []
    for here, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames
                             if isinstance(recurse, Scalar) and recurse.value is True and not d.startswith("."))
        for name in sorted(filenames):
            path = Path(here) / name
            rel = path.relative_to(directory).as_posix()
            if (exclude is not None and exclude.fullmatch(rel)) or (include is not None and not include.fullmatch(rel)):
                continue
            if path.suffix in discover.MANIFEST_SUFFIXES + (".json",) and discover.is_manifest(path):
                out.append(path)
    return out


def renders_plain_files(root: ControllerRoot) -> bool:
    """Whether an Argo CD root renders a directory of this checkout as plain
    files (no chart, no kustomization), the files ``directory_files`` reads."""
    return (root.controller == ARGOCD and root.helm is None and not root.elsewhere
            and os.path.isdir(root.directory) and not discover.find_kustomization(root.directory))


def excluded_roots(roots: Collection[ControllerRoot], plain: Collection[Path],
                   infos: dict[Path, discover.KustomizationInfo],
                   display: Callable[[Path], str]) -> tuple[frozenset[Path], tuple[str, Origin] | None]:
    """The plain roots an Argo CD Application of the repository leaves out by
    name: it reads a directory as plain files, and its ``directory.exclude``
    matches the root's own files (the kustomization and what it reads in its
    directory and below, or the manifest file), while no Application renders
    any of them. The repository's own Application says they are not applied
    (a ``deprecated/**`` kept beside the applied apps): they are not checked,
    and a note says how many. An exclude that names only kustomization files
    (Argo CD then applies the files beside them) leaves no root out."""
    rendered = {p.resolve() for r in roots for q in (r, *r.also) for p in (q.directory, *q.reads)}
    apps = []
    for r in roots:
        source = lookup(r.obj, ["spec", "source"])
        if not (renders_plain_files(r) and isinstance(source, Mapping)):
            continue
        options = source.mapping("directory")
        pattern = _glob(options, "exclude")
        if pattern is not None and options is not None:
            apps.append((r, r.directory.resolve(), pattern, options.items["exclude"].origin))
    if not apps:
        return frozenset(), None
    left_out: dict[Path, tuple[ControllerRoot, Origin]] = {}
    for p in plain:
        own = _own_files(p.resolve(), infos.get(p))
        if not own or any(f in rendered for f in own) or p.resolve() in rendered:
            continue
        for app, directory, pattern, origin in apps:
            if all(directory in f.parents and pattern.fullmatch(f.relative_to(directory).as_posix())
                   for f in own):
                left_out[p] = (app, origin)
                break
    if not left_out:
        return frozenset(), None
    app, origin = left_out[min(left_out, key=display)]
    count = "1 root lies" if len(left_out) == 1 else f"{len(left_out)} roots lie"
    exclude = lookup(app.obj, ["spec", "source", "directory", "exclude"])
    shown = exclude.value if isinstance(exclude, Scalar) else ""
    return frozenset(left_out), (
        f"{count} where an Application of the repository excludes them ({app.name} reads "
        f"{display(app.directory)} with directory.exclude {shown!r}: {', '.join(sorted(map(display, left_out))[:3])}"
        f"{f' and {len(left_out) - 3} more' if len(left_out) > 3 else ''}), and no Application renders them: "
        f"not applied to the cluster, so not checked", origin)


def _own_files(root: Path, info: discover.KustomizationInfo | None) -> list[Path]:
    """A plain root's own files: the manifest file, or the kustomization file
    and the files it reads in its directory and below."""
    if info is None:
        return [root] if root.is_file() else []
    found = _kustomization_file(root)
    if found is None:
        return []
    return [found.resolve()] + sorted(f.resolve() for f in info.files if root in f.resolve().parents)


def _kustomization_file(directory: Path) -> Path | None:
    try:
        return kfile.find_file(directory)
    except BuildError:  # several: the build says so
        return next(directory / n for n in kfile.FILENAMES if (directory / n).is_file())


def _glob(options: Mapping | None, key: str) -> re.Pattern[str] | None:
    """``directory.include`` or ``.exclude`` as Argo CD matches it (a glob
    with no separator: ``*`` spans directories; ``{a,b}`` alternatives)."""
    value = lookup(options, [key]) if options is not None else None
    if not (isinstance(value, Scalar) and isinstance(value.value, str) and value.value):
        return None
    out, depth = [], 0
    for i, c in enumerate(value.value):
        if c == "*":
            out.append("" if value.value[i - 1:i] == "*" else ".*")
        elif c == "?":
            out.append(".")
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
    try:
        return re.compile("".join(out) + ")" * depth, re.DOTALL)
    except re.error:
        return None


def amend(node: Mapping, options: Mapping) -> None:
    for key in ("namePrefix", "nameSuffix", "namespace"):
        value = options.get(key)
        if isinstance(value, Scalar) and isinstance(value.value, str) and value.value:
            node.items[key] = value.copy()
    for key in ("commonLabels", "commonAnnotations"):
        given = options.mapping(key)
        if given is not None:
            target = node.setdefault_mapping(key, given.origin)
            for k, v in given.items.items():
                target.items[k] = v.copy()
    for key in ("patches", "components"):
        given_seq = options.sequence(key)
        if given_seq is not None:
            list_field(node, key).items.extend(v.copy() for v in given_seq.items)
    replicas = options.sequence("replicas")
    for entry in replicas.items if replicas is not None else ():
        if isinstance(entry, Mapping):
            _merge_by_name(list_field(node, "replicas"), _replicas_entry(entry))
    images = options.sequence("images")
    for image in images.items if images is not None else ():
        if isinstance(image, Scalar) and isinstance(image.value, str):
            _merge_by_name(list_field(node, "images"), _image_entry(image.value, image.origin))


def _replicas_entry(entry: Mapping) -> Mapping:
    """``count`` is an int-or-string in the Application; kustomize wants the number."""
    out = entry.copy()
    count = out.items.get("count")
    if isinstance(count, Scalar) and isinstance(count.value, str) and count.value.strip().isdigit():
        out.items["count"] = Scalar(int(count.value), count.origin, count.trail)
    return out


def _image_entry(text: str, origin: Origin) -> Mapping:
    """``kustomize edit set image`` syntax: ``name=new:tag``, ``name:tag``, ``name@digest``."""
    name, _, new = text.partition("=")
    if not new:
        new = name
        name = split(text)[0]
    new_name, tag, digest = split(new)
    items: dict[str, Node] = {"name": Scalar(name, origin)}
    if new_name and new_name != name:
        items["newName"] = Scalar(new_name, origin)
    if tag:
        items["newTag"] = Scalar(tag, origin)
    if digest:
        items["digest"] = Scalar(digest, origin)
    return Mapping(items, origin)


def _merge_by_name(seq: Sequence, entry: Mapping) -> None:
    name = entry.value("name")
    for i, existing in enumerate(seq.items):
        if isinstance(existing, Mapping) and existing.value("name") == name:
            seq.items[i] = entry
            return
    seq.items.append(entry)
