"""Policy-likelihood rewards: the shared machinery of CER and VeriFree, and the VeriFree reward.

Both rewards ask the current policy for ``log π(answer | q, s)``: the summed token log-prob of an
answer string after a solution prefix ``s`` (no length normalisation). This module turns
rollouts into those (context, continuation) token sequences and builds the
:class:`~verirl.rollout.scoring.SequenceScorer` that scores them.

Answer split (``extract_solution_answer`` of the CER release, Xiao et al. 2026, *Reinforcement
Learning with Conditional Expectation Reward*, arXiv:2603.10624): the solution ``s``
is the output up to and *including* the last answer marker (``\\boxed{``), the answer ``a`` its
brace-matched content; anything after the closing brace is dropped; an unclosed brace gives the
rest of the text. With no marker, ``s`` is the whole output and ``a`` is empty
(``has_answer=False``), which each reward handles explicitly.

Scoring context: by default the rollout's *original* prompt token ids
(chat template included) followed by the tokens of ``s`` — the context the policy actually
sampled from. The CER release instead re-decodes the prompt with ``skip_special_tokens=True``
and re-tokenises ``question + s``, dropping the chat-template special tokens; that variant is
``context="decoded_prompt"``. In both, ``s`` is re-tokenised from text and the answer is
tokenised on its own, so the seam sits right after ``\\boxed{`` as in the release.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, field_validator

from verirl.envs.reading.answers import BOXED, split_boxed
from verirl.errors import UserInputError
from verirl.rewards.base import REWARDS, RewardContext, RewardSource
from verirl.rewards.rule import JudgeParams, rule_judgement
from verirl.rollout.base import ScoresSequences
from verirl.rollout.scoring import PrefixCacheScorer, ReferenceScorer, SequenceScorer, score_grids
from verirl.types import Rollout, Verdict


# ---- answer split --------------------------------------------------------------------------
@dataclass(frozen=True)
class AnswerSplit:
    """``solution``: text up to and including the last marker (the whole text if none);
    ``answer``: the brace-matched content after it ('' if none); ``has_answer``."""

    solution: str
    answer: str
    has_answer: bool


def split_answer(text: str, markers: Sequence[str] = (BOXED,)) -> AnswerSplit:
    """Split at the *last* occurrence of any of ``markers`` (each must end with ``{``).

    ``split_answer("so \\boxed{\\frac{1}{2}} done")`` →
    ``AnswerSplit("so \\boxed{", "\\frac{1}{2}", True)``.
    """
    best, best_pos = None, -1
    for marker in markers:
        if not marker.endswith("{"):
            raise ValueError(f"answer marker {marker!r} must end with '{{' (brace-matched)")
        pos = text.rfind(marker)
        if pos > best_pos:
            best, best_pos = marker, pos
    if best is None:
        return AnswerSplit(text, "", False)
    solution, answer = split_boxed(text, best)
    return AnswerSplit(solution, answer or "", True)


# ---- parameters shared by likelihood rewards -------------------------------------------------
class LikelihoodParams(BaseModel):
    """How answers are scored under the policy (shared by ``cer``, ``verifree``, ``rule_cer``)."""

    model_config = ConfigDict(extra="forbid")
    markers: tuple[str, ...] = Field(
        (BOXED,),
        min_length=1,
        description="Answer markers; the last occurrence of any splits solution/answer. Each "
        "must end with '{' (brace-matched). CER release: ('\\\\boxed{',).",
    )
    score_closing_brace: bool = Field(
        False,
        description="Score answer+'}' (probability that the answer is complete) instead of the "
        "bare answer (prefix probability, so '14' also collects mass from '145'). CER release: "
        "False; VeriFree scores its terminator (True).",
    )
    context: Literal["prompt_ids", "decoded_prompt"] = Field(
        "prompt_ids",
        description="Scoring context before the solution: the rollout's original prompt token "
        "ids (chat template kept; the context the policy sampled from) or the CER release's "
        "tokenizer(decode(prompt_ids, skip_special_tokens=True) + solution), which drops the "
        "template's special tokens. Reproduce the release: 'decoded_prompt'.",
    )
    max_answer_tokens: int = Field(
        1024,
        ge=1,
        description="Answers (and the reference) are truncated to this many tokens "
        "(CER release: min(longest answer, 1024)).",
    )
    scorer: Literal["prefix_cache", "reference", "engine"] = Field(
        "prefix_cache",
        description="'prefix_cache': encode each solution once and score all answers from its "
        "KV cache; 'reference': re-encode every (solution, answer) row as the release does; "
        "'engine': the rollout engine's own scorer (vllm: prompt log-probs with prefix "
        "caching, on the engine's synced weights). Same numbers (within float error), "
        "different cost.",
    )
    max_batch_rows: int = Field(64, ge=1, description="Most sequences per scoring forward.")
    max_batch_tokens: int = Field(
        16384, ge=1, description="Most rows × padded length per scoring forward (memory bound)."
    )
    autocast: Literal["none", "bf16"] = Field(
        "none", description="Run scoring forwards under bfloat16 autocast (log-softmax in fp32)."
    )
    judge: JudgeParams = Field(
        default_factory=JudgeParams,
        description="Rule verifier that sets Verdict.correct (accuracy stays rule-based).",
    )

    @field_validator("markers")
    @classmethod
    def _markers_end_with_brace(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for m in v:
            if not m or not m.endswith("{"):
                raise ValueError(f"answer marker {m!r} must end with '{{' (brace-matched)")
        return v


def require_policy(ctx: RewardContext) -> None:
    """Raise unless ``ctx`` carries the policy and its tokenizer."""
    if ctx.model is None or ctx.tokenizer is None:
        raise ValueError(
            "likelihood rewards (cer, verifree, rule_cer) need RewardContext.model and "
            ".tokenizer: the current policy scores the answers"
        )


def build_scorer(ctx: RewardContext, params: LikelihoodParams) -> SequenceScorer:
    """The scorer over ``ctx.model`` (the current policy) chosen by ``params.scorer``."""
    require_policy(ctx)
    if params.scorer == "engine":
        if not isinstance(ctx.engine, ScoresSequences):
            raise UserInputError(
                "reward.params.scorer=engine: the rollout engine "
                f"({type(ctx.engine).__name__}) has no sequence scorer; use the vllm engine "
                "or scorer=prefix_cache"
            )
        return ctx.engine.sequence_scorer()
    pad = ctx.tokenizer.pad_token_id
    pad = pad if pad is not None else (ctx.tokenizer.eos_token_id or 0)
    cls = PrefixCacheScorer if params.scorer == "prefix_cache" else ReferenceScorer
    dtype = torch.bfloat16 if params.autocast == "bf16" else None
    return cls(
        ctx.model,
        pad_id=pad,
        max_batch_rows=params.max_batch_rows,
        max_batch_tokens=params.max_batch_tokens,
        autocast_dtype=dtype,
        device=ctx.device,
    )


class Encoder:
    """Tokenises contexts and answers for one ``score`` call (memoised: the G solutions of a
    group share the prompt, many answers repeat)."""

    def __init__(self, tokenizer: Any, params: LikelihoodParams) -> None:
        self.tokenizer = tokenizer
        self.params = params
        self._text: dict[str, tuple[int, ...]] = {}
        self._prompt: dict[tuple[int, ...], str] = {}

    def ids(self, text: str) -> tuple[int, ...]:
        if text not in self._text:
            out = self.tokenizer.encode(text, add_special_tokens=False)
            self._text[text] = tuple(int(t) for t in out)
        return self._text[text]

    def context(self, prompt_ids: Sequence[int], solution: str) -> tuple[int, ...]:
        """``prompt ⊕ s`` per ``params.context`` (see the module docstring)."""
        if self.params.context == "prompt_ids":
            return tuple(prompt_ids) + self.ids(solution)
        key = tuple(prompt_ids)
        if key not in self._prompt:
            self._prompt[key] = self.tokenizer.decode(list(key), skip_special_tokens=True)
        return self.ids(self._prompt[key] + solution)

    def answer(self, answer: str) -> tuple[int, ...]:
        """Answer tokens (+ ``}`` when ``score_closing_brace``), truncated."""
        text = answer + "}" if self.params.score_closing_brace else answer
        return self.ids(text)[: self.params.max_answer_tokens] if answer else ()


def group_rollouts(rollouts: Sequence[Rollout]) -> list[list[int]]:
    """Indices of ``rollouts`` per group id, in first-seen order. Raises when a group mixes
    problems or prompts (CER needs siblings of one prompt)."""
    groups: dict[int, list[int]] = {}
    for i, r in enumerate(rollouts):
        groups.setdefault(r.group, []).append(i)
    for gid, idx in groups.items():
        first = rollouts[idx[0]]
        for i in idx[1:]:
            r = rollouts[i]
            if r.problem != first.problem or r.prompt_ids != first.prompt_ids:
                raise ValueError(
                    f"rollouts {idx[0]} and {i} share group {gid} but not the same problem and "
                    "prompt_ids; a group must hold samples of one prompt"
                )
    return list(groups.values())


def reference_ids(encoder: Encoder, reference: str, where: str) -> tuple[int, ...]:
    ids = encoder.answer(reference)
    if not ids:
        raise ValueError(f"{where}: the reference answer is empty; likelihood rewards need a*")
    return ids


# ---- VeriFree --------------------------------------------------------------------------------
class VeriFreeParams(LikelihoodParams):
    score_closing_brace: bool = Field(
        True,
        description="Score the reference followed by the closing '}' (VeriFree scores its "
        "terminator '} </answer>'; True reproduces that in the \\boxed{} format).",
    )
    zero_if_truncated: bool = Field(
        True,
        description="Reward 0 for outputs cut by the length limit (VeriFree: R = 0 when the "
        "output has no answer tag or is truncated).",
    )


@REWARDS.register("verifree", VeriFreeParams)
class VeriFreeReward(RewardSource[VeriFreeParams]):
    """VeriFree (Zhou et al. 2025, arXiv:2505.21493): R_i = π(a* | q, s_i), the probability of
    the reference answer after the rollout's *own* solution prefix, in [0, 1].

    Adapted to the ``\\boxed{}`` format: ``s_i`` is the output up to its last ``\\boxed{`` and
    ``a*`` (with ``}`` by default) is spliced in after it. No answer marker (or a truncated
    output, by default) gives 0. Only the reward is implemented: VeriFree's extra
    reward-weighted NLL term on the reference tokens belongs to the loss, not to a scorer.
    """

    verifies_each = True  # every rollout through ctx.env_verdicts

    needs = frozenset({"policy"})

    def __init__(self, params: VeriFreeParams) -> None:
        super().__init__(params)
        self._metrics: dict[str, float] = {}

    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        p = self.params
        require_policy(ctx)
        enc = Encoder(ctx.tokenizer, p)
        splits = [split_answer(r.text, p.markers) for r in rollouts]
        live = [
            i
            for i, (r, s) in enumerate(zip(rollouts, splits, strict=True))
            if s.has_answer and not (p.zero_if_truncated and r.finish_reason == "length")
        ]
        contexts = [enc.context(rollouts[i].prompt_ids, splits[i].solution) for i in live]
        refs = [reference_ids(enc, rollouts[i].problem.answer, f"rollout {i}") for i in live]
        logp = [float("-inf")] * len(rollouts)
        scorer = build_scorer(ctx, p) if live else None
        if scorer is not None:
            # one grid per rollout: its own context × the reference (one cell each)
            grids = [([c], [a], None) for c, a in zip(contexts, refs, strict=True)]
            for i, g in zip(live, score_grids(scorer, grids), strict=True):
                logp[i] = float(g[0, 0])
        out = []
        env_verdicts = ctx.env_verdicts(rollouts)
        for i, r in enumerate(rollouts):
            judged = rule_judgement(r.problem, r.text, p.judge, env_verdicts[i])
            reward = min(1.0, math.exp(logp[i])) if math.isfinite(logp[i]) else 0.0
            out.append(
                Verdict(
                    reward,
                    judged.correct,
                    "likelihood of the reference after the solution",
                    extra={
                        "verifree": reward,
                        "log_p_reference": logp[i] if math.isfinite(logp[i]) else None,
                        "answer_found": splits[i].has_answer,
                    },
                )
            )
        self._metrics = {"verifree/mean_reward": sum(v.reward for v in out) / max(1, len(out))}
        if scorer is not None:
            m = scorer.metrics()
            self._metrics.update({"verifree/" + k.split("/", 1)[-1]: v for k, v in m.items()})
        return out

    def metrics(self) -> dict[str, float]:
        return dict(self._metrics)
