"""Grouping roots by what they share, and splitting the groups into shards."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from krmcheck import discover
from krmcheck.cli import main, parse_check
from krmcheck.shard import Shard, balance, groups, parse_shard, select, worker_batches

PROJECT = Path(__file__).resolve().parent.parent
DEMO = PROJECT / "fixtures" / "gitops-demo"


def write(top: Path, rel: str, text: str) -> None:
    path = top / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def overlay(top: Path, rel: str, *includes: str, components: tuple[str, ...] = ()) -> Path:
    lines = ["resources:"] + [f"- {i}" for i in includes] or ["resources: []"]
    if components:
        lines += ["components:"] + [f"- {c}" for c in components]
    write(top, f"{rel}/kustomization.yaml", "\n".join(lines) + "\n")
    return (top / rel).resolve()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Three apps: a and b share a component; c stands alone with three
    overlays; d is one overlay over its own base."""
    write(tmp_path, "components/sidecar/kustomization.yaml",
          "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n")
    for app in ("a", "b", "c", "d"):
        write(tmp_path, f"{app}/base/kustomization.yaml", "resources: []\n")
    overlay(tmp_path, "a/prod", "../base", components=("../../components/sidecar",))
    overlay(tmp_path, "b/prod", "../base", components=("../../components/sidecar",))
    for env in ("dev", "prod", "staging"):
        overlay(tmp_path, f"c/{env}", "../base")
    overlay(tmp_path, "d/prod", "../base")
    return tmp_path.resolve()


def roots_of(top: Path) -> list[Path]:
    return discover.default_roots(discover.graph(discover.find_kustomizations([top])))


def names(top: Path, paths: list[Path]) -> list[str]:
    return [p.relative_to(top).as_posix() for p in paths]


# --- K/N ---------------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [("1/1", Shard(1, 1)), ("2/4", Shard(2, 4)),
                                           (" 3 / 3 ", Shard(3, 3))])
def test_parse_shard_reads_k_of_n(text: str, expected: Shard) -> None:
    assert parse_shard(text) == expected
    assert str(expected) == f"{expected.number}/{expected.total}"


