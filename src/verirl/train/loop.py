"""The training loop. It orchestrates; every algorithm lives behind a registry, and where the
parts run (this process, torchrun ranks, Ray actors; synchronous or asynchronous) is the
backend's business (:mod:`verirl.backends`).

One step:

    produced   = backend.next_rollouts(producer)            # sampled now, or from the queue
                 # producer: curriculum.sample → collector.collect(engine, score=reward_stage)
                 #           (DAPO refill) → curriculum.update(verdicts)
    advantages = credit(CreditInput.from_rollouts(...))    # GRPO | RLOO | process | TCPO ...
    batch      = backend.share_batch(collate(rollouts, advantages))
    metrics    = learner.update(batch)
    backend.publish_weights(engine, version)               # the engine samples the new policy
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
from verirl.backends import Backend, select
from verirl.config import TrainConfig, dump_config
from verirl.credit import CreditInput, get_credit
from verirl.errors import UserInputError
from verirl.models import PolicySpec, build_policy
from verirl.provers.settings import Provers
from verirl.rewards.stage import RewardStage
from verirl.rollout.base import RolloutEngine
from verirl.rollout.collect import Collector
from verirl.rollout.prompts import PromptFormatter
from verirl.sandbox import configure_sandbox
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
from verirl.train.memory import MemoryMonitor, return_freed_memory_to_the_os
from verirl.train.memory_plan import MemoryPlan, check_fits
from verirl.train.metrics import MetricsLog
from verirl.train.producer import RolloutProducer, StepOutput, build_producer
from verirl.types import Batch, Rollout
from verirl.verification.executors import Executor

if TYPE_CHECKING:
    from transformers import PreTrainedModel

logger = logging.getLogger("verirl.train")

__all__ = ["StepOutput", "Trainer", "new_run_dir", "summary_json"]


class Trainer:
    """Builds every part from the config and runs the loop. ``run_dir`` holds the config,
    ``metrics.jsonl``, ``run.log``, checkpoints and the final model. Close it (or use it as
    a context manager) to stop its verifier workers, proof checkers and backend."""

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
        if cfg.run.release_memory and self.placement.device.type == "cpu":
            return_freed_memory_to_the_os()
        self.backend: Backend = select(cfg, self.placement)
        # registered first: a part that fails to start below still stops the backend
        self._backend_finalizer = weakref.finalize(self, self.backend.close)
        self.engine: RolloutEngine = self.backend.engine(self.model, self.tokenizer)
        configure_sandbox(cfg.sandbox)  # code verifiers' sandbox, here and in the workers
        self.executor: Executor = self.backend.executor()
        self.provers: Provers = self.backend.provers()
        self._finalizer = weakref.finalize(self, _close_all, self.executor, self.provers)
        self.producer: RolloutProducer = build_producer(
            cfg,
            self.model,
            self.tokenizer,
            self.placement,
            self.engine,
            self.executor,
            self.provers,
            start_checkers=self.backend.verifies_rollouts,
        )
        self.plain_formatter = PromptFormatter(self.tokenizer)  # a prompt never trained with
        self.credit = get_credit(cfg.credit.name)
        self.credit_params = self.credit.params.model_validate(cfg.credit.params)
        self.learner: PolicyLearner = self.backend.learner(self.model)
        self.step = 0
        self.last_rollouts: list[Rollout] = []
        self.health = HealthMonitor.from_config(cfg, run_dir if run_dir.is_dir() else None)
        self.memory = MemoryMonitor(self.placement.device)

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
        """Stop the verifier workers, proof checkers and the backend (idempotent)."""
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
        return self.backend.writes_files

    def fit(self, progress: Any = None) -> dict[str, Any]:
        """Run the remaining steps: this process's part, as the backend assigns it."""
        return self.backend.fit(self, progress)

    def lead(self, progress: Any = None) -> dict[str, Any]:
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
            before = self.evaluate()
            log.write(0, before.flat("eval_before"))
            summary["before"] = before
            if cfg.eval.unseen_prompt:
                summary["before_plain"] = self.evaluate(self.plain_formatter)
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
            summary["final_model"] = str(self.export(self.run_dir / "final"))
        if cfg.eval.before_and_after:
            after = self.evaluate()
            log.write(self.step, after.flat("eval_after"))
            summary["after"] = after
            if cfg.eval.unseen_prompt:
                summary["after_plain"] = self.evaluate(self.plain_formatter)
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
        produced = self.backend.next_rollouts(self.producer, self.step)
        out = produced.out
        self.last_rollouts = out.generated
        t1 = time.perf_counter()
        batch = self.backend.share_batch(self.collate(out.rollouts))
        self.backend.before_update(self.engine)
        train = self.learner.update(batch)
        t_sync = time.perf_counter()
        cost = self.backend.publish_weights(self.engine, self.step + 1)
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
    def evaluate(self, formatter: PromptFormatter | None = None) -> EvalResult:
        """Held-out accuracy under the training prompt (or ``formatter``'s)."""
        e = self.cfg.eval
        envs = e.environments or self.cfg.curriculum.resolved_environments()
        problems = heldout_problems(envs, e.difficulties, e.problems)
        return evaluate(
            self.engine,
            formatter or self.formatter,
            problems,
            e.samples,
            e.temperature,
            self.cfg.rollout.max_new_tokens,
            seed=self.cfg.run.seed,
            collector=self.collector,
            verifier=self.reward.ctx.verifier,
        )

    # ---- checkpoints --------------------------------------------------------------------------
    def save(self) -> Path:
        if not self.writes_files:
            return latest_checkpoint(self.run_dir) or self.run_dir
        state = {"learner": self.learner.state_dict(), **self.backend.producer_state(self.producer)}
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


def _close_all(executor: Executor, provers: Provers) -> None:
    executor.close()
    provers.close()


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
