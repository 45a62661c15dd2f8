"""Which problems to train on next: RLVE's adaptive difficulty, static baselines, env sampling.

RLVE (Zeng et al., *RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive
Verifiable Environments*, arXiv:2511.07317, adaptive difficulty; code: ``RLVEManager`` in
``slime/ray/rollout_data_source.py``) keeps, per environment, a difficulty window ``[ℓ, h]``::

    start:     h = h0 (0),  ℓ = max(0, h0 − d_Δ + 1),  (a, b) = (0, 0),  seed = 0
    sample:    e ~ Uniform(environments);  d ~ Uniform{ℓ..h};  problem = e.generate(d, seed++)
    update(all rollouts generated this step, including groups dynamic sampling drops later):
        for every rollout at difficulty == h[e]:  b[e] += 1;  a[e] += fully_correct
        for every e with b[e] ≥ τ_num:
            if a[e] / b[e] ≥ τ_acc:  h[e] += 1          # at most +1 per env per update
            (a[e], b[e]) = (0, 0)                       # reset after every check
            ℓ[e] = max(ℓ[e], h[e] − d_Δ + 1)            # the window keeps d_Δ levels
    h has no upper limit.

Defaults reproduce the paper: τ_acc = 0.9, τ_num = 128 rollouts (8 prompts × 16 samples),
d_Δ = 4, h0 = 0, environments uniform. Accuracy is ``Verdict.correct`` (RLVE's ``accuracy``),
never the graded training reward.

The flow of one step::

    tasks = curriculum.next_tasks(n)           # [Task(env, difficulty, seed)], seeds from a counter
    problems = [t.generate() for t in tasks]   # or curriculum.sample(n)
    ... rollouts, verdicts ...
    curriculum.update(rollouts)                # every rollout of the step, dropped groups too

Seeds come from one global counter in the state (as in RLVE), so a resumed run regenerates the
same problems. Training seeds are ``[0, TRAIN_SEED_LIMIT)``; held-out evaluation uses
``eval_seed(k) = EVAL_SEED_BASE + k``, never a training seed. ``state_dict()`` is plain JSON
(windows, counters, seed counter, sampling RNG state) and restores exactly.
"""

from __future__ import annotations

import itertools
import math
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Annotated, Any, ClassVar, TypeAlias, TypeGuard

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from verirl.registry import Registry, Spec
from verirl.types import Problem, Rollout

# ---- the seed space ----------------------------------------------------------------------
TRAIN_SEED_LIMIT = 2**31
"""Training seeds are the counter values 0, 1, 2, ... and stay below this limit."""
EVAL_SEED_BASE = 2**31
"""Held-out evaluation problem ``k`` uses seed ``EVAL_SEED_BASE + k``: disjoint from training."""

STATE_VERSION = 1


def eval_seed(k: int) -> int:
    """The seed of held-out evaluation problem ``k`` (``k ≥ 0``); never a training seed."""
    if not _is_int(k) or k < 0:
        raise ValueError(f"evaluation problem index must be an integer >= 0, got {k!r}")
    return EVAL_SEED_BASE + k


# ---- values --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    """What the curriculum asks for: one problem of ``env`` at ``difficulty`` with ``seed``."""

    env: str
    difficulty: int
    seed: int

    def generate(self) -> Problem:
        """The problem itself (deterministic: same task, same problem, in any process)."""
        from verirl.envs import get_env  # deferred: importing envs loads every family

        try:
            return get_env(self.env).generate(self.difficulty, self.seed)
        except Exception as exc:
            raise RuntimeError(
                f"environment {self.env!r} failed to generate difficulty {self.difficulty}, "
                f"seed {self.seed}: {type(exc).__name__}: {exc}"
            ) from exc


@dataclass(frozen=True)
class Outcome:
    """One rollout's result as the curriculum sees it: its problem's env and difficulty and
    whether the answer was *fully* correct (``Verdict.correct``, not the graded reward)."""

    env: str
    difficulty: int
    correct: bool


Result: TypeAlias = Rollout | Outcome | tuple[str, int, bool]


