"""``verirl serve``: the environments over OpenEnv's protocol (:mod:`verirl.serve`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from verirl.cli.common import split_args
from verirl.config import load_gym_config


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this command's parser to ``sub``, the top-level subparsers."""
    p_serve = sub.add_parser(
        "serve", help="serve the environments over OpenEnv's protocol (curricula server-side)"
    )
    p_serve.add_argument("args", nargs="*", help="[CONFIG.yaml] then key.sub=value overrides")
    p_serve.add_argument("--host", help="address to bind (default serve.host: 127.0.0.1)")
    p_serve.add_argument("--port", type=int, help="port (default serve.port: 8000; 0: any)")
    p_serve.add_argument(
        "--state", metavar="FILE", help="SQLite file of the curricula (serve.state_path)"
    )
    p_serve.add_argument(
        "--token",
        help="access token required on every route but /health (or $VERIRL_SERVE_TOKEN); "
        "needed to bind a non-loopback address",
    )
    p_serve.set_defaults(run=lambda ns: serve(ns.args, ns.host, ns.port, ns.state, ns.token))


def serve(
    args: Sequence[str], host: str | None, port: int | None, state: str | None, token: str | None
) -> int:
    from verirl.serve.server import serve as run_server

    path, overrides = split_args(args)
    for key, value in (("host", host), ("port", port), ("state_path", state)):
        if value is not None:
            overrides.append(f"serve.{key}={json.dumps(value)}")
    run_server(load_gym_config(path, overrides), token)
    return 0
