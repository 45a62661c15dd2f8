"""``verirl eval --benchmark minif2f-rocq`` / ``coq-stdlib``: formal proofs checked by Coq.

The policy is the config's model (``model.*``, ``rollout.engine``; the prompt takes the
config's ``rollout.system_prompt`` and its Coq-format ``rollout.few_shot``) or, with
``--prover NAME``, a registered classical prover. The exclusion rule and its count are printed
before the numbers; every number is printed with its budget (:mod:`verirl.evals.proving`).
"""

from __future__ import annotations

import argparse
import contextlib
from typing import TYPE_CHECKING, Any

from rich.console import Console

from verirl.cli.common import console, phase_lines
from verirl.errors import UserInputError

if TYPE_CHECKING:
    from verirl.assembly import SamplingParts
    from verirl.config import TrainConfig

DEFAULT_SPLIT = {"minif2f-rocq": "test", "coq-stdlib": "heldout"}


def add_arguments(group: argparse._ArgumentGroup) -> None:
    """The options only the formal benchmarks read."""
    group.add_argument(
        "--split",
        help="formal benchmarks: minif2f-rocq test (default) or valid; coq-stdlib heldout "
        "(default) or train",
    )
    group.add_argument(
        "--prover",
        action="append",
        metavar="NAME",
        help="formal benchmarks: run a classical prover instead of the model (lia, nia, lra, "
        "'intros; nia', hammer, sauto, ...; 'scripts' = every tactic script, 'all' = every "
        "one; repeat it or NAME,NAME)",
    )
    group.add_argument(
        "--check-timeout",
        type=float,
        default=15.0,
        metavar="S",
        help="formal benchmarks: seconds per proof check (process-verified proving paper: 15)",
    )
    group.add_argument(
        "--workers", type=int, default=2, help="formal benchmarks: Coq worker processes"
    )
    group.add_argument(
        "--difficulty",
        type=int,
        action="append",
        metavar="D",
        help="coq-stdlib: only lemmas at the coq_stdlib environment's difficulty D (library "
        "proof of D + 1 tactics; repeat it)",
    )


def run_formal(ns: argparse.Namespace, spec: Any, settings: Any, cfg: TrainConfig) -> list[Any]:
    """One formal benchmark (``spec``) with the model or the named provers; its results."""
    from verirl.assembly import build_sampling
    from verirl.evals import formal, proving
    from verirl.provers.coq.idetop import CoqIdeChecker

    split = ns.split or DEFAULT_SPLIT[spec.name]
    if ns.check_timeout <= 0:
        raise UserInputError(f"--check-timeout must be > 0, got {ns.check_timeout}")
    if ns.workers < 1:
        raise UserInputError(f"--workers must be >= 1, got {ns.workers}")
    policies: list[Any] = []
    if ns.prover:
        names = [n.strip() for arg in ns.prover for n in arg.split(",") if n.strip()]
        policies = proving.baseline_policies(names)
        if settings.samples != 1:
            raise UserInputError("classical provers are deterministic: use --samples 1")
    checker = CoqIdeChecker(ns.workers, extra_roots=formal.CHECK_ROOTS, restart_after_timeout=True)
    try:
        if spec.name == "minif2f-rocq":
            if ns.hub or ns.difficulty:
                raise UserInputError(
                    "minif2f-rocq reads a local copy (--data DIR; no --hub) and has no --difficulty"
                )
            items, where = formal.load_minif2f(split, ns.data)
            published = len(items)
            console.print(
                f"{spec.name}/{split}: {published} theorems from {where}; checking "
                "which statements this Coq accepts (cached)...",
                highlight=False,
            )
            excluded = formal.statement_exclusions(items, checker)
            rule = formal.statement_rule()
            items = [it for it in items if it.id not in excluded]
            items.sort(key=lambda it: it.id)
        else:
            if ns.data or ns.hub:
                raise UserInputError(
                    "coq-stdlib reads the installed Coq's library sources: drop --data/--hub"
                )
            items, excluded, rule = formal.load_stdlib(split, ns.seed, ns.difficulty)
            published, where = len(items) + len(excluded), "the installed Coq stdlib"
        shown = f"{', '.join(sorted(excluded)[:6])}{', ...' if len(excluded) > 6 else ''}"
        console.print(
            f"{spec.name}/{split}: {rule}: {len(excluded)} of {published}"
            + (f" ({shown})" if excluded else ""),
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
        if ns.limit:
            items = items[: ns.limit]
        with contextlib.ExitStack() as stack:
            if not policies:
                parts = build_sampling(cfg, checkpoint=ns.checkpoint, start_verifiers=False)
                policies = [_model_policy(stack.enter_context(parts))]
            stack.enter_context(phase_lines())
            results = [
                proving.run_proofs(
                    spec.name,
                    split,
                    items,
                    policy,
                    checker,
                    settings,
                    ns.check_timeout,
                    excluded=excluded,
                    rule=rule,
                    published=published,
                    data_source=where,
                )
                for policy in policies
            ]
        if ns.prover:
            wide_console().print(proving.baseline_table(results))
        return results
    finally:
        checker.close()


def _model_policy(parts: SamplingParts) -> Any:
    """The config's policy behind its engine, prompted with the config's system prompt and
    Coq-format demonstrations."""
    from verirl.evals.proving import ModelPolicy
    from verirl.rollout.prompts import PromptFormatter

    cfg = parts.cfg
    formatter = PromptFormatter(
        parts.tokenizer, cfg.rollout.system_prompt, tuple(cfg.rollout.few_shot)
    )
    return ModelPolicy(cfg.model.name, parts.engine, parts.tokenizer, formatter)


def wide_console() -> Console:
    """The console tables go to: a log file gets lines wide enough for every column."""
    out = Console()
    return out if out.is_terminal else Console(width=200)


__all__ = ["DEFAULT_SPLIT", "add_arguments", "run_formal"]
