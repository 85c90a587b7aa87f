"""KRM functions named by a plugin config (kustomize's fnplugin).

A config is a function when it carries ``config.kubernetes.io/function``
(or the older ``config.k8s.io/function``; both decoded strictly, unknown
fields are an error), ``config.kubernetes.io/container: <image>``, or a
``metadata.configFn`` object. ``container.image`` runs through docker or
podman; ``exec.path`` runs a local program, but only with --enable-exec:
without it kubectl accepts the config and runs nothing, and so does krmcheck.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
from pathlib import Path
from typing import Any, ClassVar

from krmcheck.fn import adoption, container, resource_list
from krmcheck.resource import build_state
from krmcheck.resource.function import FunctionOutput, FunctionSpec, Mount
from krmcheck.kustomize.plugins import GENERATOR, TRANSFORMER, Config, Context
from krmcheck.resource.errors import BuildError, ProgramError, reading_program_output
from krmcheck.resource.files import inside
from krmcheck.resource.resource import Resource
from krmcheck.results import Result
from krmcheck.transports import Invocation, TransportError
from krmcheck.transports.exec import ExecTransport
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Scalar
from krmcheck.tree.origin import Origin

FUNCTION_ANNOTATIONS = ("config.kubernetes.io/function", "config.k8s.io/function")
CONTAINER_ANNOTATION = "config.kubernetes.io/container"

# kyaml's FunctionSpec, field by field: what strict decoding accepts
_SPEC_FIELDS: dict[str, type] = {"deferFailure": bool, "container": dict, "exec": dict}
_CONTAINER_FIELDS: dict[str, type] = {"image": str, "network": bool, "mounts": list, "envs": list}
_EXEC_FIELDS: dict[str, type] = {"path": str}
_MOUNT_FIELDS: dict[str, type] = {"type": str, "src": str, "dst": str, "rw": bool}


def _named(result: Result, spec: FunctionSpec) -> Result:
    """A function's Result, tagged with the function as its validator (the
    rule id in reports) unless the function named one itself."""
    if result.validator:
        return result
    name = spec.image or Path(spec.exec_path or "function").name
    return dataclasses.replace(result, tags=result.tags + (("validator", name),))


class KrmFunction:
    """A config that names a KRM function, as a generator or transformer."""

    roles: ClassVar[frozenset[str]] = frozenset({GENERATOR, TRANSFORMER})

    def __init__(self, spec: FunctionSpec) -> None:
        self.spec = spec

    def run(self, config: Config, ctx: Context, resources: list[Resource]) -> list[Resource]:
        generator = ctx.role == GENERATOR
        if self.spec.exec_path and not ctx.enable_exec:
            return _skipped(config, resources, generator)
        out = call(self.spec, config, ctx, None if generator else resources)
        for r in out.results:
            res = adoption.resource_for(r, out.items)
            ctx.results.append((adoption.with_resource(_named(r, self.spec), res), res))
        if out.stderr:
            ctx.logs.append((f"function {self.spec.describe()}", out.stderr))
        if generator:
            build_state.generator_options(out.items)
            return out.items
        return adoption.replace_by_id(resources, out.items, plugin_name(config), config.at)


def plugin_name(config: Config) -> str:
    return (f"api: {config.node.value('apiVersion')}, kind: {config.kind}, "
            f"name: {config.name}")


def _skipped(config: Config, resources: list[Resource], generator: bool) -> list[Resource]:
    """kubectl without --enable-exec: no filter runs, so a generator gets
    back its own config (local-config, left out of the output) and a
    transformer its input."""
    if not generator:
        return resources
    return [Resource(resource_list.function_config(config.node))]


# --- decoding the function spec ---------------------------------------------------------

def spec_of(config: Config, kdir: Path) -> FunctionSpec | None:
    """The function ``config`` names, or None for a plain (exec plugin) config."""
    decoded = _decoded(config)
    if decoded is None:
        return None
    data, origin = decoded
    spec = _to_spec(data, origin)
    for mount in spec.mounts:
        _check_mount(mount.src, config, origin, kdir)
    return spec


def _decoded(config: Config) -> tuple[dict[str, Any], Origin] | None:
    md = config.node.mapping("metadata")
    ann = md.mapping("annotations") if md is not None else None
    for key in FUNCTION_ANNOTATIONS:
        node = ann.get(key) if ann is not None else None
        if isinstance(node, Scalar) and node.as_string():
            return _strict(_parse(node, key), key, node.origin), node.origin
    node = ann.get(CONTAINER_ANNOTATION) if ann is not None else None
    if isinstance(node, Scalar) and node.as_string():
        return {"container": {"image": node.as_string()}}, node.origin
    fn = md.get("configFn") if md is not None else None
    if fn is None or (isinstance(fn, Scalar) and fn.value is None):
        return None
    return _strict(fn.to_data(), "configFn", fn.origin), fn.origin


def _parse(node: Scalar, key: str) -> Any:
    try:
        docs = load_documents(node.as_string(), node.origin.path, by="function")
    except LoadError as e:
        raise BuildError(f"{key} unmarshal error: {e.message}", node.origin) from None
    return docs[0].to_data() if docs else {}


def _strict(data: Any, key: str, origin: Origin) -> dict[str, Any]:
    """kyaml decodes the spec with UnmarshalStrict: no unknown field, no wrong type."""
    _check_fields(data, _SPEC_FIELDS, key, origin)
    _check_fields(data.get("container") or {}, _CONTAINER_FIELDS, key, origin)
    _check_fields(data.get("exec") or {}, _EXEC_FIELDS, key, origin)
    for mount in (data.get("container") or {}).get("mounts") or []:
        _check_fields(mount, _MOUNT_FIELDS, key, origin)
    for env in (data.get("container") or {}).get("envs") or []:
        if not isinstance(env, str):
            raise BuildError(f"{key} unmarshal error: envs must be strings, got {env!r}", origin)
    return data


def _check_fields(data: Any, fields: dict[str, type], key: str, origin: Origin) -> None:
    if not isinstance(data, dict):
        raise BuildError(f"{key} unmarshal error: expected an object, got {data!r}", origin)
    for name, value in data.items():
        if name not in fields:
            raise BuildError(f'{key} unmarshal error: unknown field "{name}"', origin)
        if value is not None and not isinstance(value, fields[name]):
            raise BuildError(f"{key} unmarshal error: field {name} must be a "
                             f"{fields[name].__name__}, got {value!r}", origin)


def _to_spec(data: dict[str, Any], origin: Origin) -> FunctionSpec:
    c = data.get("container") or {}
    mounts = tuple(Mount(m.get("type") or "", m.get("src") or "", m.get("dst") or "",
                         bool(m.get("rw"))) for m in c.get("mounts") or [])
    return FunctionSpec(exec_path=(data.get("exec") or {}).get("path") or None,
                        image=c.get("image") or None, network=bool(c.get("network")),
                        mounts=mounts, envs=tuple(c.get("envs") or ()), origin=origin)


def _check_mount(src: str, config: Config, origin: Origin, kdir: Path) -> None:
    """Declared mounts stay below the kustomization directory (kustomize's
    loader rule, plus symlinks resolved)."""
    if os.path.isabs(src):
        raise BuildError(f"plugin {config.describe()} with mount path '{src}' is not permitted; "
                         f"mount paths must be relative to the current kustomization directory",
                         origin)
    if not inside(src, os.curdir, resolve=False) or not inside(kdir / src, kdir, resolve=True):
        raise BuildError(f"plugin {config.describe()} with mount path '{src}' is not permitted; "
                         f"mount paths must be under the current kustomization directory", origin)


# --- running ------------------------------------------------------------------------------

def call(spec: FunctionSpec, config: Config, ctx: Context,
         resources: list[Resource] | None) -> FunctionOutput:
    """Run the function over ``resources`` (None: as a generator, over its own config)."""
    items = None if resources is None else [build_state.stamped(r) for r in resources]
    stdin = resource_list.resource_list(items, config.node)
    what = _describe(spec, ctx)
    try:
        done = ExecTransport().run(Invocation(_argv(spec, config, ctx), stdin.encode(), ctx.kdir,
                                              ctx.env, ctx.fn_timeout))
    except TransportError as e:
        raise BuildError(f"couldn't execute function {what}: {e}", config.at) from None
    stderr = done.stderr_text
    with reading_program_output():
        answer = resource_list.parse_answer(done.stdout.decode("utf-8", "replace"), f"function {what}")
    if done.returncode != 0:
        raise ProgramError(f"couldn't execute function {what}: exit status {done.returncode}"
                           + (f"; its stderr: {stderr.strip()}" if stderr.strip() else ""), config.at)
    inputs = [Resource(config.node)] if resources is None else resources
    by = config.at
    with reading_program_output():
        outputs = adoption.adopt(answer.items, inputs, Origin(by.path, by.line, by.col, "function"))
    build_state.default_paths(outputs)
    return adoption.output(outputs, [resource_list.result_of(r) for r in answer.results], stderr)


def _describe(spec: FunctionSpec, ctx: Context) -> str:
    if spec.exec_path:
        return f"exec {spec.exec_path} (run because of --enable-exec)"
    return spec.image or "<no image>"


def _argv(spec: FunctionSpec, config: Config, ctx: Context) -> tuple[str, ...]:
    if spec.exec_path:
        # like Go's exec.Command with Dir set: a relative path is the kustomization's
        # (absolute, since the process runs with the kustomization as its directory)
        return (os.path.abspath(ctx.kdir / spec.exec_path),)
    if not spec.image:
        raise BuildError(f"function config {config.describe()} names neither an image nor "
                         f"an exec path", spec.origin or config.at)
    if spec.network and not ctx.network:
        raise BuildError(f"couldn't execute function {spec.image}: network required but not "
                         f"enabled with --network", spec.origin or config.at)
    run = container.ContainerRun(
        image=spec.image, network=spec.network,
        mounts=tuple(_absolute(m, ctx.kdir) for m in spec.mounts) + _cli_mounts(ctx),
        env=container.merge_env(spec.envs, ctx.envs), user=_user(ctx))
    try:
        return container.command(run, ctx.env)
    except TransportError as e:
        raise BuildError(f"couldn't execute function {spec.image}: {e}", config.at) from None


def _absolute(mount: Mount, kdir: Path) -> Mount:
    src = mount.src if os.path.isabs(mount.src) else os.path.join(os.path.abspath(kdir), mount.src)
    return Mount(mount.type, posixpath.normpath(src), mount.dst, mount.read_write)


def _cli_mounts(ctx: Context) -> tuple[Mount, ...]:
    """``--mount`` flags (kyaml's StringToStorageMount), relative sources
    joined to the kustomization directory; krmcheck keeps them below it too."""
    out = []
    for text in ctx.mounts:
        fields = dict(part.split("=", 1) for part in text.split(",") if "=" in part)
        mount = _absolute(Mount(fields.get("type", ""), fields.get("src") or fields.get("source", ""),
                                fields.get("dst") or fields.get("target", ""),
                                fields.get("rw") == "true"), ctx.kdir)
        if not inside(mount.src, ctx.kdir, resolve=True):
            raise BuildError(f"--mount {text}: the source {mount.src} is outside the "
                             f"kustomization directory {ctx.kdir}; mounts must stay below it")
        out.append(mount)
    return tuple(out)


def _user(ctx: Context) -> str:
    if not ctx.as_current_user:
        return "nobody"
    return f"{os.getuid()}:{os.getgid()}"

