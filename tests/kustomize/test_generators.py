"""configMapGenerator / secretGenerator: values, provenance, errors, merging.

Expected texts were printed by ``kubectl kustomize`` (Kustomize v5.5.0).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from krmcheck.kustomize.generators import generate, merge_generated
from krmcheck.kustomize.hashing import hashed_name
from krmcheck.resource.errors import BuildError
from krmcheck.resource.files import NONE, ROOT_ONLY, Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.emit import emit, emit_all
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Location, Origin

CM, SECRET = "configMapGenerator", "secretGenerator"
_KIND = {CM: "ConfigMap", SECRET: "Secret"}


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def kustomization(kdir: Path, files: Files) -> Mapping:
    path = kdir / "kustomization.yaml"
    node = load_documents(path.read_text(), files.display(path), "kustomization", duplicate_keys=True)[0]
    assert isinstance(node, Mapping)
    return node


def generate_all(kdir: Path, repo: Path, restrictor: str = ROOT_ONLY) -> list[Resource]:
    """Every generator entry of ``kdir``'s kustomization, in file order."""
    files = Files(repo)
    k = kustomization(kdir, files)
    out = []
    for field in (CM, SECRET):
        for entry in k.sequence(field) or []:
            out.append(generate(_KIND[field], entry, k.get("generatorOptions"), kdir, files, restrictor))
    return out


def one(tmp_path: Path, text: str, restrictor: str = ROOT_ONLY) -> Resource:
    write(tmp_path, "app/kustomization.yaml", text)
    (res,) = generate_all(tmp_path / "app", tmp_path, restrictor)
    return res


def hashed(resources: list[Resource]) -> str:
    for r in resources:
        if r.needs_hash:
            r.set_name(hashed_name(r.name, r), r.node.origin)
    return emit_all([r.node for r in resources])


def data(res: Resource, field: str = "data") -> dict:
    node = res.node.mapping(field)
    assert node is not None
    return node.to_data()


def origin_of(res: Resource, *path: str) -> Origin:
    node = res.field(*path)
    assert node is not None, path
    return node.origin


# --- values -----------------------------------------------------------------------

LITERALS_FILES_ENVS = """\
configMapGenerator:
- name: cm
  literals:
  - x=1
  - y="quoted"
  - z='single'
  - w="mis'
  - v==eq
  - u=
  files:
  - f.txt
  - k2=f.txt
  - bin.dat
  envs:
  - app.env
secretGenerator:
- name: s
  literals:
  - pw=secret
  type: kubernetes.io/tls
  options:
    immutable: true
    labels:
      l: "1"
- name: s2
  literals: []
"""

LITERALS_FILES_ENVS_OUT = """\
apiVersion: v1
binaryData:
  bin.dat: AP/+Ymlu
data:
  A: "1"
  'B ': ' two'
  C: ""
  D: '"q"'
  export E: "5"
  f.txt: |
    hello
    world
  k2: |
    hello
    world
  u: ""
  v: =eq
  w: '"mis'''
  x: "1"
  "y": quoted
  z: single
kind: ConfigMap
metadata:
  name: cm-bf9m98c274
---
apiVersion: v1
data:
  pw: c2VjcmV0
immutable: true
kind: Secret
metadata:
  labels:
    l: "1"
  name: s-5m8htcdmc8
type: kubernetes.io/tls
---
apiVersion: v1
data: {}
kind: Secret
metadata:
  name: s2-46f8b28mk5
type: Opaque
"""


def _literals_files_envs(tmp_path: Path) -> list[Resource]:
    write(tmp_path, "app/kustomization.yaml", LITERALS_FILES_ENVS)
    write(tmp_path, "app/app.env", 'A=1\n# c\n\n  B = two\nC\nD="q"\nexport E=5\n')
    write(tmp_path, "app/f.txt", "hello\nworld\n")
    write(tmp_path, "app/bin.dat", b"\x00\xff\xfebin")
    return generate_all(tmp_path / "app", tmp_path)


def test_output_matches_kubectl(tmp_path: Path) -> None:
    assert hashed(_literals_files_envs(tmp_path)) == LITERALS_FILES_ENVS_OUT


