"""The packages of krmcheck import each other one way only.

Every module's imports are read with ``ast``: top-level ones, those inside
functions (the lazy ones) and those under ``if TYPE_CHECKING:``. Between
the packages below and the modules at the top of ``krmcheck`` (each a node
of its own: ``runner``, ``render_cache``, ``journal``...), the graph they
make must have no cycle, so no two packages meet in a loop through a
top-level module either: the build
(``kustomize``) owns the plugin interface the function runtime (``fn``)
implements, and both share the resource model (``resource``) and the
transports (``transports``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

PROJECT = Path(__file__).resolve().parent.parent

PACKAGES = (
    "krmcheck.commands", "krmcheck.fn", "krmcheck.gitops", "krmcheck.kustomize", "krmcheck.pipeline",
    "krmcheck.reporters", "krmcheck.resource",
    "krmcheck.schemas", "krmcheck.transports", "krmcheck.tree", "krmcheck.validators",
)


class Edge(NamedTuple):
    """One package importing another, and the first import that says so."""

    source: str
    target: str
    witness: str  # module:line -> imported name


def module_name(path: Path, top: Path) -> str:
    parts = list(path.relative_to(top).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(source: str, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every import in ``source``, however deep in
    the module it is; ``from a import b`` yields both ``a`` and ``a.b``
    (b may be a module)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[:len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


# krmcheck's own top-level modules (krmcheck/NAME.py)
TOP_LEVEL = tuple(sorted(f"krmcheck.{p.stem}" for p in (PROJECT / "krmcheck").glob("*.py")
                         if p.stem != "__init__"))


def package_of(name: str) -> str | None:
    """The node ``name`` belongs to: its package, or itself for a top-level module."""
    found = next((p for p in PACKAGES if name == p or name.startswith(p + ".")), None)
    if found is None:
        found = next((m for m in TOP_LEVEL if name == m or name.startswith(m + ".")), None)
    return found


def edges(top: Path) -> dict[tuple[str, str], Edge]:
    """The package graph of the ``krmcheck`` tree under ``top``."""
    found: dict[tuple[str, str], Edge] = {}
    for path in sorted((top / "krmcheck").rglob("*.py")):
        module = module_name(path, top)
        source = package_of(module)
        if source is None:
            continue
        for line, name in imported_names(path.read_text(), module, path.name == "__init__.py"):
            target = package_of(name)
            if target is not None and target != source:
                found.setdefault((source, target), Edge(source, target, f"{module}:{line} -> {name}"))
    return found


def find_cycle(graph: dict[tuple[str, str], Edge]) -> list[Edge]:
    """The edges of one cycle of ``graph``, or [] when it has none."""
    out: dict[str, list[Edge]] = {}
    for edge in graph.values():
        out.setdefault(edge.source, []).append(edge)
    done: set[str] = set()
    for start in sorted(out):
        cycle = _walk(start, out, [], done)
        if cycle:
            return cycle
    return []


def _walk(node: str, out: dict[str, list[Edge]], path: list[Edge], done: set[str]) -> list[Edge]:
    on_path = [e.source for e in path]
    if node in on_path:
        return path[on_path.index(node):]
    if node in done:
        return []
    for edge in out.get(node, []):
        cycle = _walk(edge.target, out, path + [edge], done)
        if cycle:
            return cycle
    done.add(node)
    return []


def describe(cycle: list[Edge]) -> str:
    return "import cycle between packages:\n" + "\n".join(
        f"  {e.source} -> {e.target}  ({e.witness})" for e in cycle)


def test_the_packages_import_each_other_one_way_only() -> None:
    cycle = find_cycle(edges(PROJECT))
    assert not cycle, describe(cycle)


def test_every_package_checked_is_a_package() -> None:
    assert [p for p in PACKAGES if not (PROJECT / p.replace(".", "/") / "__init__.py").is_file()] == []


def test_lazy_and_type_checking_imports_count() -> None:
    source = ("from typing import TYPE_CHECKING\nfrom . import sibling\n"
              "if TYPE_CHECKING:\n    from krmcheck.fn.loader import PluginLoader\n"
              "def late() -> None:\n    import krmcheck.gitops.flux\n")
    names = {name for _, name in imported_names(source, "krmcheck.kustomize.target", False)}
    assert {"krmcheck.kustomize.sibling", "krmcheck.fn.loader", "krmcheck.gitops.flux"} <= names


def test_a_cycle_is_found_and_shown_with_the_imports_that_make_it() -> None:
    graph = {(a, b): Edge(a, b, f"{a}.m:1 -> {b}.n") for a, b in
             (("krmcheck.fn", "krmcheck.kustomize"), ("krmcheck.kustomize", "krmcheck.tree"),
              ("krmcheck.kustomize", "krmcheck.fn"))}
    cycle = find_cycle(graph)
    assert [(e.source, e.target) for e in cycle] == [("krmcheck.fn", "krmcheck.kustomize"),
                                                     ("krmcheck.kustomize", "krmcheck.fn")]
    assert "krmcheck.kustomize.m:1 -> krmcheck.fn.n" in describe(cycle)
    del graph[("krmcheck.kustomize", "krmcheck.fn")]
    assert find_cycle(graph) == []


# --- modules, and what a package never imports (ARCHITECTURE.md, "Package layering") ------

def module_edges(top: Path) -> dict[tuple[str, str], Edge]:
    """The module graph of the ``krmcheck`` tree under ``top``: every module
    (a package's ``__init__`` counting as the package) a node."""
    mods = {module_name(p, top): p for p in sorted((top / "krmcheck").rglob("*.py"))}

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    found: dict[tuple[str, str], Edge] = {}
    for module, path in mods.items():
        for line, name in imported_names(path.read_text(), module, path.name == "__init__.py"):
            target = resolve(name)
            if target is not None and target not in (module, "krmcheck"):
                found.setdefault((module, target), Edge(module, target, f"{module}:{line} -> {name}"))
    return found


# package -> what it never imports ("package!module": that one module is allowed)
NEVER: dict[str, tuple[str, ...]] = {
    # the build renders; it knows nothing of what judges, locates, masks or reports
    "krmcheck.kustomize": ("krmcheck.fn", "krmcheck.gitops", "krmcheck.validators", "krmcheck.reporters",
                           "krmcheck.locate", "krmcheck.redact", "krmcheck.config", "krmcheck.pipeline",
                           "krmcheck.commands"),
    # validators see rendered trees only
    "krmcheck.validators": ("krmcheck.kustomize", "krmcheck.fn", "krmcheck.gitops", "krmcheck.reporters",
                            "krmcheck.config", "krmcheck.pipeline", "krmcheck.commands"),
    # the function runtime gives trees back with their origins; it never locates findings
    "krmcheck.fn": ("krmcheck.locate", "krmcheck.validators", "krmcheck.reporters", "krmcheck.config",
                    "krmcheck.pipeline", "krmcheck.commands"),
    # the configuration is read before anything runs
    "krmcheck.config": ("krmcheck.fn", "krmcheck.gitops", "krmcheck.kustomize",
                        "krmcheck.validators!krmcheck.validators.base", "krmcheck.pipeline", "krmcheck.commands"),
    # reporters write a finished report
    "krmcheck.reporters": ("krmcheck.kustomize", "krmcheck.fn", "krmcheck.gitops", "krmcheck.validators",
                           "krmcheck.schemas", "krmcheck.pipeline", "krmcheck.commands"),
    # the pipeline is called by the commands, never the other way
    "krmcheck.pipeline": ("krmcheck.commands",),
}


def broken_rules(graph: dict[tuple[str, str], Edge]) -> list[str]:
    out = []
    for (source, target), edge in sorted(graph.items()):
        for package, banned in NEVER.items():
            if source != package and not source.startswith(package + "."):
                continue
            for rule in banned:
                base, _, allowed = rule.partition("!")
                if (target == base or target.startswith(base + ".")) and target != allowed:
                    out.append(f"{package} never imports {base}: {edge.witness}")
    return out


def test_no_module_imports_one_that_imports_it() -> None:
    cycle = find_cycle(module_edges(PROJECT))
    assert not cycle, describe(cycle).replace("packages", "modules")


def test_no_package_imports_what_architecture_says_it_never_does() -> None:
    assert broken_rules(module_edges(PROJECT)) == []


def test_a_broken_rule_is_named_with_its_import() -> None:
    graph = {("krmcheck.config", "krmcheck.fn.spec"): Edge("krmcheck.config", "krmcheck.fn.spec",
                                                           "krmcheck.config:26 -> krmcheck.fn.spec"),
             ("krmcheck.config", "krmcheck.validators.base"): Edge("krmcheck.config", "krmcheck.validators.base",
                                                                   "krmcheck.config:33 -> krmcheck.validators.base")}
    assert broken_rules(graph) == ["krmcheck.config never imports krmcheck.fn: krmcheck.config:26 -> krmcheck.fn.spec"]
