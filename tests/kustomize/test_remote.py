"""Remote resources, bases and components: fetching with dulwich from
loopback servers only, provenance by URL, and the offline default (the URL
grammar is ``test_repospec.py``'s).

Expected texts were printed by ``kubectl kustomize`` (Kustomize v5.5.0)
building the same overlays against the same loopback servers.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest
from dulwich.index import commit_tree
from dulwich.objects import Blob, Commit, Tag
from dulwich.repo import Repo
from dulwich.server import DictBackend
from dulwich.web import make_wsgi_chain

from krmcheck import cli
from krmcheck.kustomize import remote
from krmcheck.kustomize.target import BuildOptions, Builder
from krmcheck.resource.errors import BuildError, NeedsNetwork
from krmcheck.resource.files import NONE, Files
from krmcheck.resource.resource import Resource
from krmcheck.tree.emit import emit_all
from krmcheck.tree.node import Mapping, Node
from krmcheck.tree.origin import Location

# --- loopback servers ------------------------------------------------------------------

AUTHOR = b"Test <test@example.com>"

BASE_V1 = {
    "base/kustomization.yaml": "resources:\n- cm.yaml\n- ../shared\nnamePrefix: b-\n",
    "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v1\n",
    "shared/kustomization.yaml": "resources:\n- svc.yaml\n",
    "shared/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n",
    "comp/kustomization.yaml": ("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                                "commonLabels:\n  team: blue\n"),
    "escape/kustomization.yaml": "resources:\n- ../shared/svc.yaml\n",
    "outside/kustomization.yaml": "resources:\n- ../..\n",
    "file.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\n",
}
BASE_V2 = {**BASE_V1, "base/cm.yaml": BASE_V1["base/cm.yaml"].replace("k: v1", "k: v2")}


class _QuietWSGI(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def _commit(repo: Repo, files: dict[str, str], parents: list[bytes], message: str,
            gitlinks: dict[str, bytes] | None = None) -> bytes:
    """A commit of exactly ``files`` (and submodule ``gitlinks``), without a work tree."""
    entries = []
    for name, text in files.items():
        blob = Blob.from_string(text.encode())
        repo.object_store.add_object(blob)
        entries.append((name.encode(), blob.id, 0o100644))
    for name, sha in (gitlinks or {}).items():
        entries.append((name.encode(), sha, 0o160000))
    c = Commit()
    c.tree = commit_tree(repo.object_store, entries)
    c.parents = parents
    c.author = c.committer = AUTHOR
    c.author_time = c.commit_time = int(time.time())
    c.author_timezone = c.commit_timezone = 0
    c.message = message.encode()
    repo.object_store.add_object(c)
    return bytes(c.id)


def _annotated_tag(repo: Repo, name: str, target: bytes) -> None:
    tag = Tag()
    tag.name = name.encode()
    tag.object = (Commit, target)
    tag.tagger = AUTHOR
    tag.tag_time = int(time.time())
    tag.tag_timezone = 0
    tag.message = b"release\n"
    repo.object_store.add_object(tag)
    repo.refs[b"refs/tags/" + name.encode()] = tag.id


@dataclass(frozen=True)
class Servers:
    git: str  # http://127.0.0.1:PORT
    files: str
    v1: str  # the commit tagged v1
    repo_dir: Path  # repo.git on disk, for file:// URLs


def _make_repos(root: Path) -> tuple[dict[str, Repo], bytes]:
    repo = Repo.init_bare(str(root / "repo.git"), mkdir=True)
    v1 = _commit(repo, BASE_V1, [], "v1")
    v2 = _commit(repo, BASE_V2, [v1], "v2")
    repo.refs[b"refs/heads/master"] = v2
    repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/master")
    repo.refs[b"refs/heads/old"] = v1
    repo.refs[b"refs/tags/light"] = v1
    _annotated_tag(repo, "v1", v1)
    sup = Repo.init_bare(str(root / "super.git"), mkdir=True)
    top = {".gitmodules": '[submodule "sub"]\n\tpath = sub\n\turl = ../repo.git\n',
           "kustomization.yaml": "resources:\n- sub/base\nnamespace: sup\n"}
    head = _commit(sup, top, [], "with a submodule", gitlinks={"sub": v1})
    sup.refs[b"refs/heads/master"] = head
    sup.refs.set_symbolic_ref(b"HEAD", b"refs/heads/master")
    return {"/repo.git": repo, "/super.git": sup}, v1


def _web_page(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """What a forge answers for a repository URL that is not git's: a web page
    when asked for one (``html`` in the query), else 404."""
    if "html" in environ.get("QUERY_STRING", ""):
        start_response("200 OK", [("Content-Type", "text/html")])
        return [b"<html><body>a repository: [</body></html>\n"]
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"not found\n"]


def _serve(server: Any) -> None:
    threading.Thread(target=server.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    root = tmp_path_factory.mktemp("remote")
    repos, v1 = _make_repos(root)
    app = make_wsgi_chain(DictBackend(repos), fallback_app=_web_page)
    git = make_server("127.0.0.1", 0, app, handler_class=_QuietWSGI)
    site = root / "site"
    (site / "files").mkdir(parents=True)
    (site / "files" / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n")
    (site / "files" / "dash.json").write_text('{"panels": []}\n')
    (site / "files" / "vars.env").write_text("# settings\nLEVEL=debug\nMODE\n")
    files = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietFiles, directory=str(site)))
    for s in (git, files):
        _serve(s)
    yield Servers(f"http://127.0.0.1:{git.server_port}", f"http://127.0.0.1:{files.server_port}",
                  v1, root / "repo.git")
    for s in (git, files):
        s.shutdown()
        s.server_close()
    for r in repos.values():
        r.close()


# --- building ----------------------------------------------------------------------------

def write(root: Path, rel: str, content: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path


def build(root: Path, overlay: str = "overlay", **options: Any) -> list[Resource]:
    opts = BuildOptions(**{"network": True, **options})
    return Builder(Files(root), opts).build(root / overlay)


def text(resources: list[Resource]) -> str:
    return emit_all([r.node for r in resources])


def at(node: Node, *path: str) -> Node:
    for key in path:
        assert isinstance(node, Mapping)
        node = node.items[key]
    return node


def where(node: Node) -> Location:
    return node.origin.location


def test_remote_base_at_a_tag(tmp_path: Path, servers: Servers) -> None:
    url = f"{servers.git}/repo.git//base?ref=v1"
    write(tmp_path, "overlay/kustomization.yaml", f"resources:\n- {url}\nnamespace: ns\n")
    resources = build(tmp_path)
    assert text(resources) == """apiVersion: v1
