"""download.get against a local HTTP server: bodies, error statuses, retries."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from krmcheck import download


class _Site:
    """Answers each path from a script of (status, headers, body), one per
    request; the last one repeats."""

    def __init__(self, script: dict[str, list[tuple[int, dict[str, str], bytes]]]) -> None:
        self.script, self.seen = script, []  # type: ignore[var-annotated]
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                site.seen.append(self.path)
                answers = site.script.get(self.path, [(404, {}, b"")])
                status, headers, body = answers[min(site.seen.count(self.path), len(answers)) - 1]
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}{path}"


@pytest.fixture
def site() -> Iterator[_Site]:
    s = _Site({
        "/ok": [(200, {}, b"kind: ConfigMap\n")],
        "/flaky": [(503, {}, b""), (200, {}, b"second")],
        "/busy": [(429, {"Retry-After": "5"}, b""), (429, {"Retry-After": "3600"}, b""),
                  (429, {"Retry-After": "soon"}, b""), (200, {}, b"done")],
        "/down": [(500, {}, b"")],
    })
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def test_the_body(site: _Site) -> None:
    assert download.get(site.url("/ok"), 5) == b"kind: ConfigMap\n"


def test_an_error_status_is_not_retried_unless_transient(site: _Site) -> None:
    slept: list[float] = []
    with pytest.raises(download.StatusError) as e:
        download.get(site.url("/missing"), 5, retries=3, sleep=slept.append)
    assert (e.value.code, e.value.reason, e.value.transient) == (404, "Not Found", False)
    assert str(e.value) == site.url("/missing") + ": Not Found"
    assert site.seen == ["/missing"] and slept == []


def test_no_retries_by_default(site: _Site) -> None:
    with pytest.raises(download.StatusError) as e:
        download.get(site.url("/flaky"), 5)
    assert e.value.code == 503 and e.value.transient
    assert site.seen == ["/flaky"]


def test_a_server_error_is_tried_again(site: _Site) -> None:
    slept: list[float] = []
    assert download.get(site.url("/flaky"), 5, retries=2, sleep=slept.append) == b"second"
    assert slept == [1.0]


def test_retry_after_is_obeyed_up_to_a_minute(site: _Site) -> None:
    slept: list[float] = []
    assert download.get(site.url("/busy"), 5, retries=4, sleep=slept.append) == b"done"
    assert slept == [5.0, 60.0, 4.0]  # the server's, cut to a minute, then the backoff's


def test_retries_run_out(site: _Site) -> None:
    slept: list[float] = []
    with pytest.raises(download.StatusError) as e:
        download.get(site.url("/down"), 5, retries=2, sleep=slept.append)
    assert e.value.code == 500
    assert site.seen == ["/down"] * 3 and slept == [1.0, 2.0]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_no_answer_is_a_get_error_and_retried() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/x"
    slept: list[float] = []
    with pytest.raises(download.GetError) as e:
        download.get(url, 5, retries=2, sleep=slept.append)
    assert not isinstance(e.value, download.StatusError)
    assert "refused" in e.value.reason.lower() and e.value.url == url
    assert slept == [1.0, 2.0]


def test_a_slow_server_times_out() -> None:
    with socket.socket() as listener:  # accepts, and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/slow"
        with pytest.raises(download.GetError) as e:
            download.get(url, 0.2)
    assert "timed out" in e.value.reason


def test_a_body_cut_short_is_no_answer_not_a_traceback() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def answer() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
        conn.close()

    threading.Thread(target=answer, daemon=True).start()
    try:
        with pytest.raises(download.GetError, match="broken answer") as info:
            download.get(f"http://127.0.0.1:{server.getsockname()[1]}/cut", 5)
        assert not isinstance(info.value, download.StatusError)
    finally:
        server.close()


def _raw_server(answer: Callable[[socket.socket], None]) -> tuple[socket.socket, str]:
    """A server that answers one request with ``answer`` on the connection."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def serve() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        try:
            answer(conn)
        except OSError:
            pass  # the client gave up first
        finally:
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return server, f"http://127.0.0.1:{server.getsockname()[1]}/x"


def test_a_body_over_the_size_limit_is_refused_as_it_arrives() -> None:
    def answer(conn: socket.socket) -> None:  # no Content-Length: the body ends with the connection
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"x" * 5000)

    server, url = _raw_server(answer)
    slept: list[float] = []
    try:
        with pytest.raises(download.LimitError, match="larger than the limit of 1,000 bytes"):
            download.get(url, 5, retries=2, sleep=slept.append, max_bytes=1000)
    finally:
        server.close()
    assert slept == []  # a limit is not tried again


def test_a_declared_length_over_the_limit_is_refused_before_the_body(site: _Site) -> None:
    with pytest.raises(download.LimitError, match="larger than the limit of 4 bytes"):
        download.get(site.url("/ok"), 5, max_bytes=4)
    assert download.get(site.url("/ok"), 5, max_bytes=16) == b"kind: ConfigMap\n"


def test_a_server_that_drips_is_cut_off_at_the_time_limit() -> None:
    def answer(conn: socket.socket) -> None:  # each byte well within the wait, the whole far over
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
        for _ in range(100):
            conn.sendall(b"x")
            time.sleep(0.05)

    server, url = _raw_server(answer)
    try:
        with pytest.raises(download.LimitError, match="took more than 0.3 seconds"):
            download.get(url, 5, max_seconds=0.3)
    finally:
        server.close()


def test_the_default_limits() -> None:
    assert download.MAX_BYTES == 128 * 1024 * 1024 and download.MAX_SECONDS == 300
