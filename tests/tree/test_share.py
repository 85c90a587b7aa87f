"""Shares (copies made as they are looked into) and parsing each text once."""

from __future__ import annotations

import pytest

from krmcheck.tree import load
from krmcheck.tree.node import Mapping, Scalar, Sequence
from krmcheck.tree.origin import Origin

O1, O2 = Origin("a.yaml", 1, 1), Origin("b.yaml", 2, 3)


def tree() -> Mapping:
    return Mapping({"spec": Mapping({"items": Sequence([Scalar(1, O1), Mapping({"x": Scalar("y", O1)}, O1)], O1)},
                                    O1)}, O1)


def test_a_share_changes_without_touching_its_source_or_other_shares() -> None:
    source = tree()
    a, b = source.share(), source.share()
    items = a.items["spec"].items["items"]  # looked into: copied along this path only
    items.items.append(Scalar(2, O2))
    items.items[1].items["x"].set("z", O2)
    assert a.to_data() == {"spec": {"items": [1, {"x": "z"}, 2]}}
    assert source.to_data() == b.to_data() == {"spec": {"items": [1, {"x": "y"}]}}
    assert items.items[1].items["x"].trail == (O1,)  # the writer it replaced is kept
    assert source.items["spec"].items["items"].items[1].items["x"].origin == O1


def test_a_share_of_a_share_not_yet_looked_into_reads_the_first_source() -> None:
    source = tree()
    first = source.share()
    second = first.share()
    first.items["spec"].items["new"] = Scalar(True, O2)
    assert second.to_data() == source.to_data()
    assert "new" not in second.items["spec"].items


def test_a_share_keeps_origins_and_trails() -> None:
    source = tree()
    source.items["spec"].rewrite(O2)
    shared = source.share()
    assert (shared.origin, shared.items["spec"].origin, shared.items["spec"].trail) == (O1, O2, (O1,))


def test_replacing_a_shares_items_wholesale_is_seen() -> None:
    shared = tree().share()
    shared.items = {"only": Scalar(1, O2)}
    assert shared.to_data() == {"only": 1}


def test_a_text_is_parsed_once_and_each_caller_gets_its_own_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = load.iter_documents

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(load, "iter_documents", counted)
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: once-only\n"
    first = load.load_documents(text, "share/cm.yaml")
    first[0].items["metadata"].items["name"].set("changed", O2)
    second = load.load_documents(text, "share/cm.yaml")
    assert calls == ["share/cm.yaml"]
    assert second[0].to_data()["metadata"]["name"] == "once-only"
    assert second[0].items["metadata"].items["name"].origin == Origin("share/cm.yaml", 4, 3)
    load.load_documents(text + "data: {}\n", "share/cm.yaml")  # new text: parsed again
    assert len(calls) == 2


def test_a_text_that_does_not_parse_fails_every_time() -> None:
    for _ in range(2):
        with pytest.raises(load.LoadError) as e:
            load.load_documents("a: [\n", "share/bad.yaml")
        assert e.value.path == "share/bad.yaml" and "invalid YAML" in e.value.message


def copied(node: Mapping | Sequence) -> bool:
    """Whether a share has copied its items yet (reads the slot itself)."""
    try:
        type(node).__dict__["items"].__get__(node, type(node))
    except AttributeError:
        return False
    return True


def test_a_share_copies_only_what_is_looked_into() -> None:
    source = Mapping({"a": Mapping({"deep": Mapping({})}), "b": Mapping({"deep": Mapping({})})})
    shared = source.share()
    assert not copied(shared)
    assert shared.to_data() == source.to_data() and not copied(shared)  # reading data copies nothing
    a = shared.items["a"]
    assert copied(shared) and not copied(a)
    deep = a.items["deep"]
    assert copied(a) and not copied(deep) and not copied(shared.items["b"])