def as_outcome(result: Result) -> Outcome:
    """Normalise a rollout, an :class:`Outcome` or an ``(env, difficulty, correct)`` triple."""
    if isinstance(result, Outcome):
        return result
    if isinstance(result, Rollout):
        if result.verdict is None:
            raise ValueError(
                f"curriculum update got an unscored rollout (env {result.problem.env!r}, "
                f"seed {result.problem.seed}); score rollouts before updating the curriculum"
            )
        return Outcome(result.problem.env, result.problem.difficulty, bool(result.verdict.correct))
    if isinstance(result, tuple) and len(result) == 3:
        env, difficulty, correct = result
        if isinstance(env, str) and _is_int(difficulty) and correct in (True, False):
            return Outcome(env, difficulty, bool(correct))
        raise ValueError(
            "curriculum result must be (env: str, difficulty: int, correct: bool), where "
            f"'correct' is the fully-correct flag, not a graded reward; got {result!r}"
        )
    raise TypeError(
        "curriculum update expects Rollout, Outcome or (env, difficulty, correct), "
        f"got {type(result).__name__}"
    )


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def effective_prompt_ratio(group_rewards: Iterable[Sequence[float]]) -> float:
    """RLVE §2.5: the share of prompts whose group rewards are not all equal (std > 0), i.e.
    the groups DAPO's dynamic sampling keeps. 0.0 for no groups."""
    groups = [list(g) for g in group_rewards]
    if not groups:
        return 0.0
    informative = sum(1 for g in groups if len(g) > 1 and max(g) != min(g))
    return informative / len(groups)


# ---- the common interface ------------------------------------------------------------------
@dataclass
class _Level:
    """One environment's window and the counters at its top level ``high``."""

    low: int
    high: int
    correct: int = 0  # a: fully correct rollouts at difficulty == high (since the last check)
    attempted: int = 0  # b: rollouts at difficulty == high (since the last check)
    checks: int = 0
    last_check_accuracy: float | None = None


