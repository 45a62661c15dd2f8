"""Asynchronous training: steps per hour of the bounded_staleness schedule's k = 1 vs k = 0.

Workloads (each arm a fresh run; arms interleaved within a repeat, their order alternating
between repeats, so drifting machine load hits both alike):

1. ``latency``: a latency-bound verifier — a tiny random model, and a reward source that
   answers after ``--latency`` seconds per batch (``bench/plugin_slow_verifier.py``, standing
   in for a proof checker or sandbox in another process). With k = 1 the producer's
   generation + verification overlaps the learner's update. Target: k1/k0 ≥ 1.25.
2. ``default``: the default job's config (SmolLM2-135M, ``--default-steps`` steps;
   skipped with ``--default-steps 0``): generation and training both use this machine's
   cores, so overlap mostly moves CPU time around (expect ≈ 1×, or below on 2 cores).

k = 0 runs the same producer process in lock-step (it equals the synchronous loop bit for
bit), so the ratio isolates the overlap. Both arms get ``--threads`` torch threads in total
(k ≥ 0 splits them between learner and producer). Steps per hour come from the loop's own
per-step times (``time/step_s``) of steps 2 onward: step 1 carries the producer process's
start-up (imports, engine build: seconds), a fixed cost that a real run pays once. Prints
each arm's median and spread over ``--repeats`` and the ratio of medians, plus the
machine's load average (a shared machine moves both).

Run: ``python bench/bench_async.py`` (``--repeats 2 --steps 6 --latency 0.5``); one
workload: ``--workloads default`` (``--default-steps 3``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the bench plugin, imported by name in both processes
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
)

from verirl.config import load_config  # noqa: E402
from verirl.models import save_tiny_model_dir  # noqa: E402
from verirl.train.metrics import read_metrics  # noqa: E402
from verirl.trainer import Trainer  # noqa: E402


def workload_overrides(name: str, args: argparse.Namespace, model_dir: Path) -> list[str]:
    common = [
        f"run.threads={args.threads}",
        "run.save_every=0",
        "eval.before_and_after=false",
        "run.log_samples=0",
    ]
    if name == "latency":
        return [
            *common,
            f"model.name={model_dir}",
            "run.plugins=[bench.plugin_slow_verifier]",
            "reward.name=bench_slow_verifier",
            f"reward.params.latency_s={args.latency}",
            f"run.steps={args.steps}",
            "rollout.prompts_per_step=4",
            "rollout.group_size=4",
            "rollout.max_new_tokens=16",
            "optim.epochs=2",
            "optim.lr=1e-3",
        ]
    return [*common, f"run.steps={args.default_steps}"]


def one_run(overrides: list[str], k: int, root: Path, tag: str) -> float:
    cfg = load_config(
        None,
        [
            *overrides,
            "run.schedule.name=bounded_staleness",
            f"run.schedule.params.max_staleness={k}",
            f"run.dir={root}",
            f"run.name={tag}",
        ],
    )
    with Trainer(cfg, root / tag) as t:
        t.fit()
    # steps 2.. back to back (step 1 includes the producer's start-up and warm-up)
    rows = read_metrics(root / tag)[1:]
    step_s = [r["time/step_s"] for r in rows]
    print(
        f"  {tag}: median step {statistics.median(step_s):.2f} s, waiting for rollouts "
        f"{statistics.median(r['time/rollout_s'] for r in rows):.2f} s, update + sync "
        f"{statistics.median(r['time/train_s'] for r in rows):.2f} s, staleness max "
        f"{max(r['async/staleness_max'] for r in rows):.0f}",
        flush=True,
    )
    return len(step_s) / sum(step_s) * 3600.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--default-steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--workloads",
        default="latency,default",
        help="comma-separated subset of: latency, default",
    )
    args = ap.parse_args()
    workloads = [w for w in args.workloads.split(",") if w]
    if unknown := set(workloads) - {"latency", "default"}:
        ap.error(f"unknown workload(s) {sorted(unknown)}: use latency, default")
    if not args.default_steps and "default" in workloads:
        workloads.remove("default")
    rates: dict[tuple[str, int], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model_dir = save_tiny_model_dir(root / "tiny", hidden_size=64, layers=2)
        for rep in range(args.repeats):
            for name in workloads:
                overrides = workload_overrides(name, args, model_dir)
                for k in [0, 1] if rep % 2 == 0 else [1, 0]:
                    rate = one_run(overrides, k, root, f"{name}-k{k}-r{rep}")
                    rates.setdefault((name, k), []).append(rate)
                    print(f"repeat {rep} {name:8s} k={k}: {rate:9.1f} steps/h", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (shared machine)")
    for name in workloads:
        k0, k1 = rates[(name, 0)], rates[(name, 1)]
        m0, m1 = statistics.median(k0), statistics.median(k1)
        print(
            f"{name:8s} k=0 {m0:9.1f} steps/h [{min(k0):.1f}-{max(k0):.1f}]   "
            f"k=1 {m1:9.1f} steps/h [{min(k1):.1f}-{max(k1):.1f}]   ratio k1/k0 {m1 / m0:.2f}x"
            + ("   (target >= 1.25x)" if name == "latency" else "")
        )


if __name__ == "__main__":
    main()
