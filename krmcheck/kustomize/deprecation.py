"""kubectl's warnings about deprecated kustomization fields.

kustomize checks every kustomization file each time it loads one (a base
included twice warns twice), before it uses it, and prints one line per
deprecated field that is set (an empty list counts; null does not), in a
fixed field order. ``krmcheck build`` prints them on stderr exactly so;
``krmcheck check`` reports them as info findings at the field's line.
"""

from __future__ import annotations

from dataclasses import dataclass

from krmcheck.kustomize.kustomization import Kustomization
from krmcheck.tree.origin import Origin

_FIX = "Run 'kustomize edit fix' to update your Kustomization automatically."
# (deprecated field, its replacement, extra words before the fix hint), in kubectl's order
_DEPRECATED = (
    ("bases", "resources", ""),
    ("commonLabels", "labels", ""),
    ("imageTags", "images", ""),
    ("patchesJson6902", "patches", ""),
    ("patchesStrategicMerge", "patches", ""),
    ("vars", "replacements", "[EXPERIMENTAL] "),
)
VALIDATOR = "deprecation"


@dataclass(frozen=True)
class Deprecation:
    field: str
    message: str  # without kubectl's "# Warning: " prefix
    origin: Origin  # the field's key in the kustomization file

    @property
    def line(self) -> str:
        """The line kubectl prints on stderr."""
        return f"# Warning: {self.message}"


def warnings_of(k: Kustomization) -> list[Deprecation]:
    return [Deprecation(name, f"'{name}' is deprecated. Please use '{instead}' instead. {extra}{_FIX}",
                    k.origin(name))
            for name, instead, extra in _DEPRECATED if k.field(name) is not None]
