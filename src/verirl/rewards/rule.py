"""Rule-based rewards: exact string match and rule verification (environment or math-verify).

These are the two non-likelihood baselines of the CER paper (Xiao et al. 2026, §5 baselines
"Exact-Match" and "Rule-based"), and :func:`rule_judgement` is the correctness flag every
reward source in this package reports as ``Verdict.correct``, so accuracy metrics and the
curriculum stay rule-based whatever the training reward is.

The rule verifier of a problem is:

1. its environment's verifier, when ``problem.env`` is a registered environment (which
   checks constraints and accepts the environment's surface forms, e.g. "four" for 4);
2. otherwise ``math-verify`` on the extracted ``\\boxed{}`` answer against the reference, as
   the CER release's validation reward does (``parse``/``verify``; the answer is taken from
   the last 512 characters there — here from our own brace-matched extraction, which is the
   same answer for boxed outputs);
3. or, when math-verify is switched off, exact match.

math-verify's timeouts are ``signal.alarm`` based and fail outside the main thread (Python
delivers signals to the main thread only); they are used in the main thread only and disabled
elsewhere, where the input-length cap is the only guard.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from verirl.envs import ENVIRONMENTS, get_env, load_all
from verirl.envs.reading.answers import extract_answer, last_boxed, strip_answer
from verirl.rewards.base import REWARDS, RewardContext, RewardSource
from verirl.types import Problem, Rollout, Verdict


class JudgeParams(BaseModel):
    """How correctness is decided (``Verdict.correct``) for every reward in this package."""

    model_config = ConfigDict(extra="forbid")
    fallback: Literal["math_verify", "exact_match"] = Field(
        "math_verify",
        description="Verifier for problems whose env is not a registered environment. "
        "'math_verify' = the CER release's rule-based reward (math-verify parse/verify); "
        "'exact_match' = string equality after stripping whitespace and $…$.",
    )
    timeout_s: int = Field(
        5,
        ge=1,
        description="math-verify parse/verify timeout in seconds (its default, 5). Applied in "
        "the main thread only: the timeouts use signal.alarm, which other threads cannot use.",
    )
    max_answer_chars: int = Field(
        512,
        ge=1,
        description="Longer extracted answers are judged wrong without parsing (guards sympy; "
        "the CER release reads the last 512 characters of the output).",
    )


@dataclass(frozen=True)
class Judgement:
    """``correct``: the rule verdict; ``source``: 'env', 'math_verify' or 'exact_match';
    ``answer``: the extracted answer (``None`` when the output has none)."""

    correct: bool
    source: str
    answer: str | None


def exact_equal(answer: str | None, reference: str) -> bool:
    """String equality after :func:`strip_answer` (whitespace, ``$…$``, ``\\text{}``)."""
    return answer is not None and strip_answer(answer) == strip_answer(reference)


def math_verify_equal(answer: str, reference: str, timeout_s: int = 5) -> bool:
    """math-verify's ``verify(parse(gold), parse(answer))`` on the two answer strings, each
    wrapped in ``$…$`` so that the LaTeX extractor sees them. Never raises."""
    from math_verify import parse, verify

    timeout = timeout_s if threading.current_thread() is threading.main_thread() else None
    try:
        gold = parse(f"${reference}$", parsing_timeout=timeout)
        pred = parse(f"${answer}$", parsing_timeout=timeout)
        if not gold or not pred:
            return False
        return bool(verify(gold, pred, timeout_seconds=timeout))
    except Exception:  # math-verify raises on odd input despite raise_on_error=False
        return False


def rule_judgement(
    problem: Problem,
    text: str,
    params: JudgeParams | None = None,
    env_verdict: Verdict | None = None,
) -> Judgement:
    """Is ``text`` (a full model output) correct for ``problem``? See the module docstring.

    ``env_verdict`` is the environment's verdict when the caller already has it (the batched
    verification stage's); otherwise an environment problem is verified here."""
    params = params or JudgeParams()
    load_all()
    answer = extract_answer(text)
    if env_verdict is not None or problem.env in ENVIRONMENTS:
        verdict = env_verdict or get_env(problem.env).verify(problem, text)
        return Judgement(bool(verdict.correct), "env", answer)
    if answer is None or len(answer) > params.max_answer_chars:
        return Judgement(False, params.fallback, answer)
    if params.fallback == "exact_match":
        return Judgement(exact_equal(answer, problem.answer), "exact_match", answer)
    ok = exact_equal(answer, problem.answer) or math_verify_equal(
        answer, problem.answer, params.timeout_s
    )
    return Judgement(ok, "math_verify", answer)


# ---- reward sources ------------------------------------------------------------------------
class ExactMatchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    normalize: Literal["strip", "none"] = Field(
        "strip",
        description="'strip': compare after removing surrounding whitespace, $…$ and \\text{} "
        "(our answer extraction); 'none': raw \\boxed{} content, the strictest reading of the "
        "CER paper's Exact-Match baseline.",
    )
    judge: JudgeParams = Field(
        default_factory=JudgeParams, description="Rule verifier for Verdict.correct."
    )


@REWARDS.register("exact_match", ExactMatchParams)
class ExactMatchReward(RewardSource[ExactMatchParams]):
    """Reward 1 when the last ``\\boxed{}`` equals the reference string, else 0 (the CER
    paper's Exact-Match baseline). ``correct`` is the rule verifier's judgement; the
    exact-match outcome is in ``extra['exact_match']``."""

    verifies_each = True  # every rollout through ctx.env_verdicts

    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        out = []
        for r, env_v in zip(rollouts, ctx.env_verdicts(rollouts), strict=True):
            judged = rule_judgement(r.problem, r.text, self.params.judge, env_v)
            if self.params.normalize == "none":
                hit = last_boxed(r.text) == r.problem.answer
            else:
                hit = exact_equal(judged.answer, r.problem.answer)
            out.append(
                Verdict(
                    1.0 if hit else 0.0,
                    judged.correct,
                    "exact match" if hit else "no exact match",
                    extra={"exact_match": hit, "rule_source": judged.source},
                )
            )
        return out


class RuleParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    judge: JudgeParams = Field(
        default_factory=JudgeParams,
        description="The rule verifier (environment, else math-verify as in the CER release).",
    )


@REWARDS.register("rule", RuleParams)
class RuleReward(RewardSource[RuleParams]):
    """Binary rule-based reward: 1 when the rule verifier says correct, else 0 (the CER
    paper's Rule-based baseline). Use the ``env`` reward for the environments' graded
    RLVE rewards in [-1, 1] instead."""

    verifies_each = True  # every rollout through ctx.env_verdicts

    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        out = []
        for r, env_v in zip(rollouts, ctx.env_verdicts(rollouts), strict=True):
            judged = rule_judgement(r.problem, r.text, self.params.judge, env_v)
            out.append(
                Verdict(
                    1.0 if judged.correct else 0.0,
                    judged.correct,
                    env_v.detail if env_v else ("correct" if judged.correct else "not correct"),
                    env_v.steps if env_v else (),
                    env_v.first_failed_step if env_v else None,
                    {**(dict(env_v.extra) if env_v else {}), "rule_source": judged.source},
                )
            )
        return out

    def produces(self, environments: Sequence[str]) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for name in environments:
            out |= get_env(name).produces
        return out
