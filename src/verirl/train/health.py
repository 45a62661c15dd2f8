"""Run health: detectors that watch every step's metrics and say when training is silently
broken — once, naming the likely cause and the setting to change.

Each detector is a small class registered by name (:data:`DETECTORS`) with a pydantic
model of its thresholds. It reads the per-step metrics dict the loop logs (``rollout/*``,
``train/*``, ``reward/*``, ``curriculum/*``, ``sync/*``) and returns a
:class:`HealthEvent` the first time its condition holds; after that it stays quiet for the rest
of the run (warn once). A detector whose metrics are absent (no ``train/engine_logp_diff_mean``
when the engine's log-probs are the learner's own, say) never fires.

:class:`HealthMonitor` runs the enabled detectors (``run.health``) after each step: it logs
every event as a warning on the ``verirl.health`` logger (``run.log``; the command line prints
it), appends it to ``<run_dir>/health.jsonl`` (read by ``verirl report``, which marks it on the
curves), and raises :class:`RunUnhealthy` when the detector is named in ``run.health.stop_on``.

The metrics detectors read (and who writes them):

=========================================  ====================================================
``rollout/truncated``                      share of the step's responses cut at max_new_tokens
``rollout/effective_prompt_ratio``         share of groups whose rewards are not all equal
``rollout/reward``, ``rollout/accuracy``   mean reward, share fully correct (verifier)
``sync/mismatch``                          relative difference of the engine's and the learner's
                                           weight checksums after a sync (0: in sync)
``train/engine_logp_diff_mean``            mean |log π_engine − log π_learner| over the
                                           sampled tokens (learner-recomputed π_old only)
``train/engine_logp_kl``                   KL(π_engine ‖ π_learner) per sampled token (k3)
``reward/verifier_timeouts|errors``        counts, over ``reward/verified`` calls
``train/loss``, ``train/grad_norm``        the learner's loss and pre-clip gradient norm
``curriculum/<env>/h``, ``.../checks``     each environment's window top and accuracy checks
``memory/heap_in_use_mb``                  malloc's in-use bytes at the step's end (no pools)
``memory/cuda_*``                          CUDA: allocated at the step's end, and the peaks
``memory/rss_mb``, ``memory/peak_rss_mb``  the process tree's RSS at the end, and its peak
=========================================  ====================================================
"""

from __future__ import annotations

import json
import logging
import math
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from verirl.registry import Registry, Spec, named

if TYPE_CHECKING:
    import torch

    from verirl.config import TrainConfig

logger = logging.getLogger("verirl.health")

HEALTH_FILE = "health.jsonl"
"""The run directory's health events, one JSON object per line (see :class:`HealthEvent`)."""


@dataclass(frozen=True)
class HealthEvent:
    """One detector's warning: at ``step``, ``detector`` saw ``message`` (the measured
    values and the likely cause); ``setting`` names what to change."""

    step: int
    detector: str
    message: str
    setting: str

    def line(self) -> str:
        return f"step {self.step}: {self.detector}: {self.message} -> {self.setting}"


class RunUnhealthy(RuntimeError):
    """Raised after a step when a detector named in ``run.health.stop_on`` fired."""

    def __init__(self, event: HealthEvent) -> None:
        super().__init__(f"run stopped by run.health.stop_on: {event.line()}")
        self.event = event


class DetectorParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class RunFacts:
    """The run's settings the detectors name in their messages (None: not known — the
    detector runs over a bare metrics stream — and not shown)."""

    max_new_tokens: int | None = None
    verification_timeout_s: float | None = None
    lr: float | None = None
    tau_acc: float | None = None
    sampling_copy: str | None = None
    """The precision of a low-precision sampling copy (``rollout.engine.params.precision``);
    None where the engine samples at the learner's precision."""

    @classmethod
    def from_config(cls, cfg: TrainConfig) -> RunFacts:
        precision = cfg.rollout.engine.params.get("precision", "policy")
        return cls(
            cfg.rollout.max_new_tokens,
            cfg.verification.timeout_s,
            cfg.optim.lr,
            cfg.curriculum.tau_acc,
            None if precision == "policy" else str(precision),
        )


NO_FACTS = RunFacts()