data:
  k: v1
kind: ConfigMap
metadata:
  name: b-a
  namespace: ns
---
apiVersion: v1
kind: Service
metadata:
  name: b-s
  namespace: ns
"""


def test_remote_origins_name_the_url_not_the_clone(tmp_path: Path, servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml",
          f"resources:\n- {servers.git}/repo.git//base?ref=v1\nnamespace: ns\n")
    cm, svc = build(tmp_path)
    repo = f"{servers.git}/repo.git"
    assert where(at(cm.node, "data", "k")) == Location(f"{repo}//base/cm.yaml?ref=v1", 6, 3)
    assert where(at(svc.node, "kind")) == Location(f"{repo}//shared/svc.yaml?ref=v1", 2, 1)
    # the namePrefix written by the remote kustomization points at its line there
    name = at(cm.node, "metadata", "name")
    assert where(name) == Location(f"{repo}//base/kustomization.yaml?ref=v1", 4, 1)
    assert [o.location for o in name.trail] == [Location(f"{repo}//base/cm.yaml?ref=v1", 4, 3)]
    # the namespace the local overlay wrote points at the overlay
    assert where(at(cm.node, "metadata", "namespace")) == \
        Location("overlay/kustomization.yaml", 3, 1)


@pytest.mark.parametrize("query,value", [
    ("?ref=v1", "v1"),  # annotated tag
    ("?version=v1", "v1"),
    ("?ref=light", "v1"),  # lightweight tag
    ("?ref=old", "v1"),  # branch
    ("?ref=refs/heads/old", "v1"),
    ("?ref=master", "v2"),
    ("", "v2"),  # the remote's HEAD
    ("?ref=v1&timeout=90s&submodules=false", "v1"),
])
def test_refs(tmp_path: Path, servers: Servers, query: str, value: str) -> None:
    write(tmp_path, "overlay/kustomization.yaml", f"resources:\n- {servers.git}/repo.git//base{query}\n")
    cm = build(tmp_path)[0]
    assert at(cm.node, "data", "k").value == value  # type: ignore[attr-defined]


def test_ref_by_commit_id(tmp_path: Path, servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml",
          f"resources:\n- {servers.git}/repo.git//base?ref={servers.v1.decode()}\n")
    assert at(build(tmp_path)[0].node, "data", "k").value == "v1"  # type: ignore[attr-defined]


def test_git_suffix_marks_the_repository_without_double_slash(tmp_path: Path,
                                                              servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml", f"bases:\n- {servers.git}/repo.git/shared?ref=v1\n")
    assert [r.name for r in build(tmp_path)] == ["s"]


def test_a_web_page_at_a_git_url_means_clone(tmp_path: Path, servers: Servers) -> None:
    # kustomize downloads an http(s) entry first; a page that is not YAML
    # makes it try the URL as a repository
    write(tmp_path, "overlay/kustomization.yaml", f"resources:\n- {servers.git}/repo.git//shared?html=1\n")
    assert [r.name for r in build(tmp_path)] == ["s"]


def test_one_clone_per_url_and_ref(tmp_path: Path, servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml",
          f"resources:\n- {servers.git}/repo.git//base?ref=v1\n"
          f"- {servers.git}/repo.git//escape?ref=v1\n")
    write(tmp_path, "overlay2/kustomization.yaml", f"resources:\n- {servers.git}/repo.git//shared?ref=v1\n")
    builder = Builder(Files(tmp_path), BuildOptions(load_restrictor=NONE, network=True))
    with pytest.raises(BuildError):  # escape/ reads above its root: refused (see below)
        builder.build(tmp_path / "overlay")
    builder.build(tmp_path / "overlay2")
    assert len(builder.remotes._clones) == 1


def test_remote_component(tmp_path: Path, servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml",
          f"resources:\n- cm.yaml\ncomponents:\n- {servers.git}/repo.git//comp?ref=v1\n")
    write(tmp_path, "overlay/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n")
    (cm,) = build(tmp_path)
    assert text([cm]) == """apiVersion: v1
