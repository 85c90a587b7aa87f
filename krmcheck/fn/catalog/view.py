"""What ``krmcheck catalog view`` prints about a catalog: enough for a
person to decide whether to trust it."""

from __future__ import annotations

from krmcheck.fn.catalog.model import Catalog, Version


def view_lines(catalog: Catalog) -> list[str]:
    """What ``krmcheck catalog view`` prints: enough to decide on trust."""
    src = catalog.source
    lines = [f"{catalog.kind} {catalog.name or '(unnamed)'}",
             f"  location: {src.display}",
             f"  sha256:   {src.sha256}",
             f"  trust it: --trusted-catalog {src.identity}",
             f"functions: {len(catalog.functions)}"]
    for f in catalog.functions:
        lines.append(f"- {f.kind} ({f.group or 'core'})")
        lines.append(f"    publisher:   {f.publisher}")
        if f.description:
            lines.append(f"    description: {f.description}")
        for v in f.versions:
            lines.append(f"    version {v.name} (apiVersion {f.group + '/' if f.group else ''}{v.name}):")
            lines.extend(_runtime_lines(v))
    return lines


def _runtime_lines(v: Version) -> list[str]:
    out = []
    if v.container is not None:
        c = v.container
        needs = [w for w, on in (("network", c.network), ("storage mount", c.storage_mount)) if on]
        digest = f"sha256:{c.sha256}" if c.sha256 else "(no sha256)"
        out.append(f"      container {c.image}  {digest}"
                   f"{'  needs ' + ' and '.join(needs) if needs else ''}")
    for p in v.platforms:
        out.append(f"      exec {p.os}/{p.arch}  {p.bin} from {p.uri}  sha256:{p.sha256}")
    return out
