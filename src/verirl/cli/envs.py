"""``verirl envs list | show | check``: the environment registry, one problem with its
reference solution, the self-checks (:mod:`verirl.envs`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console
from rich.table import Table


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this command's parser to ``sub``, the top-level subparsers."""
    p_envs = sub.add_parser("envs", help="list, show and self-check environments")
    envs_sub = p_envs.add_subparsers(dest="envs_command", required=True)
    p_list = envs_sub.add_parser("list", help="name, module and what difficulty scales")
    p_list.add_argument(
        "--family",
        help="a module (graphs/walks) or an old family name (graphs_walks): only its environments",
    )
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
    p_envs.set_defaults(run=envs)


def envs(ns: argparse.Namespace) -> int:
    from verirl.envs import ENVIRONMENTS, env_names, get_env

    out = Console()
    if ns.envs_command == "list" and ns.markdown:
        from verirl.docgen import envs_markdown

        sys.stdout.write(envs_markdown(ns.family))
        return 0
    if ns.envs_command == "list":
        names = env_names(family=ns.family)
        table = Table(title=f"{len(names)} environments")
        for col in ("name", "module", "difficulty scales"):
            table.add_column(col)
        for name in names:
            cls = ENVIRONMENTS.get(name).part
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
