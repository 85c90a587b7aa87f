"""Reading the shared conformance corpus (``../shared/conformance``) and
running one case through krmcheck's engine in process."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from krmcheck.fn.loader import PluginLoader
from krmcheck.kustomize.plugins import FunctionOptions
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import NONE, ROOT_ONLY, Files
from krmcheck.tree.emit import emit_all

PROJECT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("KRMCHECK_SHARED", PROJECT.parent / "shared"))
CORPUS = SHARED / "conformance"


@dataclass(frozen=True)
class Case:
    name: str
    directory: Path
    meta: dict

    @property
    def build_dir(self) -> Path:
        return self.directory / (self.meta.get("dir") or "input")

    @property
    def expect_error(self) -> bool:
        return (self.directory / "expected_error.txt").exists()

    @property
    def restrictor(self) -> str:
        args = self.meta.get("kubectl_args") or []
        return NONE if any("LoadRestrictionsNone" in a for a in args) else ROOT_ONLY

    def environment(self) -> dict[str, str]:
        """This process' environment with the case's ``env`` (``{case}`` is the
        case directory; null removes) and ``path_prepend`` applied, as run.py does."""
        env = dict(os.environ)
        for key, value in (self.meta.get("env") or {}).items():
            if value is None:
                env.pop(str(key), None)
            else:
                env[str(key)] = str(value).replace("{case}", str(self.directory))
        prepend = [str(self.directory / d) for d in self.meta.get("path_prepend") or []]
        if prepend:
            env["PATH"] = os.pathsep.join(prepend + ([env["PATH"]] if env.get("PATH") else []))
        return env

    def options(self) -> BuildOptions:
        """kubectl_args as build options (kubectl's flag spellings)."""
        args = list(self.meta.get("kubectl_args") or [])
        flags: dict[str, list[str]] = {}
        i = 0
        while i < len(args):
            name, eq, value = args[i].partition("=")
            if not eq and name in _VALUED and i + 1 < len(args):
                value, i = args[i + 1], i + 1
            flags.setdefault(name, []).append(value)
            i += 1
        functions = FunctionOptions(
            env=self.environment(), enable_exec="--enable-exec" in flags,
            network_name=(flags.get("--network-name") or [""])[-1],
            mounts=tuple(flags.get("--mount", [])),
            envs=tuple(flags.get("-e", []) + flags.get("--env", [])),
            as_current_user="--as-current-user" in flags)
        return BuildOptions(self.restrictor, network="--network" in flags,
                            enable_alpha_plugins="--enable-alpha-plugins" in flags,
                            functions=functions, plugins=PluginLoader())


# kubectl flags whose value may be the next argument
_VALUED = frozenset({"-e", "--env", "--mount", "--network-name", "--load-restrictor"})


def cases(group: str) -> list[Case]:
    """Runnable cases of one group (krusty, examples, plugins)."""
    base = CORPUS / group
    if not base.is_dir():
        return []
    out = []
    for d in sorted(base.iterdir()):
        meta_path = d / "case.yaml"
        if not meta_path.is_file():
            continue
        meta = yaml.safe_load(meta_path.read_text())
        if meta.get("skip_reason"):
            continue
        if not (d / "expected.yaml").exists() and not (d / "expected_error.txt").exists():
            continue
        out.append(Case(f"{group}/{d.name}", d, meta))
    return out


@dataclass(frozen=True)
class Outcome:
    passed: bool
    byte_equal: bool
    detail: str


def run(case: Case) -> Outcome:
    for d in case.meta.get("empty_dirs") or []:
        (case.directory / d).mkdir(parents=True, exist_ok=True)
    builder = Builder(Files(case.directory), case.options())
    try:
        out = emit_all([r.node for r in builder.build(case.build_dir)])
        error = None
    except BuildError as e:
        out, error = "", str(e)
    if case.expect_error:
        if error is None:
            return Outcome(False, False, "expected an error, build succeeded")
        missing = [m for m in case.meta.get("error_mentions") or [] if str(m).lower() not in error.lower()]
        if missing:
            return Outcome(False, False, f"error does not mention {missing}: {error}")
        return Outcome(True, False, "")
    if error is not None:
        return Outcome(False, False, f"unexpected error: {error}")
    expected = (case.directory / "expected.yaml").read_text()
    if out == expected:
        return Outcome(True, True, "")
    same = list(yaml.safe_load_all(out)) == list(yaml.safe_load_all(expected))
    return Outcome(same, False, "" if same else "output differs")
