"""Self-checks an environment runs on itself (``verirl envs check``).

The same properties the test suite checks for every environment, runnable on a user's own
environment: generation is deterministic, the independent solver's answer verifies as
correct, a corrupted answer does not, adversarial outputs never crash the verifier or leave
the reward range, and generation at a high difficulty stays fast.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from verirl.envs.base import Environment

ADVERSARIAL_OUTPUTS = (
    "",
    "no answer here",
    "\\boxed{",
    "\\boxed{}",
    "\\boxed{\\boxed{\\boxed{1}}}",
    "}}}{{{\\boxed{x}",
    "\\boxed{" + "9" * 5000 + "}",
    "\\boxed{1} " * 200,
    "<answer></answer>",
    "<answer>ünïcødé ✓ 🙂</answer>",
    "\\boxed{-0}",
    "\\boxed{1e309}",
    "\\boxed{nan}",
)


@dataclass
class SelfCheckReport:
    name: str
    checks: int = 0
    failures: list[str] = field(default_factory=list)

    def fail(self, message: str) -> None:
        self.failures.append(message)


def self_check(
    env: Environment,
    difficulties: Iterable[int] = range(11),
    seeds: Iterable[int] = range(3),
    high_difficulty: int = 30,
    time_limit_s: float = 2.0,
) -> SelfCheckReport:
    report = SelfCheckReport(env.name)
    rng = random.Random(f"selfcheck/{env.name}")
    seeds = list(seeds)
    for d in difficulties:
        for s in seeds:
            report.checks += 1
            try:
                problem = env.generate(d, s)
                again = env.generate(d, s)
                if json.dumps(problem.to_dict(), sort_keys=True) != json.dumps(
                    again.to_dict(), sort_keys=True
                ):
                    report.fail(f"d={d} s={s}: generation is not deterministic")
                solution = env.solve(problem)
                good = env.verify(problem, env.answer_format.render(solution))
                if not good.correct:
                    report.fail(f"d={d} s={s}: reference solution rejected ({good.detail})")
                wrong = env.corrupt(problem, solution, rng)
                bad = env.verify(problem, env.answer_format.render(wrong))
                if bad.correct:
                    report.fail(f"d={d} s={s}: corrupted solution accepted")
                for output in ADVERSARIAL_OUTPUTS:
                    v = env.verify(problem, output)
                    if not -1.0 <= v.reward <= 1.0:
                        report.fail(f"d={d} s={s}: reward {v.reward} out of [-1, 1]")
            except Exception as exc:  # report, don't stop: the user wants the whole picture
                report.fail(f"d={d} s={s}: {type(exc).__name__}: {exc}")
    report.checks += 1
    start = time.perf_counter()
    try:
        for s in seeds:
            env.generate(high_difficulty, s)
    except Exception as exc:
        report.fail(f"d={high_difficulty}: {type(exc).__name__}: {exc}")
    per_problem = (time.perf_counter() - start) / max(len(seeds), 1)
    if per_problem > time_limit_s:
        report.fail(f"d={high_difficulty}: {per_problem:.2f} s per problem (> {time_limit_s} s)")
    return report