class Curriculum(ABC):
    """Chooses ``(env, difficulty, seed)`` for each new problem and adapts to results.

    Environment sampling is uniform over ``environments`` (RLVE) or proportional to
    ``weights`` (unnamed environments weigh 1.0); the difficulty is uniform over the
    environment's window ``[low, high]``; seeds come from a counter in the state. Subclasses
    define how results move the windows (:meth:`_observe`).
    """

    kind: ClassVar[str]

    def __init__(
        self,
        environments: Sequence[str],
        windows: Mapping[str, tuple[int, int]],
        *,
        weights: Mapping[str, float] | None = None,
        seed: int = 0,
    ) -> None:
        envs = list(environments)
        if not envs:
            raise ValueError("a curriculum needs at least one environment")
        dupes = sorted({e for e in envs if envs.count(e) > 1})
        if dupes:
            raise ValueError(f"environment(s) listed twice in the curriculum: {', '.join(dupes)}")
        self._envs: tuple[str, ...] = tuple(envs)
        self._probs, self._cum = _sampling_weights(self._envs, weights)
        self._levels: dict[str, _Level] = {}
        for e in self._envs:
            low, high = windows[e]
            if not (_is_int(low) and _is_int(high) and 0 <= low <= high):
                raise ValueError(
                    f"difficulty window of {e!r} must be integers 0 <= low <= high, "
                    f"got [{low}, {high}]"
                )
            self._levels[e] = _Level(low, high)
        self._rng = random.Random(seed)
        self._seed_counter = 0
        self._last: dict[str, float] = {}

    # -- sampling --------------------------------------------------------------------------
    @property
    def environments(self) -> tuple[str, ...]:
        return self._envs

    @property
    def seed_counter(self) -> int:
        """The seed the next task gets."""
        return self._seed_counter

    def window(self, env: str) -> tuple[int, int]:
        """The inclusive difficulty range ``(low, high)`` sampled for ``env`` now."""
        level = self._levels[env]
        return level.low, level.high

    def counters(self, env: str) -> tuple[int, int]:
        """``(a, b)``: fully correct / attempted rollouts at ``h`` since the last check."""
        level = self._levels[env]
        return level.correct, level.attempted

    def next_tasks(self, n: int) -> list[Task]:
        """``n`` new tasks: env (uniform or weighted), difficulty uniform in its window, and
        the next ``n`` training seeds (RLVE's ``seed += 1`` per problem)."""
        if not _is_int(n) or n < 0:
            raise ValueError(f"number of tasks must be an integer >= 0, got {n!r}")
        if self._seed_counter + n > TRAIN_SEED_LIMIT:
            raise RuntimeError(
                f"training seed space exhausted: {self._seed_counter} + {n} tasks would reach "
                f"TRAIN_SEED_LIMIT = {TRAIN_SEED_LIMIT} (the evaluation seed range)"
            )
        tasks = []
        for _ in range(n):
            if self._cum is None:
                env = self._rng.choice(self._envs)
            else:
                env = self._rng.choices(self._envs, cum_weights=self._cum)[0]
            low, high = self.window(env)
            tasks.append(Task(env, self._rng.randint(low, high), self._seed_counter))
            self._seed_counter += 1
        return tasks

    def sample(self, n: int) -> list[Problem]:
        """``n`` generated problems (:meth:`next_tasks` followed by generation)."""
        return [task.generate() for task in self.next_tasks(n)]

    def preview(self, n: int) -> list[Problem]:
        """The ``n`` problems :meth:`sample` would give next, without moving past them."""
        state = self.state_dict()
        try:
            return self.sample(n)
        finally:
            self.load_state_dict(state)

    # -- adaptation ------------------------------------------------------------------------
    def update(self, results: Iterable[Result]) -> list[str]:
        """Feed every rollout generated this step, including groups that dynamic sampling
        drops (RLVE counts them). Returns the environments whose window moved up."""
        items = list(results)
        outcomes = [as_outcome(r) for r in items]
        for o in outcomes:
            if o.env not in self._levels:
                raise KeyError(
                    f"curriculum update got a result for environment {o.env!r}, which is not in "
                    f"this curriculum ({', '.join(self._envs)})"
                )
        for o in outcomes:
            level = self._levels[o.env]
            if o.difficulty == level.high:  # only rollouts at the top of the window count
                level.attempted += 1
                level.correct += int(o.correct)
        self._record_step(items, outcomes)
        return self._observe()

    @abstractmethod
    def _observe(self) -> list[str]:
        """Apply the adaptation rule to the counters; return the envs that moved up."""

    def _record_step(self, items: list[Result], outcomes: list[Outcome]) -> None:
        last: dict[str, float] = {"rollouts": float(len(outcomes))}
        if outcomes:
            last["mean_difficulty"] = sum(o.difficulty for o in outcomes) / len(outcomes)
            last["accuracy"] = sum(o.correct for o in outcomes) / len(outcomes)
        groups: dict[int, list[float]] = {}
        for r in items:
            if isinstance(r, Rollout) and r.verdict is not None:
                groups.setdefault(r.group, []).append(float(r.verdict.reward))
        if groups:
            last["effective_prompt_ratio"] = effective_prompt_ratio(groups.values())
        self._last = last

    # -- checkpoints -----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable state: windows, counters, seed counter, sampling RNG state."""
        version, internal, gauss_next = self._rng.getstate()
        return {
            "kind": self.kind,
            "version": STATE_VERSION,
            "environments": list(self._envs),
            "seed_counter": self._seed_counter,
            "rng_state": {"version": version, "internal": list(internal), "gauss": gauss_next},
            "last_update": dict(self._last),
            "levels": {e: asdict(level) for e, level in self._levels.items()},
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict` output exactly. Hyperparameters (τ, window width,
        weights) stay those this object was built with; kind and environments must match."""
        if state.get("kind") != self.kind or state.get("version") != STATE_VERSION:
            raise ValueError(
                f"curriculum state is kind {state.get('kind')!r} version {state.get('version')!r};"
                f" this curriculum is kind {self.kind!r} version {STATE_VERSION}"
            )
        saved = list(state.get("environments", []))
        if saved != list(self._envs):
            raise ValueError(
                "curriculum state has a different environment list (only in the state: "
                f"{[e for e in saved if e not in self._envs] or 'none'}; only here: "
                f"{[e for e in self._envs if e not in saved] or 'none'}; the order matters too)"
            )
        counter = state["seed_counter"]
        if not _is_int(counter) or not 0 <= counter <= TRAIN_SEED_LIMIT:
            raise ValueError(f"curriculum state: bad seed_counter {counter!r}")
        levels = {}
        for e in self._envs:
            s = dict(state["levels"][e])
            last = s.pop("last_check_accuracy", None)
            raw = [s.get(k) for k in ("low", "high", "correct", "attempted", "checks")]
            ints = [x for x in raw if _is_int(x) and x >= 0]
            if len(ints) < len(raw) or ints[0] > ints[1] or ints[2] > ints[3]:
                raise ValueError(f"curriculum state for environment {e!r} is invalid: {s}")
            low, high, correct, attempted, checks = ints
            levels[e] = _Level(
                low, high, correct, attempted, checks, None if last is None else float(last)
            )
        self._check_loaded_levels(levels)
        rs = state["rng_state"]
        self._rng.setstate((rs["version"], tuple(rs["internal"]), rs["gauss"]))
        self._levels = levels
        self._seed_counter = counter
        self._last = {k: float(v) for k, v in state.get("last_update", {}).items()}

    @abstractmethod
    def _check_loaded_levels(self, levels: Mapping[str, _Level]) -> None:
        """Refuse a restored state that this curriculum's settings cannot have produced."""

    # -- metrics ---------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        """A flat dict for loggers.

        Per environment ``curriculum/<env>/``: ``h``, ``low``, ``count_at_h`` (b),
        ``acc_at_h`` (a/b), ``checks`` and ``last_check_acc``. Summary: ``curriculum/mean_h``,
        ``max_h``, ``expected_difficulty`` (the mean difficulty the sampler draws now) and
        ``seed_counter``; from the last update ``curriculum/last/``: ``rollouts``,
        ``mean_difficulty``, ``accuracy`` and, when it got rollouts, the
        ``effective_prompt_ratio``. A value that does not exist yet (an accuracy over zero
        rollouts) is left out rather than logged as NaN.
        """
        out: dict[str, float] = {}
        for e, level in self._levels.items():
            prefix = f"curriculum/{e}/"
            out[prefix + "h"] = float(level.high)
            out[prefix + "low"] = float(level.low)
            out[prefix + "count_at_h"] = float(level.attempted)
            if level.attempted:
                out[prefix + "acc_at_h"] = level.correct / level.attempted
            out[prefix + "checks"] = float(level.checks)
            if level.last_check_accuracy is not None:
                out[prefix + "last_check_acc"] = level.last_check_accuracy
        highs = [level.high for level in self._levels.values()]
        out["curriculum/mean_h"] = sum(highs) / len(highs)
        out["curriculum/max_h"] = float(max(highs))
        out["curriculum/expected_difficulty"] = sum(
            p * (level.low + level.high) / 2
            for p, level in zip(self._probs, self._levels.values(), strict=True)
        )
        out["curriculum/seed_counter"] = float(self._seed_counter)
        out.update({f"curriculum/last/{k}": v for k, v in self._last.items()})
        return out


def _sampling_weights(
    envs: Sequence[str], weights: Mapping[str, float] | None
) -> tuple[list[float], list[float] | None]:
    """(probabilities, cumulative weights) in env order; cumulative is ``None`` for uniform
    sampling (RLVE's ``random.choice``). Environments not named in ``weights`` weigh 1.0."""
    if weights is None:
        return [1.0 / len(envs)] * len(envs), None
    ws = [float(weights.get(e, 1.0)) for e in envs]
    bad = [e for e in weights if e not in envs]
    bad += [e for e, w in zip(envs, ws, strict=True) if not (math.isfinite(w) and w > 0)]
    if bad:
        raise ValueError(
            f"sampling weights must name environments of the curriculum and be "
            f"finite and > 0; wrong for: {', '.join(map(repr, bad))}"
        )
    return [w / sum(ws) for w in ws], list(itertools.accumulate(ws))


# ---- RLVE's adaptive controller -------------------------------------------------------------
class AdaptiveDifficulty(Curriculum):
    """RLVE's per-environment adaptive difficulty window (Zeng et al. 2025, arXiv:2511.07317).

    Per environment the window ``[ℓ, h]`` starts at ``h = initial_difficulty`` and
    ``ℓ = max(0, h − window + 1)``. :meth:`update` counts, for each environment, rollouts whose
    problem difficulty equals ``h`` (``b``) and how many were fully correct (``a``). Then, for
    each environment with ``b ≥ tau_num``: if ``a / b ≥ tau_acc`` it raises ``h`` by one;
    whether or not ``h`` moved it resets ``(a, b)``; and it sets ``ℓ = max(ℓ, h − window + 1)``.
    So ``h`` rises at most once per environment per update, and has no upper limit.
    """

    kind = "adaptive"

    def __init__(
        self,
        environments: Sequence[str],
        *,
        tau_acc: float = 0.9,
        tau_num: int = 128,
        window: int = 4,
        initial_difficulty: int = 0,
        weights: Mapping[str, float] | None = None,
        seed: int = 0,
    ) -> None:
        checks = [("tau_num", tau_num, 1), ("window", window, 1), ("h0", initial_difficulty, 0)]
        for name, value, least in checks:
            if not _is_int(value) or value < least:
                raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
        if not (isinstance(tau_acc, int | float) and 0.0 < tau_acc <= 1.0):
            raise ValueError(f"tau_acc must be in (0, 1], got {tau_acc!r}")
        self.tau_acc = float(tau_acc)
        self.tau_num = tau_num
        self.window_size = window
        self.initial_difficulty = initial_difficulty
        start = (max(0, initial_difficulty - window + 1), initial_difficulty)
        super().__init__(
            environments, dict.fromkeys(environments, start), weights=weights, seed=seed
        )

    def _observe(self) -> list[str]:
        raised = []
        for e, level in self._levels.items():
            if level.attempted < self.tau_num:
                continue
            accuracy = level.correct / level.attempted
            level.checks += 1
            level.last_check_accuracy = accuracy
            # the top of the window stops at the environment's largest difficulty
            if accuracy >= self.tau_acc and level.high < _max_difficulty(e):
                level.high += 1
                raised.append(e)
            level.correct = level.attempted = 0  # reset after every check, moved or not
            level.low = max(level.low, level.high - self.window_size + 1)
        return raised

    def _check_loaded_levels(self, levels: Mapping[str, _Level]) -> None:
        low0 = max(0, self.initial_difficulty - self.window_size + 1)
        for e, level in levels.items():
            if level.high < self.initial_difficulty or level.low != max(
                low0, level.high - self.window_size + 1
            ):
                raise ValueError(
                    f"curriculum state window [{level.low}, {level.high}] of {e!r} cannot come "
                    f"from initial_difficulty={self.initial_difficulty}, "
                    f"window={self.window_size}; was the state saved with other settings?"
                )


# ---- static baseline ------------------------------------------------------------------------
class StaticWindow(Curriculum):
    """A fixed difficulty window per environment (RLVE's static baselines [0,1], [0,20],
    [0,100]). ``low``/``high`` apply to every environment unless ``windows`` names it. It never
    adapts; the counters at ``high`` accumulate over the whole run (for metrics only)."""

    kind = "static"

    def __init__(
        self,
        environments: Sequence[str],
        *,
        low: int = 0,
        high: int = 1,
        windows: Mapping[str, tuple[int, int]] | None = None,
        weights: Mapping[str, float] | None = None,
        seed: int = 0,
    ) -> None:
        windows = dict(windows or {})
        unknown = [e for e in windows if e not in environments]
        if unknown:
            raise ValueError(
                f"static window given for environment(s) not in the curriculum: "
                f"{', '.join(map(repr, unknown))}"
            )
        per_env = {e: windows.get(e, (low, high)) for e in environments}
        super().__init__(environments, per_env, weights=weights, seed=seed)

    def _observe(self) -> list[str]:
        return []

    def _check_loaded_levels(self, levels: Mapping[str, _Level]) -> None:
        for e, level in levels.items():
            if (level.low, level.high) != self.window(e):
                raise ValueError(
                    f"curriculum state has the static window [{level.low}, {level.high}] for "
                    f"{e!r}; this curriculum has {list(self.window(e))}"
                )


# ---- the registry of kinds ------------------------------------------------------------------
CURRICULA: Registry[Spec[Callable[..., Curriculum]]] = Registry("curriculum kind")
"""Curriculum kinds by name (``curriculum.kind``): ``spec.part(config, environments, seed)``
(the settings it reads are :class:`CurriculumConfig`'s)."""


@CURRICULA.register(
    "adaptive", description="RLVE's per-environment window that moves with the policy"
)
def _adaptive(cfg: CurriculumConfig, envs: Sequence[str], seed: int) -> Curriculum:
    return AdaptiveDifficulty(
        envs,
        tau_acc=cfg.tau_acc,
        tau_num=cfg.tau_num,
        window=cfg.window,
        initial_difficulty=cfg.initial_difficulty,
        weights=cfg.weights,
        seed=seed,
    )


@CURRICULA.register(
    "static", description="a fixed window [static_low, static_high] (RLVE's baselines)"
)
def _static(cfg: CurriculumConfig, envs: Sequence[str], seed: int) -> Curriculum:
    return StaticWindow(
        envs, low=cfg.static_low, high=cfg.static_high, weights=cfg.weights, seed=seed
    )


# ---- configuration -------------------------------------------------------------------------
class CurriculumConfig(BaseModel):
    """How training problems are chosen. The defaults reproduce RLVE (arXiv:2511.07317)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(
        "adaptive",
        description="A registered curriculum kind (verirl.curriculum.CURRICULA): 'adaptive': "
        "RLVE's per-environment difficulty window that moves up with the policy (RLVE). "
        "'static': a fixed window [static_low, static_high] (the paper's baselines [0,1], "
        "[0,20], [0,100]).",
    )
    environments: Annotated[list[str], Field(min_length=1)] | None = Field(
        None,
        description="Names of the environments to train on; problems are spread over them. "
        "None means every registered environment (RLVE trains on all of its environments).",
    )
    exclude_tags: list[str] = Field(
        default_factory=list,
        description="With environments=None: leave out every environment carrying one of these "
        "tags (e.g. [formal] drops the proof environments, which need Coq or Lean).",
    )
    weights: dict[str, Annotated[float, Field(gt=0.0, allow_inf_nan=False)]] | None = Field(
        None,
        description="Optional environment sampling weights (> 0); unnamed environments get "
        "1.0. None samples environments uniformly, which reproduces RLVE.",
    )
    tau_acc: float = Field(
        0.9,
        gt=0.0,
        le=1.0,
        description="τ_acc: raise an environment's top difficulty h by one when the fully-"
        "correct accuracy at h reaches this. RLVE: 0.9.",
    )
    tau_num: int = Field(
        128,
        ge=1,
        description="τ_num: rollouts at difficulty h needed before an accuracy check; the "
        "counters reset after every check. RLVE: 128 (8 prompts × 16 samples).",
    )
    window: int = Field(
        4,
        ge=1,
        description="d_Δ: number of difficulty levels in the sliding window [h − d_Δ + 1, h]. "
        "RLVE: 4.",
    )
    initial_difficulty: int = Field(
        0,
        ge=0,
        description="h0: the starting top difficulty of every environment. RLVE: 0 (the "
        "Tinker recipe's fast setting uses 3).",
    )
    static_low: int = Field(
        0, ge=0, description="kind='static' only: lowest difficulty. RLVE baselines: 0."
    )
    static_high: int = Field(
        20,
        ge=0,
        description="kind='static' only: highest difficulty (inclusive). RLVE baselines: 1, 20 "
        "(an oracle window) and 100.",
    )

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        if value not in CURRICULA:
            known = ", ".join(CURRICULA.names())
            raise ValueError(f"unknown curriculum kind {value!r}; known: {known}")
        return value

    @field_validator("environments")
    @classmethod
    def _known_environments(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        dupes = sorted({e for e in value if value.count(e) > 1})
        if dupes:
            raise ValueError(f"curriculum.environments lists {', '.join(dupes)} more than once")
        from verirl.envs import is_env

        known = _registered_envs()
        unknown = [n for n in value if n not in known and not is_env(n)]
        if unknown:
            raise ValueError(
                f"unknown environment(s) {', '.join(map(repr, unknown))} in curriculum."
                f"environments; known: {', '.join(known) or '(none)'}"
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> CurriculumConfig:
        if self.static_low > self.static_high:
            raise ValueError(
                f"curriculum.static_low ({self.static_low}) is above "
                f"curriculum.static_high ({self.static_high})"
            )
        names = self.resolved_environments() if self.weights else []
        for name in self.weights or {}:
            if name not in names:
                raise ValueError(f"curriculum.weights names {name!r}: not a curriculum env")
        return self

    def resolved_environments(self) -> list[str]:
        """``environments``, or every registered environment (less ``exclude_tags``) when it
        is unset."""
        if self.environments is not None:
            return list(self.environments)
        return _registered_envs(set(self.exclude_tags))


def _registered_envs(exclude_tags: set[str] | None = None) -> list[str]:
    from verirl.envs import ENVIRONMENTS, env_names  # deferred: loads every family

    names = env_names()
    if not exclude_tags:
        return names
    return [n for n in names if not exclude_tags & set(ENVIRONMENTS.get(n).part.tags)]


def build_curriculum(cfg: CurriculumConfig, seed: int = 0) -> Curriculum:
    """The curriculum ``cfg`` describes; ``seed`` seeds the env/difficulty sampling RNG."""
    return CURRICULA.get(cfg.kind).part(cfg, cfg.resolved_environments(), seed)


def _max_difficulty(env: str) -> int:
    """The largest difficulty environment ``env`` generates (unbounded when it is not a
    registered environment)."""
    from verirl.envs import get_env, is_env

    if not is_env(env):
        return 2**62
    return int(get_env(env).max_difficulty)
