"""Large fuzzing run of every registered environment's verifier (see tests/fuzz/), and the
time of chosen hostile outputs, in units of a reference workload timed in the same run.

    PYTHONPATH=.:src OMP_NUM_THREADS=1 nice .venv/bin/python bench/fuzz_verifiers.py \\
        --count 1000000 --seed 1

Prints the outputs verified, the time, the slowest call per environment and every failure
(an exception, a reward outside [-1, 1], a verifier error, a call over the budget, a
non-deterministic verdict). The fast CI stage runs the same checks on 10,000 outputs.

``--save-slowest FILE`` also writes the slowest calls (environment, difficulty, seed, output)
as JSON; ``--time FILE`` times those calls instead of fuzzing (``--repeat`` times each, after one
cold call), and ``--case ENV=OUTPUT`` adds an output to time (on that environment's problem at
difficulty 3, seed 0). Times are printed in milliseconds and in reference workloads
(:func:`tests.calibration.reference_seconds`, timed in the same run), so runs on other code or
other library versions compare by their ratio::

    python bench/fuzz_verifiers.py --count 20000 --envs equivalent_expression,derivative \\
        --save-slowest /tmp/slow.json
    PYTHONPATH=<old checkout>/src:. python bench/fuzz_verifiers.py --time /tmp/slow.json
    PYTHONPATH=src:. python bench/fuzz_verifiers.py --time /tmp/slow.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# the repository root, for the test helpers this script shares with tests/fuzz (`verirl` itself
# still comes from PYTHONPATH or the installed package, so a run against an old checkout's
# src times that checkout's verifiers)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.calibration import Budget, reference_seconds
from tests.fuzz.runner import BUDGET_UNITS, fuzz_environments


def time_cases(cases: list[dict[str, Any]], repeat: int) -> list[dict[str, Any]]:
    """Each case verified once cold, then ``repeat`` times: seconds and reference units."""
    from verirl.envs import get_env

    reference = reference_seconds()
    rows = []
    for case in cases:
        env = get_env(case["env"])
        problem = env.generate(case["difficulty"], case["seed"])
        t0 = time.perf_counter()
        verdict = env.verify(problem, case["output"])
        cold = time.perf_counter() - t0
        warm = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            env.verify(problem, case["output"])
            warm.append(time.perf_counter() - t0)
        rows.append(
            {
                **case,
                "reward": verdict.reward,
                "cold_s": cold,
                "median_s": statistics.median(warm),
                "min_s": min(warm),
                "max_s": max(warm),
                "median_units": statistics.median(warm) / reference,
                "cold_units": cold / reference,
            }
        )
    reference = max(reference, reference_seconds())  # the slower of the two, as the budget
    print(f"reference workload: {reference * 1000:.2f} ms (timed before and after)")
    print("  median ms [min-max] (reference units)   cold ms (units)   reward  env: output")
    for r in rows:
        print(
            f"  {r['median_s'] * 1000:9.2f} [{r['min_s'] * 1000:.2f}-{r['max_s'] * 1000:.2f}] "
            f"({r['median_units']:7.2f})   {r['cold_s'] * 1000:8.2f} ({r['cold_units']:7.2f})"
            f"   {r['reward']:5}  {r['env']}: {r['output'][:90]!r}"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--count", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--budget",
        type=float,
        default=BUDGET_UNITS,
        help="reference workloads allowed per verify call (timed in this run)",
    )
    ap.add_argument("--envs", default="", help="comma-separated environments (default: all)")
    ap.add_argument("--top", type=int, default=10, help="slowest calls to list")
    ap.add_argument("--save-slowest", type=Path, help="write the slowest calls as JSON")
    ap.add_argument("--time", type=Path, help="time the calls in this JSON file, no fuzzing")
    ap.add_argument(
        "--case", action="append", default=[], metavar="ENV=OUTPUT", help="an output to time"
    )
    ap.add_argument("--repeat", type=int, default=5, help="timed repeats of each call")
    ap.add_argument("--out", type=Path, help="write the timed rows as JSON")
    ns = ap.parse_args(argv)
    from verirl.envs import env_names

    names = ns.envs.split(",") if ns.envs else env_names()
    if ns.time or ns.case:
        cases = json.loads(ns.time.read_text()) if ns.time else []
        for spec in ns.case:
            env, _, output = spec.partition("=")
            cases.append({"env": env, "difficulty": 3, "seed": 0, "output": output})
        rows = time_cases(cases, ns.repeat)
        if ns.out:
            ns.out.write_text(json.dumps(rows, indent=1))
        return 0
    budget = Budget(ns.budget)
    report = fuzz_environments(
        ns.count, seed=ns.seed, budget=budget, names=names, keep_slowest=ns.top
    )
    print(
        f"{report.outputs} outputs over {report.environments} environments in "
        f"{report.seconds:.0f} s; skipped (prover not configured): {report.skipped}; "
        f"reference workload {report.reference_s * 1000:.2f} ms, budget {budget.units:g} of them"
    )
    for name, t in sorted(report.per_env_max.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  slowest call {name}: {t:.3f} s ({t / report.reference_s:.1f} reference units)")
    print(f"the {len(report.slowest_calls)} slowest calls:")
    for call in report.slowest_calls:
        print(f"  {call.seconds:.3f} s  {call.env}: {call.output[:100]!r}")
    if ns.save_slowest:
        cases = [
            {"env": c.env, "difficulty": c.difficulty, "seed": c.seed, "output": c.output}
            for c in report.slowest_calls
        ]
        ns.save_slowest.write_text(json.dumps(cases, indent=1))
        print(f"{len(cases)} slowest calls written to {ns.save_slowest}")
    print(f"{len(report.failures)} failures")
    for line in report.failures[:200]:
        print("  " + line)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
