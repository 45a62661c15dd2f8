"""``verirl train`` (and ``--resume``): the run, its progress and the held-out summary
(:class:`verirl.trainer.Trainer`).

Progress: on a terminal console (stderr) a live bar and the warnings in yellow; when stdout
is not a terminal (``verirl train > log``, a pipe, ``nohup``, CI) — or the console is not —
one plain line per step on stdout (:func:`verirl.train.metrics.step_line`, the line
``run.log`` gets too) and every warning as it happens, so a log file can be followed.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
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
from rich.text import Text

from verirl.cli.common import console, keep_traceback, run_config, split_args, under_allocator
from verirl.config import TrainConfig
from verirl.errors import UserInputError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this command's parser to ``sub``, the top-level subparsers."""
    p_train = sub.add_parser(
        "train", help="train a policy (no config: the default job, examples/default.yaml)"
    )
    p_train.add_argument("args", nargs="*", help="[CONFIG.yaml] then key.sub=value overrides")
    p_train.add_argument(
        "--resume", metavar="RUN_DIR", help="continue a run from its latest checkpoint"
    )
    p_train.set_defaults(
        run=lambda ns: train(ns.args, ns.resume, relaunch=getattr(ns, "command_line", False))
    )


def train(args: Sequence[str], resume: str | None, relaunch: bool = False) -> int:
    """``relaunch``: this is the process's own command line (the ``verirl`` script), which may
    start itself again under the allocator ``run.allocator`` asks for (:mod:`verirl.allocator`);
    a library caller's process is never replaced."""
    from verirl.assembly import build, load_config
    from verirl.config import dump_config
    from verirl.trainer import Trainer, new_run_dir

    if resume:
        run_dir = Path(resume)
        if not (run_dir / "config.yaml").is_file():
            raise UserInputError(f"{run_dir} is not a run directory (no config.yaml)")
        _, overrides = split_args(args)
        # config.yaml is rewritten only once the checkpoint has loaded (below)
        cfg = load_config(run_dir / "config.yaml", overrides)
    else:
        cfg = run_config(args)
        from verirl.models import resolve_model_path

        resolve_model_path(cfg.model.name)  # bad paths and devices fail before a run dir exists
    # before the run directory exists: the relaunched process makes it
    allocator = under_allocator(cfg, relaunch)
    if not resume:
        run_dir = new_run_dir(cfg)
    console.print(f"run directory: [bold]{run_dir}[/bold]")
    console.print(allocator, highlight=False, soft_wrap=True)
    from verirl.train.health import RunUnhealthy

    live = console.is_terminal
    plain = not live or not sys.stdout.isatty()
    try:
        with _RunOutput(live, plain), Trainer(build(cfg), run_dir) as trainer:
            placement, plan = trainer.parts.placement, trainer.parts.memory_plan
            console.print(f"device {placement.device}; {placement.reason}")
            if plan is not None:
                console.print(
                    f"memory plan: peak {plan.peak / 1e9:.1f} GB of "
                    f"{(plan.limit or 0) / 1e9:.1f} GB available, activation checkpointing "
                    f"{plan.why or ('on' if plan.activation_checkpointing else 'off')} "
                    "(`verirl memory` shows the parts)",
                    highlight=False,
                )
            if resume:
                resumed = trainer.resume()
                (run_dir / "config.yaml").write_text(dump_config(cfg))
                if resumed:
                    console.print(f"resumed at step {trainer.step}")
            if not live:
                summary = trainer.fit()
            else:
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
        keep_traceback(exc, run_dir)
        raise
    _print_summary(cfg, summary)
    return 0


REPEATS = 3
"""Warnings with the same message template shown on the console before the rest go to
``run.log`` only (a verifier that fails on every rollout warns once per rollout)."""


class _RunOutput:
    """While training: verirl's warnings on the console (yellow) and the long phases' lines
    (logger ``verirl.progress``, dimmed) when ``live``; when ``plain``, each step's line
    (logger ``verirl.steps``), each phase line and every warning on stdout.
    ``run.log`` gets all of them through the run directory's own handler."""

    def __init__(self, live: bool, plain: bool) -> None:
        self.live, self.plain = live, plain
        self.seen: Counter[tuple[str, str]] = Counter()

    def __enter__(self) -> _RunOutput:
        self.handler = _Handler(self)
        logging.getLogger("verirl").addHandler(self.handler)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("verirl").removeHandler(self.handler)

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING:
            if record.name in ("verirl.steps", "verirl.progress"):
                if self.plain:
                    _stdout(record.getMessage())
                elif record.name == "verirl.progress":  # the live bar shows the steps
                    console.print(Text(record.getMessage(), style="dim"))
            return
        key = (record.name, str(record.msg))
        self.seen[key] += 1
        if self.seen[key] > REPEATS + 1:
            return
        text = record.getMessage()
        if self.seen[key] == REPEATS + 1:
            text = f"more warnings like this one go to run.log only ({record.name})"
        if self.live:
            console.print(Text(text, style="yellow"))  # Text: no markup read from the message
        if self.plain:
            _stdout(f"warning: {text}")


class _Handler(logging.Handler):
    def __init__(self, output: _RunOutput) -> None:
        super().__init__(logging.INFO)
        self.output = output

    def emit(self, record: logging.LogRecord) -> None:
        self.output.emit(record)


def _stdout(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


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
