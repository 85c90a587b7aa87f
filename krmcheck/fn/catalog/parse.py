"""A catalog file read into the model: validated against ``schema.json``
with errors at the file's lines."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from krmcheck.fn.catalog.model import Catalog, Container, Function, Platform, Source, Version
from krmcheck.resource.errors import BuildError
from krmcheck.tree import fieldpath
from krmcheck.tree.load import LoadError, load_documents
from krmcheck.tree.node import Mapping, Node, Scalar, Sequence as SeqNode
from krmcheck.tree.origin import Origin

if TYPE_CHECKING:  # imported where used: validation is the first to need it
    import jsonschema

# Values that must stay text although they may look like numbers (a digest of digits).
_STRING_KEYS = frozenset({"sha256", "name", "bin", "uri", "image", "group", "kind"})


def parse(data: bytes, source: Source) -> Catalog:
    """A catalog from the bytes of its file; errors at the file's lines."""
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    try:
        docs = load_documents(text, source.display, by="catalog")
    except LoadError as e:
        raise BuildError(e.message, Origin(e.path, e.line, e.col)) from None
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        at = docs[1].origin if len(docs) > 1 else (docs[0].origin if docs else Origin(source.display, 1, 1))
        raise BuildError(f"catalog {source.display} must hold exactly one Catalog object", at)
    _validate(docs[0], source.display)
    return _catalog(docs[0], source)


# --- validation --------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    import jsonschema

    schema = json.loads(Path(__file__).with_name("schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def _validate(doc: Mapping, display: str) -> None:
    from krmcheck.schemas import errors as schema_errors

    errors = [(schema_errors.error_node(doc, e), e) for e in _validator().iter_errors(_data(doc))]
    if not errors:
        return
    errors.sort(key=lambda pair: (pair[0].origin.line, pair[0].origin.col))
    node, error = errors[0]
    where = fieldpath.dotted(error.absolute_path) or "the document"
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    raise BuildError(f"invalid catalog {display}: {where}: {_message(error)}{more}", node.origin)


def _data(node: Node) -> Any:
    """Plain data to validate; strings where the schema wants text although
    the YAML spelling looks like a number (``sha256: 0123...``)."""
    if isinstance(node, Mapping):
        return {k: (v.as_string() if k in _STRING_KEYS and isinstance(v, Scalar)
                    and v.value is not None and not isinstance(v.value, bool) else _data(v))
                for k, v in node.items.items()}
    if isinstance(node, SeqNode):
        return [_data(v) for v in node.items]
    return node.to_data()


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "pattern" and list(error.absolute_path)[-1:] == ["sha256"]:
        return f"{error.instance!r} is not a sha256 digest (64 hexadecimal digits)"
    if error.validator == "additionalProperties":
        from krmcheck.schemas.errors import unexpected_keys

        allowed = sorted(error.schema.get("properties", {})) if isinstance(error.schema, dict) else []
        extra = unexpected_keys(error)
        return f"unknown field {', '.join(repr(k) for k in extra)} (known: {', '.join(allowed)})"
    if error.validator == "minProperties" and list(error.absolute_path)[-1:] == ["runtime"]:
        return "a runtime needs container, exec or both"
    return error.message


# --- building the model ------------------------------------------------------------------

def _catalog(doc: Mapping, source: Source) -> Catalog:
    md = doc.mapping("metadata")
    name = md.value("name") if md is not None else None
    spec = doc.mapping("spec")
    seq = spec.sequence("krmFunctions") if spec is not None else None
    functions = tuple(_function(n) for n in (seq.items if seq is not None else []) if isinstance(n, Mapping))
    return Catalog(str(name or ""), str(doc.value("kind")), functions, source, doc.origin)


def _function(node: Mapping) -> Function:
    names = node.mapping("names")
    seq = node.sequence("versions")
    versions = tuple(_version(v) for v in (seq.items if seq is not None else []) if isinstance(v, Mapping))
    return Function(_text(node, "group"), _text(names, "kind") if names else "", _text(node, "publisher"),
                    _text(node, "description"), versions, node.origin)


def _version(node: Mapping) -> Version:
    runtime = node.mapping("runtime")
    container = runtime.mapping("container") if runtime is not None else None
    exec_node = runtime.mapping("exec") if runtime is not None else None
    platforms = exec_node.sequence("platforms") if exec_node is not None else None
    return Version(_text(node, "name"), _container(container) if container is not None else None,
                   tuple(_platform(p) for p in (platforms.items if platforms else []) if isinstance(p, Mapping)),
                   node.origin)


def _container(node: Mapping) -> Container:
    sha = _text(node, "sha256")
    return Container(_text(node, "image"), _digest(sha) if sha else None,
                     node.value("requireNetwork") is True, node.value("requireStorageMount") is True,
                     node.origin)


def _platform(node: Mapping) -> Platform:
    return Platform(_text(node, "os"), _text(node, "arch"), _text(node, "bin"), _text(node, "uri"),
                    _digest(_text(node, "sha256")), node.origin)


def _text(node: Mapping, key: str) -> str:
    child = node.items.get(key)
    return child.as_string() if isinstance(child, Scalar) else ""


def _digest(text: str) -> str:
    return text.lower().removeprefix("sha256:")
