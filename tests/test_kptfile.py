"""A Kptfile's pipeline.validators as krmcheck external validators."""

from __future__ import annotations

from pathlib import Path

import pytest

from krmcheck import kptfile
from krmcheck.resource.errors import BuildError

HEAD = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
pipeline:
  mutators:
    - image: set-labels:v0.1
      configMap: {app: web}
  validators:
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_no_kptfile_no_validators(tmp_path: Path) -> None:
    assert kptfile.validators(tmp_path, "app") == ()


def test_exec_validator_with_config_map(tmp_path: Path) -> None:
    script = write(tmp_path, "fns/check.py", "#!/usr/bin/env python3\n")
    write(tmp_path, "app/Kptfile", HEAD + "    - exec: ../fns/check.py\n      configMap:\n        level: high\n")
    [found] = kptfile.validators(tmp_path / "app", "app")
    assert found.spec.exec_path == str(script.resolve())
    assert found.spec.origin is not None and found.spec.origin[:3] == ("app/Kptfile", 10, 7)
    fc = found.function_config
    assert fc is not None and fc.to_data() == {"apiVersion": "v1", "kind": "ConfigMap",
                                               "metadata": {"name": "function-input"},
                                               "data": {"level": "high"}}
    assert fc.mapping("data").get("level").origin[:3] == ("app/Kptfile", 12, 9)  # type: ignore[union-attr]


def test_image_validator_with_config_path(tmp_path: Path) -> None:
    write(tmp_path, "app/kubeval.yaml", "apiVersion: fn.kpt.dev/v1alpha1\nkind: KubevalConfig\nstrict: true\n")
    write(tmp_path, "app/Kptfile", HEAD + "    - image: gcr.io/kpt-fn/kubeval:v0.3\n"
                                          "      configPath: kubeval.yaml\n      name: kubeval\n")
    [found] = kptfile.validators(tmp_path / "app", "app")
    assert (found.name, found.spec.image) == ("kubeval", "gcr.io/kpt-fn/kubeval:v0.3")
    assert found.function_config is not None
    assert found.function_config.get("strict").origin[:3] == ("app/kubeval.yaml", 3, 1)  # type: ignore[union-attr]


def test_image_shorthand_gets_kpts_catalog_prefix(tmp_path: Path) -> None:
    write(tmp_path, "Kptfile", HEAD + "    - image: kubeval:v0.3\n")
    [found] = kptfile.validators(tmp_path, ".")
    assert found.spec.image == "gcr.io/kpt-fn/kubeval:v0.3"
    assert found.spec.origin is not None and found.spec.origin.path == "Kptfile"


def test_mutators_are_not_validators(tmp_path: Path) -> None:
    write(tmp_path, "Kptfile", HEAD.replace("  validators:\n", ""))
    assert kptfile.validators(tmp_path, ".") == ()


@pytest.mark.parametrize("entry, where, fragment", [
    ("    - image: fn:v1\n      selectors:\n        - kind: Deployment\n", (11, 7), "selectors is not supported yet"),
    ("    - image: fn:v1\n      exclude: []\n", (11, 7), "exclude is not supported yet"),
    ("    - image: fn:v1\n      colour: blue\n", (11, 7), "unknown field 'colour'"),
    ("    - exec: missing.py\n", (10, 7), "exec: missing.py: no such file"),
    ("    - name: nothing\n", (10, 7), "exactly one of exec and image"),
])
def test_errors_at_the_kptfile_line(tmp_path: Path, entry: str, where: tuple[int, int], fragment: str) -> None:
    write(tmp_path, "app/Kptfile", HEAD + entry)
    with pytest.raises(BuildError) as e:
        kptfile.validators(tmp_path / "app", "app")
    assert e.value.location is not None
    assert (e.value.location.path, e.value.location.line, e.value.location.col) == ("app/Kptfile", *where)
    assert fragment in e.value.message


def test_not_a_kptfile(tmp_path: Path) -> None:
    write(tmp_path, "Kptfile", "apiVersion: v1\nkind: ConfigMap\n")
    with pytest.raises(BuildError) as e:
        kptfile.validators(tmp_path, ".")
    assert "must hold one object of kind Kptfile" in e.value.message
    assert e.value.location is not None and e.value.location.line == 1


def test_invalid_yaml(tmp_path: Path) -> None:
    write(tmp_path, "Kptfile", "pipeline: [\n")
    with pytest.raises(BuildError) as e:
        kptfile.validators(tmp_path, ".")
    assert e.value.location is not None and e.value.location.path == "Kptfile"
