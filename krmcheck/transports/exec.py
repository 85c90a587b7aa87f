"""Run a local executable: the transport for exec plugins, exec functions,
the docker/podman CLI (through ``krmcheck.fn.container``), helm and the oras CLI.

The program is untrusted, so the transport bounds what it can cost:

* it runs in a process group of its own (a new session), and the whole group
  is killed with SIGKILL at the time limit, and again when the program exits,
  so no child it forked outlives it;
* the pipes are read as they fill, never all at once: stdout is an error past
  :data:`MAX_STDOUT` bytes; stderr keeps its first and last
  :data:`MAX_STDERR` / 2 bytes and drops the middle;
* after the program exits its pipes get :data:`DRAIN` more seconds to close
  (a grandchild that left the group may still hold them), then they are
  closed on it.

What a program can still do: a child that calls ``setsid()`` itself leaves
the group and survives (only its pipes are taken away); a container that the
docker CLI started keeps running when the CLI is killed.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from typing import IO

from krmcheck.transports import Completed, Invocation, TransportError, TransportTimeout

# A rendered resource list of this size is far beyond any real repository; a
# program printing more is broken or hostile, and reading on would take memory
# without bound.
MAX_STDOUT = 256 * 1024 * 1024
# stderr is for people and for error messages: the head says what started,
# the tail says why it stopped.
MAX_STDERR = 1024 * 1024
DRAIN = 1.0  # seconds the pipes may stay open after the program exited
_CHUNK = 64 * 1024
_TICK = 0.05  # how often to look for the exit where the kernel cannot say (no pidfd)


class ExecTransport:
    def run(self, call: Invocation) -> Completed:
        proc = _start(call)
        try:
            stdout, stderr = _communicate(proc, call)
        finally:
            _kill_group(proc)
            _reap(proc)
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
        return Completed(stdout, stderr, proc.returncode)


def _start(call: Invocation) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(list(call.argv), cwd=call.cwd, env=dict(call.env),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except FileNotFoundError:
        raise TransportError(f"{call.argv[0]}: executable file not found") from None
    except PermissionError:
        raise TransportError(f"{call.argv[0]}: permission denied (not executable)") from None
    except OSError as e:  # e.g. exec format error: a script without a #! line
        raise TransportError(f"{call.argv[0]}: {e.strerror or e}") from None


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the program's process group (its id is the program's pid,
    reserved while the program is an unreaped zombie or any member lives)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # nobody left in the group


def _reap(proc: subprocess.Popen[bytes]) -> None:
    try:
        proc.wait(DRAIN)
    except subprocess.TimeoutExpired:
        pass  # a program the kill could not reach (setuid): not waited for


def _communicate(proc: subprocess.Popen[bytes], call: Invocation) -> tuple[bytes, bytes]:
    """Feed stdin and collect stdout and stderr until the program has exited
    and its pipes have closed (or :data:`DRAIN` seconds after the exit)."""
    watch = _ExitWatch(proc)
    pipes = _Pipes(proc, call, watch)
    limit = time.monotonic() + call.timeout
    try:
        while not (watch.exited and pipes.closed):
            now = time.monotonic()
            if not watch.exited and watch.poll():
                _kill_group(proc)  # strays die now, and with them their copies of the pipes
                limit = now + DRAIN
                continue
            if now >= limit:
                if watch.exited:
                    break  # something outside the group holds the pipes: stop listening
                raise TransportTimeout(f"{call.argv[0]} did not finish within {call.timeout:g}s "
                                       f"(raise the limit with --fn-timeout)")
            pipes.wait(min(limit - now, watch.tick))
    finally:
        pipes.close()
        watch.close()
    return pipes.stdout(), pipes.stderr.value()


class _ExitWatch:
    """Tells when the program has exited, without reaping it (so its pid, and
    with it the process group id, cannot be reused before the group is killed)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.exited = False
        self.fd: int | None = None
        try:  # Linux 5.3+: a descriptor that turns readable when the process exits
            self.fd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            pass
        self.tick = float("inf") if self.fd is not None else _TICK

    def poll(self) -> bool:
        if not self.exited:
            self.exited = self._check()
        return self.exited

    def _check(self) -> bool:
        if not hasattr(os, "waitid"):
            return self.proc.poll() is not None
        try:
            return os.waitid(os.P_PID, self.proc.pid,
                             os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class _Pipes:
    """The program's three pipes (and its exit watch) on one selector: stdin
    written as the program drains it, stdout and stderr read as they fill."""

    def __init__(self, proc: subprocess.Popen[bytes], call: Invocation, watch: _ExitWatch) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.call = call
        self.watch = watch
        self.selector = selectors.DefaultSelector()
        self.open: list[IO[bytes]] = [proc.stdout, proc.stderr]
        self.out = proc.stdout
        self.chunks: list[bytes] = []
        self.size = 0
        self.stderr = _Kept(MAX_STDERR)
        self.input = memoryview(call.stdin)
        self.sent = 0
        if call.stdin:
            os.set_blocking(proc.stdin.fileno(), False)
            self.selector.register(proc.stdin, selectors.EVENT_WRITE)
            self.open.append(proc.stdin)
        else:
            proc.stdin.close()
        for pipe in (proc.stdout, proc.stderr):
            self.selector.register(pipe, selectors.EVENT_READ)
        if watch.fd is not None:
            self.selector.register(watch.fd, selectors.EVENT_READ)

    @property
    def closed(self) -> bool:
        return not self.open

    def wait(self, timeout: float) -> None:
        """Move what is ready within ``timeout`` seconds; return early when the program exits."""
        for key, _ in self.selector.select(timeout):
            if key.fileobj == self.watch.fd:
                self.selector.unregister(key.fileobj)  # exited: the caller's next poll sees it
            elif key.events & selectors.EVENT_WRITE:
                self._write(self._pipe(key.fileobj))
            else:
                self._read(self._pipe(key.fileobj))

    def _pipe(self, fileobj: object) -> IO[bytes]:
        return next(p for p in self.open if p is fileobj)

    def _write(self, pipe: IO[bytes]) -> None:
        try:
            self.sent += os.write(pipe.fileno(), self.input[self.sent:self.sent + _CHUNK])
        except BlockingIOError:
            return
        except BrokenPipeError:  # the program stopped reading: its business
            self.sent = len(self.input)
        if self.sent >= len(self.input):
            self._drop(pipe)

    def _read(self, pipe: IO[bytes]) -> None:
        data = os.read(pipe.fileno(), _CHUNK)
        if not data:
            self._drop(pipe)
        elif pipe is self.out:
            self._keep(data)
        else:
            self.stderr.add(data)

    def _keep(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > MAX_STDOUT:
            raise TransportError(f"{self.call.argv[0]} wrote more than {_size(MAX_STDOUT)} to "
                                 f"stdout, the most krmcheck reads from a plugin or function")
        self.chunks.append(data)

    def _drop(self, pipe: IO[bytes]) -> None:
        self.selector.unregister(pipe)
        self.open.remove(pipe)
        pipe.close()

    def stdout(self) -> bytes:
        return b"".join(self.chunks)

    def close(self) -> None:
        for pipe in list(self.open):
            self._drop(pipe)
        self.selector.close()


class _Kept:
    """At most ``limit`` bytes of a stream: its first and last halves, and how
    much was dropped between them."""

    def __init__(self, limit: int) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        if len(self.tail) > 2 * self.half:  # trimmed now and then, not on every read
            self._trim()

    def _trim(self) -> None:
        excess = len(self.tail) - self.half
        if excess > 0:
            self.dropped += excess
            del self.tail[:excess]

    def value(self) -> bytes:
        self._trim()
        if not self.dropped:
            return bytes(self.head + self.tail)
        marker = f"\n[... {_size(self.dropped)} of stderr dropped ...]\n".encode()
        return bytes(self.head) + marker + bytes(self.tail)


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} bytes"
