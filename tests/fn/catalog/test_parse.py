"""A catalog file read into the model: functions, versions and runtimes
with their lines, and validation errors at the catalog's lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.fn.catalog.sources import load_catalog
from krmcheck.resource.errors import BuildError
from krmcheck.tree.origin import Location, Origin
from tests.fn.catalog.catalogs import HEAD, container_function, ctx, exec_function, local, sha, write


def test_reads_functions_versions_and_runtimes_with_their_lines(tmp_path: Path) -> None:
    write(tmp_path, "catalog.yaml", HEAD + exec_function(sha="a" * 64)
          + container_function("Logger", "registry.example/logger:v1.2.3",
                               f"          sha256: sha256:{'B' * 64}\n          requireNetwork: true\n"))
    catalog = load_catalog(local(tmp_path, "catalog.yaml"), ctx(tmp_path))
    assert (catalog.name, catalog.kind) == ("team", "Catalog")
    first, second = catalog.functions
    assert (first.group, first.kind, first.publisher) == ("example.com", "SetAnnotation", "Example Co")
    platform = first.versions[0].platforms[0]
    assert (platform.os, platform.arch, platform.bin, platform.uri, platform.sha256) == \
        ("linux", "amd64", "bin/fn", "fn.tar.gz", "a" * 64)
    assert platform.origin == Origin("catalog.yaml", 16, 13, "catalog")
    container = second.versions[0].container
    assert container is not None
    assert (container.image, container.sha256, container.network, container.storage_mount) == \
        ("registry.example/logger:v1.2.3", "b" * 64, True, False)
    assert catalog.source.sha256 == sha((tmp_path / "catalog.yaml").read_bytes())


def test_krm_function_catalog_kind_is_accepted(tmp_path: Path) -> None:
    write(tmp_path, "c.yaml", HEAD.replace("kind: Catalog", "kind: KRMFunctionCatalog") + exec_function())
    assert load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path)).kind == "KRMFunctionCatalog"


def test_a_digest_of_digits_stays_text(tmp_path: Path) -> None:
    write(tmp_path, "c.yaml", HEAD + exec_function(sha="1" * 64))
    catalog = load_catalog(local(tmp_path, "c.yaml"), ctx(tmp_path))
    assert catalog.functions[0].versions[0].platforms[0].sha256 == "1" * 64


@pytest.mark.parametrize("text, where, fragment", [
    # a function without publisher: at the function item
    (HEAD + exec_function().replace("    publisher: Example Co\n", ""), (7, 5),
     "'publisher' is a required property"),
    # a digest that is not one: at the sha256 line
    (HEAD + exec_function(sha="abc"), (20, 13), "'abc' is not a sha256 digest"),
    # a platform without a digest: at the platform item
    (HEAD + exec_function().replace("            sha256: " + "0" * 64 + "\n", ""), (16, 13),
     "'sha256' is a required property"),
    # the KEP's requireFilesystem is not a field: at that key
    (HEAD + container_function("L", "l:v1", "          requireFilesystem: true\n"), (16, 11),
     "unknown field 'requireFilesystem'"),
    # an empty runtime
    (HEAD + exec_function().replace("""        exec:
          platforms:
          - os: linux
            arch: amd64
            bin: bin/fn
            uri: fn.tar.gz
            sha256: """ + "0" * 64 + "\n", "        {}\n"), (13, 7), "a runtime needs container, exec or both"),
    # a kind that is not a catalog
    (HEAD.replace("kind: Catalog", "kind: Catalogue") + exec_function(), (2, 1), "'Catalogue' is not one of"),
    # an unsupported os
    (HEAD + exec_function(os_name="plan9"), (16, 13), "'plan9' is not one of"),
])
def test_schema_errors_point_at_the_catalog_line(tmp_path: Path, text: str, where: tuple[int, int],
                                                 fragment: str) -> None:
    write(tmp_path, "catalog.yaml", text)
    with pytest.raises(BuildError) as e:
        load_catalog(local(tmp_path, "catalog.yaml"), ctx(tmp_path))
    assert e.value.location == Location("catalog.yaml", *where)
    assert "invalid catalog catalog.yaml" in e.value.message
    assert fragment in e.value.message


def test_yaml_errors_and_extra_documents_have_lines(tmp_path: Path) -> None:
    write(tmp_path, "bad.yaml", HEAD + "  - group: [\n")
    with pytest.raises(BuildError) as e:
        load_catalog(local(tmp_path, "bad.yaml"), ctx(tmp_path))
    assert e.value.location is not None and e.value.location.path == "bad.yaml"
    write(tmp_path, "two.yaml", HEAD + exec_function() + "---\nkind: Catalog\n")
    with pytest.raises(BuildError, match="exactly one Catalog") as e:
        load_catalog(local(tmp_path, "two.yaml"), ctx(tmp_path))
    assert e.value.location == Location("two.yaml", 22, 1)
