"""The training loop. It orchestrates; every algorithm lives behind a registry.

One step:

    problems  = curriculum.sample(B)                       # RLVE windows (or static)
    rollouts  = collector.collect(problems, engine, ..., score=reward_stage)  # G samples each
    (each batch scored by the reward stage inside collect)  # env verifier | CER | prover ...
    (DAPO: drop groups with equal rewards, refill, up to max_rounds)
    curriculum.update(all rollouts of the step)
    advantages = credit(CreditInput.from_rollouts(...))    # GRPO | RLOO | process | TCPO ...
    metrics    = learner.update(collate(rollouts, advantages))
"""

from __future__ import annotations

import json
import logging
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import torch

from verirl.config import TrainConfig, dump_config
from verirl.credit import CreditInput, get_credit
from verirl.curriculum import Curriculum, build_curriculum, effective_prompt_ratio
from verirl.device import resolve_placement
from verirl.envs import get_env
from verirl.errors import UserInputError
from verirl.models import LoraSettings, load_policy
from verirl.provers.settings import Provers
from verirl.rewards import RewardContext
from verirl.rewards.executors import EXECUTORS, Executor
from verirl.rewards.stage import RewardStage, build_reward_source
from verirl.rewards.verification import BatchVerifier
from verirl.rollout.base import ReportsCost, RolloutEngine, get_engine
from verirl.rollout.collect import get_collector
from verirl.rollout.prompts import SYSTEM_VARIANTS, PromptFormatter
from verirl.sandbox import configure_sandbox
from verirl.train.checkpoint import (
    latest_checkpoint,
    load_checkpoint,
    resumable_checkpoint,
    save_checkpoint,
)
from verirl.train.distributed import backend_for, from_environment
from verirl.train.evaluate import EvalResult, evaluate, heldout_problems
from verirl.train.health import HealthMonitor
from verirl.train.learner import Learner, LearnerSettings, PolicyLearner, collate
from verirl.train.metrics import MetricsLog
from verirl.types import Rollout, SamplingParams

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from verirl.integrations.ray.backend import RayBackend

logger = logging.getLogger("verirl.train")


@dataclass
class StepOutput:
    rollouts: list[Rollout]
    generated: list[Rollout]  # everything sampled this step, incl. dropped groups
    rounds: int
    stats: dict[str, float] = field(default_factory=dict)
    reward_metrics: dict[str, float] = field(default_factory=dict)


