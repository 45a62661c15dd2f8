"""CER: the estimator against hand-computed values, the M ≤ G rule, and the reward sources."""

from __future__ import annotations

import dataclasses
import json
import math
import random
from typing import Any

import pytest
import torch
from pydantic import ValidationError

from verirl.envs import get_env
from verirl.rewards import REWARDS, RewardContext
from verirl.rewards.cer import cer_estimate, select_solutions
from verirl.rollout.scoring import ReferenceScorer
from verirl.types import Problem

LN = math.log


def T(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


# ---- the estimator -----------------------------------------------------------------------------
def test_hand_computed_reward() -> None:
    # π(a*|s_j) = [0.5, 0.2, 0.1], π(a|s_j) = [0.4, 0.1, 0.5]
    # R = (0.4·0.5 + 0.1·0.2 + 0.5·0.1) / (0.4 + 0.1 + 0.5) = (0.2 + 0.02 + 0.05) / 1.0 = 0.27
    ref = T([LN(0.5), LN(0.2), LN(0.1)])
    ans = T([[LN(0.4)], [LN(0.1)], [LN(0.5)]])
    assert cer_estimate(ref, ans).tolist() == pytest.approx([0.27], abs=1e-12)


def test_answer_equal_to_reference_gives_sum_p2_over_sum_p() -> None:
    # a = a*: R = Σp² / Σp = (0.25 + 0.04 + 0.01) / (0.5 + 0.2 + 0.1) = 0.30 / 0.8 = 0.375,
    # below 1 (Theorem 1's quantity; no shortcut) and above the mean π(a*|q) ≈ 0.8 / 3 = 0.2667
    ref = T([LN(0.5), LN(0.2), LN(0.1)])
    r = cer_estimate(ref, ref[:, None])
    assert r.tolist() == pytest.approx([0.375], abs=1e-12)
    assert float(r) > 0.8 / 3


def test_several_answers_and_a_selection() -> None:
    ref = T([LN(0.5), LN(0.2), LN(0.1)])
    ans = T([[LN(0.4), LN(0.3)], [LN(0.1), LN(0.3)], [LN(0.5), LN(0.3)]])
    sel = torch.tensor([[True, True], [False, True], [True, False]])
    # answer 0 on rows {0, 2}: (0.4·0.5 + 0.5·0.1) / (0.4 + 0.5) = 0.25 / 0.9 = 0.27777…
    # answer 1 on rows {0, 1}: equal weights → (0.5 + 0.2) / 2 = 0.35
    assert cer_estimate(ref, ans, sel).tolist() == pytest.approx([0.25 / 0.9, 0.35], abs=1e-12)


def test_one_solution_gives_its_reference_probability() -> None:
    # G = 1: R = π(a|s)·π(a*|s) / π(a|s) = π(a*|s) = 0.3 whatever π(a|s) > 0 is
    assert cer_estimate(T([LN(0.3)]), T([[-40.0]])).item() == pytest.approx(0.3)


def test_very_negative_log_probs_stay_finite() -> None:
    # ℓ(a|s) = [-1e4, -1e4 + ln 2]: weights 1 : 2 → R = (0.5 + 2·0.2) / 3 = 0.3 exactly,
    # although exp(-1e4) underflows to 0 outside log space
    ref = T([LN(0.5), LN(0.2)])
    ans = T([[-1e4], [-1e4 + LN(2)]])
    assert cer_estimate(ref, ans).tolist() == pytest.approx([0.3], abs=1e-9)
    # a reference the policy never regenerates: R underflows to 0, no NaN
    tiny = cer_estimate(T([-1e5, -3e38]), T([[-5.0], [-1e30]]))
    assert tiny.tolist() == [0.0]
    # float32 extremes as produced by the release's log-0 sentinel
    f32min = torch.finfo(torch.float32).min
    out = cer_estimate(T([f32min, -1.0]), T([[f32min, -2.0], [-3.0, f32min]]))
    assert torch.isfinite(out).all() and ((out >= 0) & (out <= 1)).all()


def test_answer_with_zero_probability_everywhere_gets_zero() -> None:
    # Σ_j π(a|s_j) = 0 (log −inf on every selected row): 0/0 → 0, as the release's
    # log-0 normaliser replacement gives
    ref = T([LN(0.5), LN(0.2)])
    ans = T([[-math.inf, LN(0.1)], [-math.inf, -math.inf]])
    sel = torch.tensor([[True, False], [True, True]])
    assert cer_estimate(ref, ans, sel).tolist() == [0.0, 0.0]


def test_bad_estimator_input_is_refused() -> None:
    ref = T([LN(0.5), LN(0.2)])
    with pytest.raises(ValueError, match="NaN"):
        cer_estimate(ref, T([[float("nan")], [0.0]]))
    with pytest.raises(ValueError, match="<= 0"):
        cer_estimate(T([0.5, -1.0]), torch.zeros(2, 1))
    with pytest.raises(ValueError, match="expected ref_loglik"):
        cer_estimate(ref, torch.zeros(3, 1))
    with pytest.raises(ValueError, match="selected has shape"):
        cer_estimate(ref, torch.zeros(2, 1), torch.ones(2, 2, dtype=torch.bool))


# ---- the M ≤ G rule ----------------------------------------------------------------------------
def test_select_solutions_follows_the_release_rule() -> None:
    answer_of = [0, 0, 1, -1, 0]  # answer 0 from rollouts {0, 1, 4}, answer 1 from {2}
    for seed in range(20):
        sel = select_solutions(answer_of, 2, 2, random.Random(seed))
        assert sel.shape == (5, 2)
        assert sel.sum(0).tolist() == [2, 2]  # exactly M per answer
        assert set(torch.nonzero(sel[:, 0]).flatten().tolist()) <= {0, 1, 4}  # own only
        assert sel[2, 1]  # its one producer, filled with one other rollout
    a = select_solutions(answer_of, 2, 2, random.Random(5))
    assert torch.equal(a, select_solutions(answer_of, 2, 2, random.Random(5)))
    assert select_solutions(answer_of, 2, 5, random.Random(0)).all()  # M = G: every pair
    assert select_solutions(answer_of, 2, 9, random.Random(0)).all()
    with pytest.raises(ValueError, match="must be >= 1"):
        select_solutions(answer_of, 2, 0, random.Random(0))
    with pytest.raises(ValueError, match="outside"):
        select_solutions([0, 3], 2, 1, random.Random(0))


# ---- the reward sources ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def problem() -> Problem:
    return get_env("number_words").generate(0, 3)


def _manual_cer(ctx: RewardContext, problem: Problem, texts: list[str], answer: str) -> float:
    """Eqs. 4–5 with plain exp and sums over the reference scorer's log-likelihoods."""
    tok = ctx.tokenizer
    from verirl.rollout.prompts import PromptFormatter

    prompt = PromptFormatter(tok).encode(problem)
    solutions = []
    for t in texts:
        cut = t.rfind("\\boxed{")
        solutions.append(t[: cut + len("\\boxed{")] if cut >= 0 else t)
    contexts = [prompt + tok.encode(s, add_special_tokens=False) for s in solutions]
    ref_ids = tok.encode(problem.answer, add_special_tokens=False)
    ans_ids = tok.encode(answer, add_special_tokens=False)
    scorer = ReferenceScorer(ctx.model, pad_id=tok.pad_token_id)
    lp_ref = scorer.score([(c, ref_ids) for c in contexts])
    lp_ans = scorer.score([(c, ans_ids) for c in contexts])
    num = sum(math.exp(a) * math.exp(r) for a, r in zip(lp_ans, lp_ref, strict=True))
    return num / sum(math.exp(a) for a in lp_ans)


def test_cer_reward_equals_the_formula_and_ties_identical_answers(
    ctx: RewardContext, problem: Problem, make_rollouts: Any
) -> None:
    gold = problem.answer
    texts = [
        f"We add them. \\boxed{{{gold}}}",
        "Hmm, I get \\boxed{seven}",
        f"Another way: \\boxed{{{gold}}} done",
        "I could not finish",
        "Hmm, I get \\boxed{seven} again",
    ]
    rollouts = make_rollouts(problem, texts)
    verdicts = REWARDS.get("cer").build({}).score(rollouts, ctx)
    r = [v.reward for v in verdicts]
    assert r[0] == r[2] and r[1] == r[4]  # identical answers, different solutions
    assert r[3] == 0.0  # no answer
    # the no-answer output still counts as a context s_j (its whole text)
    assert r[0] == pytest.approx(_manual_cer(ctx, problem, texts, gold), rel=1e-6)
    assert r[1] == pytest.approx(_manual_cer(ctx, problem, texts, "seven"), rel=1e-6)
    assert all(0.0 <= x <= 1.0 for x in r)
    assert verdicts[0].extra["cer"] == r[0] and verdicts[3].extra["answer_found"] is False
    json.dumps([dict(v.extra) for v in verdicts])


def test_cer_correct_flag_is_the_rule_verifier(
    ctx: RewardContext, problem: Problem, make_rollouts: Any
) -> None:
    from verirl.envs.reading.surface_forms import number_to_words, parse_number

    words = number_to_words(int(parse_number(problem.answer)))
    texts = [f"\\boxed{{{words}}}", f"\\boxed{{{problem.answer}}}", "\\boxed{-1000}"]
    verdicts = REWARDS.get("cer").build({}).score(make_rollouts(problem, texts), ctx)
    assert [v.correct for v in verdicts] == [True, True, False]


def test_scorer_choice_does_not_change_cer(
    ctx: RewardContext, problem: Problem, make_rollouts: Any
) -> None:
    texts = [f"x \\boxed{{{problem.answer}}}", "y \\boxed{12}", "z \\boxed{{1}{2}}", "w"]
    rollouts = make_rollouts(problem, texts)
    fast = REWARDS.get("cer").build({"scorer": "prefix_cache"}).score(rollouts, ctx)
    ref = REWARDS.get("cer").build({"scorer": "reference"}).score(rollouts, ctx)
    for a, b in zip(fast, ref, strict=True):
        assert a.reward == pytest.approx(b.reward, rel=1e-3, abs=1e-12)


def test_subsampled_cer_is_deterministic_and_bounded(
    ctx: RewardContext, problem: Problem, make_rollouts: Any
) -> None:
    texts = [f"s{i} \\boxed{{{a}}}" for i, a in enumerate(["1", "2", "1", "3", "4", "1"])]
    rollouts = make_rollouts(problem, texts)
    src = REWARDS.get("cer").build({"n_samples": 2, "seed": 3})
    first = [v.reward for v in src.score(rollouts, ctx)]
    again = [v.reward for v in src.score(rollouts, ctx)]
    assert first == again
    assert first[0] == first[2] == first[5]
    assert all(0.0 <= x <= 1.0 and math.isfinite(x) for x in first)
    full = [v.reward for v in REWARDS.get("cer").build({}).score(rollouts, ctx)]
    assert first != full  # M = 2 < G = 6 uses fewer solutions per answer


def test_empty_answers_and_an_all_empty_group(
    ctx: RewardContext, problem: Problem, make_rollouts: Any
) -> None:
    src = REWARDS.get("cer").build({"empty_answer_reward": 0.25})
    verdicts = src.score(make_rollouts(problem, ["nothing", "\\boxed{}", "\\boxed{"]), ctx)
    assert [v.reward for v in verdicts] == [0.25, 0.25, 0.25]
    assert src.metrics()["cer/empty_answer_share"] == 1.0


def test_groups_are_scored_separately(
    ctx: RewardContext, problem: Problem, make_rollouts: Any
) -> None:
    other = get_env("number_words").generate(1, 8)
    a = make_rollouts(problem, [f"\\boxed{{{problem.answer}}}", "\\boxed{5}"], group=0)
    b = make_rollouts(other, [f"\\boxed{{{other.answer}}}", "\\boxed{5}"], group=1)
    src = REWARDS.get("cer").build({})
    joint = [v.reward for v in src.score(a + b, ctx)]
    alone = [v.reward for v in src.score(a, ctx)] + [v.reward for v in src.score(b, ctx)]
    assert joint == pytest.approx(alone, rel=1e-4)  # batching differs: float error only
    mixed = [a[0], dataclasses.replace(b[0], group=0)]
    with pytest.raises(ValueError, match="share group 0"):
        src.score(mixed, ctx)


def test_closing_brace_and_context_options_change_the_scored_tokens(
    ctx: RewardContext, problem: Problem, make_rollouts: Any
) -> None:
    texts = [f"a \\boxed{{{problem.answer}}}", "b \\boxed{3}"]
    rollouts = make_rollouts(problem, texts)
    base = [v.reward for v in REWARDS.get("cer").build({}).score(rollouts, ctx)]
    brace = [
        v.reward
        for v in REWARDS.get("cer").build({"score_closing_brace": True}).score(rollouts, ctx)
    ]
    decoded = [
        v.reward
        for v in REWARDS.get("cer").build({"context": "decoded_prompt"}).score(rollouts, ctx)
    ]
    assert base != brace and base != decoded


def test_cer_needs_the_policy_and_validates_params(problem: Problem, make_rollouts: Any) -> None:
    src = REWARDS.get("cer").build({})
    with pytest.raises(ValueError, match=r"need RewardContext\.model"):
        src.score(make_rollouts(problem, ["\\boxed{1}"]), RewardContext())
    with pytest.raises(ValidationError):
        REWARDS.get("cer").build({"n_sample": 4})
    with pytest.raises(ValidationError, match="must end with"):
        REWARDS.get("cer").build({"markers": ["<answer>"]})
    with pytest.raises(ValidationError):
        REWARDS.get("rule_cer").build({"rule_weight": 1.5})


def test_metrics_report_compression(
    ctx: RewardContext, problem: Problem, make_rollouts: Any
) -> None:
    src = REWARDS.get("cer").build({})
    src.score(make_rollouts(problem, ["\\boxed{1}", "\\boxed{1}", "\\boxed{2}"]), ctx)
    m = src.metrics()
    # 3 contexts × (a*, "1", "2") = 9 pairs; all three solutions are the text "\boxed{", so
    # 1 distinct context × 3 answers = 3 unique pairs
    assert m["cer/pairs"] == 9 and m["cer/unique_pairs"] == 3
    assert m["cer/compression_ratio"] == pytest.approx(3 / 9)
    assert m["cer/distinct_answers_per_group"] == 2


# ---- rule + CER --------------------------------------------------------------------------------
def test_rule_cer_gate_and_weighted(
    ctx: RewardContext, problem: Problem, make_rollouts: Any
) -> None:
    texts = [f"\\boxed{{{problem.answer}}}", "\\boxed{-999}", "no answer"]
    rollouts = make_rollouts(problem, texts)
    cer = [v.reward for v in REWARDS.get("cer").build({}).score(rollouts, ctx)]
    gate = REWARDS.get("rule_cer").build({}).score(rollouts, ctx)
    assert [v.reward for v in gate] == [1.0, cer[1], 0.0]
    assert [v.correct for v in gate] == [True, False, False]
    weighted = REWARDS.get("rule_cer").build({"combine": "weighted", "rule_weight": 0.25})
    got = [v.reward for v in weighted.score(rollouts, ctx)]
    # 0.25 · rule + 0.75 · CER
    assert got == pytest.approx([0.25 + 0.75 * cer[0], 0.75 * cer[1], 0.0], abs=1e-12)
