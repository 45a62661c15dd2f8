"""Asynchronous training: steps per hour of the bounded_staleness schedule's arms against a
baseline arm measured in the same run.

Arms (``--arms``, the first is the baseline of every ratio): ``sync`` (the synchronous loop,
all threads to whichever side runs), ``k0`` (the producer process in lock-step: it equals the
synchronous loop bit for bit, so ``k1`` against it isolates the overlap), ``k1``, ``k2`` (the
producer runs 1 or 2 versions ahead, learner and producer on disjoint cores:
``run.schedule.params.pin_cores``), ``k1-shared`` (k = 1, both processes free to run on every core).

Workloads (each arm a fresh run; arms interleaved within a repeat, their order reversed
on every other repeat, so drifting machine load hits all alike):

1. ``latency``: a latency-bound verifier — a tiny random model, and a reward source that
   answers after ``--latency`` seconds per batch (``bench/plugin_slow_verifier.py``, standing
   in for a proof checker or sandbox in another process). With k = 1 the producer's
   generation + verification overlaps the learner's update. Target: k1/k0 ≥ 1.25.
2. ``default``: the default job's config (SmolLM2-135M, ``--default-steps`` steps;
   skipped with ``--default-steps 0``): generation and training both use this machine's
   cores, so overlap mostly moves CPU time around.

Every arm gets ``--threads`` torch threads in total (an asynchronous arm splits them between
learner and producer). Steps per hour come from the loop's own per-step times
(``time/step_s``) of steps 2 onward: step 1 carries the producer process's start-up
(imports, engine build: seconds), a fixed cost that a real run pays once. Prints each arm's
median and spread over ``--repeats`` and the ratio of medians to the baseline, plus the
machine's load average.

Run: ``python bench/bench_async.py`` (``--repeats 2 --steps 6 --latency 0.5``); the default
job against the synchronous loop: ``--workloads default --arms sync,k1 --default-steps 6``.
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

from verirl.assembly import build  # noqa: E402
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


BOUNDED = "run.schedule.name=bounded_staleness"
ARMS: dict[str, list[str]] = {
    "sync": [],
    "k0": [BOUNDED, "run.schedule.params.max_staleness=0"],
    "k1": [BOUNDED, "run.schedule.params.max_staleness=1"],
    "k2": [BOUNDED, "run.schedule.params.max_staleness=2"],
    "k1-shared": [
        BOUNDED,
        "run.schedule.params.max_staleness=1",
        "run.schedule.params.pin_cores=false",
    ],
}


def one_run(overrides: list[str], arm: str, root: Path, tag: str) -> float:
    cfg = load_config(None, [*overrides, *ARMS[arm], f"run.dir={root}", f"run.name={tag}"])
    with Trainer(build(cfg), root / tag) as t:
        t.fit()
    # steps 2.. back to back (step 1 includes the producer's start-up and warm-up)
    rows = read_metrics(root / tag)[1:]
    step_s = [r["time/step_s"] for r in rows]
    stale = [r["async/staleness_max"] for r in rows if "async/staleness_max" in r]
    print(
        f"  {tag}: median step {statistics.median(step_s):.2f} s, waiting for rollouts "
        f"{statistics.median(r['time/rollout_s'] for r in rows):.2f} s, update + sync "
        f"{statistics.median(r['time/train_s'] for r in rows):.2f} s, staleness max "
        + (f"{max(stale):.0f}" if stale else "- (synchronous)"),
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
    ap.add_argument(
        "--arms",
        default="k0,k1",
        help=f"comma-separated arms, the first the baseline: {', '.join(ARMS)}",
    )
    args = ap.parse_args()
    workloads = [w for w in args.workloads.split(",") if w]
    if unknown := set(workloads) - {"latency", "default"}:
        ap.error(f"unknown workload(s) {sorted(unknown)}: use latency, default")
    arms = [a for a in args.arms.split(",") if a]
    if set(arms) - set(ARMS) or len(arms) < 2:
        ap.error(f"--arms: two or more of {', '.join(ARMS)}, got {args.arms!r}")
    if not args.default_steps and "default" in workloads:
        workloads.remove("default")
    rates: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model_dir = save_tiny_model_dir(root / "tiny", hidden_size=64, layers=2)
        for rep in range(args.repeats):
            for name in workloads:
                overrides = workload_overrides(name, args, model_dir)
                for arm in arms if rep % 2 == 0 else arms[::-1]:
                    rate = one_run(overrides, arm, root, f"{name}-{arm}-r{rep}")
                    rates.setdefault((name, arm), []).append(rate)
                    print(f"repeat {rep} {name:8s} {arm}: {rate:9.1f} steps/h", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    base = arms[0]
    for name in workloads:
        medians = {arm: statistics.median(rates[(name, arm)]) for arm in arms}
        for arm in arms:
            r = rates[(name, arm)]
            print(f"{name:8s} {arm:9s} {medians[arm]:9.1f} steps/h [{min(r):.1f}-{max(r):.1f}]")
        for arm in arms[1:]:
            per_repeat = [
                a / b for a, b in zip(rates[(name, arm)], rates[(name, base)], strict=True)
            ]
            print(
                f"{name:8s} ratio {arm}/{base} {medians[arm] / medians[base]:.2f}x "
                f"(per repeat {min(per_repeat):.2f}-{max(per_repeat):.2f}x)"
                + ("   (target >= 1.25x)" if name == "latency" and arm == "k1" else "")
            )


if __name__ == "__main__":
    main()
