"""Keeping Secret values out of every output.

A validator's message may quote the value it complains about; in a Result
about a Secret, every value the Secrets hold is masked before any reporter
sees it. Both the base64 form in ``data`` and the decoded text are masked.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from typing import Iterable

from krmcheck.kustomize.resource import Resource
from krmcheck.results import Result
from krmcheck.tree.node import Scalar

MASK = "<redacted>"
# Shorter values would mask ordinary words; they are still masked when quoted.
_MIN_BARE = 4


def secret_values(resources: Iterable[Resource]) -> frozenset[str]:
    """Every value held in ``data`` or ``stringData`` of the Secrets."""
    found: set[str] = set()
    for res in resources:
        if res.kind != "Secret":
            continue
        for key in ("data", "stringData"):
            m = res.node.mapping(key)
            for node in (m.items.values() if m is not None else ()):
                if isinstance(node, Scalar) and node.value not in (None, ""):
                    text = node.as_string()
                    found.add(text)
                    if key == "data":
                        found.update(_decoded(text))
    return frozenset(v for v in found if v)


def _decoded(text: str) -> list[str]:
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return []
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return []
    return [decoded, *decoded.splitlines()]


def redact(result: Result, secrets: frozenset[str]) -> Result:
    """Mask secret values in a Result about a Secret (or about no resource in
    particular). A Result about another resource quotes that resource's own
    values, which are not secret even when a Secret happens to hold the same
    text (a user name, say)."""
    ref = result.resource_ref
    if not secrets or (ref is not None and ref.kind != "Secret"):
        return result
    message = result.message
    for value in sorted(secrets, key=len, reverse=True):
        if len(value) >= _MIN_BARE:
            message = message.replace(value, MASK)
        else:
            message = re.sub(rf"(['\"]){re.escape(value)}\1", rf"\1{MASK}\1", message)
    return result if message == result.message else dataclasses.replace(result, message=message)
