"""Training-step throughput of verirl's Trainer next to TRL's ``GRPOTrainer``, same workload.

A *step* is one rollout batch: ``P`` prompts × ``G`` samples are generated, scored by the
environment's verifier, turned into group-normalised advantages and trained on with exactly
one optimizer step. Throughput is ``(generated completion tokens + trained tokens) / seconds``
summed over the timed steps; the script prints it per side and ``ratio = verirl / TRL``.

What is equal on both sides:

- model: the same directory (``default_model_dir()``: SmolLM2-135M-Instruct; or, with
  ``--model tiny``, a tiny random Llama with SmolLM2's tokenizer saved to a temp dir), fp32
  weights and fp32 AdamW state on both sides;
- prompts: ``P × (warmup + steps)`` arithmetic problems (``addition`` / ``multiplication`` /
  ``chain_sum`` at difficulty 0–2, fixed seeds) formatted by verirl's ``PromptFormatter`` with
  the default config's system prompt and few-shot example; TRL gets those message lists as a
  conversational ``prompt`` column, so the same chat template builds the same prompt ids.
  Step ``k`` uses problems ``[kP, (k+1)P)`` on both sides (TRL: ``shuffle_dataset=False``;
  verirl: a fixed-list curriculum in place of the adaptive one);
- sampling: group size G, max new tokens, temperature 1.0, top-p 1.0, no top-k;
- reward: ``get_env(env).verify(problem, text).reward`` (TRL: a reward function that looks the
  problem up by index, so it does no extra work);
- update: lr, AdamW betas (0.9, 0.98), weight decay 0.01, grad clip 1.0, constant LR, one
  optimizer step per rollout batch (TRL: ``per_device_train_batch_size × gradient_accumulation
  = P·G`` with ``steps_per_generation = gradient_accumulation_steps`` and ``num_iterations = 1``,
  so one generation of P·G completions feeds one optimizer step and TRL reuses the
  sampling-time policy as π_old like verirl's ``old_logprobs=rollout``; accumulation bounds
  memory as verirl's micro-batches do: P·G = 64 in one fp32 batch needs > 24 GiB), no KL (β = 0, no
  reference model), clip ε_low 0.2 / ε_high 0.28, token-level loss (verirl ``token-mean``,
  TRL ``dapo``), no gradient checkpointing (TRL's default is on; verirl has none);
- precision: both fp32, or both bf16 CPU autocast (verirl ``model.dtype=bf16``; TRL
  ``bf16=True, use_cpu=True``). A hook on the decoder records whether autocast was active in
  sampling (no-grad) and training (grad) forwards, printed as ``autocast gen/train``;
- threads: ``torch.set_num_threads(--threads)`` and ``OMP_NUM_THREADS`` on both sides; each
  side runs in its own subprocess (this script with ``--side``), so memory, allocator and
  thread state never leak between them; with ``--repeats`` > 1 the order alternates.

Timing: ``--warmup`` steps (default 1) are run and not counted, then ``--steps`` timed steps.
verirl: wall clock around ``Trainer.train_step()``. TRL: wall clock from the ``on_step_begin``
to the ``on_step_end`` callback (generation, reward, advantages, forward/backward, clip,
optimizer step); the logging after it is excluded, as verirl's metrics writing is.
Tokens are counted the same way: generated = completion tokens up to and including EOS
(verirl: ``sum(rollout.mask)`` of every sampled rollout, the step's
``throughput/generated_tokens``; TRL: ``len(completion_ids)`` seen by the reward function),
trained = tokens in the loss mask (verirl: the trained batch's response mask, the step's
``throughput/trained_tokens``; TRL: ``completion_mask.sum()`` in ``compute_loss``).

Run: ``python bench/bench_trl_throughput.py`` (SmolLM2, fp32 and bf16); smoke test:
``python bench/bench_trl_throughput.py --model tiny --steps 2 --prompts 2 --group-size 2
--max-new-tokens 8``. Needs ``trl==1.16.0`` (the ``bench`` extra).
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
from typing import Any

ENVS = ("addition", "multiplication", "chain_sum")
SIDES = ("verirl", "trl")


# ---- the shared workload -----------------------------------------------------------------------
def build_problems(n: int) -> list[Any]:
    """``n`` problems: envs cycle, difficulty 0–2 cycles every len(ENVS), seed = index."""
    from verirl.envs import get_env

    return [get_env(ENVS[i % 3]).generate((i // 3) % 3, i) for i in range(n)]


def default_formatter(tokenizer: Any) -> Any:
    """verirl's PromptFormatter with the default config's system prompt and few-shot turns."""
    from verirl.config import load_config
    from verirl.rollout.prompts import PromptFormatter

    r = load_config(None, []).rollout
    return PromptFormatter(tokenizer, r.system_prompt, tuple(map(tuple, r.few_shot)))


def resolve_model(name: str) -> str:
    from verirl.models import default_model_dir

    return str(default_model_dir()) if name == "smollm2" else name


def make_tiny_model(directory: Path) -> str:
    """A tiny random Llama with SmolLM2's tokenizer, saved as a local model directory."""
    from verirl.models import save_tiny_model_dir

    return str(save_tiny_model_dir(directory, hidden_size=64))


