"""Verifier quality on free-form answers: AUROC of CER, VeriFree, exact match and math-verify.

Labelled set. For each ``freeform`` environment, ``--problems-per-env`` problems (difficulties
cycling through ``--difficulties``). Candidates per problem: every correct spelling the
environment lists (``equivalent_forms``: the canonical answer, ``0.625`` for ``5/8``,
``five eighths``, ``2021-04-17`` …) and ``--wrong`` plausible wrong answers (``wrong_forms``).
The label is the environment's rule verifier (``verify(problem, "\\boxed{candidate}")``), which
accepts exactly the listed correct spellings (the script counts disagreements with the
construction). Rows: (question, reference, candidate, equivalent?).

Solutions. CER needs solutions s_j ~ π(·|q): ``--group-size`` G samples of the policy for the
question (T = 1, as in training), each cut at its last ``\\boxed{``; a sample without one gets
"The final answer is \\boxed{" appended on a new line, so every s_j ends in the answer slot.
The candidate then *replaces* each sample's own answer:

    CER(a)      = Σ_j π(a|q,s_j) π(a*|q,s_j) / Σ_j π(a|q,s_j)          (M = G, all pairs)
    CER+}(a)    = the same with a and a* scored with their closing brace
    VeriFree(a) = mean_j π(a*} | q, z_j(a)),  z_j(a) = s_j ⊕ a ⊕ "}" ⊕ "\\nSo the final answer
                  is \\boxed{"

VeriFree scores the reference after the rollout's own trace; a labelled candidate has none,
and without the candidate in the trace the score would not depend on it, so the trace is each
sample with the candidate spliced in as its answer (averaged over the G samples).
Exact match compares stripped strings; math-verify is ``verify(parse(a*), parse(a))``.

AUROC (Mann–Whitney rank statistic, ties averaged) is reported pooled over all rows and as the
mean of per-problem AUROCs (what matters for group-relative advantages), on all rows and on the
rows whose candidate is not the reference string itself.

Run: ``python bench/cer_auroc.py`` (SmolLM2-135M) or, as a smoke run,
``python bench/cer_auroc.py --model tiny --problems-per-env 1 --group-size 2
--max-new-tokens 16``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from verirl.envs import env_names, get_env
from verirl.envs.reading.answers import strip_answer
from verirl.models import load_policy, load_tokenizer, tiny_model
from verirl.rewards.cer import cer_estimate
from verirl.rewards.likelihood import split_answer
from verirl.rewards.rule import math_verify_equal
from verirl.rollout.hf import HFEngine
from verirl.rollout.prompts import PromptFormatter
from verirl.rollout.scoring import PrefixCacheScorer, score_grids
from verirl.types import Problem, SamplingParams

FORCE_SUFFIX = "\nThe final answer is \\boxed{"
VERIFREE_SUFFIX = "}\nSo the final answer is \\boxed{"
METHODS = ("exact_match", "math_verify", "verifree", "cer", "cer_closed")


@dataclass
class Item:
    """One problem with its candidates, labels and scores per method."""

    problem: Problem
    candidates: list[str]
    labels: list[bool]
    constructed: list[bool]
    scores: dict[str, list[float]] = field(default_factory=dict)


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Area under the ROC curve as the Mann–Whitney statistic with average ranks for ties:
    (Σ ranks of positives − n₊(n₊+1)/2) / (n₊ n₋). NaN when a class is missing."""
    n_pos = sum(1 for y in labels if y)
    n_neg = len(labels) - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1  # 1-based average rank of the tie block
        i = j + 1
    pos_rank_sum = sum(r for r, y in zip(ranks, labels, strict=True) if y)
    return (pos_rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def build_set(per_env: int, difficulties: Sequence[int], wrong: int, seed: int) -> list[Item]:
    items = []
    rng = random.Random(seed)
    for name in env_names(family="freeform"):
        env = get_env(name)
        for i in range(per_env):
            problem = env.generate(difficulties[i % len(difficulties)], seed + i)
            pos = env.equivalent_forms(problem)
            neg = [w for w in env.wrong_forms(problem, rng, wrong) if w not in pos]
            cands = pos + neg
            labels = [env.verify(problem, f"\\boxed{{{c}}}").correct for c in cands]
            items.append(Item(problem, cands, labels, [True] * len(pos) + [False] * len(neg)))
    return items


def sample_solutions(
    items: list[Item], model: torch.nn.Module, tok: Any, g: int, max_new: int, seed: int
) -> tuple[list[list[int]], list[list[str]]]:
    """Prompt ids and G solution prefixes (each ending in ``\\boxed{``) per item."""
    fmt = PromptFormatter(tok)
    prompts = [fmt.encode(it.problem) for it in items]
    engine = HFEngine(model, tok, seed=seed)
    gens = engine.generate(prompts, SamplingParams(n=g, temperature=1.0, max_new_tokens=max_new))
    solutions = []
    for group in gens:
        sols = []
        for gen in group:
            split = split_answer(gen.text)
            sols.append(split.solution if split.has_answer else gen.text + FORCE_SUFFIX)
        solutions.append(sols)
    return prompts, solutions


def score_items(
    items: list[Item], prompts: list[list[int]], solutions: list[list[str]], scorer: Any, tok: Any
) -> None:
    """All policy scores of an item come from one grid over its G solution contexts, so each
    context is encoded once. VeriFree's log π(a*} | s_j ⊕ a ⊕ suffix) is read by the chain
    rule as ℓ(s_j, a ⊕ suffix ⊕ a*}) − ℓ(s_j, a ⊕ suffix)."""

    def enc(text: str) -> list[int]:
        return tok.encode(text, add_special_tokens=False)

    grids = []
    for it, prompt, sols in zip(items, prompts, solutions, strict=True):
        ref, ref_closed = enc(it.problem.answer), enc(it.problem.answer + "}")
        spliced = [enc(c + VERIFREE_SUFFIX) for c in it.candidates]
        conts = [ref] + [enc(c) for c in it.candidates]  # CER: bare answers
        conts += [ref_closed] + [enc(c + "}") for c in it.candidates]  # CER: with "}"
        conts += [x + ref_closed for x in spliced] + spliced  # VeriFree numerator, denominator
        grids.append(([prompt + enc(s) for s in sols], conts, None))
    for it, grid in zip(items, score_grids(scorer, grids), strict=True):
        k = len(it.candidates)
        it.scores["cer"] = cer_estimate(grid[:, 0], grid[:, 1 : k + 1]).tolist()
        closed = grid[:, k + 1 : 2 * k + 2]
        it.scores["cer_closed"] = cer_estimate(closed[:, 0], closed[:, 1:]).tolist()
        vf_log = grid[:, 2 * k + 2 : 3 * k + 2] - grid[:, 3 * k + 2 :]  # [G, k]
        it.scores["verifree"] = vf_log.clamp(max=0.0).exp().mean(dim=0).tolist()
        ref = strip_answer(it.problem.answer)
        it.scores["exact_match"] = [float(strip_answer(c) == ref) for c in it.candidates]
        it.scores["math_verify"] = [
            float(math_verify_equal(c, it.problem.answer)) for c in it.candidates
        ]


def summarise(items: list[Item], non_canonical: bool) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for method in METHODS:
        pooled_s, pooled_y, per_problem = [], [], []
        for it in items:
            keep = [
                i
                for i, c in enumerate(it.candidates)
                if not (non_canonical and c == it.problem.answer)
            ]
            s = [it.scores[method][i] for i in keep]
            y = [it.labels[i] for i in keep]
            pooled_s += s
            pooled_y += y
            a = auroc(s, y)
            if not math.isnan(a):
                per_problem.append(a)
        out[method] = {
            "pooled": auroc(pooled_s, pooled_y),
            "per_problem_mean": statistics.mean(per_problem) if per_problem else math.nan,
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m-instruct", help="model name/dir or 'tiny'")
    ap.add_argument("--problems-per-env", type=int, default=8)
    ap.add_argument("--difficulties", default="0,1,2,3")
    ap.add_argument("--wrong", type=int, default=4, help="wrong candidates per problem")
    ap.add_argument("--group-size", type=int, default=8, help="G sampled solutions per problem")
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: leave as is)")
    ap.add_argument("--out", default="", help="write the labelled set with scores (JSONL)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.model == "tiny":
        tok = load_tokenizer("smollm2-135m-instruct")
        model = tiny_model(len(tok), seed=0)
    else:
        model, tok = load_policy(args.model)
        model.eval()

    start = time.perf_counter()
    difficulties = [int(d) for d in args.difficulties.split(",")]
    items = build_set(args.problems_per_env, difficulties, args.wrong, args.seed)
    rows = sum(len(it.candidates) for it in items)
    positives = sum(sum(it.labels) for it in items)
    disagree = sum(a != b for it in items for a, b in zip(it.labels, it.constructed, strict=True))
    prompts, solutions = sample_solutions(
        items, model, tok, args.group_size, args.max_new_tokens, args.seed
    )
    scorer = PrefixCacheScorer(model, pad_id=tok.pad_token_id)
    score_items(items, prompts, solutions, scorer, tok)
    seconds = time.perf_counter() - start

    print(
        f"{len(items)} problems, {rows} (question, reference, candidate) rows, {positives} "
        f"equivalent; label/construction disagreements: {disagree}; {seconds:.0f}s"
    )
    result: dict[str, Any] = {"rows": rows, "positives": positives, "problems": len(items)}
    for subset, flag in (("all", False), ("non_canonical", True)):
        table = summarise(items, flag)
        result[subset] = table
        print(f"\nAUROC ({subset} rows)    pooled   per-problem mean")
        for method, v in table.items():
            print(f"  {method:<14} {v['pooled']:8.3f}   {v['per_problem_mean']:8.3f}")
    per_env = {}
    for name in env_names(family="freeform"):
        sub = [it for it in items if it.problem.env == name]
        per_env[name] = {m: v["per_problem_mean"] for m, v in summarise(sub, False).items()}
    result["per_env_per_problem_mean"] = per_env
    print("\nper-problem mean AUROC by environment: " + json.dumps(per_env, indent=1))
    print(json.dumps(result))
    if args.out:
        with open(args.out, "w") as f:
            for it in items:
                for i, c in enumerate(it.candidates):
                    row = {
                        "question": it.problem.prompt,
                        "reference": it.problem.answer,
                        "candidate": c,
                        "equivalent": it.labels[i],
                        "env": it.problem.env,
                    }
                    row.update({m: it.scores[m][i] for m in METHODS})
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