def _shown(value: float | None, unit: str = "") -> str:
    """`` (value)`` for a message, empty when the value is not known."""
    if value is None:
        return ""
    return f" ({value if isinstance(value, int) else format(value, 'g')}{unit})"


class Detector(ABC):
    """Watches the per-step metrics; :meth:`check` returns an event when the condition holds
    (the monitor calls it until it first fires). ``facts`` (the run's settings it names)
    only fill in the message."""

    name: ClassVar[str]

    def __init__(self, params: DetectorParams, facts: RunFacts = NO_FACTS) -> None:
        self.params = params
        self.facts = facts

    @abstractmethod
    def check(self, step: int, metrics: Mapping[str, float]) -> tuple[str, str] | None:
        """``(message, setting)`` when the fault is seen at this step, else None."""


DETECTORS: Registry[Spec[type[Detector]]] = Registry("health detector", on_add=named)
"""Detectors by name (``run.health.stop_on`` etc.): ``@DETECTORS.register(name, params)`` on a
:class:`Detector` subclass, built as ``spec.build(params, facts)``."""


def _value(metrics: Mapping[str, float], key: str) -> float | None:
    """``metrics[key]`` as a float, None when absent or not a number."""
    v = metrics.get(key)
    if v is None or isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


class _Streak:
    """How many consecutive observed steps met a condition (steps without the metric are
    skipped, not counted as breaking the streak)."""

    def __init__(self) -> None:
        self.n = 0

    def update(self, hit: bool) -> int:
        self.n = self.n + 1 if hit else 0
        return self.n


# ---- the detectors -----------------------------------------------------------------------------
class TruncationParams(DetectorParams):
    max_rate: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Warn when more than this share of the responses hit max_new_tokens ...",
    )
    steps: int = Field(2, ge=1, description="... in this many consecutive steps.")


@DETECTORS.register("truncation", TruncationParams)
class Truncation(Detector):
    """Responses cut at ``rollout.max_new_tokens``: a cut answer rarely holds the final
    answer, so its reward is a format failure whatever the policy knew."""

    params: TruncationParams

    def __init__(self, params: DetectorParams, facts: RunFacts = NO_FACTS) -> None:
        super().__init__(params, facts)
        self.streak = _Streak()

    def check(self, step: int, metrics: Mapping[str, float]) -> tuple[str, str] | None:
        rate = _value(metrics, "rollout/truncated")
        if rate is None or self.streak.update(rate > self.params.max_rate) < self.params.steps:
            return None
        limit = _shown(self.facts.max_new_tokens)
        return (
            f"{rate:.0%} of the responses hit max_new_tokens{limit} for "
            f"{self.params.steps} step(s) (bound {self.params.max_rate:.0%}): answers are cut "
            "before they end and score as format failures",
            f"raise rollout.max_new_tokens{limit}, or set rollout.stop / "
            "reward.overlong.buffer to teach shorter answers",
        )


class NoSignalParams(DetectorParams):
    min_ratio: float = Field(
        0.05,
        ge=0,
        le=1,
        description="Warn when the effective prompt ratio is at most this ...",
    )
    steps: int = Field(3, ge=1, description="... in this many consecutive steps.")


