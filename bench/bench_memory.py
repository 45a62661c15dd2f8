"""Peak memory of a training step: verirl next to TRL's ``GRPOTrainer`` on the same workload,
each side in its own process, peak RSS of the whole process tree and the step time.

Rows (``--rows``, default all):

- ``a``: the default job's workload: SmolLM2-135M-Instruct (real weights), 8 prompts × 6
  samples of at most 48 new tokens;
- ``b``: SmolLM2's shape with random weights, 1,024-token responses;
- ``c1``, ``c4``: a Qwen2.5-0.5B-shaped random model (vocabulary 151,936: SmolLM2's tokenizer
  with added tokens up to that size) at 1,024 and 4,096 tokens.

A random model rarely emits EOS, so every response runs to the limit. With ``--responses
random`` neither side samples: both get uniform random tokens, exactly ``max_new_tokens`` of
them per response, from one stub (verirl's ``HFEngine.generate``, transformers'
``generate`` under TRL). A step's memory does not depend on the token values, and on 2 cores
a 0.5B model samples 4,096 tokens in ~10 min per step and side; what this leaves out is the
sampler's own memory (its KV cache, ~0.1 GB at 2 × 4,096 tokens on the Qwen shape), so use it
for the rows where sampling, not the update, is the cost. Rows b–c train
``--long-prompts`` × ``--long-group`` sequences (default 1 × 2). Each side runs ``--steps``
steps (default 2: the optimizer allocates its state during step 1, so step 2 holds
everything a step holds from then on); the time is the last step's.

Sides (``--sides``):

- ``verirl``: its defaults with activation checkpointing forced on
  (``optim.activation_checkpointing=true``, the default before ``auto``);
- ``verirl-auto``: its defaults as they are (``optim.activation_checkpointing=auto``: off when
  the step fits this machine comfortably without it, the fastest choice then);
- ``trl``: ``GRPOTrainer`` as it ships (gradient checkpointing on, its default batch size);
- ``trl-best``: the least memory TRL reaches on a CPU: gradient checkpointing on and one
  completion per forward/backward (gradient accumulation over the rest). Liger kernels, TRL's
  other memory path, need a GPU.

Both sides run under the same C allocator (``--allocator``): TCMalloc where it is installed,
as ``verirl train`` runs a CPU job (:mod:`verirl.allocator`; TRL gets it too, preloaded), or
``system`` (glibc's malloc; verirl then returns freed tensors itself, ``run.release_memory``).

Both sides: fp32 weights and AdamW state, the same prompts (verirl's formatter, TRL's
conversational column: the same chat template), temperature 1, no KL, clip 0.2/0.28,
token-level loss, one optimizer step per rollout batch, ``--threads`` threads. ``--precision
w8a16`` (or ``bf16``, ``int8``) has verirl's sides sample from that low-precision copy
(``rollout.engine.params.precision``) while the learner stays fp32; TRL samples in fp32.

``--phases`` also splits each side's last step into its phases — generation, forward,
backward, the decoder layers recomputed and the output head's share of each, the optimizer —
with timers around each (:mod:`step_phases`), printed as one table per row.

The parent samples each child's process tree every 20 ms (:func:`verirl.train.memory.
wait_and_measure`), so both sides are measured the same way. verirl's row also prints its
memory plan (``verirl memory``) next to the measurement. The table's ratio is verirl's peak
over TRL's (target ≤ 0.5 on every row). Last, the longest response a 20 GiB machine can train
on the Qwen shape, from the plan, for the learner before this change (every response
token's logits, no checkpointing) and now.

Run alone on the machine: ``python bench/bench_memory.py --repeats 2``. Smoke test:
``python bench/bench_memory.py --smoke``.
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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_trl_throughput import build_problems, default_formatter
from step_phases import Phases, format_split

SMOLLM2 = {
    "hidden_size": 576,
    "intermediate_size": 1536,
    "num_hidden_layers": 30,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "vocab_size": 49152,
    "tie_word_embeddings": True,
    "arch": "llama",
}
QWEN25_05B = {
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
    "arch": "qwen2",
}
TINY = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 49152,
    "tie_word_embeddings": True,
    "arch": "llama",
}
GIB = 2**30


@dataclass(frozen=True)
class Row:
    name: str
    model: str  # "smollm2" (real weights) or a shape name
    prompts: int
    group: int
    max_new_tokens: int


SIDES = ("verirl", "verirl-auto", "trl", "trl-best")


def rows(args: argparse.Namespace) -> list[Row]:
    if args.smoke:
        return [Row("smoke", "tiny", 2, 2, 8)]
    p, g = args.long_prompts, args.long_group
    table = {
        "a": Row("a: default job", "smollm2", 8, 6, 48),
        "b": Row("b: SmolLM2 shape, 1,024 tokens", "smollm2-shape", p, g, 1024),
        "c1": Row("c: Qwen2.5-0.5B shape, 1,024 tokens", "qwen-shape", p, g, 1024),
        "c4": Row("c: Qwen2.5-0.5B shape, 4,096 tokens", "qwen-shape", p, g, 4096),
    }
    return [table[name] for name in args.rows.split(",")]


# ---- models --------------------------------------------------------------------------------
def make_model(kind: str, directory: Path) -> str:
    """A model directory: the default model's cached copy, or a random model of a shape with
    SmolLM2's tokenizer (extended with added tokens to the shape's vocabulary)."""
    if kind == "smollm2":
        from verirl.models import default_model_dir

        return str(default_model_dir())
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config

    from verirl.models import DEFAULT_MODEL, load_tokenizer

    shape = {"smollm2-shape": SMOLLM2, "qwen-shape": QWEN25_05B, "tiny": TINY}[kind]
    target = directory / kind
    if (target / "config.json").is_file():
        return str(target)
    tok = load_tokenizer(DEFAULT_MODEL)
    extra = shape["vocab_size"] - len(tok)
    if extra > 0:
        tok.add_tokens([f"<|extra_{i}|>" for i in range(extra)])
    fields = {k: v for k, v in shape.items() if k != "arch"}
    cls = Qwen2Config if shape["arch"] == "qwen2" else LlamaConfig
    config = cls(max_position_embeddings=8192, **fields)
    config.bos_token_id, config.eos_token_id = tok.bos_token_id, tok.eos_token_id
    config.pad_token_id = tok.pad_token_id
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(target)
    tok.save_pretrained(target)
    return str(target)


# ---- random responses (both sides, one stub) -------------------------------------------------
FIRST_PLAIN_TOKEN = 100  # SmolLM2's special tokens sit below this id
PLAIN_VOCAB = 49152  # SmolLM2's own vocabulary (the Qwen shape's extra ids are added tokens)


def random_tokens(rows: int, n: int, seed: int) -> torch.Tensor:
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randint(FIRST_PLAIN_TOKEN, PLAIN_VOCAB, (rows, n), generator=g)


def use_random_responses(max_new_tokens: int) -> None:
    """Both sides' sampling → uniform random tokens, exactly ``max_new_tokens`` per response
    (``--responses random``)."""
    import itertools
    import math

    import torch
    from transformers import GenerationMixin

    from verirl.rollout.base import Generation
    from verirl.rollout.hf import HFEngine

    calls = itertools.count()

    def verirl_generate(
        self: Any, prompts: Any, sampling: Any, on_finish: Any = None, between_steps: Any = None
    ) -> list[list[Generation]]:
        toks = random_tokens(len(prompts) * sampling.n, max_new_tokens, next(calls))
        lp = (-math.log(PLAIN_VOCAB),) * max_new_tokens
        gens = [Generation(tuple(t.tolist()), lp, self.tokenizer.decode(t), "length") for t in toks]
        out = [gens[i * sampling.n : (i + 1) * sampling.n] for i in range(len(prompts))]
        if on_finish is not None:  # the engine's contract: each sequence as it ends
            for i, group in enumerate(out):
                for j, generation in enumerate(group):
                    on_finish(i, j, generation)
        return out

    def hf_generate(self: Any, input_ids: torch.Tensor, **_: Any) -> torch.Tensor:
        new = random_tokens(input_ids.size(0), max_new_tokens, next(calls))
        return torch.cat([input_ids, new.to(input_ids.device)], dim=1)

    HFEngine.generate = verirl_generate  # type: ignore[method-assign]
    GenerationMixin.generate = hf_generate  # type: ignore[assignment,method-assign]


# ---- one side, in a subprocess ---------------------------------------------------------------
def run_verirl(args: argparse.Namespace, auto: bool) -> dict[str, Any]:
    from verirl.assembly import build, load_config
    from verirl.trainer import Trainer

    phases = Phases() if args.phases else None
    if phases is not None:
        phases.install_verirl()
    problems = build_problems(args.prompts * args.steps)
    overrides = [
        *("run.seed=0", f"run.steps={args.steps}", f"run.threads={args.threads}"),
        f"model.name={args.model}",
        "model.dtype=fp32",
        f"rollout.prompts_per_step={args.prompts}",
        f"rollout.group_size={args.group}",
        f"rollout.max_new_tokens={args.max_new_tokens}",
        *("rollout.temperature=1.0", "rollout.top_p=1.0", "reward.name=env", "credit.name=grpo"),
        *("dynamic_sampling.enabled=false", "loss.aggregation=token-mean"),
        *("reward.overlong.buffer=0", "optim.epochs=1", "optim.minibatches=1"),
        *("eval.before_and_after=false", "run.check_memory=false", "run.save_every=0"),
        # TRL runs every row, equal-reward groups included: the same work on both sides
        "optim.skip_zero_advantage_rows=false",
    ]
    overrides.append(f"optim.activation_checkpointing={'auto' if auto else 'true'}")
    overrides.append(f"rollout.engine.params.precision={args.precision}")
    cfg = load_config(None, overrides)
    with tempfile.TemporaryDirectory(prefix="verirl-mem-") as run_dir:
        trainer = Trainer(build(cfg), Path(run_dir))
        trainer.parts.producer.curriculum = FixedProblems(problems)  # type: ignore[assignment]
        times, lengths = [], []
        for _ in range(args.steps):
            if phases is not None:
                phases.reset()
            t0 = time.perf_counter()
            metrics = trainer.train_step()
            times.append(time.perf_counter() - t0)
            lengths.append(metrics["rollout/response_tokens"])
        split = (
            phases.split(times[-1], rollout_s=metrics["time/rollout_s"])
            if phases is not None
            else None
        )
        ckpt = bool(getattr(trainer.parts.learner, "settings", None)) and bool(
            trainer.parts.learner.settings.activation_checkpointing  # type: ignore[attr-defined]
        )
        trainer.close()
    return {"step_s": times, "checkpointing": ckpt, "response_tokens": lengths, "phases": split}


class FixedProblems:
    """Step k gets problems [kP, (k+1)P), as TRL's sequential sampler gives them."""

    def __init__(self, problems: list[Any]) -> None:
        self.problems, self.next = problems, 0

    def sample(self, n: int) -> list[Any]:
        out = self.problems[self.next : self.next + n]
        self.next += n
        return out

    def update(self, rollouts: Any) -> list[str]:
        return []

    def metrics(self) -> dict[str, float]:
        return {}


