"""Checking miniF2F proofs: the header-keyed coqidetop pool vs one-shot coqc.

A miniF2F-rocq check mostly pays for its header (``Require Import Reals.``, Coquelicot): coqc
loads it for every proof. The pool keeps workers whose document already holds a header and
hands each check to the worker sharing the longest prefix, so a header is loaded once per
worker. To show that the sharing is what helps, a third backend is the same pool with workers
restarted after every check (``max_uses=1``: each check loads its header afresh).

Workload: the first ``--theorems`` miniF2F-rocq test theorems that this Coq can state, each
with the same short scripts (``intros; ring.``, ``reflexivity.``, ``intros; auto.``,
``easy.``): some pass, most fail, all quickly. Every backend checks the same list with the
same number of workers, **cold** (a fresh pool per repeat: starting the workers and loading
the headers is counted). The backends must agree on pass/fail.

It prints checks per second for each backend, the ratio pool/coqc for every repeat and their
median and spread (min-max), and the disagreements.

Run: ``python bench/bench_coq_headers.py`` (60 theorems × 4 scripts, 2 workers, 3 repeats) or
``--theorems 3 --repeats 1`` for a smoke run. Needs Coq, libcoq-coquelicot and the
miniF2F-rocq copy in ``../shared/benchmarks`` (or ``--data DIR``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from typing import Any

from verirl.evals.formal import CHECK_ROOTS, load_minif2f, statement_exclusions
from verirl.provers.base import FormalProblem
from verirl.provers.coq.coqc import CoqcChecker
from verirl.provers.coq.idetop import CoqIdeChecker

SCRIPTS = (
    "Proof. intros; ring. Qed.",
    "Proof. reflexivity. Qed.",
    "Proof. intros; auto. Qed.",
    "Proof. easy. Qed.",
)


def workload(theorems: int, data: str | None) -> list[tuple[FormalProblem, str]]:
    """``theorems`` stateable miniF2F-rocq test theorems × :data:`SCRIPTS`, in file order."""
    items, _ = load_minif2f("test", data)
    items.sort(key=lambda it: it.id)
    kept = []
    with CoqIdeChecker(2, extra_roots=CHECK_ROOTS) as checker:
        for item in items:  # the exclusion rule, asked only of the theorems needed
            if len(kept) == theorems:
                break
            if not statement_exclusions([item], checker):
                kept.append(item)
    return [(it.problem(), script) for it in kept for script in SCRIPTS]


def _timed(checker: Any, items: list[tuple[FormalProblem, str]], timeout: float) -> Any:
    t0 = time.perf_counter()
    out = checker.check_batch(items, timeout_s=timeout)
    return time.perf_counter() - t0, out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--theorems", type=int, default=60)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=15.0, help="seconds per check")
    ap.add_argument("--data", help="the miniF2F-rocq directory (default: ../shared/benchmarks)")
    ap.add_argument("--json", action="store_true", help="print one JSON line as well")
    args = ap.parse_args(argv)

    items = workload(args.theorems, args.data)
    n = len(items)
    coqc = CoqcChecker(workers=args.workers, extra_roots=CHECK_ROOTS)
    rates: dict[str, list[float]] = {"coqc": [], "pool": [], "pool, no sharing": []}
    loads: list[int] = []
    disagreements = 0
    for _ in range(args.repeats):
        seconds, by_coqc = _timed(coqc, items, args.timeout)
        rates["coqc"].append(n / seconds)
        with CoqIdeChecker(args.workers, extra_roots=CHECK_ROOTS) as pool:
            seconds, by_pool = _timed(pool, items, args.timeout)
            loads.append(pool.sentences_loaded)
        rates["pool"].append(n / seconds)
        with CoqIdeChecker(args.workers, extra_roots=CHECK_ROOTS, max_uses=1) as fresh:
            seconds, _ = _timed(fresh, items, args.timeout)
        rates["pool, no sharing"].append(n / seconds)
        disagreements += sum(a.passed != b.passed for a, b in zip(by_coqc, by_pool, strict=True))
    ratios = [p / c for p, c in zip(rates["pool"], rates["coqc"], strict=True)]
    passed = sum(r.passed for r in by_pool)
    print(
        f"checks: {n} ({args.theorems} theorems × {len(SCRIPTS)} scripts; {passed} pass), "
        f"workers: {args.workers}, repeats: {args.repeats}, cold (fresh pool per repeat)"
    )
    for name, values in rates.items():
        print(
            f"{name:17s}: {statistics.median(values):7.2f} checks/s  "
            f"(min {min(values):.2f}, max {max(values):.2f})"
        )
    print(
        f"ratio pool/coqc  : {statistics.median(ratios):7.2f}x  "
        f"(per repeat: {', '.join(f'{r:.2f}' for r in ratios)})"
    )
    print(f"header sentences loaded by the pool per repeat: {loads[0]} for {n} checks")
    print(f"disagreements on pass/fail: {disagreements}")
    out = {
        "checks": n,
        "workers": args.workers,
        "rates": rates,
        "ratios": ratios,
        "sentences_loaded": loads,
        "disagreements": disagreements,
        "passed": passed,
    }
    if args.json:
        print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
