"""Held-out evaluation: accuracy per environment on seeds disjoint from training.

Training seeds come from the curriculum's counter (below ``2**31``); evaluation problem ``k``
uses seed :func:`verirl.curriculum.eval_seed` ``(k)`` ≥ ``2**31``, so the two never meet.
Accuracy is the share of *fully correct* answers (the verifier's ``correct``), averaged over
``samples`` draws per problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from verirl.curriculum import eval_seed
from verirl.envs import get_env
from verirl.evals.stats import Estimate, summarize
from verirl.registry import NoParams
from verirl.rewards.base import RewardContext
from verirl.rewards.stage import env_reward_stage
from verirl.rollout.base import RolloutEngine
from verirl.rollout.collect import Collector, SingleTurn
from verirl.rollout.prompts import PromptFormatter
from verirl.types import Problem, SamplingParams
from verirl.verification.batch import BatchVerifier


@dataclass(frozen=True)
class EvalResult:
    accuracy: dict[str, float]  # per environment
    accuracy_by_difficulty: dict[str, dict[int, float]]
    mean_reward: dict[str, float]
    format_rate: dict[str, float]  # share of answers the verifier could read (reward > -1)
    episode: dict[str, float] = field(default_factory=dict)  # the collector's metrics
    # per environment, one (samples, correct) pair per problem: pass@k and its interval
    counts: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def summary(self, ks: Sequence[int] = (1,), seed: int = 0) -> dict[str, dict[str, Estimate]]:
        """avg@n and the unbiased pass@k of each environment, each with its 95% interval
        (:func:`verirl.evals.stats.summarize`: Wilson for one sample a problem, else the
        bootstrap over problems); with several environments also ``"all"``, every problem of
        every environment one unit."""
        out = {env: summarize(c, ks, seed) for env, c in self.counts.items()}
        if len(self.counts) > 1:
            out["all"] = summarize([c for cs in self.counts.values() for c in cs], ks, seed)
        return out

    @property
    def overall(self) -> float:
        return sum(self.accuracy.values()) / max(len(self.accuracy), 1)

    def flat(self, prefix: str = "eval") -> dict[str, float]:
        out = {f"{prefix}/accuracy": self.overall}
        for env, acc in self.accuracy.items():
            out[f"{prefix}/{env}/accuracy"] = acc
            out[f"{prefix}/{env}/format"] = self.format_rate[env]
            for d, by_d in self.accuracy_by_difficulty.get(env, {}).items():
                out[f"{prefix}/{env}/accuracy_d{d}"] = by_d
        out.update({f"{prefix}/episode/{k}": v for k, v in self.episode.items()})
        return out


def heldout_problems(
    environments: Sequence[str], difficulties: Sequence[int], problems: int
) -> list[Problem]:
    """``problems`` held-out problems per (environment, difficulty)."""
    out: list[Problem] = []
    for env in environments:
        e = get_env(env)
        for d in difficulties:
            out.extend(e.generate(d, eval_seed(k)) for k in range(problems))
    return out


def evaluate(
    engine: RolloutEngine,
    formatter: PromptFormatter,
    problems: Sequence[Problem],
    samples: int = 1,
    temperature: float = 0.0,
    max_new_tokens: int = 128,
    seed: int = 0,
    collector: Collector | None = None,
    verifier: BatchVerifier | None = None,
) -> EvalResult:
    """Run ``samples`` episodes per problem with ``collector`` (default: one answer each),
    every answer scored by its environment's verifier (the rule, whatever the training
    reward; ``verifier``: the run's batched verification stage). A multi-turn episode's
    verdict is its last turn's (success at any turn ends it, for refinement)."""
    collector = (collector or SingleTurn(NoParams())).for_evaluation()
    sampling = SamplingParams(
        n=samples, temperature=temperature, max_new_tokens=max_new_tokens, seed=seed
    )
    score = env_reward_stage(RewardContext(verifier=verifier) if verifier else None)
    rollouts = collector.collect(problems, engine, formatter, sampling, score=score)
    correct: dict[str, list[float]] = {}
    by_diff: dict[str, dict[int, list[float]]] = {}
    reward: dict[str, list[float]] = {}
    fmt: dict[str, list[float]] = {}
    hits: dict[str, dict[tuple[int, int], list[float]]] = {}  # env -> problem -> verdicts
    for r in rollouts:
        problem = r.problem
        v = r.verdict
        assert v is not None  # the reward stage scored every rollout
        correct.setdefault(problem.env, []).append(float(v.correct))
        by_diff.setdefault(problem.env, {}).setdefault(problem.difficulty, []).append(
            float(v.correct)
        )
        reward.setdefault(problem.env, []).append(v.reward)
        fmt.setdefault(problem.env, []).append(float(v.reward > -1.0))
        key = (problem.difficulty, problem.seed)
        hits.setdefault(problem.env, {}).setdefault(key, []).append(float(v.correct))
    return EvalResult(
        accuracy={k: _mean(v) for k, v in correct.items()},
        accuracy_by_difficulty={
            k: {d: _mean(x) for d, x in sorted(v.items())} for k, v in by_diff.items()
        },
        mean_reward={k: _mean(v) for k, v in reward.items()},
        format_rate={k: _mean(v) for k, v in fmt.items()},
        episode=collector.metrics(),
        counts={env: [(len(v), int(sum(v))) for v in per.values()] for env, per in hits.items()},
    )


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0