def run_trl(args: argparse.Namespace, best: bool) -> dict[str, Any]:
    import torch
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from verirl.envs import get_env
    from verirl.models import load_tokenizer

    phases = Phases() if args.phases else None
    if phases is not None:
        phases.install_trl()
    problems = build_problems(args.prompts * args.steps)
    tokenizer = load_tokenizer(args.model)
    formatter = default_formatter(tokenizer)
    data = [{"prompt": formatter.messages(p), "idx": i} for i, p in enumerate(problems)]

    def reward(completions: list[Any], idx: list[int], **_: Any) -> list[float]:
        texts = [c[0]["content"] if isinstance(c, list) else c for c in completions]
        return [
            get_env(problems[i].env).verify(problems[i], t).reward
            for i, t in zip(idx, texts, strict=True)
        ]

    times: list[float] = []
    splits: list[dict[str, float]] = []

    class StepTimer(TrainerCallback):
        def on_step_begin(self, *_: Any, **__: Any) -> None:
            if phases is not None:
                phases.reset()
            self.t0 = time.perf_counter()

        def on_step_end(self, *_: Any, **__: Any) -> None:
            times.append(time.perf_counter() - self.t0)
            if phases is not None:
                splits.append(phases.trl_split(times[-1]))

    completions = args.prompts * args.group
    default_batch = GRPOConfig.__dataclass_fields__["per_device_train_batch_size"].default
    micro = 1 if best else min(completions, int(default_batch))
    while completions % micro:
        micro -= 1
    accum = completions // micro
    with tempfile.TemporaryDirectory(prefix="trl-mem-") as out_dir:
        config = GRPOConfig(
            output_dir=out_dir, use_cpu=True, bf16=False, fp16=False,
            model_init_kwargs={"dtype": torch.float32},
            per_device_train_batch_size=micro,
            gradient_accumulation_steps=accum, steps_per_generation=accum, num_iterations=1,
            num_generations=args.group, max_completion_length=args.max_new_tokens,
            temperature=1.0, top_p=1.0, top_k=0,
            beta=0.0, loss_type="dapo", epsilon=0.2, epsilon_high=0.28,
            learning_rate=2e-6, lr_scheduler_type="constant", weight_decay=0.01,
            adam_beta1=0.9, adam_beta2=0.98, max_grad_norm=1.0,
            gradient_checkpointing=True, shuffle_dataset=False,
            max_steps=args.steps, logging_steps=1, report_to="none", save_strategy="no",
            disable_tqdm=True, dataloader_num_workers=0, seed=0,
        )  # fmt: skip
        trainer = GRPOTrainer(
            model=args.model,
            reward_funcs=[reward],
            args=config,
            train_dataset=Dataset.from_list(data),
            processing_class=tokenizer,
            callbacks=[StepTimer()],
        )
        torch.set_num_threads(args.threads)
        trainer.train()
        lengths = [
            log["completions/mean_length"]
            for log in trainer.state.log_history
            if "completions/mean_length" in log
        ]
    return {
        "step_s": times,
        "checkpointing": True,
        "micro_batch": micro,
        "response_tokens": lengths,
        "phases": splits[-1] if splits else None,
    }


