"""Coq proof-checking throughput: the coqidetop pool vs one-shot coqc on the same proofs.

The proofs are the bundled theorems' reference proofs, every other one corrupted (a ``fail.``
inserted before a random tactic, as the environment's ``corrupt`` does), so that half pass and
half fail at some tactic, as in a training batch. Both backends check the same list with
``check_batch`` and the same number of concurrent workers. For the pool, starting the workers
and loading the prelude are a one-off cost and are timed separately (``--cold`` includes them
in the rate). The two backends must agree on pass/fail and on the first failing tactic.

It prints proofs per second for each backend and the ratio pool / coqc (target >= 20x).

Run: ``python bench/bench_coq_checkers.py`` (all bundled theorems, 2 workers) or
``--proofs 12 --repeats 1`` for a smoke run. Needs Coq (``apt-get install coq``).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from verirl.envs.proofs.coq import CoqProofs
from verirl.provers.bank import bundled_bank
from verirl.provers.base import FormalProblem
from verirl.provers.coq.coqc import CoqcChecker
from verirl.provers.coq.idetop import CoqIdeChecker
from verirl.types import Problem


def workload(n: int, seed: int) -> list[tuple[FormalProblem, str]]:
    """``n`` (problem, proof) pairs from the bundle: reference proofs, every other corrupted."""
    env = CoqProofs()
    rng = random.Random(seed)
    items = []
    theorems = bundled_bank("coq").theorems
    for i in range(n):
        t = theorems[i % len(theorems)]
        proof = t.proof or ""
        if i % 2 == 1:
            fenced = f"```coq\n{proof}\n```"
            dummy = Problem("coq_proofs", 0, 0, "", fenced, {})
            proof = env.corrupt(dummy, fenced, rng).removeprefix("```coq\n").removesuffix("\n```")
        items.append((t.problem(), proof))
    return items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--proofs",
        type=int,
        default=len(bundled_bank("coq").theorems),
        help="number of proofs to check (default: one per bundled theorem)",
    )
    ap.add_argument("--workers", type=int, default=2, help="concurrent checkers per backend")
    ap.add_argument("--repeats", type=int, default=3, help="timed repetitions (median is kept)")
    ap.add_argument("--timeout", type=float, default=15.0, help="seconds per proof")
    ap.add_argument(
        "--cold",
        action="store_true",
        help="count the pool's start-up and prelude loading in its rate",
    )
    ap.add_argument("--json", action="store_true", help="print one JSON line as well")
    args = ap.parse_args()

    items = workload(args.proofs, seed=0)
    coqc = CoqcChecker(workers=args.workers)
    coqc_times, ide_times = [], []
    with CoqIdeChecker(workers=args.workers) as ide:
        t0 = time.perf_counter()
        ide.check_batch(items[: max(1, args.workers)] * args.workers, timeout_s=args.timeout)
        startup = time.perf_counter() - t0
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            by_coqc = coqc.check_batch(items, timeout_s=args.timeout)
            coqc_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            by_ide = ide.check_batch(items, timeout_s=args.timeout)
            ide_times.append(time.perf_counter() - t0)

    mismatches = sum(
        (a.passed, a.first_error_index) != (b.passed, b.first_error_index)
        for a, b in zip(by_coqc, by_ide, strict=True)
    )
    n = len(items)
    coqc_rate = n / statistics.median(coqc_times)
    ide_time = statistics.median(ide_times) + (startup if args.cold else 0.0)
    ide_rate = n / ide_time
    passed = sum(r.passed for r in by_ide)
    print(
        f"proofs: {n} ({passed} pass, {n - passed} fail), workers: {args.workers}, "
        f"repeats: {args.repeats}"
    )
    print(
        f"coqc one-shot   : {coqc_rate:8.1f} proofs/s  "
        f"({1000 * statistics.median(coqc_times) / n:.1f} ms/proof)"
    )
    print(
        f"coqidetop pool  : {ide_rate:8.1f} proofs/s  "
        f"({1000 * ide_time / n:.2f} ms/proof; pool start-up {startup:.2f} s"
        f"{', included' if args.cold else ', excluded'})"
    )
    print(f"ratio pool/coqc : {ide_rate / coqc_rate:8.1f}x  (target >= 20x)")
    print(f"disagreements   : {mismatches}")
    if args.json:
        print(
            json.dumps(
                {
                    "proofs": n,
                    "workers": args.workers,
                    "coqc_per_s": coqc_rate,
                    "ide_per_s": ide_rate,
                    "ratio": ide_rate / coqc_rate,
                    "startup_s": startup,
                    "disagreements": mismatches,
                }
            )
        )


if __name__ == "__main__":
    main()
