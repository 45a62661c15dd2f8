"""``verirl memory``: the planned peak memory of a training step, from the config and the
model's config.json alone (:mod:`verirl.train.memory_plan`), on this machine or a named GPU."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from verirl.cli.common import split_args
from verirl.errors import UserInputError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this command's parser to ``sub``, the top-level subparsers."""
    p = sub.add_parser(
        "memory",
        help="plan a training step's peak memory (no weights loaded) and say what would make "
        "it fit",
    )
    p.add_argument("args", nargs="*", help="[CONFIG.yaml] then key.sub=value overrides")
    p.add_argument(
        "--device",
        default=None,
        metavar="DEVICE",
        help="cpu, cuda (this machine's GPU) or a GPU size such as cuda:80GB or cuda:24GiB "
        "(default: the config's model.device on this machine)",
    )
    p.add_argument(
        "--prompt-tokens",
        type=int,
        default=None,
        metavar="N",
        help="the longest prompt in tokens (default: measured on the curriculum's first "
        "problems with the model's tokenizer)",
    )
    p.set_defaults(run=lambda ns: memory(ns.args, ns.device, ns.prompt_tokens))


def memory(args: Sequence[str], device: str | None, prompt_tokens: int | None) -> int:
    from verirl.train.memory_plan import GB, parse_device, plan_memory, suggest_fix

    if prompt_tokens is not None and prompt_tokens < 1:
        raise UserInputError(f"--prompt-tokens must be at least 1 (got {prompt_tokens})")
    limit = None
    if device is not None:
        try:
            device, limit = parse_device(device)
        except ValueError as exc:
            raise UserInputError(str(exc)) from None
    path, overrides = split_args(args)
    from verirl.assembly import load_config

    cfg = load_config(path, overrides)
    plan = plan_memory(cfg, device, limit, prompt_tokens)
    out = Console()
    table = Table(title=f"one step on {plan.device}")
    table.add_column("component")
    table.add_column("GB", justify="right")
    for name, value in plan.components.items():
        table.add_row(name, f"{value / GB:.2f}")
    table.add_row("[bold]peak[/bold]", f"[bold]{plan.peak / GB:.2f}[/bold]")
    if plan.limit is not None:
        table.add_row("limit", f"{plan.limit / GB:.2f}")
    out.print(table)
    out.print(
        f"{cfg.model.name}: {plan.learner_tokens} tokens in the largest micro-batch; peak = "
        "runtime + weights + optimizer + reference + max(gradients + activations + log-prob "
        "chunk, generation) + workers",
        highlight=False,
    )
    why = plan.settings.get("activation_checkpointing_why")
    ckpt = "on" if plan.settings["activation_checkpointing"] else "off"
    out.print(f"activation checkpointing: {why or ckpt}", highlight=False)
    if plan.fits:
        out.print("the step fits" if plan.limit is not None else "no limit given")
        return 0
    fix = suggest_fix(cfg, plan)
    limit = plan.limit or 0.0
    out.print(
        f"[red]does not fit[/red]: planned {plan.peak / GB:.1f} GB > {limit / GB:.1f} GB"
        + (f"; {fix}" if fix else "; no single setting brings it under: use a smaller model"),
        highlight=False,
    )
    return 1