@DETECTORS.register("no_signal", NoSignalParams)
class NoSignal(Detector):
    """Groups whose rewards are all equal carry no GRPO advantage: with an effective prompt
    ratio near 0 (RLVE §2.5) the step trains on nothing."""

    params: NoSignalParams

    def __init__(self, params: DetectorParams, facts: RunFacts = NO_FACTS) -> None:
        super().__init__(params, facts)
        self.streak = _Streak()

    def check(self, step: int, metrics: Mapping[str, float]) -> tuple[str, str] | None:
        ratio = _value(metrics, "rollout/effective_prompt_ratio")
        if ratio is None or self.streak.update(ratio <= self.params.min_ratio) < self.params.steps:
            return None
        acc = _value(metrics, "rollout/accuracy")
        reward = _value(metrics, "rollout/reward")
        truncated = _value(metrics, "rollout/truncated") or 0.0
        head = (
            f"effective prompt ratio {ratio:.2f} for {self.params.steps} step(s): every group's "
            "rewards are equal, so the advantages are 0 and nothing is learned"
        )
        if acc is not None and acc >= 0.95:
            return (
                f"{head}; every sample is correct (accuracy {acc:.2f}): the problems are too easy",
                "raise curriculum.initial_difficulty or use curriculum.kind=adaptive with a "
                "smaller curriculum.tau_num so the window moves up",
            )
        if truncated > 0.5:
            return (
                f"{head}; {truncated:.0%} of the responses are truncated",
                "raise rollout.max_new_tokens",
            )
        if reward is not None and reward <= -0.95:
            return (
                f"{head}; the mean reward is {reward:.2f}: no answer is in the asked format",
                "add a format demonstration (rollout.few_shot, lower rollout.zero_shot_rate) "
                "or check rollout.system_prompt; `verirl preflight` shows the format rate",
            )
        return (
            f"{head}; accuracy {0.0 if acc is None else acc:.2f}: the problems may be too hard",
            "lower curriculum.initial_difficulty / the static window, raise rollout.group_size "
            "or rollout.temperature, or enable dynamic_sampling",
        )


class WeightMismatchParams(DetectorParams):
    tolerance: float = Field(
        1e-4,
        ge=0,
        description="Warn when sync/mismatch (relative checksum difference) exceeds this ...",
    )
    steps: int = Field(1, ge=1, description="... in this many consecutive steps.")


@DETECTORS.register("weight_mismatch", WeightMismatchParams)
class WeightMismatch(Detector):
    """The engine samples from weights that are not the learner's: a weight sync that did not
    happen or did not land (``sync/mismatch``, see :func:`weights_checksum`)."""

    params: WeightMismatchParams

    def __init__(self, params: DetectorParams, facts: RunFacts = NO_FACTS) -> None:
        super().__init__(params, facts)
        self.streak = _Streak()

    def check(self, step: int, metrics: Mapping[str, float]) -> tuple[str, str] | None:
        gap = _value(metrics, "sync/mismatch")
        if gap is None:
            return None
        bad = not math.isfinite(gap) or gap > self.params.tolerance
        if self.streak.update(bad) < self.params.steps:
            return None
        return (
            f"the rollout engine's weights differ from the learner's after the sync "
            f"(sync/mismatch {gap:.3g} > {self.params.tolerance:g}): rollouts come from a stale "
            "or corrupted policy",
            "check rollout.engine (its weight sync), the ray placement's rollout workers and "
            "run.schedule.params.max_staleness; resume from the last checkpoint",
        )


class LogprobDriftParams(DetectorParams):
    max_mean: float = Field(
        0.0104,
        ge=0,
        description="Warn when the mean |log π_engine − log π_learner| per token (nats) "
        "exceeds this (SkyRL's CI bound on the rollout–trainer mismatch: 0.0104; an engine at "
        "the learner's precision only — a low-precision sampling copy is held to max_kl "
        "alone) ...",
    )
    max_kl: float = Field(
        0.01,
        ge=0,
        description="... or the mismatch KL(π_engine ‖ π_learner) per token exceeds this "
        "(prime-rl's bound: 0.01) ...",
    )
    steps: int = Field(2, ge=1, description="... in this many consecutive steps.")


