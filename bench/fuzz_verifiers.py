"""Large fuzzing run of every registered environment's verifier (see tests/fuzz/).

    PYTHONPATH=. OMP_NUM_THREADS=1 nice .venv/bin/python bench/fuzz_verifiers.py \\
        --count 1000000 --seed 1 --budget 1.0

Prints the outputs verified, the time, the slowest call per environment and every failure
(an exception, a reward outside [-1, 1], a verifier error, a call over the budget, a
non-deterministic verdict). The fast CI stage runs the same checks on 10,000 outputs.
"""

from __future__ import annotations

import argparse
import sys

from tests.fuzz.runner import fuzz_environments


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=float, default=1.0, help="seconds allowed per verify call")
    ns = ap.parse_args()
    report = fuzz_environments(ns.count, seed=ns.seed, budget_s=ns.budget)
    print(
        f"{report.outputs} outputs over {report.environments} environments in "
        f"{report.seconds:.0f} s; skipped (prover not configured): {report.skipped}"
    )
    for name, t in sorted(report.per_env_max.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  slowest call {name}: {t:.3f} s")
    print(f"{len(report.failures)} failures")
    for line in report.failures[:200]:
        print("  " + line)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