class AutocastProbe:
    """Forward pre-hook on the decoder (TRL's fused LM head bypasses ``lm_head``): was CPU
    autocast on in no-grad (sampling) and grad (training) forwards?"""

    def __init__(self, model: Any) -> None:
        self.seen: dict[str, set[bool]] = {"gen": set(), "train": set()}
        model.get_decoder().register_forward_pre_hook(self._hook)

    def _hook(self, module: Any, args: Any) -> None:
        import torch

        kind = "train" if torch.is_grad_enabled() else "gen"
        self.seen[kind].add(torch.is_autocast_enabled("cpu"))

    def summary(self) -> str:
        def one(s: set[bool]) -> str:
            return "/".join(sorted("bf16" if on else "off" for on in s)) or "-"

        return f"{one(self.seen['gen'])} / {one(self.seen['train'])}"


# ---- one side, in a subprocess -----------------------------------------------------------------
def run_verirl(args: argparse.Namespace, model_path: str) -> dict[str, Any]:
    import torch

    from verirl.assembly import build
    from verirl.config import load_config
    from verirl.models import load_policy
    from verirl.trainer import Trainer

    total = args.warmup + args.steps
    problems = build_problems(args.prompts * total)
    overrides = [
        *("run.seed=0", f"run.steps={total}", f"run.threads={args.threads}"),
        f"model.name={model_path}",
        f"model.dtype={'bf16' if args.precision == 'bf16' else 'fp32'}",
        f"rollout.prompts_per_step={args.prompts}",
        f"rollout.group_size={args.group_size}",
        f"rollout.max_new_tokens={args.max_new_tokens}",
        *("rollout.temperature=1.0", "rollout.top_p=1.0", "reward.name=env", "credit.name=grpo"),
        *("dynamic_sampling.enabled=false", "loss.aggregation=token-mean"),
        *("reward.overlong.buffer=0", "loss.policy.name=clipped_surrogate"),
        *("loss.policy.params.eps_low=0.2", "loss.policy.params.eps_high=0.28"),
        *(f"optim.lr={args.lr}", "optim.epochs=1", "optim.minibatches=1"),
        *("optim.old_logprobs=rollout", "eval.before_and_after=false"),
        # TRL runs every row, equal-reward groups included: the same work on both sides
        "optim.skip_zero_advantage_rows=false",
    ]
    cfg = load_config(None, overrides)
    with tempfile.TemporaryDirectory(prefix="verirl-bench-") as run_dir:
        trainer = Trainer(build(cfg, load_policy(model_path)), Path(run_dir))
        torch.set_num_threads(args.threads)
        probe = AutocastProbe(trainer.parts.model)

        class FixedProblems:  # step k gets problems [kP, (k+1)P), as TRL's sequential sampler
            def __init__(self) -> None:
                self.next = 0

            def sample(self, n: int) -> list[Any]:
                out = problems[self.next : self.next + n]
                self.next += n
                return out

            def update(self, rollouts: Any) -> list[str]:
                return []

            def metrics(self) -> dict[str, float]:
                return {}

        trainer.parts.producer.curriculum = FixedProblems()  # type: ignore[assignment]
        rec: dict[str, list[float]] = {"step_s": [], "gen": [], "trained": []}
        for _ in range(total):
            t0 = time.perf_counter()
            metrics = trainer.train_step()
            rec["step_s"].append(time.perf_counter() - t0)
            # the loop's own counts: sum(rollout.mask) of every sampled rollout; the tokens in
            # the loss mask of the trained batch
            rec["gen"].append(metrics["throughput/generated_tokens"])
            rec["trained"].append(metrics["throughput/trained_tokens"])
        dtype = str(next(trainer.parts.model.parameters()).dtype)
    return _result(args, rec, probe, dtype)