@DETECTORS.register("logprob_drift", LogprobDriftParams)
class LogprobDrift(Detector):
    """The engine's sampling log-probs and the learner's recomputed ones on the same tokens
    disagree past the field's bounds (mean |Δ log-prob| ≤ 0.0104 as SkyRL's CI, mismatch KL
    < 0.01 as prime-rl): the update is more off-policy than its corrections are tuned for
    (Yao et al. 2025, 'Your Efficient RL Framework Secretly Brings You Off-Policy RL
    Training').

    SkyRL's bound is a bf16 engine against a bf16 trainer: two kernels, one precision. A
    sampling copy narrower than the learner on purpose (``precision: w8a16`` / ``bf16``) moves
    every log-prob by its rounding — bf16 alone ~0.025 nats per token on SmolLM2-135M — while
    the distributions stay close, so under a copy only the KL bound (the divergence TIS and
    IcePop correct) applies."""

    params: LogprobDriftParams

    def __init__(self, params: DetectorParams, facts: RunFacts = NO_FACTS) -> None:
        super().__init__(params, facts)
        self.streak = _Streak()

    def check(self, step: int, metrics: Mapping[str, float]) -> tuple[str, str] | None:
        drift = _value(metrics, "train/engine_logp_diff_mean")
        if drift is None:
            return None
        kl = _value(metrics, "train/engine_logp_kl")
        kl_bad = kl is not None and (not math.isfinite(kl) or kl > self.params.max_kl)
        copy = self.facts.sampling_copy if kl is not None else None
        mean_bad = drift > self.params.max_mean and copy is None
        bad = not math.isfinite(drift) or mean_bad or kl_bad
        if self.streak.update(bad) < self.params.steps:
            return None
        shown = f", mismatch KL {kl:.3g} (bound {self.params.max_kl:g})" if kl is not None else ""
        bound = f"a {copy} sampling copy" if copy else f"bound {self.params.max_mean:g}"
        return (
            f"the engine's sampling log-probs drift from the learner's by {drift:.3g} nats per "
            f"token ({bound}){shown} for {self.params.steps} step(s): "
            "weights not synced, or the engine's numerics (dtype, kernels, a low-precision "
            "sampling copy) differ",
            "check the weight sync, set rollout.engine.params.dtype (vllm) or .precision (hf) "
            "to the learner's precision, or correct for it with loss.off_policy "
            "(truncated_is, icepop)",
        )


class RewardHackingParams(DetectorParams):
    window: int = Field(
        6,
        ge=2,
        description="Compare the mean of the first and second half of the last this many steps ...",
    )
    min_reward_rise: float = Field(
        0.3, gt=0, description="... and warn when the mean reward rose by at least this ..."
    )
    max_accuracy_rise: float = Field(
        0.0, description="... while the verified accuracy rose by at most this."
    )


@DETECTORS.register("reward_hacking", RewardHackingParams)
class RewardHacking(Detector):
    """The reward rises while verified correctness does not: the policy is paid for the
    format (or partial credit) alone."""

    params: RewardHackingParams

    def __init__(self, params: DetectorParams, facts: RunFacts = NO_FACTS) -> None:
        super().__init__(params, facts)
        self.history: deque[tuple[float, float]] = deque(maxlen=self.params.window)

    def check(self, step: int, metrics: Mapping[str, float]) -> tuple[str, str] | None:
        reward = _value(metrics, "rollout/reward")
        acc = _value(metrics, "rollout/accuracy")
        if reward is None or acc is None or not (math.isfinite(reward) and math.isfinite(acc)):
            return None
        self.history.append((reward, acc))
        if len(self.history) < self.params.window:
            return None
        half = self.params.window // 2
        old, new = list(self.history)[:half], list(self.history)[-half:]
        d_reward = _mean(r for r, _ in new) - _mean(r for r, _ in old)
        d_acc = _mean(a for _, a in new) - _mean(a for _, a in old)
        if d_reward < self.params.min_reward_rise or d_acc > self.params.max_accuracy_rise:
            return None
        return (
            f"the mean reward rose by {d_reward:+.2f} over the last {self.params.window} steps "
            f"while the verified accuracy changed by {d_acc:+.2f}: the policy is rewarded for "
            "the format or partial credit, not for correct answers",
            "check the reward source (reward.name, its params) and the environments' partial "
            "credit; reward only verified answers (reward.name=env) to stop it",
        )


class VerifierFailuresParams(DetectorParams):
    max_rate: float = Field(
        0.05,
        ge=0,
        le=1,
        description="Warn when more than this share of a step's verifications timed out or "
        "raised ...",
    )
    steps: int = Field(1, ge=1, description="... in this many consecutive steps.")


