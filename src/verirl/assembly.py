"""The assembly of a run: the parts a config names, checked against their registries and
against each other before any work, then built once (DESIGN.md rule 14).

:func:`build` returns :class:`Parts`, a run's parts in two halves: sampling
(:class:`SamplingParts`) and learning. :func:`build_sampling` stops after the first (``verirl
eval`` and ``preflight``: no learner, no optimizer); :func:`plan` builds only what ``verirl
memory`` needs.

:mod:`verirl.config` is the schema: it reads YAML and overrides and validates each section on
its own. This module sits above both the schema and the registries it names, and checks the
whole system:

- every named part exists in its registry (``rollout.engine``, ``rollout.collector``,
  ``reward``, ``credit``, ``loss.policy``, ``loss.terms``, ``loss.sources``,
  ``loss.token_mask``, ``loss.off_policy``, ``loss.aggregation``, ``verification.executor``,
  ``optim.optimizer``, ``optim.schedule``, ``dynamic_sampling.filter``, ``run.health``
  detectors, ``run.loggers``, ``run.placement``, ``run.schedule``) and its
  ``params`` fit the part's parameter model (curriculum kinds and checker backends are
  checked by their sections' own schema);
- what each part needs is produced by another. Collectors, reward sources and credit
  estimators declare what they produce and need — ``"turns"`` (multi-turn episodes with
  per-turn scores, from the ``multi_turn`` collector), ``"counterfactual"`` (alternative scores
  of chosen turns, from the collector's counterfactual resampling), ``"steps"`` (verified steps
  in the verdicts, from proof environments through a reward source that passes verdicts on).

An incompatible pair is reported in one line that names both fields. :func:`load_config` is
how the CLI loads a config; :func:`build` runs :func:`check` on the config it is given.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from contextlib import ExitStack, closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import torch
from pydantic import BaseModel, ValidationError

from verirl.backends import (
    PLACEMENTS,
    SCHEDULES,
    Backend,
    BackendSettings,
    Schedule,
    build_placement,
    build_schedule,
    placement_name,
)
from verirl.config import (
    ConfigError,
    Plugin,
    TrainConfig,
    format_errors,
    import_plugins,
)
from verirl.config import load_config as load_schema
from verirl.credit import CREDIT, CreditEstimator
from verirl.device import Placement, resolve_placement
from verirl.models import PolicySpec, build_policy, load_tokenizer
from verirl.provers.settings import Provers
from verirl.registry import Registry
from verirl.rewards import REWARDS
from verirl.rollout.base import ENGINES, RolloutEngine
from verirl.rollout.collect import COLLECTORS
from verirl.rollout.prompts import PromptFormatter
from verirl.sources import TaskStream, build_source
from verirl.train.checkpoint import load_checkpoint
from verirl.train.group_filters import GROUP_FILTERS
from verirl.train.health import DETECTORS
from verirl.train.learner import LearnerSettings, PolicyLearner
from verirl.train.loggers import LOGGERS
from verirl.train.loss import AGGREGATIONS, POLICY_LOSSES
from verirl.train.lr_schedules import LR_SCHEDULES
from verirl.train.memory_plan import MemoryPlan, check_fits, longest_prompt, plan_memory
from verirl.train.off_policy import OFF_POLICY
from verirl.train.optimizers import OPTIMIZERS
from verirl.train.producer import (
    ProducerSettings,
    RolloutProducer,
    build_producer,
    training_formatter,
)
from verirl.train.terms import check_sources, check_terms
from verirl.train.token_masks import TOKEN_MASKS
from verirl.verification.executors import EXECUTORS, Executor, LazyExecutor
from verirl.verification.resources import VerifierResources, build_verifier_resources

logger = logging.getLogger("verirl.train")


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> TrainConfig:
    """Read and validate a config (:func:`verirl.config.load_config`: YAML or a bundled
    example's name, ``key.sub=value`` overrides, ``run.plugins`` imported), then :func:`check`
    it as a whole. Every problem is a :class:`~verirl.config.ConfigError` naming the field."""
    return check(load_schema(path, overrides))


def check(cfg: TrainConfig) -> TrainConfig:
    """Check the parts ``cfg`` names against their registries and each other; return ``cfg``
    (with ``run.health.stop_on: [all]`` spelled out as every detector's name).

    Raises :class:`~verirl.config.ConfigError`, one line naming the field."""
    import_plugins({"run": {"plugins": list(cfg.run.plugins)}})
    try:
        _check_health(cfg)
        _check_plugins(cfg)
        _check_off_policy(cfg)
        check_compatible(cfg)
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return cfg


def _check_plugins(cfg: TrainConfig) -> None:
    # Each registry holds specs whose ``params`` is the part's parameter model.
    checks: list[tuple[str, Plugin, Registry[Any]]] = [
        ("rollout.engine", cfg.rollout.engine, ENGINES),
        ("rollout.collector", cfg.rollout.collector, COLLECTORS),
        ("reward", cfg.reward, REWARDS),
        ("credit", cfg.credit, CREDIT),
        ("loss.policy", cfg.loss.policy, POLICY_LOSSES),
        ("loss.token_mask", cfg.loss.token_mask, TOKEN_MASKS),
        ("verification.executor", cfg.verification.executor, EXECUTORS),
        ("optim.optimizer", cfg.optim.optimizer, OPTIMIZERS),
        ("dynamic_sampling.filter", cfg.dynamic_sampling.filter, GROUP_FILTERS),
        ("run.placement", cfg.run.placement, PLACEMENTS),
        ("run.schedule", cfg.run.schedule, SCHEDULES),
        *((f"run.loggers[{i}]", item, LOGGERS) for i, item in enumerate(cfg.run.loggers)),
    ]
    for where, plugin, registry in checks:
        try:
            spec = registry.get(plugin.name)
        except KeyError as exc:
            raise ValueError(f"{where}.name: {exc.args[0]}") from None
        plugin.check_params(spec.params, where)
    if cfg.loss.aggregation not in AGGREGATIONS:
        known = ", ".join(AGGREGATIONS.names())
        raise ValueError(
            f"loss.aggregation: unknown loss aggregation {cfg.loss.aggregation!r}; known: {known}"
        )
    check_terms(cfg.loss.terms)
    check_sources(cfg.loss.sources)
    if cfg.optim.schedule not in LR_SCHEDULES:
        known = ", ".join(LR_SCHEDULES.names())
        raise ValueError(
            f"optim.schedule: unknown learning-rate schedule {cfg.optim.schedule!r}; known: {known}"
        )


def _check_health(cfg: TrainConfig) -> None:
    # Messages as the schema gave them when it held this check: "run.health: <field>: ...".
    health = cfg.run.health
    if "all" in health.stop_on:
        health.__dict__["stop_on"] = DETECTORS.names()
    for where, names in (("stop_on", health.stop_on), ("disable", health.disable)):
        for name in names:
            if name not in DETECTORS:
                known = ", ".join(DETECTORS.names())
                raise ValueError(f"run.health: {where}: unknown detector {name!r}; known: {known}")
    for name, params in health.params.items():
        if name not in DETECTORS:
            known = ", ".join(DETECTORS.names())
            raise ValueError(f"run.health: params: unknown detector {name!r}; known: {known}")
        try:
            DETECTORS.get(name).params.model_validate(params)
        except ValidationError as exc:
            raise ValueError("run.health: " + format_errors(exc, f"params.{name}")) from None


def _check_off_policy(cfg: TrainConfig) -> None:
    names = []
    for plugin in cfg.loss.corrections():
        try:
            spec = OFF_POLICY.get(plugin.name)
        except KeyError as exc:
            raise ValueError(f"loss.off_policy.name: {exc.args[0]}") from None
        plugin.check_params(spec.params, "loss.off_policy")
        if spec.needs_proximal and cfg.optim.old_logprobs == "rollout":
            raise ValueError(
                f"loss.off_policy {plugin.name!r} needs the learner's own old log-probs "
                "(π_prox): set optim.old_logprobs to 'auto' or 'recompute' (with "
                "'rollout' its importance ratio is always 1)"
            )
        names.append(plugin.name)
    if len(set(names)) != len(names):
        raise ValueError(
            f"loss.off_policy names a correction twice ({names}); loss.tis_cap is "
            "truncated_is, so set only one of them"
        )


# ---- declared requirements -------------------------------------------------------------
WHAT = {
    "turns": "multi-turn episodes",
    "counterfactual": "counterfactual alternatives for chosen turns",
    "steps": "verified steps (proof tactics) in the verdicts",
}
HOW = {
    "turns": "use rollout.collector.name=multi_turn (or tool_calls for tool episodes)",
    "counterfactual": "set rollout.collector.params.counterfactual=true, or "
    "credit.params.counterfactual=false",
    "steps": "train on a proof environment (coq_proofs, lean_proofs) with reward.name=env or rule",
}


def produced(cfg: TrainConfig) -> dict[str, str]:
    """Each capability the configured run produces → the field that produces it."""
    out: dict[str, str] = {}
    collector = COLLECTORS.get(cfg.rollout.collector.name).build(cfg.rollout.collector.params)
    for cap in collector.produces():
        out[cap] = f"rollout.collector {cfg.rollout.collector.name!r}"
    reward = REWARDS.get(cfg.reward.name).build(cfg.reward.params)
    for cap in reward.produces(cfg.curriculum.resolved_environments()):
        out[cap] = f"reward {cfg.reward.name!r}"
    return out


def check_compatible(cfg: TrainConfig) -> None:
    """Raise ``ValueError`` (one line, both fields named) for a credit estimator whose needs
    the collector and reward source do not produce."""
    have = produced(cfg)
    needs = CREDIT.get(cfg.credit.name).requirements(cfg.credit.params)
    order = [*WHAT, *sorted(needs - WHAT.keys())]
    for cap in [c for c in order if c in needs and c not in have]:
        source = (
            f"rollout.collector {cfg.rollout.collector.name!r}"
            if cap in ("turns", "counterfactual")
            else f"reward {cfg.reward.name!r} on curriculum.environments "
            f"{cfg.curriculum.resolved_environments()[:4]}"
        )
        raise ValueError(
            f"credit.name: {cfg.credit.name!r} needs {WHAT.get(cap, cap)}, which {source} does "
            f"not produce; {HOW.get(cap, 'pick a compatible credit estimator')}"
        )


# ---- the run's parts -----------------------------------------------------------------------
@dataclass(eq=False)
class SamplingParts:
    """The sampling half of a run, each part built once (:func:`build_sampling`). The
    producer holds the task stream (``curriculum``), the training prompt (``formatter``), the
    ``sampling`` parameters, the ``collector`` and the ``reward`` stage. Close it (or use it as
    a context manager) to stop the verifiers and the placement."""

    cfg: TrainConfig  # checked (:func:`check`)
    placement: Placement  # device and precision (model.device, model.dtype)
    backend: Backend  # where the engine, the executor and the learner run (run.placement)
    verifiers: VerifierResources  # the code sandbox, the executor, the proof checkers
    model: torch.nn.Module  # the policy (model.*), on its device
    tokenizer: Any
    engine: RolloutEngine  # rollout.engine, over the policy
    producer: RolloutProducer  # curriculum → prompts → engine → reward stage

    def __post_init__(self) -> None:
        schedule = getattr(self, "schedule", None)
        self._stop = weakref.finalize(self, _stop, self.verifiers, schedule, self.backend)

    def close(self) -> None:
        """Stop the verifier workers, the proof checkers, the schedule's producer and the
        placement (idempotent)."""
        self._stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(eq=False)
class Parts(SamplingParts):
    """Every part of a training run (:func:`build`): the sampling half, then the learning
    half."""

    memory_plan: MemoryPlan | None  # made once, before the weights load (None: not asked for)
    learner: PolicyLearner  # its activation checkpointing as the plan resolved it
    credit: CreditEstimator  # credit.name, with its credit_params
    credit_params: BaseModel
    schedule: Schedule  # when rollouts are produced (run.schedule)


def build(cfg: TrainConfig, policy: tuple[torch.nn.Module, Any] | None = None) -> Parts:
    """Every part of the run ``cfg`` names, built once, in the order they need each other:
    placement and schedule, verifiers and task stream, the memory plan (a run that will not
    fit stops here, before the weights load), the policy (``policy``: a ready ``(model,
    tokenizer)``), engine and producer, the learner as the plan resolves it, credit."""
    parts = _build(cfg, policy, learning=True)
    assert isinstance(parts, Parts)
    return parts


def build_sampling(
    cfg: TrainConfig,
    policy: tuple[torch.nn.Module, Any] | None = None,
    *,
    checkpoint: str | Path | None = None,
    start_verifiers: bool = True,
) -> SamplingParts:
    """The sampling half of :func:`build` alone: no memory plan, schedule, learner or
    optimizer. ``checkpoint``: a checkpoint directory whose weights the policy takes before
    its engine is built; ``start_verifiers`` False: the executor and the proof checkers
    start on first use (a benchmark that grades its answers itself never starts them)."""
    return _build(cfg, policy, learning=False, checkpoint=checkpoint, verify=start_verifiers)


def _build(
    cfg: TrainConfig,
    policy: tuple[torch.nn.Module, Any] | None,
    learning: bool,
    checkpoint: str | Path | None = None,
    verify: bool = True,
) -> SamplingParts:
    check(cfg)
    if cfg.run.threads:
        torch.set_num_threads(cfg.run.threads)
    spec = PolicySpec.from_config(cfg)
    placement = resolve_placement(spec.device, spec.dtype)
    tokenizer = policy[1] if policy is not None else load_tokenizer(spec.name)
    settings = ProducerSettings.from_config(cfg)
    verifiers: VerifierResources | None = None
    schedule: Schedule | None = None
    backend = build_placement(
        placement_name(cfg.run.placement.name),
        BackendSettings.from_config(cfg, placement),
        placement,
    )
    try:
        if learning:
            schedule = build_schedule(cfg.run.schedule, backend, settings)
        here = verify and (schedule is None or schedule.verifies_here)
        # the executor: the placement's, started on first use when a producer with verifiers
        # of its own checks the rollouts (or nothing here may verify at all)
        executor: Callable[[], Executor] = backend.executor
        if not here:
            executor = lambda: LazyExecutor(backend.executor)  # noqa: E731
        verifiers = build_verifier_resources(
            cfg.verification, cfg.provers, cfg.sandbox, cfg.run.plugins, executor
        )
        start = backend.verifies_rollouts and here
        source = build_source(settings.gym, verifiers.executor, verifiers.provers, start)
        formatter = training_formatter(cfg.rollout, tokenizer)
        plan = _memory_plan(cfg, formatter, source.tasks, policy) if learning else None
        model, tokenizer, _ = build_policy(spec, policy, placement=placement, tokenizer=tokenizer)
        if checkpoint:
            load_checkpoint(Path(checkpoint), model, lambda state: None)
        engine = backend.engine(model, tokenizer)
        device = str(placement.device)
        producer = build_producer(settings, source, formatter, model, tokenizer, device, engine)
        half = (cfg, placement, backend, verifiers, model, tokenizer, engine, producer)
        if schedule is None:
            return SamplingParts(*half)
        checkpointing = cfg.optim.activation_checkpointing
        if checkpointing == "auto":  # the plan's decision (off when there is no plan)
            checkpointing = plan is not None and plan.activation_checkpointing
        learner = backend.learner(
            model,
            LearnerSettings.from_config(cfg, placement, activation_checkpointing=checkpointing),
        )
        credit = CREDIT.get(cfg.credit.name)
        params = credit.parse(cfg.credit.params)
        return Parts(*half, plan, learner, credit, params, schedule)
    except BaseException:
        _stop(verifiers, schedule, backend)
        raise


def _memory_plan(
    cfg: TrainConfig,
    formatter: PromptFormatter,
    tasks: TaskStream,
    policy: tuple[torch.nn.Module, Any] | None,
) -> MemoryPlan | None:
    """The step's plan: a run that will not fit stops here (``run.check_memory``; not for a
    ready ``policy``); it decides 'auto' checkpointing. None when neither asks for it, or
    when the model's config cannot be planned (logged; 'auto' then stays off)."""
    auto = cfg.optim.activation_checkpointing == "auto"
    refuse = cfg.run.check_memory and policy is None
    if not (refuse or auto):
        return None
    try:
        plan = plan_memory(
            cfg,
            prompt_tokens=longest_prompt(formatter, tasks),
            model_config=None if policy is None else policy[0].config,
        )
    except Exception as exc:  # the plan is advice: a model it cannot read runs unplanned
        off = "; activation checkpointing 'auto': off" if auto else ""
        logger.warning("no memory plan for this run (%s)%s", exc, off)
        return None
    if refuse:
        check_fits(plan)
    if plan.why:
        logger.info("activation checkpointing %s", plan.why)
    return plan


def plan(
    cfg: TrainConfig,
    device: str | None = None,
    limit: float | None = None,
    prompt_tokens: int | None = None,
) -> MemoryPlan:
    """``verirl memory``: the plan :func:`build` makes for ``cfg`` (:func:`~verirl.train.
    memory_plan.plan_memory`), from the parts it reads alone — tokenizer, training prompt,
    task stream (``prompt_tokens`` instead, when given): no weights, no verifier started."""
    if prompt_tokens is None:
        inline = EXECUTORS.get("inline").build({})  # nothing is verified
        with closing(VerifierResources(inline, Provers(cfg.provers))) as resources:
            source = build_source(cfg.gym(), resources.executor, resources.provers, False)
            formatter = training_formatter(cfg.rollout, load_tokenizer(cfg.model.name))
            prompt_tokens = longest_prompt(formatter, source.tasks)
    return plan_memory(cfg, device, limit, prompt_tokens=prompt_tokens)


def _stop(verifiers: VerifierResources | None, schedule: Schedule | None, backend: Backend) -> None:
    """Stop the verifiers; stop producing, then the placement's parts, then wait for the
    producer to end (it may be waiting on the placement's actors). Each runs even when one
    before it fails."""
    with ExitStack() as stack:  # the callbacks run last in, first out
        if schedule is not None:
            stack.callback(schedule.join)
        stack.callback(backend.close)
        if schedule is not None:
            stack.callback(schedule.close)
        if verifiers is not None:
            stack.callback(verifiers.close)
