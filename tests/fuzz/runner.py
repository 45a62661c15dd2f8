"""Run hostile outputs through every registered environment's verifier and collect what went
wrong (test helper, shared by ``tests/fuzz`` and ``bench/fuzz_verifiers.py``).

Checked per output: ``verify`` returns (never raises); the reward is a finite float in [-1, 1];
``correct`` is a bool and implies reward 1; no verdict is marked ``verifier_error`` (a verifier
that raised); the call stays within its :class:`~tests.calibration.Budget` (a multiple of a
reference workload timed in the same run, so the bound scales with the machine; a call over
it is timed again before it counts); and a second call on every ``recheck_every``-th output
gives the same verdict (determinism).
"""

from __future__ import annotations

import functools
import heapq
import math
import random
import time
from dataclasses import dataclass, field

from tests.calibration import Budget
from tests.fuzz.hostile import hostile_output
from verirl.envs import Environment, env_names, get_env
from verirl.errors import UserInputError
from verirl.types import Problem

BUDGET_UNITS = 200.0
"""A verifier call may cost this many reference workloads: about 1 s on the 2-core machine
where the reference takes 5.3 ms, and where the slowest hostile output of a 10,000-output run
outside the prover-backed environments took 13 ms (2.2 units)."""

PROVER_DEADLINE_S = 15.0
"""A prover-backed call runs a real proof under the prover's own deadline (15 s, as in Kim &
Yun 2026): its budget is that deadline plus the calibrated budget."""


@dataclass(frozen=True, order=True)
class SlowCall:
    """One verifier call: its seconds, and what reproduces it."""

    seconds: float
    env: str
    output: str
    difficulty: int
    seed: int


@dataclass
class FuzzReport:
    outputs: int = 0
    environments: int = 0
    seconds: float = 0.0
    slowest: tuple[float, str, str] = (0.0, "", "")
    failures: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # environments not runnable here
    per_env_max: dict[str, float] = field(default_factory=dict)
    reference_s: float = 0.0  # the budget's unit: the reference workload, timed in this run
    slowest_calls: list[SlowCall] = field(default_factory=list)  # slowest first

    def fail(self, env: str, what: str, output: str) -> None:
        self.failures.append(f"{env}: {what}; output {output[:160]!r}")


def fuzz_environments(
    count: int,
    *,
    seed: int = 0,
    budget: Budget | None = None,
    difficulties: tuple[int, ...] = (0, 1, 3, 6),
    recheck_every: int = 10,
    prover_share: float = 0.2,
    names: list[str] | None = None,
    keep_slowest: int = 10,
) -> FuzzReport:
    """Verify about ``count`` hostile outputs spread evenly over the registered environments
    (those backed by a prover process get ``prover_share`` of an equal share). ``budget``
    (default :data:`BUDGET_UNITS` reference workloads, timed now) bounds each call; the
    ``keep_slowest`` slowest calls are kept in the report."""
    budget = budget or Budget(BUDGET_UNITS)
    names = names if names is not None else env_names()
    report = FuzzReport(environments=len(names), reference_s=budget.reference_s)
    per_env = max(1, math.ceil(count / max(1, len(names))))
    t_start = time.perf_counter()
    for name in names:
        env = get_env(name)
        rng = random.Random(f"fuzz/{seed}/{name}")
        uses_prover = getattr(env, "prover", None) is not None
        n = max(2, int(per_env * prover_share)) if uses_prover else per_env
        allowance = PROVER_DEADLINE_S if uses_prover else 0.0
        problems = [env.generate(d, seed + k) for k, d in enumerate(difficulties)]
        solutions = []
        for p in problems:
            try:
                solutions.append(env.solve(p))
            except Exception:
                solutions.append(None)
        if not _runnable(env, problems[0], solutions[0]):
            report.skipped.append(name)
            continue
        for i in range(n):
            k = rng.randrange(len(problems))
            problem = problems[k]
            output = hostile_output(rng, solutions[k])
            t0 = time.perf_counter()
            try:
                verdict = env.verify(problem, output)
            except BaseException as exc:  # the point is to catch anything
                report.fail(name, f"verify raised {type(exc).__name__}: {exc}"[:200], output)
                continue
            elapsed = time.perf_counter() - t0
            report.outputs += 1
            call = SlowCall(elapsed, name, output, problem.difficulty, problem.seed)
            _keep(report, keep_slowest, call)
            report.per_env_max[name] = max(report.per_env_max.get(name, 0.0), elapsed)
            if elapsed > allowance + budget.seconds:
                again_call = functools.partial(env.verify, problem, output)
                units = budget.overrun(again_call, elapsed, allowance_s=allowance)
                if units is not None:
                    report.fail(
                        name,
                        f"took {elapsed:.2f} s, {units:.0f} reference workloads of "
                        f"{budget.reference_s * 1000:.1f} ms each every time (budget "
                        f"{budget.units:.0f}{f' + {allowance:g} s' if allowance else ''})",
                        output,
                    )
            r = verdict.reward
            if not isinstance(r, int | float) or not math.isfinite(r) or not -1 <= r <= 1:
                report.fail(name, f"reward {r!r} outside [-1, 1]", output)
            if not isinstance(verdict.correct, bool) or (verdict.correct and r != 1.0):
                report.fail(name, f"correct={verdict.correct!r} with reward {r!r}", output)
            if verdict.extra.get("verifier_error"):
                report.fail(name, f"verifier error {verdict.extra['verifier_error']}", output)
            if i % recheck_every == 0:
                again = env.verify(problem, output)
                if (again.reward, again.correct) != (verdict.reward, verdict.correct):
                    report.fail(name, "not deterministic", output)
    report.seconds = time.perf_counter() - t_start
    report.slowest_calls.sort(reverse=True)
    if report.slowest_calls:
        top = report.slowest_calls[0]
        report.slowest = (top.seconds, top.env, top.output[:80])
    return report


def _keep(report: FuzzReport, k: int, call: SlowCall) -> None:
    """Keep the ``k`` slowest calls (a min-heap on the time)."""
    if len(report.slowest_calls) < k:
        heapq.heappush(report.slowest_calls, call)
    elif k and call.seconds > report.slowest_calls[0].seconds:
        heapq.heapreplace(report.slowest_calls, call)


def _runnable(env: Environment, problem: Problem, solution: str | None) -> bool:
    """False when verifying needs something this machine lacks (a prover not configured is a
    configuration error, ``UserInputError``, not a verifier bug)."""
    answer = solution or "0"
    for output in (f"\\boxed{{{answer}}}", f"```lean\n{answer}\n```", f"```coq\n{answer}\n```"):
        try:
            env.verify(problem, output)
        except UserInputError:
            return False
    return True
