"""Rollout sampling speed: verirl's engines against transformers ``generate`` and the floor.

Two workloads, each arm timed in this process on the same model, the arms' order rotated in
every repeat, tokens/s and the ratio to the ``hf`` engine (fp32, the learner's own module)
of the same repeat printed as median [min–max] over ``--repeats``:

``--workload fixed`` (default): a random model of SmolLM2-135M's shape (so no response ends
early: every one runs to the limit) at ``--sizes`` (default 48 × 64, 8 × 512, 2 × 2,048:
sequences × new tokens, 96-token random prompts, temperature 1), arms

- ``hf``: the ``hf`` engine over the fp32 module (the baseline);
- ``hf-w8a16``, ``hf-bf16``, ``hf-int8``: the same engine sampling from a low-precision copy
  (``rollout.engine.params.precision``);
- ``generate``: transformers ``model.generate`` (sampling, dynamic cache, EOS off);
- ``floor``: the bare-forward floor — one forward of a ``[B, 1]`` batch with no cache at all,
  B / its median time: what a decode step costs before attention over the context;
- ``vllm``: vLLM's CPU build in a subprocess of its own (``--vllm``; where it is installed),
  enforce-eager, fp32, KV cache 2 GiB.

``--workload mixed``: responses of mixed lengths, where continuous batching matters — the
default model (SmolLM2-135M-Instruct) on the default job's arithmetic prompts (``--model
tiny`` for the smoke test), ``--prompts`` × ``--group-size`` sequences in batches of
``--batch`` at up to ``--max-new-tokens``, arms ``chunked`` (the prompts in chunks of
``batch // n`` that each wait for their longest sequence) and ``continuous`` (finished slots
refilled from the remaining prompts); ratio = continuous / chunked.

``--workload stream``: rewards while generating — the mixed workload's prompts collected by
the ``single_turn`` collector (``--batch`` rows, continuous batching) and scored by the
environments' verifiers made latency-bound (each call sleeps ``--latency`` s first, as a proof
checker, a sandbox or a judge in another process would keep it waiting) on a ``threads``
executor of ``--workers``: arms ``after`` (verify-after-generate) and ``streamed``
(``verification.stream``: each response verified as it finishes); seconds per collection
and ratio = after / streamed (> 1: streaming is faster), and whether the verdicts were
identical (the same seed samples the same tokens in both arms).

``--workload mismatch``: how far each low-precision copy's log-probs are from the fp32
policy's — the default model on the mixed workload's prompts (one sample each from the fp32
policy, temperature 1), teacher-forced through fp32 and each copy: mean and max |Δ log-prob|
of the sampled tokens and the exact KL(π_copy ‖ π_fp32) over the vocabulary per token.

``torch.set_num_threads(--threads)``. Run under ``cpu-exclusive``; smoke test:
``python bench/bench_rollout.py --model tiny --sizes 4x8 --repeats 1``.
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
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

FIXED_ARMS = ("hf", "hf-w8a16", "hf-bf16", "hf-int8", "generate", "floor")
PROMPT_TOKENS = 96


def build_model(kind: str) -> tuple[Any, Any]:
    """(model, tokenizer): SmolLM2's shape with random weights, or a tiny random model."""
    from transformers import AutoConfig, AutoModelForCausalLM

    from verirl.models import default_model_dir, load_tokenizer, tiny_model

    tok = load_tokenizer("smollm2-135m-instruct")
    if kind == "tiny":
        model = tiny_model(len(tok), seed=0)
    elif kind == "smollm2-random":
        config = AutoConfig.from_pretrained(default_model_dir())
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    else:
        model = AutoModelForCausalLM.from_pretrained(default_model_dir(), dtype=torch.float32)
    model.generation_config.eos_token_id = tok.eos_token_id
    return model.eval(), tok


def random_prompts(rows: int, vocab: int) -> list[list[int]]:
    g = torch.Generator().manual_seed(1)
    return [
        torch.randint(100, vocab - 1, (PROMPT_TOKENS,), generator=g).tolist() for _ in range(rows)
    ]


# ---- the arms --------------------------------------------------------------------------------
LENGTHS: list[int] = []
"""The response lengths of the last :func:`time_engine` call."""


def time_engine(engine: Any, prompts: list[list[int]], tokens: int, n: int = 1) -> float:
    from verirl.types import SamplingParams

    sp = SamplingParams(n=n, temperature=1.0, max_new_tokens=tokens, seed=0)
    start = time.perf_counter()
    groups = engine.generate(prompts, sp)
    seconds = time.perf_counter() - start
    LENGTHS[:] = [len(g.token_ids) for group in groups for g in group]
    return sum(LENGTHS) / seconds