# ---- the driver --------------------------------------------------------------------------------
def measure(args: argparse.Namespace, side: str, row: Row, model: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-mem-") as tmp:
        result = Path(tmp) / "result.json"
        cmd = [
            sys.executable, str(Path(__file__).resolve()), "--side", side, "--model", model,
            "--prompts", str(row.prompts), "--group", str(row.group),
            "--max-new-tokens", str(row.max_new_tokens), "--steps", str(args.steps),
            "--threads", str(args.threads), "--result", str(result),
            "--responses", args.responses, *(["--phases"] if args.phases else []),
            "--precision", args.precision,
        ]  # fmt: skip
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), HF_HUB_OFFLINE="1")
        env.update(HF_DATASETS_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
        env.update(TOKENIZERS_PARALLELISM="false")
        if args.allocator == "tcmalloc":
            from verirl.allocator import find_tcmalloc

            env["LD_PRELOAD"] = str(find_tcmalloc())
        from verirl.train.memory import wait_and_measure

        out = None if args.verbose else subprocess.PIPE
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
        code, peak = wait_and_measure(proc)
        if code != 0:
            tail = (proc.stdout.read() if proc.stdout else "")[-3000:]
            return {"side": side, "error": f"exit {code}", "peak_gb": peak / 1e9, "tail": tail}
        data = json.loads(result.read_text())
        return {"side": side, "peak_gb": peak / 1e9, **data}


def plan_row(row: Row, model: str, args: argparse.Namespace) -> float | None:
    """verirl's planned peak (GB) for the row, with checkpointing on and its sampling copy."""
    from verirl.assembly import load_config, plan

    cfg = load_config(
        None,
        [
            f"model.name={model}",
            f"rollout.prompts_per_step={row.prompts}",
            f"rollout.group_size={row.group}",
            f"rollout.max_new_tokens={row.max_new_tokens}",
            "optim.activation_checkpointing=true",
            "model.dtype=fp32",
            "model.device=cpu",
            f"rollout.engine.params.precision={args.precision}",  # its copy planned too
        ],
    )
    return plan(cfg, "cpu").peak / 1e9


def longest_response(limit: float, before: bool) -> int:
    """The longest response (tokens) whose planned step fits ``limit`` bytes on the Qwen shape
    (1 prompt × 2 samples, fp32, CPU), for the learner before this change (every response
    token's logits, no checkpointing) or now (chunked head, checkpointing)."""
    from transformers import Qwen2Config

    from verirl.train.memory_plan import ModelShape, PlanInputs, StepShape, compute_plan

    fields = {k: v for k, v in QWEN25_05B.items() if k != "arch"}
    shape = ModelShape.from_hf_config(Qwen2Config(**fields))

    def fits(n: int) -> bool:
        p = PlanInputs(
            shape,
            StepShape(1, 2, 120, n),
            workers=2,
            activation_checkpointing=not before,
            chunked_logprobs=not before,
        )
        return compute_plan(p).peak <= limit

    lo, hi = 0, 1 << 20
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", default="a,b,c1,c4", help="comma-separated: a, b, c1, c4")
    p.add_argument("--sides", default=",".join(SIDES), help="comma-separated: " + ", ".join(SIDES))
    p.add_argument("--long-prompts", type=int, default=1, help="prompts per step, rows b-c")
    p.add_argument("--long-group", type=int, default=2, help="samples per prompt, rows b-c")
    p.add_argument("--steps", type=int, default=2, help="steps per side (the last is timed)")
    p.add_argument("--repeats", type=int, default=1, help="runs per side and row")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument(
        "--responses",
        choices=("sampled", "random"),
        default="sampled",
        help="sampled by each side's model, or uniform random tokens of the full length for both",
    )
    p.add_argument(
        "--allocator",
        choices=("tcmalloc", "system"),
        help="the C allocator of every side (default: tcmalloc where installed, as verirl "
        "train runs a CPU job; else system)",
    )
    p.add_argument(
        "--phases", action="store_true", help="split each side's last step into its phases"
    )
    p.add_argument(
        "--precision",
        choices=("policy", "w8a16", "bf16", "int8"),
        default="policy",
        help="verirl's sides sample from this copy (rollout.engine.params.precision); TRL's "
        "sample in fp32",
    )
    p.add_argument("--smoke", action="store_true", help="a tiny random model, 2 x 2 x 8 tokens")
    p.add_argument("--models-dir", type=Path, help="keep the random models here")
    p.add_argument("--json", type=Path, help="also write the results here")
    p.add_argument("--verbose", action="store_true", help="show the subprocesses' output")
    # child
    p.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--prompts", type=int, help=argparse.SUPPRESS)
    p.add_argument("--group", type=int, help=argparse.SUPPRESS)
    p.add_argument("--max-new-tokens", type=int, help=argparse.SUPPRESS)
    p.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args()

    if args.side is not None:
        import torch

        torch.set_num_threads(args.threads)
        if args.responses == "random":
            use_random_responses(args.max_new_tokens)
        if args.side.startswith("verirl"):
            result = run_verirl(args, auto=args.side == "verirl-auto")
        else:
            result = run_trl(args, best=args.side == "trl-best")
        args.result.write_text(json.dumps(result))
        return

    from verirl.allocator import INSTALL_HINT, find_tcmalloc

    if args.allocator is None:
        args.allocator = "tcmalloc" if find_tcmalloc() else "system"
    elif args.allocator == "tcmalloc" and find_tcmalloc() is None:
        p.error(f"--allocator tcmalloc: TCMalloc is not installed ({INSTALL_HINT})")
    sides = args.sides.split(",")
    unknown = [s for s in sides if s not in SIDES]
    if unknown:
        p.error(f"unknown side(s) {unknown}; choose from {', '.join(SIDES)}")
    report: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}, "rows": []}
    with tempfile.TemporaryDirectory(prefix="bench-mem-models-") as tmp:
        models_dir = args.models_dir or Path(tmp)
        models_dir.mkdir(parents=True, exist_ok=True)
        print(
            f"threads={args.threads} steps={args.steps} repeats={args.repeats} "
            f"responses={args.responses} allocator={args.allocator} "
            f"verirl's sampling precision={args.precision}",
            flush=True,
        )
        header = f"{'row':38} {'side':12} {'peak GB':>16} {'step s':>14} {'plan GB':>8}"
        print(header, flush=True)
        for row in rows(args):
            model = make_model(row.model, models_dir)
            runs: dict[str, list[dict[str, Any]]] = {s: [] for s in sides}
            for rep in range(args.repeats):
                for side in sides if rep % 2 == 0 else sides[::-1]:
                    runs[side].append(measure(args, side, replace(row), model))
            planned = plan_row(row, model, args)
            summary = {s: _summary(runs[s]) for s in sides}
            for s in sides:
                line = summary[s]
                plan = f"{planned:8.2f}" if s == "verirl" and planned is not None else " " * 8
                print(f"{row.name:38} {s:12} {line['peak']:>16} {line['time']:>14} {plan}")
            ratios = _ratios(summary, sides)
            if ratios:
                print(f"{'':38} ratio {ratios}", flush=True)
            split = _phase_split(runs)
            if split:
                print(f"phases of the timed step, s (share), median of the repeats: {row.name}")
                print("\n".join(format_split(split)), flush=True)
            report["rows"].append(
                {"row": row.name, "runs": runs, "summary": summary, "plan_gb": planned}
            )
    # from the plan alone (seconds): the smoke run computes it too
    limit = 20 * GIB
    before, now = longest_response(limit, True), longest_response(limit, False)
    report["longest_response_20gib"] = {"before": before, "now": now}
    print(
        f"longest response a 20 GiB machine trains (Qwen2.5-0.5B shape, 1 x 2, plan): "
        f"before {before} tokens, now {now} tokens ({now / max(before, 1):.1f}x)"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in runs if "error" not in r]
    if not ok:
        err = runs[0].get("error", "failed") if runs else "not run"
        return {"peak": f"FAILED ({err})", "time": "", "peak_gb": None}
    peaks = [r["peak_gb"] for r in ok]
    times = [r["step_s"][-1] for r in ok]

    def fmt(xs: list[float], unit: str) -> str:
        mid = statistics.median(xs)
        return f"{mid:.2f}{unit}" + (f" ({min(xs):.2f}-{max(xs):.2f})" if len(xs) > 1 else "")

    return {"peak": fmt(peaks, ""), "time": fmt(times, ""), "peak_gb": statistics.median(peaks)}


def _phase_split(runs: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, float]]:
    """Per side, the median of each phase over the repeats that split their step."""
    out = {}
    for side, side_runs in runs.items():
        splits = [r["phases"] for r in side_runs if r.get("phases")]
        if splits:
            out[side] = {k: statistics.median(s[k] for s in splits) for k in splits[0]}
    return out


def _ratios(summary: dict[str, Any], sides: list[str]) -> str:
    out = []
    for trl in ("trl", "trl-best"):
        if "verirl" in sides and trl in sides:
            v, t = summary["verirl"]["peak_gb"], summary[trl]["peak_gb"]
            if v and t:
                out.append(f"verirl/{trl} {v / t:.2f}")
    return ", ".join(out)


if __name__ == "__main__":
    main()
