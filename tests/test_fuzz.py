"""Property-based fuzzing of krmcheck's promise on hostile input.

Whatever the files of a repository, ``krmcheck [check]`` and ``krmcheck
build DIR`` end with an exit code in {0, 1, 2}, never a Python traceback,
never a hang, never unbounded memory; exit 2 comes with a clear message (a
``path:line:col:`` location, ``krmcheck: error: ...`` or ``Error: ...``), and
an "internal error in krmcheck" (a defect caught at the build boundary) is a
failure too.

Hypothesis generates small repositories: kustomizations using every field
with right and wrong shapes, manifests, patches, generator inputs,
transformer configurations, CRDs, OpenAPI files, ``.krmcheck.yaml``, plus
YAML hazards (anchors, alias fans, tags, deep nesting, merge keys, complex
keys, several documents) and byte hazards (BOM, CRLF, tabs, NUL, invalid
UTF-8, truncation, duplicate lines), symlinks and symlink loops.

Each example runs in a forked child (the parent is never harmed): a time
limit (SIGALRM in the child, SIGKILL from the parent), an address-space
limit, and the child's result (exit code, output, any escaping exception and
any exception the build boundary swallowed) comes back through a pipe.

This file runs a fixed, derandomized budget for CI; ``benchmarks/fuzz.py``
runs the same properties as a long campaign. To reproduce a failure, take the
``files`` literal from the assertion message and call
``write_repo(files, directory)``, then run the command it names there.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")

import yaml  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# --- limits ---------------------------------------------------------------------

TIME_LIMIT = float(os.environ.get("KRMCHECK_FUZZ_TIME_LIMIT", "10"))  # seconds per example
MEMORY_LIMIT = int(os.environ.get("KRMCHECK_FUZZ_MEMORY_MB", "1500")) * 1024 * 1024  # extra address space
OUTPUT_LIMIT = 64 * 1024  # characters of each stream sent back by the child

LOCATION = re.compile(r"[^\s:]+:\d+:\d+: ")
CLEAR = re.compile(r"(^|\n)(krmcheck: error: |krmcheck [a-z-]+: error: |Error: )")

# --- the repository -------------------------------------------------------------

DIRS = ("base", "overlay", "comp", "base/sub", "other")
Symlink = tuple  # ("symlink", target)


def write_repo(files: dict[str, Any], top: Path) -> None:
    """Write ``files`` (path -> bytes, ("symlink", target) or ("dir",)) under ``top``."""
    (top / ".git").mkdir(parents=True, exist_ok=True)  # pins the repository root here
    for rel, content in sorted(files.items(), key=lambda kv: isinstance(kv[1], tuple)):
        path = top / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, tuple) and content[0] == "symlink":
            with contextlib.suppress(FileExistsError):
                os.symlink(content[1], path)
        elif isinstance(content, tuple) and content[0] == "dir":
            path.mkdir(parents=True, exist_ok=True)
        else:
            if path.is_dir():
                continue
            path.write_bytes(content)


def show_repo(files: dict[str, Any], limit: int = 400) -> str:
    """The files for a failure message: readable, and a literal to reproduce from."""
    lines = []
    for rel, content in sorted(files.items()):
        if isinstance(content, tuple):
            lines.append(f"--- {rel}: {content!r}")
            continue
        shown = content if len(content) <= limit else content[:limit] + b"...(%d bytes)" % len(content)
        lines.append(f"--- {rel} ({len(content)} bytes)\n{shown.decode('utf-8', 'backslashreplace')}")
    return "\n".join(lines)


def repo_literal(files: dict[str, Any]) -> str:
    return "{\n" + "".join(f"  {k!r}: {v!r},\n" for k, v in sorted(files.items())) + "}"


# --- values of every shape -------------------------------------------------------

NASTY_STRINGS = [
    "", " ", "~", "null", "Null", "true", "no", "on", "0", "-1", "0x1F", "0o17", "1e400", "-.inf",
    ".nan", "1_000", "08", "2001-12-14", "=", "a=b", "a==b", "=b", "a=", "k=v=w",
    "\x00", "a\x00b", "\t", "\n", "a\nb", "\r\n", "\u2028", "\u0085", "\ufeff", "é", "漢字", "💥",
    "\ud7ff", "x" * 5000, "a" * 253, "a" * 254, "-a", "a-", "A", "a.b", "a_b",
    "../", "..", ".", "./", "/", "//", "/etc/passwd", "~/x", "../../../../../../etc/passwd",
    "*", "?", "[", "[invalid", "(a+)+$", ".*", "a|b", "^$", "\\", "{{ .Values.x }}", "$(VAR)",
    "$(", "$$(VAR)", "%s%s%n", "${HOME}", "{", "}", "#", "# comment", "- a", "a: b", "&a", "*a",
    "!!binary", "https://example.com/x.yaml", "http://[::1", "git@github.com:x/y.git",
    "github.com/org/repo//path?ref=v1", "oci://example.com/x", "file:///etc/passwd",
    "C:\\x", "a/b/c", "app.kubernetes.io/name", "/spec/replicas", "spec.replicas",
    "spec.template.spec.containers.[name=app].image", "spec.containers[0]", "metadata.name",
]
NAMES = ["a", "web", "app", "cm", "x", "a" * 30 + "!", "db", "" , "UPPER", "a.b"]
KINDS_POOL = ["ConfigMap", "Deployment", "Service", "Secret", "Namespace", "Pod", "StatefulSet",
              "CronJob", "Job", "Ingress", "CustomResourceDefinition", "Widget", "List",
              "HorizontalPodAutoscaler", "ServiceAccount", "RoleBinding", "Kustomization", ""]
API_POOL = {"ConfigMap": "v1", "Service": "v1", "Secret": "v1", "Namespace": "v1", "Pod": "v1",
            "ServiceAccount": "v1", "List": "v1", "Deployment": "apps/v1", "StatefulSet": "apps/v1",
            "CronJob": "batch/v1", "Job": "batch/v1", "Ingress": "networking.k8s.io/v1",
            "CustomResourceDefinition": "apiextensions.k8s.io/v1", "Widget": "example.com/v1",
            "HorizontalPodAutoscaler": "autoscaling/v2",
            "RoleBinding": "rbac.authorization.k8s.io/v1",
            "Kustomization": "kustomize.config.k8s.io/v1beta1"}
IMAGES = ["nginx", "nginx:1.25", "nginx:latest", "nginx@sha256:" + "a" * 64, "registry:5000/a/b:1",
          "a:b:c", "", ":", "@", "UPPER/x", "nginx:" + "1" * 200]
FILE_POOL = ["cm.yaml", "deploy.yaml", "svc.yaml", "patch.yaml", "patch.json", "ops.yaml",
             "app.env", "props.txt", "config.yaml", "crd.yaml", "schema.json", "missing.yaml",
             "loop.yaml", "link.yaml", "dangling.yaml", "dir.yaml", "plugin.yaml", "repl.yaml",
             "multi.yaml", "../base/cm.yaml", "../overlay/patch.yaml", "sub/cm.yaml"]
DIR_POOL = ["../base", "../comp", "../overlay", "../other", "sub", "../base/sub", ".", "./", "..",
            "../", "loopdir", "../../", "/", "missing-dir"]
REMOTE = ["https://example.com/x.yaml", "github.com/org/repo//path?ref=v1",
          "https://github.com/org/repo/base?ref=main", "git::https://x/y.git", "ssh://git@x/y"]

_huge_int = st.sampled_from([0, 1, -1, 2**31, 2**63, -(2**63) - 1, 10**30, 2**1024])
_scalar_junk = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), _huge_int,
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from(NASTY_STRINGS),
    st.text(max_size=12),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=("Cs",)),
            max_size=6),
)
_keys = st.one_of(st.sampled_from(["a", "name", "kind", "path", "", "0", "$patch", "<<", "metadata",
                                   "spec", "x" * 300, "\x00", "a.b", "a/b", "é"]),
                  st.text(max_size=6), st.integers(-3, 3), st.none(), st.booleans())
junk = st.recursive(_scalar_junk,
                    lambda inner: st.one_of(st.lists(inner, max_size=3),
                                            st.dictionaries(_keys, inner, max_size=3)),
                    max_leaves=8)


def maybe(good: st.SearchStrategy, bad_odds: int = 5) -> st.SearchStrategy:
    """Usually ``good``, sometimes a value of any shape."""
    return st.one_of(*([good] * bad_odds), junk)


def str_or(pool: list[str], bad_odds: int = 5) -> st.SearchStrategy:
    return maybe(st.sampled_from(pool), bad_odds)


def str_map(keys: list[str] | None = None, vals: list[str] | None = None) -> st.SearchStrategy:
    k = st.sampled_from(keys or ["app", "team", "app.kubernetes.io/name", "a/b/c", "", "x" * 70])
    v = st.one_of(st.sampled_from(vals or ["web", "", "v1", "a b", "x" * 70]), _scalar_junk)
    return maybe(st.dictionaries(k, v, max_size=3))


def entries(pool: st.SearchStrategy, max_size: int = 4) -> st.SearchStrategy:
    return maybe(st.lists(maybe(pool, 8), max_size=max_size))


# --- YAML text: safe_dump, then raw YAML constructs at RAWn tokens --------------

RAW_SNIPPETS = st.one_of(
    st.builds(lambda n: "[" * n + "]" * n, st.integers(1, 400)),
    st.builds(lambda n: "{a: " * n + "1" + "}" * n, st.integers(1, 400)),
    st.builds(lambda n, k: "[" + ", ".join(
        [f"&l0 [{', '.join(['x'] * k)}]"] + [f"&l{i} [{', '.join([f'*l{i-1}'] * k)}]" for i in range(1, n)]) + "]",
        st.integers(1, 5), st.integers(1, 5)),
    st.sampled_from([
        "!!binary notbase64!!", "!!binary aGVsbG8=", "!!binary ''", "!!int 12", "!!int abc",
        "!!float x", "!!bool maybe", "!!null x", "!!str 5", "!!set {a, b}", "!!omap [a: 1, a: 2]",
        "!!timestamp 2001-12-14", "!!python/object:os.system x", "!custom {a: 1}", "!<tag:x> 1",
        "*undefined", "&a 1", "&a [*a]", "{<<: 5}", "{<<: [5, {a: 1}], b: 2}", "{<<: {a: 1}, a: 2}",
        "{? [a, b] : c}", "{[a]: b}", "{{a: 1}: b}", "{a: 1, a: 2}", "{a: 1, A: 2}", "[a, [b, {c: d}]]",
        "|-\n  text", "'it''s'", '"\\x00\\u0000\\U0010FFFF\\N\\_"', '"\\ud800"', "1e999", "-0",
        "0b101", "+12", ".Inf", "0o777", "123456789012345678901234567890", "~", "null", "",
        "\"\"", "[]", "{}", "[,]", "{a}", "? x", "@x", "`x`", "%x", "]", "}", "[", "{",
    ]),
)


def _dump(obj: Any) -> str:
    return yaml.safe_dump(obj, allow_unicode=True, sort_keys=False, width=4096, default_flow_style=False)


@st.composite
def yaml_text(draw: st.DrawFn, docs: st.SearchStrategy) -> str:
    """One or more documents from ``docs`` (already Python values), with raw
    YAML tokens substituted and document-level hazards."""
    n = draw(st.sampled_from([1, 1, 1, 1, 2, 3]))
    parts = [draw(docs) for _ in range(n)]
    texts = []
    for p in parts:
        texts.append(p if isinstance(p, str) else _dump(p))
    text = "---\n".join(texts)
    # raw YAML constructs where the generators left RAW tokens
    def sub(m: re.Match[str]) -> str:
        return draw(RAW_SNIPPETS).replace("\n", "\n" + " " * 4)
    text = re.sub(r"RAWTOKEN", sub, text)
    prefix = draw(st.sampled_from(["", "", "", "", "---\n", "%YAML 1.1\n---\n", "%YAML 1.2\n---\n",
                                   "%TAG !e! tag:example.com,2000:\n---\n", "# comment\n",
                                   "--- |\n  literal\n---\n", "...\n", "%YAML 9.9\n---\n"]))
    suffix = draw(st.sampled_from(["", "", "", "", "---\n", "...\n", "---\n...\n", "\n\n\n", "--- \n---\n"]))
    return prefix + text + suffix


raw_token = st.just("RAWTOKEN")
leaf = st.one_of(*([_scalar_junk] * 6), raw_token)


# --- manifests ----------------------------------------------------------------------

@st.composite
def k8s_object(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 25)) == 0:
        return draw(junk)
    kind = draw(str_or(KINDS_POOL, 12))
    api = API_POOL.get(kind, "v1") if isinstance(kind, str) else "v1"
    obj: dict[Any, Any] = {"apiVersion": draw(maybe(st.sampled_from([api, api, "v1", "", "x/y/z", "builtin"]), 12)),
                           "kind": kind}
    meta: dict[Any, Any] = {"name": draw(str_or(NAMES, 8))}
    if draw(st.booleans()):
        meta["namespace"] = draw(str_or(["ns", "default", "", "kube-system", "UPPER"]))
    if draw(st.booleans()):
        meta["labels"] = draw(str_map())
    if draw(st.booleans()):
        meta["annotations"] = draw(str_map(["config.kubernetes.io/local-config", "a", "krmcheck.io/ignore",
                                            "kustomize.config.k8s.io/behavior",
                                            "kustomize.config.k8s.io/needs-hash",
                                            "config.kubernetes.io/index"],
                                           ["true", "merge", "replace", "", "schema", "1"]))
    if draw(st.integers(0, 4)) == 0:
        meta["generateName"] = draw(str_or(NAMES))
    obj["metadata"] = draw(maybe(st.just(meta), 15))
    container = {"name": draw(str_or(["app", "side", ""])), "image": draw(str_or(IMAGES, 8))}
    if draw(st.booleans()):
        container["env"] = draw(maybe(st.lists(st.fixed_dictionaries(
            {"name": str_or(["A", "B"]), "value": str_or(["$(VAR)", "$(WEB_NAME)", "x", "$(A)"])}), max_size=2)))
    if draw(st.booleans()):
        container["ports"] = draw(maybe(st.lists(st.fixed_dictionaries(
            {"containerPort": maybe(st.sampled_from([80, 0, 70000, "80"])),
             "protocol": str_or(["TCP", "tcp"])}), max_size=2)))
    pod = {"containers": draw(maybe(st.lists(st.just(container), max_size=2), 8))}
    if kind == "ConfigMap" or kind == "Secret":
        obj["data"] = draw(maybe(st.dictionaries(st.sampled_from(["a", "b", "k.txt", ""]),
                                                 st.one_of(st.sampled_from(["aGVsbG8=", "!!!", "", "$(VAR)"]), leaf),
                                                 max_size=3)))
    elif kind == "CustomResourceDefinition":
        obj["spec"] = draw(maybe(st.fixed_dictionaries({
            "group": str_or(["example.com", ""]),
            "names": maybe(st.fixed_dictionaries({"kind": str_or(["Widget", ""]), "plural": str_or(["widgets"])})),
            "scope": str_or(["Namespaced", "Cluster"]),
            "versions": maybe(st.lists(st.fixed_dictionaries({
                "name": str_or(["v1"]), "served": maybe(st.just(True)), "storage": maybe(st.just(True)),
                "schema": maybe(st.just({"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-validations": [
                        {"rule": "self.size > 1", "message": "x"}, {"rule": "self.(("}],
                        "properties": {"size": {"type": "integer", "maximum": 3}}}}}}))}),
                max_size=2))}), 8))
    elif kind == "List":
        obj["items"] = draw(maybe(st.lists(st.just({"apiVersion": "v1", "kind": "ConfigMap",
                                                     "metadata": {"name": draw(str_or(NAMES))}}), max_size=2)))
    elif kind == "Pod":
        obj["spec"] = draw(maybe(st.just(pod)))
    elif kind == "Service":
        obj["spec"] = draw(maybe(st.fixed_dictionaries({
            "selector": str_map(), "ports": maybe(st.lists(st.fixed_dictionaries({"port": maybe(st.just(80))}), max_size=2))})))
    elif kind == "Widget":
        obj["spec"] = draw(maybe(st.fixed_dictionaries({"size": maybe(st.sampled_from([1, 5, "x"]))})))
    else:
        obj["spec"] = draw(maybe(st.fixed_dictionaries({
            "replicas": maybe(st.sampled_from([1, 3, 0, -1, "2", 2**63])),
            "selector": maybe(st.just({"matchLabels": {"app": "web"}})),
            "template": maybe(st.fixed_dictionaries({"metadata": maybe(st.just({"labels": {"app": "web"}})),
                                                     "spec": maybe(st.just(pod))})),
            "jobTemplate": maybe(st.just({"spec": {"template": {"spec": pod}}}), 1),
        }), 8))
    if draw(st.integers(0, 6)) == 0:
        obj[draw(_keys)] = draw(leaf)
    return obj


# --- kustomization fields -------------------------------------------------------------

selector = maybe(st.fixed_dictionaries({}, optional={
    "group": str_or(["apps", "", "example.com"]), "version": str_or(["v1", ""]),
    "kind": str_or(KINDS_POOL + ["Deploy.*", "(a+)+$", "[invalid"]),
    "name": str_or(NAMES + ["(a+)+$", "[invalid", ".*", "a|web", "^a$", "(?P<x>a)", "a{99999}", "\\"]),
    "namespace": str_or(["ns", "", "[x"]),
    "labelSelector": str_or(["app=web", "app in (web,db)", "!app", "app!=x", "!!!", "a,,b", "=",
                             "app notin ()", "a" * 70 + "=b", "app=web,team"]),
    "annotationSelector": str_or(["a=b", "!!!", "x in (", ""]),
}))

json_ops = st.lists(maybe(st.fixed_dictionaries({
    "op": str_or(["add", "remove", "replace", "move", "copy", "test", "ADD", ""]),
    "path": str_or(["/spec/replicas", "/metadata/name", "", "/", "/a~2b", "/a~1b~0", "/spec/template/spec/containers/-",
                    "/spec/template/spec/containers/99", "/spec/template/spec/containers/-1",
                    "/data/x", "/metadata/labels/a~1b", "spec", "/spec/template/spec/containers/0/image",
                    "/spec/template/spec/containers/01", "/metadata/namespace", "/kind"]),
}, optional={"value": leaf, "from": str_or(["/metadata/name", "/spec", "/spec/replicas/x", "/"])}), 10),
    max_size=3)


@st.composite
def smp_patch(draw: st.DrawFn) -> Any:
    kind = draw(str_or(["Deployment", "ConfigMap", "Service", "Widget", "Secret"], 8))
    obj: dict[Any, Any] = {"apiVersion": API_POOL.get(kind, "v1") if isinstance(kind, str) else "v1", "kind": kind,
                           "metadata": draw(maybe(st.fixed_dictionaries({"name": str_or(NAMES, 8)})))}
    if draw(st.booleans()):
        obj["$patch"] = draw(str_or(["delete", "replace", "merge", "x"]))
    if kind == "ConfigMap":
        obj["data"] = draw(maybe(st.dictionaries(st.sampled_from(["a", "b", "$patch"]), leaf, max_size=2)))
    else:
        container = draw(st.fixed_dictionaries({"name": str_or(["app", "new"])}, optional={
            "image": str_or(IMAGES), "$patch": str_or(["delete", "replace"]),
            "env": maybe(st.lists(st.fixed_dictionaries({"name": str_or(["A"]), "value": leaf}), max_size=2))}))
        spec: dict[Any, Any] = {"template": {"spec": {"containers": draw(maybe(st.lists(st.just(container), max_size=2)))}}}
        if draw(st.booleans()):
            spec["replicas"] = draw(leaf)
        if draw(st.booleans()):
            spec["$retainKeys"] = draw(maybe(st.just(["replicas"])))
        if draw(st.booleans()):
            spec["template"]["spec"]["$setElementOrder/containers"] = draw(maybe(st.just([{"name": "app"}])))
        obj["spec"] = draw(maybe(st.just(spec), 8))
    return obj


def inline_text(docs: st.SearchStrategy) -> st.SearchStrategy:
    return yaml_text(docs)


patch_entry = st.fixed_dictionaries({}, optional={
    "path": str_or(["patch.yaml", "patch.json", "ops.yaml", "missing.yaml", "../overlay/patch.yaml", "loop.yaml",
                    "dir.yaml", "multi.yaml"]),
    "patch": maybe(st.one_of(inline_text(smp_patch()), st.builds(json.dumps, json_ops),
                             inline_text(json_ops), st.sampled_from(["", "[]", "{}", "- 1", "null", "---\n---\n"]))),
    "target": selector,
    "options": maybe(st.fixed_dictionaries({}, optional={"allowNameChange": maybe(st.booleans()),
                                                         "allowKindChange": maybe(st.booleans())})),
})

gen_entry_fields = {
    "name": str_or(NAMES),
    "namespace": str_or(["ns", ""]),
    "behavior": str_or(["create", "merge", "replace", "", "unknown"]),
    "literals": entries(st.sampled_from(["k=v", "k", "=v", "k==", "k=", "a.b=c", "é=ü", "k=\x00", "x" * 300 + "=y",
                                         "k=v\nw", " k = v ", "k=" + "v" * 5000])),
    "files": entries(st.sampled_from(["props.txt", "key=props.txt", "=props.txt", "k=", "missing.txt", "app.env",
                                      "../base/cm.yaml", "dir.yaml", "loop.yaml", "dangling.yaml", "/etc/hostname",
                                      "bin.dat", "a=b=props.txt"])),
    "envs": entries(st.sampled_from(["app.env", "props.txt", "missing.env", "bin.dat", "loop.yaml", "dir.yaml"])),
    "env": str_or(["app.env", "missing.env"]),
    "options": maybe(st.fixed_dictionaries({}, optional={
        "disableNameSuffixHash": maybe(st.booleans()), "labels": str_map(), "annotations": str_map(),
        "immutable": maybe(st.booleans())})),
}
configmap_gen = entries(st.fixed_dictionaries({}, optional=gen_entry_fields), 3)
secret_gen = entries(st.fixed_dictionaries({}, optional={
    **gen_entry_fields, "type": str_or(["Opaque", "kubernetes.io/tls", "", "kubernetes.io/dockerconfigjson"])}), 3)

replacement = st.fixed_dictionaries({}, optional={
    "path": str_or(["repl.yaml", "missing.yaml", "cm.yaml"]),
    "source": maybe(st.fixed_dictionaries({}, optional={
        "kind": str_or(KINDS_POOL), "name": str_or(NAMES), "group": str_or(["apps", ""]),
        "version": str_or(["v1"]), "namespace": str_or(["ns"]),
        "fieldPath": str_or(["metadata.name", "spec.replicas", "data.a", "spec.template.spec.containers.[name=app].image",
                             "spec.containers[0]", "", "a..b", "[", "spec.template.spec.containers.0.image",
                             "metadata.labels.[app=web]", "data.*"]),
        "options": maybe(st.fixed_dictionaries({}, optional={
            "delimiter": str_or([":", "", "/"]), "index": maybe(st.sampled_from([0, 1, -1, 99, 2**64])),
            "create": maybe(st.booleans()), "encoding": str_or(["base64", "x"])}))})),
    "targets": maybe(st.lists(maybe(st.fixed_dictionaries({}, optional={
        "select": selector, "reject": maybe(st.lists(selector, max_size=2)),
        "fieldPaths": entries(st.sampled_from(["metadata.name", "spec.replicas", "data.b", "metadata.annotations.x",
                                               "spec.template.spec.containers.[name=app].image", "*", "",
                                               "spec.template.spec.containers.[name=].image", "a.b.c.d.e",
                                               "metadata.labels.[a=b]", "spec.ports.0.port", "spec.x.-"])),
        "options": maybe(st.fixed_dictionaries({}, optional={
            "delimiter": str_or([":", ""]), "index": maybe(st.sampled_from([0, 1, -1, 99])),
            "create": maybe(st.booleans())}))})), max_size=2)),
})

var_entry = st.fixed_dictionaries({}, optional={
    "name": str_or(["VAR", "WEB_NAME", "A", ""]),
    "objref": maybe(st.fixed_dictionaries({}, optional={
        "kind": str_or(KINDS_POOL), "name": str_or(NAMES), "apiVersion": str_or(["v1", "apps/v1"])})),
    "fieldref": maybe(st.fixed_dictionaries({}, optional={
        "fieldpath": str_or(["metadata.name", "spec.replicas", "data.a", "", "spec.template.spec.containers[0].image",
                             "metadata.labels.app", "a[", "spec.ports[99].port"])})),
})

label_entry = st.fixed_dictionaries({}, optional={
    "pairs": str_map(), "includeSelectors": maybe(st.booleans()), "includeTemplates": maybe(st.booleans()),
    "fields": maybe(st.lists(st.fixed_dictionaries({}, optional={
        "kind": str_or(KINDS_POOL), "path": str_or(["metadata/labels", "spec/selector", "", "spec/x/y"]),
        "create": maybe(st.booleans())}), max_size=2)),
})

image_entry = st.fixed_dictionaries({}, optional={
    "name": str_or(["nginx", "registry:5000/a/b", "*", "", "UPPER/x"]),
    "newName": str_or(["my/nginx", "", "a:b", "x" * 300]),
    "newTag": maybe(st.one_of(st.sampled_from(["1.0", "latest", "", "a b", "v1@x"]), st.floats(), st.integers())),
    "digest": str_or(["sha256:" + "b" * 64, "sha256:short", ""]),
    "tagSuffix": str_or(["-debug", ""]),
})

replica_entry = st.fixed_dictionaries({}, optional={
    "name": str_or(NAMES), "count": maybe(st.sampled_from([0, 1, 5, -1, "3", 2**63, 2**200, 1.5]))})

sort_options = maybe(st.fixed_dictionaries({}, optional={
    "order": str_or(["legacy", "fifo", "", "random"]),
    "legacySortOptions": maybe(st.fixed_dictionaries({}, optional={
        "orderFirst": entries(st.sampled_from(KINDS_POOL)), "orderLast": entries(st.sampled_from(KINDS_POOL))})),
}))

build_metadata = entries(st.sampled_from(["managedByLabel", "originAnnotations", "transformerAnnotations", "x", ""]))

helm_chart = st.fixed_dictionaries({}, optional={
    "name": str_or(["chart"]), "repo": str_or(["https://example.com/charts"]), "version": str_or(["1.0"]),
    "releaseName": str_or(["r"]), "valuesFile": str_or(["values.yaml", "missing.yaml"]),
    "valuesInline": maybe(st.just({"a": 1})), "includeCRDs": maybe(st.booleans())})

KUSTOMIZATION_FIELDS: dict[str, st.SearchStrategy] = {
    "resources": entries(st.sampled_from(FILE_POOL + DIR_POOL + REMOTE + ["x" * 5000, "a\x00b", "", "cm.yaml\n"]), 6),
    "bases": entries(st.sampled_from(DIR_POOL)),
    "components": entries(st.sampled_from(["../comp", "../base", "../overlay", ".", "cm.yaml", "missing", "../comp/"])),
    "namePrefix": str_or(["p-", "", "UPPER-", "x" * 300, "a/"]),
    "nameSuffix": str_or(["-s", "", "-" + "y" * 300]),
    "namespace": str_or(["ns", "", "kube-system", "UPPER", "a" * 64]),
    "commonLabels": str_map(),
    "labels": entries(label_entry, 2),
    "commonAnnotations": str_map(),
    "images": entries(image_entry, 3),
    "imageTags": entries(image_entry, 2),
    "replicas": entries(replica_entry, 3),
    "patches": entries(patch_entry, 3),
    "patchesStrategicMerge": entries(st.one_of(st.sampled_from(["patch.yaml", "missing.yaml", "patch.json", "multi.yaml",
                                                                "loop.yaml", "dir.yaml", "../overlay/patch.yaml"]),
                                               inline_text(smp_patch())), 3),
    "patchesJson6902": entries(st.fixed_dictionaries({}, optional={
        "target": selector, "path": str_or(["ops.yaml", "patch.json", "missing.yaml", "patch.yaml"]),
        "patch": maybe(st.one_of(inline_text(json_ops), st.builds(json.dumps, json_ops)))}), 2),
    "configMapGenerator": configmap_gen,
    "secretGenerator": secret_gen,
    "generatorOptions": maybe(st.fixed_dictionaries({}, optional={
        "disableNameSuffixHash": maybe(st.booleans()), "labels": str_map(), "annotations": str_map(),
        "immutable": maybe(st.booleans())})),
    "vars": entries(var_entry, 3),
    "replacements": entries(replacement, 2),
    "configurations": entries(st.sampled_from(["config.yaml", "missing.yaml", "cm.yaml", "loop.yaml"])),
    "crds": entries(st.sampled_from(["crd.yaml", "schema.json", "missing.json", "cm.yaml"])),
    "openapi": maybe(st.fixed_dictionaries({}, optional={
        "path": str_or(["schema.json", "missing.json", "crd.yaml", "cm.yaml"]), "version": str_or(["v1.21", "x"])})),
    "sortOptions": sort_options,
    "buildMetadata": build_metadata,
    "generators": entries(st.sampled_from(["plugin.yaml", "missing.yaml", "cm.yaml", "../base"])),
    "transformers": entries(st.one_of(st.sampled_from(["plugin.yaml", "missing.yaml", "../comp"]),
                                      inline_text(st.just({"apiVersion": "builtin", "kind": "PrefixSuffixTransformer",
                                                           "metadata": {"name": "t"}, "prefix": "z-",
                                                           "fieldSpecs": [{"path": "metadata/name"}]})))),
    "validators": entries(st.sampled_from(["plugin.yaml"])),
    "helmCharts": entries(helm_chart, 1),
    "helmGlobals": maybe(st.fixed_dictionaries({}, optional={"chartHome": str_or(["charts", "/"])})),
    "metadata": maybe(st.fixed_dictionaries({}, optional={"name": str_or(NAMES), "annotations": str_map()})),
    "inventory": junk,
    "catalogs": entries(st.sampled_from(["catalog.yaml", "missing.yaml"])),
    "unknownField": junk,
    "Resources": entries(st.sampled_from(["cm.yaml"])),  # a case-insensitive spelling
}


@st.composite
def kustomization(draw: st.DrawFn) -> Any:
    roll = draw(st.integers(0, 40))
    if roll == 0:
        return draw(junk)  # not a map at all
    if roll == 1:  # every field null, as people leave them
        return {f: None for f in draw(st.lists(st.sampled_from(sorted(KUSTOMIZATION_FIELDS)), min_size=1, max_size=8))}
    k: dict[Any, Any] = {}
    if draw(st.integers(0, 3)):
        k["apiVersion"] = draw(str_or(["kustomize.config.k8s.io/v1beta1", "kustomize.config.k8s.io/v1alpha1", "v1"]))
        k["kind"] = draw(str_or(["Kustomization", "Component", "Kustomization", "Other"]))
    # a handful of fields, weighted to the common ones
    common = ["resources", "resources", "resources", "patches", "configMapGenerator", "images", "namePrefix",
              "namespace", "commonLabels", "components", "replacements", "secretGenerator", "bases"]
    chosen = draw(st.lists(st.sampled_from(common + sorted(KUSTOMIZATION_FIELDS)), min_size=1, max_size=6, unique=True))
    for name in chosen:
        k[name] = draw(st.one_of(KUSTOMIZATION_FIELDS[name], st.none()) if draw(st.integers(0, 15)) == 0
                       else KUSTOMIZATION_FIELDS[name])
    return k


# --- other files ----------------------------------------------------------------------

transformer_config = maybe(st.fixed_dictionaries({}, optional={
    "nameReference": maybe(st.lists(st.fixed_dictionaries({}, optional={
        "kind": str_or(KINDS_POOL), "version": str_or(["v1"]),
        "fieldSpecs": maybe(st.lists(st.fixed_dictionaries({}, optional={
            "path": str_or(["spec/configMapRef/name", "spec/x", "", "//"]), "kind": str_or(KINDS_POOL),
            "create": maybe(st.booleans())}), max_size=2))}), max_size=2)),
    "commonLabels": maybe(st.lists(st.fixed_dictionaries({}, optional={
        "path": str_or(["spec/x/labels", "metadata/labels", "", "a/[]/b"]), "create": maybe(st.booleans()),
        "kind": str_or(KINDS_POOL)}), max_size=2)),
    "namePrefix": maybe(st.lists(st.fixed_dictionaries({"path": str_or(["metadata/name", "spec/x"])}), max_size=1)),
    "images": maybe(st.lists(st.fixed_dictionaries({"path": str_or(["spec/image", "spec/containers[]/image"])}), max_size=1)),
    "varReference": maybe(st.lists(st.fixed_dictionaries({"path": str_or(["spec/x", "data"]),
                                                          "kind": str_or(KINDS_POOL)}), max_size=1)),
    "namespace": maybe(st.lists(st.fixed_dictionaries({"path": str_or(["spec/ns"]), "create": maybe(st.booleans())}), max_size=1)),
}), 6)

openapi_doc = maybe(st.fixed_dictionaries({
    "definitions": maybe(st.dictionaries(st.sampled_from(["com.example.v1.Widget", "io.k8s.api.apps.v1.Deployment", ""]),
                                         maybe(st.fixed_dictionaries({}, optional={
                                             "type": str_or(["object", "array"]),
                                             "properties": maybe(st.just({"spec": {"$ref": "#/definitions/x"}})),
                                             "x-kubernetes-group-version-kind": maybe(st.just(
                                                 [{"group": "example.com", "version": "v1", "kind": "Widget"}])),
                                             "x-kubernetes-patch-merge-key": str_or(["name"]),
                                             "x-kubernetes-patch-strategy": str_or(["merge", "retainKeys"])})),
                                         max_size=2))}), 6)

plugin_config = st.one_of(
    st.fixed_dictionaries({"apiVersion": str_or(["builtin", "example.com/v1"]),
                           "kind": str_or(["PrefixSuffixTransformer", "LabelTransformer", "ConfigMapGenerator",
                                           "PatchTransformer", "ImageTagTransformer", "NamespaceTransformer",
                                           "ReplicaCountTransformer", "HashTransformer", "Unknown"]),
                           "metadata": maybe(st.fixed_dictionaries({"name": str_or(NAMES)}, optional={
                               "annotations": maybe(st.just({"config.kubernetes.io/function":
                                                             "exec:\n  path: ./nonexistent"}))}))},
                          optional={"prefix": str_or(["z-"]), "labels": str_map(), "fieldSpecs": junk,
                                    "literals": entries(st.sampled_from(["a=b"])), "patch": str_or(["{}"]),
                                    "target": selector, "imageTag": junk, "namespace": str_or(["ns"]),
                                    "replica": junk}),
    junk)

krmcheck_config = maybe(st.fixed_dictionaries({}, optional={
    "fail-on": str_or(["error", "warning", "info", "never", "x"]),
    "kubernetes-version": str_or(["1.30", "1.99", "x"]),
    "strict": maybe(st.booleans()),
    "require-schemas": maybe(st.booleans()),
    "require-network": maybe(st.booleans()),
    "load-restrictor": str_or(["LoadRestrictionsNone", "LoadRestrictionsRootOnly", "x"]),
    "validators": maybe(st.dictionaries(st.sampled_from(["schema", "image-tag", "metadata", "unknown", "",
                                                         "workload", "reference", "api-version", "duplicate",
                                                         "remote"]),
                                        maybe(st.one_of(st.booleans(), st.fixed_dictionaries({}, optional={
                                            "enabled": maybe(st.booleans()),
                                            "severity": str_or(["error", "warning", "info", "x"])}))),
                                        max_size=2)),
    "exclude": entries(st.sampled_from(["base", "*", "!base", "**/x", "[", "/", "overlay/", "\\"])),
    "overrides": maybe(st.lists(maybe(st.fixed_dictionaries({
        "paths": entries(st.sampled_from(["base/**", "[", "*"]))}, optional={
        "validators": maybe(st.just({"image-tag": {"severity": "info"}})),
        "load-restrictor": str_or(["LoadRestrictionsNone", "LoadRestrictionsRootOnly", "x"])})),
        max_size=2)),
    "schema-locations": entries(st.sampled_from(["schemas", "{{.Group}}/{{.ResourceKind}}.json", "{{.Bad",
                                                 "https://example.com/{{.ResourceKind}}.json", "/"])),
    "baseline": str_or(["baseline.json", "missing.json", "cm.yaml"]),
    "kptfile-validators": maybe(st.booleans()),
    "trusted-catalogs": entries(st.sampled_from(["catalog.yaml", "missing.yaml"])),
    "provided": maybe(st.lists(maybe(st.fixed_dictionaries({"kind": str_or(["Secret", "*"])},
                                                          optional={"name": str_or(["*", "[", "x-*"])})),
                               max_size=2)),
    "clusters": maybe(st.dictionaries(st.sampled_from(["prod", ""]), entries(st.sampled_from(["*", "base", "["])),
                                      max_size=2)),
    "gitops": maybe(st.fixed_dictionaries({}, optional={
        "enabled": maybe(st.booleans()), "repo-urls": entries(st.sampled_from(["https://example.com/org/repo", ""])),
        "source-root": str_or([".", "..", "/", "base"])})),
    "substitute": maybe(st.dictionaries(st.sampled_from(["**", "base/*", "["]),
                                        maybe(st.dictionaries(st.sampled_from(["NAME", "X"]), leaf, max_size=2)),
                                        max_size=2)),
    "placeholders": str_or(["skip", "check", "x"]),
}))


# --- byte-level hazards ----------------------------------------------------------------

@st.composite
def mutate_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """Usually the bytes as they are; sometimes one or two byte-level hazards."""
    for _ in range(draw(st.sampled_from([0, 0, 0, 0, 0, 1, 1, 2]))):
        how = draw(st.sampled_from(["bom", "crlf", "cr", "tabs", "nul", "invalid", "truncate", "dupline",
                                    "empty", "ws", "utf16", "control", "nobreak", "trailing-nul", "bom-twice"]))
        pos = draw(st.integers(0, max(len(data), 0)))
        if how == "bom":
            data = b"\xef\xbb\xbf" + data
        elif how == "bom-twice":
            data = b"\xef\xbb\xbf\xef\xbb\xbf" + data
        elif how == "crlf":
            data = data.replace(b"\n", b"\r\n")
        elif how == "cr":
            data = data.replace(b"\n", b"\r")
        elif how == "tabs":
            data = re.sub(rb"(?m)^  ", b"\t", data)
        elif how == "nul":
            data = data[:pos] + b"\x00" + data[pos:]
        elif how == "trailing-nul":
            data = data + b"\x00"
        elif how == "invalid":
            data = data[:pos] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80\x80",
                                                      b"\xf4\x90\x80\x80", b"\xc0\xaf"])) + data[pos:]
        elif how == "truncate":
            data = data[:pos]
        elif how == "dupline":
            lines = data.split(b"\n")
            i = draw(st.integers(0, max(len(lines) - 1, 0)))
            lines.insert(i, lines[i])
            data = b"\n".join(lines)
        elif how == "empty":
            data = b""
        elif how == "ws":
            data = draw(st.sampled_from([b" ", b"\n", b"\t", b"---", b"--- ", b"...", b"#", b"\r\n", b"~", b"{}",
                                         b"[]", b"null", b"''", b"0"]))
        elif how == "utf16":
            data = data.decode("utf-8", "replace").encode("utf-16")
        elif how == "control":
            data = data[:pos] + draw(st.sampled_from([b"\x1b", b"\x07", b"\x7f", b"\xc2\x85", b"\xe2\x80\xa8",
                                                      b"\xef\xbf\xbe", b"\xef\xbf\xbf"])) + data[pos:]
        elif how == "nobreak":
            data = data.rstrip(b"\n")
    return data


# --- whole repositories ------------------------------------------------------------------

PLACEHOLDERS = ["${NAME}", "${REPLICAS}", "${X:=d}", "${X:-}", "$${ESC}", "${", "${1BAD}", "${A/b/c}",
                "${#NAME}", "${NAME^^}", "${NAME:1:2}", "prefix-${NAME}-suffix", "${UNDEFINED}"]
flux_path = str_or(["./base", "./overlay", "base", "overlay/", "../../overlay", "/", "", "./comp",
                    "./${NAME}", "nowhere", "base/cm.yaml", "./other\x00"], 6)


@st.composite
def flux_objects(draw: st.DrawFn) -> list[Any]:
    """A flux-system GitRepository, Flux Kustomizations over the example's
    directories (every field, right and wrong shapes) and the ConfigMap of
    their variables; and an Argo CD Application."""
    docs: list[Any] = [{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
                        "metadata": {"name": "flux-system", "namespace": "flux-system"},
                        "spec": {"url": "ssh://git@example.com/org/repo"}}]
    for i in range(draw(st.integers(1, 3))):
        spec: dict[Any, Any] = {"path": draw(flux_path),
                                "sourceRef": draw(st.one_of(st.just({"kind": "GitRepository", "name": "flux-system"}),
                                                            junk))}
        optional = {
            "targetNamespace": str_or(["apps", "Bad_NS", ""]), "namePrefix": str_or(["p-"]),
            "nameSuffix": str_or(["-s"]), "components": st.lists(str_or(["../comp", "comp", "x"]), max_size=2),
            "images": st.lists(st.fixed_dictionaries({"name": str_or(IMAGES)}, optional={
                "newTag": leaf, "newName": str_or(["x"]), "digest": str_or(["sha256:" + "a" * 64])}), max_size=2),
            "patches": st.lists(st.fixed_dictionaries({"patch": st.one_of(
                smp_patch().map(lambda o: yaml.safe_dump(o)), junk)}, optional={"target": junk}), max_size=2),
            "commonMetadata": st.fixed_dictionaries({}, optional={
                "labels": st.dictionaries(st.sampled_from(["team", ""]), leaf, max_size=2), "annotations": junk}),
            "postBuild": st.fixed_dictionaries({}, optional={
                "substitute": st.one_of(st.dictionaries(st.sampled_from(["NAME", "REPLICAS", "X", "1BAD"]),
                                                        st.one_of(leaf, str_or(PLACEHOLDERS)), max_size=3), junk),
                "substituteFrom": st.lists(st.fixed_dictionaries(
                    {"kind": str_or(["ConfigMap", "Secret"]), "name": str_or(["vars", "missing"])},
                    optional={"optional": st.booleans()}), max_size=2)}),
        }
        for key, strategy in optional.items():
            if draw(st.booleans()):
                spec[key] = draw(strategy)
        docs.append({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                     "metadata": {"name": f"k{i}", "namespace": "flux-system"}, "spec": spec})
    docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "vars", "namespace": "flux-system"},
                 "data": draw(maybe(st.dictionaries(st.sampled_from(["NAME", "REPLICAS", "1BAD"]),
                                                    str_or(["web", "3", "${NAME}"]), max_size=3)))})
    if draw(st.booleans()):
        docs.append({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                     "metadata": {"name": "app", "namespace": "argocd"},
                     "spec": {"source": {"repoURL": "https://example.com/org/repo", "path": draw(flux_path),
                                         "kustomize": draw(maybe(st.fixed_dictionaries({}, optional={
                                             "namePrefix": str_or(["a-"]), "images": st.lists(leaf, max_size=2),
                                             "replicas": junk, "patches": junk, "commonLabels": junk})))}}})
    return docs


@st.composite
def repos(draw: st.DrawFn) -> dict[str, Any]:
    files: dict[str, Any] = {}

    def text(rel: str, strategy: st.SearchStrategy) -> None:
        files[rel] = draw(mutate_bytes(draw(yaml_text(strategy)).encode("utf-8", "surrogatepass")))

    kdirs = draw(st.lists(st.sampled_from(DIRS), min_size=1, max_size=4, unique=True))
    for d in kdirs:
        name = draw(st.sampled_from(["kustomization.yaml"] * 6 + ["kustomization.yml", "Kustomization"]))
        text(f"{d}/{name}", kustomization())
        if draw(st.integers(0, 30)) == 0:  # two kustomization files in one directory
            text(f"{d}/kustomization.yml", kustomization())
    # the files kustomizations name, in the directories that have them
    for d in draw(st.lists(st.sampled_from(DIRS), min_size=1, max_size=3, unique=True)) + ["base"]:
        for rel in draw(st.lists(st.sampled_from(["cm.yaml", "deploy.yaml", "svc.yaml", "multi.yaml"]),
                                 max_size=3, unique=True)) or ["cm.yaml"]:
            text(f"{d}/{rel}", k8s_object())
    for d in draw(st.lists(st.sampled_from(DIRS), max_size=2, unique=True)):
        extra = draw(st.lists(st.sampled_from(["patch.yaml", "patch.json", "ops.yaml", "app.env", "props.txt",
                                               "config.yaml", "crd.yaml", "schema.json", "plugin.yaml",
                                               "repl.yaml", "bin.dat", "values.yaml"]),
                              max_size=5, unique=True))
        for rel in extra:
            path = f"{d}/{rel}"
            if rel == "patch.yaml":
                text(path, smp_patch())
            elif rel == "patch.json":
                files[path] = draw(mutate_bytes(json.dumps(draw(st.one_of(json_ops, smp_patch()))).encode()))
            elif rel == "ops.yaml":
                text(path, json_ops)
            elif rel in ("app.env", "props.txt"):
                lines = draw(st.lists(st.sampled_from(["A=1", "B", "=x", "# c", "", "export C=2", "D=\"q\"", "É=1",
                                                       "E=" + "e" * 3000, "F==", " G = 1 ", "H=a\tb"]), max_size=5))
                files[path] = draw(mutate_bytes("\n".join(lines).encode()))
            elif rel == "config.yaml":
                text(path, transformer_config)
            elif rel == "crd.yaml":
                text(path, st.one_of(st.just(None).map(lambda _: {
                    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                    "metadata": {"name": "widgets.example.com"},
                    "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"},
                             "scope": "Namespaced", "versions": [{"name": "v1", "served": True, "storage": True,
                                                                  "schema": {"openAPIV3Schema": {"type": "object"}}}]}}),
                                     k8s_object()))
            elif rel == "schema.json":
                files[path] = draw(mutate_bytes(json.dumps(draw(openapi_doc)).encode("utf-8", "surrogatepass")))
            elif rel == "plugin.yaml":
                text(path, plugin_config)
            elif rel == "repl.yaml":
                text(path, st.lists(replacement, max_size=2))
            elif rel == "bin.dat":
                files[path] = draw(st.binary(max_size=64))
            elif rel == "values.yaml":
                text(path, junk)
    # symlinks, loops and directories where files are expected
    for d in draw(st.lists(st.sampled_from(DIRS), max_size=2, unique=True)):
        for rel, target in draw(st.lists(st.sampled_from([
                ("loop.yaml", "loop.yaml"), ("link.yaml", "cm.yaml"), ("dangling.yaml", "nowhere.yaml"),
                ("loopdir", "."), ("loopdir", ".."), ("link.yaml", "/etc/passwd"), ("outside", "/tmp"),
                ("sub", "../overlay"), ("deploy.yaml", "../base/cm.yaml"), ("kustomization.yaml", "../base/kustomization.yaml"),
                ("ping.yaml", "pong.yaml"), ("pong.yaml", "ping.yaml"), ("cm.yaml", "loop.yaml"), ("loop.yaml", "cm.yaml"),
        ]), max_size=2, unique_by=lambda t: t[0])):
            files.setdefault(f"{d}/{rel}", ("symlink", target))
        if draw(st.booleans()):
            files.setdefault(f"{d}/dir.yaml", ("dir",))
    if draw(st.integers(0, 4)) == 0:  # GitOps controller objects pointing at the example's directories
        files["clusters/sync.yaml"] = draw(mutate_bytes(
            yaml.safe_dump_all(draw(flux_objects()), allow_unicode=True).encode("utf-8", "surrogatepass")))
        if draw(st.booleans()):
            files["base/cm.yaml"] = draw(mutate_bytes(yaml.safe_dump({
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": draw(str_or(PLACEHOLDERS))},
                "data": {draw(st.sampled_from(PLACEHOLDERS)): draw(str_or(PLACEHOLDERS))}}).encode()))
    if draw(st.integers(0, 3)) == 0:
        text(".krmcheck.yaml", krmcheck_config)
    if draw(st.integers(0, 8)) == 0:
        text(f"{draw(st.sampled_from(DIRS))}/plain.yaml", k8s_object())  # a plain manifest root
    if draw(st.integers(0, 10)) == 0:
        files["baseline.json"] = draw(mutate_bytes(json.dumps(draw(junk)).encode("utf-8", "surrogatepass")))
    return files


COMMANDS = [
    [], ["--roots", "all"], ["--roots", "all", "--strict", "--fail-on", "info"],
    ["--roots", "all", "--require-schemas", "--json", "out/report.json", "--sarif", "out/r.sarif",
     "--junit", "out/r.xml"],
    ["--roots", "all", "--github", "on"],
]
commands = st.sampled_from(COMMANDS)


# --- running one example in a child --------------------------------------------------

class TimeLimit(BaseException):
    """Raised in the child by SIGALRM; a BaseException so that no
    ``except Exception`` boundary in krmcheck swallows it."""


@dataclass
class Outcome:
    argv: list[str]
    rc: Any = None
    out: str = ""
    err: str = ""
    exception: str = ""  # traceback of an exception that escaped main
    swallowed: str = ""  # traceback of an exception the build boundary turned into an "internal error"
    killed: str = ""  # "hang" or "memory" when the child did not report
    seconds: float = 0.0


@dataclass
class Failure:
    family: str  # traceback, internal-error, hang, memory, exit-code, unclear-error
    signature: tuple[str, ...]
    detail: str
    outcome: Outcome | None = None
    problems: list[str] = field(default_factory=list)


def _krmcheck_frame(tb_text: str) -> str:
    """The last frame inside krmcheck of a formatted traceback (else the last frame)."""
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', tb_text)
    ours = [f for f in frames if "/krmcheck/" in f[0] and "test_fuzz" not in f[0]]
    f = (ours or frames or [("?", "0", "?")])[-1]
    return f"{f[0].split('/krmcheck/', 1)[-1]}:{f[1]} in {f[2]}"


def _exception_line(tb_text: str) -> str:
    lines = [ln for ln in tb_text.strip().splitlines() if ln and not ln.startswith(" ")]
    return lines[-1] if lines else "?"


def _child(top: Path, runs: list[list[str]], wfd: int, time_limit: float, memory: int) -> None:
    # In the child: limits, then each run; results as JSON lines on the pipe.
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm") as fh:
            vm = int(fh.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (vm + memory, hard))
    except (OSError, ValueError):
        pass
    for var in ("KRMCHECK_NETWORK", "GITHUB_ACTIONS", "CI", "GITHUB_STEP_SUMMARY"):
        os.environ.pop(var, None)
    os.environ["XDG_CACHE_HOME"] = str(top.parent / "cache")
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))

    def alarm(signum: int, frame: Any) -> None:
        raise TimeLimit(f"still running after {time_limit:g}s")

    signal.signal(signal.SIGALRM, alarm)
    from krmcheck import cli
    from krmcheck.kustomize import target
    swallowed: list[str] = []
    for method in ("build", "load_manifest"):
        original = getattr(target.Builder, method)

        def wrapped(self: Any, *a: Any, _original: Any = original, **kw: Any) -> Any:
            try:
                return _original(self, *a, **kw)
            except (Exception, RecursionError) as e:  # noqa: BLE001 - recorded, then re-raised
                from krmcheck.resource.errors import BuildError
                if not isinstance(e, BuildError) and not swallowed:
                    swallowed.append(traceback.format_exc())
                raise
        setattr(target.Builder, method, wrapped)
    os.chdir(top)
    deadline = time.monotonic() + time_limit
    for argv in runs:
        swallowed.clear()
        out, err = io.StringIO(), io.StringIO()
        result: dict[str, Any] = {"argv": argv}
        t0 = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, max(deadline - time.monotonic(), 0.05))
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                result["rc"] = cli.main(argv)
        except TimeLimit:
            result["exception"] = traceback.format_exc()
            result["killed"] = "hang"
        except MemoryError:
            result["exception"] = traceback.format_exc()
            result["killed"] = "memory"
        except BaseException as e:  # noqa: BLE001 - whatever escapes main is the finding
            result["exception"] = traceback.format_exc()
            result["rc"] = e.code if isinstance(e, SystemExit) else None
            if isinstance(e, SystemExit):
                result["exception"] = ""
                result["rc"] = e.code
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        result["seconds"] = time.monotonic() - t0
        result["out"] = out.getvalue()[:OUTPUT_LIMIT]
        result["err"] = err.getvalue()[:OUTPUT_LIMIT]
        result["swallowed"] = swallowed[0] if swallowed else ""
        data = (json.dumps(result, default=repr) + "\n").encode("utf-8", "backslashreplace")
        os.write(wfd, data) if len(data) < 65536 else _write_all(wfd, data)
        if result.get("killed"):
            break


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def run_in_child(top: Path, runs: list[list[str]], time_limit: float = TIME_LIMIT,
                 memory: int = MEMORY_LIMIT) -> list[Outcome]:
    """Run each argv in ``runs`` with ``cli.main`` in a forked child, in ``top``."""
    sys.stdout.flush()
    sys.stderr.flush()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(rfd)
        code = 0
        try:
            _child(top, runs, wfd, time_limit, memory)
        except BaseException:  # noqa: BLE001
            with contextlib.suppress(BaseException):
                os.write(wfd, (json.dumps({"argv": ["<child>"], "exception": traceback.format_exc()}) + "\n").encode())
            code = 3
        finally:
            os._exit(code)
    os.close(wfd)
    chunks: list[bytes] = []
    hard_deadline = time.monotonic() + time_limit + 5
    killed = False
    while True:
        left = hard_deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            killed = True
            break
        ready, _, _ = select.select([rfd], [], [], left)
        if ready:
            chunk = os.read(rfd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(rfd)
    _, status = os.waitpid(pid, 0)
    outcomes = []
    for line in b"".join(chunks).decode("utf-8", "replace").splitlines():
        with contextlib.suppress(ValueError):
            d = json.loads(line)
            outcomes.append(Outcome(argv=d.get("argv", []), rc=d.get("rc"), out=d.get("out", ""),
                                    err=d.get("err", ""), exception=d.get("exception", ""),
                                    swallowed=d.get("swallowed", ""), killed=d.get("killed", ""),
                                    seconds=d.get("seconds", 0.0)))
    if len(outcomes) < len(runs) and not any(o.killed for o in outcomes):
        argv = runs[len(outcomes)]
        if killed:
            why = "hang"  # stuck where SIGALRM could not interrupt it (C code), killed
        elif os.WIFSIGNALED(status):
            why = "memory" if os.WTERMSIG(status) in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT) else "crash"
            why = f"{why} (signal {os.WTERMSIG(status)})"
        else:
            why = f"child exited {os.WEXITSTATUS(status)} without a result"
        outcomes.append(Outcome(argv=argv, killed=why))
    return outcomes


def judge(o: Outcome) -> Failure | None:
    """The promise, for one run."""
    cmd = "krmcheck " + " ".join(o.argv)
    if o.killed:
        family = "hang" if o.killed.startswith("hang") else "memory" if o.killed.startswith("memory") else "crash"
        where = _krmcheck_frame(o.exception) if o.exception else o.killed
        return Failure(family, (family, where), f"{cmd}: {o.killed}\n{o.exception}", o)
    if o.exception:
        return Failure("traceback", ("traceback", _exception_line(o.exception).split(":")[0], _krmcheck_frame(o.exception)),
                       f"{cmd}: exception escaped main\n{o.exception}", o)
    text = o.out + o.err
    if "Traceback (most recent call last)" in text:
        return Failure("traceback", ("traceback-in-output",), f"{cmd}: traceback in output\n{text[-3000:]}", o)
    if "internal error in krmcheck" in text:
        tb = o.swallowed
        msg = re.search(r"internal error in krmcheck[^\n]*", text)
        sig = (("internal-error", _exception_line(tb).split(":")[0], _krmcheck_frame(tb)) if tb
               else ("internal-error", re.sub(r"'[^']*'|\d+", "_", msg.group(0) if msg else "")[:120]))
        return Failure("internal-error", sig, f"{cmd}: {msg.group(0) if msg else ''}\n{tb}", o)
    if o.rc not in (0, 1, 2) or isinstance(o.rc, bool):
        return Failure("exit-code", ("exit-code", repr(o.rc)), f"{cmd}: exit code {o.rc!r}\n{text[-2000:]}", o)
    if o.rc == 2 and not (LOCATION.search(text) or CLEAR.search(text)):
        return Failure("unclear-error", ("unclear-error", text.strip()[:60]),
                       f"{cmd}: exit 2 without a location or message\n{text[-2000:]}", o)
    return None


def runs_for(files: dict[str, Any], command: list[str]) -> list[list[str]]:
    """The check, then ``build`` over each directory holding a kustomization."""
    dirs = sorted({rel.rsplit("/", 1)[0] for rel, c in files.items()
                   if rel.rsplit("/", 1)[-1] in ("kustomization.yaml", "kustomization.yml", "Kustomization")
                   and "/" in rel})
    return [list(command)] + [["build", d] for d in dirs]


def check_repo(files: dict[str, Any], command: list[str], time_limit: float = TIME_LIMIT,
               memory: int = MEMORY_LIMIT) -> list[Failure]:
    scratch = Path(tempfile.mkdtemp(prefix="krmfuzz-"))
    try:
        top = scratch / "repo"
        top.mkdir()
        write_repo(files, top)
        outcomes = run_in_child(top, runs_for(files, command), time_limit, memory)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return [f for f in map(judge, outcomes) if f is not None]


def failure_message(files: dict[str, Any], failures: list[Failure]) -> str:
    return ("\n\n".join(f"[{f.family}] {f.detail}" for f in failures)
            + "\n\nfiles:\n" + show_repo(files) + "\n\nreproduce with write_repo(files, DIR) where files =\n"
            + repo_literal(files))


# --- the CI budget --------------------------------------------------------------------

# a fixed budget, the same examples every run; benchmarks/fuzz.py sets a
# larger budget and a seed (pytest --hypothesis-seed) for a long campaign
CI = settings(max_examples=int(os.environ.get("KRMCHECK_FUZZ_EXAMPLES", "60")), deadline=None,
              derandomize="KRMCHECK_FUZZ_CAMPAIGN" not in os.environ,
              database=None, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much, HealthCheck.large_base_example])


def _warm_up() -> None:
    """Import and fill krmcheck's caches once in the parent, so that each
    forked child starts warm."""
    from krmcheck import cli  # noqa: F401
    files = {"base/kustomization.yaml": b"resources:\n- cm.yaml\n",
             "base/cm.yaml": b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\n"}
    scratch = Path(tempfile.mkdtemp(prefix="krmfuzz-warm-"))
    here = os.getcwd()
    try:
        write_repo(files, scratch)
        os.chdir(scratch)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            cli.main(["--roots", "all"])
    finally:
        os.chdir(here)
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:
    _warm_up()


@CI
@given(files=repos(), command=commands)
def test_any_repository_ends_in_a_result_or_one_clear_error(files: dict[str, Any], command: list[str]) -> None:
    failures = check_repo(files, command)
    assert not failures, failure_message(files, failures)


@CI
@given(text=yaml_text(st.one_of(k8s_object(), kustomization(), junk)), hazards=st.data())
def test_any_kustomization_text_builds_or_fails_clearly(text: str, hazards: st.DataObject) -> None:
    """One overlay over one base, the overlay's kustomization any text at all."""
    data = hazards.draw(mutate_bytes(text.encode("utf-8", "surrogatepass")))
    files: dict[str, Any] = {"overlay/kustomization.yaml": data,
                             "base/kustomization.yaml": b"resources:\n- cm.yaml\n",
                             "base/cm.yaml": b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"}
    failures = check_repo(files, ["--roots", "all"])
    assert not failures, failure_message(files, failures)


@CI
@given(text=yaml_text(k8s_object()), hazards=st.data())
def test_any_manifest_text_builds_or_fails_clearly(text: str, hazards: st.DataObject) -> None:
    """A resource file (read through a kustomization, and as a plain manifest) of any text."""
    data = hazards.draw(mutate_bytes(text.encode("utf-8", "surrogatepass")))
    files: dict[str, Any] = {"base/kustomization.yaml": b"resources:\n- cm.yaml\nnamePrefix: p-\n"
                                                        b"commonLabels: {app: web}\nimages: [{name: nginx, newTag: '1'}]\n",
                             "base/cm.yaml": data, "other/plain.yaml": data}
    failures = check_repo(files, [])
    assert not failures, failure_message(files, failures)


@CI
@given(config=yaml_text(krmcheck_config), hazards=st.data())
def test_any_configuration_is_used_or_refused_clearly(config: str, hazards: st.DataObject) -> None:
    data = hazards.draw(mutate_bytes(config.encode("utf-8", "surrogatepass")))
    files: dict[str, Any] = {".krmcheck.yaml": data, "base/kustomization.yaml": b"resources:\n- cm.yaml\n",
                             "base/cm.yaml": b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"}
    failures = check_repo(files, [])
    assert not failures, failure_message(files, failures)