@pytest.mark.parametrize("text,fragment", [
    ("0/2", "between 1 and 2"), ("3/2", "between 1 and 2"), ("1/0", "between 1 and 10000"),
    ("2", "not K/N"), ("a/b", "not K/N"), ("-1/2", "not K/N"), ("1/2/3", "not K/N"),
])
def test_parse_shard_rejects_bad_values(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        parse_shard(text)


@pytest.mark.parametrize("value", ["0/3", "x", "4/3"])
def test_bad_shard_is_a_usage_error(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--shard", value, "."])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--shard" in err and value in err


def test_shard_option_reaches_the_runner() -> None:
    assert parse_check(["--shard", "2/3"]).shard == Shard(2, 3)
    assert parse_check([]).shard is None


# --- groups ------------------------------------------------------------------------

def test_roots_sharing_a_base_or_component_form_one_group(repo: Path) -> None:
    found = [names(repo, g) for g in groups(roots_of(repo))]
    assert found == [["a/prod", "b/prod"], ["c/dev", "c/prod", "c/staging"], ["d/prod"]]


def test_sharing_a_plain_file_does_not_group(tmp_path: Path) -> None:
    # Only kustomization directories are rendered and cached; a file read by
    # two roots is cheap to read twice.
    write(tmp_path, "common/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n")
    one = overlay(tmp_path, "one", "../common/ns.yaml")
    two = overlay(tmp_path, "two", "../common/ns.yaml")
    assert groups([one, two]) == [[one], [two]]


def test_a_base_checked_as_a_root_joins_its_overlays(repo: Path) -> None:
    every = discover.all_roots(discover.graph(discover.find_kustomizations([repo])))
    found = [names(repo, g) for g in groups(every)]
    assert ["d/base", "d/prod"] in found
    assert ["a/base", "a/prod", "b/base", "b/prod"] in found


def test_groups_follow_includes_through_several_levels(tmp_path: Path) -> None:
    write(tmp_path, "base/kustomization.yaml", "resources: []\n")
    overlay(tmp_path, "mid", "../base")
    first = overlay(tmp_path, "first", "../mid")
    second = overlay(tmp_path, "second", "../base")
    assert groups([second, first]) == [[first, second]]


# --- shards ------------------------------------------------------------------------

def test_balance_puts_the_largest_part_first_into_the_emptiest_bin() -> None:
    p = [Path(n) for n in ("/r/a", "/r/b", "/r/c", "/r/d", "/r/e", "/r/f")]
    parts = [[p[0]], [p[1], p[2], p[3]], [p[4], p[5]]]
    # 3 roots -> bin 1; 2 roots -> bin 2; 1 root -> bin 2 (2 < 3)
    assert balance(parts, 2) == [[p[1], p[2], p[3]], [p[0], p[4], p[5]]]


def test_balance_breaks_ties_by_name_and_bin_number() -> None:
    a, b, c = Path("/r/a"), Path("/r/b"), Path("/r/c")
    assert balance([[c], [a], [b]], 2) == [[a, c], [b]]
    assert balance([[c], [b], [a]], 4) == [[a], [b], [c], []]


def test_shards_cover_every_root_once_and_keep_groups_whole(repo: Path) -> None:
    roots = roots_of(repo)
    for count in (1, 2, 3, 5):
        parts = [select(roots, Shard(k, count)) for k in range(1, count + 1)]
        assert sorted(r for part in parts for r in part) == sorted(roots)
        for group in groups(roots):
            assert sum(1 for part in parts if set(group) & set(part)) == 1


def test_two_shards_split_the_example_repository(repo: Path) -> None:
    roots = roots_of(repo)
    assert names(repo, select(roots, Shard(1, 2))) == ["c/dev", "c/prod", "c/staging"]
    assert names(repo, select(roots, Shard(2, 2))) == ["a/prod", "b/prod", "d/prod"]


def test_a_shard_past_the_number_of_groups_is_empty(repo: Path) -> None:
    assert select(roots_of(repo), Shard(4, 4)) == []


def test_the_split_does_not_depend_on_the_order_roots_arrive_in(repo: Path) -> None:
    roots = roots_of(repo)
    for k in (1, 2, 3):
        assert (sorted(select(roots, Shard(k, 3)))
                == sorted(select(list(reversed(roots)), Shard(k, 3))))


def test_select_keeps_the_order_it_was_given(repo: Path) -> None:
    roots = list(reversed(roots_of(repo)))
    chosen = select(roots, Shard(1, 2))
    assert chosen == [r for r in roots if r in chosen]


def test_a_shard_checks_only_its_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    top = tmp_path / "gitops-demo"
    shutil.copytree(DEMO, top)
    monkeypatch.chdir(top)
    # The shared component ties all four overlays of the demo into one group.
    assert main(["--shard", "1/2", "."]) == 1
    assert "in 4 roots" in capsys.readouterr().out
    assert main(["--shard", "2/2", "."]) == 0
    assert "in 0 roots" in capsys.readouterr().out


# --- worker batches ----------------------------------------------------------------

def test_worker_batches_keep_small_groups_whole(repo: Path) -> None:
    batches = [names(repo, b) for b in worker_batches(roots_of(repo), 2)]
    assert batches == [["c/dev", "c/prod", "c/staging"], ["a/prod", "b/prod", "d/prod"]]


def test_worker_batches_cut_groups_only_past_a_fair_share(repo: Path) -> None:
    # 6 roots, 3 workers: c's three overlays are one more than a fair share of
    # 2, so c/base is rendered in two workers rather than one worker doing 3.
    batches = [names(repo, b) for b in worker_batches(roots_of(repo), 3)]
    assert batches == [["a/prod", "b/prod"], ["c/dev", "c/prod"], ["c/staging", "d/prod"]]


def test_worker_batches_cut_a_group_larger_than_a_fair_share(tmp_path: Path) -> None:
    write(tmp_path, "components/common/kustomization.yaml",
          "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n")
    roots = [overlay(tmp_path, f"app{i}", components=("../components/common",)) for i in range(6)]
    assert len(groups(roots)) == 1
    batches = worker_batches(roots, 3)
    assert [names(tmp_path.resolve(), b) for b in batches] == [
        ["app0", "app1"], ["app2", "app3"], ["app4", "app5"]]


def test_worker_batches_never_outnumber_the_roots(repo: Path) -> None:
    assert len(worker_batches(roots_of(repo), 64)) == 6
    assert worker_batches([], 4) == []