def run_trl(args: argparse.Namespace, model_path: str) -> dict[str, Any]:
    import torch
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from verirl.envs import get_env
    from verirl.models import load_tokenizer

    total = args.warmup + args.steps
    problems = build_problems(args.prompts * total)
    tokenizer = load_tokenizer(model_path)
    formatter = default_formatter(tokenizer)
    rows = [{"prompt": formatter.messages(p), "idx": i} for i, p in enumerate(problems)]
    counts = {"gen": 0, "trained": 0}

    def env_verifier(
        completions: list[Any], completion_ids: list[list[int]], idx: list[int], **_: Any
    ) -> list[float]:
        counts["gen"] += sum(len(ids) for ids in completion_ids)
        texts = [c[0]["content"] if isinstance(c, list) else c for c in completions]
        return [
            get_env(problems[i].env).verify(problems[i], t).reward
            for i, t in zip(idx, texts, strict=True)
        ]

    class CountingGRPOTrainer(GRPOTrainer):
        def compute_loss(self, model: Any, inputs: Any, *a: Any, **kw: Any) -> Any:
            counts["trained"] += int(inputs["completion_mask"].sum())
            return super().compute_loss(model, inputs, *a, **kw)

    rec: dict[str, list[float]] = {"step_s": [], "gen": [], "trained": []}

    class StepTimer(TrainerCallback):
        def on_step_begin(self, *_: Any, **__: Any) -> None:
            counts.update(gen=0, trained=0)
            self.t0 = time.perf_counter()

        def on_step_end(self, *_: Any, **__: Any) -> None:
            rec["step_s"].append(time.perf_counter() - self.t0)
            rec["gen"].append(counts["gen"])
            rec["trained"].append(counts["trained"])

    # One optimizer step per P·G completions, accumulated over micro-batches of at most
    # --trl-micro-batch completions (a single 64-completion batch needs > 24 GiB in fp32).
    completions = args.prompts * args.group_size
    micro = min(completions, args.trl_micro_batch)
    if completions % micro:
        raise SystemExit(f"P·G = {completions} must be a multiple of --trl-micro-batch {micro}")
    accum = completions // micro
    with tempfile.TemporaryDirectory(prefix="trl-bench-") as out_dir:
        config = GRPOConfig(
            output_dir=out_dir, use_cpu=True, bf16=args.precision == "bf16", fp16=False,
            model_init_kwargs={"dtype": torch.float32},
            per_device_train_batch_size=micro,
            gradient_accumulation_steps=accum, steps_per_generation=accum, num_iterations=1,
            num_generations=args.group_size, max_completion_length=args.max_new_tokens,
            temperature=1.0, top_p=1.0, top_k=0,
            beta=0.0, loss_type="dapo", epsilon=0.2, epsilon_high=0.28, scale_rewards="group",
            mask_truncated_completions=False,
            learning_rate=args.lr, lr_scheduler_type="constant", warmup_steps=0,
            weight_decay=0.01, adam_beta1=0.9, adam_beta2=0.98, max_grad_norm=1.0,
            optim="adamw_torch", gradient_checkpointing=False, shuffle_dataset=False,
            max_steps=total, logging_steps=1, report_to="none", save_strategy="no",
            disable_tqdm=True, dataloader_num_workers=0, seed=0,
        )  # fmt: skip
        trainer = CountingGRPOTrainer(
            model=model_path,
            reward_funcs=[env_verifier],
            args=config,
            train_dataset=Dataset.from_list(rows),
            processing_class=tokenizer,
            callbacks=[StepTimer()],
        )
        torch.set_num_threads(args.threads)
        probe = AutocastProbe(trainer.parts.model)
        trainer.train()
        dtype = str(next(trainer.parts.model.parameters()).dtype)
    return _result(args, rec, probe, dtype)


def _result(
    args: argparse.Namespace, rec: dict[str, list[float]], probe: AutocastProbe, dtype: str
) -> dict[str, Any]:
    import torch

    step_s, w = rec["step_s"], args.warmup
    if len(step_s) != w + args.steps:
        raise RuntimeError(f"{args.side}: timed {len(step_s)} steps, expected {w + args.steps}")
    return {
        "side": args.side,
        "precision": args.precision,
        "steps": len(step_s) - w,
        "step_s": step_s[w:],
        "warmup_s": step_s[:w],
        "completion_tokens": int(sum(rec["gen"][w:])),
        "trained_tokens": int(sum(rec["trained"][w:])),
        "threads": torch.get_num_threads(),
        "autocast": probe.summary(),
        "param_dtype": dtype,
    }


