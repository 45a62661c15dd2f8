"""Multi-turn refinement inside ``GRPOTrainer`` through TRL's ``rollout_func`` hook.

TRL 1.16's ``rollout_func(prompts, trainer)`` (experimental in TRL) replaces generation: it
gets this process's prompts, already repeated ``num_generations`` times in a row, and returns
``prompt_ids``, ``completion_ids`` and ``logprobs`` (one completion per entry); an
``env_mask`` key marks the model's own tokens (1) against inserted text (0), and every other
key reaches the reward functions as a column.

:class:`MultiTurnRollout` runs verirl's ``multi_turn`` collector (TCPO's refinement episodes,
Liao et al. 2026, arXiv:2608.01667): the model answers, the environment's verifier scores it,
a feedback message (never the answer) is appended and the model tries again, up to
``max_turns``. TRL then trains on the whole episode — every turn's tokens, the feedback glue
masked out by ``env_mask`` — with the reward :class:`~verirl.integrations.trl.rewards.EnvReward`
reads from the ``verirl_final_reward`` column (the final turn's verdict).

What it supports: refinement episodes with the environment verifier, sampled with the
trainer's own model through verirl's transformers engine (``temperature``, ``top_p``,
``max_completion_length`` per turn from the trainer's config); tested on one process (under
DDP each rank would sample with its own full copy of the model; not tested).
What it does not: TRL's advantage is one scalar per completion, so TCPO's per-turn credit
(and its counterfactual resampling) cannot reach TRL's loss — use verirl's own trainer or the
verl estimator for that; generation does not go through TRL's vLLM client; the model must be
whole on the process (no FSDP / ZeRO-3 sharding).
"""

from __future__ import annotations

from typing import Any

from verirl.errors import UserInputError
from verirl.integrations.trl.data import CurriculumDataset
from verirl.integrations.trl.rewards import FINAL_CORRECT_KEY, FINAL_REWARD_KEY
from verirl.types import SamplingParams
from verirl.verification.batch import BatchVerifier


class MultiTurnRollout:
    """``rollout_func`` for ``GRPOTrainer``: refinement episodes on the dataset's problems.

    ``source``: the :class:`CurriculumDataset` that produced the prompts (it maps a prompt
    back to its problem and holds the formatter that rendered it). ``params``: fields of
    :class:`~verirl.rollout.multiturn.MultiTurnParams` (``max_turns``, ``feedback_template``,
    ...); the counterfactual alternatives are off, since TRL's loss cannot use them.
    """

    def __init__(
        self,
        source: CurriculumDataset,
        params: dict[str, Any] | None = None,
        *,
        verifier: BatchVerifier | None = None,
        seed: int = 0,
    ) -> None:
        from verirl.rollout.multiturn import MultiTurn, MultiTurnParams

        settings = {"counterfactual": False, **(params or {})}
        if settings["counterfactual"]:
            raise UserInputError(
                "MultiTurnRollout: counterfactual=True needs TCPO's per-turn credit, which TRL's "
                "per-completion advantage cannot carry"
            )
        self.source = source
        self.collector = MultiTurn(MultiTurnParams.model_validate(settings))
        self.verifier = verifier or BatchVerifier()
        self.seed = seed
        self._engine: Any = None
        self.last: list[Any] = []

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        from verirl.rewards.base import RewardContext
        from verirl.rewards.stage import env_reward_stage

        g = trainer.num_generations if trainer.model.training else trainer.num_generations_eval
        if len(prompts) % g:
            raise RuntimeError(f"rollout_func got {len(prompts)} prompts, not a multiple of G={g}")
        firsts = prompts[::g]
        for k, first in enumerate(firsts):
            if any(p != first for p in prompts[k * g : (k + 1) * g]):
                raise RuntimeError("rollout_func expects each prompt repeated G times in a row")
        problems = [self.source.problem_for_prompt(p) for p in firsts]
        tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
        formatter = self.source.formatter
        if formatter.tokenizer is not tokenizer:
            import dataclasses

            formatter = dataclasses.replace(formatter, tokenizer=tokenizer)
        sampling = SamplingParams(
            n=g,
            temperature=float(trainer.temperature),
            top_p=float(trainer.top_p if trainer.top_p is not None else 1.0),
            max_new_tokens=int(trainer.max_completion_length),
        )
        stage = env_reward_stage(RewardContext(verifier=self.verifier))
        rollouts = self.collector.collect(
            problems, self._engine_for(trainer, tokenizer), formatter, sampling, score=stage
        )
        self.last = rollouts
        verdicts = [r.verdict for r in rollouts if r.verdict is not None]
        if len(verdicts) != len(rollouts):
            raise RuntimeError("multi_turn collector returned an unscored episode")
        for name, value in self.collector.metrics().items():
            trainer._log_metric(f"multi_turn/{name}", float(value))
        return {
            "prompt_ids": [list(r.prompt_ids) for r in rollouts],
            "completion_ids": [list(r.response_ids) for r in rollouts],
            "logprobs": [list(r.logprobs) for r in rollouts],
            "env_mask": [list(r.mask) for r in rollouts],
            FINAL_REWARD_KEY: [float(v.reward) for v in verdicts],
            FINAL_CORRECT_KEY: [bool(v.correct) for v in verdicts],
        }

    def _engine_for(self, trainer: Any, tokenizer: Any) -> Any:
        from verirl.rollout.hf import HFEngine

        model = trainer.accelerator.unwrap_model(trainer.model)
        if self._engine is None or self._engine.model is not model:
            self._engine = HFEngine(model, tokenizer, seed=self.seed)
        return self._engine
