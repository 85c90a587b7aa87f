"""Downloads: the one place krmcheck reads a URL (an HTTP GET).

The module is not named ``http`` so that it can never stand in for the
standard library's package.

Remote resources and bases, function catalogs and the runtimes they name,
and schema locations are all read here. urllib is imported by the first
download, so a run that reads no URL does not pay for it.

A server that answers with an error status raises :class:`StatusError`;
no answer at all (name lookup, connection, TLS, a time-out), or a broken
one (a body shorter than its length), raises :class:`GetError`. Each caller words the message its users see. With
``retries``, an answer of 429 or 5xx, and no answer, are tried again after
1, 2, 4... seconds, or after the server's ``Retry-After`` (at most a
minute).

Every download is bounded, whoever asks for it: each wait for the server
lasts at most the caller's ``timeout``, the whole body must arrive within
:data:`MAX_SECONDS`, and a body larger than :data:`MAX_BYTES` (the limit of
one file a build reads) is refused as it arrives, so a hostile or broken
server can neither hold a run nor fill its memory.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # imported by the first download
    import http.client
    import urllib.error

MAX_RETRY_AFTER = 60.0  # seconds; a longer Retry-After is cut to this
MAX_BYTES = 128 * 1024 * 1024  # one body; as resource.files.MAX_FILE_BYTES
MAX_SECONDS = 300.0  # one body, from the request to its last byte
_CHUNK = 1024 * 1024


class GetError(Exception):
    """No answer from the server; ``reason`` says why (urllib's reason)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


class LimitError(GetError):
    """The answer passed a bound (:data:`MAX_BYTES`, :data:`MAX_SECONDS`);
    never tried again."""


class StatusError(GetError):
    """The server answered with an error status ``code``; ``reason`` is its
    reason phrase."""

    def __init__(self, url: str, code: int, reason: str, retry_after: float | None = None) -> None:
        super().__init__(url, reason)
        self.code = code
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        """Worth asking again: too many requests, or a server error."""
        return self.code == 429 or self.code >= 500


def get(url: str, timeout: float, retries: int = 0,
        sleep: Callable[[float], None] | None = None,
        max_bytes: int = MAX_BYTES, max_seconds: float = MAX_SECONDS) -> bytes:
    """The body of ``url``: ``retries`` more tries after a transient failure."""
    delay = 1.0
    for _ in range(retries):
        try:
            return _get_once(url, timeout, max_bytes, max_seconds)
        except StatusError as e:
            if not e.transient:
                raise
            (sleep or time.sleep)(e.retry_after or delay)
        except LimitError:
            raise
        except GetError:
            (sleep or time.sleep)(delay)
        delay *= 2
    return _get_once(url, timeout, max_bytes, max_seconds)


def _get_once(url: str, timeout: float, max_bytes: int, max_seconds: float) -> bytes:
    import http.client
    import urllib.error
    import urllib.request

    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (callers pass http(s) only)
            return _body(url, response, max_bytes, (started, max_seconds))
    except urllib.error.HTTPError as e:
        raise StatusError(url, e.code, str(e.reason), _retry_after(e)) from None
    except (urllib.error.URLError, OSError) as e:
        raise GetError(url, str(getattr(e, "reason", e))) from None
    except http.client.HTTPException as e:  # a broken answer: a body cut short, a bad status line
        raise GetError(url, f"broken answer ({type(e).__name__}: {e})") from None


def _body(url: str, response: http.client.HTTPResponse, max_bytes: int,
          clock: tuple[float, float]) -> bytes:
    """The body as it arrives (``read1``: what one wait brings), refused
    once it passes ``max_bytes`` or ``clock`` (when the request started,
    and the seconds it may take)."""
    import http.client

    length = response.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > max_bytes:
        raise LimitError(url, _too_large(max_bytes))
    parts: list[bytes] = []
    size = 0
    while True:
        part = response.read1(_CHUNK)
        if not part:
            if response.length:  # read1 does not say that the body was cut short
                raise http.client.IncompleteRead(b"".join(parts), response.length)
            return b"".join(parts)
        size += len(part)
        if size > max_bytes:
            raise LimitError(url, _too_large(max_bytes))
        if time.monotonic() > clock[0] + clock[1]:
            raise LimitError(url, f"timed out: the answer took more than {clock[1]:g} seconds")
        parts.append(part)


def _too_large(max_bytes: int) -> str:
    return f"the answer is larger than the limit of {max_bytes:,} bytes for one download"


def _retry_after(e: urllib.error.HTTPError) -> float | None:
    value = e.headers.get("Retry-After") if e.headers else None
    try:
        return min(float(value), MAX_RETRY_AFTER) if value else None
    except ValueError:
        return None
