"""``verirl preflight``: before a run, sample the base policy the way the first steps will and
say whether the run can learn anything.

For each environment of the config and each difficulty of its starting window (at most three:
the lowest, the middle and the highest), a few problems (training seeds the run itself starts
with) are sampled ``rollout.group_size`` times under the training prompt, sampling settings and
collector, and scored by the training reward. Reported per environment and difficulty: the
format rate (the environment's verifier could read an answer: reward > −1), the accuracy
(fully correct), the share of responses cut at ``max_new_tokens``, the mean response length
and the share of groups whose training rewards are all equal — GRPO's advantage is zero for
those (RLVE §2.5's effective prompt ratio is one minus it). Where every group scores the same
there is no learning signal, and the report says which setting would give one.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from verirl.assembly import SamplingParts, build_sampling
from verirl.curriculum import effective_prompt_ratio
from verirl.envs import get_env
from verirl.progress import phase
from verirl.rewards import RewardContext
from verirl.rewards.stage import env_reward_stage
from verirl.types import Problem, Rollout, Verdict

if TYPE_CHECKING:
    from verirl.config import TrainConfig


@dataclass(frozen=True)
class PreflightRow:
    """What the base policy did on one environment at one difficulty."""

    env: str
    difficulty: int
    groups: int
    samples: int
    format_rate: float
    accuracy: float
    truncated: float
    mean_tokens: float
    effective_ratio: float  # share of groups whose training rewards are not all equal


@dataclass
class PreflightReport:
    rows: list[PreflightRow]
    warnings: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def by_env(self) -> dict[str, list[PreflightRow]]:
        out: dict[str, list[PreflightRow]] = {}
        for r in self.rows:
            out.setdefault(r.env, []).append(r)
        return out


def starting_difficulties(cfg: TrainConfig, most: int = 3) -> list[int]:
    """The difficulties the run starts sampling: the adaptive window [max(0, h0 − d_Δ + 1),
    h0] or the static window, thinned to its lowest, middle and highest levels."""
    c = cfg.curriculum
    if c.kind == "static":
        low, high = c.static_low, c.static_high
    else:
        low, high = max(0, c.initial_difficulty - c.window + 1), c.initial_difficulty
    levels = list(range(low, high + 1))
    if len(levels) <= most:
        return levels
    picks = {levels[round(i * (len(levels) - 1) / (most - 1))] for i in range(most)}
    return sorted(picks)


def preflight_problems(
    environments: Sequence[str], difficulties: Sequence[int], problems: int
) -> list[Problem]:
    """``problems`` problems per (environment, difficulty), seeds 0, 1, ... (training seeds:
    the problems the run's first steps draw from), each difficulty capped at the
    environment's largest."""
    out: list[Problem] = []
    for name in environments:
        env = get_env(name)
        levels = sorted({min(d, env.max_difficulty) for d in difficulties})
        for d in levels:
            out.extend(env.generate(d, seed) for seed in range(problems))
    return out


def run_preflight(parts: SamplingParts, problems: int = 3, seed: int = 0) -> PreflightReport:
    """Sample the policy of ``parts`` on :func:`preflight_problems` and build the report."""
    start = time.perf_counter()
    cfg = parts.cfg
    envs = cfg.curriculum.resolved_environments()
    batch = preflight_problems(envs, starting_difficulties(cfg), problems)
    producer = parts.producer  # its training prompt, sampling parameters and reward stage
    sampling = dataclasses.replace(producer.sampling, seed=seed)
    verifier = producer.verifier
    verifier.metrics(reset=True)
    with phase("preflight sampling", len(batch) * sampling.n, "samples"):
        rollouts = producer.collector.for_evaluation().collect(
            batch, parts.engine, producer.formatter, sampling, score=producer.reward
        )
    if cfg.reward.name == "env" and not cfg.reward.overlong.buffer:
        checked = rollouts
    else:  # format and correctness are the environment verifier's, whatever the reward
        stage = env_reward_stage(RewardContext(verifier=verifier))
        checked = stage(rollouts)
    rows = _rows(rollouts, checked)
    report = PreflightReport(rows)
    counts = verifier.metrics(reset=True)
    failed = counts.get("verifier_timeouts", 0.0) + counts.get("verifier_errors", 0.0)
    if failed:
        report.warnings.append(
            f"{failed:.0f} of {counts.get('verified', 0.0):.0f} verifications timed out or "
            "raised (run.log names each): those answers are left out of format and accuracy, "
            "and their groups' rewards are not the policy's; on a loaded machine raise "
            f"verification.timeout_s ({cfg.verification.timeout_s:g} s) or use "
            "verification.executor.name=threads"
        )
    _advise(cfg, report)
    report.seconds = time.perf_counter() - start
    return report


def _rows(rollouts: Sequence[Rollout], checked: Sequence[Rollout]) -> list[PreflightRow]:
    cells: dict[tuple[str, int], list[tuple[Rollout, Rollout]]] = {}
    for r, c in zip(rollouts, checked, strict=True):
        cells.setdefault((r.problem.env, r.problem.difficulty), []).append((r, c))
    rows = []
    for (env, d), pairs in cells.items():
        groups: dict[int, list[float]] = {}
        for r, _ in pairs:
            groups.setdefault(r.group, []).append(r.verdict.reward if r.verdict else math.nan)
        verdicts = [c.verdict for _, c in pairs if c.verdict is not None and _verified(c.verdict)]
        rows.append(
            PreflightRow(
                env=env,
                difficulty=d,
                groups=len(groups),
                samples=len(pairs),
                format_rate=_mean([float(v.reward > -1.0) for v in verdicts]),
                accuracy=_mean([float(v.correct) for v in verdicts]),
                truncated=_mean([float(r.finish_reason == "length") for r, _ in pairs]),
                mean_tokens=_mean([float(sum(r.mask)) for r, _ in pairs]),
                effective_ratio=effective_prompt_ratio(groups.values()),
            )
        )
    return rows


def _verified(v: Verdict) -> bool:
    """False for a verdict that stands for a timeout or a verifier error, not an answer."""
    return "verifier_error" not in v.extra and v.extra.get("status") != "timeout"


def _advise(cfg: TrainConfig, report: PreflightReport) -> None:
    """Warnings (no learning signal) and suggested settings, from the rows."""
    ro, cur = cfg.rollout, cfg.curriculum
    for env, rows in report.by_env().items():
        if all(r.effective_ratio == 0.0 for r in rows):
            why = _why_flat(rows)
            report.warnings.append(
                f"{env}: every group scored the same at every starting difficulty "
                f"({', '.join(str(r.difficulty) for r in rows)}): no learning signal ({why})"
            )
    rows = report.rows
    fmt = _mean([r.format_rate for r in rows])
    if fmt < 0.2:
        if not ro.few_shot:
            report.suggestions.append(
                f"the policy writes the asked answer format in {fmt:.0%} of its answers: add a "
                "format demonstration (rollout.few_shot; the default config has one)"
            )
        elif ro.zero_shot_rate > 0:
            report.suggestions.append(
                f"format rate {fmt:.0%} even with rollout.few_shot: lower rollout.zero_shot_rate "
                f"({ro.zero_shot_rate:g}) or write a demonstration closer to the problems"
            )
    trunc = _mean([r.truncated for r in rows])
    if trunc > 0.3:
        report.suggestions.append(
            f"{trunc:.0%} of the answers hit rollout.max_new_tokens ({ro.max_new_tokens}): raise "
            f"it (e.g. rollout.max_new_tokens={2 * ro.max_new_tokens})"
        )
    easy = [env for env, rs in report.by_env().items() if min(r.accuracy for r in rs) >= 0.9]
    if easy and cur.kind == "adaptive":
        report.suggestions.append(
            f"{', '.join(easy)}: ≥ 90% correct already at the starting window: start higher "
            f"(curriculum.initial_difficulty={cur.initial_difficulty + 2})"
        )
    hard = [
        env
        for env, rs in report.by_env().items()
        if all(r.accuracy == 0.0 for r in rs) and _mean([r.format_rate for r in rs]) >= 0.5
    ]
    if hard:
        lowest = "curriculum.initial_difficulty=0" if cur.kind == "adaptive" else "a lower window"
        report.suggestions.append(
            f"{', '.join(hard)}: answers are readable but never correct: start lower ({lowest}), "
            "or drop them from curriculum.environments"
        )
    if report.warnings and ro.group_size < 8:
        report.suggestions.append(
            f"a larger group (rollout.group_size > {ro.group_size}) or rollout.temperature "
            "above 1 makes unequal rewards within a group likelier"
        )


def _why_flat(rows: Sequence[PreflightRow]) -> str:
    if all(r.format_rate == 0.0 for r in rows):
        if all(r.truncated >= 0.5 for r in rows):
            return "answers are cut at max_new_tokens before the final answer"
        return "no answer is in the asked format"
    if all(r.accuracy == 1.0 for r in rows):
        return "every answer is correct: too easy"
    return "every sample of each problem got the same reward"


def _mean(xs: Sequence[float]) -> float:
    vals = [x for x in xs if not math.isnan(x)]
    return sum(vals) / len(vals) if vals else 0.0


def preflight(cfg: TrainConfig, problems: int = 3, policy: Any = None) -> PreflightReport:
    """Build the sampling half of the config's parts (no learner, no files written) and run
    :func:`run_preflight`."""
    start = time.perf_counter()
    with build_sampling(cfg, policy) as parts:
        report = run_preflight(parts, problems, seed=cfg.run.seed)
    report.seconds = time.perf_counter() - start
    return report
