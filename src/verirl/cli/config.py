"""``verirl config explain FIELD``: one config field's type, default and description
(:func:`verirl.docgen.explain`)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this command's parser to ``sub``, the top-level subparsers."""
    p_config = sub.add_parser("config", help="the training config's fields")
    config_sub = p_config.add_subparsers(dest="config_command", required=True)
    p_explain = config_sub.add_parser("explain", help="a field's type, default and description")
    p_explain.add_argument("field", help="a dotted path, e.g. rollout.max_new_tokens")
    p_config.set_defaults(run=explain)


def explain(ns: argparse.Namespace) -> int:
    from verirl.docgen import explain as describe

    print(describe(ns.field))
    return 0