class Trainer:
    """Builds every part from the config and runs the loop. ``run_dir`` holds the config,
    ``metrics.jsonl``, ``run.log``, checkpoints and the final model. Close it (or use it as
    a context manager) to stop its verifier workers and proof checkers."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, policy: Any = None) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self._log_handler = _run_log(run_dir)
        if cfg.run.threads:
            torch.set_num_threads(cfg.run.threads)
        torch.manual_seed(cfg.run.seed)
        self.placement = resolve_placement(cfg.model.device, cfg.model.dtype)
        logger.info("device %s; precision %s", self.placement.device, self.placement.reason)
        lora = LoraSettings(**cfg.model.lora.model_dump()) if cfg.model.lora else None
        if lora is not None:
            lora = replace(lora, target_modules=tuple(lora.target_modules))
        self.model: torch.nn.Module
        self.model, self.tokenizer = policy or load_policy(cfg.model.name, lora=lora)
        self.model.to(self.placement.device)
        # run.backend=ray: the same parts as actors (verifier pool, engine replicas, learner
        # group); Ray is imported only here
        self.backend: RayBackend | None = None
        self._backend_finalizer: weakref.finalize[Any, Any] | None = None
        if cfg.run.backend == "ray":
            from verirl.integrations.ray import backend as ray_backend

            self.backend = ray_backend.RayBackend(cfg)
            # registered first: a part that fails to start below still stops the others
            self._backend_finalizer = weakref.finalize(self, self.backend.close)
        self.engine: RolloutEngine
        if self.backend is not None:
            self.engine = self.backend.rollout_engine(self.model)
        else:
            self.engine = get_engine(cfg.rollout.engine.name).build(
                cfg.rollout.engine.params, self.model, self.tokenizer, self.placement, cfg.run.seed
            )
        self.formatter = PromptFormatter(
            self.tokenizer,
            cfg.rollout.system_prompt,
            tuple(cfg.rollout.few_shot),
            SYSTEM_VARIANTS if cfg.rollout.prompt_variants else (),
            cfg.rollout.zero_shot_rate,
        )
        self.plain_formatter = PromptFormatter(self.tokenizer)  # a prompt never trained with
        self.curriculum: Curriculum = build_curriculum(cfg.curriculum, seed=cfg.run.seed)
        self.collector = get_collector(cfg.rollout.collector.name).build(
            cfg.rollout.collector.params
        )
        # the verification stage: environment verifiers on the executor, proofs on the provers
        v = cfg.verification
        configure_sandbox(cfg.sandbox)  # code verifiers' sandbox, here and in the workers
        self.executor: Executor
        if self.backend is not None:
            self.executor = self.backend.executor(cfg.run.plugins)
        else:
            self.executor = EXECUTORS.get(v.executor.name).build(v.executor.params, cfg.run.plugins)
        self.provers = Provers(cfg.provers)
        self._finalizer = weakref.finalize(self, _close_all, self.executor, self.provers)
        self._start_provers(cfg.curriculum.resolved_environments())
        verifier = BatchVerifier(self.executor, self.provers, v.timeout_s)
        source = build_reward_source(
            cfg.reward.name,
            cfg.reward.params,
            cfg.reward.overlong.buffer,
            cfg.rollout.max_new_tokens,
        )
        ctx = RewardContext(
            tokenizer=self.tokenizer,
            model=self.model,
            device=str(self.placement.device),
            engine=self.engine,
            verifier=verifier,
        )
        self.reward = RewardStage(source, ctx)
        credit = get_credit(cfg.credit.name)
        self.credit, self.credit_params = credit, credit.params.model_validate(cfg.credit.params)
        # under torchrun (WORLD_SIZE > 1) the local learner is one rank of a data-parallel
        # group: rank 0 samples and writes files, every rank trains on its share of the batch
        self.dp = (
            from_environment(backend_for(self.placement.device)) if self.backend is None else None
        )
        self.learner: PolicyLearner
        if self.backend is not None:
            self.learner = self.backend.learner(self.model)
        else:
            settings = LearnerSettings.from_config(cfg, self.placement)
            self.learner = Learner(self.model, settings, cfg.run.steps, self.dp)
        self.sampling = SamplingParams(
            n=cfg.rollout.group_size,
            temperature=cfg.rollout.temperature,
            top_p=cfg.rollout.top_p,
            max_new_tokens=cfg.rollout.max_new_tokens,
            stop=tuple(cfg.rollout.stop),
        )
        self.step = 0
        self.next_group = 0
        self.last_rollouts: list[Rollout] = []
        self.health = HealthMonitor.from_config(cfg, run_dir if run_dir.is_dir() else None)

    def _start_provers(self, environments: Sequence[str]) -> None:
        """Start the checker of every proof system the curriculum needs now, so a missing or
        misconfigured prover stops the run before any work (not as a verifier error later)."""
        for system in sorted({s for e in environments if (s := get_env(e).prover)}):
            self.provers.checker(system)
            logger.info("%s checker ready (%s)", system, self.provers.checker(system).name)

    def close(self) -> None:
        """Stop the verifier workers, proof checkers and Ray actors (idempotent)."""
        try:
            self._finalizer()
        finally:
            if self._backend_finalizer is not None:
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
        return self.dp is None or self.dp.rank == 0

    def fit(self, progress: Any = None) -> dict[str, Any]:
        cfg = self.cfg
        if not self.writes_files:
            for step in range(self.step, cfg.run.steps):
                self.train_step()
                self.step = step + 1
            return {"run_dir": str(self.run_dir), "rank": self.dp.rank if self.dp else 0}
        log = MetricsLog(
            self.run_dir,
            tensorboard=cfg.run.tensorboard,
            resume_step=self.step,
            samples_per_step=cfg.run.log_samples,
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
            log.write(self.step, metrics)
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
        log.close()
        return summary

    def train_step(self) -> dict[str, float]:
        if not self.writes_files:  # a torchrun follower: rank 0's batch, this rank's share
            assert self.dp is not None
            return self.learner.update(self.dp.broadcast(None))
        self.reward.ctx.verifier.metrics(reset=True)  # count this step's verifications only
        t0 = time.perf_counter()
        out = self.sample_step()
        self.last_rollouts = out.generated
        t1 = time.perf_counter()
        moved = self.curriculum.update(out.generated)
        credit_input = CreditInput.from_rollouts(out.rollouts, tokenizer=self.tokenizer)
        advantages = self.credit(credit_input, self.credit_params)
        batch = collate(out.rollouts, advantages, self.tokenizer.pad_token_id)
        if self.dp is not None:
            self.dp.broadcast(batch)
        sleep = getattr(self.engine, "sleep", None)  # vLLM on GPU: free its memory meanwhile
        if sleep is not None:
            sleep()
        train = self.learner.update(batch)
        t_sync = time.perf_counter()
        self.engine.sync_weights()
        t2 = time.perf_counter()
        # an engine that measures its own cost (Ray replicas: ray/*; vLLM's weight sync: engine/*)
        cost = self.engine.metrics() if isinstance(self.engine, ReportsCost) else {}
        generated_tokens = sum(sum(r.mask) for r in out.generated)
        trained_tokens = int(batch.response_mask.sum())
        metrics = {
            **out.stats,
            **train,
            **self.curriculum.metrics(),
            **{f"collector/{k}": v for k, v in self.collector.metrics().items()},
            **{f"reward/{k}": v for k, v in out.reward_metrics.items()},
            **{(k if "/" in k else f"engine/{k}"): v for k, v in cost.items()},
            "time/rollout_s": t1 - t0,
            "time/train_s": t2 - t1,
            "time/weight_sync_s": t2 - t_sync,
            "time/step_s": t2 - t0,
            "throughput/generated_tokens": float(generated_tokens),
            "throughput/trained_tokens": float(trained_tokens),
            "throughput/tokens_per_s": (generated_tokens + trained_tokens) / max(t2 - t0, 1e-9),
            "curriculum/moved": float(len(moved)),
        }
        return metrics

    def sample_step(self) -> StepOutput:
        """Sample a step's groups; with DAPO dynamic sampling, drop groups whose rewards are
        all equal and refill from new prompts for up to ``max_rounds`` generation rounds."""
        ds = self.cfg.dynamic_sampling
        want = self.cfg.rollout.prompts_per_step
        kept: list[list[Rollout]] = []
        generated: list[Rollout] = []
        groups_seen: list[list[float]] = []
        rounds = 0
        while len(kept) < want and rounds < (ds.max_rounds if ds.enabled else 1):
            problems = self.curriculum.sample(want - len(kept))
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
            for group in _groups(rollouts):
                rewards = [r.reward for r in group]
                groups_seen.append(rewards)
                if not ds.enabled or len(set(rewards)) > 1:
                    kept.append(group)
            rounds += 1
        kept = kept[:want]
        if not kept:  # every group was uninformative: train on nothing but keep the step
            kept = _groups(generated)[:want]
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
        state = {
            "learner": self.learner.state_dict(),
            "engine": self.engine.state_dict(),
            "curriculum": self.curriculum.state_dict(),
            "next_group": self.next_group,
        }
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
            self.engine.load_state_dict(state["engine"])
            self.curriculum.load_state_dict(state["curriculum"])
            self.next_group = int(state["next_group"])

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


def _groups(rollouts: Sequence[Rollout]) -> list[list[Rollout]]:
    by_id: dict[int, list[Rollout]] = {}
    for r in rollouts:
        by_id.setdefault(r.group, []).append(r)
    return list(by_id.values())


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def summary_json(summary: dict[str, Any]) -> str:
    def enc(o: Any) -> Any:
        if isinstance(o, EvalResult):
            return {"overall": o.overall, "accuracy": o.accuracy}
        return str(o)

    return json.dumps(summary, default=enc, indent=2)
