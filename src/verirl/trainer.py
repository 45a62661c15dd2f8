"""The trainer: the training loop on top of every part. It orchestrates; every algorithm
lives behind a registry, where the parts run is the placement's business and when rollouts
are produced the schedule's (:mod:`verirl.backends`). Nothing below imports this module.

One step:

    produced   = schedule.next_rollouts(producer, step)    # sampled now, or from the queue
                 # producer: curriculum.sample → collector.collect(engine, score=reward_stage)
                 #           (DAPO refill) → curriculum.update(verdicts)
    advantages = credit(CreditInput.from_rollouts(...))    # GRPO | RLOO | process | TCPO ...
    batch      = backend.share_batch(collate(rollouts, advantages))
    metrics    = learner.update(batch)
    schedule.after_update(engine, step + 1)                # the new weights reach the sampler
"""

from __future__ import annotations

import json
import logging
import time
import weakref
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import torch

from verirl.assembly import check as check_config
from verirl.backends import (
    Backend,
    BackendSettings,
    Schedule,
    build_placement,
    build_schedule,
    placement_name,
)
from verirl.config import TrainConfig, dump_config
from verirl.credit import CREDIT, CreditInput
from verirl.errors import UserInputError
from verirl.models import PolicySpec, build_policy
from verirl.progress import phase
from verirl.provers.settings import Provers
from verirl.rewards.stage import RewardStage
from verirl.rollout.base import RolloutEngine
from verirl.rollout.collect import Collector
from verirl.rollout.prompts import PromptFormatter
from verirl.sources import TaskStream
from verirl.train.checkpoint import (
    latest_checkpoint,
    load_checkpoint,
    resumable_checkpoint,
    save_checkpoint,
)
from verirl.train.evaluate import EvalResult, evaluate, heldout_problems
from verirl.train.health import HealthMonitor
from verirl.train.learner import PolicyLearner, collate
from verirl.train.loggers import run_loggers
from verirl.train.memory import HeapRelease, MemoryMonitor
from verirl.train.memory_plan import MemoryPlan, check_fits
from verirl.train.metrics import MetricsLog
from verirl.train.producer import ProducerSettings, RolloutProducer, StepOutput, build_producer
from verirl.types import Batch, Problem, Rollout
from verirl.verification.executors import Executor, LazyExecutor
from verirl.verification.resources import VerifierResources, build_verifier_resources

if TYPE_CHECKING:
    from transformers import PreTrainedModel

logger = logging.getLogger("verirl.train")

__all__ = ["StepOutput", "Trainer", "new_run_dir", "summary_json"]


