"""On-policy distillation: a teacher scores the policy's own samples, and the per-token reverse
KL between the two becomes a dense term of the loss (``loss.terms.distill``).

On the tokens y_t the policy π_θ sampled, the sampled estimate of the per-token reverse KL
KL(π_θ ‖ π_T) at the prefix is

    k_t = log π_θ(y_t | x, y_<t) − log π_T(y_t | x, y_<t)

(GKD, Agarwal et al., "On-Policy Distillation of Language Models: Learning from
Self-Generated Mistakes", arXiv 2306.13649, eq. 5 with the reverse KL — their λ = 1, all
samples from the student; "On-Policy Distillation", Thinking Machines Lab 2025, which uses
−k_t as a per-token advantage with discount 0). The ``distill`` term trains on it, the
teacher held fixed (its log-probs are a token source computed once per rollout batch, without
gradient), in one of two forms with the same gradient at θ = θ_old:

- ``advantage`` (Thinking Machines): ℓ_t = ρ_t · sg(log π_old(y_t) − log π_T(y_t)), with
  ρ_t = π_θ(y_t)/π_old(y_t): the importance-weighted policy-gradient loss of the dense
  advantage A_t = −(log π_old − log π_T), unclipped. Added to GRPO's loss with coefficient
  c it is GRPO's advantage plus c · A_t on every token (the GRPO part keeps its clip).
- ``k2``: ℓ_t = ½ (log π_θ(y_t) − log π_T(y_t))², whose gradient
  (log π_θ − log π_T) ∇ log π_θ is the per-token score-function gradient of the reverse KL
  (Tang & Munos, arXiv 2506.09477).

Teachers (``loss.sources.teacher``, :data:`verirl.train.terms.TOKEN_SOURCES`):

- ``checkpoint``: any causal LM sharing the policy's tokenizer, loaded once and frozen;
- ``privileged_self``: the policy itself with a privileged context before the prompt —
  one of the group's successful rollouts (SDPO, Hübotter et al., "Reinforcement Learning via
  Self-Distillation", arXiv 2601.20802, whose teacher is the policy conditioned on feedback
  such as a successful attempt) or the problem answered with its reference answer (OPSD,
  "On-Policy Self-Distillation", arXiv 2601.18734, whose teacher is the policy given the
  reference solution) — scoring the same response tokens, at the batch's weights or at an
  exponential moving average of them (SDPO's regularised teacher).

Both score through :meth:`verirl.train.learner.Learner.score`: the learner's passes and the
chunked output head, so no [N, R, V] tensor is built.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

from verirl.train.terms import LOSS_TERMS, TOKEN_SOURCES, Stats, TermInputs, TermParams
from verirl.types import Batch, Problem

if TYPE_CHECKING:
    from verirl.train.learner import Learner, TokenSource


class DistillParams(TermParams):
    coef: float = Field(
        ge=0,
        description="c of the distillation term c · ℓ^distill_t: the weight of the teacher's "
        "dense advantage next to GRPO's. 1 with form 'advantage' and a reward that gives no "
        "signal reproduces pure on-policy distillation (Thinking Machines 2025; GKD arXiv "
        "2306.13649 with λ = 1 and the reverse KL).",
    )
    form: Literal["advantage", "k2"] = Field(
        "advantage",
        description="'advantage': ρ_t · sg(log π_old − log π_T), the dense advantage "
        "−(log π_old − log π_T) under an unclipped importance weight (Thinking Machines "
        "2025); 'k2': ½ (log π_θ − log π_T)² (its gradient is the same at π_θ = π_old).",
    )


def reverse_kl_tokens(logprobs: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
    """k_t = log π_θ(y_t) − log π_T(y_t), the sampled per-token reverse KL estimate [N, R]."""
    return logprobs - teacher


@LOSS_TERMS.register("distill", DistillParams, needs=frozenset({"teacher"}))
def distill_term(inputs: TermInputs, params: DistillParams) -> tuple[torch.Tensor, Stats]:
    """On-policy distillation (Thinking Machines 2025; GKD arXiv 2306.13649, eq. 5 with the
    reverse KL): per token, ``ρ_t · sg(log π_old − log π_T)`` (form ``advantage``) or
    ``½ (log π_θ − log π_T)²`` (form ``k2``), the teacher fixed. Positions the teacher has no
    value for (NaN: a self-teacher without a successful sibling) contribute 0. Statistics
    ``distill_reverse_kl`` (the mean of log π_θ − log π_T over the trained tokens the teacher
    scored) and ``distill_coverage`` (the fraction of trained tokens it scored)."""
    raw = inputs.source("teacher")
    have = torch.isfinite(raw)
    teacher = torch.where(have, raw, inputs.logprobs.detach())
    scored = inputs.mask * have
    if params.form == "advantage":
        gap = (inputs.old_logprobs - teacher).detach()
        value = torch.exp(inputs.logprobs - inputs.old_logprobs) * gap
    else:
        value = 0.5 * (inputs.logprobs - teacher) ** 2
    k = reverse_kl_tokens(inputs.logprobs.detach(), teacher)
    stats = {
        "distill_reverse_kl": (k * scored).sum() / scored.sum().clamp(min=1),
        "distill_coverage": scored.sum() / inputs.mask.sum().clamp(min=1),
    }
    return value * have, stats


# ---- teachers ------------------------------------------------------------------------------
class CheckpointTeacherParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(
        description="The teacher: a model directory or name (as model.name) of a causal LM "
        "sharing the policy's tokenizer; loaded once, frozen. The on-policy distillation of "
        "Thinking Machines 2025 and GKD (arXiv 2306.13649) distil a larger or trained model."
    )


@TOKEN_SOURCES.register(
    "checkpoint", CheckpointTeacherParams, "log-probs of a frozen causal LM (a checkpoint)"
)
def checkpoint_teacher(params: CheckpointTeacherParams, learner: Learner) -> TokenSource:
    """The log-probs of a frozen causal LM loaded from ``params.path`` (a vocabulary of another
    size than the policy's is refused: the teacher must share the tokenizer)."""
    from verirl.lm import CausalLM
    from verirl.models import load_policy

    teacher, _ = load_policy(params.path)
    teacher = teacher.to(learner.device).eval().requires_grad_(False)
    mine, theirs = CausalLM(learner.model).vocab_size, CausalLM(teacher).vocab_size
    if mine != theirs:
        raise ValueError(
            f"loss.sources.teacher.params.path: the teacher {params.path!r} has a vocabulary "
            f"of {theirs} tokens, the policy {mine}; distillation needs a shared tokenizer"
        )

    def source(batch: Batch) -> torch.Tensor:
        return learner.score(batch, teacher)

    return source


class PrivilegedSelfParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    context: Literal["sibling", "reference"] = Field(
        "sibling",
        description="What the self-teacher sees before the prompt: 'sibling', the group's best "
        "other rollout with a reward of at least min_reward (SDPO, arXiv 2601.20802: a "
        "successful attempt); 'reference', the problem answered with its reference answer "
        "(OPSD, arXiv 2601.18734: the policy given the reference solution), on every row whose "
        "problem has one.",
    )
    min_reward: float = Field(
        1.0,
        description="context 'sibling': a rollout of the group with at least this reward is a "
        "demonstration the self-teacher sees (1.0 for a 0/1 verifier).",
    )
    ema: float = Field(
        0.0,
        ge=0.0,
        lt=1.0,
        description="The self-teacher's weights: 0, the policy's own at the start of each "
        "update; β in (0, 1), an exponential moving average of the policy's trainable weights, "
        "θ_T ← β·θ_T + (1 − β)·θ once per rollout batch (SDPO's regularised teacher), held as "
        "one float32 copy of the trainable parameters and saved in checkpoints.",
    )


def reference_response(tokenizer: Any, problem: Problem) -> tuple[int, ...]:
    """``problem``'s reference answer written as a response: the tokens of
    ``\\boxed{answer}`` and the end of the turn (the tokenizer's EOS token, which ends an
    assistant turn in chat templates such as SmolLM2's and Qwen's); () without an answer."""
    if not problem.answer:
        return ()
    ids = tokenizer.encode(f"\\boxed{{{problem.answer}}}", add_special_tokens=False)
    eos = tokenizer.eos_token_id
    return (*ids, *((int(eos),) if eos is not None else ()))


def privileged_batch(
    batch: Batch, min_reward: float, context: str = "sibling"
) -> tuple[Batch, torch.Tensor]:
    """The batch the self-teacher scores, and the rows [M] of ``batch`` it holds (its response
    columns: the first of ``batch``'s, as many as those rows need).

    ``context`` 'sibling': row i of group g (the rows sharing i's prompt) gets as privileged
    context the whole transcript (prompt and response tokens) of the sibling j ≠ i of g with
    the highest reward ≥ ``min_reward`` (the first on ties) before its own prompt; rows
    without such a sibling are left out. 'reference': row i gets its own prompt answered by
    its reference answer (``batch.references[i]``) before its prompt; rows without one are
    left out. The response columns are i's own, so column t is the same token y_t."""
    if context == "reference" and not batch.references:
        raise ValueError(
            "loss.sources.teacher: context 'reference' needs the batch's reference answers "
            "(Batch.references, filled by the trainer's collate); this batch has none"
        )
    p = batch.prompt_width
    group = batch.distinct_prompts()[2].tolist()
    rewards = batch.rewards.tolist()
    rows: list[int] = []
    prompts: list[torch.Tensor] = []
    for i in range(len(batch)):
        own = batch.input_ids[i, :p][batch.attention_mask[i, :p] == 1]
        if context == "reference":
            if not batch.references[i]:
                continue
            demo = torch.cat([own, torch.tensor(batch.references[i], dtype=torch.long)])
        else:
            siblings = [
                j
                for j in range(len(batch))
                if j != i and group[j] == group[i] and rewards[j] >= min_reward
            ]
            if not siblings:
                continue
            j = max(siblings, key=lambda s: (rewards[s], -s))
            demo = batch.input_ids[j][batch.attention_mask[j] == 1]
        rows.append(i)
        prompts.append(torch.cat([demo, own]))
    index = torch.tensor(rows, dtype=torch.long)
    width = max((len(x) for x in prompts), default=0)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    attn = torch.zeros((len(rows), width), dtype=torch.long)
    for k, x in enumerate(prompts):
        ids[k, width - len(x) :] = x
        attn[k, width - len(x) :] = 1
    sub = batch.select(index)  # its columns trimmed to what these rows need
    q = sub.prompt_width
    privileged = Batch(
        input_ids=torch.cat([ids, sub.input_ids[:, q:]], dim=1),
        attention_mask=torch.cat([attn, sub.attention_mask[:, q:]], dim=1),
        response_mask=sub.response_mask,
        old_logprobs=sub.old_logprobs,
        advantages=sub.advantages,
        rewards=sub.rewards,
        truncated=sub.truncated,
    )
    return privileged, index


class EmaWeights:
    """An exponential moving average of ``params`` (float32 copies): θ_T ← β·θ_T + (1 − β)·θ
    at each :meth:`update`, the first one a copy; :meth:`swapped_in` lends the averages to the
    parameters for a scoring pass and puts the policy's values back after it."""

    def __init__(self, params: list[torch.nn.Parameter], decay: float) -> None:
        self.params = params
        self.decay = decay
        self.average: list[torch.Tensor] = []

    @torch.no_grad()
    def update(self) -> None:
        if not self.average:
            self.average = [p.detach().float().clone() for p in self.params]
            return
        for avg, p in zip(self.average, self.params, strict=True):
            avg.mul_(self.decay).add_(p.detach().float(), alpha=1.0 - self.decay)

    @contextmanager
    def swapped_in(self) -> Iterator[None]:
        own = [p.data for p in self.params]
        try:
            for p, avg in zip(self.params, self.average, strict=True):
                p.data = avg.to(p.dtype)
            yield
        finally:
            for p, data in zip(self.params, own, strict=True):
                p.data = data

    def state_dict(self) -> dict[str, Any]:
        return {"average": [a.clone() for a in self.average]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.average = [a.float().clone() for a in state["average"]]


class PrivilegedSelfTeacher:
    """The policy as its own teacher (SDPO, arXiv 2601.20802; OPSD, arXiv 2601.18734): its
    log-probs of each response under :func:`privileged_batch`'s context, at the weights of the
    batch's start (frozen for the update) or their moving average (``ema`` > 0); NaN on the
    rows without a context (no successful sibling, no reference answer)."""

    def __init__(self, params: PrivilegedSelfParams, learner: Learner) -> None:
        self.params = params
        self.learner = learner
        self.ema = EmaWeights(learner.trainable, params.ema) if params.ema > 0 else None

    def __call__(self, batch: Batch) -> torch.Tensor:
        out = torch.full_like(batch.response_mask, float("nan"))
        privileged, rows = privileged_batch(batch, self.params.min_reward, self.params.context)
        if self.ema is not None:
            self.ema.update()  # folds in the update the previous batch made
        if rows.numel():
            weights = self.ema.swapped_in() if self.ema is not None else nullcontext()
            with weights:
                scores = self.learner.score(privileged, self.learner.model)
            out[rows, : scores.shape[1]] = scores
        return out.masked_fill(batch.response_mask == 0, 0.0)  # 0 on padding, as any source

    def state_dict(self) -> dict[str, Any]:
        return self.ema.state_dict() if self.ema is not None else {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.ema is not None and state:
            self.ema.load_state_dict(state)


@TOKEN_SOURCES.register(
    "privileged_self",
    PrivilegedSelfParams,
    "the policy's log-probs with a successful sibling rollout or the reference answer in "
    "context (self-distillation), at its own or its moving-average weights",
)
def privileged_self_teacher(params: PrivilegedSelfParams, learner: Learner) -> TokenSource:
    """The policy as its own teacher: :class:`PrivilegedSelfTeacher`."""
    return PrivilegedSelfTeacher(params, learner)
