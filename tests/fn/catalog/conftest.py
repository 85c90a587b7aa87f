"""The loopback server fixture of the catalog tests."""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.fn.catalog.catalogs import Server


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()
