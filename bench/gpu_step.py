"""One training step per rollout engine on CUDA, on a random model of SmolLM2-135M's shape,
printing tokens per second: the transformers (hf) engine always, the vLLM engine where vLLM
is installed (``pip install vllm``, the CUDA build).

The model has SmolLM2-135M's architecture (30 layers, hidden 576, 9 heads / 3 KV heads,
MLP 1536, tied embeddings) with random weights and the default model's tokenizer, saved to a
temporary directory: nothing is downloaded. Each engine runs the default job's workload
(8 prompts × 6 samples, 48 new tokens, GRPO) for ``--steps`` steps (the first one warms up;
the last is reported) in its own subprocess, so the two never share GPU memory. Printed per
engine: generated tokens/s of the rollout phase, (generated + trained) tokens/s of the whole
step, the weight-sync seconds, and peak GPU memory.

Run on a GPU machine: ``python bench/gpu_step.py``. Without CUDA it exits with code 2 and says
so. ``--device cpu`` is the smoke run the test suite keeps working (seconds): the same step
through the same code on the CPU, a tiny random model, 2 prompts × 2 samples × 8 new tokens, the
hf engine only (the vLLM CPU build is timed by ``bench/bench_vllm_engine.py``).
(Written without a GPU at hand: untested on one.)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SMOLLM2_SHAPE = {
    "hidden_size": 576,
    "layers": 30,
    "heads": 9,
    "kv_heads": 3,
    "intermediate_size": 1536,
}


def save_smollm2_shaped(path: Path) -> Path:
    from transformers import LlamaConfig, LlamaForCausalLM

    from verirl.models import DEFAULT_MODEL, load_tokenizer

    tok = load_tokenizer(DEFAULT_MODEL)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=SMOLLM2_SHAPE["hidden_size"],
        intermediate_size=SMOLLM2_SHAPE["intermediate_size"],
        num_hidden_layers=SMOLLM2_SHAPE["layers"],
        num_attention_heads=SMOLLM2_SHAPE["heads"],
        num_key_value_heads=SMOLLM2_SHAPE["kv_heads"],
        max_position_embeddings=8192,
        rope_theta=100000.0,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(cfg)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


# --device cpu: the smoke run's workload (on CUDA the step is the default job's)
CPU_SMOKE = ["rollout.prompts_per_step=2", "rollout.group_size=2", "rollout.max_new_tokens=8"]


def side(engine: str, model_dir: str, steps: int, device: str = "cuda") -> dict[str, float]:
    import torch

    from verirl.assembly import build
    from verirl.config import load_config
    from verirl.trainer import Trainer

    cuda = device == "cuda"
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(
            None,
            [
                f"model.name={model_dir}",
                f"model.device={device}",
                f"run.dir={tmp}",
                f"run.steps={steps}",
                "run.save_every=0",
                "eval.before_and_after=false",
                f"rollout.engine.name={engine}",
                # a random model's equal rewards would leave the update nothing to train
                "optim.skip_zero_advantage_rows=false",
                *([] if cuda else CPU_SMOKE),
            ],
        )
        with Trainer(build(cfg), Path(tmp)) as trainer:
            if cuda:
                torch.cuda.reset_peak_memory_stats()
            metrics: dict[str, float] = {}
            for _ in range(steps):
                metrics = trainer.train_step()
    return {
        "generated_tokens_per_s": metrics["throughput/generated_tokens"]
        / max(metrics["time/rollout_s"], 1e-9),
        "step_tokens_per_s": metrics["throughput/tokens_per_s"],
        "step_s": metrics["time/step_s"],
        "weight_sync_s": metrics["time/weight_sync_s"],
        "peak_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else 0.0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=2, help="steps per engine (last reported)")
    ap.add_argument(
        "--device",
        choices=["cuda", "cpu"],
        default="cuda",
        help="cpu: the smoke run (a tiny random model, tiny workload, hf engine only)",
    )
    ap.add_argument("--side", choices=["hf", "vllm"], help=argparse.SUPPRESS)
    ap.add_argument("--model-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    cuda = args.device == "cuda"

    import torch

    if cuda and not torch.cuda.is_available():
        print(
            "bench/gpu_step.py needs a CUDA GPU (torch.cuda.is_available() is False with torch "
            f"{torch.__version__}); on this machine use bench/bench_vllm_engine.py instead "
            "(--device cpu is the smoke run).",
            file=sys.stderr,
        )
        raise SystemExit(2)
    if args.side:
        result = side(args.side, args.model_dir, args.steps, args.device)
        print("RESULT " + json.dumps(result), flush=True)
        return
    have_vllm = importlib.util.find_spec("vllm") is not None
    engines = ["hf"] + (["vllm"] if cuda and have_vllm else [])
    if cuda and not have_vllm:
        print("vLLM is not installed: the hf engine alone (pip install vllm for both)")
    root = Path(__file__).resolve().parent.parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    with tempfile.TemporaryDirectory() as tmp:
        if cuda:
            model_dir = save_smollm2_shaped(Path(tmp) / "smollm2-shaped")
        else:
            from verirl.models import save_tiny_model_dir

            model_dir = save_tiny_model_dir(Path(tmp) / "tiny")
        results = {}
        for name in engines:
            cmd = [sys.executable, __file__, "--side", name, "--model-dir", str(model_dir)]
            cmd += ["--steps", str(args.steps), "--device", args.device]
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
            if proc.returncode != 0 or line is None:
                sys.stderr.write(proc.stderr[-4000:])
                raise SystemExit(f"the {name} engine failed (exit {proc.returncode})")
            results[name] = json.loads(line.removeprefix("RESULT "))
    if cuda:
        print(f"GPU: {torch.cuda.get_device_name(0)}; SmolLM2-135M shape, random weights")
    else:
        print("CPU smoke run: a tiny random model, 2 prompts x 2 samples x 8 new tokens")
    for name, r in results.items():
        peak = f"{r['peak_gib']:.2f} GiB" if cuda else "n/a (CPU)"
        print(
            f"{name:5s} generated {r['generated_tokens_per_s']:.0f} tok/s | step "
            f"{r['step_tokens_per_s']:.0f} tok/s ({r['step_s']:.2f} s, weight sync "
            f"{r['weight_sync_s']:.3f} s) | peak {peak}"
        )
    if "vllm" in results:
        ratio = results["vllm"]["generated_tokens_per_s"] / results["hf"]["generated_tokens_per_s"]
        print(f"generated tokens/s ratio vllm/hf: {ratio:.2f}x")


if __name__ == "__main__":
    main()
