"""The assembly of a run: the parts a config names, checked against their registries and
against each other before any work.

:mod:`verirl.config` is the schema: it reads YAML and overrides and validates each section on
its own. This module sits above both the schema and the registries it names, and checks the
whole system:

- every named part exists in its registry (``rollout.engine``, ``rollout.collector``,
  ``reward``, ``credit``, ``loss.policy``, ``loss.off_policy``, ``loss.aggregation``,
  ``verification.executor``, ``optim.optimizer``, ``dynamic_sampling.filter``,
  ``run.health`` detectors, ``run.loggers``, ``run.placement``, ``run.schedule``) and its
  ``params`` fit the part's parameter model (curriculum kinds and checker backends are
  checked by their sections' own schema);
- what each part needs is produced by another. Collectors, reward sources and credit
  estimators declare what they produce and need — ``"turns"`` (multi-turn episodes with
  per-turn scores, from the ``multi_turn`` collector), ``"counterfactual"`` (alternative scores
  of chosen turns, from the collector's counterfactual resampling), ``"steps"`` (verified steps
  in the verdicts, from proof environments through a reward source that passes verdicts on).

An incompatible pair is reported in one line that names both fields. :func:`load_config` is
how the CLI loads a config; the ``Trainer`` runs :func:`check` on the config it is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from verirl.backends import PLACEMENTS, SCHEDULES
from verirl.config import (
    ConfigError,
    Plugin,
    TrainConfig,
    format_errors,
    import_plugins,
)
from verirl.config import load_config as load_schema
from verirl.credit import CREDIT
from verirl.registry import Registry
from verirl.rewards import REWARDS
from verirl.rollout.base import ENGINES
from verirl.rollout.collect import COLLECTORS
from verirl.train.group_filters import GROUP_FILTERS
from verirl.train.health import DETECTORS
from verirl.train.loggers import LOGGERS
from verirl.train.loss import AGGREGATIONS, POLICY_LOSSES
from verirl.train.off_policy import OFF_POLICY
from verirl.train.optimizers import OPTIMIZERS
from verirl.verification.executors import EXECUTORS


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
