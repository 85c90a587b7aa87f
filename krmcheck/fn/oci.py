"""OCI artifacts (``oci://registry/repository:tag`` or ``@sha256:...``),
pulled with the ``oras`` CLI.

KEP-2906 leaves pulling OCI artifacts to ORAS rather than to a registry
client built into kustomize; krmcheck does the same and runs the ``oras``
binary the user installed, as it runs ``docker`` for container functions.
Credentials are oras's own (``oras login``); nothing here reads them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from krmcheck.resource.errors import BuildError, ProgramError
from krmcheck.transports import Invocation, TransportError, TransportTimeout
from krmcheck.transports.exec import ExecTransport
from krmcheck.tree.origin import Origin

SCHEME = "oci://"
ORAS_ENV = "KRMCHECK_ORAS"  # another oras binary than the one on PATH
TIMEOUT = 120.0  # seconds for one pull


def is_reference(text: str) -> bool:
    return text.startswith(SCHEME)


def pull(reference: str, dest: Path, origin: Origin | None) -> list[Path]:
    """Pull ``reference`` into the empty directory ``dest``; the files it held."""
    target = reference[len(SCHEME):] if is_reference(reference) else reference
    if not target:
        raise BuildError(f"'{reference}' names no OCI artifact", origin)
    command = [_oras(reference, origin), "pull", target, "--output", str(dest)]
    dest.mkdir(parents=True, exist_ok=True)
    # through the exec transport, like any program krmcheck starts: its own
    # process group, killed at the limit, output read within bounds
    call = Invocation(tuple(command), b"", Path.cwd(), dict(os.environ), TIMEOUT)
    try:
        done = ExecTransport().run(call)
    except TransportTimeout:
        raise BuildError(f"pulling '{reference}' with oras took longer than {TIMEOUT:.0f}s",
                         origin) from None
    except TransportError as e:
        raise BuildError(f"pulling '{reference}': cannot run oras: {e}", origin) from None
    if done.returncode != 0:
        detail = (done.stderr_text.strip() or done.stdout.decode("utf-8", "replace").strip()).splitlines()
        raise ProgramError(f"pulling '{reference}' with oras failed: "
                         f"{detail[-1] if detail else f'exit status {done.returncode}'}", origin)
    return sorted(p for p in dest.rglob("*") if p.is_file())


def single_file(reference: str, files: list[Path], origin: Origin | None) -> Path:
    """The one file an artifact must hold to stand for a catalog or an archive."""
    if len(files) != 1:
        names = ", ".join(p.name for p in files) or "nothing"
        raise BuildError(f"OCI artifact '{reference}' must hold exactly one file; it holds {names}",
                         origin)
    return files[0]


def _oras(reference: str, origin: Origin | None) -> str:
    found = os.environ.get(ORAS_ENV) or shutil.which("oras")
    if not found:
        raise BuildError(f"'{reference}' is an OCI reference, which krmcheck pulls with the oras "
                         f"CLI (https://oras.land); install oras on PATH or set {ORAS_ENV}", origin)
    return found
