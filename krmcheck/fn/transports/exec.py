"""Run a local executable: the transport for exec plugins, exec functions and
(through ``container.py``) the docker/podman CLI."""

from __future__ import annotations

import subprocess

from krmcheck.fn.transports import Completed, Invocation, TransportError


class ExecTransport:
    def run(self, call: Invocation) -> Completed:
        try:
            proc = subprocess.run(list(call.argv), input=call.stdin, cwd=call.cwd,
                                  env=dict(call.env), capture_output=True, timeout=call.timeout,
                                  check=False)
        except subprocess.TimeoutExpired:
            raise TransportError(f"{call.argv[0]} did not finish within {call.timeout:g}s "
                                 f"(raise the limit with --fn-timeout)") from None
        except FileNotFoundError:
            raise TransportError(f"{call.argv[0]}: executable file not found") from None
        except PermissionError:
            raise TransportError(f"{call.argv[0]}: permission denied (not executable)") from None
        except OSError as e:  # e.g. exec format error: a script without a #! line
            raise TransportError(f"{call.argv[0]}: {e.strerror or e}") from None
        return Completed(proc.stdout, proc.stderr, proc.returncode)
