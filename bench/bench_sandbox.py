"""Sandbox throughput: test executions per second through the warm pool against a fresh
``python -c`` subprocess per test, measured in one run on this machine.

    .venv/bin/python bench/bench_sandbox.py [--tests 200] [--workers 1]

A "test execution" is one small program: a function and an assertion on it (the shape of a
HumanEval or program-synthesis test). Prints executions/s of

- ``warm pool``: :class:`verirl.sandbox.Sandbox` (isolation mode printed), already started;
- ``python -c``: ``subprocess.run([sys.executable, "-c", program])`` per test, no isolation;
- ``cold sandbox``: a fresh isolation layer and interpreter per test (what the pool saves),

and the ratios warm / ``python -c`` (the code issue asks for >= 10x) and warm / cold. The
warm pool and ``python -c`` run in interleaved rounds and the best round of each counts, so a
burst of load from other processes on a shared machine does not decide the ratio.

A second line measures the same test executions the way the program-synthesis environments
run them: one sandboxed execution per program, its ``--per-program`` hidden tests run by the
harness (:func:`verirl.envs.code.synthesis.run_tests`), against ``python -c`` per test.

A third line measures them as HumanEval checks them: one *checked run* per test
(:meth:`verirl.sandbox.Sandbox.run_checked`: the function in the candidate process, the
assertion in the checker process, the verdict from the checker's nonce-keyed report), against
the plain warm pool in the same rounds — the price of an unforgeable verdict.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from verirl.envs.code.synthesis import run_tests, score_tests
from verirl.sandbox import Sandbox

FIB = """def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
"""
# one test execution: the function and an assertion on it (a HumanEval-shaped test)
PROGRAM = FIB + 'assert fib({k}) == {expected}, "wrong"\nprint("ok")\n'


def _fib(k: int) -> int:
    a, b = 0, 1
    for _ in range(k):
        a, b = b, a + b
    return a


def _programs(n: int) -> list[str]:
    out = []
    for i in range(n):
        k = 10 + i % 20
        out.append(PROGRAM.format(k=k, expected=_fib(k)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", type=int, default=200)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; best of each")
    ap.add_argument("--per-program", type=int, default=10, help="hidden tests per program")
    args = ap.parse_args()
    programs = _programs(args.tests)
    fib_tests = [((k,), _fib(k)) for k in range(10, 10 + args.per_program)]
    fib_args = [a for a, _ in fib_tests]
    harness_programs = max(1, args.tests // args.per_program)

    checks = [(k, _fib(k)) for k in (10 + i % 20 for i in range(args.tests))]
    warm_times, fresh_times, harness_times, checked_times = [], [], [], []
    with Sandbox(args.workers) as box:
        box.warm()
        box.run("pass")
        mode = box.mode
        # interleaved rounds, best of each (the machine may be shared: take the least-disturbed)
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            ok = sum(box.run(p).stdout.strip() == "ok" for p in programs)
            warm_times.append(time.perf_counter() - t0)
            assert ok == len(programs), f"warm pool: {ok}/{len(programs)} passed"

            t0 = time.perf_counter()
            ok = 0
            for p in programs:
                res = subprocess.run(
                    [sys.executable, "-c", p], capture_output=True, text=True, timeout=30
                )
                ok += res.stdout.strip() == "ok"
            fresh_times.append(time.perf_counter() - t0)
            assert ok == len(programs), f"python -c: {ok}/{len(programs)} passed"

            t0 = time.perf_counter()
            for _ in range(harness_programs):
                verdict = score_tests("fib", fib_tests, run_tests(FIB, "fib", fib_args, 2.0))
                assert verdict.correct, verdict.detail
            harness_times.append(time.perf_counter() - t0)

            t0 = time.perf_counter()
            ok = 0
            for k, expected in checks:
                ok += box.run_checked(FIB, "fib", f"assert candidate({k}) == {expected}\n").ok
            checked_times.append(time.perf_counter() - t0)
            assert ok == len(checks), f"checked runs: {ok}/{len(checks)} passed"
    warm, fresh, checked = min(warm_times), min(fresh_times), min(checked_times)

    cold_n = max(10, len(programs) // 10)
    t0 = time.perf_counter()
    for p in programs[:cold_n]:
        with Sandbox(1) as one:
            assert one.run(p).stdout.strip() == "ok"
    cold = (time.perf_counter() - t0) / cold_n * len(programs)

    n = len(programs)
    print(
        f"isolation mode: {mode}; {n} test executions x {args.rounds} interleaved rounds "
        f"(best round of each); workers: {args.workers}"
    )
    print(f"  warm rounds (s): {[round(t, 2) for t in warm_times]}")
    print(f"  python -c rounds (s): {[round(t, 2) for t in fresh_times]}")
    print(f"  checked rounds (s): {[round(t, 2) for t in checked_times]}")
    print(f"warm pool      : {n / warm:8.1f} exec/s  ({1000 * warm / n:.2f} ms each)")
    print(f"python -c      : {n / fresh:8.1f} exec/s  ({1000 * fresh / n:.2f} ms each)")
    print(
        f"cold sandbox   : {n / cold:8.1f} exec/s  ({1000 * cold / n:.2f} ms each, {cold_n} runs)"
    )
    print(f"warm / python -c: {fresh / warm:.1f}x   warm / cold sandbox: {cold / warm:.1f}x")
    print(
        f"checked runs   : {n / checked:8.1f} exec/s  ({1000 * checked / n:.2f} ms each); "
        f"checked / plain warm: {warm / checked:.2f}x the rate"
    )
    tests_run = harness_programs * len(fib_tests)
    per_test = min(harness_times) / tests_run
    print(
        f"as the code environments run tests ({len(fib_tests)} per execution, {tests_run} tests): "
        f"{1 / per_test:8.1f} tests/s ({1000 * per_test:.2f} ms each); "
        f"vs python -c per test: {fresh / n / per_test:.1f}x"
    )


if __name__ == "__main__":
    main()
