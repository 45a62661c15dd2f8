"""verirl's verifiers as verl 0.9.1 reward managers (``reward.reward_manager.name``).

verl's reward loop calls ``run_single`` once per sample, all samples of a batch concurrently
(``asyncio.gather``). These managers collect the samples that arrive together and verify them
in one :class:`~verirl.verification.batch.BatchVerifier` call (micro-batching: the first
sample waits ``batch_wait_s`` for the others), so a batch of proofs goes to the checker's
worker pool together and slow verifiers run under the stage's deadlines. Rows that are not
verirl problems fall back to the rule verifier (see :mod:`verirl.integrations.verl.scoring`).

- ``verirl``: RLVE's graded reward (Zeng et al. 2025, arXiv:2511.07317) on the last valid
  token, like verl's own managers; ``reward_extra_info`` carries ``acc`` and ``verirl_correct``.
- ``verirl_process``: the tactic scores of process-verified proving (Kim & Yun 2026,
  arXiv:2606.20068) on each tactic's first token, for the ``verirl_process`` estimator.
- ``verirl_turns``: each turn's score on the turn's last token (TCPO, Liao et al. 2026,
  arXiv:2608.01667), for the ``verirl_tcpo`` estimator; the turns are the runs of 1s in the
  sample's ``response_mask`` (verl's multi-turn agent loop masks inserted messages with 0).

Settings (optional) under ``reward.verirl`` in verl's config: ``executor`` (``inline``,
``threads``, ``processes``; ``processes`` enforces deadlines by killing stuck workers),
``timeout_s``, ``batch_wait_s``, ``process`` (fields of
:class:`~verirl.credit.process.ProcessParams`) and ``turn_score_map`` (how a verdict becomes
r ∈ [0, 1]: ``correct``, ``clip``, ``affine``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import torch
from verl import DataProto
from verl.experimental.reward_loop.reward_manager import register
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from verirl.errors import UserInputError
from verirl.integrations.verl.scoring import (
    encode_tactic_scores,
    encode_turn_scores,
    row_problem,
    score_dict,
    turn_spans,
    verdicts_for,
)
from verirl.types import Problem, Verdict
from verirl.verification.batch import BatchVerifier


def _settings(config: Any) -> dict[str, Any]:
    reward = config.get("reward") if hasattr(config, "get") else None
    found = reward.get("verirl") if reward is not None and hasattr(reward, "get") else None
    if found is None:
        return {}
    try:
        from omegaconf import OmegaConf

        return dict(OmegaConf.to_container(found, resolve=True))
    except (ImportError, ValueError):
        return dict(found)


def build_verifier(settings: Mapping[str, Any]) -> BatchVerifier:
    from verirl.verification.executors import EXECUTORS

    executor = EXECUTORS.get(str(settings.get("executor", "inline"))).build({})
    return BatchVerifier(executor=executor, timeout_s=float(settings.get("timeout_s", 10.0)))


class _MicroBatcher:
    """Verifies the (problem, text) pairs that arrive within ``wait_s`` of each other in one
    call, off the event loop."""

    def __init__(self, verifier: BatchVerifier, wait_s: float, max_items: int = 4096) -> None:
        self.verifier = verifier
        self.wait_s = wait_s
        self.max_items = max_items
        self.pending: list[tuple[Problem, str, asyncio.Future[Verdict]]] = []
        self.calls = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def verify(self, problem: Problem, text: str) -> Verdict:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Verdict] = loop.create_future()
        self.pending.append((problem, text, future))
        if len(self.pending) == 1:
            loop.call_later(self.wait_s, self._start_flush, loop)
        elif len(self.pending) >= self.max_items:
            self._start_flush(loop)
        return await future

    def _start_flush(self, loop: asyncio.AbstractEventLoop) -> None:
        task = loop.create_task(self._flush())
        self._tasks.add(task)  # keep a reference until it is done
        task.add_done_callback(self._tasks.discard)

    async def _flush(self) -> None:
        batch, self.pending = self.pending, []
        if not batch:
            return
        self.calls += 1
        loop = asyncio.get_running_loop()
        problems = [p for p, _, _ in batch]
        texts = [t for _, t, _ in batch]
        try:
            verdicts = await loop.run_in_executor(
                None, lambda: verdicts_for(problems, texts, self.verifier)
            )
        except Exception as exc:  # a broken checker: every waiting sample gets the error
            for _, _, f in batch:
                if not f.done():
                    f.set_exception(exc)
            return
        for (_, _, f), v in zip(batch, verdicts, strict=True):
            if not f.done():
                f.set_result(v)


class _Sample:
    """One sample of a DataProto as these managers read it."""

    def __init__(self, data: DataProto, tokenizer: Any) -> None:
        item = data[-1]  # multi-sequence outputs: the last sequence, as verl's managers do
        prompt_length = int(item.batch["prompts"].shape[-1])
        response = item.batch["responses"]
        self.length = int(item.batch["attention_mask"][prompt_length:].sum())
        self.ids = [int(t) for t in response[: self.length].tolist()]
        mask = item.batch.get("response_mask") if hasattr(item.batch, "get") else None
        self.mask = mask if mask is not None else torch.ones(len(response), dtype=torch.long)
        self.tokenizer = tokenizer
        self.text = tokenizer.decode(self.ids, skip_special_tokens=True)
        nt = item.non_tensor_batch
        gt = (nt.get("reward_model") or {}).get("ground_truth")
        self.problem = row_problem(nt.get("data_source", ""), gt, nt.get("extra_info") or {})


class _VerirlManagerBase(RewardManagerBase):
    def __init__(
        self,
        config: Any,
        tokenizer: Any,
        compute_score: Any = None,
        reward_router_address: str | None = None,
        reward_model_tokenizer: Any = None,
        **_: Any,
    ) -> None:
        super().__init__(config, tokenizer, compute_score)
        self.settings = _settings(config)
        self.verifier = build_verifier(self.settings)
        self.batcher = _MicroBatcher(self.verifier, float(self.settings.get("batch_wait_s", 0.01)))


@register("verirl")
class VerirlRewardManager(_VerirlManagerBase):
    """RLVE's graded reward from the problem's environment, batched (module docstring)."""

    async def run_single(self, data: DataProto) -> dict[str, Any]:
        sample = _Sample(data, self.tokenizer)
        verdict = await self.batcher.verify(sample.problem, sample.text)
        return {"reward_score": float(verdict.reward), "reward_extra_info": score_dict(verdict)}


@register("verirl_process")
class VerirlProcessRewardManager(_VerirlManagerBase):
    """Tactic scores φ on each tactic's first token (module docstring); the scalar reward in
    ``reward_extra_info['score']`` stays the proof's pass/fail verdict."""

    def __init__(self, config: Any, tokenizer: Any, compute_score: Any = None, **kw: Any) -> None:
        from verirl.credit.process import ProcessParams

        super().__init__(config, tokenizer, compute_score, **kw)
        try:
            self.process = ProcessParams.model_validate(self.settings.get("process", {}))
        except ValueError as exc:
            raise UserInputError(f"reward.verirl.process: {exc}") from exc
        if self.process.placement != "first_token":
            raise UserInputError("reward.verirl.process.placement: only first_token maps to verl")

    async def run_single(self, data: DataProto) -> dict[str, Any]:
        from verirl.credit.process import tactic_scores
        from verirl.credit.spans import step_token_starts

        sample = _Sample(data, self.tokenizer)
        verdict = await self.batcher.verify(sample.problem, sample.text)
        starts: list[int] = []
        if verdict.steps:
            starts = step_token_starts(sample.text, sample.ids, verdict.steps, self.tokenizer)
        phi = tactic_scores(
            len(starts),
            passed=bool(verdict.correct),
            status=str(verdict.extra.get("status", "")),
            first_failed=verdict.first_failed_step,
            params=self.process,
        )
        width = int(data[-1].batch["responses"].shape[-1])
        row = encode_tactic_scores(width, sample.length, starts, phi, bool(verdict.correct))
        return {"reward_score": row, "reward_extra_info": score_dict(verdict)}

    @classmethod
    def assemble_rm_scores(cls, data: DataProto, scores: list[Any]) -> torch.Tensor:
        return torch.stack([torch.as_tensor(s, dtype=torch.float32) for s in scores])


