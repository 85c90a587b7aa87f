"""Run a container function through the docker CLI (podman when docker is
absent), with the command line kustomize uses:

    docker run --rm -i -a STDIN -a STDOUT -a STDERR --network none|host
        --user nobody|UID:GID --security-opt=no-new-privileges
        [--mount type=T,source=ABS,target=DST[,readonly]]...
        -e K=V... (sorted by key) -e K... (in order) IMAGE

(kyaml's container filter, checked with kubectl). No network and no mounts
unless the caller puts them in the request.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Mapping

from krmcheck.resource.function import Mount
from krmcheck.transports import TransportError

RUNTIMES = ("docker", "podman")
# Always set by kustomize for container functions; declared or -e values override them.
DEFAULT_ENV = (("LOG_TO_STDERR", "true"), ("STRUCTURED_RESULTS", "true"))


@dataclass(frozen=True)
class ContainerRun:
    """One container function run. ``mounts`` have absolute sources;
    ``env`` is kustomize's list: ``K=V`` or a bare ``K`` copied from the caller."""

    image: str
    network: bool = False
    mounts: tuple[Mount, ...] = ()
    env: tuple[str, ...] = ()
    user: str = "nobody"


def find_runtime(env: Mapping[str, str]) -> str | None:
    """The docker (else podman) CLI on the build's PATH."""
    for name in RUNTIMES:
        found = shutil.which(name, path=env.get("PATH", ""))
        if found:
            return found
    return None


def merge_env(declared: tuple[str, ...], given: tuple[str, ...]) -> tuple[str, ...]:
    """Declared envs with the command line's -e values on top (they win), as
    kustomize merges them: values by key, bare names in order, once each."""
    values: dict[str, str] = dict(DEFAULT_ENV)
    bare: list[str] = []
    for entry in declared + given:
        key, eq, value = entry.partition("=")
        if eq:
            values[key] = value
        elif key not in bare:
            bare.append(key)
    return tuple(f"{k}={v}" for k, v in values.items()) + tuple(bare)


def mount_flag(mount: Mount) -> str:
    mode = "" if mount.read_write else ",readonly"
    return f"type={mount.type},source={mount.src},target={mount.dst}{mode}"


def docker_args(run: ContainerRun) -> list[str]:
    """The arguments after ``docker``."""
    args = ["run", "--rm", "-i", "-a", "STDIN", "-a", "STDOUT", "-a", "STDERR",
            "--network", "host" if run.network else "none",
            "--user", run.user, "--security-opt=no-new-privileges"]
    for mount in run.mounts:
        args += ["--mount", mount_flag(mount)]
    pairs = sorted((e.partition("=")[0], e) for e in run.env if "=" in e)
    for _, entry in pairs:
        args += ["-e", entry]
    for entry in run.env:
        if "=" not in entry:
            args += ["-e", entry]
    return args + [run.image]


def command(run: ContainerRun, env: Mapping[str, str]) -> tuple[str, ...]:
    """The full argv (CLI path first) to hand to the exec transport."""
    cli = find_runtime(env)
    if cli is None:
        raise TransportError('exec: "docker": executable file not found in $PATH '
                             "(container functions need the docker or podman CLI)")
    return (cli, *docker_args(run))
