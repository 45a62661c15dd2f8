"""The Ray backend, in one run on a private local Ray:

1. Coq proof checks per second through the ``ray`` executor with 1 vs 2 verifier actors
   (each actor owns a one-worker ``coqidetop`` pool; proofs are reference proofs of the
   bundled theorems and of generated implication chains, half of them corrupted; see
   ``--workload``). Target: 2 actors ≥ 1.7× one actor.
   The two pools' timed passes alternate, as do the two backends' steps below.
2. The default job's training step (SmolLM2-135M, fp32/auto, 8 prompts × 6 samples) on the
   local placement vs the ``ray`` placement (1 verifier actor, 1 ``hf`` replica, 1 learner rank;
   same seeds, so both sample the same tokens). Target: Ray path ≤ 10% slower. Step 1 of each
   is a warm-up and is reported but not compared.

Run: ``python bench/bench_ray.py`` (``--steps 3 --proofs 64``; ``--skip-step`` for the Coq
part alone; ``--model DIR`` for another model; ``--smoke --proofs 4 --repeats 1 --steps 2``, the
test suite's smoke run: a tiny random model on 2 prompts × 2 samples × 8 tokens). Needs ray
(``pip install 'verirl[ray]'``) and Coq (``apt-get install coq``). The machine's load average
is printed: on a shared machine both ratios move with it.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from verirl.config import load_config
from verirl.envs import get_env
from verirl.integrations.ray.settings import RayPoolParams
from verirl.provers.settings import ProversConfig
from verirl.types import Problem
from verirl.verification.batch import verify_proof_one
from verirl.verification.executors import EXECUTORS

# (environment, difficulties) per workload: the bundled theorems ("bundled": cheap once
# loaded, so a pass is dominated by the checker's messages and Ray's latency), generated
# implication chains ("chains": Coq does real work that grows with the chain, 20-50 ms a
# check at these levels here) and both interleaved ("mixed", the default: a worker switches
# statements between checks, as in a training batch over several environments)
BUNDLED = ("coq_proofs", (0, 1, 2, 3))
CHAINS = ("coq_implication_chains", (4, 8, 12))
WORKLOADS = {"bundled": (BUNDLED,), "chains": (CHAINS,), "mixed": (BUNDLED, CHAINS)}


def proof_workload(n: int, seed: int = 0, workload: str = "mixed") -> list[tuple[Problem, str]]:
    """``n`` proofs, alternating over the workload's environments; every other pair of
    proofs corrupted."""
    rng = random.Random(seed)
    kinds = WORKLOADS[workload]
    items = []
    for i in range(n):
        name, levels = kinds[i % len(kinds)]
        env = get_env(name)
        problem = env.generate(levels[(i // len(kinds)) % len(levels)], seed + i)
        text = (
            problem.answer
            if (i // len(kinds)) % 2 == 0
            else env.corrupt(problem, problem.answer, rng)
        )
        items.append((problem, text))
    return items


def coq_rates(items: list[tuple[Problem, str]], repeats: int) -> tuple[float, float, int]:
    """Median proofs/s of a 1-actor and a 2-actor pool (each actor a one-worker coqidetop
    pool), their timed passes interleaved so that a change in the machine's load hits both."""
    provers = ProversConfig.model_validate({"coq": {"workers": 1}})
    pools = [EXECUTORS.get("ray").build(RayPoolParams(actors=k, num_cpus=0.5)) for k in (1, 2)]
    try:
        for ex in pools:  # warm up: start every actor's Coq pool
            ex.map_with_provers(verify_proof_one, items[:8], provers, 30.0)
        times: list[list[float]] = [[], []]
        passed = 0
        for _ in range(repeats):
            for k, ex in enumerate(pools):
                t0 = time.perf_counter()
                out = ex.map_with_provers(verify_proof_one, items, provers, 30.0)
                times[k].append(time.perf_counter() - t0)
                passed = sum(1 for o in out if o.ok and o.value is not None and o.value.correct)
        one, two = (len(items) / statistics.median(t) for t in times)
        return one, two, passed
    finally:
        for ex in pools:
            ex.close()