kind: ConfigMap
metadata:
  labels:
    team: blue
  name: local
"""
    assert where(at(cm.node, "metadata", "labels", "team")) == \
        Location(f"{servers.git}/repo.git//comp/kustomization.yaml?ref=v1", 4, 3)


def test_clone_is_always_load_restricted(tmp_path: Path, servers: Servers) -> None:
    # kustomize forces LoadRestrictionsRootOnly inside clones, whatever the flag says
    write(tmp_path, "overlay/kustomization.yaml", f"resources:\n- {servers.git}/repo.git//escape?ref=v1\n")
    with pytest.raises(BuildError, match="security; file") as e:
        build(tmp_path, load_restrictor=NONE)
    assert f"{servers.git}/repo.git//shared/svc.yaml?ref=v1" in str(e.value)
    # no flag or setting allows it: the message offers none
    assert e.value.message.endswith("(a remote kustomization is always built with LoadRestrictionsRootOnly)")
    assert "--load-restrictor" not in e.value.message


def test_bases_in_a_clone_stay_in_it(tmp_path: Path, servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml", f"resources:\n- {servers.git}/repo.git//outside?ref=v1\n")
    with pytest.raises(BuildError, match="cloned git repos must be within the repo") as e:
        build(tmp_path)
    assert e.value.location == Location(f"{servers.git}/repo.git//outside/kustomization.yaml?ref=v1", 2, 3)


def test_relative_submodule(tmp_path: Path, servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml", f"resources:\n- {servers.git}/super.git\n")
    cm, svc = build(tmp_path)
    assert (cm.name, cm.namespace, at(cm.node, "data", "k").value) == ("b-a", "sup", "v1")  # type: ignore
    assert where(at(svc.node, "kind")).path == f"{servers.git}/super.git//sub/shared/svc.yaml"


def test_submodules_false_leaves_them_out(tmp_path: Path, servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml",
          f"resources:\n- {servers.git}/super.git?submodules=false\n")
    with pytest.raises(BuildError, match="sub/base"):
        build(tmp_path)


def test_file_url_needs_no_network(tmp_path: Path, servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml",
          f"resources:\n- file://{servers.repo_dir.as_posix()}//shared?ref=v1\n")
    (svc,) = build(tmp_path, network=False)
    assert where(at(svc.node, "kind")).path == \
        f"file://{servers.repo_dir.as_posix()}//shared/svc.yaml?ref=v1"


def test_remote_file(tmp_path: Path, servers: Servers) -> None:
    url = f"{servers.files}/files/deploy.yaml"
    write(tmp_path, "overlay/kustomization.yaml", f"resources:\n- {url}\nnamePrefix: dev-\n")
    (deploy,) = build(tmp_path)
    assert text([deploy]) == """apiVersion: apps/v1
