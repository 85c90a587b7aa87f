"""External validator functions: a KRM function declared in ``.krmcheck.yaml``
or a Kptfile, run over one root's rendered output; its Results come back to
be located like a built-in validator's.

A validator differs from a transformer in one way that matters here: it
fails by exiting non-zero *with* its Results (kpt's contract), so exit 1 is
an answer, not a crash. Only a non-zero exit without an error Result, output
that is not a ResourceList, or a function that cannot be started is an
error of the run, at the line that declared the function.

Each item carries, besides what the runtime stamps on it, the repo-relative
file it came from (``internal.config.kubernetes.io/path`` and the legacy
spelling), so a function that reports only ``file`` still names a resource.
Output items are ignored: a validator may not change anything.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping as MappingType
from dataclasses import dataclass
from pathlib import Path

from krmcheck import journal
from krmcheck.resource.function import ExternalValidator
from krmcheck.fn import container, resource_list
from krmcheck.resource import build_state
from krmcheck.resource.lookup import Lookup
from krmcheck.resource.errors import BuildError, ProgramError
from krmcheck.resource import wire
from krmcheck.resource.resource import Resource
from krmcheck.results import ResourceRef, Result
from krmcheck.transports import Completed, Invocation, TransportError
from krmcheck.transports.exec import ExecTransport
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Scalar, Sequence
from krmcheck.tree.origin import Origin

DEFAULT_TIMEOUT = 60.0  # seconds per validator and root


@dataclass(frozen=True)
class Environment:
    """Where validators run: the root's directory and the caller's environment."""

    cwd: Path
    env: MappingType[str, str]
    timeout: float = DEFAULT_TIMEOUT


def validate(validator: ExternalValidator, resources: list[Resource], where: Environment) -> list[Result]:
    """The Results ``validator`` reports about ``resources``."""
    journal.impure("an external validator")
    items = [_with_path(r) for r in resources]
    stdin = resource_list.resource_list(items, validator.function_config or _empty_config(validator.origin))
    done = _run(validator, stdin.encode(), where)
    stderr = done.stderr_text.strip()
    what = f"validator {validator.name}"
    text = done.stdout.decode("utf-8", "replace")
    entries = _result_entries(text, validator, what, stderr) if text.strip() or not done.returncode else []
    results = [_tagged(_named(resource_list.result_of(r), items), validator.name) for r in entries]
    if done.returncode != 0 and not any(r.severity == "error" for r in results):
        raise _failure(validator, f"{what} failed with exit status {done.returncode} and reported no error",
                       stderr)
    return results


def _run(validator: ExternalValidator, stdin: bytes, where: Environment) -> Completed:
    try:
        return ExecTransport().run(Invocation(_argv(validator, where), stdin, where.cwd,
                                              dict(where.env), where.timeout))
    except TransportError as e:
        raise BuildError(f"couldn't run validator {validator.name}: {e}", validator.origin) from None


def _argv(validator: ExternalValidator, where: Environment) -> tuple[str, ...]:
    spec = validator.spec
    if spec.exec_path:
        return (spec.exec_path,)
    run = container.ContainerRun(image=spec.image or "", network=spec.network, mounts=spec.mounts,
                                 env=container.merge_env(spec.envs, ()))
    return container.command(run, where.env)


def _result_entries(text: str, validator: ExternalValidator, what: str, stderr: str) -> list[Mapping]:
    """The ``results`` of the ResourceList a validator printed. (Read here
    rather than with ``resource_list.parse_answer``, which unwraps any ``*List``
    document into its items and so drops a ResourceList's results.)"""
    try:
        docs = load_documents(text, f"output of {what}", by="function output") if text.strip() else []
    except LoadError as e:
        raise _failure(validator, f"{what} printed invalid YAML: line {e.line}: {e.message}", stderr) from None
    if len(docs) != 1 or not isinstance(docs[0], Mapping) \
            or docs[0].value("kind") != resource_list.RESOURCE_LIST_KIND:
        raise _failure(validator, f"{what} printed no ResourceList", stderr)
    found = docs[0].get("results")
    if found is None or (isinstance(found, Scalar) and found.value is None):
        return []
    if not isinstance(found, Sequence) or not all(isinstance(r, Mapping) for r in found.items):
        raise _failure(validator, f"{what}: results must be a list of objects", stderr)
    return [r for r in found.items if isinstance(r, Mapping)]


def _failure(validator: ExternalValidator, message: str, stderr: str) -> BuildError:
    tail = f"; its stderr: {stderr}" if stderr else ""
    return ProgramError(message + tail, validator.origin)


def _empty_config(origin: Origin | None) -> Mapping:
    """What kpt sends a function given no config: an empty ConfigMap."""
    at = origin or Origin("", 0, 0, "function")
    return Mapping({"apiVersion": Scalar("v1", at), "kind": Scalar("ConfigMap", at),
                    "metadata": Mapping({"name": Scalar("function-input", at)}, at)}, at)


def _with_path(res: Resource) -> Mapping:
    node = build_state.stamped(res)
    path = res.node.origin.path
    if path:
        md = node.setdefault_mapping("metadata", node.origin)
        notes = md.setdefault_mapping("annotations", md.origin)
        for key in (wire.PATH, wire.LEGACY_PATH):
            notes.items.setdefault(key, Scalar(path, notes.origin))
    return node


def _named(result: Result, items: list[Mapping]) -> Result:
    """A Result naming only ``file`` gets the resourceRef of the item it names
    (the path and index annotations the runtime numbered, else the source
    file's documents: :class:`krmcheck.resource.lookup.Lookup`)."""
    if result.resource_ref is not None or not result.file_path:
        return result
    found = Lookup([Resource(item) for item in items]).find(result)
    if found is None:
        return result
    item, md = found.node, found.node.mapping("metadata") or Mapping()
    ref = ResourceRef(str(item.value("apiVersion") or ""), str(item.value("kind") or ""),
                      str(md.value("name") or ""), str(md.value("namespace") or ""))
    return dataclasses.replace(result, resource_ref=ref)


def _tagged(result: Result, name: str) -> Result:
    """Findings name their validator: the function's own tag, else its name."""
    if result.validator:
        return result
    return dataclasses.replace(result, tags=(("validator", name),) + result.tags)
