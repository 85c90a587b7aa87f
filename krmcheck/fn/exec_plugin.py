"""Legacy exec plugins (kustomize's execplugin), run with --enable-alpha-plugins.

A config ``apiVersion: <group>/<version>``, ``kind: <Kind>`` runs the
executable ``<home>/<group>/<version>/<lowercase kind>/<Kind>``, where the
plugin home is the first existing directory of ``$KUSTOMIZE_PLUGIN_HOME``,
``$XDG_CONFIG_HOME/kustomize/plugin``, ``$HOME/.config/kustomize/plugin`` and
``$HOME/kustomize/plugin``. Its argv is the path, a temporary file holding
the config, the words of ``argsOneLiner`` and the lines of ``argsFromFile``;
its environment adds ``KUSTOMIZE_PLUGIN_CONFIG_STRING`` and
``KUSTOMIZE_PLUGIN_CONFIG_ROOT``; it runs in the kustomization's directory.
A generator reads nothing and prints resources; a transformer (or
validator) reads the resources, each stamped by ``build_state.stamped``, and
prints the new list.
"""

from __future__ import annotations

import os
import random
import shlex
from pathlib import Path
from typing import ClassVar, Mapping

from krmcheck.fn import adoption, resource_list
from krmcheck.resource import build_state
from krmcheck.kustomize.plugins import GENERATOR, TRANSFORMER, Config, Context
from krmcheck.resource.errors import BuildError, ProgramError, reading_program_output
from krmcheck.resource.files import join
from krmcheck.resource.resource import Resource
from krmcheck.transports import Invocation, TransportError
from krmcheck.transports.exec import ExecTransport
from krmcheck.tree.emit import emit
from krmcheck.tree.node import Scalar
from krmcheck.tree.origin import Origin

CONFIG_FILE_PREFIX = "kust-plugin-config-"
# kustomize leaves a variable out of the plugin's environment past this size
MAX_ENV_VALUE = 131071


class ExecPlugin:
    roles: ClassVar[frozenset[str]] = frozenset({GENERATOR, TRANSFORMER})

    def run(self, config: Config, ctx: Context, resources: list[Resource]) -> list[Resource]:
        path = find_executable(config, ctx.env)
        args = plugin_args(config, ctx)
        generator = ctx.role == GENERATOR
        stdin = "" if generator else resource_list.stream([build_state.stamped(r) for r in resources])
        stdout, stderr = _invoke(path, config, ctx, args, stdin)
        if stderr:
            ctx.logs.append((f"plugin {path}", stderr))
        with reading_program_output():
            outputs = adoption.adopt(resource_list.parse_stream(stdout, f"plugin {path}"),
                                     [] if generator else resources, written_by(config))
            if generator:
                build_state.generator_options(outputs)
                return outputs
            return adoption.replace_by_id(resources, outputs, str(path), config.at)


def written_by(config: Config) -> Origin:
    """The origin of what an exec plugin writes: its config."""
    at = config.at
    return Origin(at.path, at.line, at.col, "plugin")


# --- finding the executable -----------------------------------------------------------------

def plugin_home(env: Mapping[str, str]) -> Path:
    """kustomize's plugin home: the first of its candidates that exists."""
    tried = []
    for note, candidate in _home_candidates(env):
        if candidate is not None and candidate.is_dir():
            return candidate
        tried.append(f"{note} ({candidate if candidate is not None else 'unset'})")
    raise BuildError("unable to find plugin root - tried: " + "; ".join(tried))


def _home_candidates(env: Mapping[str, str]) -> list[tuple[str, Path | None]]:
    home = env.get("HOME") or ""
    xdg = env.get("XDG_CONFIG_HOME") or ""
    explicit = env.get("KUSTOMIZE_PLUGIN_HOME") or ""
    return [("$KUSTOMIZE_PLUGIN_HOME", Path(explicit) if explicit else None),
            ("$XDG_CONFIG_HOME/kustomize/plugin", Path(xdg, "kustomize", "plugin") if xdg else None),
            ("$HOME/.config/kustomize/plugin",
             Path(home, ".config", "kustomize", "plugin") if home else None),
            ("$HOME/kustomize/plugin", Path(home, "kustomize", "plugin") if home else None)]