# --smoke: the training step at tiny sizes (the full run keeps the default job's workload)
RAY_PARAMS = [
    "run.placement.params.verifiers.actors=1",
    "run.placement.params.verifiers.num_cpus=0.5",
    "run.placement.params.rollout.num_cpus=0.75",
    "run.placement.params.learner.num_cpus=0.75",
]
SMOKE_WORKLOAD = ["rollout.prompts_per_step=2", "rollout.group_size=2", "rollout.max_new_tokens=8"]


def step_times(
    model: str, steps: int, threads: int, extra: tuple[str, ...] = ()
) -> tuple[list[float], list[float]]:
    """``time/step_s`` of the local and the Ray backend, steps interleaved (local 1, ray 1,
    local 2, ...) so that a change in the machine's load hits both."""
    from verirl.assembly import build
    from verirl.trainer import Trainer

    with tempfile.TemporaryDirectory() as tmp:
        trainers = []
        for backend in ("local", "ray"):
            overrides = [
                f"model.name={model}",
                f"run.steps={steps}",
                "run.save_every=0",
                f"run.threads={threads}",
                "eval.before_and_after=false",
                f"run.placement.name={backend}",
                *(RAY_PARAMS if backend == "ray" else []),
                # every row trained on both sides: which rows have signal differs between the arms
                "optim.skip_zero_advantage_rows=false",
                *extra,
            ]
            trainers.append(Trainer(build(load_config(None, overrides)), Path(tmp) / backend))
        try:
            times: list[list[float]] = [[], []]
            for _ in range(steps):
                for k, trainer in enumerate(trainers):
                    times[k].append(trainer.train_step()["time/step_s"])
            return times[0], times[1]
        finally:
            for trainer in trainers:
                trainer.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--proofs", type=int, default=64, help="proofs per timed pass")
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="mixed")
    ap.add_argument("--repeats", type=int, default=3, help="timed passes (median kept)")
    ap.add_argument("--steps", type=int, default=3, help="training steps per backend")
    ap.add_argument("--model", default="smollm2-135m-instruct", help="model.name")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (run.threads)")
    ap.add_argument("--skip-step", action="store_true", help="only the Coq part")
    ap.add_argument("--skip-coq", action="store_true", help="only the training-step part")
    ap.add_argument(
        "--smoke", action="store_true", help="a tiny random model, 2 prompts x 2 samples x 8 tokens"
    )
    args = ap.parse_args()

    import ray

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    t0 = time.perf_counter()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    print(f"ray.init: {time.perf_counter() - t0:.1f} s")
    try:
        if not args.skip_coq:
            items = proof_workload(args.proofs, workload=args.workload)
            one, two, passed = coq_rates(items, args.repeats)
            print(
                f"coq proofs ({args.workload}): {len(items)} per pass ({passed} pass), "
                f"{args.repeats} timed passes"
            )
            print(f"1 verifier actor : {one:7.1f} proofs/s")
            print(f"2 verifier actors: {two:7.1f} proofs/s")
            print(f"ratio 2/1        : {two / one:7.2f}x  (target >= 1.7x)")
            print(f"load average: {os.getloadavg()[0]:.2f}")
        if not args.skip_step:
            with tempfile.TemporaryDirectory() as tiny:
                model, extra = args.model, ()
                if args.smoke:
                    from verirl.models import save_tiny_model_dir

                    model, extra = str(save_tiny_model_dir(Path(tiny))), tuple(SMOKE_WORKLOAD)
                local, on_ray = step_times(model, args.steps, args.threads, extra)
            fmt = ", ".join
            print(f"local step s: {fmt(f'{t:.2f}' for t in local)}")
            print(f"ray   step s: {fmt(f'{t:.2f}' for t in on_ray)}")
            if args.steps > 1:
                lo, ra = statistics.mean(local[1:]), statistics.mean(on_ray[1:])
                print(
                    f"steps 2..{args.steps}: local {lo:.2f} s, ray {ra:.2f} s, "
                    f"overhead {100 * (ra / lo - 1):+.1f}%  (target <= +10%)"
                )
            print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
