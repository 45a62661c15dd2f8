"""Answer split, scoring inputs, and the VeriFree reward."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from verirl.envs import get_env
from verirl.rewards import REWARDS, RewardContext
from verirl.rewards.likelihood import Encoder, LikelihoodParams, split_answer
from verirl.rollout.prompts import PromptFormatter
from verirl.rollout.scoring import ReferenceScorer
from verirl.types import Problem


@pytest.mark.parametrize(
    ("text", "solution", "answer", "found"),
    [
        ("so \\boxed{\\frac{1}{2}} done", "so \\boxed{", "\\frac{1}{2}", True),
        ("\\boxed{1} then \\boxed{2}", "\\boxed{1} then \\boxed{", "2", True),
        ("no marker at all", "no marker at all", "", False),
        ("cut \\boxed{12", "cut \\boxed{", "12", True),  # unclosed: the rest of the text
        ("empty \\boxed{}", "empty \\boxed{", "", True),
        ("\\boxed{\\{1, 2\\}}", "\\boxed{", "\\{1, 2\\}", True),  # escaped braces
    ],
)
def test_split_answer(text: str, solution: str, answer: str, found: bool) -> None:
    s = split_answer(text)
    assert (s.solution, s.answer, s.has_answer) == (solution, answer, found)
    assert s.solution + s.answer in text  # the split never invents text


def test_split_answer_takes_the_last_of_several_markers() -> None:
    text = "\\fbox{3} and later \\boxed{4} and \\fbox{5}"
    s = split_answer(text, ("\\boxed{", "\\fbox{"))
    assert (s.solution, s.answer) == ("\\fbox{3} and later \\boxed{4} and \\fbox{", "5")
    with pytest.raises(ValueError, match="must end with"):
        split_answer(text, ("<answer>",))


def test_encoder_contexts_and_answers(tokenizer: Any) -> None:
    problem = get_env("number_words").generate(0, 0)
    prompt = PromptFormatter(tokenizer).encode(problem)
    enc = Encoder(tokenizer, LikelihoodParams())
    solution = "Adding gives \\boxed{"
    assert enc.context(prompt, solution) == tuple(prompt) + tuple(
        tokenizer.encode(solution, add_special_tokens=False)
    )
    assert enc.answer("42") == tuple(tokenizer.encode("42", add_special_tokens=False))
    assert enc.answer("") == ()
    brace = Encoder(tokenizer, LikelihoodParams(score_closing_brace=True, max_answer_tokens=2))
    assert brace.answer("42}") == tuple(tokenizer.encode("42}}", add_special_tokens=False))[:2]
    decoded = Encoder(tokenizer, LikelihoodParams(context="decoded_prompt"))
    question = tokenizer.decode(prompt, skip_special_tokens=True)
    got = decoded.context(prompt, solution)
    assert got == tuple(tokenizer.encode(question + solution, add_special_tokens=False))
    special = set(tokenizer.all_special_ids)
    assert special & set(prompt) and not special & set(got)  # the release drops them


@pytest.fixture(scope="module")
def problem() -> Problem:
    return get_env("fraction_forms").generate(1, 2)


def test_verifree_is_the_reference_probability_after_the_own_solution(
    ctx: RewardContext, problem: Problem, make_rollouts: Any
) -> None:
    texts = ["First \\boxed{7} and more", "none", "Cut short \\boxed{1/2}", "Other \\boxed{x}"]
    rollouts = make_rollouts(problem, texts, finish=["stop", "stop", "length", "stop"])
    verdicts = REWARDS.get("verifree").build({}).score(rollouts, ctx)
    tok = ctx.tokenizer
    prompt = list(rollouts[0].prompt_ids)
    ref = tok.encode(problem.answer + "}", add_special_tokens=False)  # terminator scored
    scorer = ReferenceScorer(ctx.model, pad_id=tok.pad_token_id)
    for i, solution in ((0, "First \\boxed{"), (3, "Other \\boxed{")):
        ctx_ids = prompt + tok.encode(solution, add_special_tokens=False)
        (lp,) = scorer.score([(ctx_ids, ref)])
        assert verdicts[i].reward == pytest.approx(math.exp(lp), rel=1e-4)
        assert verdicts[i].extra["log_p_reference"] == pytest.approx(lp, abs=1e-4)
    assert verdicts[1].reward == 0.0  # no answer marker
    assert verdicts[2].reward == 0.0  # truncated
    kept = REWARDS.get("verifree").build({"zero_if_truncated": False}).score(rollouts, ctx)
    assert kept[2].reward > 0.0


def test_verifree_rewards_are_probabilities(
    ctx: RewardContext, problem: Problem, make_rollouts: Any
) -> None:
    # a model that puts almost all mass on the reference's tokens gives rewards near 1
    tok = ctx.tokenizer
    ref = tok.encode(problem.answer + "}", add_special_tokens=False)
    peaked = type(ctx.model)(ctx.model.config)
    with torch.no_grad():
        for p in peaked.parameters():
            p.zero_()
        peaked.lm_head.weight.zero_()
    # tied embeddings: logits are 0 → uniform; the reward is V^(−len) exactly
    verdicts = (
        REWARDS.get("verifree")
        .build({})
        .score(make_rollouts(problem, ["\\boxed{0}"]), RewardContext(tok, peaked))
    )
    expected = math.exp(-len(ref) * math.log(len(tok)))
    assert verdicts[0].reward == pytest.approx(expected, rel=1e-4)
