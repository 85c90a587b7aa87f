"""Catalogs, archives, configs and a loopback server that the catalog tests share."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import tarfile
import threading
from pathlib import Path

from krmcheck.fn.catalog.sources import CatalogRef, reference
from krmcheck.fn.catalog_context import CatalogContext
from krmcheck.kustomize.plugins import Config
from krmcheck.resource.files import Files
from krmcheck.tree.load import load_documents
from krmcheck.tree.node import Mapping
from krmcheck.tree.origin import Origin

PROJECT = Path(__file__).resolve().parents[3]
FIXTURE = PROJECT / "fixtures" / "catalogs"
LINUX = ("linux", "amd64")

HEAD = """\
apiVersion: config.kubernetes.io/v1alpha1
kind: Catalog
metadata:
  name: team
spec:
  krmFunctions:
"""


def exec_function(kind: str = "SetAnnotation", sha: str = "0" * 64, uri: str = "fn.tar.gz",
                  version: str = "v1", group: str = "example.com", os_name: str = "linux") -> str:
    return f"""\
  - group: {group}
    names:
      kind: {kind}
    publisher: Example Co
    versions:
    - name: {version}
      runtime:
        exec:
          platforms:
          - os: {os_name}
            arch: amd64
            bin: bin/fn
            uri: {uri}
            sha256: {sha}
"""


def container_function(kind: str, image: str, extra: str = "") -> str:
    return f"""\
  - group: example.com
    names:
      kind: {kind}
    publisher: Example Co
    versions:
    - name: v1
      runtime:
        container:
          image: {image}
{extra}"""


def tgz(members: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def ctx(tmp_path: Path, *trusted: str, network: bool = False) -> CatalogContext:
    return CatalogContext(frozenset(trusted), network, tmp_path / "cache", LINUX)


def local(tmp_path: Path, rel: str) -> CatalogRef:
    return reference(rel, tmp_path, Files(tmp_path), None)


def config(text: str) -> Config:
    doc = load_documents(text, "fn.yaml", "resource")[0]
    assert isinstance(doc, Mapping)
    return Config(doc, Origin("kustomization.yaml", 5, 3))


SET_ANNOTATION = """\
apiVersion: example.com/v1
kind: SetAnnotation
metadata:
  name: owner
spec:
  key: owner
  value: team
"""


class Server:
    """Files served on 127.0.0.1 from a dict; counts requests per path."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.hits: dict[str, int] = {}
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                outer.hits[self.path] = outer.hits.get(self.path, 0) + 1
                body = outer.files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