kind: Deployment
metadata:
  name: dev-web
spec:
  replicas: 2
"""
    assert where(at(deploy.node, "spec", "replicas")) == Location(url, 6, 3)


# --- generator inputs that are URLs ----------------------------------------------------

GENERATORS = """\
configMapGenerator:
- name: dash
  files:
  - {files}/files/dash.json
  - renamed.json={files}/files/dash.json
  - {files}/files/dash.json?raw
  envs:
  - {files}/files/vars.env
secretGenerator:
- name: creds
  env: {files}/files/vars.env
"""


def test_generator_inputs_from_urls(tmp_path: Path, servers: Servers) -> None:
    # kustomize's file loader takes an http(s) URL wherever it reads a file;
    # without KEY=, the key is path.Base of the URL, its query included
    write(tmp_path, "overlay/kustomization.yaml", GENERATORS.format(files=servers.files))
    cm, secret = build(tmp_path)
    assert text([cm, secret]) == """apiVersion: v1
data:
  LEVEL: debug
  MODE: ""
  dash.json: |
    {"panels": []}
  dash.json?raw: |
    {"panels": []}
  renamed.json: |
    {"panels": []}
kind: ConfigMap
metadata:
  name: dash-84g69tfh68
---
apiVersion: v1
data:
  LEVEL: ZGVidWc=
  MODE: ""
kind: Secret
metadata:
  name: creds-9d7t24m57k