def find_executable(config: Config, env: Mapping[str, str]) -> Path:
    gvk = config.gvk
    path = plugin_home(env) / gvk.group / gvk.version / gvk.kind.lower() / gvk.kind
    if path.is_file():
        if not os.access(path, os.X_OK):
            raise BuildError(f"unexecutable plugin at: {path} (plugin {config.describe()} "
                             f"needs execute permission)", config.at)
        return path
    # kustomize then tries a Go plugin, which kubectl and krmcheck cannot load
    raise BuildError(f"no exec plugin for {config.describe()}: expected an executable at {path} "
                     f"(Go plugins, {path}.so, are not supported; use an exec plugin or a "
                     f"KRM function)", config.at)


# --- argv, environment, temporary config file ------------------------------------------------

def config_text(config: Config) -> str:
    """The config as the plugin reads it: re-serialised, keys sorted, no comments."""
    return emit(config.node)


def plugin_args(config: Config, ctx: Context) -> list[str]:
    args: list[str] = []
    one_liner = config.node.get("argsOneLiner")
    if isinstance(one_liner, Scalar) and one_liner.as_string():
        try:
            args += shlex.split(one_liner.as_string())
        except ValueError:
            pass  # kustomize ignores a line its shell splitter cannot read
    from_file = config.node.get("argsFromFile")
    if isinstance(from_file, Scalar) and from_file.as_string():
        args += _args_from_file(from_file, ctx)
    return args


def _args_from_file(node: Scalar, ctx: Context) -> list[str]:
    """Every non-empty line, leading spaces trimmed; read like any file of
    the kustomization that lists the plugin (load restrictor included)."""
    path = join(ctx.kdir, node.as_string())
    text = ctx.files.read_text(path, node.origin, within=(ctx.restrictor, ctx.kdir))
    return [line.lstrip(" ") for line in text.split("\n") if line.lstrip(" ")]


def _environment(ctx: Context, text: str) -> dict[str, str]:
    env = dict(ctx.env)
    root = os.path.abspath(ctx.kdir)
    for key, value in (("KUSTOMIZE_PLUGIN_CONFIG_STRING", text), ("KUSTOMIZE_PLUGIN_CONFIG_ROOT", root)):
        if len(key) + 1 + len(value) <= MAX_ENV_VALUE:
            env[key] = value
    return env


def _config_file(text: str, env: Mapping[str, str]) -> str:
    """A new file ``kust-plugin-config-<digits>`` in the temp directory, as Go's os.CreateTemp names it."""
    directory = env.get("TMPDIR") or "/tmp"
    while True:
        path = os.path.join(directory, f"{CONFIG_FILE_PREFIX}{random.randrange(10 ** 9, 10 ** 10)}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        return path


def _invoke(path: Path, config: Config, ctx: Context, args: list[str],
            stdin: str) -> tuple[str, str]:
    text = config_text(config)
    tmp = _config_file(text, ctx.env)
    try:
        call = Invocation((str(path), tmp, *args), stdin.encode(), ctx.kdir,
                          _environment(ctx, text), ctx.fn_timeout)
        try:
            done = ExecTransport().run(call)
        except TransportError as e:
            raise BuildError(f"plugin {config.describe()} could not run: {e}", config.at) from None
    finally:
        os.unlink(tmp)
    if done.returncode != 0:
        stderr = done.stderr_text.strip()
        raise ProgramError(f"failure in plugin {path}; exit status {done.returncode}"
                           + (f"; its stderr: {stderr}" if stderr else ""), config.at)
    return done.stdout.decode("utf-8", "replace"), done.stderr_text
