"""Loading the entries of generators:/transformers:/validators: as configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck.kustomize import kustomization as kfile
from krmcheck.kustomize import pluginconfig
from krmcheck.kustomize.plugins import Config
from krmcheck.kustomize.target import Builder
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.node import lookup

PREFIXER = """\
apiVersion: builtin
kind: PrefixSuffixTransformer
metadata:
  name: {name}
prefix: {name}-
fieldSpecs:
- path: metadata/name
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def load(root: Path, field: str = "transformers") -> list[Config]:
    files = Files(root)
    k = kfile.load(root, files)
    builder = Builder(files)

    def accumulate(rel: str, origin: object) -> list[Resource]:
        return builder.build(root / rel) if (root / rel).is_dir() else \
            builder._load_file(root / rel, origin)  # type: ignore[arg-type]

    return pluginconfig.load(field, k.seq(field), k.path, files, accumulate)


def test_inline_before_paths_each_in_list_order(tmp_path: Path) -> None:
    write(tmp_path, "file.yaml", PREFIXER.format(name="file"))
    write(tmp_path, "dir/p.yaml", PREFIXER.format(name="dir"))
    write(tmp_path, "dir/kustomization.yaml", "resources: [p.yaml]\n")
    write(tmp_path, "kustomization.yaml", """\
transformers:
- file.yaml
- |-
  apiVersion: builtin
  kind: PrefixSuffixTransformer
  metadata:
    name: a
- dir
- |
  {apiVersion: builtin, kind: LabelTransformer, metadata: {name: c}}
""")
    got = load(tmp_path)
    assert [c.name for c in got] == ["a", "c", "file", "dir"]
    assert [c.entry.line for c in got] == [3, 9, 2, 8]


def test_several_documents_in_one_inline_entry(tmp_path: Path) -> None:
    write(tmp_path, "kustomization.yaml", """\
generators:
- |-
  apiVersion: builtin
  kind: ConfigMapGenerator
  metadata:
    name: one
  ---
  apiVersion: builtin
  kind: ConfigMapGenerator
  metadata:
    name: two
  literals:
  - a=b
""")
    got = load(tmp_path, "generators")
    assert [c.name for c in got] == ["one", "two"]
    literal = lookup(got[1].node, ["literals"])
    assert literal is not None
    item = literal.items[0]  # type: ignore[attr-defined]
    assert (item.origin.path, item.origin.line, item.origin.col) == ("kustomization.yaml", 13, 5)


def test_config_from_file_keeps_file_origins(tmp_path: Path) -> None:
    write(tmp_path, "file.yaml", PREFIXER.format(name="file"))
    write(tmp_path, "kustomization.yaml", "transformers:\n- file.yaml\n")
    (config,) = load(tmp_path)
    prefix = config.node.items["prefix"]
    assert (prefix.origin.path, prefix.origin.line, prefix.origin.col) == ("file.yaml", 5, 1)
    assert (config.entry.line, config.entry.col) == (2, 3)
    assert config.is_builtin and config.kind == "PrefixSuffixTransformer"


def test_nameless_inline_config_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "kustomization.yaml", """\
transformers:
- |-
  apiVersion: builtin
  kind: PrefixSuffixTransformer
  prefix: x-
""")
    with pytest.raises(BuildError, match="needs metadata.name"):
        load(tmp_path)


def test_duplicate_configs_are_an_error(tmp_path: Path) -> None:
    write(tmp_path, "file.yaml", PREFIXER.format(name="a"))
    write(tmp_path, "kustomization.yaml", "transformers:\n- file.yaml\n- file.yaml\n")
    with pytest.raises(BuildError, match="already registered id"):
        load(tmp_path)


def test_a_map_entry_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "kustomization.yaml", "validators:\n- {kind: X}\n")
    with pytest.raises(BuildError, match="validators\\[0\\] must be a string, not a map"):
        load(tmp_path, "validators")
