"""fp32 against bf16 autocast on the default job's training step, on this CPU, in one run.

``model.dtype=auto`` has to pick a precision for the CPU. A lone large linear layer is several
times faster under bf16 autocast on a CPU with AMX or AVX512-BF16, but the default job's step
is a small-batch decode loop (one token at a time for 48 prompts) plus one update, where
autocast's casts and the small matrices may eat the gain. This script measures what matters:
the default job's own steps.

Each arm (``fp32``, ``bf16``) runs in its own subprocess (this script with ``--side``), so
allocator and thread state never leak between them; with ``--repeats`` > 1 the order
alternates (fp32 first, then bf16 first, ...). An arm builds the default job's ``Trainer``
(``verirl train``'s config with ``model.dtype`` set and the evaluation off), runs ``--warmup``
untimed steps, then ``--steps`` timed ones, and reports the rollout time per generated token,
the update time per trained token and the step time. Both arms use the same seed, so they draw
the same problems; their samples differ once the numerics do, which is why the per-token rates
are the comparison and the step time is shown beside them.

Run alone on an idle machine: ``python bench/bench_precision.py`` (2 timed steps per arm, 2
repeats). ``--model tiny`` runs the default job's workload on a tiny random model; ``--smoke``
(the test suite's smoke run, seconds) a tiny random model on 2 prompts × 2 samples × 8 tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# --smoke: the default job's step at tiny sizes (the full run keeps the default job's workload)
SMOKE_WORKLOAD = ["rollout.prompts_per_step=2", "rollout.group_size=2", "rollout.max_new_tokens=8"]


def run_side(
    dtype: str, steps: int, warmup: int, model: str, threads: int, smoke: bool = False
) -> dict[str, float]:
    import torch

    from verirl.assembly import build
    from verirl.config import load_config
    from verirl.trainer import Trainer

    torch.set_num_threads(threads)
    overrides = [
        f"model.dtype={dtype}",
        f"run.steps={warmup + steps}",
        "eval.before_and_after=false",
        "run.save_every=0",
        *(SMOKE_WORKLOAD if smoke else []),
        # every row trained on both sides: which rows have signal differs between the arms
        "optim.skip_zero_advantage_rows=false",
    ]
    if model != "default":
        overrides.append(f"model.name={model}")
    cfg = load_config(None, overrides)
    with tempfile.TemporaryDirectory() as tmp, Trainer(build(cfg), Path(tmp)) as trainer:
        reason = trainer.parts.placement.reason
        for _ in range(warmup):
            trainer.train_step()
        rollout_s = train_s = 0.0
        generated = trained = 0.0
        for _ in range(steps):
            m = trainer.train_step()
            rollout_s += m["time/rollout_s"]
            train_s += m["time/train_s"]
            generated += m["throughput/generated_tokens"]
            trained += m["throughput/trained_tokens"]
    return {
        "rollout_ms_per_generated_token": 1000 * rollout_s / max(generated, 1.0),
        "train_ms_per_trained_token": 1000 * train_s / max(trained, 1.0),
        "step_s": (rollout_s + train_s) / steps,
        "generated_tokens_per_step": generated / steps,
        "reason": reason,  # type: ignore[dict-item]
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--model", default="default", help="'default' (SmolLM2), 'tiny', or a model directory"
    )
    ap.add_argument(
        "--smoke", action="store_true", help="a tiny random model, 2 prompts x 2 samples x 8 tokens"
    )
    ap.add_argument("--side", choices=["fp32", "bf16"], help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.side:
        result = run_side(
            args.side, args.steps, args.warmup, args.model, args.threads, smoke=args.smoke
        )
        print(json.dumps(result))
        return

    model = "tiny" if args.smoke else args.model
    tmp_model = None
    if model == "tiny":
        tmp_model = tempfile.TemporaryDirectory()
        model = _tiny_model(Path(tmp_model.name))
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    results: dict[str, list[dict[str, float]]] = {"fp32": [], "bf16": []}
    for r in range(args.repeats):
        order = ["fp32", "bf16"] if r % 2 == 0 else ["bf16", "fp32"]
        for side in order:
            t0 = time.perf_counter()
            out = subprocess.run(
                [sys.executable, __file__, "--side", side, "--steps", str(args.steps),
                 "--warmup", str(args.warmup), "--model", model, "--threads", str(args.threads),
                 *(["--smoke"] if args.smoke else [])],
                env=env, check=True, capture_output=True, text=True,
            )  # fmt: skip
            res = json.loads(out.stdout.strip().splitlines()[-1])
            results[side].append(res)
            print(
                f"repeat {r} {side}: {res['rollout_ms_per_generated_token']:.1f} ms/generated "
                f"token, {res['train_ms_per_trained_token']:.2f} ms/trained token, "
                f"{res['step_s']:.1f} s/step ({time.perf_counter() - t0:.0f} s with start-up)"
            )
    print(f"placement: {results['bf16'][0]['reason']}")
    for key in ("rollout_ms_per_generated_token", "train_ms_per_trained_token", "step_s"):
        f = statistics.median(x[key] for x in results["fp32"])
        b = statistics.median(x[key] for x in results["bf16"])
        print(f"{key}: fp32 {f:.2f}, bf16 {b:.2f}, ratio bf16/fp32 = {b / f:.2f}")
    if tmp_model is not None:
        tmp_model.cleanup()


def _tiny_model(root: Path) -> str:
    from verirl.models import save_tiny_model_dir

    return str(save_tiny_model_dir(root))


if __name__ == "__main__":
    main()