@register("verirl_turns")
class VerirlTurnsRewardManager(_VerirlManagerBase):
    """Each turn's verifier score r_k ∈ [0, 1] on the turn's last token (module docstring);
    every turn of every sample is verified in the same micro-batch."""

    async def run_single(self, data: DataProto) -> dict[str, Any]:
        from verirl.rollout.multiturn import turn_score

        sample = _Sample(data, self.tokenizer)
        spans = turn_spans(sample.mask, sample.length) or [(0, max(1, sample.length))]
        texts = [self.tokenizer.decode(sample.ids[a:b], skip_special_tokens=True) for a, b in spans]
        verdicts = await asyncio.gather(*(self.batcher.verify(sample.problem, t) for t in texts))
        how = self.settings.get("turn_score_map", "correct")
        if how not in ("correct", "clip", "affine"):
            raise UserInputError(
                f"reward.verirl.turn_score_map must be correct, clip or affine, got {how!r}"
            )
        scores = [turn_score(v, how) for v in verdicts]
        width = int(data[-1].batch["responses"].shape[-1])
        info = score_dict(verdicts[-1])
        info["verirl_turns"] = float(len(spans))
        return {"reward_score": encode_turn_scores(width, spans, scores), "reward_extra_info": info}

    @classmethod
    def assemble_rm_scores(cls, data: DataProto, scores: list[Any]) -> torch.Tensor:
        return torch.stack([torch.as_tensor(s, dtype=torch.float32) for s in scores])


__all__ = ["VerirlProcessRewardManager", "VerirlRewardManager", "VerirlTurnsRewardManager"]
