"""Plugins and functions that misbehave on purpose: forking children that
outlive them, holding the pipes open, flooding stdout or stderr. Each must
end in a clear error or a prompt answer, with nothing left running."""

from __future__ import annotations

import os
import signal
import stat
import time
from pathlib import Path

import pytest

from krmcheck.fn.loader import PluginLoader
from krmcheck.kustomize.plugins import FunctionOptions
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.transports import Invocation, TransportError, TransportTimeout
from krmcheck.transports import exec as exec_transport
from krmcheck.transports.exec import ExecTransport

# Forks a child that would sleep for ever, notes its pid, then waits on it.
FORKS_AND_HANGS = """\
#!/bin/sh
sleep 1000 &
echo $! > "$(dirname "$0")/child.pid"
wait
"""

# Prints its answer and exits, leaving a child that holds stdout and stderr open.
LEAVES_A_CHILD = """\
#!/bin/sh
sleep 1000 &
echo $! > "$(dirname "$0")/child.pid"
cat
"""

FLOODS_STDOUT = "#!/bin/sh\nexec yes\n"

SERVICE = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"


def write(root: Path, rel: str, text: str, executable: bool = False) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def run(program: Path, stdin: bytes = b"", timeout: float = 3.0) -> tuple[bytes, bytes, int]:
    done = ExecTransport().run(Invocation((str(program),), stdin, program.parent,
                                          dict(os.environ), timeout))
    return done.stdout, done.stderr, done.returncode


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting for init to reap it does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def child_of(directory: Path) -> int:
    return int((directory / "child.pid").read_text())


def gone(pid: int) -> bool:
    """``pid`` is dead, allowing its new parent a moment to reap it. (A
    survivor is killed here, so that a failing test leaves nothing behind.)"""
    for _ in range(50):
        if not alive(pid):
            return True
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    return False


# --- process groups ------------------------------------------------------------------------

def test_forking_program_is_killed_with_its_child_at_the_limit(tmp_path: Path) -> None:
    program = write(tmp_path, "forks", FORKS_AND_HANGS, executable=True)
    with pytest.raises(TransportError, match="did not finish within 0.5s"):
        run(program, timeout=0.5)
    assert gone(child_of(tmp_path))


def test_child_holding_the_pipes_neither_hangs_the_call_nor_survives(tmp_path: Path) -> None:
    # Without the group kill the pipes stay open until the limit and the call
    # times out although the program answered at once.
    program = write(tmp_path, "leaves", LEAVES_A_CHILD, executable=True)
    assert run(program, b"answer\n", timeout=3.0) == (b"answer\n", b"", 0)
    assert gone(child_of(tmp_path))


def test_program_that_closes_its_pipes_still_meets_the_limit(tmp_path: Path) -> None:
    program = write(tmp_path, "quiet", "#!/bin/sh\nexec >&- 2>&- <&-\nsleep 1000\n", executable=True)
    with pytest.raises(TransportTimeout, match="did not finish within 0.5s"):
        run(program, timeout=0.5)


def test_exec_plugin_forking_a_child_is_a_build_error_and_leaves_nothing(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    write(plugins, "example.com/v1/forker/Forker", FORKS_AND_HANGS, executable=True)
    write(tmp_path, "app/forker.yaml", "apiVersion: example.com/v1\nkind: Forker\nmetadata:\n  name: f\n")
    write(tmp_path, "app/kustomization.yaml", "generators:\n- forker.yaml\n")
    env = {"PATH": os.environ.get("PATH", ""), "KUSTOMIZE_PLUGIN_HOME": str(plugins)}
    options = BuildOptions(enable_alpha_plugins=True, plugins=PluginLoader(),
                           functions=FunctionOptions(env=env, fn_timeout=0.5))
    with pytest.raises(BuildError, match=r"plugin Forker 'f'.*did not finish within 0.5s") as e:
        Builder(Files(tmp_path), options).build(tmp_path / "app")
    assert e.value.location is not None and e.value.location.path == "app/forker.yaml"
    assert gone(child_of(plugins / "example.com/v1/forker"))


# --- output bounds -------------------------------------------------------------------------

def test_stdout_past_the_limit_is_an_error_naming_program_and_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exec_transport, "MAX_STDOUT", 64 * 1024)
    program = write(tmp_path, "flood", FLOODS_STDOUT, executable=True)
    with pytest.raises(TransportError, match=f"{program} wrote more than 64 KiB to stdout"):
        run(program, timeout=3.0)


def test_flooding_function_is_a_build_error_at_its_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exec_transport, "MAX_STDOUT", 64 * 1024)
    write(tmp_path, "app/fns/flood.sh", FLOODS_STDOUT, executable=True)
    write(tmp_path, "app/service.yaml", SERVICE)
    write(tmp_path, "app/fn.yaml", "apiVersion: example.com/v1\nkind: Flood\nmetadata:\n  name: fn\n"
                                   "  annotations:\n    config.kubernetes.io/function: |\n"
                                   "      exec:\n        path: ./fns/flood.sh\n")
    write(tmp_path, "app/kustomization.yaml", "resources:\n- service.yaml\ntransformers:\n- fn.yaml\n")
    options = BuildOptions(enable_alpha_plugins=True, plugins=PluginLoader(), functions=FunctionOptions(
        env={"PATH": os.environ.get("PATH", "")}, enable_exec=True, fn_timeout=3.0))
    with pytest.raises(BuildError, match=r"couldn't execute function exec \./fns/flood\.sh.*"
                                         r"wrote more than 64 KiB to stdout") as e:
        Builder(Files(tmp_path), options).build(tmp_path / "app")
    assert e.value.location is not None and e.value.location.path == "app/fn.yaml"


def test_stderr_keeps_its_head_and_tail_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exec_transport, "MAX_STDERR", 1024)
    program = write(tmp_path, "noisy", "#!/bin/sh\necho first >&2\nhead -c 5000000 /dev/zero >&2\n"
                                       "echo last words >&2\necho ok\n", executable=True)
    stdout, stderr, code = run(program)
    assert (stdout, code) == (b"ok\n", 0)
    assert stderr.startswith(b"first\n") and stderr.endswith(b"last words\n")
    assert b"of stderr dropped" in stderr and len(stderr) < 1200


def test_large_input_is_fed_while_output_is_read(tmp_path: Path) -> None:
    # Writing all of stdin before reading would deadlock once both pipes fill.
    program = write(tmp_path, "echo", "#!/bin/sh\nexec cat\n", executable=True)
    data = b"x" * (8 * 1024 * 1024)
    assert run(program, data) == (data, b"", 0)


def test_program_ignoring_its_input_is_no_error(tmp_path: Path) -> None:
    program = write(tmp_path, "deaf", "#!/bin/sh\necho done\n", executable=True)
    assert run(program, b"y" * (4 * 1024 * 1024)) == (b"done\n", b"", 0)