def time_generate(model: Any, prompts: list[list[int]], tokens: int) -> float:
    ids = torch.tensor(prompts)
    start = time.perf_counter()
    with torch.no_grad():
        out = model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            do_sample=True,
            temperature=1.0,
            top_k=0,
            max_new_tokens=tokens,
            min_new_tokens=tokens,
            pad_token_id=0,
        )
    seconds = time.perf_counter() - start
    return (out.shape[1] - ids.shape[1]) * ids.shape[0] / seconds


def time_floor(model: Any, rows: int, repeats: int = 7) -> float:
    ids = torch.randint(100, 1000, (rows, 1))
    times = []
    with torch.no_grad():
        model(input_ids=ids)
        for _ in range(repeats):
            start = time.perf_counter()
            model(input_ids=ids, use_cache=False)
            times.append(time.perf_counter() - start)
    return rows / statistics.median(times)


def time_vllm(rows: int, tokens: int, model_kind: str) -> float:
    """vLLM's CPU build on the same random model, in a subprocess of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rate.json"
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "2", "VLLM_CPU_NUM_OF_RESERVED_CPU": "0"}
        cmd = [sys.executable, __file__, "--vllm-child", f"{rows}x{tokens}", "--model", model_kind]
        try:
            res = subprocess.run(
                [*cmd, "--out", str(out)], env=env, capture_output=True, text=True, timeout=1800
            )
        except subprocess.TimeoutExpired:
            print("  vllm: no answer in 30 min", flush=True)
            return float("nan")
        if res.returncode != 0 or not out.exists():
            print(f"  vllm failed:\n{res.stderr[-1500:]}", flush=True)
            return float("nan")
        return float(json.loads(out.read_text())["tok_s"])


def vllm_child(size: str, model_kind: str, out: str) -> None:
    from verirl.rollout.vllm_engine import VLLMEngine, VLLMParams

    rows, tokens = (int(x) for x in size.split("x"))
    model, tok = build_model(model_kind)
    engine = VLLMEngine(model, tok, VLLMParams(kv_cache_gib=2.0, dtype="float32"))
    prompts = random_prompts(rows, len(tok))
    time_engine(engine, prompts[:2], 4)  # warm-up
    Path(out).write_text(json.dumps({"tok_s": time_engine(engine, prompts, tokens)}))


# ---- the workloads ---------------------------------------------------------------------------
def fixed(args: argparse.Namespace) -> dict[str, Any]:
    from verirl.rollout.hf import HFEngine

    model, tok = build_model("tiny" if args.model == "tiny" else "smollm2-random")
    arms = [a for a in FIXED_ARMS if a in (args.arms or FIXED_ARMS)]
    arms = ["hf", *(a for a in arms if a != "hf")] + (["vllm"] if args.vllm else [])
    results: dict[str, Any] = {}
    for size in args.sizes:
        rows, tokens = (int(x) for x in size.split("x"))
        prompts = random_prompts(rows, len(tok))
        precision = {"hf": "policy", "hf-int8": "int8", "hf-bf16": "bf16", "hf-w8a16": "w8a16"}
        engines = {
            arm: HFEngine(model, tok, max_batch_sequences=rows, precision=p)  # type: ignore[arg-type]
            for arm, p in precision.items()
            if arm in arms
        }

        def run(
            arm: str,
            engines: dict[str, Any] = engines,
            prompts: list[list[int]] = prompts,
            rows: int = rows,
            tokens: int = tokens,
        ) -> float:
            if arm in engines:
                return time_engine(engines[arm], prompts, tokens)
            if arm == "generate":
                return time_generate(model, prompts, tokens)
            if arm == "floor":
                return time_floor(model, rows)
            return time_vllm(rows, tokens, args.model)

        for e in engines.values():  # warm-up (and the copies' first quantization)
            time_engine(e, prompts[:2], 2)
        rates: dict[str, list[float]] = {a: [] for a in arms}
        for r in range(args.repeats):
            order = arms[r % len(arms) :] + arms[: r % len(arms)]
            for arm in order:
                rates[arm].append(run(arm))
        results[size] = report(size, rates, "hf")
    return results


def mixed(args: argparse.Namespace) -> dict[str, Any]:
    from bench.bench_trl_throughput import build_problems, default_formatter

    from verirl.rollout.hf import HFEngine

    model, tok = build_model("tiny" if args.model == "tiny" else "smollm2")
    formatter = default_formatter(tok)
    prompts = [formatter.encode(p) for p in build_problems(args.prompts)]
    engines = {
        "chunked": HFEngine(model, tok, args.batch, continuous_batching=False),
        "continuous": HFEngine(model, tok, args.batch, continuous_batching=True),
    }
    rates: dict[str, list[float]] = {a: [] for a in engines}
    lengths: list[int] = []
    for r in range(args.repeats):
        for arm in list(engines) if r % 2 == 0 else list(engines)[::-1]:
            rates[arm].append(
                time_engine(engines[arm], prompts, args.max_new_tokens, args.group_size)
            )
            lengths = lengths or list(LENGTHS)
    q = statistics.quantiles(lengths, n=4) if len(lengths) > 1 else [lengths[0]] * 3
    print(
        f"response lengths: min {min(lengths)}, quartiles {q[0]:.0f}/{q[1]:.0f}/{q[2]:.0f}, "
        f"max {max(lengths)} (of {args.max_new_tokens})"
    )
    size = f"{args.prompts}x{args.group_size} batch {args.batch}"
    return {size: report(size, rates, "chunked")}


def stream(args: argparse.Namespace) -> dict[str, Any]:
    from bench.bench_trl_throughput import ENVS, build_problems, default_formatter

    from verirl.envs import get_env
    from verirl.registry import NoParams
    from verirl.rewards import RewardContext
    from verirl.rewards.env import EnvVerifierReward
    from verirl.rewards.stage import RewardStage
    from verirl.rollout.collect import COLLECTORS
    from verirl.rollout.hf import HFEngine
    from verirl.types import SamplingParams
    from verirl.verification.batch import BatchVerifier
    from verirl.verification.executors import PoolParams, ThreadExecutor

    for name in ENVS:  # latency-bound verifiers: each call waits before it verifies
        cls = type(get_env(name))
        real = cls.verify

        def slow(self: Any, problem: Any, text: str, real: Any = real) -> Any:
            time.sleep(args.latency)
            return real(self, problem, text)

        cls.verify = slow  # type: ignore[method-assign]
    model, tok = build_model("tiny" if args.model == "tiny" else "smollm2")
    formatter = default_formatter(tok)
    problems = build_problems(args.prompts)
    collector = COLLECTORS.get("single_turn").build({})
    sp = SamplingParams(n=args.group_size, max_new_tokens=args.max_new_tokens, seed=0)
    seconds: dict[str, list[float]] = {"after": [], "streamed": []}
    verdicts: dict[str, list[Any]] = {}
    with ThreadExecutor(PoolParams(workers=args.workers)) as pool:
        for r in range(args.repeats):
            for arm in ("after", "streamed") if r % 2 == 0 else ("streamed", "after"):
                stage = RewardStage(
                    EnvVerifierReward(NoParams()),
                    RewardContext(verifier=BatchVerifier(pool)),
                    stream=arm == "streamed",
                )
                engine = HFEngine(model, tok, args.batch)
                start = time.perf_counter()
                rollouts = collector.collect(problems, engine, formatter, sp, score=stage)
                seconds[arm].append(time.perf_counter() - start)
                verdicts.setdefault(arm, [x.verdict for x in rollouts])
                wait = stage.ctx.verifier.metrics()["verify_wait_seconds"]
                print(f"  {arm:<9} {seconds[arm][-1]:7.2f} s (waiting for verdicts {wait:.2f} s)")
    same = verdicts["after"] == verdicts["streamed"]
    ratios = [a / b for a, b in zip(seconds["after"], seconds["streamed"], strict=True)]
    print(
        f"\n{len(verdicts['after'])} responses, {args.latency:g} s per verification, "
        f"{args.workers} verifier threads; verdicts identical: {'yes' if same else 'NO'}"
    )
    for arm, values in seconds.items():
        print(
            f"  {arm:<9} {statistics.median(values):7.2f} s [{min(values):.2f}-{max(values):.2f}]"
        )
    print(
        f"speed-up after/streamed: {statistics.median(ratios):.2f} "
        f"[{min(ratios):.2f}-{max(ratios):.2f}]"
    )
    return {"seconds": seconds, "ratio": ratios, "identical": same}


def mismatch(args: argparse.Namespace) -> dict[str, Any]:
    """Each sampling copy's log-probs against the fp32 policy's on the fp32 policy's own
    samples: the mixed workload's prompts, one sample each at temperature 1, teacher-forced
    through both; per response token, |Δ log-prob| of the sampled token and the exact KL
    (π_copy ‖ π_fp32) over the vocabulary."""
    from bench.bench_trl_throughput import build_problems, default_formatter

    from verirl.rollout.hf import HFEngine
    from verirl.rollout.precision import COPY_PRECISIONS, SamplingCopy
    from verirl.types import SamplingParams

    model, tok = build_model("tiny" if args.model == "tiny" else "smollm2")
    formatter = default_formatter(tok)
    prompts = [formatter.encode(p) for p in build_problems(args.prompts)]
    sp = SamplingParams(n=1, temperature=1.0, max_new_tokens=args.max_new_tokens, seed=0)
    groups = HFEngine(model, tok, args.batch).generate(prompts, sp)
    copies = {p: SamplingCopy(model, p).module for p in COPY_PRECISIONS}
    diff: dict[str, list[torch.Tensor]] = {p: [] for p in copies}
    kl: dict[str, list[torch.Tensor]] = {p: [] for p in copies}
    with torch.no_grad():
        for prompt, (gen,) in zip(prompts, groups, strict=True):
            if not gen.token_ids:
                continue
            ids = torch.tensor([prompt + list(gen.token_ids)])
            at = slice(len(prompt) - 1, ids.shape[1] - 1)
            sampled = torch.tensor(gen.token_ids)[:, None]
            ref = torch.log_softmax(model(input_ids=ids).logits[0, at].float(), dim=-1)
            for p, copy in copies.items():
                lp = torch.log_softmax(copy(input_ids=ids).logits[0, at].float(), dim=-1)
                diff[p].append((lp.gather(1, sampled) - ref.gather(1, sampled)).abs().squeeze(1))
                kl[p].append((lp.exp() * (lp - ref)).sum(dim=-1))
    tokens = sum(len(g[0].token_ids) for g in groups)
    print(f"\nmismatch against fp32 over {tokens} sampled tokens of {len(prompts)} responses")
    out: dict[str, Any] = {}
    for p in copies:
        d, k = torch.cat(diff[p]), torch.cat(kl[p])
        out[p] = {"diff_mean": float(d.mean()), "diff_max": float(d.max()), "kl": float(k.mean())}
        print(
            f"  {p:<6} mean |Δ log-prob| {out[p]['diff_mean']:.4f}  max {out[p]['diff_max']:.3f}"
            f"  KL(copy ‖ fp32) {out[p]['kl']:.5f}"
        )
    return out


def report(size: str, rates: dict[str, list[float]], base: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    print(f"\n{size}: tok/s and ratio to {base}, median [min-max] over {len(rates[base])} runs")
    for arm, values in rates.items():
        ratios = [v / b for v, b in zip(values, rates[base], strict=True)]
        out[arm] = {"tok_s": values, "ratio": ratios}
        print(
            f"  {arm:<11} {statistics.median(values):8.1f} tok/s [{min(values):.1f}-"
            f"{max(values):.1f}]  ratio {statistics.median(ratios):.2f} "
            f"[{min(ratios):.2f}-{max(ratios):.2f}]"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--workload",
        nargs="+",
        choices=["fixed", "mixed", "stream", "mismatch"],
        default=["fixed"],
        help="one or more, run in turn in this process",
    )
    ap.add_argument("--model", choices=["smollm2", "tiny"], default="smollm2")
    ap.add_argument("--sizes", nargs="+", default=["48x64", "8x512", "2x2048"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--arms", nargs="+", choices=FIXED_ARMS, help="fixed: these arms (and hf)")
    ap.add_argument("--vllm", action="store_true", help="add the vLLM CPU arm (fixed)")
    ap.add_argument("--prompts", type=int, default=64, help="mixed: prompts")
    ap.add_argument("--group-size", type=int, default=4, help="mixed: samples per prompt")
    ap.add_argument("--batch", type=int, default=64, help="mixed: max_batch_sequences")
    ap.add_argument("--max-new-tokens", type=int, default=192, help="mixed: response limit")
    ap.add_argument("--latency", type=float, default=0.2, help="stream: s per verification")
    ap.add_argument("--workers", type=int, default=4, help="stream: verifier threads")
    ap.add_argument("--json", help="write the rates here")
    ap.add_argument("--vllm-child", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.vllm_child:
        vllm_child(args.vllm_child, args.model, args.out)
        return 0
    runs = {"fixed": fixed, "mixed": mixed, "stream": stream, "mismatch": mismatch}
    results = {workload: runs[workload](args) for workload in args.workload}
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
