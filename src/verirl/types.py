"""The shared vocabulary: the plain values that flow between the boxes of the design.

```
Curriculum ─(env, difficulty, seed)─▶ Environment.generate ─▶ Problem
Problem ─prompt─▶ RolloutEngine.generate ─▶ Rollout (tokens, log-probs, text; turns)
Rollout ─▶ scorer ─▶ Verdict (attached to the rollout)
Rollouts + Verdicts ─▶ credit estimator ─▶ token-level advantages ─▶ Batch ─▶ Learner
```

Everything here is a frozen dataclass: a stage that adds information returns a new value
(``dataclasses.replace``) instead of mutating the one it was given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import torch

TURN_SEPARATOR = "\n<|verirl-turn|>\n"
"""Joins the model's turns in the transcript a stateful environment verifies (the multi-turn
collector joins them; :attr:`verirl.envs.base.Environment.stateful`) and a tool session's
replies."""

FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class Problem:
    """One generated task instance.

    ``data`` holds everything the verifier needs (JSON-serialisable: ints, floats, strings,
    lists, dicts), so a problem can be stored, sent to another process and re-verified.
    ``answer`` is one reference answer as it would appear inside ``\\boxed{}``; when several
    answers are valid it is just one of them, and verifiers check constraints instead.
    """

    env: str
    difficulty: int
    seed: int
    prompt: str
    answer: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "difficulty": self.difficulty,
            "seed": self.seed,
            "prompt": self.prompt,
            "answer": self.answer,
            "data": dict(self.data),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Problem:
        return cls(
            env=d["env"],
            difficulty=int(d["difficulty"]),
            seed=int(d["seed"]),
            prompt=d["prompt"],
            answer=d["answer"],
            data=dict(d.get("data", {})),
        )


@dataclass(frozen=True)
class Span:
    """A half-open character range ``[start, end)`` in a response text."""

    start: int
    end: int


@dataclass(frozen=True)
class Verdict:
    """What a scorer says about one output.

    - ``reward``: the training score; environments keep it in [-1, 1] (RLVE: -1 wrong format,
      -0.5 invalid answer, otherwise partial credit in [0, 1]).
    - ``correct``: fully correct (used for accuracy and for curriculum adaptation).
    - ``detail``: a short human-readable reason. It is shown to the model as feedback in
      multi-turn refinement, so it must never reveal the reference answer.
    - ``steps`` / ``first_failed_step``: optional step structure (e.g. proof tactics) for
      process credit: spans in the output text and the index of the first failing step.
    - ``extra``: scorer-specific facts (e.g. ``{"status": "timeout"}``), JSON-serialisable.
    """

    reward: float
    correct: bool
    detail: str = ""
    steps: tuple[Span, ...] = ()
    first_failed_step: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """One model turn inside a multi-turn episode.

    ``start``/``end`` index the episode's ``response_ids`` (the model's own tokens of this
    turn; feedback tokens between turns are outside every turn and have ``loss_mask`` 0).
    ``score`` is the verifier's score of the turn's output, ``alt_scores`` the scores of
    counterfactual alternatives sampled from the same history (empty when none were drawn),
    ``nll`` the turn's mean negative log-likelihood under the behaviour policy.
    """

    start: int
    end: int
    text: str
    score: float
    correct: bool
    feedback: str = ""
    nll: float = 0.0
    alt_scores: tuple[float, ...] = ()


@dataclass(frozen=True)
class Rollout:
    """One sampled response (or multi-turn episode) to one problem.

    - ``group``: rollouts of the same prompt share a group id (GRPO groups).
    - ``prompt_ids``: the prompt tokens, chat template included.
    - ``response_ids``: every token after the prompt. For a multi-turn episode this includes
      the feedback messages between turns; ``loss_mask`` marks the model's own tokens.
    - ``logprobs``: log-probability of each response token under the policy that sampled it
      (the behaviour policy), temperature applied as in sampling; 0.0 where ``loss_mask`` is 0.
    - ``text``: the decoded response (for multi-turn: the last turn's output).
    """

    problem: Problem
    group: int
    prompt_ids: tuple[int, ...]
    response_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    text: str
    finish_reason: FinishReason
    loss_mask: tuple[int, ...] | None = None
    turns: tuple[Turn, ...] = ()
    verdict: Verdict | None = None

    def __post_init__(self) -> None:
        if len(self.logprobs) != len(self.response_ids):
            raise ValueError(
                f"Rollout: {len(self.logprobs)} log-probs for {len(self.response_ids)} "
                "response tokens; there must be exactly one per token"
            )
        if self.loss_mask is not None and len(self.loss_mask) != len(self.response_ids):
            raise ValueError(
                f"Rollout: loss_mask has {len(self.loss_mask)} entries for "
                f"{len(self.response_ids)} response tokens"
            )

    @property
    def mask(self) -> tuple[int, ...]:
        """1 on tokens the model produced (trained on), 0 elsewhere."""
        return self.loss_mask if self.loss_mask is not None else (1,) * len(self.response_ids)

    @property
    def reward(self) -> float:
        if self.verdict is None:
            raise ValueError("Rollout has not been scored yet (verdict is None)")
        return self.verdict.reward


@dataclass(frozen=True)
class SamplingParams:
    """How the rollout engine samples. ``n`` samples are drawn per prompt."""

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 256
    stop: tuple[str, ...] = ()
    seed: int | None = None

    def check(self) -> None:
        """Raise ``ValueError`` naming the first out-of-range field (every engine calls it)."""
        if self.n < 1:
            raise ValueError(f"sampling.n must be >= 1, got {self.n}")
        if self.temperature < 0:
            raise ValueError(f"sampling.temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"sampling.top_p must be in (0, 1], got {self.top_p}")


@dataclass(frozen=True)
class Batch:
    """Token tensors for the learner. ``N`` sequences, prompts left-padded to width ``P``,
    responses right-padded to width ``R`` — so response token ``t`` of every row sits in
    column ``P + t`` and its log-prob is read from the logits of column ``P + t − 1``.

    - ``input_ids``      [N, P+R] long: prompt ⊕ response.
    - ``attention_mask`` [N, P+R] long: 1 on real tokens.
    - ``response_mask``  [N, R] float: 1 on trained response tokens (the loss mask).
    - ``old_logprobs``   [N, R] float: log π_old of each response token (0 on padding).
    - ``advantages``     [N, R] float: token-level advantages (0 outside the response).
    - ``rewards``        [N] float: each sequence's scalar reward (metrics, shaping).
    - ``truncated``      [N] bool: the response hit the length limit.
    - ``references``     N token tuples, or empty: each row's reference answer written as a
      response (``\\boxed{answer}`` and the end of the turn), for a teacher that reads it
      (``privileged_self`` with ``context: reference``); () when the batch has none, and an
      empty tuple for a row whose problem has no reference answer.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    response_mask: torch.Tensor
    old_logprobs: torch.Tensor
    advantages: torch.Tensor
    rewards: torch.Tensor
    truncated: torch.Tensor
    references: tuple[tuple[int, ...], ...] = ()

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])

    @property
    def prompt_width(self) -> int:
        return int(self.input_ids.shape[1] - self.response_mask.shape[1])

    def distinct_prompts(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Each distinct (left-padded) prompt once: its ids [U, P], its attention mask [U, P],
        and every row's index into them [N] (the G samples of a group share one)."""
        import torch

        p = self.prompt_width
        key = torch.cat([self.input_ids[:, :p], self.attention_mask[:, :p]], dim=1)
        uniq, inverse = torch.unique(key, dim=0, return_inverse=True)
        return uniq[:, :p], uniq[:, p:], inverse

    def to(self, device: torch.device | str) -> Batch:
        """The same batch with every tensor on ``device`` (itself when already there)."""
        import torch  # not at the top: verifier worker processes import this module

        device = torch.device(device)
        if self.input_ids.device == device:
            return self
        moved = {
            f.name: getattr(self, f.name).to(device) for f in fields(self) if f.name != "references"
        }
        return Batch(**moved, references=self.references)

    def select(self, index: torch.Tensor | Sequence[int]) -> Batch:
        """The rows ``index``, with padding columns no selected row needs removed."""
        import torch

        idx = torch.as_tensor(index, dtype=torch.long)
        p = self.prompt_width
        attn = self.attention_mask[idx]
        prompt_len = int(attn[:, :p].sum(dim=1).max().item()) if len(idx) else 0
        resp_len = int(attn[:, p:].sum(dim=1).max().item()) if len(idx) else 0
        cols = slice(p - prompt_len, p + resp_len)
        return Batch(
            input_ids=self.input_ids[idx, cols],
            attention_mask=attn[:, cols],
            response_mask=self.response_mask[idx, :resp_len],
            old_logprobs=self.old_logprobs[idx, :resp_len],
            advantages=self.advantages[idx, :resp_len],
            rewards=self.rewards[idx],
            truncated=self.truncated[idx],
            references=tuple(self.references[i] for i in idx.tolist()) if self.references else (),
        )