@DETECTORS.register("verifier_failures", VerifierFailuresParams)
class VerifierFailures(Detector):
    """Verifier timeouts and errors score as invalid answers: too many and the reward is the
    machine's load, not the policy's answers."""

    params: VerifierFailuresParams

    def __init__(self, params: DetectorParams, facts: RunFacts = NO_FACTS) -> None:
        super().__init__(params, facts)
        self.streak = _Streak()

    def check(self, step: int, metrics: Mapping[str, float]) -> tuple[str, str] | None:
        calls = _value(metrics, "reward/verified")
        if not calls:
            return None
        timeouts = _value(metrics, "reward/verifier_timeouts") or 0.0
        errors = _value(metrics, "reward/verifier_errors") or 0.0
        rate = (timeouts + errors) / calls
        if self.streak.update(rate > self.params.max_rate) < self.params.steps:
            return None
        deadline = _shown(self.facts.verification_timeout_s, " s")
        return (
            f"{rate:.0%} of the step's {calls:.0f} verifications failed ({timeouts:.0f} timed "
            f"out, {errors:.0f} raised; bound {self.params.max_rate:.0%}): those answers scored "
            "as invalid whatever they were; run.log names each one",
            f"raise verification.timeout_s{deadline} or verification.executor.params.workers, "
            "or fix the verifier named in run.log",
        )


class NonFiniteParams(DetectorParams):
    keys: list[str] = Field(
        default_factory=lambda: ["train/loss", "train/grad_norm"],
        description="Metrics that must stay finite.",
    )


@DETECTORS.register("non_finite", NonFiniteParams)
class NonFinite(Detector):
    """NaN or inf in the loss or the gradient norm: the update is garbage (and AdamW's state
    with it)."""

    params: NonFiniteParams

    def check(self, step: int, metrics: Mapping[str, float]) -> tuple[str, str] | None:
        bad = {}
        for key in self.params.keys:
            v = metrics.get(key, 0.0)
            if v is None or (isinstance(v, int | float) and not math.isfinite(v)):
                bad[key] = v
        if not bad:
            return None
        lr = _shown(self.facts.lr)
        what = ", ".join(f"{k} = {v}" for k, v in bad.items())
        return (
            f"{what}: the update diverged; the weights may already be NaN",
            f"lower optim.lr{lr} or optim.grad_clip, or set model.dtype=fp32; resume from the "
            "last checkpoint",
        )


class CurriculumStallParams(DetectorParams):
    checks: int = Field(
        30,
        ge=1,
        description="Warn when no environment's window moved in this many accuracy checks "
        "(summed over the environments).",
    )


@DETECTORS.register("curriculum_stall", CurriculumStallParams)
class CurriculumStall(Detector):
    """An adaptive curriculum whose windows never move: accuracy at the top level stays below
    τ_acc, check after check, so the policy sees the same difficulties all run."""

    params: CurriculumStallParams

    def __init__(self, params: DetectorParams, facts: RunFacts = NO_FACTS) -> None:
        super().__init__(params, facts)
        self.last: dict[str, tuple[float, float]] = {}  # env -> (h, checks)
        self.since_move = 0

    def check(self, step: int, metrics: Mapping[str, float]) -> tuple[str, str] | None:
        envs = [
            k[len("curriculum/") : -len("/checks")]
            for k in metrics
            if k.startswith("curriculum/") and k.endswith("/checks")
        ]
        for env in envs:
            h = _value(metrics, f"curriculum/{env}/h")
            checks = _value(metrics, f"curriculum/{env}/checks")
            if h is None or checks is None:
                continue
            h0, c0 = self.last.get(env, (h, 0.0))
            self.since_move = 0 if h != h0 else self.since_move + max(0, int(checks - c0))
            self.last[env] = (h, checks)
        if self.since_move < self.params.checks:
            return None
        stuck = ", ".join(
            f"{e} h={h:g} (last check accuracy "
            f"{_value(metrics, f'curriculum/{e}/last_check_acc') or 0.0:.2f})"
            for e, (h, _) in self.last.items()
        )
        tau = _shown(self.facts.tau_acc)
        return (
            f"no difficulty window moved in {self.since_move} accuracy checks: {stuck}; the "
            f"accuracy at the top level stays below τ_acc{tau}",
            "lower curriculum.tau_acc, start lower (curriculum.initial_difficulty), or drop "
            "the environments the policy cannot solve (curriculum.environments)",
        )


def _mean(xs: Iterable[float]) -> float:
    vals = list(xs)
    return sum(vals) / len(vals) if vals else 0.0


