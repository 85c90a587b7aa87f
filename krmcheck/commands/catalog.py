"""``krmcheck catalog view LOCATION``: a function catalog, for a person to decide to trust it."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO


from krmcheck.pipeline.report import EXIT_BROKEN, EXIT_OK
from krmcheck import discover
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files

def run(location: str, out: TextIO, err: TextIO) -> int:
    """Print a catalog (publisher, functions, versions, runtimes, digests) so
    that a person can decide to trust it. Fetching the catalog the user named
    is allowed; nothing it lists is downloaded or run."""
    from krmcheck.fn.catalog.sources import load_catalog, reference
    from krmcheck.fn.catalog.view import view_lines
    from krmcheck.fn.catalog_context import CatalogContext

    here = Path.cwd()  # read once: the location may be relative to it
    files = Files(discover.repo_root(here))
    ref = reference(location, here, files, None)
    try:
        found = load_catalog(ref, CatalogContext(network=True))
    except BuildError as e:
        err.write(f"Error: {e}\n")
        return EXIT_BROKEN
    out.write("".join(f"{line}\n" for line in view_lines(found)))
    return EXIT_OK


