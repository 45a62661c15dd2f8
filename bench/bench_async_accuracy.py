"""Asynchronous training: held-out accuracy of the bounded_staleness schedule's k = 1 vs the
synchronous loop (k = 0 equals it bit for bit, a test), after the same number of steps.

Each arm is the default job (SmolLM2-135M-Instruct, its 25 steps, its held-out evaluation of
180 problems, greedy) under ``--seeds`` training seeds, run as ``verirl train`` processes;
``--parallel`` of them at a time, ``--threads`` torch threads in total split between them
(the k = 1 arm splits its share again, learner and producer). This measures *where training
ends*, not speed (``bench/bench_async.py`` measures steps per hour): a run's accuracy does not
depend on how fast its cores are, only on its seed and k.

Prints each run's accuracy before and after, each arm's mean and spread over seeds, the
difference of the arms' means, and the noise it is compared with: the standard error of a
difference of two arms' means, from the binomial variance of 180 held-out problems and the
seed-to-seed spread (the larger of the two).

Run: ``python bench/bench_async_accuracy.py`` (``--seeds 1,2 --parallel 1 --threads 2``);
one full pass is 4 default jobs (≈ 1 h on 2 idle cores). ``--given sync:0=0.406`` counts a
run measured elsewhere (the README's ``./run.sh train`` is the synchronous arm at seed 0).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


STALE = "run.schedule.name=bounded_staleness"


def run_arm(k: int | None, seed: int, threads: int, root: Path, extra: list[str]) -> dict:
    """One default job: its held-out accuracy before/after and its wall time."""
    tag = f"{'sync' if k is None else f'k{k}'}-seed{seed}"
    overrides = [
        f"run.seed={seed}",
        f"run.threads={threads}",
        f"run.dir={root}",
        f"run.name={tag}",
        "run.save_every=0",
        "eval.unseen_prompt=false",  # the trained prompt's accuracy is the comparison
        *([] if k is None else [STALE, f"run.schedule.params.max_staleness={k}"]),
        *extra,
    ]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), PYTHONPATH=str(ROOT / "src"))
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "verirl.cli", "train", *overrides],
        env=env,
        capture_output=True,
        text=True,
        timeout=4 * 3600,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{tag} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    rows = [json.loads(line) for line in (root / tag / "metrics.jsonl").read_text().splitlines()]
    merged: dict[str, float] = {}
    for row in rows:
        merged.update(row)
    result = {
        "tag": tag,
        "k": k,
        "seed": seed,
        "before": merged["eval_before/accuracy"],
        "after": merged["eval_after/accuracy"],
        "steps": max(int(r["step"]) for r in rows),
        "wall_min": wall / 60,
        "staleness_max": max((r.get("async/staleness_max", 0.0) for r in rows), default=0.0),
        "dropped": merged.get("async/dropped", 0.0),  # cumulative: the last value
    }
    print(
        f"  {tag}: accuracy {result['before']:.3f} -> {result['after']:.3f} after "
        f"{result['steps']} steps, {result['wall_min']:.1f} min, staleness max "
        f"{result['staleness_max']:.0f}, dropped {result['dropped']:.0f}",
        flush=True,
    )
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="1,2", help="comma-separated training seeds per arm")
    ap.add_argument("--parallel", type=int, default=1, help="runs at a time")
    ap.add_argument("--threads", type=int, default=2, help="torch threads in total")
    ap.add_argument("--problems", type=int, default=180, help="held-out problems (the job's)")
    ap.add_argument(
        "--given",
        nargs="*",
        default=[],
        metavar="ARM:SEED=ACC",
        help="a run measured elsewhere (e.g. the README's './run.sh train' is sync:0), "
        "counted instead of run: sync:0=0.406",
    )
    ap.add_argument("overrides", nargs="*", help="key=value for every run (e.g. run.steps=5)")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s]
    threads = max(1, args.threads // args.parallel)
    given: list[dict] = []
    for spec in args.given:
        arm, _, rest = spec.partition(":")
        seed, _, acc = rest.partition("=")
        if arm not in ("sync", "k1") or not seed.isdigit() or not acc:
            ap.error(f"--given {spec!r}: expected sync:SEED=ACC or k1:SEED=ACC")
        k = None if arm == "sync" else 1
        given.append({"k": k, "seed": int(seed), "after": float(acc)})
        print(f"  {arm}-seed{seed}: accuracy after {float(acc):.3f} (given, not run here)")
    # arms interleaved: a drifting machine load reaches both alike
    plan = [
        (k, s)
        for s in seeds
        for k in (None, 1)
        if not any(g["k"] == k and g["seed"] == s for g in given)
    ]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.parallel) as pool:
        root = Path(tmp)
        results = given + list(
            pool.map(lambda ks: run_arm(ks[0], ks[1], threads, root, args.overrides), plan)
        )
    arms = {
        "k=0 (sync)": [r["after"] for r in results if r["k"] is None],
        "k=1": [r["after"] for r in results if r["k"] == 1],
    }
    for name, acc in arms.items():
        spread = f"[{min(acc):.3f}-{max(acc):.3f}]"
        print(f"{name:11s} after: mean {statistics.mean(acc):.3f} {spread} over seeds {seeds}")
    (m0, a0), (m1, a1) = ((statistics.mean(a), a) for a in arms.values())
    p = (m0 + m1) / 2
    binomial = math.sqrt(p * (1 - p) / args.problems)  # one run's standard error
    seed_sd = statistics.stdev(a0 + a1) if len(a0 + a1) > 1 else 0.0
    per_run = max(binomial, seed_sd)
    se_diff = per_run * math.sqrt(1 / len(a0) + 1 / len(a1))
    verdict = "within noise" if abs(m1 - m0) <= 2 * se_diff else "OUTSIDE noise"
    print(
        f"k=1 - k=0: {m1 - m0:+.3f} (standard error of the difference {se_diff:.3f}: "
        f"per run max(binomial {binomial:.3f}, seed spread {seed_sd:.3f})) -> {verdict} (2 SE)"
    )
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
