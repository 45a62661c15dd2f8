"""``verirl report``: plots and an HTML report of a run directory (:mod:`verirl.report`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from verirl.errors import UserInputError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this command's parser to ``sub``, the top-level subparsers."""
    p_report = sub.add_parser("report", help="plots and an HTML report of a run directory")
    p_report.add_argument("run_dir")
    p_report.add_argument("--compare", nargs="+", metavar="RUN_DIR", help="overlay other runs")
    p_report.set_defaults(run=lambda ns: report(ns.run_dir, ns.compare))


def report(run_dir: str, compare: list[str] | None) -> int:
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
