"""``verirl preflight``: the base policy on a few problems per environment before a run
(:func:`verirl.preflight.preflight`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from verirl.cli.common import phase_lines, run_config, under_allocator
from verirl.errors import UserInputError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this command's parser to ``sub``, the top-level subparsers."""
    p_pre = sub.add_parser(
        "preflight",
        help="sample the base policy on a few problems per environment: format rate, "
        "accuracy, learning signal, suggested settings (no config: the default job)",
    )
    p_pre.add_argument("args", nargs="*", help="[CONFIG.yaml] then key.sub=value overrides")
    p_pre.add_argument(
        "--problems",
        type=int,
        default=3,
        metavar="N",
        help="problems per (environment, difficulty), each sampled rollout.group_size times",
    )
    p_pre.set_defaults(
        run=lambda ns: preflight(ns.args, ns.problems, getattr(ns, "command_line", False))
    )


def preflight(args: Sequence[str], problems: int, relaunch: bool = False) -> int:
    from verirl.preflight import preflight as run_preflight

    if problems < 1:
        raise UserInputError(f"--problems must be at least 1 (got {problems})")
    cfg = run_config(args)
    under_allocator(cfg, relaunch)  # the policy samples as in training
    with phase_lines():
        report = run_preflight(cfg, problems)
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
