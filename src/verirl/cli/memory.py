"""``verirl memory``: the planned peak memory of a training step — the plan ``verirl train``
makes for the same config (:func:`verirl.assembly.plan`) — from the config, the model's
config.json and tokenizer and the curriculum's first problems, on this machine or a named
GPU."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from verirl.cli.common import run_config
from verirl.errors import UserInputError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this command's parser to ``sub``, the top-level subparsers."""
    p = sub.add_parser(
        "memory",
        help="plan a training step's peak memory (no weights loaded) and say what would make "
        "it fit; no config: the default job (examples/default.yaml), as `verirl train`",
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
    from verirl.assembly import plan as plan_of
    from verirl.train.memory_plan import GB, parse_device, suggest_fix

    if prompt_tokens is not None and prompt_tokens < 1:
        raise UserInputError(f"--prompt-tokens must be at least 1 (got {prompt_tokens})")
    limit = None
    if device is not None:
        try:
            device, limit = parse_device(device)
        except ValueError as exc:
            raise UserInputError(str(exc)) from None
    cfg = run_config(args)
    plan = plan_of(cfg, device, limit, prompt_tokens)
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
        "runtime + weights + optimizer + reference + teacher + max(gradients + activations "
        "+ log-prob chunk, generation) + workers",
        highlight=False,
    )
    ckpt = "on" if plan.activation_checkpointing else "off"
    out.print(f"activation checkpointing: {plan.why or ckpt}", highlight=False)
    if plan.fits:
        out.print("the step fits" if plan.limit is not None else "no limit given")
        return 0
    fix = suggest_fix(plan)
    limit = plan.limit or 0.0
    out.print(
        f"[red]does not fit[/red]: planned {plan.peak / GB:.1f} GB > {limit / GB:.1f} GB"
        + (f"; {fix}" if fix else "; no single setting brings it under: use a smaller model"),
        highlight=False,
    )
    return 1