class MemoryGrowthParams(DetectorParams):
    warmup: int = Field(
        2,
        ge=0,
        description="Skip this many first steps (the optimizer allocates its state at step 1).",
    )
    steps: int = Field(
        3,
        ge=2,
        description="Held memory: warn when it grew at each of this many steps in a row ...",
    )
    min_step_mb: float = Field(
        32.0, ge=0, description="... by at least this many MB each time (a leak per step) ..."
    )
    window: int = Field(
        4,
        ge=1,
        description="... or when the median of the last this many steps exceeds the median "
        "of the first this many after the warmup ...",
    )
    min_growth: float = Field(0.15, gt=0, description="... by this share of it (a slower leak) ...")
    min_mb: float = Field(300.0, ge=0, description="... and by at least this many MB.")


# What a step leaves held, best first: what the program holds from its allocator at the end of
# the step (torch's CUDA allocator; malloc's in-use bytes without its reuse pools), which an
# allocator filling its pools does not move; then, where neither is measured, the RSS.
HELD = ("memory/cuda_allocated_mb", "memory/heap_in_use_mb")
RESIDENT = ("memory/rss_mb", "memory/peak_rss_mb")


@DETECTORS.register("memory_growth", MemoryGrowthParams)
class MemoryGrowth(Detector):
    """Memory something keeps from one step to the next (a leak): the run will run out of
    memory. Reads what the program holds at the end of each step — ``memory/cuda_allocated_mb``
    on a GPU, ``memory/heap_in_use_mb`` under TCMalloc or glibc — which does not grow while
    the allocator fills its reuse pools (the RSS of the default job climbs ~450 MB over its
    first ~18 steps that way and then stays flat); it warns when that grew at each of
    ``steps`` steps in a row by ``min_step_mb`` or more, or by ``min_growth`` and ``min_mb``
    between the first and the last ``window`` steps' medians. Where neither is measured it
    falls back to the RSS (``memory/rss_mb``, else the step's peak) with the second rule only,
    which an allocator settling can trip."""

    params: MemoryGrowthParams

    def __init__(self, params: DetectorParams, facts: RunFacts = NO_FACTS) -> None:
        super().__init__(params, facts)
        self.seen: dict[str, list[float]] = {}

    def check(self, step: int, metrics: Mapping[str, float]) -> tuple[str, str] | None:
        for name in (*HELD, *RESIDENT):
            value = _value(metrics, name)
            if value is not None:
                self.seen.setdefault(name, []).append(value)
        key = next((k for k in (*HELD, *RESIDENT) if k in self.seen), None)
        if key is None:
            return None
        p = self.params
        seen = self.seen[key][p.warmup :]
        growth = None
        if key in HELD and len(seen) > p.steps:
            steps = [b - a for a, b in zip(seen[-p.steps - 1 : -1], seen[-p.steps :], strict=True)]
            if min(steps) >= p.min_step_mb:
                growth = (
                    f"grew at each of the last {p.steps} steps, by "
                    + ", ".join(f"{d:.0f}" for d in steps)
                    + f" MB, to {seen[-1]:.0f} MB"
                )
        if growth is None and len(seen) >= 2 * p.window:
            first, last = _median(seen[: p.window]), _median(seen[-p.window :])
            if last - first >= max(p.min_mb, p.min_growth * first):
                growth = (
                    f"grew from {first:.0f} MB (median of steps {p.warmup + 1}–"
                    f"{p.warmup + p.window}) to {last:.0f} MB (last {p.window} steps)"
                )
        if growth is None:
            return None
        what = "held at the end of the step" if key in HELD else "resident (RSS)"
        return (
            f"the memory {what} ({key}) {growth}: something outlives its step (a plug-in "
            "keeping rollouts, tensors or graphs)",
            "check plug-ins for state kept across steps; `verirl memory` shows the plan",
        )


def _median(xs: Sequence[float]) -> float:
    ys = sorted(xs)
    mid = len(ys) // 2
    return ys[mid] if len(ys) % 2 else 0.5 * (ys[mid - 1] + ys[mid])


