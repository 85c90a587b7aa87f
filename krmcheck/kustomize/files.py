"""File access for a build, under kustomize's load restrictor.

Paths in origins and messages are repo-relative (POSIX separators); the
repository root is fixed once per run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from krmcheck.kustomize.errors import BuildError
from krmcheck.tree.origin import Origin

ROOT_ONLY = "LoadRestrictionsRootOnly"
NONE = "LoadRestrictionsNone"
RESTRICTORS = (ROOT_ONLY, NONE)


@dataclass(frozen=True)
class Files:
    """Reads files and names them relative to ``repo_root``."""

    repo_root: Path

    def display(self, path: Path) -> str:
        try:
            return Path(os.path.relpath(path, self.repo_root)).as_posix()
        except ValueError:
            return path.as_posix()

    def read_text(self, path: Path, origin: Origin | None = None) -> str:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise BuildError(f"{self.display(path)}: no such file", origin) from None
        except IsADirectoryError:
            raise BuildError(f"{self.display(path)}: is a directory, not a file", origin) from None
        except OSError as e:
            raise BuildError(f"{self.display(path)}: {e.strerror}", origin) from None
        return data.decode("utf-8", "replace").lstrip("\ufeff")

    def read_bytes(self, path: Path, origin: Origin | None = None) -> bytes:
        try:
            return path.read_bytes()
        except OSError as e:
            raise BuildError(f"{self.display(path)}: {e.strerror or 'cannot read'}", origin) from None


def check_restriction(restrictor: str, root: Path, target: Path, origin: Origin | None,
                      files: Files) -> None:
    """Under RootOnly, a file must lie at or below the kustomization root."""
    if restrictor == NONE:
        return
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(target))
    if real != real_root and real_root not in real.parents:
        raise BuildError(
            f"security; file '{files.display(target)}' is not in or below "
            f"'{files.display(root)}' (use --load-restrictor LoadRestrictionsNone to allow it)",
            origin)
