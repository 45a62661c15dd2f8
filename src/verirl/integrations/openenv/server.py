"""A minimal OpenEnv server for verirl's gym, from openenv-core's own helpers:
``python -m verirl.integrations.openenv.server --envs addition,sorting --port 8000``.

It serves :func:`verirl.integrations.openenv.create_app` with uvicorn on loopback: an
in-memory RLVE curriculum over ``--envs`` (state is lost when the process ends). ``verirl
serve`` is the full server (persistent named curricula, tokens, limits); this module is the
reference the adapters are tested against and a way to try an OpenEnv trainer locally.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from verirl.curriculum import AdaptiveDifficulty
from verirl.integrations.episodes import LocalSource


def build_source(
    envs: Sequence[str],
    *,
    tau_num: int = 128,
    tau_acc: float = 0.9,
    initial_difficulty: int = 0,
    max_turns: int = 1,
    seed: int = 0,
) -> LocalSource:
    """A :class:`LocalSource` over an RLVE curriculum of ``envs`` (RLVE's defaults)."""
    curriculum = AdaptiveDifficulty(
        list(envs),
        tau_num=tau_num,
        tau_acc=tau_acc,
        initial_difficulty=initial_difficulty,
        seed=seed,
    )
    return LocalSource(curriculum, max_turns=max_turns)


def main(argv: Sequence[str] | None = None) -> None:
    import uvicorn

    from verirl.integrations.openenv import create_app

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", required=True, help="comma-separated environment names")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--tau-num", type=int, default=128)
    parser.add_argument("--tau-acc", type=float, default=0.9)
    parser.add_argument("--initial-difficulty", type=int, default=0)
    parser.add_argument("--max-turns", type=int, default=1)
    args = parser.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        parser.error("this reference server binds loopback only; use `verirl serve` to expose one")
    source = build_source(
        [e.strip() for e in args.envs.split(",") if e.strip()],
        tau_num=args.tau_num,
        tau_acc=args.tau_acc,
        initial_difficulty=args.initial_difficulty,
        max_turns=args.max_turns,
    )
    from verirl.envs import load_all

    load_all()  # import every environment family before the first request, not during it
    uvicorn.run(create_app(source), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
