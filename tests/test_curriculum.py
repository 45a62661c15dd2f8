"""RLVE's adaptive difficulty (arXiv:2511.07317), static windows, env sampling, checkpoints.

Accuracy streams are hand-made; each expected window is worked out by hand in the comments from
the rule: count rollouts at d == h; when b ≥ τ_num check a/b ≥ τ_acc (h += 1), reset (a, b),
ℓ = max(ℓ, h − d_Δ + 1).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from verirl.curriculum import (
    EVAL_SEED_BASE,
    TRAIN_SEED_LIMIT,
    AdaptiveDifficulty,
    CurriculumConfig,
    Outcome,
    StaticWindow,
    Task,
    build_curriculum,
    effective_prompt_ratio,
    eval_seed,
)
from verirl.envs import get_env
from verirl.types import Problem, Rollout, Verdict

ARITH = ["addition", "multiplication", "chain_sum"]


def stream(env: str, difficulty: int, correct: int, wrong: int) -> list[tuple[str, int, bool]]:
    """``correct`` fully-correct and ``wrong`` wrong rollouts at one difficulty."""
    return [(env, difficulty, True)] * correct + [(env, difficulty, False)] * wrong


def rollout(env: str, difficulty: int, group: int, reward: float, correct: bool) -> Rollout:
    problem = Problem(env=env, difficulty=difficulty, seed=0, prompt="p", answer="1")
    return Rollout(
        problem, group, (1,), (2,), (-0.1,), "t", "stop", verdict=Verdict(reward, correct)
    )


# ---- the adaptive rule on hand-made streams ----------------------------------------------------
def test_paper_defaults_rise_at_116_of_128_not_115() -> None:
    # τ_num = 128, τ_acc = 0.9: 116/128 = 0.906 ≥ 0.9 rises; 115/128 = 0.898 does not.
    cur = AdaptiveDifficulty(["addition"])
    assert cur.window("addition") == (0, 0)
    assert cur.update(stream("addition", 0, 115, 13)) == []
    assert cur.window("addition") == (0, 0)
    assert cur.counters("addition") == (0, 0)  # checked and reset
    assert cur.update(stream("addition", 0, 116, 12)) == ["addition"]
    assert cur.window("addition") == (0, 1)


def test_rises_exactly_at_the_check_that_reaches_tau_num() -> None:
    cur = AdaptiveDifficulty(["addition"], tau_num=10)
    cur.update(stream("addition", 0, 9, 0))  # b = 9 < 10: no check yet
    assert cur.window("addition") == (0, 0)
    assert cur.counters("addition") == (9, 9)
    assert cur.update(stream("addition", 0, 1, 0)) == ["addition"]  # b = 10, a/b = 1.0
    assert cur.window("addition") == (0, 1)
    assert cur.counters("addition") == (0, 0)


def test_accuracy_089_does_not_rise_and_090_does() -> None:
    cur = AdaptiveDifficulty(["addition"], tau_num=100)
    cur.update(stream("addition", 0, 89, 11))  # 0.89 < 0.9
    assert cur.window("addition") == (0, 0)
    assert cur.metrics()["curriculum/addition/last_check_acc"] == pytest.approx(0.89)
    cur.update(stream("addition", 0, 90, 10))  # exactly 0.9 ≥ 0.9
    assert cur.window("addition") == (0, 1)


def test_counters_reset_after_a_failed_check() -> None:
    cur = AdaptiveDifficulty(["addition"], tau_num=100)
    cur.update(stream("addition", 0, 0, 100))  # check: 0/100, fails, reset
    assert cur.counters("addition") == (0, 0)
    # Without the reset this would check 60/160 = 0.375 and fail; with it b = 60 < 100.
    cur.update(stream("addition", 0, 60, 0))
    assert cur.counters("addition") == (60, 60)
    assert cur.window("addition") == (0, 0)
    cur.update(stream("addition", 0, 40, 0))  # 100/100
    assert cur.window("addition") == (0, 1)


def test_only_rollouts_at_h_count() -> None:
    cur = AdaptiveDifficulty(["addition"], tau_num=4)
    cur.update(stream("addition", 0, 4, 0))  # h 0 → 1
    cur.update(stream("addition", 1, 4, 0))  # h 1 → 2
    assert cur.window("addition") == (0, 2)
    cur.update(stream("addition", 0, 50, 0) + stream("addition", 1, 50, 0))  # below h
    cur.update(stream("addition", 3, 50, 0))  # above h (a stale or foreign difficulty)
    assert cur.counters("addition") == (0, 0)
    assert cur.window("addition") == (0, 2)
    # 3 correct at h plus 100 wrong below it: b = 4 at h, a/b = 3/4 < 0.9, no rise.
    cur.update(stream("addition", 2, 3, 1) + stream("addition", 1, 0, 100))
    assert cur.window("addition") == (0, 2)


def test_low_follows_when_the_window_exceeds_its_width() -> None:
    cur = AdaptiveDifficulty(["addition"], tau_num=1, window=4)
    expected = [(0, 1), (0, 2), (0, 3), (1, 4), (2, 5), (3, 6)]
    for h, want in enumerate(expected):
        cur.update([("addition", h, True)])
        assert cur.window("addition") == want
    narrow = AdaptiveDifficulty(["addition"], tau_num=1, window=2)
    for h in range(3):
        narrow.update([("addition", h, True)])
    assert narrow.window("addition") == (2, 3)


def test_at_most_one_level_per_update_and_envs_are_independent() -> None:
    cur = AdaptiveDifficulty(["addition", "chain_sum"], tau_num=10)
    # 1000 correct at h in one update: one check, h + 1, the surplus is discarded by the reset.
    raised = cur.update(stream("addition", 0, 1000, 0) + stream("chain_sum", 0, 8, 2))
    assert raised == ["addition"]
    assert cur.window("addition") == (0, 1)
    assert cur.counters("addition") == (0, 0)
    assert cur.window("chain_sum") == (0, 0)  # 8/10 = 0.8 failed its own check
    assert cur.counters("chain_sum") == (0, 0)


def test_initial_difficulty_sets_the_starting_window() -> None:
    # h0 = 5, d_Δ = 4 → window {2..5} (RLVE's code: levels d ≤ h with d > h − d_Δ).
    assert AdaptiveDifficulty(["addition"], initial_difficulty=5).window("addition") == (2, 5)
    assert AdaptiveDifficulty(["addition"], initial_difficulty=2).window("addition") == (0, 2)


def test_uses_the_fully_correct_flag_not_the_graded_reward() -> None:
    cur = AdaptiveDifficulty(["addition"], tau_num=10)
    # reward 0.95 but not fully correct: accuracy 0/10
    cur.update([rollout("addition", 0, g, 0.95, False) for g in range(10)])
    assert cur.window("addition") == (0, 0)
    assert cur.metrics()["curriculum/addition/last_check_acc"] == 0.0
    cur.update([rollout("addition", 0, g, 1.0, True) for g in range(10)])
    assert cur.window("addition") == (0, 1)
    with pytest.raises(ValueError, match="graded reward"):
        cur.update([("addition", 1, 0.5)])


def test_update_errors_name_the_problem() -> None:
    cur = AdaptiveDifficulty(["addition"], tau_num=10)
    with pytest.raises(KeyError, match="'nope'"):
        cur.update([("nope", 0, True)])
    problem = Problem(env="addition", difficulty=0, seed=0, prompt="p", answer="1")
    with pytest.raises(ValueError, match="unscored"):
        cur.update([Rollout(problem, 0, (), (), (), "", "stop")])
    with pytest.raises(TypeError, match="list"):
        cur.update([["addition", 0, True]])  # type: ignore[list-item]
    assert cur.counters("addition") == (0, 0)  # nothing was counted by the failed updates
    cur.update([Outcome("addition", 0, True)])
    assert cur.counters("addition") == (1, 1)


def test_constructor_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="tau_acc"):
        AdaptiveDifficulty(["addition"], tau_acc=1.5)
    with pytest.raises(ValueError, match="tau_num"):
        AdaptiveDifficulty(["addition"], tau_num=0)
    with pytest.raises(ValueError, match="twice"):
        AdaptiveDifficulty(["addition", "addition"])
    with pytest.raises(ValueError, match=r"0 <= low <= high, got \[4, 2\]"):
        StaticWindow(["addition"], low=4, high=2)


# ---- sampling -----------------------------------------------------------------------------------
def test_same_seed_same_tasks_and_seeds_come_from_the_counter() -> None:
    a = AdaptiveDifficulty(ARITH, initial_difficulty=3, seed=7)
    b = AdaptiveDifficulty(ARITH, initial_difficulty=3, seed=7)
    c = AdaptiveDifficulty(ARITH, initial_difficulty=3, seed=8)
    ta = a.next_tasks(30) + a.next_tasks(20)
    assert ta == b.next_tasks(50)
    assert [t.seed for t in ta] == list(range(50))
    assert [(t.env, t.difficulty) for t in c.next_tasks(50)] != [(t.env, t.difficulty) for t in ta]
    assert a.seed_counter == 50


def test_sample_generates_the_tasks_problems() -> None:
    a = AdaptiveDifficulty(ARITH, initial_difficulty=2, seed=3)
    b = AdaptiveDifficulty(ARITH, initial_difficulty=2, seed=3)
    problems = a.sample(6)
    for task, problem in zip(b.next_tasks(6), problems, strict=True):
        assert (problem.env, problem.difficulty, problem.seed) == (
            task.env,
            task.difficulty,
            task.seed,
        )
        assert problem == get_env(task.env).generate(task.difficulty, task.seed)


def test_preview_shows_the_next_problems_and_hands_none_out() -> None:
    a = AdaptiveDifficulty(ARITH, initial_difficulty=2, seed=3)
    first = a.preview(5)
    assert a.preview(5) == first  # nothing was handed out
    assert a.sample(5) == first  # the problems sample gives next
    assert a.preview(3) != first[:3]  # now the stream is past them


def test_generation_failure_names_env_difficulty_and_seed() -> None:
    with pytest.raises(RuntimeError, match=r"'nope'.*difficulty 2, seed 5"):
        Task("nope", 2, 5).generate()


def test_static_window_samples_only_inside_and_never_moves() -> None:
    cur = StaticWindow(ARITH, low=3, high=7, windows={"chain_sum": (0, 1)}, seed=1)
    tasks = cur.next_tasks(3000)
    by_env = {e: {t.difficulty for t in tasks if t.env == e} for e in ARITH}
    assert by_env["addition"] == set(range(3, 8))  # every level of [3, 7], nothing else
    assert by_env["multiplication"] == set(range(3, 8))
    assert by_env["chain_sum"] == {0, 1}
    assert cur.update(stream("addition", 7, 500, 0)) == []
    assert cur.window("addition") == (3, 7)
    assert cur.metrics()["curriculum/addition/acc_at_h"] == 1.0


def test_difficulty_is_uniform_in_the_window() -> None:
    cur = AdaptiveDifficulty(["addition"], initial_difficulty=4, seed=2)  # window {1..4}
    counts = Counter(t.difficulty for t in cur.next_tasks(8000))
    assert set(counts) == {1, 2, 3, 4}
    for level in range(1, 5):  # binomial std sqrt(.25·.75/8000) ≈ 0.005
        assert abs(counts[level] / 8000 - 0.25) < 0.025


def test_environment_sampling_uniform_and_weighted() -> None:
    uniform = Counter(t.env for t in AdaptiveDifficulty(ARITH, seed=4).next_tasks(6000))
    for env in ARITH:  # std ≈ 0.006
        assert abs(uniform[env] / 6000 - 1 / 3) < 0.03
    weighted = AdaptiveDifficulty(ARITH, weights={"addition": 6.0, "chain_sum": 3.0}, seed=4)
    counts = Counter(t.env for t in weighted.next_tasks(6000))
    # weights 6 : 1 (unnamed → 1.0) : 3 → probabilities 0.6, 0.1, 0.3
    for env, p in {"addition": 0.6, "multiplication": 0.1, "chain_sum": 0.3}.items():
        assert abs(counts[env] / 6000 - p) < 0.03
    with pytest.raises(ValueError, match="'nope'"):
        AdaptiveDifficulty(ARITH, weights={"nope": 1.0})
    with pytest.raises(ValueError, match="'addition'"):
        AdaptiveDifficulty(ARITH, weights={"addition": 0.0})


def test_training_and_evaluation_seeds_are_disjoint() -> None:
    assert eval_seed(0) == EVAL_SEED_BASE >= TRAIN_SEED_LIMIT
    assert eval_seed(5) == EVAL_SEED_BASE + 5
    with pytest.raises(ValueError):
        eval_seed(-1)
    cur = AdaptiveDifficulty(["addition"])
    state = cur.state_dict()
    state["seed_counter"] = TRAIN_SEED_LIMIT - 2
    cur.load_state_dict(state)
    assert [t.seed for t in cur.next_tasks(2)] == [TRAIN_SEED_LIMIT - 2, TRAIN_SEED_LIMIT - 1]
    with pytest.raises(RuntimeError, match="exhausted"):
        cur.next_tasks(1)


# ---- checkpoints ----------------------------------------------------------------------------
def _trained(seed: int) -> AdaptiveDifficulty:
    cur = AdaptiveDifficulty(ARITH, tau_num=8, seed=seed)
    for _ in range(6):
        tasks = cur.next_tasks(40)
        cur.update([(t.env, t.difficulty, t.seed % 10 != 0) for t in tasks])
    return cur


def test_state_dict_round_trip_gives_identical_future() -> None:
    original = _trained(seed=11)
    assert any(original.window(e)[1] > 0 for e in ARITH)  # the state is not the initial one
    state = json.loads(json.dumps(original.state_dict()))  # through plain JSON
    restored = AdaptiveDifficulty(ARITH, tau_num=8, seed=999)
    restored.load_state_dict(state)
    assert restored.metrics() == original.metrics()
    for _ in range(4):
        t1, t2 = original.next_tasks(50), restored.next_tasks(50)
        assert t1 == t2
        results = [(t.env, t.difficulty, t.seed % 7 != 0) for t in t1]
        assert original.update(results) == restored.update(results)
    assert restored.state_dict() == original.state_dict()


def test_static_round_trip_and_mismatched_states_are_refused() -> None:
    static = StaticWindow(ARITH, low=0, high=5, seed=2)
    static.next_tasks(10)
    static.update(stream("addition", 5, 3, 1))
    again = StaticWindow(ARITH, low=0, high=5, seed=0)
    again.load_state_dict(json.loads(json.dumps(static.state_dict())))
    assert again.next_tasks(20) == static.next_tasks(20)
    assert again.counters("addition") == (3, 4)
    with pytest.raises(ValueError, match="kind 'static'"):
        AdaptiveDifficulty(ARITH).load_state_dict(static.state_dict())
    with pytest.raises(ValueError, match="static window"):
        StaticWindow(ARITH, low=0, high=1).load_state_dict(static.state_dict())
    with pytest.raises(ValueError, match="environment list"):
        AdaptiveDifficulty(ARITH[:2]).load_state_dict(_trained(1).state_dict())
    with pytest.raises(ValueError, match="other settings"):  # saved with window 4, loaded with 2
        AdaptiveDifficulty(ARITH, tau_num=8, window=2).load_state_dict(_trained(1).state_dict())


# ---- metrics ---------------------------------------------------------------------------------
def test_metrics_values() -> None:
    cur = AdaptiveDifficulty(["addition", "chain_sum"], tau_num=4)
    # addition: 4/4 at h=0 → h=1. chain_sum: 1 correct, 1 wrong at h=0 → b=2, no check.
    # Groups: g0 = addition rewards (1,1,1,1) all equal; g1 = chain_sum rewards (1, -1) mixed.
    rolls = [rollout("addition", 0, 0, 1.0, True) for _ in range(4)]
    rolls += [rollout("chain_sum", 0, 1, 1.0, True), rollout("chain_sum", 0, 1, -1.0, False)]
    cur.next_tasks(3)
    cur.update(rolls)
    m = cur.metrics()
    assert m["curriculum/addition/h"] == 1.0 and m["curriculum/addition/low"] == 0.0
    assert m["curriculum/addition/count_at_h"] == 0.0
    assert "curriculum/addition/acc_at_h" not in m  # no rollout at the new h yet
    assert m["curriculum/chain_sum/count_at_h"] == 2.0
    assert m["curriculum/chain_sum/acc_at_h"] == 0.5
    assert m["curriculum/mean_h"] == 0.5
    assert m["curriculum/max_h"] == 1.0
    assert m["curriculum/expected_difficulty"] == 0.25  # ½·(0+1)/2 + ½·0
    assert m["curriculum/seed_counter"] == 3.0
    assert m["curriculum/last/effective_prompt_ratio"] == 0.5
    assert m["curriculum/last/accuracy"] == pytest.approx(5 / 6)


def test_effective_prompt_ratio() -> None:
    groups = [[1.0, 1.0], [0.0, 1.0], [0.5, 0.5, 0.5], [-1.0, 0.2], [1.0]]
    assert effective_prompt_ratio(groups) == 2 / 5
    assert effective_prompt_ratio([]) == 0.0


# ---- configuration ---------------------------------------------------------------------------
def test_config_defaults_reproduce_rlve_and_build() -> None:
    cfg = CurriculumConfig(environments=ARITH)
    assert (cfg.kind, cfg.tau_acc, cfg.tau_num, cfg.window, cfg.initial_difficulty) == (
        "adaptive",
        0.9,
        128,
        4,
        0,
    )
    assert cfg.weights is None
    cur = build_curriculum(cfg, seed=5)
    assert isinstance(cur, AdaptiveDifficulty) and cur.environments == tuple(ARITH)
    assert cur.next_tasks(10) == AdaptiveDifficulty(ARITH, seed=5).next_tasks(10)
    static = build_curriculum(CurriculumConfig(kind="static", environments=ARITH, static_high=7))
    assert isinstance(static, StaticWindow) and static.window("chain_sum") == (0, 7)
    for name, field in CurriculumConfig.model_fields.items():
        assert field.description and len(field.description) > 20, name


def test_config_errors_name_what_is_wrong() -> None:
    with pytest.raises(ValidationError, match="'no_such_env'"):
        CurriculumConfig(environments=["addition", "no_such_env"])
    with pytest.raises(ValidationError, match="tau_numm"):
        CurriculumConfig(tau_numm=3)
    with pytest.raises(ValidationError, match="'chain_sum'"):
        CurriculumConfig(environments=["addition"], weights={"chain_sum": 1.0})
    with pytest.raises(ValidationError, match="static_low"):
        CurriculumConfig(kind="static", static_low=5, static_high=2)
    with pytest.raises(ValidationError, match="tau_acc"):
        CurriculumConfig(tau_acc=0.0)


# ---- the simulation ----------------------------------------------------------------------
def _load_simulation():
    path = Path(__file__).resolve().parents[1] / "bench" / "simulate_curriculum.py"
    spec = importlib.util.spec_from_file_location("simulate_curriculum", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_simulation_adaptive_keeps_more_prompts_informative_than_static() -> None:
    sim = _load_simulation()
    results = sim.compare(
        steps=100,
        prompts=24,
        group_size=8,
        tau_num=32,
        learning_rate=0.02,
        slope=1.0,
        initial_skill=1.0,
        seed=0,
    )
    adaptive, easy, hard = results["adaptive"], results["static [0,1]"], results["static [0,100]"]
    # RLVE §2.6: with [0,1] the ratio collapses as the policy masters it; adaptive keeps it up.
    assert adaptive.mean_ratio_last(0.25) >= easy.mean_ratio_last(0.25) + 0.2
    assert easy.mean_ratio_last(0.25) < 0.5 * easy.ratios[0]
    assert adaptive.mean_ratio >= hard.mean_ratio + 0.2
    assert all(adaptive.mean_ratio > r.mean_ratio for n, r in results.items() if n != "adaptive")
    # the adaptive window followed the skill upwards
    assert min(high for _, high in adaptive.final_windows.values()) >= 4


def test_the_window_stops_at_the_environments_largest_difficulty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from verirl.envs import get_env

    monkeypatch.setattr(type(get_env("addition")), "max_difficulty", 1)
    cur = AdaptiveDifficulty(["addition"], tau_num=10)
    assert cur.update(stream("addition", 0, 10, 0)) == ["addition"]
    assert cur.window("addition") == (0, 1)
    assert cur.update(stream("addition", 1, 10, 0)) == []  # perfect, but 1 is the top
    assert cur.window("addition") == (0, 1)
    assert cur.counters("addition") == (0, 0)  # checked and reset all the same


def test_exclude_tags_leave_out_tagged_environments() -> None:
    from verirl.curriculum import CurriculumConfig

    every = CurriculumConfig().resolved_environments()
    no_proofs = CurriculumConfig(exclude_tags=["formal"]).resolved_environments()
    assert "coq_proofs" in every and "coq_proofs" not in no_proofs
    assert set(no_proofs) < set(every) and "addition" in no_proofs
    named = CurriculumConfig(environments=["coq_proofs"], exclude_tags=["formal"])
    assert named.resolved_environments() == ["coq_proofs"]  # an explicit list is kept