class Trainer:
    """Builds every part from the config and runs the loop. ``run_dir`` holds the config,
    ``metrics.jsonl``, ``run.log``, checkpoints and the final model. Close it (or use it as
    a context manager) to stop its verifier workers, proof checkers, producer and placement."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, policy: Any = None) -> None:
        check_config(cfg)  # the named parts exist, fit their params and each other
        self.cfg, self.run_dir = cfg, run_dir
        self._log_handler = _run_log(run_dir)
        if cfg.run.threads:
            torch.set_num_threads(cfg.run.threads)
        self.memory_plan: MemoryPlan | None = None
        if cfg.run.check_memory and policy is None:
            # before any work: a run that will not fit stops here, in one line
            self.memory_plan = check_fits(cfg)
        self.model: torch.nn.Module
        self.model, self.tokenizer, self.placement = build_policy(
            PolicySpec.from_config(cfg), policy
        )
        logger.info("device %s; precision %s", self.placement.device, self.placement.reason)
        self.heap = HeapRelease(cfg.run.release_memory and self.placement.device.type == "cpu")
        producer_settings = ProducerSettings.from_config(cfg)
        self.backend: Backend = build_placement(
            placement_name(cfg.run.placement.name),
            BackendSettings.from_config(cfg, self.placement),
            self.placement,
        )
        try:
            self.schedule: Schedule = build_schedule(
                cfg.run.schedule, self.backend, producer_settings
            )
        except BaseException:
            self.backend.close()
            raise
        # registered first: a part that fails to start below still stops the backend
        self._backend_finalizer = weakref.finalize(self, _stop, self.schedule, self.backend)
        self.engine: RolloutEngine = self.backend.engine(self.model, self.tokenizer)
        # the code sandbox, the executor (the placement's; built on first use when a producer
        # with verifiers of its own checks the rollouts) and the proof checkers
        executor = self.backend.executor
        if not self.schedule.verifies_here:
            executor = lambda: LazyExecutor(self.backend.executor)  # noqa: E731
        self.verifiers: VerifierResources = build_verifier_resources(
            cfg.verification, cfg.provers, cfg.sandbox, cfg.run.plugins, executor
        )
        self._finalizer = weakref.finalize(self, self.verifiers.close)
        self.producer: RolloutProducer = build_producer(
            producer_settings,
            self.model,
            self.tokenizer,
            str(self.placement.device),
            self.engine,
            self.executor,
            self.provers,
            start_checkers=self.backend.verifies_rollouts and self.schedule.verifies_here,
        )
        self.plain_formatter = PromptFormatter(self.tokenizer)  # a prompt never trained with
        self.credit = CREDIT.get(cfg.credit.name)
        self.credit_params = self.credit.params.model_validate(cfg.credit.params)
        self.learner: PolicyLearner = self.backend.learner(self.model)
        self.step = 0
        self.last_rollouts: list[Rollout] = []
        self.health = HealthMonitor.from_config(cfg, run_dir if run_dir.is_dir() else None)
        self.memory = MemoryMonitor(self.placement.device)

    @property
    def executor(self) -> Executor:
        return self.verifiers.executor

    @property
    def provers(self) -> Provers:
        return self.verifiers.provers

    # the producer's parts, by their old names
    @property
    def curriculum(self) -> TaskStream:
        return self.producer.curriculum

    @property
    def collector(self) -> Collector:
        return self.producer.collector

    @collector.setter
    def collector(self, collector: Collector) -> None:
        self.producer.collector = collector

    @property
    def formatter(self) -> PromptFormatter:
        return self.producer.formatter

    @property
    def reward(self) -> RewardStage:
        return self.producer.reward

    @reward.setter
    def reward(self, reward: RewardStage) -> None:
        self.producer.reward = reward

    @property
    def next_group(self) -> int:
        return self.producer.next_group

    def sample_step(self) -> StepOutput:
        return self.producer.sample_step()

    def close(self) -> None:
        """Stop the verifier workers, proof checkers, the producer and the placement
        (idempotent)."""
        if hasattr(self, "memory"):
            self.memory.close()
        try:
            self._finalizer()
        finally:
            self._backend_finalizer()
        if self._log_handler is not None:
            logging.getLogger("verirl").removeHandler(self._log_handler)
            self._log_handler.close()
            self._log_handler = None

    def __enter__(self) -> Trainer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the loop ------------------------------------------------------------------------------
    @property
    def writes_files(self) -> bool:
        """False on torchrun ranks other than 0: they train, rank 0 samples, logs and saves."""
        return self.backend.leads

    def fit(self, progress: Any = None) -> dict[str, Any]:
        """Run the remaining steps: the loop in the process that leads; in the others, what
        the placement has them do (:meth:`~verirl.backends.Backend.follow`)."""
        if not self.backend.leads:
            done = self.backend.follow(self.learner, self.step, self.cfg.run.steps)
            self.step = max(self.step, self.cfg.run.steps)
            return {"run_dir": str(self.run_dir), **done}
        return self._lead(progress)

    def _lead(self, progress: Any = None) -> dict[str, Any]:
        """The loop of the process that samples, logs and saves."""
        cfg = self.cfg
        log = MetricsLog(
            self.run_dir,
            resume_step=self.step,
            samples_per_step=cfg.run.log_samples,
            loggers=run_loggers(cfg, self.run_dir, self.step),
            total_steps=cfg.run.steps,
        )
        summary: dict[str, Any] = {"run_dir": str(self.run_dir)}
        if cfg.eval.before_and_after and self.step == 0:
            before = self.evaluate(when="before training")
            log.write(0, before.flat("eval_before"))
            summary["before"] = before
            if cfg.eval.unseen_prompt:
                summary["before_plain"] = self.evaluate(self.plain_formatter, "before training")
                log.write(0, summary["before_plain"].flat("eval_before_plain"))
        start = time.perf_counter()
        for step in range(self.step, cfg.run.steps):
            metrics = self.train_step()
            self.step = step + 1
            log.write_step(self.step, metrics)  # + its line in run.log
            log.write_samples(self.step, self.last_rollouts)
            if progress is not None:
                progress(self.step, metrics)
            self.health.observe(self.step, metrics)  # warns once; raises on run.health.stop_on
            if cfg.run.save_every and self.step % cfg.run.save_every == 0:
                self.save()
        summary["train_seconds"] = time.perf_counter() - start
        if cfg.run.steps and (not cfg.run.save_every or self.step % cfg.run.save_every):
            self.save()
        if cfg.run.steps:
            with phase("writing the final model"):
                summary["final_model"] = str(self.export(self.run_dir / "final"))
        if cfg.eval.before_and_after:
            after = self.evaluate(when="after training")
            log.write(self.step, after.flat("eval_after"))
            summary["after"] = after
            if cfg.eval.unseen_prompt:
                summary["after_plain"] = self.evaluate(self.plain_formatter, "after training")
                log.write(self.step, summary["after_plain"].flat("eval_after_plain"))
        self.memory.sample()
        summary["peak_rss_mb"] = self.memory.run_peak / 1e6
        log.close()
        return summary

    def train_step(self) -> dict[str, float]:
        """One step: rollouts (sampled now or queued) → advantages → one learner update →
        the new weights to the engine. Returns the step's metrics."""
        t0 = time.perf_counter()
        self.memory.reset()
        produced = self.schedule.next_rollouts(self.producer, self.step)
        out = produced.out
        self.last_rollouts = out.generated
        t1 = time.perf_counter()
        batch = self.backend.share_batch(self.collate(out.rollouts))
        self.schedule.before_update(self.engine)
        with self.heap.learning():
            train = self.learner.update(batch)
        t_sync = time.perf_counter()
        cost = self.schedule.after_update(self.engine, self.step + 1)
        t2 = time.perf_counter()
        generated_tokens = sum(sum(r.mask) for r in out.generated)
        trained_tokens = int(batch.response_mask.sum())
        metrics = {
            **out.stats,
            **train,
            **produced.curriculum,
            **produced.collector,
            **{f"reward/{k}": v for k, v in out.reward_metrics.items()},
            **cost,
            "time/rollout_s": t1 - t0,
            "time/train_s": t2 - t1,
            "time/weight_sync_s": t2 - t_sync,
            "time/step_s": t2 - t0,
            "throughput/generated_tokens": float(generated_tokens),
            "throughput/trained_tokens": float(trained_tokens),
            "throughput/tokens_per_s": (generated_tokens + trained_tokens) / max(t2 - t0, 1e-9),
            "curriculum/moved": float(produced.moved),
            **self.memory.step_metrics(),
        }
        return metrics

    def collate(self, rollouts: list[Rollout]) -> Batch:
        """Rollouts → credit → the learner's padded batch."""
        credit_input = CreditInput.from_rollouts(rollouts, tokenizer=self.tokenizer)
        advantages = self.credit(credit_input, self.credit_params)
        return collate(rollouts, advantages, self.tokenizer.pad_token_id)

    # ---- pieces -------------------------------------------------------------------------------
    def evaluate(self, formatter: PromptFormatter | None = None, when: str = "") -> EvalResult:
        """Held-out accuracy under the training prompt (or ``formatter``'s), as a phase that
        reports its progress (``when``: its name's end, e.g. "before training")."""
        e = self.cfg.eval
        envs = e.environments or self.cfg.curriculum.resolved_environments()
        problems = heldout_problems(envs, e.difficulties, e.problems)
        name = "held-out evaluation" + (" under a plain prompt" if formatter else "")
        with phase(f"{name} {when}".strip(), len(problems) * e.samples, "samples"):
            return self._evaluate(problems, formatter)

    def _evaluate(self, problems: list[Problem], formatter: PromptFormatter | None) -> EvalResult:
        e = self.cfg.eval
        return evaluate(
            self.engine,
            formatter or self.formatter,
            problems,
            e.samples,
            e.temperature,
            self.cfg.rollout.max_new_tokens,
            seed=self.cfg.run.seed,
            collector=self.collector,
            verifier=self.producer.verifier,
        )

    # ---- checkpoints --------------------------------------------------------------------------
    def save(self) -> Path:
        if not self.writes_files:
            return latest_checkpoint(self.run_dir) or self.run_dir
        producer = self.schedule.producer_state(self.producer)
        state = {"learner": self.learner.state_dict(), **producer}
        with phase(f"writing checkpoint {self.step}"):
            return save_checkpoint(
                self.run_dir, self.step, self.model, state, keep=self.cfg.run.keep_checkpoints
            )

    def export(self, path: Path) -> Path:
        """Write the trained policy as a Hugging Face model directory (the adapter alone for
        LoRA), loadable with ``from_pretrained`` or as ``model.name`` of another run."""
        # A Hugging Face model, or a peft model wrapping one (the same save_pretrained).
        cast("PreTrainedModel", self.model).save_pretrained(path)
        self.tokenizer.save_pretrained(path)
        return path

    def resume(self) -> bool:
        """Restore the newest intact checkpoint of ``run_dir``; False when there is none.
        Each damaged newer checkpoint is logged in one line naming the file; a run whose
        checkpoints are all damaged raises :class:`~verirl.errors.CheckpointError`."""
        path, damaged = resumable_checkpoint(self.run_dir)
        for line in damaged:
            logger.warning("skipping a damaged checkpoint: %s", line)
        if path is None:
            return False

        def restore(state: dict[str, Any]) -> None:
            self.learner.load_state_dict(state["learner"])
            self.producer.load_state_dict(state)

        self.step = load_checkpoint(path, self.model, restore)
        return True


