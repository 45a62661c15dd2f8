"""Rule-based rewards: exact match, the rule judge (environment / math-verify)."""

from __future__ import annotations

import threading
from typing import Any

from verirl.envs import get_env
from verirl.rewards import REWARDS, RewardContext
from verirl.rewards.rule import JudgeParams, math_verify_equal, rule_judgement
from verirl.types import Problem


def _unregistered(answer: str) -> Problem:
    return Problem(env="dataset:math", difficulty=0, seed=0, prompt="q", answer=answer)


def test_exact_match_strips_by_default(make_rollouts: Any) -> None:
    problem = get_env("number_words").generate(0, 1)
    gold = problem.answer
    texts = [f"\\boxed{{{gold}}}", f"\\boxed{{ ${gold}$ }}", f"\\boxed{{{gold}.0}}", "none"]
    rollouts = make_rollouts(problem, texts)
    strict_source = REWARDS.get("exact_match").build({"normalize": "none"})
    strict = strict_source.score(rollouts, RewardContext())
    loose = REWARDS.get("exact_match").build({}).score(rollouts, RewardContext())
    assert [v.reward for v in strict] == [1.0, 0.0, 0.0, 0.0]
    assert [v.reward for v in loose] == [1.0, 1.0, 0.0, 0.0]
    # correct is the environment's verdict: "N.0" is right for number_words
    assert [v.correct for v in loose] == [True, True, True, False]
    assert loose[2].extra == {"exact_match": False, "rule_source": "env"}


def test_rule_reward_uses_the_environment_verifier(make_rollouts: Any) -> None:
    problem = get_env("date_offset").generate(2, 0)
    env = get_env("date_offset")
    texts = [f"\\boxed{{{f}}}" for f in env.equivalent_forms(problem)[:3]] + ["\\boxed{May 1}"]
    verdicts = REWARDS.get("rule").build({}).score(make_rollouts(problem, texts), RewardContext())
    assert [v.reward for v in verdicts] == [1.0, 1.0, 1.0, 0.0]
    assert all(v.extra["rule_source"] == "env" for v in verdicts)


def test_math_verify_fallback_for_unregistered_problems() -> None:
    half = _unregistered("\\frac{1}{2}")
    assert rule_judgement(half, "so \\boxed{0.5}").correct
    assert rule_judgement(half, "so \\boxed{\\dfrac12}").correct
    assert not rule_judgement(half, "so \\boxed{0.6}").correct
    assert not rule_judgement(half, "no box 0.5").correct
    j = rule_judgement(half, "\\boxed{0.5}", JudgeParams(fallback="exact_match"))
    assert (j.correct, j.source) == (False, "exact_match")
    long = "\\boxed{" + "1+" * 300 + "1}"
    assert not rule_judgement(_unregistered("601"), long).correct  # over max_answer_chars


def test_math_verify_works_outside_the_main_thread() -> None:
    # signal.alarm timeouts would raise in a worker thread; they are switched off there
    out: list[bool] = []
    t = threading.Thread(target=lambda: out.append(math_verify_equal("0.5", "\\frac{1}{2}")))
    t.start()
    t.join(timeout=60)
    assert out == [True]


def test_rule_reward_on_unregistered_problem(make_rollouts: Any) -> None:
    problem = _unregistered("x^2+2x+1")
    rollouts = make_rollouts(problem, ["\\boxed{(x+1)^2}", "\\boxed{x^2+1}"])
    verdicts = REWARDS.get("rule").build({}).score(rollouts, RewardContext())
    assert [(v.reward, v.correct) for v in verdicts] == [(1.0, True), (0.0, False)]
    assert verdicts[0].extra["rule_source"] == "math_verify"
