"""Flux post-build substitution on the printed text of each object, as
kustomize-controller does it: fluxcd/pkg kustomize/kustomize_varsub.go,
``SubstituteVariables`` (``res.AsYAML()``, then ``varSubstitution``:
``envsubst.Eval`` over the text and ``yaml.YAMLToJSON``, go-yaml v2, over
the result)."""

from __future__ import annotations

import pytest

from krmcheck.resource.errors import BuildError
from tests.gitops.conftest import Repo, dedent

SYNC = """
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  interval: 10m
  path: ./app
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
  postBuild:
    substitute:
"""


def ks(**variables: str) -> str:
    """The Kustomization; each variable on its own line from line 15 on."""
    return dedent(SYNC) + "".join(f"      {k}: {v}\n" for k, v in variables.items())


def config_map(data: str) -> str:
    return dedent("""
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: cm
        data:
        """) + "".join(f"  {line}\n" for line in dedent(data).splitlines())


def test_a_default_in_quotes_becomes_a_yaml_string(repo: Repo) -> None:
    """``${X:=\\"4\\"}``: the text the controller parses again reads
    ``DIFFICULTY: "4"``, the string 4 without quotes (issue example)."""
    repo.write("clusters/prod/apps.yaml", ks(OTHER="x"))
    repo.write("app/cm.yaml", config_map(r"""
        DIFFICULTY: "${ANUBIS_DIFFICULTY:=\"4\"}"
        PLAIN: ${ANUBIS_DIFFICULTY:=4}
        """))
    [res] = repo.render("flux:flux-system/apps").resources
    data = res.node.to_data()["data"]
    assert data["DIFFICULTY"] == "4"
    assert data["PLAIN"] == 4  # typed as the printed text reads: a number (the schema judges it)


def test_values_are_typed_where_they_land_in_the_text(repo: Repo) -> None:
    """go-yaml v2 reads the substituted text (``YAMLToJSON``): YAML 1.1
    booleans, a ``#`` starts a comment, a multi-line block stays a string."""
    repo.write("clusters/prod/apps.yaml", ks(ENABLED="yes", NOTE="'a #b'", PAIR="'a: b'",
                                             QUOTED="'\"off\"'"))
    repo.write("app/cm.yaml", config_map("""
        enabled: ${ENABLED}
        note: ${NOTE}
        quoted: ${QUOTED}
        script: |
          echo ${PAIR}
          echo done
        """))
    [res] = repo.render("flux:flux-system/apps").resources
    data = res.node.to_data()["data"]
    assert data == {"enabled": True, "note": "a", "quoted": "off", "script": "echo a: b\necho done\n"}


def test_a_value_that_breaks_the_yaml_fails_the_build_at_its_definition(repo: Repo) -> None:
    """A value ``a: b`` in a plain scalar: ``YAMLToJSON`` fails, and so does
    the controller's build ("post build failed")."""
    repo.write("clusters/prod/apps.yaml", ks(PAIR="'a: b'"))
    repo.write("app/cm.yaml", config_map("""
        ok: fine
        pair: ${PAIR}
        """))
    with pytest.raises(BuildError) as e:
        repo.render("flux:flux-system/apps")
    assert e.value.location is not None
    assert (e.value.location.path, e.value.location.line) == ("clusters/prod/apps.yaml", 15)
    assert "invalid YAML" in e.value.message and "app/cm.yaml:7" in e.value.message


def test_provenance_of_a_substituted_value_and_a_key(repo: Repo) -> None:
    """The substituted value points at the variable's line, the ``${VAR}``
    line in its trail; keys are substituted too (the whole text is)."""
    repo.write("clusters/prod/apps.yaml", ks(KEY="region", VALUE="eu-west-1"))
    repo.write("app/cm.yaml", config_map("""
        ${KEY}: ${VALUE}
        untouched: ${VALUE:-x}-suffix
        """))
    [res] = repo.render("flux:flux-system/apps").resources
    data = res.node.mapping("data")
    assert data is not None and data.to_data() == {"region": "eu-west-1", "untouched": "eu-west-1-suffix"}
    value = data.items["region"]
    assert (value.origin.path, value.origin.line) == ("clusters/prod/apps.yaml", 16)
    assert [(o.path, o.line) for o in value.trail] == [("app/cm.yaml", 6)]
    untouched_name = res.node.mapping("metadata").items["name"]  # type: ignore[union-attr]
    assert (untouched_name.origin.path, untouched_name.origin.line) == ("app/cm.yaml", 4)


def test_a_text_broken_only_by_expressions_kept_as_written_is_substituted_value_by_value(repo: Repo) -> None:
    """``${q:='}`` is a quote the controller puts around a value, unless q is
    set in a Secret the repository does not hold: then krmcheck keeps the
    expression as written, the text around it is no YAML, and that is no
    defect. Each value is substituted on its own instead; one still holding
    an unknown expression is not judged, the others are."""
    sync = ks(LIST="'[ { name: a }, { name: b } ]'", NAME="web").replace(
        "  postBuild:\n", "  postBuild:\n    substituteFrom:\n    - kind: Secret\n      name: cluster-vars\n")
    repo.write("clusters/prod/apps.yaml", sync)
    repo.write("app/cm.yaml", config_map("""
        list: ${q:='}${LIST}${q:='}
        name: ${NAME}
        """))
    [res] = repo.render("flux:flux-system/apps").resources
    data = res.node.to_data()["data"]
    assert data == {"list": "${q:='}[ { name: a }, { name: b } ]${q:='}", "name": "web"}
    # with no expression kept as written, the same value landing unquoted still breaks the build
    repo.write("app/cm.yaml", config_map("""
        list: ${LIST}x
        """))
    repo.write("clusters/prod/apps.yaml", ks(LIST="'{ name: a }: b: c'"))
    with pytest.raises(BuildError):
        repo.render("flux:flux-system/apps")
