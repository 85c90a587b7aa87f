"""``krmcheck schemas list`` and ``krmcheck schemas pull``."""

from __future__ import annotations

from typing import Any, Sequence, TextIO


from krmcheck.pipeline.run import CheckOptions, UsageError
from krmcheck.pipeline.report import EXIT_BROKEN, EXIT_OK
from krmcheck import cache
from krmcheck.reporters import plural
from krmcheck.schemas import sources as schema_sources

from krmcheck.pipeline.check import check
from krmcheck.pipeline.run import silent

def run_list(opts: CheckOptions, out: TextIO, err: TextIO) -> int:
    """Which source serves each kind the checked roots render."""
    try:
        run = check(opts, silent)
    except UsageError as e:
        err.write(f"krmcheck: error: {e}\n")
        return EXIT_BROKEN
    kinds: dict[tuple[str, str], list[Any]] = {}
    for root in run.roots:
        for api_version, kind, source, where, count in root.coverage:
            entry = kinds.setdefault((api_version, kind), [source, where, 0, 0])
            entry[2] += count
            entry[3] += 1
    rows = [(f"{kind} ({api})", src or "none", where or "-", str(n), str(r))
            for (api, kind), (src, where, n, r) in kinds.items()]
    rank = {name: i for i, name in enumerate(schema_sources.ORDER + ("none",))}
    rows.sort(key=lambda row: (rank.get(row[1], 9), row[0]))
    out.write(_table(("KIND", "SOURCE", "SCHEMA", "RESOURCES", "ROOTS"), rows))
    return EXIT_OK


def _table(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return "".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n" for r in [head, *rows])


def run_pull(source: str, ref: str, name: str, out: TextIO, err: TextIO) -> int:
    """Fill the cache with a schema catalog at a pinned commit."""
    from krmcheck.schemas import catalog as schema_catalog

    try:
        pulled = schema_catalog.pull(source, ref, name or schema_catalog.default_name(source),
                                     cache.directory() / "schemas")
    except Exception as e:  # noqa: BLE001 - dulwich and its transports raise many types; the boundary
        err.write(f"krmcheck schemas pull: error: {source}: {e}\n")
        return EXIT_BROKEN
    out.write(f"pulled {plural(pulled.schemas, 'schema')} from {source} at {pulled.commit[:12]} "
              f"into {pulled.directory}\n")
    return EXIT_OK
