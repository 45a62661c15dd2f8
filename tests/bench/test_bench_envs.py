"""The matched reasoning-gym pairs of ``bench/bench_envs.py``: both sides exist, and each side
scores its own reference answers as correct at the declared difficulty / config."""

from __future__ import annotations

import importlib.util
import statistics
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from verirl.envs import env_names, get_env


def _load_bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "bench_envs.py"
    spec = importlib.util.spec_from_file_location("bench_envs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load_bench()
PAIR_KEYS = sorted(bench.PAIRS)


def test_the_table_has_at_least_30_pairs_each_with_what_is_matched() -> None:
    assert len(PAIR_KEYS) >= 30
    for key, pair in bench.PAIRS.items():
        assert pair.matched.strip(), key
        assert isinstance(pair.config, dict), key
    assert not set(bench.PAIRS) & set(bench.DROPPED)
    assert all(reason.strip() for reason in bench.DROPPED.values())


@pytest.mark.parametrize(("ours", "theirs"), PAIR_KEYS, ids=[f"{o}-{t}" for o, t in PAIR_KEYS])
def test_our_side_verifies_its_reference_at_the_matched_difficulty(ours: str, theirs: str) -> None:
    assert ours in env_names()
    env = get_env(ours)
    difficulty = bench.PAIRS[(ours, theirs)].difficulty
    for seed in range(2):
        problem = env.generate(difficulty, seed)
        assert env.verify(problem, f"\\boxed{{{problem.answer}}}").correct, (ours, seed)


@pytest.mark.reasoning_gym
@pytest.mark.parametrize(("ours", "theirs"), PAIR_KEYS, ids=[f"{o}-{t}" for o, t in PAIR_KEYS])
def test_reasoning_gym_scores_its_own_reference_at_the_matched_config(
    ours: str, theirs: str
) -> None:
    reasoning_gym = pytest.importorskip(
        "reasoning_gym", reason="reasoning-gym is a bench-only dependency (the 'bench' extra)"
    )
    from reasoning_gym.factory import DATASETS

    assert theirs in DATASETS
    ds = reasoning_gym.create_dataset(theirs, size=2, seed=7, **bench.PAIRS[(ours, theirs)].config)
    for i in range(2):
        entry = ds[i]
        reference = bench.reasoning_gym_reference(theirs, entry)
        assert reference is not None, (theirs, i)
        assert ds.score_answer(answer=reference, entry=entry) == 1.0, (theirs, i, reference)


@pytest.mark.reasoning_gym
def test_graph_color_reference_is_scored_and_a_clash_is_not() -> None:
    reasoning_gym = pytest.importorskip(
        "reasoning_gym", reason="reasoning-gym is a bench-only dependency (the 'bench' extra)"
    )
    import json

    config = bench.PAIRS[("graph_coloring", "graph_color")].config
    ds = reasoning_gym.create_dataset("graph_color", size=1, seed=3, **config)
    entry = ds[0]
    assert entry["answer"] is None  # why the bench builds the reference from the metadata
    reference = bench.reasoning_gym_reference("graph_color", entry)
    assert ds.score_answer(answer=reference, entry=entry) == 1.0
    colouring = json.loads(reference)
    u, v = entry["metadata"]["puzzle"]["edges"][0]
    colouring[str(v)] = colouring[str(u)]  # the two ends of an edge share a colour
    assert ds.score_answer(answer=json.dumps(colouring), entry=entry) < 1.0


def test_a_pair_with_a_failed_reference_is_not_counted() -> None:
    side = {"rate": 100.0, "ref_failures": 0, "failed": [], "no_reference": 0}
    row = {"ours": dict(side, rate=50.0), "theirs": dict(side)}
    assert bench._ratio(row) == pytest.approx(0.5)
    assert bench._ratio({"ours": dict(side, ref_failures=1), "theirs": dict(side)}) is None
    assert bench._ratio({"ours": dict(side), "theirs": dict(side, ref_failures=2)}) is None
    assert bench._ratio({"ours": dict(side), "theirs": dict(side, no_reference=1)}) is None
    assert bench._ratio({"ours": dict(side)}) is None
    assert bench.geometric_mean([0.5, 2.0]) == pytest.approx(1.0)


def test_pair_ratio_is_the_median_of_the_per_repetition_ratios_and_the_summary_spread() -> None:
    def row(ours: list[float], theirs: list[float]) -> dict[str, Any]:
        sides = {}
        for key, rates in (("ours", ours), ("theirs", theirs)):
            sides[key] = {
                "rate": statistics.median(rates),
                "rates": rates,
                "ref_failures": 0,
                "failed": [],
                "no_reference": 0,
            }
        out: dict[str, Any] = {"env": "e", **sides}
        out["ratios"] = bench._ratios(out)
        out["ratio"] = statistics.median(out["ratios"])
        return out

    a = row([10.0, 30.0, 20.0], [10.0, 10.0, 10.0])  # ratios 1, 3, 2
    b = row([5.0, 5.0, 5.0], [10.0, 1.0, 5.0])  # ratios 0.5, 5, 1
    c = row([1.0, 1.0, 1.0], [4.0, 4.0, 4.0])  # ratios 0.25 each
    assert a["ratios"] == [1.0, 3.0, 2.0] and a["ratio"] == 2.0
    failed = dict(row([1.0], [1.0]), ratio=None)
    summary = bench.summarise([a, b, c, failed])
    assert summary["pair_count"] == 3
    assert summary["median_ratio"] == 1.0  # of 2, 1, 0.25
    assert summary["per_rep_median"] == [0.5, 3.0, 1.0]
    assert (summary["faster"], summary["slower"]) == (1, 1)


def test_rates_interleave_the_sides_and_reverse_the_order_on_odd_repetitions() -> None:
    calls: list[tuple[str, int]] = []

    def side(name: str) -> Any:
        def run_once(rep: int) -> int:
            calls.append((name, rep))
            return 1

        return run_once

    rates = bench._rates([side("ours"), side("theirs")], 1, 3, "cpu")
    assert calls == [
        ("ours", 0),
        ("theirs", 0),
        ("theirs", 1),
        ("ours", 1),
        ("ours", 2),
        ("theirs", 2),
    ]
    assert [len(r) for r in rates] == [3, 3]
