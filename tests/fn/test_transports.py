"""Transports: the docker command line and running a program under a time limit."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from krmcheck.fn import container
from krmcheck.resource.function import Mount
from krmcheck.transports import Invocation, TransportError
from krmcheck.transports.exec import ExecTransport


def test_docker_args_default_shape() -> None:
    run = container.ContainerRun("example.com/fn:v1", env=container.merge_env((), ()))
    assert container.docker_args(run) == [
        "run", "--rm", "-i", "-a", "STDIN", "-a", "STDOUT", "-a", "STDERR",
        "--network", "none", "--user", "nobody", "--security-opt=no-new-privileges",
        "-e", "LOG_TO_STDERR=true", "-e", "STRUCTURED_RESULTS=true", "example.com/fn:v1"]


def test_docker_args_network_mounts_env_and_user() -> None:
    mounts = (Mount("bind", "/k/data", "/data"), Mount("bind", "/k/cache", "/cache", read_write=True))
    env = container.merge_env(("B=declared", "SHARED=declared", "PASS"), ("SHARED=cli", "A=1", "CLI"))
    run = container.ContainerRun("img", network=True, mounts=mounts, env=env, user="1000:1000")
    args = container.docker_args(run)
    assert args[args.index("--network") + 1] == "host"
    assert args[args.index("--user") + 1] == "1000:1000"
    assert args[args.index("--security-opt=no-new-privileges") + 1:] == [
        "--mount", "type=bind,source=/k/data,target=/data,readonly",
        "--mount", "type=bind,source=/k/cache,target=/cache",
        "-e", "A=1", "-e", "B=declared", "-e", "LOG_TO_STDERR=true", "-e", "SHARED=cli",
        "-e", "STRUCTURED_RESULTS=true", "-e", "PASS", "-e", "CLI", "img"]


def test_merge_env_names_once() -> None:
    assert container.merge_env(("X", "X"), ("X",))[-1:] == ("X",)
    assert container.merge_env(("X",), ("X",)).count("X") == 1


def _program(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_find_runtime_prefers_docker_then_podman(tmp_path: Path) -> None:
    podman = _program(tmp_path, "podman", "#!/bin/sh\n")
    assert container.find_runtime({"PATH": str(tmp_path)}) == str(podman)
    docker = _program(tmp_path, "docker", "#!/bin/sh\n")
    assert container.find_runtime({"PATH": str(tmp_path)}) == str(docker)
    assert container.find_runtime({"PATH": str(tmp_path / "none")}) is None


def test_command_without_a_cli_names_docker(tmp_path: Path) -> None:
    with pytest.raises(TransportError, match="docker"):
        container.command(container.ContainerRun("img"), {"PATH": str(tmp_path)})


def test_exec_moves_bytes(tmp_path: Path) -> None:
    prog = _program(tmp_path, "upper", "#!/bin/sh\necho err >&2\ntr a-z A-Z\nexit 3\n")
    done = ExecTransport().run(Invocation((str(prog),), b"abc\n", tmp_path, dict(os.environ)))
    assert (done.stdout, done.stderr_text, done.returncode) == (b"ABC\n", "err\n", 3)


def test_exec_time_limit(tmp_path: Path) -> None:
    prog = _program(tmp_path, "slow", "#!/bin/sh\nsleep 5\n")
    with pytest.raises(TransportError, match="did not finish within 0.2s"):
        ExecTransport().run(Invocation((str(prog),), b"", tmp_path, dict(os.environ), timeout=0.2))


def test_exec_missing_program(tmp_path: Path) -> None:
    with pytest.raises(TransportError, match="not found"):
        ExecTransport().run(Invocation((str(tmp_path / "nope"),), b"", tmp_path, {}))
