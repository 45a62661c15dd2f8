"""Cost of TCPO's selective counterfactual: step time with it off vs on (target ≤ 10%).

One measured step is what a TCPO training step does:

1. multi-turn refinement episodes (``multi_turn`` collector; K turns, stop on success);
2. with the counterfactual on: M alternatives for the L most surprising non-improving turns,
   one batched generate call, verified;
3. TCPO credit and one learner update (clipped surrogate forward + backward + optimizer step,
   :class:`verirl.train.learner.Learner`); if the learner cannot be imported the update is
   replaced by a plain forward + backward of the token log-likelihood, and the output says so.

The off and on steps of a repetition use the same engine seed and start from the same weights
(restored, outside the timer, before every step), so they sample the same episodes and differ
only by the counterfactual. Two numbers are reported:

- ``paired_overhead`` = median over repetitions of (t_on − t_off) / t_off;
- ``cf_share_of_step`` = median of (time inside the counterfactual) / t_on — the same question
  answered inside one step, less exposed to timing noise.

The paper reports 1.03–1.05× training cost for top-surprisal selection (Liao et al. 2026,
arXiv:2608.01667).

Run: ``python bench/bench_tcpo_counterfactual.py`` (SmolLM2-135M-Instruct, L = 5, M = 4)
or ``--model tiny --problems 2 --group 2 --max-new-tokens 16 --repeats 1`` for a smoke run.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from verirl.credit import CREDIT, CreditInput
from verirl.envs import get_env
from verirl.models import load_policy, load_tokenizer, tiny_model
from verirl.rewards.stage import env_reward_stage
from verirl.rollout.collect import COLLECTORS
from verirl.rollout.hf import HFEngine
from verirl.rollout.multiturn import MultiTurn
from verirl.rollout.prompts import PromptFormatter
from verirl.types import Problem, Rollout, SamplingParams


@dataclass
class StepTiming:
    total: float
    collect: float
    counterfactual: float
    update: float
    extra_token_share: float
    turns: float


def make_updater(model: torch.nn.Module, args: argparse.Namespace) -> tuple[Callable, str]:
    """An ``update(rollouts, advantages)`` function: the real learner when available."""
    try:
        from verirl.config import TrainConfig
        from verirl.device import resolve_placement
        from verirl.train.learner import Learner, LearnerSettings, collate
    except ImportError as exc:  # the learner is not there yet: a stand-in
        reason = f"stand-in forward+backward (learner unavailable: {exc})"
        return _standin_update(model), reason

    cfg = TrainConfig.model_validate(
        {
            "rollout": {"max_new_tokens": args.max_new_tokens, "temperature": 1.0},
            "model": {"dtype": "bf16" if args.autocast == "bf16" else "fp32"},
            "optim": {"lr": 1e-6},
        }
    )
    placement = resolve_placement("cpu", cfg.model.dtype)
    learner = Learner(
        model,
        LearnerSettings.from_config(cfg, placement, activation_checkpointing=True),
        total_steps=1000,
    )
    pad = args.pad_id

    def update(rollouts: list[Rollout], advantages: torch.Tensor) -> None:
        learner.update(collate(rollouts, advantages, pad))

    return update, "verirl.train.learner.Learner.update (clipped surrogate, 1 epoch)"


def _standin_update(model: torch.nn.Module) -> Callable:
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-6)

    def update(rollouts: list[Rollout], advantages: torch.Tensor) -> None:
        model.train()
        for r, adv in zip(rollouts, advantages, strict=True):
            ids = torch.tensor([[*r.prompt_ids, *r.response_ids]])
            p = len(r.prompt_ids)
            logits = model(input_ids=ids).logits[0, p - 1 : -1].float()
            logp = torch.log_softmax(logits, -1).gather(1, ids[0, p:, None]).squeeze(1)
            mask = torch.tensor(r.mask, dtype=torch.float32)
            (-(logp * adv[: len(mask)] * mask).sum() / mask.sum().clamp(min=1)).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        model.eval()

    return update


def timed_step(
    problems: list[Problem],
    engine: HFEngine,
    formatter: PromptFormatter,
    sampling: SamplingParams,
    collector: MultiTurn,
    update: Callable,
) -> StepTiming:
    cf_time = 0.0
    original = collector._counterfactual

    def timed_cf(*a: Any, **k: Any) -> int:
        nonlocal cf_time
        t = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            cf_time += time.perf_counter() - t

    collector._counterfactual = timed_cf  # type: ignore[method-assign]
    try:
        t0 = time.perf_counter()
        rollouts = collector.collect(
            problems, engine, formatter, sampling, score=env_reward_stage()
        )
        t1 = time.perf_counter()
        advantages = CREDIT.get("tcpo")(CreditInput.from_rollouts(rollouts))
        update(rollouts, advantages)
        t2 = time.perf_counter()
    finally:
        del collector._counterfactual
    m = collector.metrics()
    return StepTiming(
        total=t2 - t0,
        collect=t1 - t0,
        counterfactual=cf_time,
        update=t2 - t1,
        extra_token_share=m.get("cf_extra_token_share", 0.0),
        turns=m.get("mean_turns", 0.0),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m-instruct", help="'tiny' = random tiny")
    ap.add_argument("--env", default="addition")
    ap.add_argument("--difficulty", type=int, default=4)
    ap.add_argument("--problems", type=int, default=8, help="prompts per step")
    ap.add_argument("--group", type=int, default=8, help="episodes per prompt")
    ap.add_argument("--turns", type=int, default=3, help="K")
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--top-l", type=int, default=5, help="L (paper: 5 maths, 10 code)")
    ap.add_argument("--alternatives", type=int, default=4, help="M")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--autocast", choices=["none", "bf16"], default="none")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: leave as is)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    if args.model == "tiny":
        tok = load_tokenizer("smollm2-135m-instruct")
        model = tiny_model(len(tok), seed=args.seed)
    else:
        model, tok = load_policy(args.model)
    model.eval()
    args.pad_id = tok.pad_token_id
    formatter = PromptFormatter(tok, system="Solve the task. End with the answer in \\boxed{}.")
    engine = HFEngine(
        model,
        tok,
        max_batch_sequences=64,
        autocast_dtype=torch.bfloat16 if args.autocast == "bf16" else None,
        seed=args.seed,
    )
    update, update_kind = make_updater(model, args)
    initial = copy.deepcopy(model.state_dict())
    env = get_env(args.env)
    spec = COLLECTORS.get("multi_turn")
    base = {"max_turns": args.turns, "cf_top_l": args.top_l, "cf_alternatives": args.alternatives}
    off = spec.build({**base, "counterfactual": False})
    on = spec.build({**base, "counterfactual": True})

    rows: list[tuple[StepTiming, StepTiming]] = []
    for rep in range(args.repeats):
        problems = [env.generate(args.difficulty, 1000 * rep + i) for i in range(args.problems)]
        sampling = SamplingParams(
            n=args.group, temperature=1.0, max_new_tokens=args.max_new_tokens, seed=rep
        )
        pair = []
        for collector in (off, on):
            model.load_state_dict(initial)  # same start for both (outside the timer)
            pair.append(timed_step(problems, engine, formatter, sampling, collector, update))
        rows.append((pair[0], pair[1]))
        a, b = pair
        print(
            f"rep {rep}: off {a.total:7.2f}s (collect {a.collect:6.2f}, update {a.update:6.2f}) | "
            f"on {b.total:7.2f}s (cf {b.counterfactual:5.2f}s, extra tokens "
            f"{100 * b.extra_token_share:4.1f}%) | mean turns {a.turns:.2f}",
            flush=True,
        )

    paired = statistics.median((b.total - a.total) / a.total for a, b in rows)
    share = statistics.median(b.counterfactual / b.total for _, b in rows)
    result = {
        "model": args.model,
        "update": update_kind,
        "problems": args.problems,
        "group": args.group,
        "K": args.turns,
        "L": args.top_l,
        "M": args.alternatives,
        "max_new_tokens": args.max_new_tokens,
        "step_off_s": statistics.median(a.total for a, _ in rows),
        "step_on_s": statistics.median(b.total for _, b in rows),
        "cf_s": statistics.median(b.counterfactual for _, b in rows),
        "paired_overhead": paired,
        "cf_share_of_step": share,
        "cf_extra_token_share": statistics.median(b.extra_token_share for _, b in rows),
        "target": "<= 0.10",
        "within_target": share <= 0.10,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