type: Opaque
"""
    # a file's key points at its files: entry; an env file's at its line there
    assert where(at(cm.node, "data", "dash.json")) == Location("overlay/kustomization.yaml", 4, 5)
    assert where(at(cm.node, "data", "renamed.json")) == Location("overlay/kustomization.yaml", 5, 5)
    assert where(at(cm.node, "data", "LEVEL")) == Location(f"{servers.files}/files/vars.env", 2, 1)
    assert where(at(secret.node, "data", "MODE")) == Location(f"{servers.files}/files/vars.env", 3, 1)


def test_a_builtin_generator_config_reads_urls_too(tmp_path: Path, servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml", "generators:\n- gen.yaml\n")
    write(tmp_path, "overlay/gen.yaml", "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n"
                                        f"  name: viaconfig\nfiles:\n- {servers.files}/files/dash.json\n")
    (cm,) = build(tmp_path)
    assert cm.name == "viaconfig-5hkd9h2k9t"
    assert where(at(cm.node, "data", "dash.json")) == Location("overlay/gen.yaml", 6, 3)


def test_a_generator_url_is_downloaded_once_per_run(tmp_path: Path, servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml", GENERATORS.format(files=servers.files))
    builder = Builder(Files(tmp_path), BuildOptions(network=True))
    builder.build(tmp_path / "overlay")
    assert sorted(builder.remotes._bodies) == [f"{servers.files}/files/dash.json",
                                               f"{servers.files}/files/dash.json?raw",
                                               f"{servers.files}/files/vars.env"]


@pytest.mark.parametrize("field,entry,line", [
    ("files", "- {url}", 4),
    ("files", "- key={url}", 4),
    ("envs", "- {url}", 4),
])
def test_a_generator_url_needs_the_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           field: str, entry: str, line: int) -> None:
    monkeypatch.delenv(remote.NETWORK_ENV, raising=False)
    url = "https://example.com/dash.json"
    write(tmp_path, "overlay/kustomization.yaml",
          f"configMapGenerator:\n- name: dash\n  {field}:\n  {entry.format(url=url)}\n")
    e = error(tmp_path, network=False)
    assert isinstance(e, NeedsNetwork) and (e.url, e.what) == (url, f"configMapGenerator 'dash' "
                                                                    f"{'env file' if field == 'envs' else 'file'}")
    assert e.location == Location("overlay/kustomization.yaml", line, 5)
    assert "needs the network" in e.message and "--network" in e.message


def test_a_generator_url_that_is_not_there(tmp_path: Path, servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml",
          f"secretGenerator:\n- name: s\n  files:\n  - {servers.files}/files/absent.txt\n")
    e = error(tmp_path)
    assert e.message == (f"secretGenerator 's' file: fetching '{servers.files}/files/absent.txt': "
                         f"HTTP Error: status code 404 (Not Found)")
    assert e.location == Location("overlay/kustomization.yaml", 4, 5)


# --- errors ------------------------------------------------------------------------------

def error(root: Path, **options: Any) -> BuildError:
    with pytest.raises(BuildError) as e:
        build(root, **options)
    return e.value


@pytest.mark.parametrize("entry", [
    "https://github.com/org/repo//base?ref=v1",
    "github.com/org/repo/base?ref=v1",
    "git@github.com:org/repo.git//base",
    "https://example.com/deploy.yaml",
])
def test_offline_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str) -> None:
    monkeypatch.delenv(remote.NETWORK_ENV, raising=False)
    write(tmp_path, "overlay/kustomization.yaml", f"namePrefix: x-\nresources:\n- {entry}\n")
    e = error(tmp_path, network=False)
    assert e.location == Location("overlay/kustomization.yaml", 3, 3)
    assert entry in e.message and "network" in e.message
    assert "--network" in e.message and "KRMCHECK_NETWORK=1" in e.message


def test_environment_allows_the_network(tmp_path: Path, servers: Servers,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(remote.NETWORK_ENV, "1")
    write(tmp_path, "overlay/kustomization.yaml", f"resources:\n- {servers.git}/repo.git//shared\n")
    assert [r.name for r in build(tmp_path, network=False)] == ["s"]


def test_http_error(tmp_path: Path, servers: Servers) -> None:
    write(tmp_path, "overlay/kustomization.yaml", f"resources:\n- {servers.files}/missing.yaml\n")
    e = error(tmp_path)
    assert "HTTP Error: status code 404 (Not Found)" in e.message
    assert e.location == Location("overlay/kustomization.yaml", 2, 3)


@pytest.mark.parametrize("entry,message", [
    ("{git}/repo.git//nowhere?ref=v1", "no directory 'nowhere'"),
    ("{git}/repo.git//file.yaml?ref=v1", "refers to file 'file.yaml'; expecting a directory"),
    ("{git}/repo.git//base?ref=no-such-ref", "couldn't find remote ref no-such-ref"),
    ("{git}/absent.git//base", "fetching {git}/absent.git at HEAD"),
])
def test_fetch_errors(tmp_path: Path, servers: Servers, entry: str, message: str) -> None:
    write(tmp_path, "overlay/kustomization.yaml", "resources:\n- " + entry.format(git=servers.git) + "\n")
    e = error(tmp_path)
    assert message.format(git=servers.git) in e.message
    assert e.location == Location("overlay/kustomization.yaml", 2, 3)


def test_local_file_wins_over_a_url_like_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # kustomize tries an entry as a file first: no fetch, no network needed
    monkeypatch.delenv(remote.NETWORK_ENV, raising=False)
    write(tmp_path, "overlay/kustomization.yaml", "resources:\n- github.com/org/repo/cm.yaml\n")
    write(tmp_path, "overlay/github.com/org/repo/cm.yaml",
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: here\n")
    assert [r.name for r in build(tmp_path, network=False)] == ["here"]


# --- cache and command line ---------------------------------------------------------------

def test_cache_under_xdg_cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    remotes = remote.Remotes()
    where_to = remotes.directory("key")
    assert (tmp_path / "cache" / "krmcheck") in where_to.parents
    run_dir = where_to.parent
    assert run_dir.is_dir()
    del remotes  # the run's directory goes with it
    assert not run_dir.exists()


def test_cli_network_flag(tmp_path: Path, servers: Servers, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv(remote.NETWORK_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "overlay/kustomization.yaml", f"resources:\n- {servers.git}/repo.git//shared\n")
    assert cli.main(["build", "overlay"]) == 2
    assert "--network" in capsys.readouterr().err
    assert cli.main(["build", "overlay", "--network"]) == 0
    assert capsys.readouterr().out == "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n"


def test_check_accepts_network_flag() -> None:
    assert cli.parse_check(["--network", "."]).network
    assert not cli.parse_check(["."]).network

