"""Whole-config compatibility: what each component produces and what each one needs.

Collectors, reward sources and credit estimators declare what they produce and need —
``"turns"`` (multi-turn episodes with per-turn scores, from the ``multi_turn``
collector), ``"counterfactual"`` (alternative scores of chosen turns, from the collector's
counterfactual resampling), ``"steps"`` (verified steps in the verdicts, from proof
environments through a reward source that passes verdicts on). :func:`check_compatible` runs
when the config is loaded, before any work, and reports an incompatible pair in one line that
names both fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from verirl.config import TrainConfig

WHAT = {
    "turns": "multi-turn episodes",
    "counterfactual": "counterfactual alternatives for chosen turns",
    "steps": "verified steps (proof tactics) in the verdicts",
}
HOW = {
    "turns": "use rollout.collector.name=multi_turn",
    "counterfactual": "set rollout.collector.params.counterfactual=true, or "
    "credit.params.counterfactual=false",
    "steps": "train on a proof environment (coq_proofs, lean_proofs) with reward.name=env or rule",
}


def produced(cfg: TrainConfig) -> dict[str, str]:
    """Each capability the configured run produces → the field that produces it."""
    from verirl.rewards import get_reward
    from verirl.rollout.collect import get_collector

    out: dict[str, str] = {}
    collector = get_collector(cfg.rollout.collector.name).build(cfg.rollout.collector.params)
    for cap in collector.produces():
        out[cap] = f"rollout.collector {cfg.rollout.collector.name!r}"
    reward = get_reward(cfg.reward.name).build(cfg.reward.params)
    for cap in reward.produces(cfg.curriculum.resolved_environments()):
        out[cap] = f"reward {cfg.reward.name!r}"
    return out


def check_compatible(cfg: TrainConfig) -> None:
    """Raise ``ValueError`` (one line, both fields named) for a credit estimator whose needs
    the collector and reward source do not produce."""
    from verirl.credit import get_credit

    have = produced(cfg)
    needs = get_credit(cfg.credit.name).requirements(cfg.credit.params)
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
