"""The rollout producer: the sampling half of a training step.

    problems  = curriculum.sample(B)                       # RLVE windows (or static)
    rollouts  = collector.collect(problems, engine, ..., score=reward_stage)  # G samples each
    (DAPO: drop groups with equal rewards, refill, up to max_rounds)
    curriculum.update(every rollout generated)             # verdicts → difficulty windows

It runs in the trainer's process (the synchronous schedule) or in a process of its own with
its own engine copy (the ``bounded_staleness`` schedule); either way it hands the learner a
:class:`Produced` that carries the policy version that sampled it and the producer-side
metrics of the step.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from verirl.config import DynamicSamplingConfig, RewardConfig, RolloutConfig, TrainConfig
from verirl.curriculum import effective_prompt_ratio
from verirl.rewards import RewardContext
from verirl.rewards.stage import RewardStage, build_reward_source
from verirl.rollout.base import RolloutEngine
from verirl.rollout.collect import COLLECTORS, Collector
from verirl.rollout.prompts import SYSTEM_VARIANTS, PromptFormatter
from verirl.serve.settings import GymConfig
from verirl.sources import ProblemSource, TaskStream
from verirl.train.group_filters import GROUP_FILTERS
from verirl.train.ledger import Ledger
from verirl.types import Rollout, SamplingParams
from verirl.verification.batch import BatchVerifier

logger = logging.getLogger("verirl.train")


@dataclass(frozen=True)
class ProducerSettings:
    """What the producer reads: how it samples (``rollout:``), scores (``reward:``) and
    filters groups (``dynamic_sampling:``), and the gym its problems come from
    (:meth:`~verirl.config.TrainConfig.gym`); ``ledger``: where it records the problems it
    issues (the run's ledger, :mod:`verirl.train.ledger`; None: nowhere)."""

    rollout: RolloutConfig
    reward: RewardConfig
    dynamic_sampling: DynamicSamplingConfig
    gym: GymConfig
    ledger: Path | None = None

    @classmethod
    def from_config(cls, cfg: TrainConfig) -> ProducerSettings:
        return cls(cfg.rollout, cfg.reward, cfg.dynamic_sampling, cfg.gym())

    def recording_to(self, ledger: Path | None) -> ProducerSettings:
        """These settings, recording the issued problems in ``ledger``."""
        return replace(self, ledger=ledger)


@dataclass
class StepOutput:
    rollouts: list[Rollout]
    generated: list[Rollout]  # everything sampled this step, incl. dropped groups
    rounds: int
    stats: dict[str, float] = field(default_factory=dict)
    reward_metrics: dict[str, float] = field(default_factory=dict)


@dataclass
class Produced:
    """One step's rollouts as the learner receives them.

    - ``version``: the policy version (learner updates applied) whose weights sampled them;
    - ``stats``, ``curriculum``, ``collector``, ``reward``: the producer-side metrics, kept
      apart so the loop logs them in the same order as ever;
    - ``moved``: environments whose difficulty window moved on these verdicts;
    - ``rollout_s``: seconds spent producing; ``state``: the producer's state right after
      this batch, when it travels (what a checkpoint holds with it as the last batch produced
      ahead or, with none ahead, right after training on it);
      ``sync``: how the producer's weight sync went (asynchronous backends); ``engine``:
      the producer's engine's own cost metrics after this batch (``engine/*``: its weight
      sync, continuous batching's joins, partial sequences), which a synchronous run logs
      from the learner's process.
    """

    out: StepOutput
    version: int = 0
    curriculum: dict[str, float] = field(default_factory=dict)
    collector: dict[str, float] = field(default_factory=dict)
    moved: int = 0
    rollout_s: float = 0.0
    state: dict[str, Any] | None = None
    sync: dict[str, float] | None = None  # the producer's weight sync: idle s, checksum check
    sync_detail: str = ""  # what a failed sync check found (names the stale weights)
    engine: dict[str, float] = field(default_factory=dict)  # the producer engine's engine/*

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A batch pickled into a checkpoint before ``engine`` existed loads with it empty."""
        self.__dict__.update({"engine": {}, **state})


class RolloutProducer:
    """Curriculum → prompts → engine → verification → curriculum update. The curriculum
    and the verification stage come from the run's problem source (:mod:`verirl.sources`):
    this process's own, or a ``verirl serve`` gym's. It reads :class:`ProducerSettings`."""

    def __init__(
        self,
        settings: ProducerSettings,
        curriculum: TaskStream,
        collector: Collector,
        formatter: PromptFormatter,
        reward: RewardStage,
        engine: RolloutEngine,
        sampling: SamplingParams,
    ) -> None:
        self.settings = settings
        self.curriculum = curriculum
        self.collector = collector
        self.formatter = formatter
        self.reward = reward
        self.engine = engine
        self.sampling = sampling
        self.next_group = 0
        self.batch = 0  # the batch being produced (the ledger's ``issued`` records name it)
        self.ledger = Ledger(settings.ledger)
        chosen = settings.dynamic_sampling.filter
        spec = GROUP_FILTERS.get(chosen.name)
        self._filter, self._filter_params = spec.part, spec.parse(chosen.params)

    def record_to(self, ledger: Path | None) -> None:
        """Record the problems issued from now on in ``ledger`` (the run's ledger, which the
        trainer names once it knows its run directory); an asynchronous producer process
        started later is built from these settings and records there too."""
        self.settings = self.settings.recording_to(ledger)
        self.ledger = Ledger(ledger)

    @property
    def model(self) -> Any:
        """The policy the reward stage scores with (the trainer's, or the producer's copy)."""
        return self.reward.ctx.model

    @property
    def tokenizer(self) -> Any:
        return self.reward.ctx.tokenizer

    @property
    def verifier(self) -> BatchVerifier:
        """The verification stage the reward stage verifies with."""
        return self.reward.ctx.verifier

    def produce(self, version: int = 0, batch: int | None = None) -> Produced:
        """Sample batch ``batch`` (default: ``version``, as in the synchronous loop) with
        policy ``version``: one step's groups, scored, and the curriculum updated from the
        verdicts (in the order the groups were generated)."""
        self.batch = version if batch is None else batch
        self.verifier.metrics(reset=True)  # count this step's verifications only
        t0 = time.perf_counter()
        out = self.sample_step()
        moved = self.curriculum.update(out.generated)
        return Produced(
            out,
            version=version,
            curriculum=self.curriculum.metrics(),
            collector={f"collector/{k}": v for k, v in self.collector.metrics().items()},
            moved=len(moved),
            rollout_s=time.perf_counter() - t0,
        )

    def sample_step(self) -> StepOutput:
        """Sample a step's groups; with DAPO dynamic sampling, drop the groups the filter
        refuses (``dynamic_sampling.filter``, :mod:`verirl.train.group_filters`: by default
        those whose rewards are all equal) and refill from new prompts for up to
        ``max_rounds`` generation rounds."""
        ds = self.settings.dynamic_sampling
        want = self.settings.rollout.prompts_per_step
        kept: list[list[Rollout]] = []
        generated: list[Rollout] = []
        groups_seen: list[list[float]] = []
        rounds = 0
        while len(kept) < want and rounds < (ds.max_rounds if ds.enabled else 1):
            problems = self.curriculum.sample(want - len(kept))
            self.ledger.issued(self.batch, self.next_group, problems)
            rollouts = self.collector.collect(
                problems,
                self.engine,
                self.formatter,
                self.sampling,
                self.next_group,
                score=self.reward,
            )
            self.next_group += len(problems)
            generated.extend(rollouts)
            for group in groups_of(rollouts):
                groups_seen.append([r.reward for r in group])
                if not ds.enabled or self._filter(self._filter_params, group):
                    kept.append(group)
            rounds += 1
        kept = kept[:want]
        if not kept:  # every group was uninformative: train on nothing but keep the step
            kept = groups_of(generated)[:want]
        rollouts = [r for g in kept for r in g]
        rewards = [r.verdict.reward for r in generated if r.verdict]
        lengths = [sum(r.mask) for r in generated]
        stats = {
            "rollout/reward": _mean(rewards),
            "rollout/accuracy": _mean([float(r.verdict.correct) for r in generated if r.verdict]),
            "rollout/response_tokens": _mean(lengths),
            "rollout/truncated": _mean([float(r.finish_reason == "length") for r in generated]),
            "rollout/effective_prompt_ratio": effective_prompt_ratio(groups_seen),
            "rollout/rounds": float(rounds),
            "rollout/groups_trained": float(len(kept)),
        }
        return StepOutput(rollouts, generated, rounds, stats, self.reward.metrics())

    def state_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine.state_dict(),
            "curriculum": self.curriculum.state_dict(),
            "next_group": self.next_group,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.engine.load_state_dict(state["engine"])
        self.curriculum.load_state_dict(state["curriculum"])
        self.next_group = int(state["next_group"])


def training_formatter(rollout: RolloutConfig, tokenizer: Any) -> PromptFormatter:
    """The training prompt (``rollout.system_prompt``, ``few_shot``, ``prompt_variants``,
    ``zero_shot_rate``)."""
    variants = SYSTEM_VARIANTS if rollout.prompt_variants else ()
    return PromptFormatter(
        tokenizer, rollout.system_prompt, tuple(rollout.few_shot), variants, rollout.zero_shot_rate
    )


def build_producer(
    settings: ProducerSettings,
    source: ProblemSource,
    formatter: PromptFormatter,
    model: Any,
    tokenizer: Any,
    device: str,
    engine: RolloutEngine,
) -> RolloutProducer:
    """The producer ``settings`` describe over built parts: ``source``'s task stream and
    verifier (:func:`verirl.sources.build_source`), the training prompt ``formatter``
    (:func:`training_formatter`) and ``engine``, with the collector, reward stage and sampling
    parameters ``settings`` name. ``device``: where the policy ``model`` lives (reward sources
    that score with it put their batches there)."""
    r, reward = settings.rollout, settings.reward
    collector = COLLECTORS.get(r.collector.name).build(r.collector.params)
    scorer = build_reward_source(
        reward.name, reward.params, reward.overlong.buffer, r.max_new_tokens
    )
    ctx = RewardContext(
        tokenizer=tokenizer, model=model, device=device, engine=engine, verifier=source.verifier
    )
    sampling = SamplingParams(
        n=r.group_size,
        temperature=r.temperature,
        top_p=r.top_p,
        max_new_tokens=r.max_new_tokens,
        stop=tuple(r.stop),
    )
    stage = RewardStage(scorer, ctx, stream=streams_verification(settings.gym))
    return RolloutProducer(settings, source.tasks, collector, formatter, stage, engine, sampling)


def streams_verification(gym: GymConfig) -> bool:
    """``verification.stream`` resolved: 'auto' streams unless verifiers run inline in this
    process and none of the run's environments checks proofs (whose checkers are processes
    of their own either way)."""
    mode = gym.verification.stream
    if mode != "auto":
        return mode == "on"
    if gym.verification.executor.name != "inline":
        return True
    from verirl.envs import get_env, is_env, load_all

    load_all()
    names = gym.curriculum.environments or []
    return any(is_env(n) and get_env(n).prover is not None for n in names)


def groups_of(rollouts: Sequence[Rollout]) -> list[list[Rollout]]:
    by_id: dict[int, list[Rollout]] = {}
    for r in rollouts:
        by_id.setdefault(r.group, []).append(r)
    return list(by_id.values())


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0