def new_run_dir(cfg: TrainConfig) -> Path:
    name = cfg.run.name or datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir = Path(cfg.run.dir) / name
    if latest_checkpoint(run_dir) is not None:
        raise UserInputError(
            f"run directory {run_dir} already has checkpoints; resume it with "
            f"`verirl train --resume {run_dir}` or choose another run.name"
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(dump_config(cfg))
    return run_dir


def _stop(schedule: Schedule, backend: Backend) -> None:
    """Stop producing, then the placement's parts, then wait for the producer to end (it may
    be waiting on the placement's actors)."""
    try:
        schedule.close()
    finally:
        try:
            backend.close()
        finally:
            schedule.join()


def _run_log(run_dir: Path) -> logging.Handler | None:
    """Send verirl's log records (precision choice, verifier errors and timeouts) to
    ``run_dir/run.log``."""
    if not run_dir.is_dir():
        return None
    handler = logging.FileHandler(run_dir / "run.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("verirl")
    root.addHandler(handler)
    root.setLevel(min(root.level or logging.INFO, logging.INFO))
    return handler


def summary_json(summary: dict[str, Any]) -> str:
    def enc(o: Any) -> Any:
        if isinstance(o, EvalResult):
            return {"overall": o.overall, "accuracy": o.accuracy}
        return str(o)

    return json.dumps(summary, default=enc, indent=2)
