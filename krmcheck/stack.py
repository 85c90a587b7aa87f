"""Room for deep inputs: kustomizations that include bases 200 deep, YAML
nested thousands of levels (kubectl accepts up to 10,000), are walked by
recursive code. Python's default recursion limit (1,000) and a thread's
default stack are too small for them, so the work runs in a thread with a
large stack and a high recursion limit. Memory is only used as deep as the
recursion actually goes."""

from __future__ import annotations

import sys
import threading
from typing import Callable, TypeVar

T = TypeVar("T")

STACK_BYTES = 512 * 1024 * 1024
RECURSION_LIMIT = 60_000  # levels that fit in STACK_BYTES with room to spare
# Smaller stacks to fall back on where the address space is limited (ulimit -v):
# less depth is possible, with the recursion limit cut in proportion.
_FALLBACKS = (STACK_BYTES, 128 * 1024 * 1024, 32 * 1024 * 1024)


def deep(fn: Callable[[], T]) -> T:
    """``fn()`` in a thread with a large stack; its result or its exception.
    Where no such thread can start, ``fn()`` runs as it is (deep inputs then
    end in a clear "too deep" error instead of rendering)."""
    if threading.current_thread().name == _NAME:
        return fn()  # already in one
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed back to the caller as it is
            box["error"] = e

    worker = None
    limit = sys.getrecursionlimit()
    for size in _FALLBACKS:
        previous_stack = threading.stack_size(size)
        sys.setrecursionlimit(max(limit, RECURSION_LIMIT * size // STACK_BYTES))
        try:
            candidate = threading.Thread(target=run, name=_NAME)
            candidate.start()
            worker = candidate
            break
        except RuntimeError:  # "can't start new thread": no room for this stack
            sys.setrecursionlimit(limit)
        finally:
            threading.stack_size(previous_stack)
    if worker is None:
        return fn()
    worker.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


_NAME = "krmcheck-deep"
