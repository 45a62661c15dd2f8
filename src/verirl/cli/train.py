"""``verirl train`` (and ``--resume``): the run, a progress bar and the held-out summary
(:class:`verirl.train.loop.Trainer`)."""

from __future__ import annotations

import argparse
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
from verirl.cli.common import console, keep_traceback, split_args
from verirl.config import TrainConfig
from verirl.errors import UserInputError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this command's parser to ``sub``, the top-level subparsers."""
    p_train = sub.add_parser("train", help="train a policy (no arguments: the default job)")
    p_train.add_argument("args", nargs="*", help="[CONFIG.yaml] then key.sub=value overrides")
    p_train.add_argument(
        "--resume", metavar="RUN_DIR", help="continue a run from its latest checkpoint"
    )
    p_train.set_defaults(run=lambda ns: train(ns.args, ns.resume))


def train(args: Sequence[str], resume: str | None) -> int:
    from verirl.config import dump_config
    from verirl.train.loop import Trainer, new_run_dir

    if resume:
        run_dir = Path(resume)
        if not (run_dir / "config.yaml").is_file():
            raise UserInputError(f"{run_dir} is not a run directory (no config.yaml)")
        _, overrides = split_args(args)
        # config.yaml is rewritten only once the checkpoint has loaded (below)
        cfg = load_config(run_dir / "config.yaml", overrides)
    else:
        path, overrides = split_args(args)
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
        keep_traceback(exc, run_dir)
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
