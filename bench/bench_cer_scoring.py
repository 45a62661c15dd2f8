"""CER scoring cost: the prefix-cache scorer against full re-encoding, and against generation.

One training step as CER sees it (Xiao et al. 2026, §1.3 of the seed notes): ``--prompts``
free-form problems (cycling through the ``freeform`` environments), ``--group-size`` G rollouts
each, sampled by the transformers engine (T = 1.0, top-p 1.0, as released) from the policy;
then the CER reward of every rollout with M = ``--n-samples`` solutions per distinct answer.

It times, on the *same* rollouts:

- rollout generation (``HFEngine.generate``, prompt prefix shared across the G samples);
- the CER reward with ``scorer="prefix_cache"`` (each solution encoded once, answers scored
  from its key/value cache) and with ``scorer="reference"`` (every distinct
  (solution, answer) row re-encoded in full, as the release's extra ``compute_log_prob`` pass).

SmolLM2-135M seldom writes ``\\boxed{}`` on its own, so by default every rollout without one is
completed with "The final answer is \\boxed{" on a new line plus a short policy-written answer
(``--no-force-answers`` turns this off; that time is reported apart, not as generation).

It prints the speed-up (target ≥ 5× at G = M = 8 on SmolLM2-135M), CER time as a share of
generation time, the largest reward difference between the two scorers, and the cache metrics
(pairs, distinct pairs, tokens forwarded). Scoring times are the median of ``--reps`` runs
after one warm-up.

Run: ``python bench/bench_cer_scoring.py`` (SmolLM2-135M, G = M = 8) or, for a smoke run,
``python bench/bench_cer_scoring.py --model tiny --group-size 2 --prompts 2 --max-new-tokens 16
--append-answers``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import time
from typing import Any

import torch

from verirl.envs import env_names, get_env
from verirl.models import load_policy, load_tokenizer, tiny_model
from verirl.rewards import REWARDS, RewardContext
from verirl.rewards.stage import env_reward_stage
from verirl.rollout.collect import COLLECTORS
from verirl.rollout.hf import HFEngine
from verirl.rollout.prompts import PromptFormatter
from verirl.types import Problem, Rollout, SamplingParams


def build_model(name: str) -> tuple[torch.nn.Module, Any]:
    """``tiny``: a random 2-layer Llama with the SmolLM2 tokenizer (smoke runs); else a model
    name or directory for :func:`verirl.models.load_policy`."""
    if name == "tiny":
        tok = load_tokenizer("smollm2-135m-instruct")
        return tiny_model(len(tok), seed=0), tok
    model, tok = load_policy(name)
    model.eval()
    return model, tok


def make_problems(n: int, difficulty: int, seed: int) -> list[Problem]:
    names = env_names(family="freeform")
    return [get_env(names[i % len(names)]).generate(difficulty, seed + i) for i in range(n)]


FORCE_SUFFIX = "\nThe final answer is \\boxed{"


def force_answers(rollouts: list[Rollout], engine: HFEngine, tok: Any) -> list[Rollout]:
    """Complete every rollout without ``\\boxed{``: append :data:`FORCE_SUFFIX` and let the
    policy write the answer (T = 1, at most 16 tokens, up to its ``}``). SmolLM2-135M rarely
    boxes an answer by itself; forcing keeps the answers the policy's own while giving CER a
    realistic number of distinct answers to score."""
    todo = [i for i, r in enumerate(rollouts) if "\\boxed{" not in r.text]
    if not todo:
        return rollouts
    suffix = tok.encode(FORCE_SUFFIX, add_special_tokens=False)
    prompts = []
    for i in todo:
        ids = list(rollouts[i].response_ids)
        while ids and ids[-1] in engine.eos_ids:
            ids.pop()
        prompts.append(list(rollouts[i].prompt_ids) + ids + suffix)
    sampling = SamplingParams(n=1, temperature=1.0, max_new_tokens=16, stop=("}",))
    out = list(rollouts)
    for i, (gen,) in zip(todo, engine.generate(prompts, sampling), strict=True):
        r = rollouts[i]
        ids = prompts[todo.index(i)][len(r.prompt_ids) :] + list(gen.token_ids)
        out[i] = dataclasses.replace(
            r,
            response_ids=tuple(ids),
            logprobs=(0.0,) * len(ids),
            text=r.text + FORCE_SUFFIX + gen.text,
        )
    return out


def append_answers(rollouts: list[Rollout], rng: random.Random) -> list[Rollout]:
    """Rollouts without ``\\boxed{`` get `` \\boxed{a}`` appended, ``a`` drawn from the
    environment's correct and wrong spellings (smoke runs only)."""
    out = []
    for r in rollouts:
        if "\\boxed{" not in r.text:
            env = get_env(r.problem.env)
            forms = env.equivalent_forms(r.problem)[:3] + env.wrong_forms(r.problem, rng, 3)
            r = dataclasses.replace(r, text=f"{r.text} \\boxed{{{rng.choice(forms)}}}")
        out.append(r)
    return out


def time_cer(
    rollouts: list[Rollout], ctx: RewardContext, params: dict[str, Any], reps: int
) -> tuple[float, list[float], dict[str, float]]:
    """Median seconds of ``reps`` CER scorings (after one warm-up), the rewards, metrics."""
    source = REWARDS.get("cer").build(params)
    rewards = [v.reward for v in source.score(rollouts, ctx)]  # warm-up
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        source.score(rollouts, ctx)
        times.append(time.perf_counter() - start)
    return statistics.median(times), rewards, source.metrics()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m-instruct", help="model name/dir or 'tiny'")
    ap.add_argument("--prompts", type=int, default=4, help="problems in the step")
    ap.add_argument("--group-size", type=int, default=8, help="G rollouts per problem")
    ap.add_argument("--n-samples", type=int, default=8, help="M solutions per distinct answer")
    ap.add_argument("--max-new-tokens", type=int, default=256)
    ap.add_argument("--difficulty", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3, help="timed scoring repetitions")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: leave as is)")
    ap.add_argument("--bf16", action="store_true", help="bf16 autocast for scoring")
    ap.add_argument(
        "--no-force-answers",
        action="store_true",
        help="do not complete unboxed rollouts with a policy-written answer (see the docstring)",
    )
    ap.add_argument(
        "--append-answers",
        action="store_true",
        help="smoke runs: give every rollout without \\boxed{} one (a random correct or wrong "
        "spelling from its environment), since a random model never writes one",
    )
    ap.add_argument("--out", default="", help="also write the result JSON here")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    model, tok = build_model(args.model)
    problems = make_problems(args.prompts, args.difficulty, args.seed)
    engine = HFEngine(model, tok, seed=args.seed)
    sampling = SamplingParams(
        n=args.group_size, temperature=1.0, top_p=1.0, max_new_tokens=args.max_new_tokens
    )
    collector = COLLECTORS.get("single_turn").build()
    start = time.perf_counter()
    rollouts = collector.collect(
        problems, engine, PromptFormatter(tok), sampling, score=env_reward_stage()
    )
    gen_seconds = time.perf_counter() - start
    boxed_share = sum("\\boxed{" in r.text for r in rollouts) / len(rollouts)
    force_seconds = 0.0
    if not args.no_force_answers:
        start = time.perf_counter()
        rollouts = force_answers(rollouts, engine, tok)
        force_seconds = time.perf_counter() - start
    if args.append_answers:
        rollouts = append_answers(rollouts, random.Random(args.seed))

    ctx = RewardContext(tokenizer=tok, model=model)
    common = {"n_samples": args.n_samples, "autocast": "bf16" if args.bf16 else "none"}
    fast_s, fast_r, fast_m = time_cer(
        rollouts, ctx, {**common, "scorer": "prefix_cache"}, args.reps
    )
    ref_s, ref_r, ref_m = time_cer(rollouts, ctx, {**common, "scorer": "reference"}, args.reps)
    rel = max(
        (abs(a - b) / max(abs(b), 1e-300) for a, b in zip(fast_r, ref_r, strict=True) if b > 0),
        default=0.0,
    )
    result = {
        "model": args.model,
        "prompts": args.prompts,
        "group_size": args.group_size,
        "n_samples": args.n_samples,
        "threads": torch.get_num_threads(),
        "mean_response_tokens": statistics.mean(len(r.response_ids) for r in rollouts),
        "answer_share": 1.0 - fast_m.get("cer/empty_answer_share", 0.0),
        "distinct_answers_per_group": fast_m.get("cer/distinct_answers_per_group", 0.0),
        "boxed_share_before_forcing": boxed_share,
        "generation_s": gen_seconds,
        "forcing_s": force_seconds,
        "cer_fast_s": fast_s,
        "cer_reference_s": ref_s,
        "speedup": ref_s / fast_s if fast_s > 0 else float("inf"),
        "cer_share_of_generation": fast_s / gen_seconds,
        "reference_share_of_generation": ref_s / gen_seconds,
        "max_rel_reward_diff": rel,
        "pairs": fast_m.get("cer/pairs", 0.0),
        "unique_pairs": fast_m.get("cer/unique_pairs", 0.0),
        "tokens_fast": fast_m.get("cer/tokens_forwarded", 0.0),
        "tokens_reference": ref_m.get("cer/tokens_forwarded", 0.0),
        "mean_cer": fast_m.get("cer/mean_reward", 0.0),
    }
    print(
        f"generation {gen_seconds:.2f}s | CER prefix-cache {fast_s:.3f}s, reference {ref_s:.3f}s"
        f" → {result['speedup']:.1f}x | CER = {100 * result['cer_share_of_generation']:.1f}% of"
        f" generation (reference: {100 * result['reference_share_of_generation']:.1f}%)"
    )
    print(
        f"tokens forwarded: {result['tokens_fast']:.0f} vs {result['tokens_reference']:.0f}; "
        f"pairs {result['pairs']:.0f} ({result['unique_pairs']:.0f} distinct); "
        f"answers found {100 * result['answer_share']:.0f}%; max rel. reward diff {rel:.2e}"
    )
    print(json.dumps(result))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
