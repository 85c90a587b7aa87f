"""The string formats the API server checks in built-in kinds, by the names
``field_rules.yaml`` gives them, and resource quantities.

Each format is a function from a value to what is wrong with it (None when
nothing is). They follow k8s.io/apimachinery/pkg/util/validation (DNS-1123
labels and subdomains, IANA service names, config keys, environment
variable names, qualified names, label values, percentages) and the few
checks of pkg/apis/*/validation that are formats too (path segments,
relative paths, Ingress hosts and paths).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL = re.compile(_LABEL)
_DNS1123_SUBDOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_DNS1035_LABEL = re.compile("[a-z]([-a-z0-9]*[a-z0-9])?")
_WILDCARD_SUBDOMAIN = re.compile(rf"\*\.{_LABEL}(\.{_LABEL})*")
_QUALIFIED = re.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_PORT_NAME = re.compile("[-a-z0-9]+")
_CONFIG_KEY = re.compile("[-._a-zA-Z0-9]+")
_ENV_NAME = re.compile("[-._a-zA-Z][-._a-zA-Z0-9]*")
_PERCENT = re.compile("[0-9]+%")
_IPV4 = re.compile(r"\d{1,3}(\.\d{1,3}){3}")

Check = Callable[[str], "str | None"]

# A value written to be replaced before anything applies it: a ${VAR} or
# {{ expression }} some tool substitutes, a placeholder for people,
# <your domain> or __INGRESS_HOST__ (documentation examples), or SOPS
# ciphertext (ENC[AES256_GCM,data:...]: a host or a DNS name a repository
# encrypts, which the decryption that comes first turns into the value).
# Its format is not judged: what the value will be is not known yet.
_TO_BE_REPLACED = re.compile(r"\$\{[^{}]*\}|\{\{.*?\}\}|<[^<>\s][^<>]*>|__[A-Z][A-Z0-9_]*__|\AENC\[[A-Z0-9_]+,data:")


def to_be_replaced(value: str) -> bool:
    return _TO_BE_REPLACED.search(value) is not None


def dns1123_label(value: str) -> str | None:
    if len(value) > 63:
        return "must be at most 63 characters"
    if not _DNS1123_LABEL.fullmatch(value):
        return ("must be lowercase letters, digits and '-', starting and ending with a letter or digit "
                "(a DNS-1123 label)")
    return None


def dns1123_subdomain(value: str) -> str | None:
    if len(value) > 253:
        return "must be at most 253 characters"
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        return ("must be lowercase letters, digits, '-' and '.', starting and ending with a letter or "
                "digit (a DNS-1123 subdomain)")
    return None


def dns1035_label(value: str) -> str | None:
    if len(value) > 63:
        return "must be at most 63 characters"
    if not _DNS1035_LABEL.fullmatch(value):
        return ("must be lowercase letters, digits and '-', starting with a letter and ending with a "
                "letter or digit (a DNS-1035 label)")
    return None


def iana_svc_name(value: str) -> str | None:
    """A port name (IANA_SVC_NAME, RFC 6335, lowercase only)."""
    if len(value) > 15:
        return "must be at most 15 characters"
    if not _PORT_NAME.fullmatch(value):
        return "must be lowercase letters, digits and '-'"
    if not re.search("[a-z]", value):
        return "must contain at least one letter"
    if "--" in value:
        return "must not contain two '-' in a row"
    if value.startswith("-") or value.endswith("-"):
        return "must not begin or end with '-'"
    return None


def _dot_prefix(value: str) -> str | None:
    if value in (".", ".."):
        return f"must not be {value!r}"
    if value.startswith(".."):
        return "must not start with '..'"
    return None


def config_key(value: str) -> str | None:
    """A key of a ConfigMap's or Secret's data."""
    if len(value) > 253:
        return "must be at most 253 characters"
    if not _CONFIG_KEY.fullmatch(value):
        return "must be letters, digits, '-', '_' and '.'"
    return _dot_prefix(value)


def env_name(value: str) -> str | None:
    """An environment variable name before RelaxedEnvironmentVariableValidation."""
    if not _ENV_NAME.fullmatch(value):
        return "must be letters, digits, '_', '-' and '.', and must not start with a digit"
    return _dot_prefix(value)


def env_name_relaxed(value: str) -> str | None:
    """An environment variable name once RelaxedEnvironmentVariableValidation is on."""
    if not value:
        return "must not be empty"
    if any(not " " <= c <= "~" or c == "=" for c in value):
        return "must be printable ASCII characters other than '='"
    return None


def qualified_name(value: str) -> str | None:
    """A label key, an annotation key, a topology key: ``[prefix/]name``."""
    prefix, slash, name = value.rpartition("/")
    if slash and "/" in prefix:
        return "may contain at most one '/'"
    if slash and not prefix:
        return "the prefix before '/' must not be empty"
    if prefix and dns1123_subdomain(prefix):
        return f"the prefix {prefix!r} {dns1123_subdomain(prefix)}"
    if not name:
        return "the name part must not be empty"
    if len(name) > 63:
        return "the name part must be at most 63 characters"
    if not _QUALIFIED.fullmatch(name):
        return "the name part must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
    return None


def annotation_key(value: str) -> str | None:
    # the API server checks annotation keys lowercased
    return qualified_name(value.lower())


def label_value(value: str) -> str | None:
    if len(value) > 63:
        return "must be at most 63 characters"
    if value and not _QUALIFIED.fullmatch(value):
        return "must be empty or letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
    return None


def path_segment(value: str) -> str | None:
    """A name that must be usable as one segment of a URL path."""
    if value in (".", ".."):
        return f"must not be {value!r}"
    if "/" in value or "%" in value:
        return "must not contain '/' or '%'"
    return None


def descending_path(value: str) -> str | None:
    """A path below a directory: relative, with no '..' element."""
    if value.startswith("/"):
        return "must be a relative path"
    if ".." in value.replace("\\", "/").split("/"):
        return "must not contain '..'"
    return None


def relative_path(value: str) -> str | None:
    """A file of a volume: a descending path that does not start with '..' either."""
    problem = descending_path(value)
    if problem is None and value.startswith(".."):
        return "must not start with '..'"
    return problem


def percent(value: str) -> str | None:
    """An int-or-string given as a string must be a percentage."""
    if not _PERCENT.fullmatch(value):
        return "must be a number followed by '%' (a string that is not a percentage is refused)"
    return None


def ingress_host(value: str) -> str | None:
    """The host of an Ingress rule: a DNS name or a wildcard, never an IP address."""
    if _IPV4.fullmatch(value) or ":" in value:
        return "must be a DNS name, not an IP address"
    return ingress_tls_host(value)


def ingress_tls_host(value: str) -> str | None:
    """A host of an Ingress's TLS section: a DNS-1123 subdomain (so also an
    IPv4 address) or a wildcard."""
    if "*" in value:
        if len(value) > 253:
            return "must be at most 253 characters"
        if not _WILDCARD_SUBDOMAIN.fullmatch(value):
            return "a wildcard host must be '*.' followed by a DNS-1123 subdomain"
        return None
    return dns1123_subdomain(value)


def ingress_prefix_path(value: str) -> str | None:
    """The path of an Exact or Prefix Ingress path."""
    if not value.startswith("/"):
        return "must be an absolute path (start with '/')"
    for bad in ("//", "/./", "/../", "%2f", "%2F"):
        if bad in value:
            return f"must not contain {bad!r}"
    for bad in ("/..", "/."):
        if value.endswith(bad):
            return f"must not end with {bad!r}"
    return None


def absolute_path(value: str) -> str | None:
    return None if value.startswith("/") else "must be an absolute path (start with '/')"


_CRON_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (("minute", 0, 59, {}), ("hour", 0, 23, {}), ("day of month", 1, 31, {}),
                ("month", 1, 12, {m: i for i, m in enumerate(
                    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}),
                ("day of week", 0, 6, {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}))
_CRON_DESCRIPTORS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_GO_DURATION = re.compile(r"([0-9]*\.?[0-9]+(ns|us|µs|ms|s|m|h))+")


def cron_schedule(value: str) -> str | None:
    """A CronJob schedule as robfig/cron's standard parser (five fields, or a
    descriptor) reads it. A schedule naming a time zone is not judged here."""
    if "TZ" in value:
        return None
    if value.startswith("@"):
        if value in _CRON_DESCRIPTORS:
            return None
        if value.startswith("@every ") and _GO_DURATION.fullmatch(value[len("@every "):]):
            return None
        return "is no known descriptor (@yearly, @monthly, @weekly, @daily, @hourly, @every DURATION)"
    fields = value.split()
    if len(fields) != 5:
        return f"must have exactly 5 fields (minute hour day-of-month month day-of-week), not {len(fields)}"
    for text, (name, low, high, names) in zip(fields, _CRON_FIELDS):
        for part in (p for p in text.split(",") if p):
            problem = _cron_range(part, low, high, names)
            if problem:
                return f"{name} {part!r}: {problem}"
    return None


def _cron_range(part: str, low: int, high: int, names: dict[str, int]) -> str | None:
    range_, _, step = part.partition("/")
    if "/" in step:
        return "has more than one '/'"
    if step and not (step.isdigit() and int(step) > 0):
        return "the step must be a positive number"
    bounds = range_.split("-")
    if bounds[0] in ("*", "?"):  # robfig/cron reads no further
        return None
    if len(bounds) > 2:
        return "has more than one '-'"
    numbers = []
    for bound in bounds:
        number = names.get(bound.lower()) if bound.lower() in names else (
            int(bound.lstrip("+")) if bound.lstrip("+").isdigit() else None)
        if number is None:
            return f"{bound!r} is not a number{' or a name' if names else ''}"
        numbers.append(number)
    if numbers[0] < low or numbers[-1] > high:
        return f"must be between {low} and {high}"
    if numbers[0] > numbers[-1]:
        return "the range starts after it ends"
    return None


FORMATS: dict[str, Check] = {
    "dns1123-label": dns1123_label,
    "dns1123-subdomain": dns1123_subdomain,
    "dns1035-label": dns1035_label,
    "iana-svc-name": iana_svc_name,
    "config-key": config_key,
    "env-name": env_name,
    "env-name-relaxed": env_name_relaxed,
    "qualified-name": qualified_name,
    "label-key": qualified_name,
    "annotation-key": annotation_key,
    "label-value": label_value,
    "path-segment": path_segment,
    "relative-path": relative_path,
    "descending-path": descending_path,
    "percent": percent,
    "ingress-host": ingress_host,
    "ingress-tls-host": ingress_tls_host,
    "ingress-prefix-path": ingress_prefix_path,
    "absolute-path": absolute_path,
    "cron-schedule": cron_schedule,
}


# -- quantities (k8s.io/apimachinery/pkg/api/resource) -------------------------

_QUANTITY = re.compile(r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?")
_SUFFIX = {"Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30, "Ti": Decimal(2) ** 40,
           "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60, "n": Decimal("1e-9"), "u": Decimal("1e-6"),
           "m": Decimal("1e-3"), "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"),
           "T": Decimal("1e12"), "P": Decimal("1e15"), "E": Decimal("1e18")}


def quantity(value: object) -> Decimal | None:
    """The value of a quantity (``500m``, ``1Gi``, ``2``, ``1e3``), or None
    when it is no quantity this parser is sure of."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    m = _QUANTITY.fullmatch(value.strip())
    if m is None:
        return None
    try:
        number = Decimal(m[1])
    except InvalidOperation:
        return None
    suffix = m[2] or ""
    if suffix[:1] in ("e", "E"):
        return number.scaleb(int(suffix[1:]))
    return number * _SUFFIX[suffix] if suffix else number
