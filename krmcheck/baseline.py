"""Baselines: the findings a repository already had when it adopted krmcheck.

``krmcheck --write-baseline FILE`` records the run's findings;
``krmcheck --baseline FILE`` (or ``baseline:`` in ``.krmcheck.yaml``) then
fails only on findings that are not in it. An entry is matched by
validator, file, resource and message, never by line or column, so edits
elsewhere in a file do not break the match; its fingerprint is the one
SARIF carries in ``partialFingerprints``. Entries that no longer match a
finding are reported so that they can be removed.

The file is JSON, sorted, one entry per defect and resource::

    {"krmcheck-baseline": 1,
     "findings": [{"validator": "image-tag", "path": "apps/web/base/deployment.yaml",
                   "resource": "Deployment/web", "message": "...", "fingerprint": "..."}]}
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from krmcheck.resource.files import read_bounded
from krmcheck.results import Finding, fingerprint

FORMAT_KEY = "krmcheck-baseline"
FORMAT_VERSION = 1

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [FORMAT_KEY, "findings"],
    "properties": {
        FORMAT_KEY: {"const": FORMAT_VERSION},
        "findings": {"type": "array", "items": {
            "type": "object",
            "required": ["validator", "path", "resource", "message"],
            "properties": {k: {"type": "string"} for k in
                           ("validator", "path", "resource", "message", "fingerprint")},
        }},
    },
}


class BaselineError(Exception):
    """A baseline file that cannot be read or is not a baseline."""


@dataclass(frozen=True)
class Entry:
    validator: str
    path: str
    resource: str
    message: str

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.validator, self.path, self.resource, self.message)

    def to_dict(self) -> dict[str, str]:
        return {"validator": self.validator, "path": self.path, "resource": self.resource,
                "message": self.message, "fingerprint": self.fingerprint}


def entry_of(finding: Finding) -> Entry:
    return Entry(finding.rule, finding.location.path, finding.resource_id, finding.message)


@dataclass(frozen=True)
class Baseline:
    display: str  # the file, as shown in messages
    entries: frozenset[Entry]


def load(path: Path, display: str) -> Baseline:
    try:
        text = read_bounded(path).decode("utf-8")
    except OSError as e:
        raise BaselineError(f"{display}: cannot read the baseline: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise BaselineError(f"{display}: the baseline is not UTF-8 text") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise BaselineError(f"{display}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise BaselineError(f"{display}: not JSON: {e}") from None
    import jsonschema  # here: only a run with a baseline needs it

    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(_SCHEMA).iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise BaselineError(f"{display}: not a krmcheck baseline ({where}: {error.message}); "
                            f"write one with --write-baseline")
    entries = frozenset(Entry(e["validator"], e["path"], e["resource"], e["message"])
                        for e in doc["findings"])
    return Baseline(display, entries)


def dump(findings: Iterable[Finding]) -> str:
    """The baseline text recording ``findings`` (build errors are never baselined)."""
    entries = sorted({entry_of(f) for f in findings if f.rule != "build"},
                     key=lambda e: (e.path, e.validator, e.resource, e.message))
    doc = {FORMAT_KEY: FORMAT_VERSION, "findings": [e.to_dict() for e in entries]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