# ---- the monitor -------------------------------------------------------------------------------
class HealthMonitor:
    """Runs the enabled detectors after every step (see the module docstring).

    ``params`` maps a detector name to its threshold overrides, ``disable`` lists detectors
    not to run and ``stop_on`` those whose event stops the run (:class:`RunUnhealthy`)."""

    def __init__(
        self,
        params: Mapping[str, Mapping[str, Any]] | None = None,
        disable: Sequence[str] = (),
        stop_on: Sequence[str] = (),
        run_dir: Path | None = None,
        facts: RunFacts = NO_FACTS,
    ) -> None:
        params = params or {}
        for name in [*params, *disable, *stop_on]:
            DETECTORS.get(name)  # an unknown name fails here, listing the known ones
        self.detectors: list[Detector] = []
        for name, spec in DETECTORS.items():
            if name not in disable:
                self.detectors.append(spec.build(params.get(name, {}), facts))
        self.stop_on = set(stop_on)
        self.path = run_dir / HEALTH_FILE if run_dir is not None else None
        # a resumed run warns once per run: what an earlier process warned about stays quiet
        # (a detector in stop_on is checked again, so a fault that persists stops it again)
        earlier = read_events(run_dir) if run_dir is not None else []
        self.fired: set[str] = {e.detector for e in earlier} - self.stop_on
        self.events: list[HealthEvent] = []

    @classmethod
    def from_config(cls, cfg: TrainConfig, run_dir: Path | None) -> HealthMonitor:
        """The monitor of ``run.health``, its detectors told the settings they name."""
        h = cfg.run.health
        if not h.enabled:
            return cls(disable=DETECTORS.names(), run_dir=None)
        return cls(h.params, h.disable, h.stop_on, run_dir, RunFacts.from_config(cfg))

    def observe(self, step: int, metrics: Mapping[str, float]) -> list[HealthEvent]:
        """Feed one step's metrics; return the events first seen at this step (each logged and
        written). Raises :class:`RunUnhealthy` after writing them when one is in ``stop_on``."""
        new = []
        for d in self.detectors:
            if d.name in self.fired:
                continue
            found = d.check(step, metrics)
            if found is not None:
                self.fired.add(d.name)
                new.append(HealthEvent(step, d.name, *found))
        for event in new:
            logger.warning("run health: %s", event.line())
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(asdict(event)) + "\n")
        self.events.extend(new)
        for event in new:
            if event.detector in self.stop_on:
                raise RunUnhealthy(event)
        return new


def read_events(run_dir: Path) -> list[HealthEvent]:
    """The events of ``run_dir/health.jsonl`` (unreadable lines skipped)."""
    path = Path(run_dir) / HEALTH_FILE
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            row = json.loads(line)
            out.append(
                HealthEvent(
                    int(row["step"]), str(row["detector"]), str(row["message"]), str(row["setting"])
                )
            )
        except (ValueError, KeyError, TypeError):
            continue
    return out


def run_detectors(
    stream: Iterable[Mapping[str, float]], **monitor_kwargs: Any
) -> list[HealthEvent]:
    """The events a fresh monitor raises over a metrics stream (rows with a ``step`` key, as
    in ``metrics.jsonl``; rows of before/after evaluations are skipped)."""
    monitor = HealthMonitor(**monitor_kwargs)
    for row in stream:
        if any(k.startswith("eval_") for k in row):
            continue
        monitor.observe(int(row["step"]), row)
    return monitor.events


# ---- the weight checksum -----------------------------------------------------------------------
def weights_checksum(tensors: Iterable[torch.Tensor], stride: int = 61) -> float:
    """A fingerprint of a set of weights: Σ_t Σ_i (|w_ti| + w_ti) over every ``stride``-th
    element of each tensor (a prime stride: ~1/61 of the work of reading them all), in float64.

    Equal weights give equal fingerprints in every process (same tensors, same order); an
    optimizer step changes it (Adam moves every weight). Compare two with
    :func:`checksum_mismatch`."""
    import torch

    total = 0.0
    with torch.no_grad():
        for t in tensors:
            flat = t.detach().reshape(-1)[::stride].to(torch.float64)
            total += float(flat.abs().sum() + flat.sum())
    return total


def checksum_mismatch(engine: float, learner: float) -> float:
    """``sync/mismatch``: |engine − learner| / max(|learner|, 1e-12), 0.0 when equal."""
    if engine == learner:
        return 0.0
    return abs(engine - learner) / max(abs(learner), 1e-12)
