"""The trainer: the training loop on top of every part. The parts are built once, by
:func:`verirl.assembly.build`; the trainer only orchestrates them: every algorithm lives
behind a registry, where the parts run is the placement's business and when rollouts are
produced the schedule's (:mod:`verirl.backends`). Nothing below imports this module.

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
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from verirl.assembly import Parts, SamplingParts
from verirl.backends.schedules import BUFFER
from verirl.config import TrainConfig, dump_config
from verirl.credit import CreditInput
from verirl.errors import UserInputError
from verirl.progress import phase
from verirl.rollout.prompts import PromptFormatter
from verirl.train.checkpoint import (
    latest_checkpoint,
    load_checkpoint,
    resumable_checkpoint,
    save_checkpoint,
)
from verirl.train.distill import reference_response
from verirl.train.evaluate import EvalResult, evaluate, heldout_problems
from verirl.train.health import HealthMonitor
from verirl.train.learner import collate
from verirl.train.ledger import LEDGER, Ledger, LedgerAudit, audit_run
from verirl.train.loggers import run_loggers
from verirl.train.memory import HeapRelease, MemoryMonitor
from verirl.train.metrics import MetricsLog
from verirl.train.producer import StepOutput
from verirl.types import Batch, Rollout

if TYPE_CHECKING:
    from transformers import PreTrainedModel

logger = logging.getLogger("verirl.train")

__all__ = ["StepOutput", "Trainer", "evaluate_heldout", "new_run_dir", "summary_json"]


class Trainer:
    """Runs the loop over a run's parts: ``Trainer(verirl.assembly.build(cfg), run_dir)``.
    ``run_dir`` holds the config, ``metrics.jsonl``, ``run.log``, checkpoints and the final
    model. Close it (or use it as a context manager) to close the parts."""

    def __init__(self, parts: Parts, run_dir: Path) -> None:
        self.parts, self.cfg, self.run_dir = parts, parts.cfg, run_dir
        self._log_handler = _run_log(run_dir)
        placement, plan = parts.placement, parts.memory_plan
        logger.info("device %s; precision %s", placement.device, placement.reason)
        if plan is not None:
            logger.info("memory plan: %s", "; ".join(line.strip() for line in plan.lines()))
        self.heap = HeapRelease(self.cfg.run.release_memory and placement.device.type == "cpu")
        self.plain_formatter = PromptFormatter(parts.tokenizer)  # a prompt never trained with
        # the run's ledger: what the curriculum issued and what became of it
        # (verirl.train.ledger), written by the process that leads and its producer
        if parts.backend.leads:
            parts.producer.record_to(run_dir / LEDGER)
        self.ledger = Ledger(parts.producer.settings.ledger)
        self._restored: list[int] = []  # batches a resumed checkpoint held, not yet trained
        self.step = 0
        self.last_rollouts: list[Rollout] = []
        self.health = HealthMonitor.from_config(self.cfg, run_dir if run_dir.is_dir() else None)
        self.memory = MemoryMonitor(placement.device)

    def close(self) -> None:
        """Close the parts (idempotent)."""
        if hasattr(self, "memory"):
            self.memory.close()
        self.parts.close()
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
        return self.parts.backend.leads

    def fit(self, progress: Any = None) -> dict[str, Any]:
        """Run the remaining steps: the loop in the process that leads; in the others, what
        the placement has them do (:meth:`~verirl.backends.Backend.follow`)."""
        backend = self.parts.backend
        if not backend.leads:
            done = backend.follow(self.parts.learner, self.step, self.cfg.run.steps)
            backend.training_done()
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
        self.ledger.start(self.step, self._restored)
        if cfg.eval.before_and_after and self.step == 0:
            before = evaluate_heldout(self.parts, when="before training")
            log.write(0, before.flat("eval_before"))
            summary["before"] = before
            if cfg.eval.unseen_prompt:
                summary["before_plain"] = evaluate_heldout(
                    self.parts, self.plain_formatter, "before training"
                )
                log.write(0, summary["before_plain"].flat("eval_before_plain"))
        start = time.perf_counter()
        for step in range(self.step, cfg.run.steps):
            # a step's own line comes when it ends; one that runs long says so meanwhile
            with phase(f"step {step + 1}/{cfg.run.steps}", quiet=True):
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
        self.parts.backend.training_done()
        if cfg.run.steps and (not cfg.run.save_every or self.step % cfg.run.save_every):
            self.save()
        self.ledger.end(self.step)
        if self.ledger.path is not None:
            summary["ledger"] = audit_run(self.run_dir)
            logger.info("%s", summary["ledger"].line())
        if cfg.run.steps:
            with phase("writing the final model", quiet=True):
                summary["final_model"] = str(self.export(self.run_dir / "final"))
        if cfg.eval.before_and_after:
            after = evaluate_heldout(self.parts, when="after training")
            log.write(self.step, after.flat("eval_after"))
            summary["after"] = after
            if cfg.eval.unseen_prompt:
                summary["after_plain"] = evaluate_heldout(
                    self.parts, self.plain_formatter, "after training"
                )
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
        p = self.parts
        produced = p.schedule.next_rollouts(p.producer, self.step)
        out = produced.out
        self.last_rollouts = out.generated
        t1 = time.perf_counter()
        batch = p.backend.share_batch(self.collate(out.rollouts))
        p.schedule.before_update(p.engine)
        with self.heap.learning():
            train = p.learner.update(batch)
        self.ledger.trained(self.step, produced.version, out.rollouts, out.generated)
        t_sync = time.perf_counter()
        cost = p.schedule.after_update(p.engine, self.step + 1)
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
        p = self.parts
        credit_input = CreditInput.from_rollouts(rollouts, tokenizer=p.tokenizer)
        advantages = p.credit(credit_input, p.credit_params)
        references = [reference_response(p.tokenizer, ro.problem) for ro in rollouts]
        return collate(rollouts, advantages, p.tokenizer.pad_token_id, references)

    # ---- checkpoints --------------------------------------------------------------------------
    def save(self) -> Path:
        if not self.writes_files:
            return latest_checkpoint(self.run_dir) or self.run_dir
        p = self.parts
        # the producer's state, and the batches it produced ahead (waits for them)
        producer = p.schedule.checkpoint_state(p.producer, self.step)
        state = {"learner": p.learner.state_dict(), **producer}
        with phase(f"writing checkpoint {self.step}", quiet=True):
            path = save_checkpoint(
                self.run_dir, self.step, p.model, state, keep=self.cfg.run.keep_checkpoints
            )
        self.ledger.checkpoint(self.step, [i for i, _ in producer.get(BUFFER, [])])
        return path

    def export(self, path: Path) -> Path:
        """Write the trained policy as a Hugging Face model directory (the adapter alone for
        LoRA), loadable with ``from_pretrained`` or as ``model.name`` of another run."""
        # A Hugging Face model, or a peft model wrapping one (the same save_pretrained).
        cast("PreTrainedModel", self.parts.model).save_pretrained(path)
        self.parts.tokenizer.save_pretrained(path)
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
            self.parts.learner.load_state_dict(state["learner"])
            self.parts.producer.load_state_dict(state)
            self._restored = self.parts.schedule.restore(state)

        self.step = load_checkpoint(path, self.parts.model, restore)
        return True


def evaluate_heldout(
    parts: SamplingParts, formatter: PromptFormatter | None = None, when: str = ""
) -> EvalResult:
    """Held-out accuracy of ``parts``' policy (``eval:``) under the training prompt (or
    ``formatter``'s), sampled through the run's engine and collector and checked by its
    verifiers, as a phase that reports its progress (``when``: its name's end)."""
    cfg, e = parts.cfg, parts.cfg.eval
    envs = e.environments or cfg.curriculum.resolved_environments()
    problems = heldout_problems(envs, e.difficulties, e.problems)
    name = "held-out evaluation" + (" under a plain prompt" if formatter else "")
    with phase(f"{name} {when}".strip(), len(problems) * e.samples, "samples"):
        producer = parts.producer
        return evaluate(
            parts.engine,
            formatter or producer.formatter,
            problems,
            e.samples,
            e.temperature,
            cfg.rollout.max_new_tokens,
            seed=cfg.run.seed,
            collector=producer.collector,
            verifier=producer.verifier,
        )


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
        if isinstance(o, LedgerAudit):
            return o.as_dict()
        return str(o)

    return json.dumps(summary, default=enc, indent=2)