# ---- the driver ----------------------------------------------------------------------------------
def run_side(args: argparse.Namespace, side: str, precision: str, model: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-trl-") as tmp:
        result_path = Path(tmp) / "result.json"
        cmd = [
            sys.executable, str(Path(__file__).resolve()), "--side", side,
            "--precision", precision, "--model", model, "--result", str(result_path),
            "--prompts", str(args.prompts), "--group-size", str(args.group_size),
            "--max-new-tokens", str(args.max_new_tokens), "--steps", str(args.steps),
            "--warmup", str(args.warmup), "--threads", str(args.threads), "--lr", str(args.lr),
            "--trl-micro-batch", str(args.trl_micro_batch),
        ]  # fmt: skip
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), HF_HUB_OFFLINE="1")
        env.update(HF_DATASETS_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
        env.update(TOKENIZERS_PARALLELISM="false")
        proc = subprocess.run(cmd, env=env, capture_output=not args.verbose, text=True)
        if proc.returncode != 0:
            tail = ((proc.stdout or "") + (proc.stderr or ""))[-4000:]
            raise SystemExit(f"{side} ({precision}) failed (exit {proc.returncode}):\n{tail}")
        return json.loads(result_path.read_text())


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    step_s = [s for r in runs for s in r["step_s"]]
    tokens = sum(r["completion_tokens"] + r["trained_tokens"] for r in runs)
    return {
        "steps": len(step_s),
        "mean_step_s": sum(step_s) / len(step_s),
        "completion_tokens": sum(r["completion_tokens"] for r in runs),
        "tokens": tokens,
        "tokens_per_s": tokens / sum(step_s),
        "autocast": ", ".join(sorted({r["autocast"] for r in runs})),
        "threads": ", ".join(sorted({str(r["threads"]) for r in runs})),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--prompts", type=int, default=8, help="prompts (groups) per step P")
    p.add_argument("--group-size", type=int, default=8, help="samples per prompt G")
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--steps", type=int, default=5, help="timed steps per side")
    p.add_argument("--warmup", type=int, default=1, help="untimed steps first")
    p.add_argument("--precision", choices=["fp32", "bf16", "both"], default="both")
    p.add_argument("--model", default="smollm2", help="smollm2 | tiny | a local model dir")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--lr", type=float, default=2e-6)
    p.add_argument(
        "--trl-micro-batch",
        type=int,
        default=16,
        help="TRL completions per forward/backward (gradient accumulation up to P·G)",
    )
    p.add_argument("--repeats", type=int, default=1, help="runs per side (order alternates)")
    p.add_argument("--json", type=Path, help="also write the results here")
    p.add_argument("--verbose", action="store_true", help="show the subprocesses' output")
    p.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)
    p.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.group_size < 2:
        p.error("--group-size must be >= 2 (TRL's GRPO needs at least 2 generations)")

    if args.side is not None:  # child: one side, one precision
        import torch

        torch.set_num_threads(args.threads)
        model_path = resolve_model(args.model)
        result = (run_verirl if args.side == "verirl" else run_trl)(args, model_path)
        args.result.write_text(json.dumps(result))
        return

    precisions = ["fp32", "bf16"] if args.precision == "both" else [args.precision]
    report: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}}
    with tempfile.TemporaryDirectory(prefix="bench-tiny-model-") as tiny_dir:
        model = make_tiny_model(Path(tiny_dir)) if args.model == "tiny" else args.model
        print(
            f"model={args.model} P={args.prompts} G={args.group_size} "
            f"max_new_tokens={args.max_new_tokens} steps={args.steps} (+{args.warmup} warmup) "
            f"threads={args.threads} repeats={args.repeats}",
            flush=True,
        )
        for precision in precisions:
            runs: dict[str, list[dict[str, Any]]] = {s: [] for s in SIDES}
            for rep in range(args.repeats):
                for side in SIDES if rep % 2 == 0 else SIDES[::-1]:
                    runs[side].append(run_side(args, side, precision, model))
            sums = {side: summarise(runs[side]) for side in SIDES}
            ratio = sums["verirl"]["tokens_per_s"] / sums["trl"]["tokens_per_s"]
            report[precision] = {"sides": sums, "runs": runs, "ratio": ratio}
            print(f"\n[{precision}]")
            header = (
                f"{'side':8} {'steps':>5} {'mean step s':>11} {'compl. tok':>10} "
                f"{'tokens':>8} {'tokens/s':>9}  autocast gen/train  threads"
            )
            print(header)
            for side in SIDES:
                s = sums[side]
                print(
                    f"{side:8} {s['steps']:>5} {s['mean_step_s']:>11.3f} "
                    f"{s['completion_tokens']:>10} {s['tokens']:>8} {s['tokens_per_s']:>9.1f}  "
                    f"{s['autocast']:<19} {s['threads']}"
                )
            print(f"ratio = verirl / TRL = {ratio:.2f}x  (target >= 1.5x)", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
