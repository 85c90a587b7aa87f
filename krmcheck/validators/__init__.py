"""Built-in validators: in-process KRM functions, looked up by id.

A validator is a module with an ``id``, a one-line ``description`` and a
``validate(items, options)`` function returning KRM function Results, the
same Results an external function would put in its ResourceList
(``base.Validator``). Each module's docstring documents what it checks; the
README section of the same name is made from it. This module is the
registry; what validators share is in ``base``.
"""

from __future__ import annotations

from krmcheck.validators import api_version, image_tag, metadata, reference, schema, selector, workload
from krmcheck.validators.base import Provided, Validator, ValidatorOptions

__all__ = ["VALIDATORS", "Provided", "Validator", "ValidatorOptions", "enabled_by_default"]

VALIDATORS: dict[str, Validator] = {
    "schema": schema,
    "image-tag": image_tag,
    "metadata": metadata,
    "api-version": api_version,
    "selector": selector,
    "reference": reference,
    "workload": workload,
}


def enabled_by_default(validator_id: str) -> bool:
    """Whether a validator runs when ``.krmcheck.yaml`` does not name it."""
    return bool(getattr(VALIDATORS.get(validator_id), "enabled_by_default", True))
