"""``verirl doctor``: what this machine offers verirl and what is missing
(:func:`verirl.doctor.main`)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this command's parser to ``sub``, the top-level subparsers."""
    p_doctor = sub.add_parser(
        "doctor",
        help="what this machine offers verirl, what is missing and how to install it",
    )
    p_doctor.add_argument("config", nargs="?", help="a config whose provers to check (Lean)")
    p_doctor.set_defaults(run=doctor)


def doctor(ns: argparse.Namespace) -> int:
    from verirl.doctor import main

    return main(ns.config)
