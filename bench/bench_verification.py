"""Batched verification: a verifier that takes 50 ms, 64 rollouts, ``processes`` (2 workers)
against ``inline`` — the speed-up of the verification stage's process pool, measured in one run.

    .venv/bin/python bench/bench_verification.py [--rollouts 64] [--sleep 0.05] [--workers 2]

Prints both wall times and their ratio (the seams issue asks for >= 1.8x). The pool is started
and warmed before timing, as it is in training (one pool per run).
"""

from __future__ import annotations

import argparse
import random
import time

from verirl.envs import load_all
from verirl.envs.base import ENVIRONMENTS, Environment, Instance
from verirl.types import Problem, Verdict
from verirl.verification.batch import BatchVerifier
from verirl.verification.executors import InlineExecutor, PoolParams, ProcessExecutor


@ENVIRONMENTS.register("bench_sleepy_echo")
class SleepyEcho(Environment):
    """Bench only: repeat a number; the verifier sleeps ``data['sleep']`` seconds first."""

    family = "bench"
    difficulty_scales = "nothing (a fixed-cost verifier)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(0, 999)
        return Instance(prompt=f"Repeat {n}.", answer=str(n), data={"n": n, "sleep": 0.05})

    def check(self, problem: Problem, answer: str) -> Verdict:
        time.sleep(float(problem.data["sleep"]))
        ok = answer.strip() == str(problem.data["n"])
        return Verdict(1.0 if ok else 0.0, ok)

    def solve(self, problem: Problem) -> str:
        return str(problem.data["n"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rollouts", type=int, default=64)
    ap.add_argument("--sleep", type=float, default=0.05)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    env = SleepyEcho()
    problems = []
    for s in range(args.rollouts):
        p = env.generate(0, s)
        problems.append(Problem(**{**p.__dict__, "data": {**p.data, "sleep": args.sleep}}))
    texts = [f"\\boxed{{{env.solve(p)}}}" for p in problems]

    load_all()  # import every environment module before timing either arm
    t0 = time.perf_counter()
    inline = BatchVerifier(InlineExecutor()).verify(problems, texts)
    t_inline = time.perf_counter() - t0

    with ProcessExecutor(PoolParams(workers=args.workers), plugins=["__mp_main__"]) as ex:
        verifier = BatchVerifier(ex)
        verifier.verify(problems[: args.workers * 2], texts[: args.workers * 2])  # warm up
        t0 = time.perf_counter()
        pooled = verifier.verify(problems, texts)
        t_pool = time.perf_counter() - t0
    assert pooled == inline and all(v and v.correct for v in pooled), "verdicts differ"
    print(f"{args.rollouts} rollouts, verifier {1000 * args.sleep:.0f} ms each")
    print(f"inline:                {t_inline:6.2f} s")
    print(f"processes ({args.workers} workers): {t_pool:6.2f} s")
    print(f"speed-up: {t_inline / t_pool:.2f}x")


if __name__ == "__main__":
    main()