def test_env_key_alone_is_empty_not_read_from_environment(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("C", "from-environment")
    cm = _literals_files_envs(tmp_path)[0]
    assert data(cm)["C"] == ""


def test_env_file_bom_crlf_and_empty_key(tmp_path: Path) -> None:
    write(tmp_path, "app/e.env", b"\xef\xbb\xbfA=1\r\n=ignored\n\xef\xbb\xbfB=2\n\x1cK=v")
    res = one(tmp_path, "configMapGenerator:\n- name: c\n  envs: [e.env]\n")
    # the BOM only goes on the first line; Go's IsSpace does not cover \x1c
    assert data(res) == {"A": "1", "\ufeffB": "2", "\x1cK": "v"}


def test_pair_order_is_envs_then_legacy_env_then_literals_then_files(tmp_path: Path) -> None:
    write(tmp_path, "app/a.env", "K=from-a\n")
    write(tmp_path, "app/b.env", "K=from-b\n")
    with pytest.raises(BuildError) as err:
        one(tmp_path, "configMapGenerator:\n- name: c\n  env: b.env\n  envs: [a.env]\n")
    # the second occurrence is the legacy env file: it is read after envs
    assert err.value.location == Location("app/b.env", 1, 1)


def test_keys_are_not_validated_like_kubectl(tmp_path: Path) -> None:
    res = one(tmp_path, 'configMapGenerator:\n- name: c\n  literals: [a/b=1, "c d=2"]\n')
    assert data(res) == {"a/b": "1", "c d": "2"}


def test_secret_values_are_base64_and_long_ones_wrapped(tmp_path: Path) -> None:
    write(tmp_path, "app/long.txt", "x" * 120)
    res = one(tmp_path, "secretGenerator:\n- name: s\n  files: [long.txt]\n")
    assert emit(res.node) == """\
apiVersion: v1
data:
  long.txt: |
    eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eH
    h4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4
    eHh4eHh4eHh4eHh4eHh4
kind: Secret
metadata:
  name: s
type: Opaque
"""
    assert res.needs_hash


def test_configmap_without_pairs_has_no_data(tmp_path: Path) -> None:
    res = one(tmp_path, "configMapGenerator:\n- name: empty\n")
    assert hashed([res]) == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: empty-6ct58987ht\n"


def test_namespace_and_behavior(tmp_path: Path) -> None:
    res = one(tmp_path, "configMapGenerator:\n- name: c\n  namespace: ns\n  behavior: merge\n")
    assert res.namespace == "ns"
    assert origin_of(res, "metadata", "namespace") == Origin("app/kustomization.yaml", 3, 3, CM)
    assert res.generator is not None
    assert (res.generator.behavior, res.generator.needs_hash) == ("merge", True)
    assert res.generator.origin == Origin("app/kustomization.yaml", 2, 3, CM)


def test_unknown_behavior_acts_as_create_like_kubectl(tmp_path: Path) -> None:
    res = one(tmp_path, "configMapGenerator:\n- name: c\n  behavior: bogus\n")
    assert res.generator is not None and res.generator.behavior == "create"


def test_builtin_plugin_form_takes_metadata_name(tmp_path: Path) -> None:
    res = one(tmp_path, "configMapGenerator:\n- metadata:\n    name: m\n    namespace: ns\n"
                        "  literals: [a=1]\n")
    assert (res.name, res.namespace) == ("m", "ns")
    assert origin_of(res, "metadata", "name") == Origin("app/kustomization.yaml", 3, 5, CM)


# --- options -------------------------------------------------------------------------

OPTIONS = """\
generatorOptions:
  disableNameSuffixHash: true
  labels:
    g: global
    both: global
  annotations:
    ga: x
configMapGenerator:
- name: c
  options:
    immutable: true
    labels:
      both: local
secretGenerator:
- name: s
"""


def test_generator_options_fill_in_and_entry_options_win(tmp_path: Path) -> None:
    write(tmp_path, "app/kustomization.yaml", OPTIONS)
    cm, secret = generate_all(tmp_path / "app", tmp_path)
    assert hashed([cm, secret]) == """\
apiVersion: v1
immutable: true
kind: ConfigMap
metadata:
  annotations:
    ga: x
  labels:
    both: local
    g: global
  name: c
---
apiVersion: v1
data: {}
kind: Secret
metadata:
  annotations:
    ga: x
  labels:
    both: global
    g: global
  name: s
type: Opaque
"""
    assert not cm.needs_hash and not secret.needs_hash
    path = "app/kustomization.yaml"
    assert origin_of(cm, "metadata", "labels", "both") == Origin(path, 13, 7, CM)
    assert origin_of(cm, "metadata", "labels", "g") == Origin(path, 4, 5, CM)
    assert origin_of(cm, "metadata", "annotations", "ga") == Origin(path, 7, 5, CM)
    assert origin_of(cm, "immutable") == Origin(path, 11, 5, CM)
    assert origin_of(secret, "metadata", "labels", "both") == Origin(path, 5, 5, SECRET)


@pytest.mark.parametrize("value, ok", [("yes", False), ("1", False), ("0777", False), ("true", False),
                                       ('"1"', True), ("2020-01-01", True), ("", True)])
def test_label_values_must_be_strings_to_go_yaml_v2(tmp_path: Path, value: str, ok: bool) -> None:
    text = f"configMapGenerator:\n- name: c\n  options:\n    labels:\n      s: {value}\n"
    if ok:
        res = one(tmp_path, text)
        expected = {'"1"': "1", "": ""}.get(value, value)
        assert res.node.to_data()["metadata"]["labels"] == {"s": expected}
    else:
        with pytest.raises(BuildError) as err:
            one(tmp_path, text)
        assert err.value.location == Location("app/kustomization.yaml", 5, 7)


def test_disable_hash_must_be_a_boolean(tmp_path: Path) -> None:
    with pytest.raises(BuildError) as err:
        one(tmp_path, 'configMapGenerator:\n- name: c\n  options:\n    disableNameSuffixHash: "true"\n')
    assert err.value.location == Location("app/kustomization.yaml", 4, 5)


# --- provenance --------------------------------------------------------------------------

def test_provenance_of_name_literals_files_and_env_lines(tmp_path: Path) -> None:
    cm, secret, _ = _literals_files_envs(tmp_path)
    k = "app/kustomization.yaml"
    assert origin_of(cm, "metadata", "name") == Origin(k, 2, 3, CM)
    assert origin_of(cm, "data", "x") == Origin(k, 4, 5, CM)
    assert origin_of(cm, "data", "u") == Origin(k, 9, 5, CM)
    assert origin_of(cm, "data", "k2") == Origin(k, 12, 5, CM)
    assert origin_of(cm, "binaryData", "bin.dat") == Origin(k, 13, 5, CM)
    assert origin_of(cm, "data", "A") == Origin("app/app.env", 1, 1, CM)
    assert origin_of(cm, "data", "B ") == Origin("app/app.env", 4, 1, CM)
    assert origin_of(cm, "data", "export E") == Origin("app/app.env", 7, 1, CM)
    assert origin_of(secret, "data", "pw") == Origin(k, 19, 5, SECRET)
    assert origin_of(secret, "type") == Origin(k, 20, 3, SECRET)
    assert origin_of(secret, "metadata", "labels", "l") == Origin(k, 24, 7, SECRET)


# --- errors ----------------------------------------------------------------------------

def test_missing_file_points_at_its_entry(tmp_path: Path) -> None:
    with pytest.raises(BuildError) as err:
        one(tmp_path, "configMapGenerator:\n- name: c\n  files:\n  - ok=nope.txt\n")
    assert err.value.location == Location("app/kustomization.yaml", 4, 5)
    assert "nope.txt" in str(err.value)


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    write(tmp_path, "app/sub/a", "x")
    with pytest.raises(BuildError) as err:
        one(tmp_path, "configMapGenerator:\n- name: c\n  files: [sub]\n")
    assert "app/sub" in err.value.message and "directory" in err.value.message


def test_duplicate_key_points_at_second_occurrence(tmp_path: Path) -> None:
    with pytest.raises(BuildError) as err:
        one(tmp_path, "secretGenerator:\n- name: s\n  literals:\n  - a=first-secret\n  - a=other\n")
    assert err.value.location == Location("app/kustomization.yaml", 5, 5)
    assert "'a'" in err.value.message
    assert "first-secret" not in str(err.value) and "other" not in str(err.value)


@pytest.mark.parametrize("literal", ["hunter2", "=hunter2"])
def test_bad_secret_literal_never_shows_its_value(tmp_path: Path, literal: str) -> None:
    with pytest.raises(BuildError) as err:
        one(tmp_path, f"secretGenerator:\n- name: s\n  literals:\n  - {literal}\n")
    assert err.value.location == Location("app/kustomization.yaml", 4, 5)
    assert "hunter2" not in str(err.value)


def test_bad_configmap_literal_is_named(tmp_path: Path) -> None:
    with pytest.raises(BuildError) as err:
        one(tmp_path, "configMapGenerator:\n- name: c\n  literals: [novalue]\n")
    assert "novalue" in err.value.message


def test_invalid_utf8_env_line_points_at_the_line_without_content(tmp_path: Path) -> None:
    write(tmp_path, "app/s.env", b"A=1\nB=s3cr\xffet\n")
    with pytest.raises(BuildError) as err:
        one(tmp_path, "secretGenerator:\n- name: s\n  envs: [s.env]\n")
    assert err.value.location == Location("app/s.env", 2, 1)
    assert "s3cr" not in str(err.value)


@pytest.mark.parametrize("source, problem", [("=a.txt", "no key"), ("k=", "no path"),
                                             ("a=b=c", "more than one")])
def test_bad_file_sources(tmp_path: Path, source: str, problem: str) -> None:
    with pytest.raises(BuildError) as err:
        one(tmp_path, f"configMapGenerator:\n- name: c\n  files: ['{source}']\n")
    assert problem in err.value.message


def test_missing_name(tmp_path: Path) -> None:
    with pytest.raises(BuildError) as err:
        one(tmp_path, "configMapGenerator:\n- literals: [a=1]\n")
    assert err.value.location == Location("app/kustomization.yaml", 2, 3)


def test_file_outside_root_is_refused_unless_restrictor_is_none(tmp_path: Path) -> None:
    write(tmp_path, "shared/f.txt", "x")
    text = "configMapGenerator:\n- name: c\n  files:\n  - ../shared/f.txt\n"
    with pytest.raises(BuildError) as err:
        one(tmp_path, text)
    assert err.value.location == Location("app/kustomization.yaml", 4, 5)
    assert "security" in err.value.message
    assert data(one(tmp_path, text, NONE)) == {"f.txt": "x"}


# --- merge and replace --------------------------------------------------------------------

BASE = """\
configMapGenerator:
- name: cm
  literals: [a=1, b=2]
  options:
    labels: {keep: base, over: base}
    annotations: {ba: x}
    immutable: true
- name: nohash
  literals: [a=1]
  options:
    disableNameSuffixHash: true
secretGenerator:
- name: sec
  literals: [a=1]
  type: kubernetes.io/basic-auth
"""

PLAIN = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
  labels: {x: y}
data:
  n: 1
  m: "2"
binaryData:
  bb: AAAA
"""

OVERLAY = """\
configMapGenerator:
- name: cm
  behavior: merge
  literals: [b=3, c=4]
  options:
    labels: {over: ov}
- name: nohash
  behavior: merge
  literals: [c=1]
- name: plain
  behavior: merge
  literals: [z=1]
secretGenerator:
- name: sec
  behavior: replace
  literals: [q=1]
"""

# kubectl kustomize ov (with resources: [../base] and namePrefix p- in the overlay)
MERGED = """\
apiVersion: v1
data:
  a: "1"
  b: "3"
  c: "4"
kind: ConfigMap
metadata:
  annotations:
    ba: x
  labels:
    keep: base
    over: ov
  name: p-cm-fbcmkbc66h
---
apiVersion: v1
data:
  a: "1"
  c: "1"
kind: ConfigMap
metadata:
  name: p-nohash
---
apiVersion: v1
data:
  q: MQ==
kind: Secret
metadata:
  name: p-sec-7kh5h7fb7c
type: Opaque
---
apiVersion: v1
binaryData:
  bb: AAAA
data:
  m: "2"
  "n": "1"
  z: "1"
kind: ConfigMap
metadata:
  labels:
    x: "y"
  name: p-plain
"""


def _merged(tmp_path: Path) -> list[Resource]:
    write(tmp_path, "base/kustomization.yaml", BASE)
    write(tmp_path, "base/plain.yaml", PLAIN)
    write(tmp_path, "ov/kustomization.yaml", OVERLAY)
    existing = generate_all(tmp_path / "base", tmp_path)
    plain = load_documents(PLAIN, "base/plain.yaml")[0]
    assert isinstance(plain, Mapping)
    existing.append(Resource(plain))
    for new in generate_all(tmp_path / "ov", tmp_path):
        (old,) = [r for r in existing if (r.kind, r.name) == (new.kind, new.name)]
        assert new.generator is not None
        merge_generated(old, new, new.generator.behavior)
    for r in existing:
        r.set_name("p-" + r.name, Origin("ov/kustomization.yaml", 1, 1, "namePrefix"))
    return existing


def test_merge_and_replace_match_kubectl(tmp_path: Path) -> None:
    assert hashed(_merged(tmp_path)) == MERGED


def test_merged_keys_keep_their_origins(tmp_path: Path) -> None:
    cm, nohash, secret, plain = _merged(tmp_path)
    assert origin_of(cm, "data", "a") == Origin("base/kustomization.yaml", 3, 14, CM)
    assert origin_of(cm, "data", "b") == Origin("ov/kustomization.yaml", 4, 14, CM)
    assert origin_of(cm, "metadata", "labels", "keep") == Origin("base/kustomization.yaml", 5, 14, CM)
    assert origin_of(cm, "metadata", "labels", "over") == Origin("ov/kustomization.yaml", 6, 14, CM)
    # the name is still the base's, renamed by the prefix
    name = cm.field("metadata", "name")
    assert name is not None and name.origin.by == "namePrefix"
    assert name.trail == (Origin("base/kustomization.yaml", 2, 3, CM),)
    assert cm.node.origin == Origin("ov/kustomization.yaml", 2, 3, CM)
    assert origin_of(plain, "data", "n") == Origin("base/plain.yaml", 7, 3, "resource")
    assert origin_of(secret, "data", "q") == Origin("ov/kustomization.yaml", 16, 14, SECRET)
    # a hash suffix survives a merge only if both sides want one
    assert (cm.needs_hash, nohash.needs_hash, plain.needs_hash) == (True, False, False)


def test_merge_of_empty_secrets_drops_data(tmp_path: Path) -> None:
    write(tmp_path, "base/kustomization.yaml", "secretGenerator:\n- name: s1\n")
    write(tmp_path, "ov/kustomization.yaml", "secretGenerator:\n- name: s1\n  behavior: merge\n")
    (old,) = generate_all(tmp_path / "base", tmp_path)
    (new,) = generate_all(tmp_path / "ov", tmp_path)
    merge_generated(old, new, "merge")
    assert hashed([old]) == "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s1-8226t8dd99\ntype: Opaque\n"


def test_merge_rejects_create(tmp_path: Path) -> None:
    res = one(tmp_path, "configMapGenerator:\n- name: c\n")
    with pytest.raises(ValueError):
        merge_generated(res, res.copy(), "create")


# --- conformance corpus --------------------------------------------------------------------

PROJECT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("KRMCHECK_SHARED", PROJECT.parent / "shared")) / "conformance"
_SUPPORTED = {"configMapGenerator", "secretGenerator", "generatorOptions", "namePrefix", "nameSuffix",
              "resources"}


class _Unsupported(Exception):
    pass


def _build(kdir: Path, files: Files, restrictor: str) -> list[Resource]:
    """Just enough of a build for generator cases: local resources, generators
    with merge/replace, name prefix and suffix."""
    k = kustomization(kdir, files)
    resources: list[Resource] = []
    for item in k.sequence("resources") or []:
        resources.extend(_accumulate(kdir / str(item.to_data()), files, restrictor))
    for field in (CM, SECRET):
        for entry in k.sequence(field) or []:
            _add(resources, generate(_KIND[field], entry, k.get("generatorOptions"), kdir, files,
                                     restrictor))
    prefix, suffix = (str(k.value(f) or "") for f in ("namePrefix", "nameSuffix"))
    for r in resources:
        if prefix or suffix:
            r.remember_id()
            r.set_name(prefix + r.name + suffix, r.node.origin)
    return resources


def _accumulate(path: Path, files: Files, restrictor: str) -> list[Resource]:
    if path.is_dir():
        return _build(path, files, restrictor)
    out = []
    for node in load_documents(path.read_text(), files.display(path)):
        assert isinstance(node, Mapping)
        if node.value("kind") not in ("ConfigMap", "Secret"):
            raise _Unsupported("needs name references")
        out.append(Resource(node))
    return out


def _add(resources: list[Resource], new: Resource) -> None:
    assert new.generator is not None
    matches = [r for r in resources if new.id() in r.all_ids()]
    if new.generator.behavior == "create":
        assert not matches
        resources.append(new)
        return
    (old,) = matches
    merge_generated(old, new, new.generator.behavior)


def _cases() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    found = []
    for meta_path in sorted(CORPUS.glob("*/*/case.yaml")):
        meta = yaml.safe_load(meta_path.read_text())
        features = set(meta.get("features") or [])
        if meta.get("skip_reason") or meta.get("expected") != "expected.yaml":
            continue
        if features & {CM, SECRET} and features <= _SUPPORTED:
            found.append(meta_path.parent)
    return found


def _documents(text: str) -> list[str]:
    return sorted(d for d in re.split(r"^---\n", text, flags=re.M) if d)


@pytest.mark.parametrize("case", _cases(), ids=lambda p: p.name)
def test_conformance_generator_cases(case: Path) -> None:
    meta = yaml.safe_load((case / "case.yaml").read_text())
    restrictor = NONE if any("LoadRestrictionsNone" in a for a in meta.get("kubectl_args") or []) \
        else ROOT_ONLY
    try:
        resources = _build(case / meta["dir"], Files(case), restrictor)
    except _Unsupported as why:
        pytest.skip(str(why))
    for r in resources:
        if r.needs_hash:
            r.set_name(hashed_name(r.name, r), r.node.origin)
    expected = (case / "expected.yaml").read_text()
    assert _documents(emit_all([r.node for r in resources])) == _documents(expected)


def test_corpus_has_generator_cases() -> None:
    if not CORPUS.is_dir():
        pytest.skip("conformance corpus not present")
    assert len(_cases()) >= 10


def test_a_generator_without_a_namespace_merges_into_the_default_namespace_only(tmp_path: Path) -> None:
    # kustomize matches a merge or replace entry by ResId.Equals: no
    # namespace is `default`, and a resource's earlier ids count, so a base
    # ConfigMap its kustomization's `namespace:` moved still matches, while
    # a Secret written in namespace api does not (kubectl: "does not exist;
    # cannot merge or replace")
    from tests.checkrun import check

    write(tmp_path, "moved/base/kustomization.yaml", "namespace: api\nresources: [cm.yaml]\n")
    write(tmp_path, "moved/base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata: {a: b}\n")
    write(tmp_path, "moved/kustomization.yaml", "resources: [base]\nconfigMapGenerator:\n- name: s\n"
                                                "  behavior: merge\n  literals: [c=d]\n")
    write(tmp_path, "written/base/kustomization.yaml", "resources: [secret.yaml]\n")
    write(tmp_path, "written/base/secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
                                                "  namespace: api\n")
    write(tmp_path, "written/kustomization.yaml", "resources: [base]\nnamespace: api\nsecretGenerator:\n"
                                                  "- name: s\n  behavior: replace\n  literals: [a=b]\n")
    run = check(tmp_path)
    assert [(p, v) for p, _, v in run.located("error")] == [("written/kustomization.yaml", "build")]
    [error] = [f for f in run.report["findings"] if f["severity"] == "error"]
    assert error["message"].endswith("no existing Secret 's' to replace")
